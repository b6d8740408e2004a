"""Score generation for regression-obtained policies (the study's proxy problem, §4.1).

A tuple is 48 consecutive jobs of a trace: S (the first 16) fixes the machine state, Q (the last 32)
is the queue. r is shifted so the first S job has r = 0. S runs first as a strict FCFS list; then
each trial schedules a random permutation of Q as a strict list (a job waits for its r and for q
free processors, and never starts before the job listed before it), with actual run times.
score(j) = Σ AVGbsld of the trials whose first job is j / Σ AVGbsld of all trials (τ = 10 s, over
the 32 Q jobs); a tuple's scores sum to 1.

`shuffle` chooses how a trial's order of Q is drawn: `uniform` (default: the uniform random
permutations the papers describe) or `authors`, the loop of the authors' trials simulator
(`create_permutation`): for k = 0..n-1, swap positions k and a position drawn from the whole range
0..n-1. That "naive" shuffle is biased: a job's chance of heading a trial depends on its place in
submission order (`authors_first_place_odds`, exact), and its scores inherit the bias.

Trials run in a numba-compiled loop (`_strict_list_bslds`; the same code runs interpreted when numba
is missing): the machine is a short sorted list of (free time, processor count) entries, not m
processors. Which free processors a job takes does not matter to later jobs: they start no earlier,
when all of them are free. `simulate_list` is the plain-Python reference the kernel is tested
against. Tuples go to processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedlab.errors import InputError

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba missing: the same code, interpreted (about 150x slower)
    def njit(*_args, **_kwargs):  # type: ignore[no-redef]
        return lambda function: function

TAU_S = 10.0
SHUFFLES = ("uniform", "authors")


@dataclass(frozen=True)
class Tuple:
    """Jobs of one tuple: p (s), q (processors), r (s, the first S job at 0)."""

    p: np.ndarray
    q: np.ndarray
    r: np.ndarray
    nb_initial: int  # |S|


def simulate_list(p, q, r, m: int, order, free=None, not_before_s: float = 0.0) -> tuple[list[float], list[float]]:
    """Strict list scheduling of jobs `order` on m processors (plain Python): their start times,
    and the processors' free times after them (sorted)."""
    free = sorted(free if free is not None else [0.0] * m)
    starts, last = [], not_before_s
    for j in order:
        need = int(q[j])
        start = max(last, float(r[j]), free[need - 1])
        free = sorted([start + float(p[j])] * need + free[need:])
        starts.append(start)
        last = start
    return starts, free


def authors_permutations(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """`size` orders of n jobs by the authors' loop: from the identity, for k in 0..n-1 swap
    positions k and j, j uniform in 0..n-1 (not k..n-1, as Fisher-Yates would)."""
    perms = np.tile(np.arange(n, dtype=np.int64), (size, 1))
    rows = np.arange(size)
    for k in range(n):
        j = rng.integers(0, n, size)
        held = perms[:, k].copy()
        perms[:, k] = perms[rows, j]
        perms[rows, j] = held
    return perms


def authors_first_place_odds(n: int) -> list:
    """Exact probability (Fractions) that the job at index i of Q comes first under the authors'
    shuffle, for each i. Followed position by position: at step k the job at k moves to a uniform
    position, a job elsewhere moves to k with probability 1/n."""
    from fractions import Fraction

    if n < 1:
        raise ValueError("n must be >= 1")
    share = Fraction(1, n)
    odds = []
    for start in range(n):
        where = [Fraction(0)] * n
        where[start] = Fraction(1)
        for k in range(n):
            at_k = where[k]
            moved = [p * share for p in where]  # each job elsewhere lands on k with 1/n
            where = [p - m for p, m in zip(where, moved, strict=True)]
            where[k] = sum((moved[q] for q in range(n) if q != k), Fraction(0))
            where = [p + at_k * share for p in where]
        odds.append(where[0])
    return odds


def tuple_scores(job_tuple: Tuple, m: int, nb_trials: int, seed: int, chunk: int = 4096,
                 shuffle: str = "uniform") -> np.ndarray:
    """The scores of the Q jobs of one tuple (in tuple order)."""
    if shuffle not in SHUFFLES:
        raise InputError(f"shuffle must be {' or '.join(SHUFFLES)}, got {shuffle!r}")
    p, q, r, k = job_tuple.p, job_tuple.q, job_tuple.r, job_tuple.nb_initial
    if q.max() > m:
        raise InputError(f"a job asks {int(q.max())} processors, the machine has {m}")
    starts, free0 = simulate_list(p, q, r, m, range(k))
    queue = np.arange(k, len(p))
    pq, qq, rq = p[queue], q[queue].astype(int), r[queue]
    n = len(queue)
    rng = np.random.default_rng(seed)
    first_sum, total = np.zeros(n), 0.0
    done = 0
    while done < nb_trials:
        size = min(chunk, nb_trials - done)
        perms = (np.argsort(rng.random((size, n)), axis=1) if shuffle == "uniform"
                 else authors_permutations(rng, size, n))
        avg = trial_bslds(pq, qq, rq, perms, free0, starts[-1] if starts else 0.0)
        np.add.at(first_sum, perms[:, 0], avg)
        total += float(avg.sum())
        done += size
    return first_sum / total


def trial_bslds(p: np.ndarray, q: np.ndarray, r: np.ndarray, perms: np.ndarray, free0,
                not_before_s: float) -> np.ndarray:
    """AVGbsld of each trial (a row of `perms`: an order of the queued jobs p, q, r) scheduled as a
    strict list after the state `free0` (sorted processor free times), from `not_before_s`."""
    times, counts = np.unique(np.asarray(free0, dtype=float), return_counts=True)
    if len(q) and int(np.max(q)) > int(counts.sum()):
        raise ValueError(f"a job asks {int(np.max(q))} processors, the machine has {int(counts.sum())}")
    out = np.empty(len(perms))
    _strict_list_bslds(np.asarray(p, dtype=float), np.asarray(q, dtype=np.int64), np.asarray(r, dtype=float),
                       np.ascontiguousarray(perms, dtype=np.int64), times, counts.astype(np.int64),
                       float(not_before_s), out)
    return out


@njit(cache=True, nogil=True)
def _strict_list_bslds(p, q, r, perms, free_times, free_counts, not_before_s, out):  # pragma: no cover - jitted
    """The trials one by one. The machine is a sorted list of (free time, processor count) entries;
    a job takes the earliest `need` processors. Starts never decrease in a strict list, so every
    entry free by a start is merged into one entry at that start: the list holds at most the
    running jobs plus one entry."""
    size, n = perms.shape
    capacity = len(free_times) + n + 1
    times = np.empty(capacity)
    counts = np.empty(capacity, dtype=np.int64)
    for trial in range(size):
        k = len(free_times)
        times[:k] = free_times
        counts[:k] = free_counts
        last = not_before_s
        total = 0.0
        for position in range(n):
            job = perms[trial, position]
            need = q[job]
            seen, index = 0, 0
            while seen + counts[index] < need:
                seen += counts[index]
                index += 1
            start = max(last, r[job], times[index])
            left = seen + counts[index] - need
            following = index + 1
            while following < k and times[following] <= start:
                left += counts[following]
                following += 1
            write = 0
            if left > 0:
                times[0], counts[0] = start, left
                write = 1
            for read in range(following, k):
                times[write], counts[write] = times[read], counts[read]
                write += 1
            end = start + p[job]
            slot = write
            while slot > 0 and times[slot - 1] > end:
                times[slot], counts[slot] = times[slot - 1], counts[slot - 1]
                slot -= 1
            times[slot], counts[slot] = end, need
            k = write + 1
            bsld = (start - r[job] + p[job]) / max(p[job], TAU_S)
            total += max(bsld, 1.0)
            last = start
        out[trial] = total / n


def tuples_from_trace(p: np.ndarray, q: np.ndarray, r: np.ndarray, nb_tuples: int, seed: int,
                      nb_initial: int = 16, nb_queue: int = 32) -> list[Tuple]:
    """`nb_tuples` windows of nb_initial + nb_queue consecutive jobs at seeded random starts."""
    size = nb_initial + nb_queue
    if len(p) < size:
        raise InputError(f"the trace has {len(p)} usable jobs, a tuple needs {size}")
    rng = np.random.default_rng(seed)
    out = []
    for start in rng.integers(0, len(p) - size + 1, nb_tuples):
        window = slice(int(start), int(start) + size)
        out.append(Tuple(p[window].astype(float), q[window].astype(int), r[window] - r[window][0], nb_initial))
    return out


def reference_tuples(reference_path, p: np.ndarray, q: np.ndarray, r: np.ndarray, nb_initial: int = 16,
                     nb_queue: int = 32) -> list[Tuple]:
    """The tuples behind a published score table (rows p,q,r,score, `nb_queue` per tuple, r from
    the tuple's first job): each located in the trace's usable jobs by its queued jobs' p, q and r,
    so our trials can run on the authors' own tuples."""
    from pathlib import Path

    from schedlab.experiments.studies.policy_fitting import read_scores

    path = Path(reference_path)
    ref_p, ref_q, ref_r, _ = read_scores(path)
    if len(ref_p) % nb_queue:
        raise InputError(f"{len(ref_p)} rows: not whole tuples of {nb_queue} queued jobs", path=str(path))
    size = nb_initial + nb_queue
    starts_by_key: dict[tuple, list[int]] = {}
    for start in range(len(p) - size + 1):
        first = slice(start + nb_initial, start + nb_initial + 4)
        key = (*p[first].tolist(), *q[first].tolist())
        starts_by_key.setdefault(key, []).append(start)
    out = []
    for index in range(len(ref_p) // nb_queue):
        rows = slice(index * nb_queue, (index + 1) * nb_queue)
        tp, tq, tr = ref_p[rows], ref_q[rows], ref_r[rows]
        key = (*tp[:4].tolist(), *tq[:4].tolist())
        found = [start for start in starts_by_key.get(key, [])
                 if np.array_equal(p[start + nb_initial:start + size], tp)
                 and np.array_equal(q[start + nb_initial:start + size], tq)
                 and np.allclose(r[start + nb_initial:start + size] - r[start], tr)]
        if not found:
            raise InputError(f"tuple {index + 1} (rows {rows.start + 1}-{rows.stop}) is not in the trace",
                             path=str(path))
        window = slice(found[0], found[0] + size)
        out.append(Tuple(p[window].astype(float), q[window].astype(int), r[window] - r[window][0], nb_initial))
    return out


def usable_jobs(trace) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """p, q, r of the jobs with a run time > 0 and a processor count > 0 (allocated, else
    requested), in submission order, and how many were dropped."""
    columns = trace.columns
    q = np.where(columns["allocated_processors"] > 0, columns["allocated_processors"], columns["requested_processors"])
    keep = (columns["run_time"] > 0) & (q > 0)
    order = np.argsort(columns["submit_time"][keep], kind="stable")
    return (columns["run_time"][keep][order], q[keep][order], columns["submit_time"][keep][order],
            int((~keep).sum()))


def score_trace(trace_path, nb_tuples: int, nb_trials: int, seed: int, processors: int = 0, workers: int = 1,
                progress=None, shuffle: str = "uniform",
                tuples_of=None) -> tuple[list[Tuple], list[np.ndarray], dict]:
    """Tuples of an SWF trace and their scores, and the metadata of the run (m is `processors`,
    else the MaxProcs header, else MaxNodes). `tuples_of`: a published score table whose tuples
    are scored instead of `nb_tuples` drawn ones. Input problems are raised before any trial."""
    from schedlab.paths import sha256_file
    from schedlab.workloads.swf import read_swf

    for name, value in (("tuples", nb_tuples), ("trials", nb_trials), ("workers", workers)):
        if value < 1:
            raise InputError(f"--{name} must be >= 1, got {value}")
    if shuffle not in SHUFFLES:
        raise InputError(f"--shuffle must be {' or '.join(SHUFFLES)}, got {shuffle!r}")
    trace = read_swf(trace_path)
    m = processors or trace.header.max_procs
    if not m:
        raise InputError("no MaxProcs or MaxNodes header: give --processors", path=str(trace_path))
    p, q, r, dropped = usable_jobs(trace)
    tuples = (tuples_from_trace(p, q, r, nb_tuples, seed) if tuples_of is None
              else reference_tuples(tuples_of, p, q, r)[:nb_tuples])
    too_big = [t for t in tuples if t.q.max() > m]
    if too_big:
        raise InputError(f"a job asks {int(too_big[0].q.max())} processors, more than the machine's {m}",
                         path=str(trace_path))
    scores = generate(tuples, m, nb_trials, seed, workers=workers, progress=progress, shuffle=shuffle)
    return tuples, scores, {"trace": str(trace_path), "trace_sha256": sha256_file(trace_path), "processors": int(m),
                            "seed": seed, "trials": nb_trials, "shuffle": shuffle, "jobs_dropped": dropped,
                            "tuples_of": None if tuples_of is None else str(tuples_of)}


def _number(value: float) -> str:
    """An integral value as an integer, another one exactly (repr)."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def write_scores(path, tuples: list[Tuple], scores: list[np.ndarray], metadata: dict) -> dict:
    """The score table (CSV p,q,r,score, the authors' layout) and PATH.json: `metadata` plus the
    row count and the largest deviation of a tuple's score sum from 1. Returns the JSON's content."""
    import json
    from pathlib import Path

    from schedlab.paths import atomic_write

    with atomic_write(path) as handle:
        handle.write("p,q,r,score\n")
        for job_tuple, tuple_scores in zip(tuples, scores, strict=True):
            k = job_tuple.nb_initial
            for p_s, q_n, r_s, score in zip(job_tuple.p[k:], job_tuple.q[k:], job_tuple.r[k:], tuple_scores,
                                            strict=True):
                handle.write(f"{_number(p_s)},{int(q_n)},{_number(r_s)},{float(score)!r}\n")
    metadata = {**metadata, "tuples": len(tuples), "initial_jobs": 16, "queued_jobs": 32, "tau_s": TAU_S,
                "rows": int(sum(len(s) for s in scores)),
                "max_sum_error": float(max(abs(float(np.sum(s)) - 1.0) for s in scores))}
    with atomic_write(Path(str(path) + ".json")) as handle:
        handle.write(json.dumps(metadata, indent=2) + "\n")
    return metadata


def _work(args: tuple[Tuple, int, int, int, str]) -> np.ndarray:
    job_tuple, m, nb_trials, seed, shuffle = args
    return tuple_scores(job_tuple, m, nb_trials, seed, shuffle=shuffle)


def generate(tuples: list[Tuple], m: int, nb_trials: int, seed: int, workers: int = 1,
             progress=None, shuffle: str = "uniform") -> list[np.ndarray]:
    """Scores of every tuple; tuple i uses seed (seed, i), so the result does not depend on workers."""
    seeds = np.random.SeedSequence(seed).spawn(len(tuples))
    jobs = [(t, m, nb_trials, int(s.generate_state(1)[0]), shuffle) for t, s in zip(tuples, seeds, strict=True)]
    if workers <= 1:
        results = []
        for job in jobs:
            results.append(_work(job))
            if progress is not None:
                progress(1)
        return results
    from concurrent.futures import ProcessPoolExecutor

    from schedlab.interrupts import worker_process

    with ProcessPoolExecutor(max_workers=workers, initializer=worker_process) as pool:
        results = []
        for result in pool.map(_work, jobs):
            results.append(result)
            if progress is not None:
                progress(1)
        return results

