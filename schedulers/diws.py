"""DIWS, the Duration-Informed Workload Scheduler (Loreti, Leone, Borghesi 2026): EASY backfilling
whose queue is sorted by predicted run time, shortest first, and whose plan uses the predictions.

The predictor is trained once, before the simulation (step 1 of the study's algorithm), from a
history workload (`history=PATH`, cached by content hash), or loaded (`model=PATH`). Each job is
predicted at submission (submissions of one instant in one batch), plus `margin_min` minutes
(default 0: the study's +60 min was an analysis, its scheduler did not use it), clipped to [1 s,
walltime] (the study is silent; documented). The kill time stays the workload walltime (in the study no job
was killed early). A job still running past its prediction is replanned to its walltime end
(`overrun=walltime`, the estimate API of QueueScheduler) or corrected (`overrun=simple|power|
tsafrir`, predictors/corrections.py, firing 60 s before the limit); ties in the queue go by submit
time then submission order. The shared machinery is composed: `TrainedEstimate` here (a
PredictedEstimate, schedulers/predicted.py) and a correction (schedulers/strategies.py).

Shortest-predicted-first starves long jobs (a generated workload's max wait: 9.1e6 s under DIWS
against 5.0e5 s under EASY). `aging_s=SECONDS` (opt-in, default 0: the study's order) sends a job
that has waited that long before every younger one, FCFS among them (policies.aged).

`learner=user-last2` (EASY++'s predictor) also learns online: each job that ends adds its run time
to its user's history (the only moment a run time is known); it needs no history file (walltimes
until a user has completed jobs) and starts from one when given.

The online protocol for a trained learner (any of `predictor train`'s models, distributions
included): `refit_s=SECONDS` retrains it every that many simulated seconds, `refit_jobs=N` after
every N completions, on `history=` (if given) and the jobs completed before the refit (a job is
learned only once it has ended; features are what its submission told); walltimes until the first
fit without a history. A killed job's run time is its time limit: `aft` learns it as censored.

`learner=exact` with `oracle=WORKLOAD` (a campaign writes `@workload`) plans with the real run times:
the clairvoyant reference of a predictor study, an explicit input (schedulers/runtimes.py), never a
leak.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from bisect import bisect_left
from typing import Any, ClassVar, Literal

from schedlab.model import Job, JobState
from schedlab.schedulers.base import register
from schedlab.schedulers.easy import EasyBackfilling
from schedlab.schedulers.interface import option_bundle
from schedlab.schedulers.predicted import PredictedEstimate, predicting
from schedlab.schedulers.queue import QueueScheduler, Running
from schedlab.schedulers.strategies import estimate_kind, make_correction

#: what `learner=` names: every runtime model (predictors/models.py; tests/test_registries.py checks
#: they agree) and `exact`, the oracle's run times
Learner = Literal["dt", "rf", "gb", "gb-xgb", "adaboost", "nn", "user-last2", "walltime", "quantile-xgb", "aft",
                  "aft-naive", "exact"]


@dataclasses.dataclass(frozen=True)
class TrainedOptions:
    """The options of every scheduler planning with a trained learner (diws, easy-predicted,
    easy-prob): the bundle and its defaults, once."""

    model: str = ""
    history: str = ""
    features: Literal["diws", "diws-aug"] = "diws"
    learner: Learner = "dt"
    seed: int = 0
    margin_min: float = 0.0
    overrun: Literal["walltime", "simple", "power", "tsafrir"] = "walltime"
    allow_overlap: bool = False
    aging_s: float = 0.0
    quantile: float = 0.5
    refit_s: float = 0.0
    refit_jobs: int = 0
    oracle: str = ""
    train_last: int = 0


#: decorates an `__init__(self, *, ..., **trained)`: TrainedOptions' fields in its signature, before
#: its own options; `with_trained_options(learner="aft")` changes a default
with_trained_options = functools.partial(option_bundle, TrainedOptions, before_own=True)


OPTION_CHOICES = {"model": "PATH.skops", "history": "WORKLOAD.json", "aging_s": "SECONDS >= 0",
                  "refit_s": "SECONDS >= 0", "refit_jobs": "N >= 0", "train_last": "0 | JOBS >= 2",
                  "oracle": "WORKLOAD.json | @workload (campaigns)"}
OPTION_HELP = {
    "model": "a runtime predictor saved by `schedlab predictor train`, used as it is",
    "history": "jobs completed before the simulated window (a Batsim workload); the predictor is trained on "
               "them before the simulation, and cached by content in $SCHEDLAB_CACHE",
    "features": "the features the predictor is trained on with history= (diws-aug adds the study's "
                "augmented ones)",
    "learner": "the model trained on history=; user-last2 and walltime need no history; exact (the clairvoyant "
               "reference) reads the run times of oracle=",
    "oracle": "the workload whose run times learner=exact plans with (campaigns: @workload)",
    "seed": "the training's random seed (history=)",
    "margin_min": "minutes added to every prediction (the study's +60 min was an analysis, not its scheduler)",
    "overrun": "a job running past its prediction: replanned to its walltime, or corrected (simple +1 h, "
               "power, tsafrir)",
    "allow_overlap": "accept a history or model trained on simulated jobs or on jobs ending after the first "
                     "simulated submission (refused otherwise: it looks ahead); for an oracle arm",
    "aging_s": "a job that has waited this long goes before younger ones, FCFS among them (0: off, the "
               "study's order)",
    "quantile": "with a distribution learner (quantile-xgb, aft, aft-naive) or model: the level of each job's "
                "run-time distribution the plan uses (0.5: the median; a point predictor's every level is its "
                "point)",
    "refit_s": "retrain learner= every this many simulated seconds on history= (if any) and the jobs "
               "completed before the refit time (0: trained once, before the simulation; walltimes until "
               "the first fit without history=)",
    "refit_jobs": "retrain learner= after every this many completions, on history= (if any) and every job "
                  "completed so far (0: off)",
    "train_last": "each refit learns from the last N completed jobs only, with history= (if any) (0: every "
                  "one): what the scheduler holds is then bounded by N, not by the trace"}
OPTION_ACTS_ONLY = {
    **{key: (("model",), lambda o: not o["model"], "without model= (the saved model is used as it is)")
       for key in ("learner", "features", "seed")},
    "allow_overlap": (("history", "model"), lambda o: bool(o["history"] or o["model"]), "with history= or model="),
    "oracle": (("learner",), lambda o: o["learner"] == "exact", "with learner=exact"),
    **{key: (("model", "learner"), lambda o: not o["model"] and o["learner"] not in ("user-last2", "walltime",
                                                                                     "exact"),
             "with a learner= that is trained (not a model= nor a baseline)") for key in ("refit_s", "refit_jobs")},
    "train_last": (("refit_s", "refit_jobs"), lambda o: bool(o["refit_s"] or o["refit_jobs"]),
                   "with refit_s= or refit_jobs="),
}


def compose_trained(scheduler: EasyBackfilling, options: TrainedOptions) -> TrainedEstimate:
    """`scheduler` (EASY, its queue order aged by `aging_s`: `trained_queue_order`) given the
    options, its trained estimate and its correction (`overrun`); returns the estimate."""
    # what options() reads back, numbers as declared
    vars(scheduler).update({**dataclasses.asdict(options), "aging_s": float(options.aging_s),
                            "margin_min": float(options.margin_min), "quantile": float(options.quantile),
                            "refit_s": float(options.refit_s), "refit_jobs": int(options.refit_jobs),
                            "train_last": int(options.train_last)})
    predicts = type(scheduler).predict_runtimes_s is not QueueScheduler.predict_runtimes_s  # a test's oracle
    estimate = TrainedEstimate(options, predicts=predicts)
    # overrun=walltime: replanned to the walltime end once past the prediction (no correction)
    scheduler.compose(estimate=estimate, correction=make_correction(
        "none" if options.overrun == "walltime" else options.overrun))
    return estimate


def trained_queue_order(order: str, aging_s: float) -> Any:
    from schedlab.schedulers.policies import aged, get_policy

    if aging_s < 0:
        raise ValueError(f"aging_s must be >= 0 seconds (0: no aging), got {aging_s}")
    return aged(get_policy(order), aging_s) if aging_s else order


@estimate_kind("trained")
class TrainedEstimate(PredictedEstimate):
    """A learner trained before the simulation (`history=`, cached) or loaded (`model=`), refitted
    online (`refit_s`, `refit_jobs`), a baseline (`user-last2`, `walltime`), or the oracle's run
    times (`exact`). `predicts`: the scheduler predicts itself (a subclass's `predict_runtimes_s`:
    a test's oracle device), so no model is needed."""

    def __init__(self, options: TrainedOptions, *, predicts: bool = False) -> None:
        refit_s, refit_jobs = options.refit_s, options.refit_jobs
        if refit_s < 0 or refit_jobs < 0 or (refit_s and refit_jobs):
            raise ValueError(f"give refit_s > 0 or refit_jobs > 0 (or neither), got {refit_s} and {refit_jobs}")
        super().__init__(margin_min=options.margin_min, quantile=options.quantile)
        self.model, self.history, self.features = options.model, options.history, options.features
        self.learner, self.seed, self.allow_overlap = options.learner, options.seed, options.allow_overlap
        self.refit_s, self.refit_jobs = float(refit_s), int(refit_jobs)
        self.set_window(options.train_last)
        self.oracle = options.oracle
        self._oracle_s: dict[str, float] | None = None
        learner, model, history = self.learner, self.model, self.history
        if learner == "exact" and (model or history or not self.oracle):
            raise ValueError("learner=exact plans with the run times of oracle=WORKLOAD (give it), without model= or "
                             "history=")
        self.online = learner == "user-last2"
        if model and history:
            raise ValueError("give model=PATH (a saved predictor) or history=PATH (a workload to train on), not both")
        baseline = learner in ("user-last2", "walltime", "exact")
        refits = bool(refit_s or refit_jobs)
        # online refits: the learned jobs' feature rows (each read once) and run times
        self._learned_rows: list[list[Any]] = []
        self._learned_runtimes_s: list[float] = []
        self._learned_killed: list[bool] = []  # whether each learned job was killed at its walltime
        self._killed: set[str] = set()  # the ended jobs killed at their walltime
        self._history_data: tuple[Any, list[float], list[float], list[bool]] | None = None
        if not (model or history or baseline or refits or predicts):
            raise ValueError("give model=PATH (a saved predictor) or history=PATH (a workload to train on); "
                             "learner=user-last2 or walltime need neither")

    def check_inputs(self, workload: Any) -> None:
        """A history that holds simulated jobs, or jobs ending after the first simulated submission,
        would train the predictor on the future, and so would a model whose card does not show
        training data ending before it: refused unless `allow_overlap` (an oracle arm)."""
        if self.learner == "exact":
            from schedlab.schedulers.runtimes import load_oracle

            self._oracle_s = load_oracle(self.oracle, workload)  # checked, and not read again by prepare
        if self.allow_overlap:
            return
        if self.model:
            from schedlab.predictors.training import refuse_look_ahead_model

            refuse_look_ahead_model(self.model, workload)
        if not self.history:
            return
        from schedlab.errors import InputError
        from schedlab.predictors.training import history_overlap
        from schedlab.workload import load_workload

        reason = history_overlap(load_workload(self.history), workload)
        if reason is not None:
            raise InputError(f"history= overlaps the simulated workload: {reason}; training on it looks ahead "
                             "(allow_overlap=true, or simulate --allow-overlap, for a deliberate oracle arm)",
                             path=self.history)

    # ------------------------------------------------------------------ the predictor
    def prepare(self) -> None:
        if self.learner == "exact":
            if self._oracle_s is None:
                from schedlab.schedulers.runtimes import load_oracle

                self._oracle_s = load_oracle(self.oracle)
            return
        if self._predictor is None and (self.model or self.history):
            self._predictor = self._load_or_train()
            self.online = getattr(self._predictor, "learns_each_completion", False)
        elif self._predictor is None and (self.learner in ("user-last2", "walltime") or self.refit_s
                                          or self.refit_jobs):
            from schedlab.predictors.runtime import empty_baseline

            # a learner refitted online predicts walltimes until its first fit
            baseline = self.learner if self.learner in ("user-last2", "walltime") else "walltime"
            self._predictor = empty_baseline(baseline, self.seed)

    def predict_runtimes_s(self, jobs: list[Job]) -> Any:
        """The predictor's (PredictedEstimate), or with learner=exact the oracle's run times."""
        if self._oracle_s is None:
            return super().predict_runtimes_s(jobs)
        import numpy as np

        from schedlab.schedulers.runtimes import bare_id

        return np.array([self._oracle_s[bare_id(job.id)] for job in jobs], dtype=float)

    # ------------------------------------------------------------------ online refits
    def finished(self, running: Running, state: JobState, now: float) -> None:
        super().finished(running, state, now)
        if self.refit_s or self.refit_jobs:  # a killed job's run time is its walltime: censored for `aft`
            self._ended.append((now, running.job, now - running.start_s))
            if state is JobState.COMPLETED_WALLTIME_REACHED:
                self._killed.add(running.job.id)

    def refit_if_due(self, now: float) -> None:
        """The refit a decision at `now` owes, before any submission of it is predicted (a second call
        at the same instant finds none due)."""
        if self.refit_s:
            at_s = self.due_refit_s(now, self.refit_s)
            if at_s is not None:
                self._refit(at_s)
        elif self.refit_jobs and len(self._ended) >= self.refit_jobs:
            self._refit(math.inf)

    def _refit(self, at_s: float) -> None:
        """`learner` on the history and the jobs completed strictly before `at_s` (a job ending at
        the refit time itself is learned next time: the model does not depend on whether its
        completion reaches us before or after a call), features known at their submission."""
        import time

        import pandas as pd

        from schedlab.predictors.distribution import DistributionPredictor
        from schedlab.predictors.features import get_feature_set, job_values, rows_table
        from schedlab.predictors.training import killed_at_walltime, load_training_data, new_predictor

        began = time.perf_counter()
        columns = list(get_feature_set(self.features).columns)
        count = bisect_left(self._ended, at_s, key=lambda ended: ended[0])  # in completion order
        self._learned_rows += [job_values(job, columns) for _, job, _ in self._ended[:count]]
        self._learned_runtimes_s += [runtime for _, _, runtime in self._ended[:count]]
        self._learned_killed += [job.id in self._killed for _, job, _ in self._ended[:count]]
        self._killed.difference_update(job.id for _, job, _ in self._ended[:count])
        del self._ended[:count]
        self.keep_window(self._learned_rows, self._learned_runtimes_s, self._learned_killed)
        table, runtimes = rows_table(self._learned_rows, columns), list(self._learned_runtimes_s)
        killed = list(self._learned_killed)
        predictor = new_predictor(model=self.learner, features=self.features, seed=self.seed)
        distribution = isinstance(predictor, DistributionPredictor)
        if self.history:
            if self._history_data is None:  # read once
                jobs, history, delays = load_training_data(self.history)
                observed, history_killed = killed_at_walltime(jobs, delays)
                self._history_data = history[columns], delays.tolist(), observed.tolist(), history_killed.tolist()
            table = pd.concat([self._history_data[0], table], ignore_index=True)
            # a point learner learns the history's run times as its first fit did; a distribution, the run
            # times capped at the walltime, censored there
            runtimes = [*self._history_data[2 if distribution else 1], *runtimes]
            killed = [*self._history_data[3], *killed]
        if len(runtimes) < 2:
            return
        if isinstance(predictor, DistributionPredictor):
            self._predictor = predictor.fit(table, runtimes, censored=killed)
        else:
            self._predictor = predictor.fit(table, runtimes)
        self._predictor.compile()
        self.refits += 1
        self.forget_predictions()
        self.scheduler.training_time_s += time.perf_counter() - began

    def _load_or_train(self):
        from schedlab.predictors.runtime import data_hash, load, save
        from schedlab.predictors.training import train

        if self.model:
            return load(self.model)[0]
        from schedlab.paths import cache_dir, canonical_hash
        from schedlab.predictors.runtime import RECIPE_VERSION, versions

        # the history's content, the choices, how models are built, and every library version
        recipe = {"features": self.features, "learner": self.learner, "seed": self.seed, "recipe": RECIPE_VERSION,
                  "versions": {k: v for k, v in versions().items() if k != "python"}}
        key = f"{data_hash(self.history)[:20]}-{self.learner}-{canonical_hash(recipe)[:12]}"
        cache = cache_dir() / "models" / f"{key}.skops"
        if cache.is_file():
            return load(cache)[0]
        predictor, card = train(self.history, features=self.features, model=self.learner, split="none",
                                seed=self.seed)
        cache.parent.mkdir(parents=True, exist_ok=True)
        save(predictor, cache, card)
        return predictor


@with_trained_options()
def plan_with_trained(self: Any, **trained: Any) -> None:
    """`__init__` of EASY planning with a trained learner, its queue in its class's `base_queue_order`
    (diws, easy-predicted)."""
    options = TrainedOptions(**trained)
    EasyBackfilling.__init__(self, queue_order=trained_queue_order(self.base_queue_order, options.aging_s))
    compose_trained(self, options)


@register("diws")
@predicting
class DIWS(EasyBackfilling):
    """DIWS: EASY backfilling with the queue in predicted-run-time order and predictions in the plan."""

    option_choices = OPTION_CHOICES
    option_help = OPTION_HELP
    option_acts_only = OPTION_ACTS_ONLY
    #: the queue's order (easy-predicted keeps EASY's FCFS queue)
    base_queue_order: ClassVar[str] = "spt"
    __init__ = plan_with_trained

