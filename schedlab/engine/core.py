"""The embedded engine: a discrete-event simulation of Batsim 4.2.1's semantics for delay profiles.

SimPy-like: a heap of (time, priority, seq, event); `step()` handles every event of the next instant,
tells the scheduler through its hooks, asks `decide(now)` once and applies the decisions; `run()`
repeats until nothing is left. Decisions take effect at the instant they are made (zero latency:
real Batsim adds ~60 us of simulated messaging per decision, see docs/design.md). A delay job runs
`delay` seconds, or is killed at its walltime (COMPLETED_WALLTIME_REACHED) when delay >= walltime.
Illegal decisions raise SimulationError, as Batsim aborts on them.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from procset import ProcSet

from schedlab.errors import SimulationError, UnsupportedProfileError
from schedlab.model import (
    CallMeLater,
    Decision,
    Deferred,
    Execute,
    Job,
    JobState,
    Kill,
    Platform,
    Reject,
    SetMetadata,
)
from schedlab.resources import ResourceMask
from schedlab.workload import Workload


class EventKind(IntEnum):
    """Event kinds; the value orders events of one instant (Batsim reports completions first)."""

    DEFERRED_DECISIONS = 0
    JOB_COMPLETED = 1
    JOBS_KILLED = 2
    JOB_SUBMITTED = 3
    NO_MORE_JOBS = 4
    REQUESTED_CALL = 5


@dataclass(slots=True)
class JobRecord:
    """What happened to one job (one row of jobs.csv)."""

    job: Job
    state: JobState = JobState.NOT_SUBMITTED
    start_s: float | None = None
    finish_s: float | None = None
    alloc: ProcSet | None = None
    metadata: str = ""
    final_on_completion: JobState = JobState.COMPLETED_SUCCESSFULLY


class Engine:
    """Simulates `workload` on `platform` driven by `scheduler` (anything with the Scheduler hooks)."""

    timing = "ideal"  # zero message latency (batsim_timed.BatsimTimedEngine: Batsim's)

    def __init__(self, platform: Platform, workload: Workload, scheduler: Any, *,
                 progress: Callable[[int], None] | None = None) -> None:
        self.check_workload(workload)
        self.platform = platform
        self.workload = workload
        self.scheduler = scheduler
        self.now = 0.0
        self.records: dict[str, JobRecord] = {job.id: JobRecord(job) for job in workload.jobs}
        self.finished: list[str] = []  # completion (or rejection) order: the row order of jobs.csv
        self.scheduling_time_s = 0.0
        self.nb_decisions = 0
        self.nb_steps = 0
        self._resources = ResourceMask(platform.nb_resources)
        self._heap: list[tuple[float, EventKind, int, Any]] = []  # (time, kind = priority, seq, payload)
        self._seq = 0
        self._progress = progress
        self._started = False
        self._ended = False
        for job in workload.jobs:
            self._push(job.submit_time_s, EventKind.JOB_SUBMITTED, job)
        if workload.jobs:
            self._push(workload.jobs[-1].submit_time_s, EventKind.NO_MORE_JOBS, None)

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
    def _push(self, at_s: float, kind: EventKind, payload: Any) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at_s, kind, self._seq, payload))

    def _timed(self, fn: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.scheduling_time_s += time.perf_counter() - t0

    def start(self) -> None:
        """SIMULATION_BEGINS at t=0 (the scheduler may already decide, e.g. ask for a call)."""
        if self._started:
            return
        self._started = True
        prepare = getattr(self.scheduler, "prepare", None)
        if prepare is not None:  # model loading or training: not scheduling time
            prepare()
        self._timed(self.scheduler.on_simulation_begins, self.platform, 0.0)
        self._decide()

    def step(self) -> bool:
        """Handle every event of the next instant; False when nothing is left."""
        if not self._started:
            self.start()
        heap = self._heap
        if not heap:
            return False
        now = heap[0][0]
        self.now = now
        self.nb_steps += 1
        # 1. the engine's own state changes for the whole instant
        notices: list[tuple[EventKind, Any]] = []
        pop = heapq.heappop
        while heap and heap[0][0] == now:
            _, kind, _, payload = pop(heap)
            if kind is EventKind.JOB_COMPLETED:
                if payload.state is not JobState.RUNNING:
                    continue  # killed earlier: this end is stale
                self._finish(payload, payload.final_on_completion, now)
            elif kind is EventKind.JOB_SUBMITTED:
                self.records[payload.id].state = JobState.SUBMITTED
            elif kind is EventKind.DEFERRED_DECISIONS:
                self._apply(payload.decisions, now)
                continue
            notices.append((kind, payload))
        # 2. the scheduler hears about all of it, then decides once (timed together)
        if notices:
            scheduler = self.scheduler
            t0 = time.perf_counter()
            for kind, payload in notices:
                if kind is EventKind.JOB_COMPLETED:
                    scheduler.on_job_completed(payload.job.id, payload.state, now)
                elif kind is EventKind.JOB_SUBMITTED:
                    scheduler.on_job_submitted(payload, now)
                elif kind is EventKind.JOBS_KILLED:
                    for job_id in payload:
                        scheduler.on_job_completed(job_id, JobState.COMPLETED_KILLED, now)
                    scheduler.on_jobs_killed(tuple(payload), now)
                elif kind is EventKind.NO_MORE_JOBS:
                    scheduler.on_no_more_jobs(now)
                else:
                    scheduler.on_requested_call(now)
            decisions = scheduler.decide(now)
            self.scheduling_time_s += time.perf_counter() - t0
            if decisions:
                self._apply(decisions, now)
        if self._progress is not None:
            self._progress(len(self.finished))
        return True

    def run(self) -> None:
        while self.step():
            pass
        self.end()

    def end(self) -> None:
        if self._ended:
            return
        undecided = [r.job.id for r in self.records.values() if r.state is JobState.SUBMITTED]
        if undecided:
            raise SimulationError(
                f"the scheduler left {len(undecided)} job(s) undecided when no event was left "
                f"(first: {undecided[0]}); Batsim requires every job to be executed or rejected")
        self._ended = True
        self._timed(self.scheduler.on_simulation_ends, self.now)

    @property
    def complete(self) -> bool:
        return self._ended

    # ------------------------------------------------------------------ decisions
    def _decide(self) -> None:
        decisions = self._timed(self.scheduler.decide, self.now)
        if decisions:
            self._apply(decisions, self.now)

    def _apply(self, decisions: Sequence[Decision | Deferred], now: float) -> None:
        appliers = self._appliers
        for decision in decisions:
            self.nb_decisions += 1
            applier = appliers.get(type(decision))
            if applier is None:
                raise SimulationError(f"unknown decision {decision!r} at t={now!r}")
            applier(self, decision, now)

    def _reject(self, decision: Reject, now: float) -> None:
        record = self._submitted(decision.job_id, "REJECT_JOB", now)
        record.state = JobState.REJECTED
        if decision.reason and not record.metadata:
            record.metadata = decision.reason
        self.finished.append(record.job.id)

    def _call_me_later(self, decision: CallMeLater, now: float) -> None:
        if not decision.at_s > now:
            raise SimulationError(f"CALL_ME_LATER at t={decision.at_s!r} is not after now={now!r} "
                                  "(Batsim: 'You asked to be awaken in the past!')")
        self._push(decision.at_s, EventKind.REQUESTED_CALL, None)

    def _set_metadata(self, decision: SetMetadata, now: float) -> None:
        self._record(decision.job_id, "SET_JOB_METADATA", now).metadata = decision.metadata

    def _defer(self, decision: Deferred, now: float) -> None:
        if decision.at_s < now:
            raise SimulationError(f"decisions timestamped {decision.at_s!r}, before now={now!r}")
        self._push(decision.at_s, EventKind.DEFERRED_DECISIONS, decision)

    def _record(self, job_id: str, what: str, now: float) -> JobRecord:
        record = self.records.get(job_id)
        if record is None:
            raise SimulationError(f"{what} for unknown job '{job_id}' at t={now!r}")
        return record

    def _submitted(self, job_id: str, what: str, now: float) -> JobRecord:
        record = self._record(job_id, what, now)
        if record.state is not JobState.SUBMITTED:
            raise SimulationError(f"{what} for job '{job_id}' at t={now!r}, but it is "
                                  f"{record.state.value} (each job is decided exactly once, after its "
                                  "submission)")
        return record

    def _execute(self, decision: Execute, now: float) -> None:
        record = self.records.get(decision.job_id)
        if record is None or record.state is not JobState.SUBMITTED:
            record = self._submitted(decision.job_id, "EXECUTE_JOB", now)  # raises the precise error
        job, alloc = record.job, decision.alloc
        self.check_allocation(self.platform, job, alloc, self._resources, now)
        record.state = JobState.RUNNING
        record.start_s = now
        record.alloc = alloc
        profile = self.workload.profiles[job.profile]
        delay = profile.delay_s
        if job.walltime_s is not None and delay >= job.walltime_s:
            runtime, record.final_on_completion = job.walltime_s, JobState.COMPLETED_WALLTIME_REACHED
        else:
            runtime, record.final_on_completion = delay, profile.state_in_time
        self._push(now + runtime, EventKind.JOB_COMPLETED, record)

    @staticmethod
    def check_allocation(platform: Platform, job: Job, alloc: ProcSet, resources: ResourceMask, now: float) -> None:
        """Take `alloc` for `job` in `resources`, or raise what Batsim would abort on."""
        size = len(alloc)
        if size != job.res:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: allocation '{alloc}' has "
                                  f"{size} resources, the job requests {job.res}")
        if alloc.min < 0 or alloc.max >= platform.nb_resources:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: allocation '{alloc}' is "
                                  f"outside resources 0-{platform.nb_resources - 1}")
        overlap = resources.take_if_free(alloc, size)
        if overlap is not None:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: resources '{overlap}' "
                                  "are already in use (compute sharing is disabled)")

    def _finish(self, record: JobRecord, state: JobState, now: float) -> None:
        record.state = state
        record.finish_s = now
        self._resources.release(record.alloc, record.job.res)
        self.finished.append(record.job.id)

    def _kill(self, decision: Kill, now: float) -> None:
        killed = []
        for job_id in decision.job_ids:
            record = self._record(job_id, "KILL_JOB", now)
            if record.state is JobState.RUNNING:
                self._finish(record, JobState.COMPLETED_KILLED, now)
                killed.append(job_id)
        # Batsim 4.2.1 answers a kill with JOB_COMPLETED(COMPLETED_KILLED) then JOB_KILLED.
        self._push(now, EventKind.JOBS_KILLED, killed)

    #: How each decision type takes effect (one table, keyed by type: no isinstance chains).
    _appliers: dict[type, Callable[[Engine, Any, float], None]] = {
        Execute: _execute, Reject: _reject, CallMeLater: _call_me_later, Kill: _kill,
        SetMetadata: _set_metadata, Deferred: _defer,
    }
