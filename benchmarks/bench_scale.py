"""Benchmark (scale issue), jobs: time and peak memory against trace length, each run a whole
`schedlab simulate` process reading a columnar workload (W.parquet) as a stream.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 100000 1000000 10000000]
        [--learning-sizes 100000 1000000] [--learning easy-pp hybrid ...] [--trace SWF] [--keep DIR]

Synthetic workloads (`schedlab workload generate --seed 1 -o W.parquet`, its time apart) on 1,024
resources: EASY at every size; each learning scheduler at the learning sizes, with the growth per
job fitted between the two largest and extrapolated to 10,000,000 jobs. `--trace`: a whole SWF
trace for all (RICC by default when ../shared has it), converted once. Peak memory is the child's
resident set (getrusage); "most jobs held" is summary.json's `most_jobs_held` (queued and running
at once), which a run's memory follows besides the metrics' 32 bytes a job: a policy that starves
jobs in an overloaded stretch holds more as the trace goes on. Goal: EASY on 10,000,000 jobs in
under 10 minutes and 2 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RICC = REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
SCHEDLAB = str(REPO / ".venv" / "bin" / "schedlab")
#: the learning schedulers, each with its training window (train_last: what it holds and each refit's
#: time are then bounded by the window, not by the trace); easy-pp's AdaBoost refits weekly (its
#: documented alternative to daily, 7x fewer fits)
LEARNING = {"easy-pp": ["-O", "predictor=user-last2", "-O", "correction=tsafrir"],
            "diws": ["-O", "learner=user-last2"],
            "easy-predicted-dt": ["-O", "learner=dt", "-O", "refit_s=86400", "-O", "train_last=10000"],
            "hybrid": ["-O", "train_last=10000"],
            "easy-pp-adaboost": ["-O", "predictor=adaboost", "-O", "correction=power", "-O", "refit_s=604800",
                                 "-O", "train_last=10000"]}
GOAL_S, GOAL_MB = 600.0, 2048.0


def measured(argv: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of a child that runs argv and nothing else."""
    probe = (f"import resource, subprocess, time; t = time.perf_counter(); "
             f"subprocess.run({argv!r}, check=True, stdout=subprocess.DEVNULL); "
             f"print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]) / 1024.0


def scheduler_argv(label: str) -> list[str]:
    name = label.split("-adaboost")[0].split("-dt")[0]
    return ["-s", name, *LEARNING.get(label, [])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--learning-sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--learning", nargs="*", default=list(LEARNING), choices=list(LEARNING))
    parser.add_argument("--trace-schedulers", nargs="*", default=["easy", *LEARNING], choices=["easy", *LEARNING])
    parser.add_argument("--trace", type=Path, default=RICC if RICC.is_file() else None)
    parser.add_argument("--keep", type=Path, help="keep the workloads and results here")
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="schedlab-scale-"))
    scratch.mkdir(parents=True, exist_ok=True)

    def workload(n: int) -> Path:
        path = scratch / f"synthetic-{n}.parquet"
        if not path.exists():
            t0 = time.perf_counter()
            subprocess.run([SCHEDLAB, "workload", "generate", "--jobs", str(n), "--resources", "1024", "--seed", "1",
                            "-o", str(path)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(f"  (generated {n:,} jobs in {time.perf_counter() - t0:.0f} s)")
        return path

    def run(label: str, path: Path, platform: str) -> tuple[float, float, int]:
        """Wall s, peak MB and the most jobs the run held at once (queued and running: what its
        memory follows besides the 32 bytes of metrics a job)."""
        out = scratch / f"run-{label}-{path.stem}"
        seconds, mb = measured([SCHEDLAB, "simulate", "-q", "-p", platform, "-w", str(path), *scheduler_argv(label),
                                "-o", str(out)])
        return seconds, mb, json.loads((out / "summary.json").read_text())["most_jobs_held"]

    print("| scheduler | jobs | wall (s) | us per job | peak RSS (MB) | most jobs held |")
    print("|---|---|---|---|---|---|")
    easy: dict[int, tuple[float, float, int]] = {}
    for n in sorted(args.sizes):
        easy[n] = run("easy", workload(n), "1024")
        flag = " (goal met)" if n >= 10_000_000 and easy[n][0] < GOAL_S and easy[n][1] < GOAL_MB else ""
        print(f"| easy | {n:,} | {easy[n][0]:.1f} | {easy[n][0] / n * 1e6:.1f} | {easy[n][1]:.0f}{flag} | "
              f"{easy[n][2]:,} |", flush=True)
    growth = {}
    for label in args.learning:
        points = {}
        for n in sorted(args.learning_sizes):
            points[n] = run(label, workload(n), "1024")
            print(f"| {label} | {n:,} | {points[n][0]:.1f} | {points[n][0] / n * 1e6:.1f} | {points[n][1]:.0f} | "
                  f"{points[n][2]:,} |", flush=True)
        if len(points) >= 2:
            (n1, (t1, m1, _)), (n2, (t2, m2, _)) = sorted(points.items())[-2:]
            growth[label] = ((t2 - t1) / (n2 - n1), (m2 - m1) / (n2 - n1), n2, t2, m2)
    if growth:
        print("\n| scheduler | s per 1M jobs | MB per 1M jobs | 10M extrapolated: s | MB |")
        print("|---|---|---|---|---|")
        for label, (s_job, mb_job, n2, t2, m2) in growth.items():
            more = 10_000_000 - n2
            print(f"| {label} | {s_job * 1e6:.0f} | {mb_job * 1e6:.1f} | {t2 + s_job * more:.0f} | "
                  f"{m2 + mb_job * more:.0f} |")
    if args.trace is not None:
        json_path, columns = scratch / "trace.json", scratch / "trace.parquet"
        if not columns.exists():
            subprocess.run([SCHEDLAB, "workload", "from-swf", str(args.trace), "-o", str(json_path),
                            "--platform-size", "8192"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run([SCHEDLAB, "workload", "columns", str(json_path), "-o", str(columns)], check=True,
                           stdout=subprocess.DEVNULL)
        print(f"\n{args.trace.name} on 8,192 resources (streamed from its columns)")
        print("| scheduler | wall (s) | peak RSS (MB) | most jobs held |")
        print("|---|---|---|---|")
        for label in args.trace_schedulers:
            seconds, mb, held = run(label, columns, "8192")
            print(f"| {label} | {seconds:.1f} | {mb:.0f} | {held:,} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
