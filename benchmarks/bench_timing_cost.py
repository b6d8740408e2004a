"""Benchmark (issue 31): what `--timing batsim` costs against `--timing ideal`, whole `schedlab
simulate` processes (interpreter, reading, simulation, outputs), 10,000 jobs at load 1.2, EASY.

    .venv/bin/python benchmarks/bench_timing_cost.py [--jobs N] [--repeat N]

Platforms: cluster512 (Batsim's), and three where routes go through zones of other kinds: Batsim's
properties_example (nested zones, a cluster behind a zoneRoute), the two-level tree (Dijkstra and
Full racks) and small_platform (a Full zone of hand-written routes). Runs alternate; the fastest of
the repeats counts. Goal: batsim / ideal <= 3.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

from schedlab.platform import load_platform
from schedlab.workloads.synthetic import generate

REPO = Path(__file__).resolve().parents[1]
PLATFORMS = {"cluster512": REPO / "tests/data/batsim/cluster512.xml",
             "properties_example": REPO / "tests/data/batsim/properties_example.xml",
             "two_level_tree": REPO / "tests/data/batsim-timing/platforms/two_level_tree.xml",
             "small_platform": REPO / "tests/data/batsim/small_platform.xml"}
GOAL = 3.0


def whole_process_s(platform: Path, workload: Path, timing: str, out: Path) -> float:
    argv = [str(REPO / ".venv" / "bin" / "schedlab"), "simulate", "-q", "-p", str(platform), "-w", str(workload),
            "-s", "easy", "--timing", timing, "-o", str(out)]
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.jobs:,} jobs, load 1.2, easy; whole `schedlab simulate` processes, fastest of {args.repeat}")
    print(f"{'platform':<22}{'hosts':>6}{'ideal (s)':>11}{'batsim (s)':>12}{'ratio':>7}")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        for name, platform in PLATFORMS.items():
            hosts = load_platform(platform).nb_resources
            workload = Path(scratch) / f"{name}.json"
            jobs = generate(nb_jobs=args.jobs, nb_resources=hosts, seed=1, load=1.2)
            workload.write_text(json.dumps(jobs.to_json()))
            times: dict[str, list[float]] = {"ideal": [], "batsim": []}
            for _ in range(args.repeat):
                for timing in times:
                    times[timing].append(whole_process_s(platform, workload, timing, Path(scratch) / timing))
            ideal, batsim = min(times["ideal"]), min(times["batsim"])
            worst = max(worst, batsim / ideal)
            print(f"{name:<22}{hosts:>6}{ideal:>11.2f}{batsim:>12.2f}{batsim / ideal:>7.2f}", flush=True)
    verdict = "met" if worst <= GOAL else "MISSED"
    print(f"\ngoal: --timing batsim within {GOAL:g}x of ideal: worst {worst:.2f} ({verdict})")


if __name__ == "__main__":
    main()
