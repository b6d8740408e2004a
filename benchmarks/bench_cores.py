"""Benchmark (scale issue), cores: a campaign of Lublin workloads (EASY with four queue orders, and
the hybrid) on this machine's cores, and the makespan the runner would give on more workers,
predicted from the measured task times.

    .venv/bin/python benchmarks/bench_cores.py [--workloads 32] [--jobs 10000] [--workers 2] [--predict 4 16]

1. The parent's serial sections, timed: reading the campaign and expanding it (the workloads are
   generated there, before any run starts).
2. The campaign with 1 worker, then with `--workers` (fresh output folders): wall times, and each
   run's own time (results' `wall_time_s`) in both, whose ratio says what sharing the machine costs.
3. The model: the runner's tasks for W workers (`runner.batches`: its grouping and order), each
   lasting the sum of its runs' one-worker times, dispatched as the pool does (the next task to the
   first free worker), plus the serial sections; the critical path is max(longest task, total / W).
   Predicted at `--workers` beside the measured figure, then at each `--predict`, with the tasks
   longest expected first (the runner's order) and in plan order (before it).
"""

from __future__ import annotations

import argparse
import heapq
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from schedlab.experiments.campaigns.campaign import campaign_from_doc
from schedlab.experiments.campaigns.plan import expand
from schedlab.experiments.campaigns.runner import batches, run_campaign


def campaign(workloads: int, jobs: int) -> dict:
    return {"name": "cores", "seeds": list(range(1, workloads + 1)),
            "workloads": [{"name": "lublin", "lublin": {"nodes": 256, "jobs": jobs, "mode": "typed",
                                                          "missing_walltime": "factor:2"}}],
            "platforms": [{"name": "c256", "resources": 256}],
            "schedulers": [{"name": "easy", "options": {"queue_order": ["fcfs", "spt", "saf", "f1"]}},
                           {"name": "hybrid"}]}


def makespan(durations: list[float], workers: int) -> float:
    """The pool's dispatch: each task, in order, to the first worker free."""
    free = [0.0] * workers
    for duration in durations:
        heapq.heappush(free, heapq.heappop(free) + duration)
    return max(free)


def plan_order(runs: list, workers: int) -> list[list]:
    """The runner's tasks before the longest-first order: by workload, in plan order."""
    groups: dict[str, list] = {}
    for run in runs:
        groups.setdefault(run.workload_path, []).append(run)
    size = max(1, -(-len(runs) // (4 * workers)))
    return [group[i:i + size] for group in groups.values() for i in range(0, len(group), size)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=32)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--predict", type=int, nargs="*", default=[4, 16])
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="schedlab-cores-"))
    doc = campaign(args.workloads, args.jobs)

    expand(campaign_from_doc(campaign(1, 100), scratch / "campaign.toml"), scratch / "warm-up")  # imports, once
    t0 = time.perf_counter()
    runs = expand(campaign_from_doc(doc, scratch / "campaign.toml"), scratch / "w1")
    serial_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    expand(campaign_from_doc(doc, scratch / "campaign.toml"), scratch / "parallel", workers=args.workers)
    parallel_s = time.perf_counter() - t0
    print(f"{len(runs)} runs: {args.workloads} Lublin workloads of {args.jobs:,} jobs on 256 resources, EASY x4 "
          f"queue orders and the hybrid; the parent's sections before the runs (campaign read, workloads made): "
          f"{serial_s:.1f} s by one process, {parallel_s:.1f} s by {args.workers} (expand(workers=))")

    measured = {}
    times = {}
    for workers in (1, args.workers):
        out = scratch / f"w{workers}"
        plan = runs if workers == 1 else expand(campaign_from_doc(doc, scratch / "campaign.toml"), out)
        t0 = time.perf_counter()
        rows = run_campaign(plan, out, workers=workers)
        measured[workers] = time.perf_counter() - t0
        times[workers] = {row["run_id"]: row["wall_time_s"] for row in rows}
        assert all(row["complete"] for row in rows)
    dask_s = None
    try:
        import distributed  # noqa: F401

        out = scratch / f"dask{args.workers}"
        plan = expand(campaign_from_doc(doc, scratch / "campaign.toml"), out)
        t0 = time.perf_counter()
        rows = run_campaign(plan, out, workers=args.workers, dask="local")
        dask_s = time.perf_counter() - t0
        times["dask"] = {row["run_id"]: row["wall_time_s"] for row in rows}
    except ImportError:
        pass
    alone = times[1]
    by_scheduler = pd.DataFrame([{"scheduler": run.scheduler, "alone": alone[run.id],
                                  "shared": times[args.workers][run.id],
                                  **({"dask": times["dask"][run.id]} if "dask" in times else {})} for run in runs])
    ratio = by_scheduler.groupby("scheduler").mean(numeric_only=True)
    ratio["shared / alone"] = ratio["shared"] / ratio["alone"]
    if "dask" in ratio:
        ratio["dask / alone"] = ratio["dask"] / ratio["alone"]
    print(f"\nmean run time (s), alone and beside the others (workers = {args.workers}):")
    print(ratio.round(3).to_string())

    def predicted(workers: int, order) -> tuple[float, float]:
        """The runs' phase on `workers`: the pool's dispatch of the tasks, and the critical path."""
        tasks = [sum(alone[run.id] for run in task) for task in order(runs, workers)]
        return makespan(tasks, workers), max(max(tasks), sum(tasks) / workers)

    one = serial_s + measured[1]
    print("\nwhole campaign (the parent's section, by one process then in parallel, + the runs):")
    print("| workers | measured (s) | predicted, longest first (s) | predicted, plan order (s) | critical path (s) "
          "| speed-up (predicted, longest first) |")
    print("|---|---|---|---|---|---|")
    for workers in sorted({1, args.workers, *args.predict}):
        section = serial_s / workers if workers > 1 else serial_s  # generation is spread over the workers
        lpt, critical = predicted(workers, batches)
        plain, _ = predicted(workers, plan_order)
        seen = "-"
        if workers in measured:
            seen = f"{(serial_s if workers == 1 else parallel_s) + measured[workers]:.1f}"
        print(f"| {workers} | {seen} | {section + lpt:.1f} | {section + plain:.1f} | {section + critical:.1f} | "
              f"{one / (section + lpt):.1f}x |")
    if args.workers in measured:
        print(f"\nmeasured speed-up on {args.workers} workers: {one / (parallel_s + measured[args.workers]):.2f}x "
              f"(one worker {one:.1f} s); the runs' phase alone {measured[1] / measured[args.workers]:.2f}x")
    if dask_s is not None:
        print(f"the runs' phase under --dask local with {args.workers} workers: {dask_s:.1f} s against the pool's "
              f"{measured[args.workers]:.1f} s ({dask_s / measured[args.workers]:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
