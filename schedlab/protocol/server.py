"""`schedlab serve`: one of our schedulers as the decision process of a real Batsim (ZeroMQ REP).

`DecisionServer.handle` turns one Batsim message into our reply without any socket (unit tests
replay real captures through it); `serve` binds the REP socket and loops until SIMULATION_ENDS.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from schedlab.errors import InputError, ProtocolError, SchedlabError, SimulationError
from schedlab.host import Event, SchedulerDriver, SchedulerHooks
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

#: each typed Batsim event as the host event it tells the scheduler (None: nothing to tell)
_AS_HOST_EVENT: dict[type, Callable[[Any], tuple[Event, Any] | None]] = {
    SimulationBegins: lambda e: (Event.SIMULATION_BEGINS, e.platform),
    JobSubmitted: lambda e: (Event.JOB_SUBMITTED, e.job),
    JobCompleted: lambda e: (Event.JOB_COMPLETED, (e.job_id, e.state)),
    JobsKilled: lambda e: (Event.JOBS_KILLED, e.job_ids),
    RequestedCall: lambda e: (Event.REQUESTED_CALL, None),
    Notify: lambda e: (Event.NO_MORE_JOBS, None) if e.kind == "no_more_static_job_to_submit" else None,
    SimulationEnds: lambda e: (Event.SIMULATION_ENDS, None),
}


class DecisionServer:
    """Feeds parsed Batsim events to a scheduler (host.SchedulerDriver: its failures said with the
    event), returns `decide(now)` as the reply."""

    def __init__(self, scheduler: SchedulerHooks, *, platform: Platform | None = None) -> None:
        """`platform`: the platform file's compute resources and message time (`serve --platform`),
        checked against what Batsim sends and given to the scheduler in its stead."""
        self.scheduler = scheduler
        self._known_platform = platform
        self.driver = SchedulerDriver(scheduler, wrap_failures=True)
        self.platform: Platform | None = None
        self.finished = False
        self.nb_messages = 0

    def handle(self, raw: bytes | str) -> bytes:
        message = parse_message(raw)
        now = message.now
        self.nb_messages += 1
        if self.platform is None and not any(isinstance(e, SimulationBegins) for e in message.events):
            raise ProtocolError("the first message must carry SIMULATION_BEGINS")
        for event in message.events:
            convert = _AS_HOST_EVENT.get(type(event))
            told = None if convert is None else convert(event)
            if told is None:
                continue
            if told[0] is Event.SIMULATION_BEGINS:
                told = (Event.SIMULATION_BEGINS, self._platform_told(event.platform))
                self.platform = told[1]
            elif told[0] is Event.SIMULATION_ENDS:
                self.finished = True
            self.driver.deliver([told], now)
        if self.finished or not message.events:
            return encode_reply(now, [])
        decisions = self.driver.decide(now)
        for decision in decisions:
            if type(decision) is CallMeLater and not decision.at_s > now:
                raise SimulationError(f"scheduler asked CALL_ME_LATER at {decision.at_s}, not after now={now}")
        return encode_reply(now, decisions)

    def _platform_told(self, sent: Platform) -> Platform:
        known = self._known_platform
        if known is None:
            return sent  # with the message time our engine sends its hosted processes, if any
        if known.resource_names != sent.resource_names:
            raise ProtocolError(f"--platform {known.source} is not the platform batsim runs: its compute hosts are "
                                f"{_hosts(known)}, batsim's {_hosts(sent)}")
        return dataclasses.replace(sent, message_time_s=known.message_time_s)


def _hosts(platform: Platform) -> str:
    names = platform.resource_names
    return f"{len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"


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


def serve(scheduler: SchedulerHooks, endpoint: str, *, timeout_s: float | None = None, record_path: str | None = None,
          ready: Callable[[str], None] | None = None, platform: Platform | None = None) -> DecisionServer:
    """Bind `endpoint` (REP) and answer Batsim until SIMULATION_ENDS; `ready(endpoint)` once bound.
    `platform`: the platform file batsim runs, when known (DecisionServer)."""
    import zmq
    from zmq.utils.monitor import recv_monitor_message

    check_endpoint(endpoint)
    server = DecisionServer(scheduler, platform=platform)
    context: Any = zmq.Context.instance()
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
            polled = dict(poller.poll(None if timeout_s is None else int(timeout_s * 1000)))
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
