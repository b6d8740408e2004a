"""Score generation for regression-obtained policies (the study's proxy problem, §4.1).

A tuple is 48 consecutive jobs of a trace: S (the first 16) fixes the machine state, Q (the last 32)
is the queue. r is shifted so the first S job has r = 0. S runs first as a strict FCFS list; then
each trial schedules a random permutation of Q as a strict list (a job waits for its r and for q
free processors, and never starts before the job listed before it), with actual run times.
score(j) = Σ AVGbsld of the trials whose first job is j / Σ AVGbsld of all trials (τ = 10 s, over
the 32 Q jobs); a tuple's scores sum to 1.

Trials are simulated together with numpy: per trial, the times each of the m processors becomes
free, kept sorted, so "the q-th free processor" is a column. Which free processors a job takes does
not matter to later jobs: they start no earlier, when all of them are free. `simulate_list` is the
plain-Python reference the vectorised path is tested against. Tuples go to processes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schedlab.errors import InputError

TAU_S = 10.0


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


def tuple_scores(job_tuple: Tuple, m: int, nb_trials: int, seed: int, chunk: int = 4096) -> np.ndarray:
    """The scores of the Q jobs of one tuple (in tuple order)."""
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
        perms = np.argsort(rng.random((size, n)), axis=1)
        avg = trial_bslds(pq, qq, rq, perms, free0, starts[-1] if starts else 0.0)
        np.add.at(first_sum, perms[:, 0], avg)
        total += float(avg.sum())
        done += size
    return first_sum / total


def trial_bslds(p: np.ndarray, q: np.ndarray, r: np.ndarray, perms: np.ndarray, free0: list[float],
                not_before_s: float) -> np.ndarray:
    """AVGbsld of each trial (a row of `perms`: an order of the queued jobs p, q, r) scheduled as a
    strict list after the state `free0` (sorted processor free times), from `not_before_s`."""
    size, n = perms.shape
    m = len(free0)
    free = np.tile(np.asarray(free0, dtype=float), (size, 1))
    last = np.full(size, not_before_s)
    rows, columns = np.arange(size), np.arange(m)
    bsld_sum = np.zeros(size)
    for position in range(n):
        job = perms[:, position]
        need = q[job]
        start = np.maximum(np.maximum(last, r[job]), free[rows, need - 1])
        free = np.where(columns < need[:, None], (start + p[job])[:, None], free)
        free.sort(axis=1)
        bsld_sum += np.maximum((start - r[job] + p[job]) / np.maximum(p[job], TAU_S), 1.0)
        last = start
    return bsld_sum / n


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


def usable_jobs(trace) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """p, q, r of the jobs with a run time > 0 and a processor count > 0 (allocated, else
    requested), in submission order, and how many were dropped."""
    columns = trace.columns
    q = np.where(columns["allocated_processors"] > 0, columns["allocated_processors"], columns["requested_processors"])
    keep = (columns["run_time"] > 0) & (q > 0)
    order = np.argsort(columns["submit_time"][keep], kind="stable")
    return (columns["run_time"][keep][order], q[keep][order], columns["submit_time"][keep][order],
            int((~keep).sum()))


def _work(args: tuple[Tuple, int, int, int]) -> np.ndarray:
    job_tuple, m, nb_trials, seed = args
    return tuple_scores(job_tuple, m, nb_trials, seed)


def generate(tuples: list[Tuple], m: int, nb_trials: int, seed: int, workers: int = 1,
             progress=None) -> list[np.ndarray]:
    """Scores of every tuple; tuple i uses seed (seed, i), so the result does not depend on workers."""
    seeds = np.random.SeedSequence(seed).spawn(len(tuples))
    jobs = [(t, m, nb_trials, int(s.generate_state(1)[0])) for t, s in zip(tuples, seeds, strict=True)]
    if workers <= 1:
        results = []
        for job in jobs:
            results.append(_work(job))
            if progress is not None:
                progress(1)
        return results
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = []
        for result in pool.map(_work, jobs):
            results.append(result)
            if progress is not None:
                progress(1)
        return results

