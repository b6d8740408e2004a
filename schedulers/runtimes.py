"""What a plan uses as a job's duration, for the hybrid study's schedulers (`runtime=` option).

- `requested`: the user's requested time (the trace's `requested_time_s`, kept by the converters;
  the walltime when a workload has none);
- `predicted`: the online regression of predictors/online.py, learning from each job that ends (the
  only moment its run time is known), features from a CompletionHistory and the jobs running at the
  submission; |prediction| clipped to [1 s, requested time], as predictsim;
- `exact`: the real run time (clairvoyant);
- `perturbed:A`: p^ = p * A or p / A with probability 1/2 each (a seeded coin per job id), so every
  job's accuracy min/max is exactly A; not clipped (a clip would change the accuracy).

`exact` and `perturbed:A` read run times from `oracle=WORKLOAD` (the Batsim workload being simulated;
a campaign writes `oracle = "@workload"`): clairvoyance is an explicit input, never a leak. Run
times are keyed by job id without the workload prefix (Batsim's `w0!`).

A job still running past its planned end is replanned to its requested end (the walltime's role in
the study, whose simulator never kills: `overrun=walltime` of the DIWS issue), and once past that,
to its walltime end if it has one, else to the next whole hour past its requested time (documented:
an end never in the past, a wake-up per hour at most).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any, ClassVar

import numpy as np

from schedlab.model import Job, JobState
from schedlab.predictors.features import user_and_limit
from schedlab.schedulers.interface import option_bundle
from schedlab.schedulers.queue import Running

RUNTIME_CHOICES = "predicted | exact | perturbed:A | requested"
PREDICTOR_CHOICES = "online-nag | user-last | user-last2 | model:PATH"


def parse_predictor(text: str) -> tuple[str, str]:
    """`predictor=` -> (kind, model path for `model:PATH`, else '')."""
    kind, _, path = text.partition(":")
    if kind in ("online-nag", "user-last", "user-last2") and not path:
        return kind, ""
    if kind == "model" and path:
        return kind, path
    raise ValueError(f"predictor must be {PREDICTOR_CHOICES}, got {text!r}")


def parse_runtime(text: str) -> tuple[str, float]:
    """`runtime=` -> (kind, accuracy A for perturbed, else 1)."""
    kind, _, argument = text.partition(":")
    if kind in ("predicted", "exact", "requested") and not argument:
        return kind, 1.0
    if kind == "perturbed":
        try:
            value = float(argument)
        except ValueError:
            value = math.nan
        if 0 < value <= 1:
            return kind, value
        raise ValueError(f"perturbed:A needs an accuracy 0 < A <= 1, got {argument!r}")
    raise ValueError(f"runtime must be {RUNTIME_CHOICES}, got {text!r}")


def coin(seed: int, job_id: str) -> bool:
    """A fair coin per (seed, job id): the same whatever the order jobs arrive in."""
    return hashlib.blake2b(f"{seed}:{job_id}".encode(), digest_size=1).digest()[0] & 1 == 1


def bare_id(job_id: str) -> str:
    return job_id.rpartition("!")[2]


def load_oracle(path: str, simulated: Any = None) -> dict[str, float]:
    """Run times (s) of a workload's jobs by bare id, from their delay profiles. With `simulated`
    (the workload being simulated): InputError naming the first simulated job the oracle lacks or
    holds differently (another size or submit time: the file describes other jobs), so an oracle of
    another workload never gives wrong "exact" run times without a word."""
    from schedlab.errors import InputError
    from schedlab.workload import job_line, load_workload

    workload = load_workload(path)
    if simulated is not None:
        by_id = {bare_id(job.id): job for job in workload.jobs}
        for job in simulated.jobs:
            name = bare_id(job.id)
            theirs = by_id.get(name)
            if theirs is None:
                raise InputError(f"job {name} of the simulated workload is not in this oracle (oracle= must be the "
                                 "simulated workload)", path=path)
            if (theirs.res, theirs.submit_time_s) != (job.res, job.submit_time_s):
                raise InputError(f"job {name} differs from the simulated one (res {theirs.res} vs {job.res}, submit "
                                 f"time {theirs.submit_time_s:g} s vs {job.submit_time_s:g} s): oracle= must be the "
                                 "simulated workload", path=path, line=job_line(path, name))
    oracle = {}
    for job in workload.jobs:
        delay = workload.profiles[job.profile].delay_s
        if delay is None:
            raise InputError(f"job {job.id}: profile {job.profile!r} is not a delay profile (no run time)", path=path)
        oracle[bare_id(job.id)] = float(delay)
    return oracle


@dataclasses.dataclass(frozen=True)
class RuntimeOptions:
    """The options of every scheduler that plans with `runtime=` (the bundle and its defaults, once)."""

    runtime: str = "predicted"
    oracle: str = ""
    seed: int = 0
    degree: int = 2
    l2: float = 1e-6
    learning_rate: float = 1.0
    predictor: str = "online-nag"


#: decorates an `__init__(self, *, ..., **runtime)`: RuntimeOptions' fields in its signature
with_runtime_options = option_bundle(RuntimeOptions)


class RuntimeEstimates:
    """Mixin for QueueScheduler subclasses: `estimate_s(job)` from the `runtime` option."""

    per_job_records: ClassVar[tuple[str, ...]] = ("predicted_s", "requested_of_s", "_estimates", "_submitted_s")

    option_choices: ClassVar[dict[str, str]] = {
        "runtime": RUNTIME_CHOICES, "oracle": "WORKLOAD.json | @workload (campaigns)",
        "predictor": "online-nag | user-last | user-last2 | model:PATH"}
    option_help: ClassVar[dict[str, str]] = {
        "runtime": "the run time jobs are planned with: predicted online (the non-clairvoyant case), exact or "
                   "perturbed by a factor of accuracy A from oracle=, or the request",
        "oracle": "the workload whose run times runtime=exact and perturbed:A are given (campaigns: @workload, "
                  "the simulated one)",
        "seed": "the seed of perturbed:A's coin (times A or divided by A, per job)",
        "degree": "degree of the online regression's polynomial of the features (predictor=online-nag)",
        "l2": "l2 regularisation of the online regression (predictor=online-nag)",
        "learning_rate": "step size of the online regression's AdaGrad steps (predictor=online-nag)",
        "predictor": "what runtime=predicted predicts with: the study's online regression, the user's last run "
                     "time, the mean of the last two, or a model saved by `schedlab predictor train`; each "
                     "clipped to [1 s, request], the request until it knows the user"}
    option_acts_only = {
        "oracle": (("runtime",), lambda o: str(o["runtime"]).startswith(("exact", "perturbed")),
                   "with runtime=exact or perturbed:A"),
        "predictor": (("runtime",), lambda o: o["runtime"] == "predicted", "with runtime=predicted"),
        **{key: (("runtime", "predictor"), lambda o: o["runtime"] == "predicted" and o["predictor"] == "online-nag",
                 "with runtime=predicted and predictor=online-nag")
           for key in ("degree", "l2", "learning_rate")},
    }

    def _init_runtimes(self, options: RuntimeOptions) -> None:
        runtime, oracle, seed, predictor = options.runtime, options.oracle, options.seed, options.predictor
        degree, l2, learning_rate = options.degree, options.l2, options.learning_rate
        self.runtime = runtime
        self._runtime_kind, self._accuracy = parse_runtime(runtime)
        self.predictor = predictor
        self._predictor_kind, model_path = parse_predictor(predictor)
        self._runtime_model: Any = None  # predictor=model:PATH, loaded now: a bad file fails before any output
        if model_path:
            from schedlab.predictors.runtime import load

            self._runtime_model = load(model_path)[0]
        if self._runtime_kind in ("exact", "perturbed") and not oracle:
            raise ValueError(f"runtime={runtime} needs oracle=WORKLOAD (the workload whose run times it is given)")
        self.oracle = oracle
        self.seed = seed
        self._oracle_s: dict[str, float] | None = None
        self._kernels_loaded = False
        self._estimates: dict[str, float] = {}
        self._submitted_s: dict[str, float] = {}  # each accepted job's plan estimate at its submission, kept
        #: each accepted job's requested time (`requested_s`), read once at its submission
        self.requested_of_s: dict[str, float] = {}
        self.nb_requests = self.nb_requests_unknown = 0  # accepted jobs, and those without a requested time
        self._user_running: dict[str, dict[str, float]] = {}  # user -> {job id: start}
        self._predictor_rows: dict[str, list[float]] = {}  # Tab. 1 row of each waiting or running job
        self._history_rows: dict[str, tuple[list[float], float]] = {}  # (history row, requested time), the same
        self.predicted_s: dict[str, float] = {}  # each job's online prediction p^, made at its submission
        from schedlab.predictors.history import CompletionHistory
        from schedlab.predictors.online import NormalizedRegression

        if degree < 1 or not (learning_rate > 0 and l2 >= 0):
            raise ValueError("degree must be >= 1, learning_rate > 0 and l2 >= 0")
        self.history = CompletionHistory()
        self.degree, self.l2, self.learning_rate = degree, l2, learning_rate
        self.regression = NormalizedRegression(degree=degree, l2=l2, learning_rate=learning_rate)

    def on_simulation_begins(self, platform: Any, now: float) -> None:
        super().on_simulation_begins(platform, now)  # type: ignore[misc]
        self.prepare()

    def check_inputs(self, workload: Any) -> None:
        """oracle= must be the simulated workload (every simulated job, same size and submit time:
        an oracle of another workload gives wrong "exact" run times without a word); a model of
        predictor=model:PATH must have been trained before the workload starts."""
        super().check_inputs(workload)  # type: ignore[misc]
        if self._runtime_kind in ("exact", "perturbed") and self.oracle:
            self._oracle_s = load_oracle(self.oracle, workload)  # checked, and not read again by prepare
        if self._runtime_kind == "predicted" and self._predictor_kind == "model":
            from schedlab.predictors.training import refuse_look_ahead_model

            refuse_look_ahead_model(parse_predictor(self.predictor)[1], workload, option="predictor")

    def prepare(self) -> None:
        super().prepare()  # type: ignore[misc]
        if self.oracle and self._oracle_s is None:
            self._oracle_s = load_oracle(self.oracle)
        if not self._kernels_loaded:  # the online regression's numba kernels, outside the decisions
            from schedlab.predictors.online import load_kernels
            from schedlab.predictors.xgb_kernel import load_kernel as load_tree_kernel
            from schedlab.schedulers.profile import load_plan_kernel

            load_kernels()
            load_plan_kernel()
            load_tree_kernel()
            self._kernels_loaded = True

    @staticmethod
    def requested_s(job: Job) -> float:
        """The user's requested time: the trace's `requested_time_s`, or the walltime for a
        workload that has no such field; inf when the trace says it is unknown (the walltime may
        then come from the run time: `--missing-walltime runtime|factor`) or without either."""
        limit = user_and_limit(job)[1]  # the walltime only when the job has no requested_time_s
        return limit if math.isfinite(limit) and limit > 0 else math.inf

    def _predict_online(self, job: Job, now: float) -> float:
        from schedlab.predictors.online import history_prediction_s, planned_prediction_s, predictor_row

        user, requested = str(user_and_limit(job)[0]), self.requested_of_s[job.id]
        starts = self._user_running.get(user)
        st_s = now - min(starts.values()) if starts else 0.0
        # features stay finite: an unknown requested time reads as 0 (its fallbacks too)
        feature_s = requested if math.isfinite(requested) else 0.0
        history_row = self.history.row(user, job.submit_time_s, feature_s, float(job.res), now)
        row = predictor_row(history_row, feature_s, len(self._running), st_s)  # type: ignore[attr-defined]
        self._history_rows[job.id] = (history_row, feature_s)
        self._predictor_rows[job.id] = row
        kind = self._predictor_kind
        if kind == "online-nag":
            return planned_prediction_s(self.regression, row, requested)
        if kind == "model":
            predicted = float(self._runtime_model.predict_jobs([job])[0])
            return min(max(predicted, 1.0), requested) if math.isfinite(predicted) else requested
        return history_prediction_s(kind, history_row, requested)

    def runtime_estimate_s(self, job: Job, now: float) -> float:
        kind = self._runtime_kind
        if kind == "requested":
            return self.requested_s(job)
        if kind == "predicted":
            return self.predicted_s[job.id]
        if self._oracle_s is None:
            self.prepare()
        try:
            actual = self._oracle_s[bare_id(job.id)]  # type: ignore[index]
        except KeyError:
            raise RuntimeError(f"job {job.id} is not in the oracle workload {self.oracle}") from None
        if kind == "exact":
            return actual
        return actual * self._accuracy if coin(self.seed, job.id) else actual / self._accuracy

    # ------------------------------------------------------------------ hooks
    @property
    def predicts_online(self) -> bool:
        """Whether jobs get an online prediction (hybrid: always; the others: runtime=predicted)."""
        return self._runtime_kind == "predicted"

    def on_job_submitted(self, job: Job, now: float) -> None:
        if job.res <= self.nb_resources:  # type: ignore[attr-defined]
            requested = self.requested_of_s[job.id] = self.requested_s(job)
            self.nb_requests += 1
            self.nb_requests_unknown += not math.isfinite(requested)
            if self.predicts_online:
                self.predicted_s[job.id] = self._predict_online(job, now)
            self._estimates[job.id] = self._submitted_s[job.id] = self.runtime_estimate_s(job, now)
        super().on_job_submitted(job, now)  # type: ignore[misc]

    @property
    def predictions_s(self) -> dict[str, float]:
        """Each accepted job's planning estimate as given at its submission (a copy): what a campaign
        compares with the run times (`pred_*` columns), as for a composed PredictedEstimate."""
        return dict(self._submitted_s)

    def estimate_s(self, job: Job) -> float:
        estimate = self._estimates.get(job.id)  # a waiting or running job's; an ended job's is recomputed
        return self.runtime_estimate_s(job, job.submit_time_s) if estimate is None else estimate

    def _start(self, job: Job, now: float, decisions: list, estimate_s: float | None = None, alloc: Any = None) -> None:
        user = str(user_and_limit(job)[0])
        self._user_running.setdefault(user, {})[job.id] = now
        super()._start(job, now, decisions, estimate_s, alloc)  # type: ignore[misc]

    def job_finished(self, running: Running, state: JobState, now: float) -> None:
        """The run time becomes known: the history and the regression learn it, and only now."""
        super().job_finished(running, state, now)  # type: ignore[misc]
        job = running.job
        user = str(user_and_limit(job)[0])
        starts = self._user_running.get(user)
        if starts is not None:
            starts.pop(job.id, None)
            if not starts:
                del self._user_running[user]
        self._estimates.pop(job.id, None)
        self.requested_of_s.pop(job.id, None)
        if not self.predicts_online:
            return
        runtime_s = now - running.start_s
        self.history.record(user=user, runtime_s=runtime_s, cores=float(job.res), end_s=now)
        row = self._predictor_rows.pop(job.id)
        submitted = self._history_rows.pop(job.id)
        if runtime_s > 0:
            self.regression.partial_fit(np.array([row]), np.array([runtime_s]))
        if self._runtime_model is not None and self._runtime_model.learns_each_completion:
            self._runtime_model.learn_request(user_and_limit(job)[0], runtime_s)
        self.learned(job, runtime_s, now, *submitted)

    def learned(self, job: Job, runtime_s: float, now: float, history_row: list[float], requested_s: float) -> None:
        """A job's run time became known (the history and the regression have learned it); the
        history row and requested time are those of its submission."""

    def overrun_end_s(self, running: Running, now: float) -> float:
        start, job = running.start_s, running.job
        requested_end = start + self.requested_of_s[job.id]
        if requested_end > now + self.TIME_TOLERANCE_S:  # type: ignore[attr-defined]
            return requested_end
        if job.walltime_s is not None and start + job.walltime_s > now + self.TIME_TOLERANCE_S:  # type: ignore[attr-defined]
            return start + job.walltime_s
        if not math.isfinite(requested_end):
            return math.inf
        hours = math.floor((now + self.TIME_TOLERANCE_S - requested_end) / 3600.0) + 1  # type: ignore[attr-defined]
        return requested_end + 3600.0 * hours
