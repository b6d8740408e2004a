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

from typing import Any, ClassVar

from schedlab.model import Decision, Job
from schedlab.schedulers.base import register
from schedlab.schedulers.diws import (
    OPTION_ACTS_ONLY,
    OPTION_CHOICES,
    OPTION_HELP,
    TrainedOptions,
    compose_trained,
    plan_with_trained,
    trained_queue_order,
    with_trained_options,
)
from schedlab.schedulers.easy import EasyBackfilling
from schedlab.schedulers.predicted import predicting


@register("easy-predicted")
@predicting
class EasyPredicted(EasyBackfilling):
    """EASY (FCFS queue) whose plan uses a trained predictor's estimates: its point, or a chosen
    quantile of its distribution."""

    option_choices = OPTION_CHOICES
    option_help = OPTION_HELP
    option_acts_only = OPTION_ACTS_ONLY
    base_queue_order: ClassVar[str] = "fcfs"
    __init__ = plan_with_trained


@register("easy-prob")
@predicting
class ProbabilisticBackfilling(EasyBackfilling):
    """EASY whose backfilling admits a job that ends before the head's shadow time with
    probability >= p (its p-quantile does), or uses only the extra resources."""

    option_choices = OPTION_CHOICES
    option_help = {**OPTION_HELP,
                   "p": "the least probability, under the predictor's distribution, that a backfilled job ends "
                        "before the head's shadow time, in (0, 1) (a point predictor: its point decides)"}
    option_acts_only = OPTION_ACTS_ONLY

    @with_trained_options(learner="aft")
    def __init__(self, *, p: float = 0.9, **trained: Any) -> None:
        if not 0.0 < p < 1.0:
            raise ValueError(f"p must be in (0, 1), got {p}")
        options = TrainedOptions(**trained)
        super().__init__(queue_order=trained_queue_order("fcfs", options.aging_s))
        self._trained = compose_trained(self, options)
        self.p = float(p)
        self._backfill_s: dict[str, float] = {}  # each waiting job's p-quantile, as the plan takes it

    def decide(self, now: float) -> list[Decision]:
        trained = self._trained
        trained.refit_if_due(now)  # the model that predicts this instant's submissions, for both levels
        if self._arrivals:  # their p-quantiles, before the queue takes them (planned_duration_s reads them)
            jobs = [job for job, _ in self._arrivals]
            for job, level_s in zip(jobs, trained.quantiles_s(jobs, self.p).tolist(), strict=True):
                self._backfill_s[job.id] = trained.clipped_s(job, level_s)
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
