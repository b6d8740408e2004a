"""DIWS, the Duration-Informed Workload Scheduler (Loreti, Leone, Borghesi 2026): EASY backfilling
whose queue is sorted by predicted run time, shortest first, and whose plan uses the predictions.

The predictor is trained once, before the simulation (step 1 of the study's algorithm), from a
history workload (`history=PATH`, cached by content hash), or loaded (`model=PATH`). Each job is
predicted at submission (submissions of one instant in one batch), plus `margin_min` minutes
(default 0: the study's +60 min was an analysis, its scheduler did not use it), clipped to [1 s,
walltime] (the study is silent; documented). The kill time stays the workload walltime (in the study no job
was killed early). A job still running past its prediction is replanned to its walltime end
(`overrun=walltime`, the estimate API of QueueScheduler); ties in the queue go by submit time then
submission order.

`learner=user-last2` (EASY++'s predictor) also learns online: each job that ends adds its run time
to its user's history (the only moment a run time is known); it needs no history file (walltimes
until a user has completed jobs) and starts from one when given.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

from schedlab.model import Decision, Job, Platform
from schedlab.schedulers.base import register
from schedlab.schedulers.easy import EasyBackfilling


@register("diws")
class DIWS(EasyBackfilling):
    """DIWS: EASY backfilling with the queue in predicted-run-time order and predictions in the plan."""

    def __init__(self, *, model: str = "", history: str = "", features: Literal["diws", "diws-aug"] = "diws",
                 learner: Literal["dt", "rf", "gb", "gb-xgb", "nn", "user-last2", "walltime"] = "dt",
                 seed: int = 0, margin_min: float = 0.0) -> None:
        super().__init__(queue_order="spt")
        self.model, self.history, self.features, self.learner, self.seed = model, history, features, learner, seed
        self.margin_min = float(margin_min)  # minutes added to every prediction (the study's "safe" +60 analysis)
        if model and history:
            raise ValueError("give model=PATH (a saved predictor) or history=PATH (a workload to train on), not both")
        baseline = learner in ("user-last2", "walltime")
        if not (model or history or baseline) and type(self).predict_runtimes_s is DIWS.predict_runtimes_s:
            raise ValueError("give model=PATH (a saved predictor) or history=PATH (a workload to train on); "
                             "learner=user-last2 or walltime need neither")
        self._predictor: Any = None
        self._predicted_s: dict[str, float] = {}
        self._arrivals: list[tuple[Job, float]] = []
        self._memo: dict[tuple[Any, ...], float] = {}

    def options(self) -> dict[str, Any]:
        return {**super().options(), "model": self.model, "history": self.history, "features": self.features,
                "learner": self.learner, "seed": self.seed, "margin_min": self.margin_min}

    # ------------------------------------------------------------------ the predictor
    def prepare(self) -> None:
        if self._predictor is None and (self.model or self.history):
            self._predictor = self._load_or_train()
        elif self._predictor is None and self.learner in ("user-last2", "walltime"):
            import pandas as pd

            from schedlab.predictors.runtime import RuntimePredictor

            empty = pd.DataFrame({"user": pd.Series([], dtype=object), "time_limit": pd.Series([], dtype=float)})
            self._predictor = RuntimePredictor(model=self.learner, seed=self.seed).fit(empty, [])

    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self.prepare()

    def _load_or_train(self):
        from schedlab.predictors.runtime import data_hash, load, save
        from schedlab.predictors.training import train

        if self.model:
            return load(self.model)[0]
        import sklearn

        from schedlab import __version__

        key = (f"{data_hash(self.history)[:20]}-{self.features}-{self.learner}-{self.seed}-"
               f"{__version__}-{sklearn.__version__}")
        default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schedlab"
        cache = Path(os.environ.get("SCHEDLAB_CACHE") or default) / "models" / f"{key}.skops"
        if cache.is_file():
            return load(cache)[0]
        predictor, card = train(self.history, features=self.features, model=self.learner, split="none",
                                seed=self.seed)
        cache.parent.mkdir(parents=True, exist_ok=True)
        save(predictor, cache, card)
        return predictor

    def predict_runtimes_s(self, jobs: list[Job]) -> np.ndarray:
        """Predicted run times of jobs submitted at one instant (extension point: an oracle in tests,
        another model elsewhere). Jobs with identical requests get one model call (memoised: a
        model call costs milliseconds, and real workloads repeat requests a lot)."""
        from schedlab.predictors.features import SOURCES, job_table, request_key

        keys = [request_key(job) for job in jobs]
        unseen = {key: job for key, job in zip(keys, jobs, strict=True) if key not in self._memo}
        if unseen:
            predicted = self._predictor.predict(job_table(list(unseen.values()), SOURCES))
            self._memo.update(zip(unseen, predicted.tolist(), strict=True))
        return np.array([self._memo[key] for key in keys], dtype=float)

    # ------------------------------------------------------------------ hooks
    def job_finished(self, running, state, now: float) -> None:
        """Online learners see a run time here, and only here (it ended: it is known)."""
        if getattr(self._predictor, "model", None) == "user-last2":
            from schedlab.predictors.features import SOURCES, job_table

            self._predictor.partial_fit(job_table([running.job], SOURCES), [now - running.start_s])
            self._memo.clear()

    def on_job_submitted(self, job: Job, now: float) -> None:
        self._arrivals.append((job, now))  # predicted together in decide

    def estimate_s(self, job: Job) -> float:
        return self._predicted_s[job.id]

    def decide(self, now: float) -> list[Decision]:
        if self._arrivals:
            arrivals, self._arrivals = self._arrivals, []
            predictions = self.predict_runtimes_s([job for job, _ in arrivals])
            for (job, submitted), predicted in zip(arrivals, predictions, strict=True):
                limit = math.inf if job.walltime_s is None else job.walltime_s
                value = float(predicted) + 60.0 * self.margin_min if math.isfinite(predicted) else limit
                self._predicted_s[job.id] = min(max(value, 1.0), limit)
                super().on_job_submitted(job, submitted)
        return super().decide(now)
