"""Benchmark: the hybrid scheduler's cost against EASY's on the same workload, and one reliability
retrain on LLNL Atlas. Prints figures and ratios measured side by side in one run.

    .venv/bin/python benchmarks/bench_hybrid.py [--jobs 10000] [--atlas PATH]

Scheduling time is what the engine measures around the hooks and `decide` (reliability retrains
included); the retrain time is also printed apart. Goals (issues 17, 30): the default hybrid / easy
<= 20 per job, all-in; one retrain on Atlas's jobs under 5 s.
"""

from __future__ import annotations

import argparse
import json
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
    scheduler.prepare()  # as every host does before the simulation (models, compiled kernels)
    engine = Engine(Platform.homogeneous(NB_RES), workload, scheduler)
    t0 = time.perf_counter()
    engine.run()
    return time.perf_counter() - t0, engine.scheduling_time_s, scheduler.training_time_s


def atlas_rows(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Reliability rows (Tab. 2 + p^) and accuracies of every Atlas job with a run time (the default
    conversion: run time 0 dropped, jobs without a request kept), replayed as the reliability study
    does (schedlab/experiments/studies/hybrid_reliability.py)."""
    from schedlab.experiments.studies.hybrid_reliability import replay_rows
    from schedlab.workload import parse_workload
    from schedlab.workloads.convert import convert_columns
    from schedlab.workloads.swf import read_swf, to_trace_jobs

    converted = convert_columns(to_trace_jobs(read_swf(path)))[0]
    workload = parse_workload(json.dumps(converted.to_dict()), str(path))
    _, _, rows, _, accuracies = replay_rows(workload)
    return rows, accuracies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--atlas", type=Path, default=ATLAS)
    args = parser.parse_args()

    workload = generate(nb_jobs=args.jobs, nb_resources=NB_RES, seed=1)
    print(f"{args.jobs:,} generated jobs (load 0.9), {NB_RES} cores; scheduling time per job, side by side")
    easy = run(workload, "easy", {})
    print(f"  {'easy':<28} {1e6 * easy[1] / args.jobs:9.1f} us/job   (whole run {easy[0]:.2f} s)")
    for label, name, options in (("online-svf", "online-svf", {}),
                                 ("hybrid (default, gbt-hist)", "hybrid", {}),
                                 ("hybrid (train_last=2000)", "hybrid", {"train_last": 2000}),
                                 ("hybrid (gbt, scikit-learn)", "hybrid", {"reliability": "gbt"}),
                                 ("hybrid (gbt-xgb)", "hybrid", {"reliability": "gbt-xgb"})):
        try:
            wall, sched, train = run(workload, name, options)
        except Exception as exc:
            print(f"  {label:<28} skipped: {exc}")
            continue
        print(f"  {label:<28} {1e6 * sched / args.jobs:9.1f} us/job   ratio {sched / easy[1]:7.1f}   "
              f"without retrains {1e6 * (sched - train) / args.jobs:8.1f} us/job, "
              f"ratio {(sched - train) / easy[1]:6.1f}"
              f"   retrains {train:.2f} s   (whole run {wall:.2f} s)"
              + ("   goal <= 20" if label.startswith("hybrid (default") else ""))

    if not args.atlas.exists():
        print(f"Atlas not found ({args.atlas}): retrain benchmark skipped")
        return
    t0 = time.perf_counter()
    rows, targets = atlas_rows(args.atlas)
    print(f"LLNL Atlas: {len(rows):,} jobs with a run time, rows built in {time.perf_counter() - t0:.1f} s "
          f"(mean accuracy of the online predictions {targets.mean():.3f})")
    from schedlab.predictors.reliability import ReliabilityModel

    for kind in ("gbt-hist", "gbt", "gbt-xgb", "dt"):
        try:
            t0 = time.perf_counter()
            ReliabilityModel(kind=kind, seed=0).fit(rows, targets)
            print(f"  one {kind} retrain on all of them: {time.perf_counter() - t0:.2f} s  (goal < 5 s)")
        except Exception as exc:
            print(f"  {kind}: skipped: {exc}")


if __name__ == "__main__":
    main()
