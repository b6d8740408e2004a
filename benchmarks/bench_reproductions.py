"""Benchmark (issue 30): the wall time of the studies' reproduction campaigns on this machine.

    .venv/bin/python benchmarks/bench_reproductions.py [--studies hybrid/main policies/longterm ...]
        [-o out/bench-reproductions] [--workers 2] [--baseline DIR]

Runs each study's campaign of record (scripts/reproduce.sh's list, minus the factory and the model
studies, which are no campaigns) from scratch into `-o`, timing each whole `schedlab experiment run`,
and prints per study: runs, the measured wall time with `--workers`, and the sum of the runs' own
wall times (what one worker would take). `--baseline DIR` (a directory holding STUDY-NAME/results.parquet,
e.g. an earlier out/reproductions, or this benchmark's `-o` made by another checkout) adds that sum for
the same runs made by other code, and its measured wall time when DIR has this benchmark's
timings.json, side by side, with the ratios. Goal: halve the total wall time. With `--only-read`,
nothing runs: both sides are read. To time an older commit in the same conditions: check it out
beside this one (`git worktree add ../old COMMIT`, with its own .venv), copy this file into its
benchmarks/ and run it there with `-o`, then here with `--baseline` pointing at that output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
STUDIES = ("policies/clairvoyant-authors", "policies/longterm", "walltime/coare", "walltime/coare-7days",
           "hybrid/main", "hybrid/clairvoyance", "hybrid/sensitivity", "diws/ricc")


def runs_sum_s(directory: Path) -> tuple[int, float] | None:
    path = directory / "results.parquet"
    if not path.is_file():
        return None
    results = pd.read_parquet(path, columns=["wall_time_s"])
    return len(results), float(results["wall_time_s"].sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=list(STUDIES))
    parser.add_argument("-o", "--out", type=Path, default=REPO / "out" / "bench-reproductions")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--only-read", action="store_true", help="run nothing: read -o's results and timings")
    args = parser.parse_args()
    timings_path = args.out / "timings.json"
    timings = json.loads(timings_path.read_text()) if timings_path.is_file() else {}
    for study in args.studies:
        if not (REPO / "experiments" / f"{study}.toml").is_file():
            sys.exit(f"no experiments/{study}.toml")
    if not args.only_read:
        for study in args.studies:
            out = args.out / study.replace("/", "-")
            subprocess.run(["rm", "-rf", str(out)], check=True)
            began = time.perf_counter()
            subprocess.run([str(REPO / ".venv" / "bin" / "schedlab"), "experiment", "run",
                            str(REPO / "experiments" / f"{study}.toml"), "-o", str(out), "--workers",
                            str(args.workers), "--quiet"], check=True)
            timings[study] = {"wall_s": time.perf_counter() - began, "workers": args.workers}
            args.out.mkdir(parents=True, exist_ok=True)
            timings_path.write_text(json.dumps(timings, indent=1))
            print(f"{study}: {timings[study]['wall_s']:.0f} s", flush=True)
    base_timings_path = args.baseline / "timings.json" if args.baseline else None
    base_timings = {}
    if base_timings_path and base_timings_path.is_file():
        base_timings = json.loads(base_timings_path.read_text())
    print(f"\n{'study':<30}{'runs':>6}{'wall (s)':>10}{'sum of runs (s)':>17}"
          + (f"{'baseline sum (s)':>18}{'baseline/now':>14}{'baseline wall (s)':>19}{'baseline/now':>14}"
             if args.baseline else ""))
    totals = [0.0, 0.0, 0.0]
    compared_now_s = 0.0  # the sum of runs of the studies the baseline has
    walls = [0.0, 0.0]  # now, baseline: the studies whose baseline wall time was measured
    for study in args.studies:
        name = study.replace("/", "-")
        now = runs_sum_s(args.out / name)
        if now is None:
            print(f"{study:<30}  not run")
            continue
        wall = timings.get(study, {}).get("wall_s", float("nan"))
        line = f"{study:<30}{now[0]:>6}{wall:>10.0f}{now[1]:>17.0f}"
        totals[0] += wall
        totals[1] += now[1]
        if args.baseline:
            before = runs_sum_s(args.baseline / name)
            if before is not None:
                totals[2] += before[1]
                compared_now_s += now[1]
                line += f"{before[1]:>18.0f}{before[1] / now[1]:>14.2f}"
            if study in base_timings:
                base_wall = base_timings[study]["wall_s"]
                walls[0] += wall
                walls[1] += base_wall
                line += f"{base_wall:>19.0f}{base_wall / wall:>14.2f}"
        print(line)
    line = f"{'total':<30}{'':>6}{totals[0]:>10.0f}{totals[1]:>17.0f}"
    if args.baseline and totals[2]:
        line += f"{totals[2]:>18.0f}{totals[2] / compared_now_s:>14.2f}"
    print(line)
    if walls[1]:
        # the studies timed on both sides; the others ran the same code on both (or were not timed)
        same = totals[0] - walls[0]
        ratio = (walls[1] + same) / totals[0]
        print(f"measured wall time, baseline: {walls[1]:.0f} s for the studies it timed + {same:.0f} s for the "
              f"others (taken as now's) = {walls[1] + same:.0f} s; now {totals[0]:.0f} s: {ratio:.2f}x   "
              f"goal >= 2 (halved): {'met' if ratio >= 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
