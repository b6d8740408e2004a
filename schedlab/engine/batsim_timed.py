"""`--timing batsim`: the embedded engine with Batsim 4.2.1's message timing.

Batsim's actors run on `batsim_kernel`'s model of SimGrid (static job submitter, server,
request-reply, job executors, waiters, killers; src/workload submitters, server.cpp,
jobs_execution.cpp, network.cpp, protocol.cpp). Each internal message costs its route's latency and
1-byte transfer (batsim_network); the server receives them one at a time and calls the decision
process only when it is ready and no message waits, so simultaneous events arrive as Batsim groups
them. The scheduler sees what `schedlab serve` would see: `now` as Batsim prints it (6 decimals),
every decision applied as one message, in order. Job rows, times and their order are Batsim's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Generator
from typing import Any

from schedlab.engine.batsim_kernel import Actor, Kernel, put, sleep_for
from schedlab.engine.batsim_network import MessageRoutes
from schedlab.engine.core import Engine
from schedlab.engine.ledger import JobLedger, JobRecord
from schedlab.errors import SimulationError
from schedlab.host import Event, SchedulerDriver, SchedulerHooks
from schedlab.model import CallMeLater, Decision, Deferred, Execute, Job, JobState, Kill, Platform, Reject, SetMetadata
from schedlab.protocol.batsim_numbers import job_value_as_sent, reads_as
from schedlab.workload import Workload

#: an actor's body: yields requests to the kernel (sleep, spawn, send, receive) and gets their results
Process = Generator[Any, Any, None]

MIN_RUNTIME_S = 1e-5  # Batsim's runtime for a job that ran 0 s, and a waiter's least sleep


def slowest_message_s(routes: MessageRoutes) -> float:
    """The longest time one of Batsim's internal messages takes to reach the master: its route's
    latency, then 1 byte at its rate (what `Platform.message_time_s` tells a scheduler)."""
    return max(route.latency_s + 1.0 / route.rate_bytes_per_s for route in (routes.master, *routes.resources))


def as_sent(job: Job) -> Job:
    """The scheduler's copy of a job as JOB_SUBMITTED tells it: Batsim keeps the job's description as
    the text RapidJSON's writer makes of the workload's values, reads it again, and writes every
    double of a message with "%f" (protocol.hpp's Writer): batsim_numbers.job_value_as_sent."""
    floats = [key for key, value in job.extra.items() if type(value) is float]
    extra = {**job.extra, **{key: job_value_as_sent(job.extra[key]) for key in floats}} if floats else job.extra
    walltime = None if job.walltime_s is None else job_value_as_sent(job.walltime_s)
    return Job(job.id, job_value_as_sent(job.submit_time_s), job.res, walltime, job.profile, extra)


def batsim_now(clock: float) -> float:
    """The time a decision process reads: Batsim prints doubles with "%f"."""
    return float(f"{clock:f}")


class BatsimTimedEngine:
    """Same surface as Engine (records, finished, run, ...), Batsim's timestamps."""

    timing = "batsim"

    def __init__(self, platform: Platform, workload: Workload, scheduler: SchedulerHooks, *, routes: MessageRoutes,
                 progress: Callable[[int], None] | None = None) -> None:
        Engine.check_workload(workload)
        if len(routes.resources) != platform.nb_resources:
            raise SimulationError(f"the platform has {platform.nb_resources} resources, its routes "
                                  f"{len(routes.resources)}")
        self.platform, self.workload, self.scheduler, self.routes = platform, workload, scheduler, routes
        self.driver = SchedulerDriver(scheduler)
        self.ledger = JobLedger(platform, workload)
        self.records: dict[str, JobRecord] = self.ledger.records
        self.finished: list[str] = self.ledger.finished
        self.nb_decisions = 0
        self.nb_steps = 0  # messages exchanged with the scheduler
        self._kernel = Kernel()
        self._progress = progress
        self._events: list[tuple[Event, Any, float]] = []  # (event, payload, Batsim's timestamp)
        self._executors: dict[str, Actor] = {}
        self._kill_asked: set[str] = set()
        self._to_delete: list[str] = []  # ended or rejected jobs Batsim deletes once the next message is sent
        self._deleted: set[str] = set()  # jobs Batsim no longer knows
        self._ready = self._end_sent = self._end_acked = self._submitted_all = False
        self._nb_submitted = self._nb_rows = self._nb_running = self._nb_waiters = self._nb_killers = 0
        #: external processes get each event's own timestamp; in-process schedulers the message's
        #: `now`, as `schedlab serve` passes them
        self._event_times = self.driver.wants_event_timestamps
        self._ended = False
        self._pausing = False  # pausing_run: the scheduler is told, then asked after a pause
        self._told_now = 0.0

    @property
    def scheduling_time_s(self) -> float:
        return self.driver.scheduling_time_s

    @property
    def now(self) -> float:
        return self._kernel.now

    @property
    def complete(self) -> bool:
        return self._ended

    def run(self) -> None:
        self.driver.prepare()
        master = self.routes.master
        self._kernel.spawn("workload_submitter_w0", master, self._submitter())
        self._kernel.spawn("server", master, self._server())
        self._kernel.run()
        self._finish()

    def _finish(self) -> None:
        undecided = self.ledger.undecided()
        if undecided or not self._end_acked:
            raise SimulationError(
                f"the scheduler left {len(undecided)} job(s) undecided when no event was left "
                f"(first: {undecided[0] if undecided else '-'}); Batsim requires every job to be executed or rejected")
        self._ended = True

    # ------------------------------------------------------------------ actors
    def _submitter(self) -> Process:
        kernel = self._kernel
        yield from put(("HELLO", None))
        clock = kernel.now
        group: list[Job] = []
        for job in sorted(self.workload.jobs, key=lambda j: (j.submit_time_s, j.id)):  # Batsim's order
            if job.submit_time_s > clock:
                if group:
                    yield from put(("SUBMITTED", group))
                    group = []
                yield from sleep_for(job.submit_time_s - clock)
                clock = kernel.now
            group.append(job)
        if group:
            yield from put(("SUBMITTED", group))
        yield from put(("BYE", None))

    def _executor(self, record: JobRecord) -> Process:
        job = record.job
        profile = self.workload.profiles[job.profile]
        delay = profile.replay_delay_s
        if job.walltime_s is None or delay < job.walltime_s:
            yield from sleep_for(delay)
            state = profile.state_in_time
        else:  # Batsim kills at the walltime when delay >= walltime
            yield from sleep_for(job.walltime_s)
            state = JobState.COMPLETED_WALLTIME_REACHED
        self._ended_now(record, state)
        yield from put(("COMPLETED", record))

    def _ended_now(self, record: JobRecord, state: JobState) -> None:
        """The job's executor ended or was killed: Batsim sets its state and frees its machines
        then (update_machines_on_job_end), before the server handles the message that says so."""
        record.final_on_completion = state
        self.ledger.release(record)
        now = self._kernel.now
        record.finish_s = now if now > record.start_s else record.start_s + MIN_RUNTIME_S  # type: ignore[operator]

    def _waiter(self, at_s: float) -> Process:
        kernel = self._kernel
        if kernel.now < at_s:
            yield from sleep_for(max(at_s - kernel.now, MIN_RUNTIME_S))
        if not (self._end_sent or self._end_acked):
            yield from put(("WAITED", None))

    def _killer(self, job_ids: list[str]) -> Process:
        for job_id in job_ids:
            record = self.records[job_id]
            if record.state is JobState.RUNNING and record.finish_s is None:
                yield ("kill", self._executors[job_id])
                self._ended_now(record, JobState.COMPLETED_KILLED)
        yield from put(("KILLED", job_ids))

    def pausing_run(self) -> Generator[float, None, None]:
        """`run()`, pausing before each `decide` (see Engine.pausing_run): yields the `now` the
        scheduler was told; the kernel's actors interleave as they do in `run()`."""
        self._pausing = True
        self.driver.prepare()
        master = self.routes.master
        self._kernel.spawn("workload_submitter_w0", master, self._submitter())
        self._kernel.spawn("server", master, self._server())
        for _ in self._kernel.steps():
            yield self._told_now
        self._finish()

    def _request_reply(self, events: list[tuple[Event, Any, float]], clock: float) -> Process:
        kernel = self._kernel
        now = batsim_now(clock)
        if self._pausing and self._tell(events, now):
            self._told_now = now
            yield ("pause",)
        reply_now, timed = self._reply(events, now) if self._pausing else self._exchange(events, now)
        for at_s, decision in timed:
            if at_s > kernel.now:
                yield from sleep_for(at_s - kernel.now)
            yield from put(("DECISION", decision))
        if reply_now > kernel.now:
            yield from sleep_for(reply_now - kernel.now)
        yield from put(("READY", None))

    def _server(self) -> Process:
        kernel = self._kernel
        told = dataclasses.replace(self.platform, message_time_s=slowest_message_s(self.routes))
        self._events.append((Event.SIMULATION_BEGINS, told, 0.0))
        yield from self._send_events()
        while not self._end_acked:
            comm = yield ("irecv",)
            kind, payload = yield ("wait", comm)
            yield from self._handlers[kind](self, payload)
            if self._ready and not self._end_acked and kernel.mailbox_empty():
                if self._events:
                    yield from self._send_events()
                elif self._all_done() and not self._end_sent:
                    self._events.append((Event.SIMULATION_ENDS, None, kernel.now))
                    self._end_sent = True
                    yield from self._send_events()

    def _send_events(self) -> Process:
        events, self._events = self._events, []
        self._ready = False
        yield ("spawn", "Scheduler REQ-REP", self.routes.master, self._request_reply(events, self._kernel.now))
        self._deleted.update(self._to_delete)  # server.cpp: jobs_to_be_deleted go once a message is sent
        self._to_delete.clear()

    def _all_done(self) -> bool:
        return (self._submitted_all and self._nb_rows == self._nb_submitted and self._nb_running == 0
                and self._nb_waiters == 0 and self._nb_killers == 0)

    # ------------------------------------------------------------------ the server's handlers
    def _on_hello(self, _: Any) -> Process:
        yield from ()

    def _on_bye(self, _: Any) -> Process:
        self._submitted_all = True
        self._events.append((Event.NO_MORE_JOBS, None, self._kernel.now))
        yield from ()

    def _on_submitted(self, jobs: list[Job]) -> Process:
        for job in jobs:
            self.records[job.id].state = JobState.SUBMITTED
            self._nb_submitted += 1
            self._events.append((Event.JOB_SUBMITTED, as_sent(job), self._kernel.now))  # the scheduler's copy
        yield from ()

    def _row(self, record: JobRecord) -> None:
        self.ledger.add_row(record)
        self._nb_rows += 1

    def _on_completed(self, record: JobRecord) -> Process:
        record.state = record.final_on_completion
        self._nb_running -= 1
        self._row(record)
        self._to_delete.append(record.job.id)
        self._events.append((Event.JOB_COMPLETED, (record.job.id, record.state), self._kernel.now))
        yield from ()

    def _on_killed(self, job_ids: list[str]) -> Process:
        for job_id in job_ids:
            if job_id in self._deleted:  # it ended by itself and its end was sent meanwhile
                raise SimulationError(f"KILLING_DONE for job '{job_id}' at t={self._kernel.now!r}, which Batsim "
                                      "deleted when it sent its completion (Batsim 4.2.1 aborts on this)")
            record = self.records[job_id]
            if record.final_on_completion is JobState.COMPLETED_KILLED and record.state is JobState.RUNNING:
                record.state = JobState.COMPLETED_KILLED
                self._nb_running -= 1
                self._row(record)
                self._to_delete.append(job_id)
                self._events.append((Event.JOB_COMPLETED, (record.job.id, record.state), self._kernel.now))
        self._events.append((Event.JOBS_KILLED, job_ids, self._kernel.now))
        self._nb_killers -= 1
        yield from ()

    def _on_waited(self, _: Any) -> Process:
        self._events.append((Event.REQUESTED_CALL, None, self._kernel.now))
        self._nb_waiters -= 1
        yield from ()

    def _on_ready(self, _: Any) -> Process:
        self._ready = True
        if self._end_sent:
            self._end_acked = True
        yield from ()

    def _on_decision(self, decision: Decision) -> Process:
        self.nb_decisions += 1
        apply = self._appliers.get(type(decision))
        if apply is None:
            raise SimulationError(f"decision {decision!r} is not modelled by --timing batsim")
        yield from apply(self, decision, self._kernel.now)

    def _execute(self, decision: Execute, now: float) -> Process:
        record = self.ledger.submitted(decision.job_id, "EXECUTE_JOB", now)
        self.ledger.start(record, decision.alloc, now)
        self._nb_running += 1
        route = self.routes.resources[decision.alloc.min]  # the job runs from its first host
        self._executors[record.job.id] = yield ("spawn", f"job_{record.job.id}", route, self._executor(record))

    def _reject(self, decision: Reject, now: float) -> Process:
        record = self.ledger.submitted(decision.job_id, "REJECT_JOB", now)
        self.ledger.reject(record)  # its reason went before it, as SET_JOB_METADATA (_messages)
        self._nb_rows += 1
        self._to_delete.append(record.job.id)
        yield from ()

    def _kill(self, decision: Kill, now: float) -> Process:
        asked = []
        for job_id in decision.job_ids:  # server_on_kill_jobs' checks, in its order
            self.ledger.to_kill(job_id, now, forgotten=job_id in self._deleted)
            if job_id in self._kill_asked:
                continue  # a repeated kill is ignored
            self._kill_asked.add(job_id)  # a job ended but not yet reported is accepted: nothing to kill
            asked.append(job_id)
        if asked:
            self._nb_killers += 1
            yield ("spawn", "killer_process", self.routes.master, self._killer(asked))

    def _call_me_later(self, decision: CallMeLater, now: float) -> Process:
        if not decision.at_s > now:  # Batsim checks against the time it receives the call
            raise SimulationError(f"CALL_ME_LATER at t={decision.at_s!r} is not after t={now!r}, when "
                                  "Batsim receives it ('You asked to be awaken in the past!')")
        self._nb_waiters += 1
        yield ("spawn", "waiter", self.routes.master, self._waiter(decision.at_s))

    def _set_metadata(self, decision: SetMetadata, now: float) -> Process:
        self.ledger.record(decision.job_id, "SET_JOB_METADATA", now).metadata = decision.metadata
        yield from ()

    #: How each decision takes effect when its message reaches the server (one table, keyed by type)
    _appliers: dict[type, Callable[[BatsimTimedEngine, Any, float], Process]] = {
        Execute: _execute, Reject: _reject, Kill: _kill, CallMeLater: _call_me_later, SetMetadata: _set_metadata,
    }

    _handlers: dict[str, Callable[[BatsimTimedEngine, Any], Process]] = {
        "HELLO": _on_hello, "BYE": _on_bye, "SUBMITTED": _on_submitted, "COMPLETED": _on_completed,
        "KILLED": _on_killed, "WAITED": _on_waited, "READY": _on_ready, "DECISION": _on_decision,
    }

    # ------------------------------------------------------------------ the decision process
    def _exchange(self, events: list[tuple[Event, Any, float]], now: float) -> tuple[float, list[tuple[float, Any]]]:
        """One message to the scheduler (its hooks, then decide) and its reply: the reply's `now`
        and (timestamp, decision) pairs, one per message Batsim will handle."""
        self._tell(events, now)
        return self._reply(events, now)

    def _tell(self, events: list[tuple[Event, Any, float]], now: float) -> bool:
        """A message's events told to the scheduler; whether it is then asked to decide (not after
        SIMULATION_ENDS)."""
        driver = self.driver
        self.nb_steps += 1
        told = [(kind, payload) for kind, payload, _ in events if kind is not Event.SIMULATION_ENDS]
        if self._event_times:  # each event at its own timestamp, as Batsim sends them
            for kind, payload, at_s in events:
                if kind is not Event.SIMULATION_ENDS:
                    driver.deliver([(kind, payload)], batsim_now(at_s))
        elif told:
            driver.deliver(told, now)
        if len(told) < len(events):
            driver.deliver([(Event.SIMULATION_ENDS, None)], now)
            return False
        return True

    def _reply(self, events: list[tuple[Event, Any, float]], now: float) -> tuple[float, list[tuple[float, Any]]]:
        """The scheduler's reply to a message it was told (`_tell`)."""
        driver = self.driver
        try:
            if any(kind is Event.SIMULATION_ENDS for kind, _, _ in events):
                return now, []
            if driver.decides_timed:
                return driver.decide_timed(now)
            decisions = driver.decide(now)
        finally:
            if self._progress is not None:
                self._progress(len(self.finished))
        reply_now = reads_as(now)  # `serve` writes the `now` it was told; Batsim reads it back
        return reply_now, [(reply_now, d) for decision in decisions for d in _messages(decision)]


def _messages(decision: Decision | Deferred) -> list[Decision]:
    """The messages a decision is on the wire (`schedlab serve` sends a reason as metadata first),
    with the numbers Batsim reads from the text `serve` writes (a call's time: batsim_numbers)."""
    if isinstance(decision, Deferred):
        raise SimulationError("deferred decisions are not modelled by --timing batsim")
    if type(decision) is Reject and decision.reason:
        return [SetMetadata(decision.job_id, decision.reason), Reject(decision.job_id, "")]
    if type(decision) is CallMeLater:
        return [CallMeLater(reads_as(decision.at_s))]
    return [decision]
