"""`schedlab serve`: one of our schedulers as the decision process of a real Batsim (ZeroMQ REP).

`DecisionServer.handle` turns one Batsim message into our reply without any socket (unit tests
replay real captures through it); `serve` binds the REP socket and loops until SIMULATION_ENDS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from schedlab.errors import InputError, ProtocolError, SchedlabError, SchedulerFailure, SimulationError
from schedlab.model import CallMeLater, Platform
from schedlab.protocol.messages import (
    JobCompleted,
    JobsKilled,
    JobSubmitted,
    Notify,
    Recorder,
    RequestedCall,
    SimulationBegins,
    SimulationEnds,
    encode_reply,
    parse_message,
)


class DecisionServer:
    """Feeds parsed Batsim events to a scheduler's hooks, returns `decide(now)` as the reply."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.platform: Platform | None = None
        self.finished = False
        self.nb_messages = 0
        self._dispatch: dict[type, Callable[[Any, float], None]] = {
            SimulationBegins: self._on_begins,
            JobSubmitted: lambda e, now: self.scheduler.on_job_submitted(e.job, now),
            JobCompleted: lambda e, now: self.scheduler.on_job_completed(e.job_id, e.state, now),
            JobsKilled: lambda e, now: self.scheduler.on_jobs_killed(e.job_ids, now),
            RequestedCall: lambda e, now: self.scheduler.on_requested_call(now),
            Notify: self._on_notify,
            SimulationEnds: self._on_ends,
        }

    def _on_begins(self, event: SimulationBegins, now: float) -> None:
        self.platform = event.platform
        prepare = getattr(self.scheduler, "prepare", None)
        if prepare is not None:
            prepare()
        self.scheduler.on_simulation_begins(event.platform, now)

    def _on_notify(self, event: Notify, now: float) -> None:
        if event.kind == "no_more_static_job_to_submit":
            self.scheduler.on_no_more_jobs(now)

    def _on_ends(self, event: SimulationEnds, now: float) -> None:
        self.finished = True
        self.scheduler.on_simulation_ends(now)

    def handle(self, raw: bytes | str) -> bytes:
        message = parse_message(raw)
        now = message.now
        self.nb_messages += 1
        if self.platform is None and not any(isinstance(e, SimulationBegins) for e in message.events):
            raise ProtocolError("the first message must carry SIMULATION_BEGINS")
        for event in message.events:
            handler = self._dispatch.get(type(event))
            if handler is None:
                continue
            try:
                handler(event, now)
            except SchedlabError:
                raise
            except Exception as exc:
                job = getattr(event, "job", None)
                job_id = job.id if job is not None else getattr(event, "job_id", None)
                about = f" for job '{job_id}'" if job_id else ""
                kind = type(event).__name__
                failure = SchedulerFailure(f"scheduler {getattr(self.scheduler, 'name', '?')!r} failed on "
                                           f"{kind}{about} at t={now}: {type(exc).__name__}: {exc}")
                failure.scheduler_module = type(self.scheduler).__module__
                raise failure from exc
        if self.finished or not message.events:
            return encode_reply(now, [])
        try:
            decisions = self.scheduler.decide(now)
        except Exception as exc:
            failure = SchedulerFailure(f"scheduler {getattr(self.scheduler, 'name', '?')!r} failed in decide at "
                                       f"t={now}: {type(exc).__name__}: {exc}")
            failure.scheduler_module = type(self.scheduler).__module__
            raise failure from exc
        for decision in decisions:
            if type(decision) is CallMeLater and not decision.at_s > now:
                raise SimulationError(f"scheduler asked CALL_ME_LATER at {decision.at_s}, not after now={now}")
        return encode_reply(now, decisions)


_TCP = re.compile(r"^tcp://(?P<host>\[[^\]]+\]|[^:/\[\]]+):(?P<port>[^:/]+)$")


def check_endpoint(endpoint: str, *, bind: bool = True) -> str:
    """A ZeroMQ endpoint we can bind (or connect, `bind=False`): tcp://HOST:PORT with PORT in 1-65535
    (or * to bind any free port), ipc://PATH or inproc://NAME. Checked before binding: ZeroMQ may
    wait forever on a port it cannot use instead of failing."""
    if endpoint.startswith(("ipc://", "inproc://")) and len(endpoint.split("://", 1)[1]) > 0:
        return endpoint
    match = _TCP.match(endpoint)
    if match is None:
        raise InputError(f"bad endpoint {endpoint!r}: expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:28000)")
    port = match.group("port")
    if not (port == "*" and bind) and not (port.isdigit() and 1 <= int(port) <= 65535):
        raise InputError(f"bad endpoint {endpoint!r}: port must be 1-65535{', or * to bind' if bind else ''}, "
                         f"got {port!r}")
    return endpoint


def serve(scheduler: Any, endpoint: str, *, timeout_s: float | None = None,
          record_path: str | None = None, ready: Callable[[str], None] | None = None) -> DecisionServer:
    """Bind `endpoint` (REP) and answer Batsim until SIMULATION_ENDS; `ready(endpoint)` once bound."""
    import zmq
    from zmq.utils.monitor import recv_monitor_message

    check_endpoint(endpoint)
    server = DecisionServer(scheduler)
    context = zmq.Context.instance()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 1000)
    recorder = Recorder(record_path) if record_path else None
    monitor = None
    try:
        try:
            socket.bind(endpoint)
        except zmq.ZMQError as exc:
            raise InputError(f"cannot bind {endpoint}: {exc}") from None
        if ready is not None:
            ready(socket.getsockopt_string(zmq.LAST_ENDPOINT))
        # A monitor tells us when Batsim's TCP connection drops (Batsim killed): without it a REP
        # socket would wait forever for the next request.
        monitor = socket.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        poller = zmq.Poller()
        poller.register(socket, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        while not server.finished:
            polled = dict(poller.poll(None if timeout_s is None else timeout_s * 1000))
            if not polled:
                raise ProtocolError(f"no message from batsim for {timeout_s:g} s on {endpoint}")
            if monitor in polled:
                event = recv_monitor_message(monitor)
                if event["event"] == zmq.EVENT_DISCONNECTED and socket not in polled:
                    raise ProtocolError(f"batsim disconnected from {endpoint} before the simulation ended "
                                        f"(after {server.nb_messages} messages)")
                continue
            raw = socket.recv()
            if recorder:
                recorder.write("batsim->sched", raw)
            try:
                reply = server.handle(raw)
            except SchedlabError:
                # Tell Batsim something is wrong instead of leaving it blocked on its REQ socket:
                # an empty reply is not JSON, so Batsim aborts at once.
                socket.send(b"")
                raise
            if recorder:
                recorder.write("sched->batsim", reply)
            socket.send(reply)
        return server
    finally:
        if recorder:
            recorder.close(server.finished)
        if monitor is not None:
            socket.disable_monitor()
            monitor.close()
        socket.close()
