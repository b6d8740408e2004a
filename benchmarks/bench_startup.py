"""Benchmark: whole-process start-up of the CLI (every command pays it), side by side with a bare
`python -c pass` and a 300-job simulation. Goal (issue 28): `--version` and `platform list` < 0.3 s.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 0.3


def best_of(command: list[str], repeat: int) -> float:
    """The best wall time of `repeat` runs: start-up noise on a shared machine only adds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "schedlab"]
    with tempfile.TemporaryDirectory() as tmp:
        workload = str(Path(tmp) / "w.json")
        subprocess.run([*cli, "workload", "generate", "--jobs", "300", "--resources", "256", "--seed", "1",
                        "-o", workload], check=True, stdout=subprocess.DEVNULL)
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "schedlab --version": [*cli, "--version"],
            "schedlab platform list": [*cli, "platform", "list"],
            "schedlab --help": [*cli, "--help"],
            "schedlab simulate (300 jobs, easy)": [*cli, "simulate", "-p", "lublin256", "-w", workload, "-s", "easy",
                                                   "-o", str(Path(tmp) / "out"), "-q"],
        }
        bare = None
        print(f"{'command':<38} {'best s':>7} {'/ python':>9}  goal")
        for label, command in cases.items():
            elapsed = best_of(command, args.repeat)
            bare = bare or elapsed
            goal = f"< {GOAL_S} s: {'met' if elapsed < GOAL_S else 'MISSED'}" if label in (
                "schedlab --version", "schedlab platform list") else ""
            print(f"{label:<38} {elapsed:7.3f} {elapsed / bare:8.1f}x  {goal}")


if __name__ == "__main__":
    main()
