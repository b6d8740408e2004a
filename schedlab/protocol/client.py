"""The embedded engine as the Batsim side (ZeroMQ REQ) of an external Batsim 4 decision process.

`ExternalDecisionProcess` has the scheduler hooks the engine calls; it buffers the instant's events as
Batsim messages, sends one message per `decide(now)` and turns the reply into decisions. So
batsched, pybatsim schedulers or `schedlab serve` run on our engine without SimGrid.
"""

from __future__ import annotations

import os
import shlex
import socket as pysocket
import subprocess
from collections.abc import Sequence
from typing import Any

from procset import ProcSet

from schedlab.errors import InputError, ProtocolError
from schedlab.model import Decision, Deferred, Execute, Job, JobState, Platform
from schedlab.protocol.messages import (
    EventType,
    Recorder,
    encode_message,
    event,
    job_submitted_data,
    parse_reply,
    simulation_begins_data,
)
from schedlab.workload import Workload

#: Batsim's return codes in JOB_COMPLETED (seen in real captures: 0 success, -1 walltime reached).
_RETURN_CODES = {JobState.COMPLETED_SUCCESSFULLY: 0, JobState.COMPLETED_WALLTIME_REACHED: -1,
                 JobState.COMPLETED_KILLED: -1, JobState.COMPLETED_FAILED: 1}


def free_loopback_port() -> int:
    with pysocket.socket(pysocket.AF_INET, pysocket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ExternalDecisionProcess:
    """Runs `command` ({socket} -> tcp://127.0.0.1:PORT, {port} -> PORT) and talks Batsim to it."""

    @staticmethod
    def check_command(command: str, endpoint: str = "tcp://127.0.0.1:1", port: int = 1) -> list[str]:
        """The argv of `command` with its endpoint filled in; a command that cannot be one is bad input."""
        try:
            argv = shlex.split(command.replace("{socket}", endpoint).replace("{port}", str(port)))
        except ValueError as exc:
            raise InputError(f"bad --external command: {exc}") from None
        if not argv:
            raise InputError("empty --external command")
        if "{socket}" not in command and "{port}" not in command:
            raise InputError("the --external command must contain {socket} or {port} (where it binds)")
        return argv

    name = "external"
    #: `--timing batsim` passes each event's own timestamp (Batsim's), not the message's `now`
    wants_event_timestamps = True

    def __init__(self, command: str, *, workload: Workload, timeout_s: float = 60.0,
                 record_path: str | None = None, port: int | None = None,
                 log_path: str | None = None) -> None:
        import zmq

        self.command = command
        self.workload = workload
        self.timeout_s = timeout_s
        self.port = port or free_loopback_port()
        endpoint = f"tcp://127.0.0.1:{self.port}"
        argv = self.check_command(command, endpoint, self.port)
        # the log is made under another name and renamed once the process runs: a command that
        # cannot start leaves an earlier run's external.log as it was
        starting = f"{log_path}.starting" if log_path else None
        self._log = open(starting, "wb") if starting else None  # noqa: SIM115 (closed in close())
        output = self._log if self._log is not None else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output, stderr=output)
        except OSError as exc:
            if self._log is not None and starting is not None:
                self._log.close()
                os.unlink(starting)
            raise InputError(f"cannot start external decision process {argv[0]!r}: {exc}") from None
        try:
            if starting and log_path:
                os.replace(starting, log_path)
            self._context: Any = zmq.Context.instance()
            self._socket = self._context.socket(zmq.REQ)
            self._socket.setsockopt(zmq.LINGER, 0)
            self._socket.connect(endpoint)
            self._poller = zmq.Poller()
            self._poller.register(self._socket, zmq.POLLIN)
            self._events: list[dict[str, Any]] = []
            self._allocs: dict[str, ProcSet] = {}
            self._profiles: dict[str, str] = {}  # job id -> profile name, until the job ends
            self._recorder = Recorder(record_path) if record_path else None
            self._ended = False  # SIMULATION_ENDS sent: the record is complete
        except BaseException:  # set-up failed after the process started: it must not outlive us
            self.process.kill()
            self.process.wait()
            if self._log is not None:
                self._log.close()
            raise
        self.closed = False

    def options(self) -> dict[str, Any]:
        return {"command": self.command}

    # ------------------------------------------------------------------ hooks: buffer Batsim events
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        profiles = {self.workload.name: {n: dict(p.raw) for n, p in self.workload.profiles.items()}}
        data = simulation_begins_data(platform, {self.workload.name: self.workload.source}, profiles)
        self._events.append(event(now, EventType.SIMULATION_BEGINS, data))

    def on_job_submitted(self, job: Job, now: float) -> None:
        self._profiles[job.id] = job.profile
        self._events.append(event(now, EventType.JOB_SUBMITTED, job_submitted_data(job)))

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        alloc = self._allocs.pop(job_id, ProcSet())
        code = _RETURN_CODES.get(state, 0)
        if state is JobState.COMPLETED_FAILED:  # the profile's own code, as Batsim sends it
            code = self.workload.profiles[self._profiles.pop(job_id)].return_code
        else:
            self._profiles.pop(job_id, None)
        self._events.append(event(now, EventType.JOB_COMPLETED, {
            "job_id": job_id, "job_state": state.value, "return_code": code,
            "alloc": str(alloc)}))

    def on_jobs_killed(self, job_ids: Sequence[str], now: float) -> None:
        self._events.append(event(now, EventType.JOB_KILLED,
                                  {"job_ids": list(job_ids), "job_progress": {j: {} for j in job_ids}}))

    def on_requested_call(self, now: float) -> None:
        self._events.append(event(now, EventType.REQUESTED_CALL, {}))

    def on_no_more_jobs(self, now: float) -> None:
        self._events.append(event(now, EventType.NOTIFY, {"type": "no_more_static_job_to_submit"}))

    def on_simulation_ends(self, now: float) -> None:
        self._ended = True
        self._events.append(event(now, EventType.SIMULATION_ENDS, {}))
        self._exchange(now)
        self.close(wait=True)

    # ------------------------------------------------------------------ one message, one reply
    def decide(self, now: float) -> list[Decision | Deferred]:
        reply_now, timed = self._exchange(now)
        if reply_now < now:
            raise ProtocolError(f"external decision process replied now={reply_now} < {now}")
        decisions: list[Decision | Deferred] = []
        later: dict[float, list[Decision]] = {}
        for ts, decision in timed:
            if type(decision) is Execute:
                self._allocs[decision.job_id] = decision.alloc
            if ts <= now:
                decisions.append(decision)
            else:
                later.setdefault(ts, []).append(decision)
        decisions.extend(Deferred(ts, tuple(ds)) for ts, ds in sorted(later.items()))
        return decisions

    def decide_timed(self, now: float) -> tuple[float, list[tuple[float, Decision]]]:
        """One exchange as Batsim applies it: the reply's `now` and its (timestamp, decision)s."""
        reply_now, timed = self._exchange(now)
        if reply_now < now:
            raise ProtocolError(f"external decision process replied now={reply_now} < {now}")
        for _, decision in timed:
            if type(decision) is Execute:
                self._allocs[decision.job_id] = decision.alloc
        return reply_now, timed

    def _exchange(self, now: float) -> tuple[float, list[tuple[float, Decision]]]:
        raw = encode_message(now, self._events)
        self._events = []
        if self._recorder:
            self._recorder.write("batsim->sched", raw)
        self._socket.send(raw)
        waited = 0.0
        while not self._poller.poll(200):
            waited += 0.2
            code = self.process.poll()
            if code is not None:
                raise ProtocolError(f"external decision process exited with code {code} at t={now} "
                                    "without replying")
            if waited >= self.timeout_s:
                raise ProtocolError(f"no reply from the external decision process within {self.timeout_s:g} s "
                                    f"at t={now}")
        reply = self._socket.recv()
        if self._recorder:
            self._recorder.write("sched->batsim", reply)
        return parse_reply(reply)

    def close(self, wait: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        self._socket.close()
        if self._recorder:
            self._recorder.close(self._ended)
        try:
            if wait:
                try:
                    self.process.wait(timeout=10)
                    return
                except subprocess.TimeoutExpired:
                    pass
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
        finally:
            if self._log is not None:
                self._log.close()
