"""Benchmark (policies issue §6): permutation trials per second of the score factory, |S| = 16,
|Q| = 32, m = 256, on tuples of the Lublin-256 trace.

    .venv/bin/python benchmarks/bench_policy_scores.py [--trace SWF] [--tuples N]

Goal (the issue): 256,000 trials of one tuple in under 2 s; the study's 440 tuples x 256,000 trials
in under 30 minutes on the 2-core machine. Side by side, on the same tuple: the jitted kernel (what
`schedlab policy scores` runs), the same kernel interpreted, the plain-Python reference
`simulate_list`, and numpy vectorised over trials with one column per processor (the first
implementation, kept here as a baseline).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from schedlab.experiments.studies import policy_scores
from schedlab.experiments.studies.policy_scores import (
    generate,
    simulate_list,
    trial_bslds,
    tuples_from_trace,
    usable_jobs,
)
from schedlab.workloads.swf import read_swf

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO.parent / "shared" / "data" / "swf" / "lublin_256.swf"
M = 256


def numpy_per_processor(p, q, r, perms, free0, not_before_s):
    """The baseline: per trial, the m processors' free times kept sorted (one column each)."""
    size, n = perms.shape
    free = np.tile(np.asarray(free0, dtype=float), (size, 1))
    last, rows, columns, total = np.full(size, not_before_s), np.arange(size), np.arange(len(free0)), np.zeros(size)
    for position in range(n):
        job = perms[:, position]
        start = np.maximum(np.maximum(last, r[job]), free[rows, q[job] - 1])
        free = np.where(columns < q[job][:, None], (start + p[job])[:, None], free)
        free.sort(axis=1)
        total += np.maximum((start - r[job] + p[job]) / np.maximum(p[job], policy_scores.TAU_S), 1.0)
        last = start
    return total / n


def python_reference(p, q, r, perms, free0, not_before_s):
    out = []
    for perm in perms:
        starts, _ = simulate_list(p, q, r, M, perm, free0, not_before_s)
        out.append(np.mean([max((s - r[j] + p[j]) / max(p[j], 10.0), 1.0) for s, j in zip(starts, perm, strict=True)]))
    return np.array(out)


def interpreted(p, q, r, perms, free0, not_before_s):
    times, counts = np.unique(np.asarray(free0, dtype=float), return_counts=True)
    out = np.empty(len(perms))
    policy_scores._strict_list_bslds.py_func(p, q.astype(np.int64), r, perms, times, counts, not_before_s, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--tuples", type=int, default=20, help="tuples for the factory estimate (default 20)")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()
    if not args.trace.exists():
        raise SystemExit(f"{args.trace}: not found (give --trace)")
    p, q, r, _ = usable_jobs(read_swf(args.trace))
    job_tuple = tuples_from_trace(p, q, r, 1, 1)[0]
    k = job_tuple.nb_initial
    starts, free0 = simulate_list(job_tuple.p, job_tuple.q, job_tuple.r, M, range(k))
    pq, qq, rq = job_tuple.p[k:], job_tuple.q[k:].astype(np.int64), job_tuple.r[k:]
    rng = np.random.default_rng(0)

    started = time.perf_counter()
    trial_bslds(pq, qq, rq, np.argsort(rng.random((2, 32)), axis=1), free0, starts[-1])
    first_call_s = time.perf_counter() - started  # compile, or load from numba's cache
    rates, check = {}, None
    for name, function, trials in (("jitted kernel", trial_bslds, 256_000), ("kernel interpreted", interpreted, 2_000),
                                   ("plain-Python reference", python_reference, 2_000),
                                   ("numpy, a column per processor", numpy_per_processor, 16_384)):
        perms = np.argsort(np.random.default_rng(1).random((trials, 32)), axis=1)
        started = time.perf_counter()
        bslds = function(pq, qq, rq, perms, free0, starts[-1])
        rates[name] = trials / (time.perf_counter() - started)
        check = bslds[:2_000] if check is None else check
        assert np.allclose(bslds[:2_000], check[: len(bslds)], rtol=1e-12), name
    print(f"tuple: 16 + 32 jobs of {args.trace.name}, m = {M}; first call {first_call_s:.2f} s (compile or cache)")
    print(f"{'path':<32}{'trials/s':>14}{'256,000 trials (s)':>20}{'jitted is x faster':>20}")
    fastest = rates["jitted kernel"]
    for name, rate in rates.items():
        print(f"{name:<32}{rate:>14,.0f}{256_000 / rate:>20.2f}{fastest / rate:>20.1f}")

    tuples = tuples_from_trace(p, q, r, args.tuples, 2)
    started = time.perf_counter()
    generate(tuples, M, 256_000, 0, workers=args.workers)
    elapsed = time.perf_counter() - started
    print(f"factory: {args.tuples} tuples x 256,000 trials, {args.workers} workers: {elapsed:.1f} s "
          f"(RNG and processes included) -> 440 tuples ~ {elapsed / args.tuples * 440 / 60:.1f} min (goal < 30)")
    print(f"goal: one tuple's 256,000 trials < 2 s: {256_000 / fastest:.2f} s -> "
          f"{'met' if 256_000 / fastest < 2 else 'NOT met'}")


if __name__ == "__main__":
    main()
