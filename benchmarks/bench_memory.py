"""Benchmark (issue 30): peak memory of the learning schedulers against EASY's on the whole RICC
trace (447,794 jobs on 8,192 cores), each in a process of its own.

    .venv/bin/python benchmarks/bench_memory.py [--trace SWF] [--jobs N] [--schedulers easy hybrid ...]

Each run is `schedlab simulate` (the whole process: interpreter, workload, outputs); its peak
resident set comes from the kernel (`getrusage(RUSAGE_CHILDREN)` after the child exits). Printed
beside EASY's with the ratio; goal: <= 2x EASY. `--jobs N` keeps the first N jobs (a quicker look;
the whole trace is the figure of record).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RICC = REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
SCHEDULERS = {"easy": [], "easy-pp": ["-O", "predictor=user-last2", "-O", "correction=simple"],
              "easy-pp-adaboost": ["-O", "predictor=adaboost", "-O", "correction=power"],
              "hybrid": [], "diws": ["-O", "learner=user-last2"]}
GOAL = 2.0


def peak_rss_mb(argv: list[str]) -> tuple[float, float]:
    """Run argv in a child that runs nothing else; its peak RSS (MB) and wall time (s)."""
    probe = (f"import resource, subprocess, sys, time; t = time.perf_counter(); "
             f"subprocess.run({argv!r}, check=True, stdout=subprocess.DEVNULL); "
             f"print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024.0, float(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=RICC)
    parser.add_argument("--jobs", type=int, default=0, help="the first N jobs only (0: all)")
    parser.add_argument("--schedulers", nargs="+", default=["easy", "easy-pp", "hybrid"], choices=list(SCHEDULERS))
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"{args.trace}: not found (give --trace)")
    schedlab = str(REPO / ".venv" / "bin" / "schedlab")
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        workload = Path(scratch) / "w.json"
        convert = [schedlab, "workload", "from-swf", str(args.trace), "-o", str(workload), "--platform-size", "8192"]
        if args.jobs:
            convert += ["--first", str(args.jobs)]
        subprocess.run(convert, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        platform = Path(scratch) / "cluster8192.xml"
        subprocess.run([schedlab, "platform", "generate", "--hosts", "8192", "-o", str(platform)], check=True,
                       stdout=subprocess.DEVNULL)
        nb_jobs = workload.read_text().count('"subtime"')
        print(f"{args.trace.name}: {nb_jobs:,} jobs on 8,192 cores; peak RSS of the whole `schedlab simulate` process")
        print(f"{'scheduler':<20}{'peak RSS (MB)':>15}{'vs easy':>9}{'wall (s)':>10}")
        easy_mb = None
        for name in ["easy", *[s for s in args.schedulers if s != "easy"]]:
            argv = [schedlab, "simulate", "-p", str(platform), "-w", str(workload), "-s", name.split("-adaboost")[0],
                    "-o", str(Path(scratch) / name), *SCHEDULERS[name]]
            mb, wall = peak_rss_mb(argv)
            easy_mb = easy_mb or mb
            verdict = "" if name == "easy" else ("met" if mb / easy_mb <= GOAL else "MISSED")
            print(f"{name:<20}{mb:>15.0f}{mb / easy_mb:>9.2f}{wall:>10.0f}  {verdict}", flush=True)


if __name__ == "__main__":
    main()
