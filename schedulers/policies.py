"""Queue-ordering policies: named score functions, smallest score first.

Each function gets the job, its runtime estimate p~ (walltime or a prediction, seconds) and the
decision time t, and returns the job's score. Ties are broken by submission time then by Batsim's
submission order. Each policy's docstring says where its formula comes from (a paper, or the
RLScheduler code of Zhang et al., SC'20, that re-implements them). `dynamic` policies depend on t
and are re-sorted at every decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab.model import Job

if TYPE_CHECKING:
    import numpy as np

ScoreFn = Callable[[Job, float, float], float]


#: The same score over arrays (submit times, estimates, resources; the decision time): the whole
#: queue of a dynamic policy is re-scored at every decision. Equal to `score` bit for bit.
VectorFn = Callable[..., Any]  # (submit, estimate, res arrays; now) -> score array
# numpy is imported inside these functions: `simulate` with a static order never loads it


@dataclass(frozen=True)
class QueuePolicy:
    name: str
    score: ScoreFn
    dynamic: bool
    doc: str
    vector: VectorFn | None = None
    #: the score depends on the job only through (estimate, res) and on `now` only through the wait
    #: now - s_j, never increasing as the wait grows: among jobs of equal (estimate, res) the
    #: earliest submitted comes first at any time, so a strict list needs only each group's first
    #: job re-scored (schedulers/group_heads.py). Declared, and tested, per policy.
    by_wait: bool = False


POLICIES: dict[str, QueuePolicy] = {}


def policy(name: str, *, dynamic: bool = False, by_wait: bool = False) -> Callable[[ScoreFn], ScoreFn]:
    def wrap(fn: ScoreFn) -> ScoreFn:
        if name in POLICIES:
            raise ValueError(f"queue policy {name!r} registered twice")
        POLICIES[name] = QueuePolicy(name, fn, dynamic, (fn.__doc__ or "").strip(), by_wait=by_wait)
        return fn

    return wrap


def vectorized(name: str) -> Callable[[VectorFn], VectorFn]:
    """Register the array form of policy `name` (for large queues of dynamic policies)."""
    def wrap(fn: VectorFn) -> VectorFn:
        POLICIES[name] = replace(POLICIES[name], vector=fn)
        return fn

    return wrap


def _finite(estimate_s: float) -> float:
    """Jobs without a walltime get an infinite estimate; keep scores ordered but finite."""
    return estimate_s if math.isfinite(estimate_s) else 1e12


@policy("fcfs")
def fcfs(job: Job, estimate_s: float, now: float) -> float:
    """FCFS: score = s_j (submission time). Standard; RLScheduler `fcfs_score`."""
    return job.submit_time_s


@policy("lcfs")
def lcfs(job: Job, estimate_s: float, now: float) -> float:
    """LCFS: score = -s_j. RLScheduler."""
    return -job.submit_time_s


@policy("spt")
def spt(job: Job, estimate_s: float, now: float) -> float:
    """SPT / SJF: score = p~_j (estimated processing time). RLScheduler `sjf_score`; [CS17] SPT."""
    return _finite(estimate_s)


@policy("lpf")
def lpf(job: Job, estimate_s: float, now: float) -> float:
    """LPF / LJF: score = -p~_j. RLScheduler `lpf_score`."""
    return -_finite(estimate_s)


@policy("sqf")
def sqf(job: Job, estimate_s: float, now: float) -> float:
    """SQF (smallest request first): score = q_j (requested resources). RLScheduler `smallest_score`."""
    return float(job.res)


@policy("lqf")
def lqf(job: Job, estimate_s: float, now: float) -> float:
    """LQF (largest request first): score = -q_j. RLScheduler `largest_score`."""
    return -float(job.res)


@policy("saf")
def saf(job: Job, estimate_s: float, now: float) -> float:
    """SAF (smallest area first): score = p~_j * q_j. RLScheduler `saf_score`."""
    return _finite(estimate_s) * job.res


@policy("laf")
def laf(job: Job, estimate_s: float, now: float) -> float:
    """LAF (largest area first): score = -p~_j * q_j (by symmetry with SAF)."""
    return -_finite(estimate_s) * job.res


@policy("wfp3", dynamic=True, by_wait=True)
def wfp3(job: Job, estimate_s: float, now: float) -> float:
    """WFP3: score = -(w_j / p~_j)^3 * q_j with w_j = t - s_j (largest priority first).

    Tang et al., CLUSTER 2009, via RLScheduler `wfp_score` (whose waiting time is buggy; here
    w_j is the real wait at the decision instant). p~ is clamped to >= 1 s.
    """
    wait = max(now - job.submit_time_s, 0.0)
    return -((wait / max(_finite(estimate_s), 1.0)) ** 3) * job.res


@vectorized("wfp3")
def _wfp3_vector(submit: np.ndarray, estimate: np.ndarray, res: np.ndarray, now: float) -> np.ndarray:
    import numpy as np

    wait = np.maximum(now - submit, 0.0)
    return -np.float_power(wait / np.maximum(_finite_vector(estimate), 1.0), 3) * res  # pow(), as float ** 3


def _finite_vector(estimate: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.where(np.isfinite(estimate), estimate, 1e12)


@policy("unicef", dynamic=True, by_wait=True)
def unicef(job: Job, estimate_s: float, now: float) -> float:
    """UNICEF: score = -w_j / (log2(q_j) * p~_j) (largest priority first).

    Tang et al., CLUSTER 2009, via RLScheduler `uni_score`. Guard chosen here: log2(max(q_j, 2)),
    so serial jobs rank as 2-core jobs instead of dividing by zero; p~ clamped to >= 1 s.
    """
    wait = max(now - job.submit_time_s, 0.0)
    return -wait / (math.log2(max(job.res, 2)) * max(_finite(estimate_s), 1.0))


@vectorized("unicef")
def _unicef_vector(submit: np.ndarray, estimate: np.ndarray, res: np.ndarray, now: float) -> np.ndarray:
    import numpy as np

    wait = np.maximum(now - submit, 0.0)
    # math.log2 per distinct size: numpy's SIMD log2 can differ from it by an ulp (an order change on ties)
    sizes, index = np.unique(np.maximum(res, 2), return_inverse=True)
    logs = np.array([math.log2(size) for size in sizes.tolist()])[index]
    return -wait / (logs * np.maximum(_finite_vector(estimate), 1.0))


def _log_submit(job: Job) -> float:
    # Guard chosen here: s_j and p~_j clamped to >= 1 s (log10(0) would be -inf).
    return math.log10(max(job.submit_time_s, 1.0))


@policy("f1")
def f1(job: Job, estimate_s: float, now: float) -> float:
    """F1 = log10(p~_j) * q_j + 870 * log10(s_j). Carastan-Santos & de Camargo, SC'17 (via RLScheduler)."""
    return math.log10(max(_finite(estimate_s), 1.0)) * job.res + 8.70e2 * _log_submit(job)


@policy("f2")
def f2(job: Job, estimate_s: float, now: float) -> float:
    """F2 = sqrt(p~_j) * q_j + 25,600 * log10(s_j). Carastan-Santos & de Camargo, SC'17."""
    return math.sqrt(max(_finite(estimate_s), 1.0)) * job.res + 2.56e4 * _log_submit(job)


@policy("f3")
def f3(job: Job, estimate_s: float, now: float) -> float:
    """F3 = p~_j * q_j + 6,860,000 * log10(s_j). Carastan-Santos & de Camargo, SC'17."""
    return max(_finite(estimate_s), 1.0) * job.res + 6.86e6 * _log_submit(job)


@policy("f4")
def f4(job: Job, estimate_s: float, now: float) -> float:
    """F4 = p~_j * sqrt(q_j) + 530,000 * log10(s_j). Carastan-Santos & de Camargo, SC'17."""
    return max(_finite(estimate_s), 1.0) * math.sqrt(job.res) + 5.30e5 * _log_submit(job)


def aged(base: QueuePolicy, after_s: float) -> QueuePolicy:
    """`base`, except that a job waiting `after_s` seconds or more goes before every younger one,
    FCFS among them: an aging guard against starvation (dynamic: re-sorted at each decision, so a
    job that ages between two events moves at the next one)."""
    if not (after_s > 0 and math.isfinite(after_s)):
        raise ValueError(f"an aging threshold must be a positive number of seconds, got {after_s}")
    score = base.score

    def aged_score(job: Job, estimate_s: float, now: float) -> float:
        return -math.inf if now - job.submit_time_s >= after_s else score(job, estimate_s, now)

    return QueuePolicy(f"{base.name}+aging:{after_s:g}", aged_score, True,
                       f"{base.doc} A job waiting {after_s:g} s or more goes first (FCFS among them).")


def get_policy(name: str | QueuePolicy) -> QueuePolicy:
    """A registered policy, or a regression-obtained one: `lin`, `qdr`, `cub`, `qua` with the
    study's coefficients (`lin:lublin256`, the default, `qua:ctc`, `cub:sdsc`), or `PATH#NAME`, a
    function fitted by `schedlab policy fit`; a QueuePolicy is itself."""
    if isinstance(name, QueuePolicy):
        return name
    if name in POLICIES:
        return POLICIES[name]
    from schedlab.errors import InputError
    from schedlab.schedulers.fitted_policies import FUNCTIONS, load_fitted, published

    try:
        if "#" in name:
            path, _, key = name.rpartition("#")
            fitted = load_fitted(Path(path), key)
        elif name.partition(":")[0] in FUNCTIONS:
            function, _, workload = name.partition(":")
            fitted = published(function, workload or "lublin256")
        else:
            raise ValueError(f"unknown queue policy {name!r} (known: {', '.join(sorted(POLICIES))}, "
                             f"lin|qdr|cub|qua[:lublin256|ctc|sdsc], FILE#NAME)")
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return regression_policy(name, fitted)


def regression_policy(name: str, fitted) -> QueuePolicy:
    """f(p~, q, r) with p~ the estimate (s), q the requested resources, r the submit time (s, as the
    workload gives it: converted windows start at 0)."""
    value = fitted.value

    def score(job: Job, estimate_s: float, now: float) -> float:
        return value(_finite(estimate_s), float(job.res), job.submit_time_s)

    terms = " + ".join(f"{c:.6g}*{t}" for c, t in zip(fitted.coefficients, fitted.terms, strict=True))
    return QueuePolicy(name, score, False, f"{fitted.function} ({fitted.source}): {terms}")
