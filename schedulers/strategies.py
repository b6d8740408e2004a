"""Strategies a list scheduler composes (`QueueScheduler.compose`), each registered by name:

- an `Estimate`: what a job's run time is planned as (decided at its submission: the submissions of
  one instant together, at the decision) and what it learns when a job ends, the only moment a run
  time is known. Without one a job is planned for its walltime (QueueScheduler's own rule).
  `predicted` (predicted.PredictedEstimate) is a predictor's estimate; `trained` (diws.py) the
  DIWS family's learners, `easy-pp` (easy_pp.py) EASY++'s and the COARE study's.
- a `Correction`: what an underestimated running job's planned end becomes. `none` replans it to
  its walltime end once found past its estimate; the ladders `simple`, `power`, `tsafrir` and
  `walltime` (predictors/corrections.py) fire `LEAD_S` before the current limit and give the next
  one. The walltime stays the kill time whatever the strategies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from schedlab.model import Job, JobState
from schedlab.predictors.corrections import CORRECTIONS, LEAD_S, TOLERANCE_S, Limit, settle

if TYPE_CHECKING:
    import numpy as np
    from procset import ProcSet

    from schedlab.schedulers.interface import Scheduler


@dataclass(slots=True)
class Running:
    """A running job of a list scheduler's (queue.py keeps them; strategies read them)."""

    job: Job
    alloc: ProcSet
    start_s: float
    end_key: tuple[float, int, int]  # (estimated end, seq, res): its place in the sorted list of ends


class Estimate:
    """What a job's run time is planned as. Subclasses implement `predict_runtimes_s` and
    `arrived`, and register with `@estimate_kind`."""

    name: ClassVar[str] = ""
    #: dict attributes keyed by job id that reports read after the run (Scheduler.per_job_records)
    per_job_records: ClassVar[tuple[str, ...]] = ()
    scheduler: Scheduler

    def bind(self, scheduler: Scheduler) -> None:
        """The scheduler it serves (its training time is counted there)."""
        self.scheduler = scheduler

    def check_inputs(self, workload: Any) -> None:
        """The files its options name, checked against the simulated workload before any output."""

    def prepare(self) -> None:
        """Heavy set-up (a model loaded or trained), once, untimed."""

    def refit_if_due(self, now: float) -> None:
        """At each decision, before its submissions are estimated: the refit it owes."""

    def predict_runtimes_s(self, jobs: list[Job]) -> np.ndarray:
        """Run times of jobs submitted at one instant."""
        raise NotImplementedError

    def arrived(self, jobs: list[Job], predicted_s: list[float]) -> None:
        """The predictions of the jobs submitted at one instant, kept as their estimates."""
        raise NotImplementedError

    def estimate_s(self, job: Job) -> float:
        """A submitted job's planning estimate."""
        raise NotImplementedError

    @property
    def predictions_s(self) -> dict[str, float]:
        """Each submitted job's planning estimate as given at its submission (a copy)."""
        raise NotImplementedError

    def finished(self, running: Running, state: JobState, now: float) -> None:
        """A job of the scheduler's ended: its run time (`now - running.start_s`) is known."""

    def forget_job(self, job_id: str) -> None:
        """A streamed run: a job's report-only entries go once it ended."""
        for name in self.per_job_records:
            getattr(self, name).pop(job_id, None)


ESTIMATE_KINDS: dict[str, type[Estimate]] = {}


def estimate_kind(name: str) -> Callable[[type[Estimate]], type[Estimate]]:
    """Class decorator: an Estimate registered by `name`."""

    def wrap(cls: type[Estimate]) -> type[Estimate]:
        if name in ESTIMATE_KINDS and ESTIMATE_KINDS[name] is not cls:
            raise ValueError(f"estimate {name!r} is registered twice")
        cls.name = name
        ESTIMATE_KINDS[name] = cls
        return cls

    return wrap


class Correction:
    """What an underestimated running job's planned end becomes: here (`none`) its walltime end,
    once it is found running past its estimate."""

    name: ClassVar[str] = "none"
    #: how long before a planned end it is revised (a CALL_ME_LATER asks for then)
    revision_lead_s: float = 0.0

    def started(self, job: Job, estimate_s: float) -> float:
        """The duration the plan holds `job` for from its start."""
        return estimate_s

    def planned_duration_s(self, job: Job, estimate_s: float) -> float:
        """The duration the plan would hold a waiting job for if it started now."""
        return estimate_s

    def overrun_end_s(self, running: Running, now: float, latest_s: float) -> float:
        """The planned end of a job found running at its planned end (minus the lead); `latest_s`:
        its walltime end, the latest it can end."""
        return latest_s

    def finished(self, job_id: str) -> None:
        """A job ended: what was kept for it goes."""

    def corrections_of(self, job_id: str) -> int:
        """How many times a running job's limit was corrected."""
        return 0


class LimitCorrection(Correction):
    """A ladder of limits (predictors/corrections.py, `kind`): fires `LEAD_S` before the current
    limit; a limit that can grow no more (the 7-day cap below the walltime) gives way to the
    walltime end. The limit settled at the start (a prediction under 60 s fires at once) is what
    the plan holds, and what backfilling tests against the head's shadow time."""

    revision_lead_s = LEAD_S

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._limits: dict[str, Limit] = {}

    def _start_limit(self, job: Job, estimate_s: float) -> Limit:
        return settle(self.kind, Limit(estimate_s, estimate_s), 0.0, job.walltime_s)

    def started(self, job: Job, estimate_s: float) -> float:
        limit = self._limits[job.id] = self._start_limit(job, estimate_s)
        return limit.current_s

    def planned_duration_s(self, job: Job, estimate_s: float) -> float:
        return self._start_limit(job, estimate_s).current_s

    def overrun_end_s(self, running: Running, now: float, latest_s: float) -> float:
        limit = self._limits.get(running.job.id)
        if limit is None:  # started without a limit (not through the scheduler's _start)
            return latest_s
        settle(self.kind, limit, now - running.start_s, running.job.walltime_s)
        end = running.start_s + limit.current_s
        if end - LEAD_S <= now + TOLERANCE_S:  # at a cap (7 days) below the walltime: no later limit
            return latest_s
        return end

    def finished(self, job_id: str) -> None:
        self._limits.pop(job_id, None)

    def corrections_of(self, job_id: str) -> int:
        limit = self._limits.get(job_id)
        return 0 if limit is None else limit.firings


def _ladder(kind: str) -> Callable[[], Correction]:
    return lambda: LimitCorrection(kind)


#: correction name -> what makes it
CORRECTION_KINDS: dict[str, Callable[[], Correction]] = {
    name: Correction if name == "none" else _ladder(name) for name in CORRECTIONS}


def make_correction(name: str) -> Correction:
    """The correction a name gives (`none`, `simple`, `power`, `tsafrir`, `walltime`)."""
    if name not in CORRECTION_KINDS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTION_KINDS)}, got {name!r}")
    return CORRECTION_KINDS[name]()
