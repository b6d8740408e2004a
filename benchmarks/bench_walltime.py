"""Benchmark (walltime issue §6): scheduling time of `easy-pp` (adaboost + power, and the other
predictors) vs `easy` on the COARE trace, and one AdaBoost refit on all its jobs.

    .venv/bin/python benchmarks/bench_walltime.py [--trace SWF]

Goal (the issue): easy-pp / easy scheduling-time ratio <= 3, one refit under 2 s. Refits happen
inside decisions, so they count in easy-pp's scheduling time; the time they took (the scheduler's
`training_time_s`, also in summary.json) is printed apart, with the ratio without them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.predictors.features import SOURCES, job_table
from schedlab.predictors.runtime import RuntimePredictor
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload
from schedlab.workloads.convert import ConversionOptions, convert_columns
from schedlab.workloads.swf import read_swf, to_trace_jobs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO.parent / "shared" / "data" / "swf" / "DOST-ASTI_COARE-Saliksik-2020-cln.swf"
CPUS = 1728


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--cpus", type=int, default=CPUS)
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"no trace at {args.trace} (give --trace)")
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        path = Path(scratch) / "w.json"
        converted, _ = convert_columns(to_trace_jobs(read_swf(args.trace)),
                                       ConversionOptions(max_runtime_s=7 * 86400.0))
        converted.write(str(path))
        workload = load_workload(path)
    jobs = list(workload.jobs)
    runtimes = [workload.profiles[job.profile].delay_s for job in jobs]
    print(f"{args.trace.name}: {len(jobs):,} jobs on {args.cpus:,} CPUs")
    table = job_table(jobs, SOURCES)
    began = time.perf_counter()
    RuntimePredictor(features="coare", model="adaboost", seed=0).fit(table, runtimes)
    refit_s = time.perf_counter() - began
    print(f"one AdaBoost refit on all {len(jobs):,} jobs: {refit_s:.2f} s (goal < 2 s: "
          f"{'met' if refit_s < 2 else 'MISSED'})")
    print(f"\n{'scheduler':<42}{'sched. time (s)':>16}{'vs easy':>9}{'refits':>8}{'of which refits (s)':>21}"
          f"{'without refits vs easy':>24}")
    easy_s = None
    for name, options in (("easy", {}), ("easy-pp", {"predictor": "walltime", "correction": "none"}),
                          ("easy-pp", {"predictor": "user-last2", "correction": "simple"}),
                          ("easy-pp", {"predictor": "default:600", "correction": "power"}),
                          ("easy-pp", {"predictor": "adaboost", "correction": "power"})):
        scheduler = create_scheduler(name, options)
        engine = Engine(Platform.homogeneous(args.cpus), workload, scheduler)
        engine.run()
        easy_s = easy_s or engine.scheduling_time_s
        label = name + "".join(f" {k}={v}" for k, v in options.items())
        deciding = engine.scheduling_time_s - scheduler.training_time_s
        print(f"{label:<42}{engine.scheduling_time_s:>16.2f}{engine.scheduling_time_s / easy_s:>9.2f}"
              f"{getattr(scheduler, 'refits', 0):>8}{scheduler.training_time_s:>21.2f}{deciding / easy_s:>24.2f}",
              flush=True)


if __name__ == "__main__":
    main()
