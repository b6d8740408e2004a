"""Benchmark: the hybrid scheduler's cost against EASY's on the same workload, and one reliability
retrain on LLNL Atlas. Prints figures and ratios measured side by side in one run.

    .venv/bin/python benchmarks/bench_hybrid.py [--jobs 10000] [--atlas PATH]

Scheduling time is what the engine measures around the hooks and `decide` (reliability retrains
included); the retrain time is also printed apart. Goals (issue 17): hybrid / easy <= 20 per job,
one retrain on Atlas's jobs under 5 s.
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import time
from pathlib import Path

import numpy as np

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate

NB_RES = 512
ATLAS = Path(__file__).resolve().parents[2] / "shared/data/swf/LLNL-Atlas-2006-2.1-cln.swf.gz"


def run(workload, name: str, options: dict[str, str]) -> tuple[float, float, float]:
    scheduler = create_scheduler(name, options)
    engine = Engine(Platform.homogeneous(NB_RES), workload, scheduler)
    t0 = time.perf_counter()
    engine.run()
    return time.perf_counter() - t0, engine.scheduling_time_s, scheduler.training_time_s


def atlas_rows(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Reliability rows (Tab. 2 + p^) and accuracies of every Atlas job with a run time, replayed in
    trace order: predictions from the online regression, history updated at completions."""
    from schedlab.predictors.history import CompletionHistory
    from schedlab.predictors.online import NormalizedRegression, accuracy, predictor_row, reliability_row

    jobs = []
    with gzip.open(path, "rt") as lines:
        for line in lines:
            if line.startswith(";") or not line.strip():
                continue
            f = line.split()
            run_s, procs = float(f[3]), float(f[7]) if float(f[7]) > 0 else float(f[4])
            if run_s > 0 and procs > 0:
                jobs.append((float(f[1]), max(float(f[2]), 0.0), run_s, max(float(f[8]), 0.0), procs, f[11]))
    history, model = CompletionHistory(), NormalizedRegression()
    pending: list = []
    rows, targets = [], []
    for k, (submit, wait, run_s, requested, procs, user) in enumerate(jobs):
        while pending and pending[0][0] <= submit:
            end, _, row, done_s, done_user, cores = heapq.heappop(pending)
            history.record(user=done_user, runtime_s=done_s, cores=cores, end_s=end)
            model.partial_fit([row], [done_s])
        history_row = history.row(user, submit, requested, procs, submit)
        row = predictor_row(history_row, requested, len(pending), 0.0)
        predicted = float(model.predict([row])[0])
        predicted = min(max(predicted, 1.0), requested) if requested > 0 else max(predicted, 1.0)
        rows.append(reliability_row(history_row, requested, predicted))
        targets.append(float(accuracy(predicted, run_s)))
        heapq.heappush(pending, (submit + wait + run_s, k, row, run_s, user, procs))
    return np.array(rows), np.array(targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--atlas", type=Path, default=ATLAS)
    args = parser.parse_args()

    workload = generate(nb_jobs=args.jobs, nb_resources=NB_RES, seed=1)
    print(f"{args.jobs:,} generated jobs (load 0.9), {NB_RES} cores; scheduling time per job, side by side")
    easy = run(workload, "easy", {})
    print(f"  {'easy':<28} {1e6 * easy[1] / args.jobs:9.1f} us/job   (whole run {easy[0]:.2f} s)")
    for label, name, options in (("online-svf", "online-svf", {}), ("hybrid (gbt)", "hybrid", {}),
                                 ("hybrid (gbt-xgb)", "hybrid", {"reliability": "gbt-xgb"})):
        try:
            wall, sched, train = run(workload, name, options)
        except Exception as exc:
            print(f"  {label:<28} skipped: {exc}")
            continue
        print(f"  {label:<28} {1e6 * sched / args.jobs:9.1f} us/job   ratio {sched / easy[1]:7.1f}   "
              f"without retrains {1e6 * (sched - train) / args.jobs:8.1f} us/job, "
              f"ratio {(sched - train) / easy[1]:6.1f}"
              f"   retrains {train:.2f} s   (whole run {wall:.2f} s)")

    if not args.atlas.exists():
        print(f"Atlas not found ({args.atlas}): retrain benchmark skipped")
        return
    t0 = time.perf_counter()
    rows, targets = atlas_rows(args.atlas)
    print(f"LLNL Atlas: {len(rows):,} jobs with a run time, rows built in {time.perf_counter() - t0:.1f} s "
          f"(mean accuracy of the online predictions {targets.mean():.3f})")
    from schedlab.predictors.reliability import ReliabilityModel

    for kind in ("gbt", "gbt-xgb", "dt"):
        try:
            t0 = time.perf_counter()
            ReliabilityModel(kind=kind, seed=0).fit(rows, targets)
            print(f"  one {kind} retrain on all of them: {time.perf_counter() - t0:.2f} s  (goal < 5 s)")
        except Exception as exc:
            print(f"  {kind}: skipped: {exc}")


if __name__ == "__main__":
    main()
