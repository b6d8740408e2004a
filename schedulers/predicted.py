"""A predictor's estimate (`predicted`): what DIWS, easy-predicted, easy-prob and easy-pp compose
into EASY (strategies.py; their corrections too).

- Each job is predicted at submission (all submissions of one instant in one batch, memoised per
  feature row: a model call costs milliseconds and real workloads repeat requests), plus
  `margin_min` minutes, clipped to [1 s, walltime]: the prediction is the job's planning estimate;
  the walltime stays the kill time.
- Online learners see a job's run time when it ends (`finished`), and only then.
- `quantile` (0.5 by default): with a predictor of distributions (predictors/distribution.py), the
  level of each job's distribution the plan uses (0.9: a pessimistic plan); a point predictor's
  every quantile is its point. `quantiles_s(jobs, level)` gives other levels (probabilistic
  backfilling tests candidates by one).
- Refits (the DIWS family's learners, easy-pp's AdaBoost) keep the jobs that ended and are not
  learned yet, and the next refit time of a periodic one (`due_refit_s`); subclasses refit.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from schedlab.abilities import FromEstimate
from schedlab.model import Job, JobState
from schedlab.schedulers.queue import QueueScheduler, Running
from schedlab.schedulers.strategies import Estimate, estimate_kind


@estimate_kind("predicted")
class PredictedEstimate(Estimate):
    """A predictor's (predictors.runtime's Predictor: `predict_jobs`, and `learn_request` when
    `online`) estimate; subclasses set `_predictor` in `prepare()` or override `predict_runtimes_s`."""

    per_job_records: ClassVar[tuple[str, ...]] = ("predicted_s", "recorded_quantiles_s")
    scheduler: QueueScheduler  # the one it serves: its predict_runtimes_s is the extension point

    def __init__(self, *, margin_min: float = 0.0, quantile: float = 0.5) -> None:
        if not 0.0 < quantile < 1.0:
            raise ValueError(f"quantile must be in (0, 1), got {quantile}")
        self.quantile = float(quantile)
        self.margin_min = float(margin_min)
        #: whether the predictor learns from each job that ends (`learn_request`: user-last2)
        self.online = False
        #: levels whose quantiles a distribution predictor's jobs get recorded at submission
        #: (`recorded_quantiles_s`), for reports of calibration (a campaign sets them); empty: none
        self.recorded_levels: tuple[float, ...] = ()
        self.recorded_quantiles_s: dict[str, list[float]] = {}
        self._predictor: Any = None
        self.predicted_s: dict[str, float] = {}
        self._memo: dict[tuple[Any, ...], float] = {}
        self._level_memos: dict[float, dict[tuple[Any, ...], float]] = {}  # quantiles_s's, per level
        # online refits: the jobs that ended and are not learned yet (end time, job, run time), and the
        # next refit time of a periodic one
        self._ended: list[tuple[float, Job, float]] = []
        self._next_refit_s: float | None = None
        self.train_last = 0  # the window of those refits (`set_window`)
        self.refits = 0

    def set_window(self, train_last: int) -> None:
        """An online learner's `train_last`: each refit learns the last N ended jobs (0: all)."""
        if train_last < 0 or train_last == 1:
            raise ValueError(f"train_last must be 0 (every completed job) or at least 2 jobs, got {train_last}")
        self.train_last = int(train_last)

    def keep_window(self, *learned: list[Any]) -> None:
        """Drop from the learned columns what fell out of the window: it is never learned again."""
        if self.train_last:
            for values in learned:
                del values[:-self.train_last]

    @property
    def predictions_s(self) -> dict[str, float]:
        return dict(self.predicted_s)

    # ------------------------------------------------------------------ predictions
    def predict_runtimes_s(self, jobs: list[Job]) -> np.ndarray:
        """Jobs whose features are equal get one model call (memoised until the predictor learns)."""
        from schedlab.predictors.features import job_values

        predictor = self._predictor
        if predictor.reads_requests_only:  # a baseline: cheaper than the memo
            return predictor.predict_jobs(jobs)
        if self.quantile != 0.5 and hasattr(predictor, "quantile_rows"):
            return self.quantiles_s(jobs, self.quantile)
        return _memoised(self._memo, [tuple(job_values(job, predictor.columns_)) for job in jobs],
                         predictor.predict_rows)

    def quantiles_s(self, jobs: list[Job], level: float) -> np.ndarray:
        """Each job's run time `level`-quantile: a distribution predictor's (memoised per feature row
        and level), a point predictor's point (with `margin_min` and the clip of the plan's estimate
        applied by the caller)."""
        from schedlab.predictors.features import job_values

        predictor = self._predictor
        if not hasattr(predictor, "quantile_rows"):  # a point: every level is it
            return self.scheduler.predict_runtimes_s(jobs)
        return _memoised(self._level_memos.setdefault(level, {}),
                         [tuple(job_values(job, predictor.columns_)) for job in jobs],
                         lambda rows: predictor.quantile_rows(rows, level))

    def forget_predictions(self) -> None:
        """The predictor changed (it learned): later submissions are predicted afresh."""
        self._memo.clear()
        self._level_memos.clear()

    def arrived(self, jobs: list[Job], predicted_s: list[float]) -> None:
        for job, predicted in zip(jobs, predicted_s, strict=True):
            self.predicted_s[job.id] = self.clipped_s(job, predicted)
        if self.recorded_levels and hasattr(self._predictor, "quantile_rows"):
            levels = [self.quantiles_s(jobs, level).tolist() for level in self.recorded_levels]
            for index, job in enumerate(jobs):
                self.recorded_quantiles_s[job.id] = [values[index] for values in levels]

    def estimate_s(self, job: Job) -> float:
        """The prediction (a waiting job is ordered and tried for backfilling by it; the limit a
        correction settles at its start is the running job's planned duration)."""
        return self.predicted_s[job.id]

    def clipped_s(self, job: Job, predicted_s: float) -> float:
        """A prediction as the plan takes it: + margin_min, within [1 s, walltime] (an unknown
        prediction: the walltime)."""
        limit = math.inf if job.walltime_s is None else job.walltime_s
        value = predicted_s + 60.0 * self.margin_min if math.isfinite(predicted_s) else limit
        return min(max(value, 1.0), limit)

    # ------------------------------------------------------------------ learning
    def finished(self, running: Running, state: JobState, now: float) -> None:
        if self.online:
            from schedlab.predictors.features import user_and_limit

            self._predictor.learn_request(user_and_limit(running.job)[0], now - running.start_s)
            self.forget_predictions()

    def due_refit_s(self, now: float, period_s: float) -> float | None:
        """The refit a decision at `now` must make, every `period_s` of simulated time from the first
        decision: the last refit time passed (its model fits what had ended by then, so predictions
        depend on simulated time only, not on when decisions happen), or None."""
        if self._next_refit_s is None:
            self._next_refit_s = now + period_s
            return None
        if now < self._next_refit_s:
            return None
        while self._next_refit_s + period_s <= now:
            self._next_refit_s += period_s
        at_s, self._next_refit_s = self._next_refit_s, self._next_refit_s + period_s
        return at_s


def _memoised(memo: dict[tuple[Any, ...], float], keys: list[tuple[Any, ...]], predict: Any) -> np.ndarray:
    """Predictions for feature rows, each distinct row asked of `predict` once while `memo` lives."""
    unseen = list(dict.fromkeys(key for key in keys if key not in memo))
    if unseen:
        memo.update(zip(unseen, predict(unseen).tolist(), strict=True))
    return np.array([memo[key] for key in keys], dtype=float)


def predicting(cls: type[QueueScheduler]) -> type[QueueScheduler]:
    """Class decorator of a scheduler that composes a PredictedEstimate (diws, easy-predicted,
    easy-prob, easy-pp): what reports read of its estimate (`predictions_s`, `recorded_levels`,
    `recorded_quantiles_s`: schedlab.abilities) and what it costs."""
    for name in ("predictions_s", "recorded_levels", "recorded_quantiles_s"):
        ability = FromEstimate()
        ability.__set_name__(cls, name)
        setattr(cls, name, ability)
    cls.relative_cost = 2.0  # diws, easy-pp, easy-predicted, easy-prob with user-last2: about 2x
    cls.bytes_per_resource = 300  # diws, easy-pp: 235 bytes at 1,000,000 resources
    return cls
