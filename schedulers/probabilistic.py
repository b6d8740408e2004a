"""EASY planned with a trained predictor (`easy-predicted`), and probabilistic backfilling
(`easy-prob`), after Nissimov & Feitelson's probabilistic backfilling.

Both keep EASY's FCFS queue and take DIWS's predictor options (`model=PATH` or `history=PATH`
with `learner=`, look-ahead checks, `overrun` corrections, `quantile`): DIWS is the same machinery
with a shortest-predicted-first queue.

`easy-prob` backfills a waiting job when the predicted probability that it does not delay the
head's reservation is at least `p`: it fits now and either uses only the resources the head does
not need at its shadow time, or ends before the shadow time with probability >= p, that is when
its run time's p-quantile (from the predictor's distribution: `quantile-xgb`, `aft`, `aft-naive`)
ends before the shadow time. The plan holds a started job for its `quantile`-level estimate (the
median by default), which may end after the shadow time: with p < 1 the head is delayed with a
probability up to 1 - p per backfilled job, the trade the method makes. With a point predictor
every quantile is the point, so `easy-prob` is EASY planning with that point (`easy-predicted`),
and with `learner=walltime` it is EASY itself.
"""

from __future__ import annotations

from typing import Any, Literal

from schedlab.model import Decision, Job
from schedlab.schedulers.base import register
from schedlab.schedulers.diws import DIWS, Learner


@register("easy-predicted")
class EasyPredicted(DIWS):
    """EASY (FCFS queue) whose plan uses a trained predictor's estimates: its point, or a chosen
    quantile of its distribution."""

    base_queue_order = "fcfs"


@register("easy-prob")
class ProbabilisticBackfilling(EasyPredicted):
    """EASY whose backfilling admits a job that ends before the head's shadow time with
    probability >= p (its p-quantile does), or uses only the extra resources."""

    option_help = {"p": "the least probability, under the predictor's distribution, that a backfilled job ends "
                        "before the head's shadow time, in (0, 1) (a point predictor: its point decides)"}

    def __init__(self, *, model: str = "", history: str = "", features: Literal["diws", "diws-aug"] = "diws",
                 learner: Learner = "aft",
                 seed: int = 0, margin_min: float = 0.0,
                 overrun: Literal["walltime", "simple", "power", "tsafrir"] = "walltime",
                 allow_overlap: bool = False, aging_s: float = 0.0, quantile: float = 0.5, refit_s: float = 0.0,
                 refit_jobs: int = 0, oracle: str = "", train_last: int = 0, p: float = 0.9) -> None:
        if not 0.0 < p < 1.0:
            raise ValueError(f"p must be in (0, 1), got {p}")
        super().__init__(model=model, history=history, features=features, learner=learner, seed=seed,
                         margin_min=margin_min, overrun=overrun, allow_overlap=allow_overlap, aging_s=aging_s,
                         quantile=quantile, refit_s=refit_s, refit_jobs=refit_jobs, oracle=oracle,
                         train_last=train_last)
        self.p = float(p)
        self._backfill_s: dict[str, float] = {}  # each waiting job's p-quantile, as the plan takes it

    def decide(self, now: float) -> list[Decision]:
        self.refit_if_due(now)  # the model that predicts this instant's submissions, for both levels
        if self._arrivals:  # their p-quantiles, before the queue takes them (planned_duration_s reads them)
            jobs = [job for job, _ in self._arrivals]
            for job, level_s in zip(jobs, self.quantiles_s(jobs, self.p).tolist(), strict=True):
                self._backfill_s[job.id] = self.clipped_s(job, level_s)
        return super().decide(now)

    def planned_duration_s(self, job: Job, estimate_s: float) -> float:
        """What the backfilling test holds a waiting job for: its p-quantile (EASY's test then asks
        whether P(it ends before the shadow time) >= p), as a correction (`overrun`) settles it at
        a start, like any planned duration."""
        return super().planned_duration_s(job, self._backfill_s.get(job.id, estimate_s))

    def _start(self, job: Job, now: float, decisions: list[Decision], estimate_s: float | None = None,
               alloc: Any = None) -> None:
        self._backfill_s.pop(job.id, None)
        super()._start(job, now, decisions, estimate_s, alloc)
