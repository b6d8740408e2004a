"""The embedded engine: a discrete-event simulation of Batsim 4.2.1's semantics for delay profiles.

SimPy-like: a heap of (time, priority, seq, event); `step()` handles every event of the next instant,
tells the scheduler through its hooks, asks `decide(now)` once and applies the decisions; `run()`
repeats until nothing is left. Decisions take effect at the instant they are made (zero latency:
real Batsim adds ~60 us of simulated messaging per decision, see docs/design.md). A delay job runs
`delay` seconds, or is killed at its walltime (COMPLETED_WALLTIME_REACHED) when delay >= walltime.
Illegal decisions raise SimulationError, as Batsim aborts on them.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Generator, Sequence
from typing import Any

from schedlab.engine.ledger import JobLedger, JobRecord
from schedlab.errors import SimulationError, UnsupportedProfileError
from schedlab.host import Event, SchedulerDriver, SchedulerHooks
from schedlab.model import (
    CallMeLater,
    Decision,
    Deferred,
    Execute,
    JobState,
    Kill,
    Platform,
    Reject,
    SetMetadata,
)
from schedlab.workload import StreamedWorkload, Workload

#: the events of the heap: host.Event, whose values order one instant (kept under its former name)
EventKind = Event

__all__ = ["Engine", "EventKind", "JobRecord"]


class Engine:
    """Simulates `workload` on `platform` driven by `scheduler` (anything with the Scheduler hooks)."""

    timing = "ideal"  # zero message latency (batsim_timed.BatsimTimedEngine: Batsim's)

    def __init__(self, platform: Platform, workload: Workload, scheduler: SchedulerHooks, *,
                 progress: Callable[[int], None] | None = None) -> None:
        self.check_workload(workload)
        self.platform = platform
        self.workload = workload
        self.scheduler = scheduler
        self.driver = SchedulerDriver(scheduler)
        self.now = 0.0
        self.ledger = JobLedger(platform, workload)
        self.records: dict[str, JobRecord] = self.ledger.records
        self.finished: list[str] = self.ledger.finished  # completion (or rejection) order: jobs.csv's rows
        self.nb_decisions = 0
        self._reply_kills: set[str] = set()  # jobs killed by the reply being applied (a repeat is ignored)
        self.nb_steps = 0
        self._heap: list[tuple[float, Event, int, Any]] = []  # (time, kind = priority, seq, payload)
        self._seq = 0
        self._progress = progress
        self._started = False
        self._ended = False
        self._streamed = isinstance(workload, StreamedWorkload)  # engine/stream.py reads as it goes
        for job in workload.jobs:
            self._push(job.submit_time_s, Event.JOB_SUBMITTED, job)
        if workload.jobs:
            self._push(workload.jobs[-1].submit_time_s, Event.NO_MORE_JOBS, None)

    @property
    def scheduling_time_s(self) -> float:
        """Seconds the scheduler's hooks and decisions took (its models' loading or training not)."""
        return self.driver.scheduling_time_s

    @staticmethod
    def check_workload(workload: Workload) -> None:
        """Refuse profile types the engine does not model (before any work starts)."""
        unsupported = sorted({(j.profile, workload.profiles[j.profile].type) for j in workload.jobs
                              if workload.profiles[j.profile].type != "delay"})
        if unsupported:
            kinds = ", ".join(f"'{name}' ({ptype})" for name, ptype in unsupported[:5])
            raise UnsupportedProfileError(
                f"profiles {kinds} are not modelled by the embedded engine (it replays 'delay' "
                f"profiles only); run these with real Batsim", path=workload.source or None)

    # ------------------------------------------------------------------ event loop
    def _push(self, at_s: float, kind: Event, payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at_s, kind, self._seq, payload))

    def start(self) -> None:
        """SIMULATION_BEGINS at t=0 (the scheduler may already decide, e.g. ask for a call)."""
        if self._started:
            return
        self._started = True
        # messages take no time here (schedulers.wakeups needs no margin for them)
        told = dataclasses.replace(self.platform, message_time_s=0.0)
        self.driver.deliver([(Event.SIMULATION_BEGINS, told)], 0.0)  # prepared first, untimed
        self._decide()

    def step(self) -> bool:
        """Handle every event of the next instant; False when nothing is left."""
        if not self._started:
            self.start()
        heap = self._heap
        if not heap:
            return False
        notices = self._instant()
        now = self.now
        # 2. the scheduler hears about all of it, then decides once
        if notices:
            decisions = self.driver.step(notices, now)
            if decisions:
                self._apply(decisions, now)
        if self._progress is not None:
            self._progress(len(self.finished))
        return True

    def pausing_run(self) -> Generator[float, None, None]:
        """`run()`, pausing before each `decide`: yields the instant once the scheduler has been told
        of it; resuming asks for its decisions and applies them. The same calls in the same order as
        `run()`: a host that steers the scheduler between (the Gymnasium environment) gets the run
        that scheduler would give alone."""
        if not self._started:
            self._started = True
            told = dataclasses.replace(self.platform, message_time_s=0.0)
            self.driver.deliver([(Event.SIMULATION_BEGINS, told)], 0.0)
            yield 0.0
            self._decide()
        while self._heap:
            notices = self._instant()
            if notices:
                self.driver.deliver(notices, self.now)
                yield self.now
                self._decide()
            if self._progress is not None:
                self._progress(len(self.finished))
        self.end()

    def _instant(self) -> list[tuple[Event, Any]]:
        """The engine's own state changes for every event of the next instant; returns what the
        scheduler must be told of them."""
        heap = self._heap
        now = heap[0][0]
        self.now = now
        self.nb_steps += 1
        notices: list[tuple[Event, Any]] = []
        pop = heapq.heappop
        while heap and heap[0][0] == now:
            _, kind, _, payload = pop(heap)
            if kind is Event.JOB_COMPLETED:
                if payload.state is not JobState.RUNNING:
                    continue  # killed earlier: this end is stale
                self.ledger.finish(payload, payload.final_on_completion, now)
                payload = (payload.job.id, payload.state)
            elif kind is Event.JOB_SUBMITTED:
                self.records[payload.id].state = JobState.SUBMITTED
                payload = payload.view()  # the scheduler's copy: the engine's own stays as it is
                if self._streamed:
                    self._submission_read()
            elif kind is Event.JOBS_KILLED:  # each killed job's completion is told first
                notices.extend((Event.JOB_COMPLETED, (job_id, JobState.COMPLETED_KILLED)) for job_id in payload)
            elif kind is Event.DEFERRED_DECISIONS:
                self._apply(payload.decisions, now)
                continue
            notices.append((kind, payload))
        return notices

    def run(self) -> None:
        while self.step():
            pass
        self.end()

    def _submission_read(self) -> None:
        """A submission left the heap (a streaming engine reads the next job then)."""

    def end(self) -> None:
        if self._ended:
            return
        undecided = self.ledger.undecided()
        if undecided:
            raise SimulationError(
                f"the scheduler left {len(undecided)} job(s) undecided when no event was left "
                f"(first: {undecided[0]}); Batsim requires every job to be executed or rejected")
        self._ended = True
        self.driver.deliver([(Event.SIMULATION_ENDS, None)], self.now)

    @property
    def complete(self) -> bool:
        return self._ended

    # ------------------------------------------------------------------ decisions
    def _decide(self) -> None:
        decisions = self.driver.decide(self.now)
        if decisions:
            self._apply(decisions, self.now)

    def _apply(self, decisions: Sequence[Decision | Deferred], now: float) -> None:
        """One reply's decisions, in order."""
        appliers = self._appliers
        if self._reply_kills:
            self._reply_kills = set()
        for decision in decisions:
            self.nb_decisions += 1
            applier = appliers.get(type(decision))
            if applier is None:
                raise SimulationError(f"unknown decision {decision!r} at t={now!r}")
            applier(self, decision, now)

    def _reject(self, decision: Reject, now: float) -> None:
        self.ledger.reject(self.ledger.submitted(decision.job_id, "REJECT_JOB", now), decision.reason)

    def _call_me_later(self, decision: CallMeLater, now: float) -> None:
        if not decision.at_s > now:
            raise SimulationError(f"CALL_ME_LATER at t={decision.at_s!r} is not after now={now!r} "
                                  "(Batsim: 'You asked to be awaken in the past!')")
        self._push(decision.at_s, Event.REQUESTED_CALL, None)

    def _set_metadata(self, decision: SetMetadata, now: float) -> None:
        self.ledger.record(decision.job_id, "SET_JOB_METADATA", now).metadata = decision.metadata

    def _defer(self, decision: Deferred, now: float) -> None:
        if decision.at_s < now:
            raise SimulationError(f"decisions timestamped {decision.at_s!r}, before now={now!r}")
        self._push(decision.at_s, Event.DEFERRED_DECISIONS, decision)

    def _execute(self, decision: Execute, now: float) -> None:
        record = self.records.get(decision.job_id)
        if record is None or record.state is not JobState.SUBMITTED:
            record = self.ledger.submitted(decision.job_id, "EXECUTE_JOB", now)  # raises the precise error
        self.ledger.start(record, decision.alloc, now)
        job = record.job
        profile = self.workload.profiles[job.profile]
        delay = profile.replay_delay_s
        if job.walltime_s is not None and delay >= job.walltime_s:
            runtime, record.final_on_completion = job.walltime_s, JobState.COMPLETED_WALLTIME_REACHED
        else:
            runtime, record.final_on_completion = delay, profile.state_in_time
        self._push(now + runtime, Event.JOB_COMPLETED, record)

    def _kill(self, decision: Kill, now: float) -> None:
        """Batsim's rule (JobLedger.to_kill): the end of every job that ended before this reply has
        been sent with the request it answers, so Batsim has forgotten it; a job this same reply
        killed already is ignored, as Batsim ignores a repeated kill."""
        killed = []
        asked = self._reply_kills
        for job_id in decision.job_ids:
            if job_id in asked:
                continue
            record = self.ledger.to_kill(job_id, now, forgotten=job_id in self.records
                                         and self.records[job_id].state.is_complete)
            if record.state is JobState.RUNNING:
                self.ledger.finish(record, JobState.COMPLETED_KILLED, now)
                killed.append(job_id)
                asked.add(job_id)
        # Batsim 4.2.1 answers a kill with JOB_COMPLETED(COMPLETED_KILLED) then JOB_KILLED.
        self._push(now, Event.JOBS_KILLED, killed)

    #: How each decision type takes effect (one table, keyed by type: no isinstance chains).
    _appliers: dict[type, Callable[[Engine, Any, float], None]] = {
        Execute: _execute, Reject: _reject, CallMeLater: _call_me_later, Kill: _kill,
        SetMetadata: _set_metadata, Deferred: _defer,
    }
