"""The Lublin-Feitelson model of rigid parallel jobs (JPDC 2003), ported from the behaviour of the
reference program `m_lublin99.c` of the Parallel Workloads Archive (U. Lublin, D. G. Feitelson,
"The Workload on Parallel Supercomputers: Modeling the Characteristics of Rigid Jobs", JPDC
63(11):1105-1122, 2003).

Sizes: serial with SERIAL_PROB, else log2(size) from a two-stage uniform, rounded for power-of-two
jobs. Run times: hyper-gamma in log space whose mixture weight depends on the size, redrawn above
e^12 s, truncated to whole seconds. Arrivals: gamma inter-arrivals in log space spent against 48
half-hour bucket weights (the daily cycle), per job type, with the program's persistent leftover
points and its whole-second clock truncation (the "clock drift" quirk, `exact_clock=False`).

Deliberate differences from the C program (documented in docs/design.md):
- randomness: numpy's PCG64 seeded by the caller (the program uses drand48 seeded by the clock), so
  distributions match, not the random stream; any exact gamma sampler is equivalent;
- the machine size sets UHI = log2(nodes), UMED = UHI - 2.5 for every job type (the program fixes
  the interactive UHI at 5.5; RLScheduler's typed 256-node trace used 8 / 5.5 for both, as here);
- sizes are clamped to the machine (the program can exceed 2^UHI when UHI's fraction is >= 0.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from schedlab.errors import InputError

TOO_MUCH_TIME = 12.0  # log-runtime cap: e^12 = 162,754 s
TOO_MUCH_ARRIVE_TIME = 13.0
BUCKETS = 48
SECONDS_IN_BUCKET = 1800.0
INTERACTIVE, BATCH = 0, 1  # SWF queue field values written by the program


@dataclass(frozen=True)
class TypeParameters:
    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float
    uhi: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float

    def for_machine(self, nodes: int) -> TypeParameters:
        uhi = math.log2(nodes)
        return replace(self, uhi=uhi, umed=uhi - 2.5)


BATCH_PARAMETERS = TypeParameters(0.2927, 0.6686, 1.2, 5.0, 7.0, 0.875, 6.57, 0.823, 639.1, 0.0156, -0.003, 0.6986,
                                  6.0415, 0.8531, 6.1271, 5.2740, 1.0519)
INTERACTIVE_PARAMETERS = TypeParameters(0.1541, 0.625, 1.0, 3.0, 5.5, 0.705, 3.8351, 0.6605, 7.073, 0.6856, -0.0118,
                                        0.9156, 6.5510, 0.6621, 8.9186, 3.6680, 0.9797)
TYPELESS_PARAMETERS = TypeParameters(0.244, 0.576, 0.8, 4.5, 7.0, 0.86, 4.2, 0.94, 312.0, 0.03, -0.0054, 0.78,
                                     10.2303, 0.4871, 8.1737, 3.9631, 1.0225)


def smallest_machine(typed: bool) -> int:
    """The fewest nodes the model describes: its UMED = log2(nodes) - 2.5 must be at least every job
    type's ULOW (the lower stage of the size draw, U[ULOW, UMED), is empty below that)."""
    lows = (BATCH_PARAMETERS.ulow, INTERACTIVE_PARAMETERS.ulow) if typed else (TYPELESS_PARAMETERS.ulow,)
    nodes = math.ceil(2.0 ** (max(lows) + 2.5))
    while math.log2(nodes) - 2.5 < max(lows):  # rounding of 2 ** x: the first size that really works
        nodes += 1
    return nodes


def check_machine(nodes: int, typed: bool) -> None:
    """InputError with the valid range for a machine the model cannot describe."""
    smallest = smallest_machine(typed)
    if nodes < smallest:
        mode = "typed" if typed else "typeless"
        raise InputError(f"--nodes {nodes}: the Lublin-Feitelson model ({mode} mode) describes machines of at least "
                         f"{smallest} nodes (its UMED = log2(nodes) - 2.5 must reach ULOW); give --nodes {smallest} or "
                         "more")


def regularized_lower_gamma(shape: float, x: float) -> float:
    """P(shape, x): series below shape + 1, continued fraction above (tolerance 1e-12)."""
    if x <= 0:
        return 0.0
    log_prefix = shape * math.log(x) - x - math.lgamma(shape)
    if x < shape + 1.0:
        term = total = 1.0 / shape
        a = shape
        for _ in range(10_000):
            a += 1.0
            term *= x / a
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return total * math.exp(log_prefix)
    # Lentz's method for the continued fraction of Q(shape, x)
    tiny = 1e-300
    b = x + 1.0 - shape
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - shape)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return 1.0 - math.exp(log_prefix) * h


def bucket_weights(anum: float, bnum: float) -> np.ndarray:
    """The 48 daily-cycle weights (mean 1): gamma(anum, scale bnum) mass over half-hour units, with the
    modelled day starting at bucket 10 (05:00)."""
    raw = []
    for bucket in range(BUCKETS):
        x = bucket + 1 if bucket >= 10 else bucket + 49
        raw.append(regularized_lower_gamma(anum, (x + 0.5) / bnum) - regularized_lower_gamma(anum, (x - 0.5) / bnum))
    weights = np.array(raw)
    return weights / weights.mean()


class _ArrivalClock:
    """Arrival process of one job type (the program's per-type state, points persisting)."""

    def __init__(self, params: TypeParameters, rng: np.random.Generator, start_hour: float, exact: bool) -> None:
        self.params = params
        self.rng = rng
        self.weights = bucket_weights(params.anum, params.bnum)
        self.bucket = int(start_hour * BUCKETS / 24) % BUCKETS
        self.time_s = 0.0
        self.points = 0.0
        self.reminder = 0.0
        self.exact = exact

    def advance(self) -> None:
        p = self.params
        g = self.rng.gamma(p.aarr * p.arar, p.barr)
        while g > TOO_MUCH_ARRIVE_TIME:
            g = self.rng.gamma(p.aarr * p.arar, p.barr)
        self.points += math.exp(g) / SECONDS_IN_BUCKET
        delta = 0.0
        bucket, weights = self.bucket, self.weights
        while self.points > weights[bucket]:
            self.points -= weights[bucket]
            bucket = (bucket + 1) % BUCKETS
            delta += SECONDS_IN_BUCKET
        new_reminder = self.points / weights[bucket]
        delta += SECONDS_IN_BUCKET * (new_reminder - self.reminder)
        self.reminder = new_reminder
        self.bucket = bucket
        self.time_s = self.time_s + delta if self.exact else float(int(self.time_s + delta))


@dataclass
class LublinJobs:
    submit_s: np.ndarray
    run_s: np.ndarray
    nodes: np.ndarray
    job_type: np.ndarray  # 0 interactive, 1 batch
    header: dict[str, str]


def _nodes(p: TypeParameters, rng: np.random.Generator, machine: int) -> int:
    u = rng.random()
    if u <= p.serial_prob:
        return 1
    x = rng.uniform(p.ulow, p.umed) if rng.random() <= p.uprob else rng.uniform(p.umed, p.uhi)
    if u <= p.serial_prob + p.pow2_prob:
        x = math.floor(x + 0.5)
    return min(math.floor(2.0**x + 0.5), machine)


def _runtime(p: TypeParameters, rng: np.random.Generator, nodes: int) -> int:
    weight = min(max(p.pa * nodes + p.pb, 0.0), 1.0)
    while True:
        g = rng.gamma(p.a1, p.b1) if rng.random() <= weight else rng.gamma(p.a2, p.b2)
        if g <= TOO_MUCH_TIME:
            return int(math.exp(g))


def generate(*, nodes: int, nb_jobs: int, seed: int, typed: bool = True, start_hour: float = 0.0,
             exact_clock: bool = False) -> LublinJobs:
    """`nb_jobs` jobs for a machine of `nodes` nodes, sorted by arrival, reproducible from `seed`."""
    if nodes < 1 or nb_jobs < 0:
        raise InputError("--nodes must be >= 1 and --jobs >= 0")
    check_machine(nodes, typed)
    if not 0 <= start_hour < 24:  # also refuses NaN
        raise InputError(f"--start-hour must be in [0, 24), got {start_hour:g}")
    rng = np.random.default_rng(seed)
    if typed:
        params = {BATCH: BATCH_PARAMETERS.for_machine(nodes), INTERACTIVE: INTERACTIVE_PARAMETERS.for_machine(nodes)}
    else:
        params = {t: TYPELESS_PARAMETERS.for_machine(nodes) for t in (BATCH, INTERACTIVE)}
    clocks = {t: _ArrivalClock(params[t], rng, start_hour, exact_clock) for t in (BATCH, INTERACTIVE)}
    clocks[BATCH].advance()
    clocks[INTERACTIVE].advance()
    if not typed:
        clocks[BATCH].time_s = math.inf  # typeless: every job is type 0, as in the program
    submit, run, sizes, types = (np.empty(nb_jobs) for _ in range(4))
    for i in range(nb_jobs):
        kind = BATCH if clocks[BATCH].time_s < clocks[INTERACTIVE].time_s else INTERACTIVE
        clock = clocks[kind]
        submit[i] = clock.time_s
        clock.advance()
        n = _nodes(params[kind], rng, nodes)
        sizes[i], run[i], types[i] = n, _runtime(params[kind], rng, n), kind
    header = {
        "Version": "2", "Computer": f"Lublin-Feitelson model, {nodes} nodes",
        "Acknowledge": "Uri Lublin, Hebrew University (model); generated by schedlab",
        "Information": "Lublin & Feitelson, JPDC 63(11):1105-1122, 2003",
        "MaxJobs": str(nb_jobs), "MaxRecords": str(nb_jobs), "MaxNodes": str(nodes), "MaxProcs": str(nodes),
        "MaxRuntime": str(int(math.exp(TOO_MUCH_TIME))),
        "Note": (f"schedlab lublin: seed={seed} mode={'typed' if typed else 'typeless'} start_hour={start_hour:g} "
                 f"clock={'exact' if exact_clock else 'truncated (as m_lublin99.c)'}"),
    }
    return LublinJobs(submit, run, sizes.astype(np.int64), types.astype(np.int64), header)


def to_swf_columns(jobs: LublinJobs) -> dict[str, np.ndarray]:
    n = len(jobs.submit_s)
    minus = np.full(n, -1.0)
    return {
        "job_number": np.arange(1, n + 1, dtype=np.float64), "submit_time": jobs.submit_s, "wait_time": minus,
        "run_time": jobs.run_s, "allocated_processors": jobs.nodes.astype(np.float64), "average_cpu_time": minus,
        "used_memory": minus, "requested_processors": minus, "requested_time": minus, "requested_memory": minus,
        "status": np.ones(n), "user_id": minus, "group_id": minus, "executable_number": minus,
        "queue_number": jobs.job_type.astype(np.float64), "partition_number": minus, "preceding_job_number": minus,
        "think_time": minus,
    }


def to_trace_jobs(jobs: LublinJobs, *, nodes: int, seed: int, mode: str):
    """The converter's view of a generated workload (the job type is the `queue` feature: a user
    picks batch or interactive at submission)."""
    from schedlab.workloads.convert import TraceJobs

    return TraceJobs(source=f"lublin(nodes={nodes}, seed={seed}, mode={mode})",
                     job_ids=np.arange(len(jobs.nodes)), submit_s=jobs.submit_s, run_s=jobs.run_s,
                     requested_procs=jobs.nodes.astype(float), allocated_procs=jobs.nodes.astype(float),
                     requested_time_s=np.full(len(jobs.nodes), -1.0), extras={"queue": jobs.job_type})
