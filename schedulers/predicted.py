"""EASY planned with predicted run times: what DIWS and easy-pp (EASY++ and the COARE walltime
study) share.

- Each job is predicted at submission (all submissions of one instant in one batch, memoised per
  feature row: a model call costs milliseconds and real workloads repeat requests), plus `margin_min`
  minutes, clipped to [1 s, walltime]: the prediction is the job's planning estimate; the walltime
  stays the kill time.
- Online learners see a job's run time when it ends (`job_finished`), and only then.
- A running job due for revision gets a corrected limit (`correction`, predictors/corrections.py):
  with `none` it is replanned to its walltime end once found past its prediction; with the others
  the correction fires at limit - 60 s (a CALL_ME_LATER asks for that instant), and a limit that can
  grow no more (the 7-day cap below the walltime) gives way to the walltime end. Waiting jobs are
  ordered (SPT, SJBF) by their prediction; the limit settled at the start (a prediction under 60 s
  fires at once) is what the plan holds for a running job, and what backfilling tests against the
  head's shadow time (testing the shorter prediction would let a backfilled job delay the head).
- `quantile` (0.5 by default): with a predictor of distributions (predictors/distribution.py), the
  level of each job's distribution the plan uses (0.9: a pessimistic plan); a point predictor's
  every quantile is its point. `quantiles_s(jobs, level)` gives other levels (probabilistic
  backfilling tests candidates by one).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from schedlab.model import Decision, Job, JobState, Platform
from schedlab.predictors.corrections import CORRECTIONS, LEAD_S, TOLERANCE_S, Limit, settle
from schedlab.schedulers.easy import BackfillOrder, EasyBackfilling
from schedlab.schedulers.queue import Running


class PredictedEasy(EasyBackfilling):
    """EASY (count-based) whose plan uses predictions; subclasses set `_predictor` in `prepare()`
    (predictors.runtime's Predictor: `predict_jobs`, and `learn_request` when `online`) or override
    `predict_runtimes_s`."""

    #: whether the predictor learns from each job that ends (`learn_request`: user-last2)
    online = False
    #: levels whose quantiles a distribution predictor's jobs get recorded at submission
    #: (`recorded_quantiles_s`), for reports of calibration (a campaign sets them); empty: none
    recorded_levels: tuple[float, ...] = ()
    per_job_records: ClassVar[tuple[str, ...]] = ("_predicted_s", "recorded_quantiles_s")
    relative_cost: ClassVar[float] = 2.0  # diws, easy-pp, easy-predicted, easy-prob with user-last2: about 2x
    bytes_per_resource: ClassVar[int] = 300  # diws, easy-pp: 235 bytes at 1,000,000 resources

    def __init__(self, *, queue_order: Any = "fcfs", backfill_order: BackfillOrder = "queue", margin_min: float = 0.0,
                 correction: str = "none", quantile: float = 0.5) -> None:
        super().__init__(queue_order=queue_order, backfill_order=backfill_order)
        if correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
        if not 0.0 < quantile < 1.0:
            raise ValueError(f"quantile must be in (0, 1), got {quantile}")
        self.quantile = float(quantile)
        self.margin_min = float(margin_min)
        self.correction = correction
        self.revision_lead_s = 0.0 if correction == "none" else LEAD_S
        self._predictor: Any = None
        self._predicted_s: dict[str, float] = {}
        self._arrivals: list[tuple[Job, float]] = []
        self._memo: dict[tuple[Any, ...], float] = {}
        self._level_memos: dict[float, dict[tuple[Any, ...], float]] = {}  # quantiles_s's, per level
        self._limits: dict[str, Limit] = {}
        self.recorded_quantiles_s: dict[str, list[float]] = {}
        # online refits (easy-pp's AdaBoost, the DIWS family's learners): the jobs that ended and are
        # not learned yet (end time, job, run time), and the next refit time of a periodic one
        self._ended: list[tuple[float, Job, float]] = []
        self._next_refit_s: float | None = None
        self.train_last = 0  # the window of those refits (`_set_window`)

    def _set_window(self, train_last: int) -> None:
        """An online learner's `train_last`: each refit learns the last N ended jobs (0: all)."""
        if train_last < 0 or train_last == 1:
            raise ValueError(f"train_last must be 0 (every completed job) or at least 2 jobs, got {train_last}")
        self.train_last = int(train_last)

    def _keep_window(self, *learned: list[Any]) -> None:
        """Drop from the learned columns what fell out of the window: it is never learned again."""
        if self.train_last:
            for values in learned:
                del values[:-self.train_last]

    @property
    def predictions_s(self) -> dict[str, float]:
        """Each submitted job's planning estimate as predicted at submission (a copy)."""
        return dict(self._predicted_s)

    # ------------------------------------------------------------------ predictions
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self.prepare()

    def predict_runtimes_s(self, jobs: list[Job]) -> np.ndarray:
        """Predicted run times of jobs submitted at one instant (extension point). Jobs whose
        features are equal get one model call (memoised until the predictor learns)."""
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
            return self.predict_runtimes_s(jobs)
        return _memoised(self._level_memos.setdefault(level, {}),
                         [tuple(job_values(job, predictor.columns_)) for job in jobs],
                         lambda rows: predictor.quantile_rows(rows, level))

    def forget_predictions(self) -> None:
        """The predictor changed (it learned): later submissions are predicted afresh."""
        self._memo.clear()
        self._level_memos.clear()

    def job_finished(self, running: Running, state: JobState, now: float) -> None:
        super().job_finished(running, state, now)
        self._limits.pop(running.job.id, None)
        if self.online:
            from schedlab.predictors.features import user_and_limit

            self._predictor.learn_request(user_and_limit(running.job)[0], now - running.start_s)
            self.forget_predictions()

    def on_job_submitted(self, job: Job, now: float) -> None:
        self._arrivals.append((job, now))  # predicted together in decide

    def estimate_s(self, job: Job) -> float:
        """The prediction (a waiting job is ordered and tried for backfilling by it; the limit a
        correction settles at its start is the running job's planned duration)."""
        return self._predicted_s[job.id]

    def decide(self, now: float) -> list[Decision]:
        if self._arrivals:
            arrivals, self._arrivals = self._arrivals, []
            predictions = self.predict_runtimes_s([job for job, _ in arrivals])
            submit = super().on_job_submitted
            for (job, submitted), predicted in zip(arrivals, predictions.tolist(), strict=True):
                self._predicted_s[job.id] = self.clipped_s(job, predicted)
                submit(job, submitted)
            if self.recorded_levels and hasattr(self._predictor, "quantile_rows"):
                jobs = [job for job, _ in arrivals]
                levels = [self.quantiles_s(jobs, level).tolist() for level in self.recorded_levels]
                for index, job in enumerate(jobs):
                    self.recorded_quantiles_s[job.id] = [values[index] for values in levels]
        return super().decide(now)

    def clipped_s(self, job: Job, predicted_s: float) -> float:
        """A prediction as the plan takes it: + margin_min, within [1 s, walltime] (an unknown
        prediction: the walltime)."""
        limit = math.inf if job.walltime_s is None else job.walltime_s
        value = predicted_s + 60.0 * self.margin_min if math.isfinite(predicted_s) else limit
        return min(max(value, 1.0), limit)

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

    # ------------------------------------------------------------------ corrections
    def _start_limit(self, job: Job, estimate_s: float) -> Limit:
        """The limit a job starts with: a prediction within 60 s fires at once."""
        return settle(self.correction, Limit(estimate_s, estimate_s), 0.0, job.walltime_s)

    def planned_duration_s(self, job: Job, estimate_s: float) -> float:
        if self.correction == "none":
            return estimate_s
        return self._start_limit(job, estimate_s).current_s

    def _start(self, job: Job, now: float, decisions: list[Decision], estimate_s: float | None = None,
               alloc: Any = None) -> None:
        if self.correction != "none":
            predicted = self.estimate_s(job) if estimate_s is None else estimate_s
            limit = self._limits[job.id] = self._start_limit(job, predicted)
            estimate_s = limit.current_s
        super()._start(job, now, decisions, estimate_s, alloc)

    def overrun_end_s(self, running: Running, now: float) -> float:
        limit = self._limits.get(running.job.id)
        if limit is None:  # correction=none
            return super().overrun_end_s(running, now)
        settle(self.correction, limit, now - running.start_s, running.job.walltime_s)
        end = running.start_s + limit.current_s
        if end - LEAD_S <= now + TOLERANCE_S:  # at a cap (7 days) below the walltime: no later limit
            return super().overrun_end_s(running, now)  # its walltime end, the latest it can end
        return end

    def corrections_of(self, job_id: str) -> int:
        """How many times a running job's limit was corrected."""
        limit = self._limits.get(job_id)
        return 0 if limit is None else limit.firings


def _memoised(memo: dict[tuple[Any, ...], float], keys: list[tuple[Any, ...]], predict: Any) -> np.ndarray:
    """Predictions for feature rows, each distinct row asked of `predict` once while `memo` lives."""
    unseen = list(dict.fromkeys(key for key in keys if key not in memo))
    if unseen:
        memo.update(zip(unseen, predict(unseen).tolist(), strict=True))
    return np.array([memo[key] for key in keys], dtype=float)
