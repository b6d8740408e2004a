"""Benchmark: how long `schedlab scheduler check` takes, and where the time goes.

The issue's bound: a default check of EASY under 60 s here. Measured side by side in one run: the
default check (built-in workloads only), the same with the user's workload (`-w`, 500 jobs), and
the speed runs alone (the part that runs in this process).

    .venv/bin/python benchmarks/bench_checker.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stdout}{done.stderr}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from schedlab.checker.speed import measure
    from schedlab.schedulers.base import create_scheduler
    from schedlab.workloads.synthetic import generate

    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(tmp) / "mine.json"
        workload.write_text(json.dumps(generate(nb_jobs=500, nb_resources=16, seed=7, load=1.1).to_json()))
        check = [sys.executable, "-m", "schedlab", "scheduler", "check", "easy", "-q"]
        times: dict[str, list[float]] = {"default": [], "with -w (500 jobs)": [], "speed runs alone": []}
        for _ in range(args.rounds):
            times["default"].append(wall(check))
            times["with -w (500 jobs)"].append(wall([*check, "-w", str(workload)]))
            started = time.perf_counter()
            measure(lambda: create_scheduler("easy"), 16)
            times["speed runs alone"].append(time.perf_counter() - started)
    print(f"scheduler check easy, {args.rounds} rounds (median; all rounds)")
    for label, values in times.items():
        print(f"   {label:22s} {statistics.median(values):6.2f} s   {', '.join(f'{v:.2f}' for v in values)}")
    print(f"   default / 60 s bound = {statistics.median(times['default']) / 60:.2f}")


if __name__ == "__main__":
    main()
