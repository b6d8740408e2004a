"""Benchmark (issue 30): FCFS under the dynamic policies WFP3 and UNICEF against FCFS + SPT on the
long-term study's largest window (RICC-2010-2 days 120-135: 93,907 jobs on 8,192 processors).

    .venv/bin/python benchmarks/bench_dynamic.py [--trace RICC.swf.gz] [--start-days 120] [--days 15]
                                                 [--full wfp3,unicef]

A dynamic policy's queue is re-ordered at every decision. FCFS re-scores only the first job of
each (estimate, res) group (schedulers/group_heads.py); `--full` also runs the whole queue re-sorted
at every decision (the array form: what every release before did; wfp3 takes about 5 minutes) and
asserts the same schedule. Scheduling time is the engine's (hooks and decisions); each scheduler
runs in this process, one after the other. Goal: WFP3 and UNICEF <= 5x SPT.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.outputs import job_row
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload
from schedlab.workloads.convert import ConversionOptions, convert_columns
from schedlab.workloads.swf import read_swf, to_trace_jobs

RICC = Path(__file__).resolve().parents[2] / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
PROCESSORS = 8192
GOAL = 5.0


def run(workload, order: str, full: bool) -> tuple[float, list]:
    scheduler = create_scheduler("fcfs", {"queue_order": order})
    if full:
        scheduler._heads = None  # every waiting job re-scored and the queue re-sorted at each decision
    engine = Engine(Platform.homogeneous(PROCESSORS), workload, scheduler)
    engine.run()
    return engine.scheduling_time_s, [job_row(engine.records[j]) for j in engine.finished]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=RICC)
    parser.add_argument("--start-days", type=float, default=120.0, help="the window's start, days after the first job")
    parser.add_argument("--days", type=float, default=15.0)
    parser.add_argument("--full", default="unicef", help="policies also run fully re-sorted (comma list; '' none)")
    args = parser.parse_args()
    if not args.trace.is_file():
        raise SystemExit(f"{args.trace}: not found (give --trace)")
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        path = Path(scratch) / "w.json"
        options = ConversionOptions(start=repr(args.start_days * 86400.0), days=args.days,
                                    missing_walltime="drop", platform_size=PROCESSORS)
        convert_columns(to_trace_jobs(read_swf(args.trace)), options)[0].write(str(path))
        workload = load_workload(path)
    print(f"{args.trace.name} days {args.start_days:g}-{args.start_days + args.days:g}: {len(workload.jobs):,} jobs "
          f"on {PROCESSORS:,} processors, fcfs (no backfilling)")
    print(f"{'queue order':<34}{'scheduling (s)':>16}{'vs spt':>9}{'goal':>7}")
    spt_s, _ = run(workload, "spt", False)
    print(f"{'spt':<34}{spt_s:>16.2f}{1.0:>9.2f}", flush=True)
    full = [name for name in args.full.split(",") if name]
    for order in ("wfp3", "unicef"):
        seconds, rows = run(workload, order, False)
        print(f"{order + ' (group heads)':<34}{seconds:>16.2f}{seconds / spt_s:>9.2f}"
              f"{'met' if seconds / spt_s <= GOAL else 'MISSED':>7}", flush=True)
        if order in full:
            started = time.perf_counter()
            full_s, full_rows = run(workload, order, True)
            assert full_rows == rows, f"{order}: the fully re-sorted queue made another schedule"
            print(f"{order + ' (whole queue re-sorted)':<34}{full_s:>16.2f}{full_s / spt_s:>9.2f}"
                  f"{'':>7}  same schedule; {full_s / seconds:.0f}x slower "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
