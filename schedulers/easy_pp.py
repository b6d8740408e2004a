"""`easy-pp`: EASY planned with predicted run times that are corrected while jobs run: EASY++
(Tsafrir, Etsion, Feitelson 2007) and the scenarios of the COARE walltime study.

- `predictor`: `user-last2` (EASY++: the mean of the user's last two completed run times, capped by
  the walltime; the walltime until two are known), `adaboost` (AdaBoost.R2 of depth-3 trees on the
  user, requested CPUs, memory and walltime; refitted every `refit_s` of simulated time on the jobs
  completed so far, or on the last `train_last` of them, the walltime until the first fit; or
  `model=PATH`, trained offline on an earlier part of the trace), `default:SECONDS` (a fixed
  prediction, e.g. `default:600`: correction only), `walltime` (no prediction).
- `correction`: `none`, `simple` (+1 h), `power` (+15, 30, 60 ... min), `tsafrir` (EASY++'s ladder),
  `walltime`; each fires 60 s before the current limit (predictors/corrections.py).
- `backfill`: `fcfs` (candidates in queue order, the closest to Slurm's priority-order backfill) or
  `sjbf` (shortest predicted first: Tsafrir's EASY++).

Predictions and corrections change the planning estimate only: the walltime stays the kill time, so
no job is killed before it. Memory requests are features, never limits: a Batsim platform cannot
express memory.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any, Literal

import numpy as np

from schedlab.model import Job, JobState
from schedlab.schedulers.base import register
from schedlab.schedulers.easy import EasyBackfilling
from schedlab.schedulers.predicted import PredictedEstimate, predicting
from schedlab.schedulers.queue import Running
from schedlab.schedulers.strategies import estimate_kind, make_correction

PREDICTORS = ("user-last2", "adaboost", "walltime", "default:SECONDS")
FEATURES = "coare"  # adaboost's inputs: user, requested CPUs, memory and walltime


def _default_seconds(predictor: str) -> float | None:
    """The seconds of `default:SECONDS`, None for the other predictors."""
    if not predictor.startswith("default:"):
        return None
    try:
        seconds = float(predictor.split(":", 1)[1])
    except ValueError:
        seconds = math.nan
    if not seconds > 0 or not math.isfinite(seconds):
        raise ValueError(f"predictor default:SECONDS needs a number of seconds > 0, got {predictor!r}")
    return seconds


@estimate_kind("easy-pp")
class EasyPPEstimate(PredictedEstimate):
    """EASY++'s and the COARE study's predictions: `user-last2`, `adaboost` (refitted online every
    `refit_s`, or `model=` trained offline), `walltime`, `default:SECONDS`."""

    def __init__(self, *, predictor: str, model: str, refit_s: float, seed: int, train_last: int) -> None:
        super().__init__()
        self._default_s = _default_seconds(predictor)
        if self._default_s is None and predictor not in ("user-last2", "adaboost", "walltime"):
            raise ValueError(f"predictor must be one of {', '.join(PREDICTORS)}, got {predictor!r}")
        if model and predictor != "adaboost":
            raise ValueError("model=PATH is an offline-trained predictor: give it with predictor=adaboost")
        if not refit_s > 0:
            raise ValueError(f"refit_s must be > 0, got {refit_s}")
        self.set_window(train_last)
        self.predictor, self.model, self.refit_s, self.seed = predictor, model, refit_s, seed
        self.online = predictor == "user-last2"
        # adaboost: the ended jobs' feature rows (each read once) and run times, once learned from
        self._learned_rows: list[list[Any]] = []
        self._learned_runtimes_s: list[float] = []

    def check_inputs(self, workload: Any) -> None:
        """A model whose card does not show training data ending before the workload: refused."""
        if self.model:
            from schedlab.predictors.training import refuse_look_ahead_model

            refuse_look_ahead_model(self.model, workload)

    def prepare(self) -> None:
        if self._predictor is not None:
            return
        from schedlab.predictors.runtime import empty_baseline, load

        if self.model:
            self._predictor = load(self.model)[0]
            if self._predictor.model != "adaboost":
                from schedlab.errors import InputError

                raise InputError(f"holds a {self._predictor.model} model; predictor=adaboost needs an adaboost one "
                                 "(`schedlab predictor train --model adaboost --features coare`)", path=self.model)
        elif self.predictor in ("user-last2", "walltime"):
            self._predictor = empty_baseline(self.predictor, self.seed)
        else:  # adaboost before its first fit, and default:SECONDS (predicted here, see below)
            self._predictor = empty_baseline("walltime", self.seed)

    def predict_runtimes_s(self, jobs: list[Job]) -> np.ndarray:
        if self._default_s is not None:
            return np.full(len(jobs), self._default_s)
        return super().predict_runtimes_s(jobs)

    # ------------------------------------------------------------------ learning
    def finished(self, running: Running, state: JobState, now: float) -> None:
        super().finished(running, state, now)
        if self.predictor == "adaboost" and not self.model:
            self._ended.append((now, running.job, now - running.start_s))

    def refit_if_due(self, now: float) -> None:
        if self.predictor == "adaboost" and not self.model:
            at_s = self.due_refit_s(now, self.refit_s)
            if at_s is not None:
                self._refit(at_s)

    def _refit(self, at_s: float) -> None:
        """AdaBoost on the jobs completed before `at_s` (features known at their submission)."""
        import time

        from schedlab.predictors.features import get_feature_set, job_values, rows_table
        from schedlab.predictors.runtime import RuntimePredictor

        began = time.perf_counter()
        columns = list(get_feature_set(FEATURES).columns)
        # ended strictly before: a job ending at the refit time itself is learned next time, so the
        # model does not depend on whether its completion reaches us before or after a call
        count = bisect_left(self._ended, at_s, key=lambda ended: ended[0])  # in completion order
        self._learned_rows += [job_values(job, columns) for _, job, _ in self._ended[:count]]
        self._learned_runtimes_s += [runtime for _, _, runtime in self._ended[:count]]
        del self._ended[:count]
        self.keep_window(self._learned_rows, self._learned_runtimes_s)
        if len(self._learned_runtimes_s) < 2:
            return
        table = rows_table(self._learned_rows, columns)
        self._predictor = RuntimePredictor(features=FEATURES, model="adaboost", seed=self.seed).fit(
            table, self._learned_runtimes_s)
        self._predictor.compile()  # into plain lists for per-job predictions: part of the refit
        self.refits += 1
        self.forget_predictions()
        self.scheduler.training_time_s += time.perf_counter() - began


@register("easy-pp")
@predicting
class EasyPlusPlus(EasyBackfilling):
    """EASY with corrected run-time predictions in the plan (EASY++ and the COARE walltime study)."""

    option_choices = {"predictor": "user-last2 | adaboost | walltime | default:SECONDS", "model": "PATH.skops",
                      "refit_s": "SECONDS > 0", "train_last": "0 | JOBS >= 2"}
    option_help = {
        "predictor": "what plans a job's run time: the mean of the user's last two (EASY++), AdaBoost.R2 refitted "
                     "online, a fixed number of seconds, or the walltime",
        "correction": "what an underestimated job's prediction becomes when it is reached: +1 h (simple), "
                      "+15, 30, 60 ... min (power), EASY++'s ladder (tsafrir), the walltime, or none",
        "backfill": "backfilling candidates in queue order (fcfs, as Slurm) or shortest predicted first "
                    "(sjbf, EASY++)",
        "model": "an AdaBoost model saved by `schedlab predictor train --model adaboost`, trained offline on "
                 "an earlier part of the trace (empty: fitted online)",
        "refit_s": "simulated seconds between two online AdaBoost refits on the jobs completed so far "
                   "(604800, weekly: 7x fewer fits than daily, the same accuracy on COARE)",
        "seed": "the random seed of AdaBoost's fits (predictor=adaboost)",
        "train_last": "each AdaBoost refit learns from the last N completed jobs only (0: all of them, the study's "
                      "rule; a window bounds a long trace's memory and each refit's time)"}
    option_acts_only = {
        "model": (("predictor",), lambda o: o["predictor"] == "adaboost", "with predictor=adaboost"),
        **{key: (("predictor", "model"), lambda o: o["predictor"] == "adaboost" and not o["model"],
                 "with predictor=adaboost fitted online (no model=)") for key in ("refit_s", "seed", "train_last")}}


    def __init__(self, *, predictor: str = "user-last2",
                 correction: Literal["none", "simple", "power", "tsafrir", "walltime"] = "simple",
                 backfill: Literal["fcfs", "sjbf"] = "fcfs", model: str = "", refit_s: float = 86400.0,
                 seed: int = 0, train_last: int = 0) -> None:
        estimate = EasyPPEstimate(predictor=predictor, model=model, refit_s=refit_s, seed=seed, train_last=train_last)
        super().__init__(backfill_order="queue" if backfill == "fcfs" else "sjbf")
        self.compose(estimate=estimate, correction=make_correction(correction))
        self.predictor, self.correction, self.backfill, self.model = predictor, correction, backfill, model
        self.refit_s, self.seed, self.train_last = refit_s, seed, int(train_last)
