"""`schedlab record`: a ZeroMQ man-in-the-middle between Batsim and a decision process.

Batsim connects to `listen` (we hold a REP socket there); we forward each message unchanged to the
decision process bound at `forward` (our REQ socket) and pass its reply back, writing both as JSON
lines {seq, dir, wall, raw} (the shape of the shared captures). Ends after SIMULATION_ENDS.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from schedlab.errors import InputError, ProtocolError
from schedlab.parsing import json_loads
from schedlab.protocol.messages import Recorder
from schedlab.protocol.server import check_endpoint


def _is_end(raw: bytes) -> bool:
    try:
        doc = json_loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return any(e.get("type") == "SIMULATION_ENDS" for e in doc.get("events", []) if isinstance(e, dict))


def record(listen: str, forward: str, output: str, *, timeout_s: float | None = None,
           ready: Callable[[str], None] | None = None) -> int:
    """Relay until SIMULATION_ENDS has been answered; returns the number of messages relayed.
    `ready(endpoint)` is called once `listen` is bound."""
    import zmq

    check_endpoint(listen)
    check_endpoint(forward, bind=False)

    context: Any = zmq.Context.instance()
    front = context.socket(zmq.REP)
    back = context.socket(zmq.REQ)
    for sock in (front, back):
        sock.setsockopt(zmq.LINGER, 1000)
    recorder = Recorder(output)
    complete = False
    timeout_ms = None if timeout_s is None else timeout_s * 1000
    count = 0
    try:
        try:
            front.bind(listen)
        except zmq.ZMQError as exc:
            raise InputError(f"cannot bind {listen}: {exc}") from None
        back.connect(forward)
        if ready is not None:
            ready(front.getsockopt_string(zmq.LAST_ENDPOINT))
        while True:
            if not front.poll(timeout_ms):
                raise ProtocolError(f"no message from batsim on {listen} for {timeout_s:g} s")
            raw = front.recv()
            recorder.write("batsim->sched", raw)
            back.send(raw)
            if not back.poll(timeout_ms):
                raise ProtocolError(f"no reply from the decision process at {forward} for {timeout_s:g} s")
            reply = back.recv()
            recorder.write("sched->batsim", reply)
            front.send(reply)
            count += 2
            if _is_end(raw):
                complete = True
                return count
    except ProtocolError as exc:
        where = recorder.close(complete)
        if where is None:
            raise
        raise ProtocolError(f"{exc} (the messages so far: {where})") from exc
    finally:
        recorder.close(complete)
        front.close()
        back.close()
