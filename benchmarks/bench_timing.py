"""Sensitivity of the metrics to message timing: `--timing ideal` against `--timing batsim` (which
writes real Batsim's jobs.csv, see tests/test_batsim_timing_real.py), per scheduler, side by side.

    .venv/bin/python benchmarks/bench_timing.py [--kth PATH_TO_KTH_SWF_OR_JSON]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedlab.engine import Engine
from schedlab.engine.batsim_network import message_routes
from schedlab.engine.batsim_timed import BatsimTimedEngine
from schedlab.metrics import compute_metrics
from schedlab.outputs import outcomes
from schedlab.platform import load_platform
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload, parse_workload
from schedlab.workloads.synthetic import generate, ties_and_kills

SCHEDULERS = (("fcfs", {}), ("easy", {}), ("easy-sjbf", {}), ("easy", {"reservation": "machines"}))


def metrics(engine) -> dict[str, float]:
    finished = [engine.records[j] for j in engine.finished]
    return compute_metrics(outcomes(finished), engine.platform.nb_resources)


def both(platform_path: Path, workload, name: str, options: dict) -> tuple[dict, dict, float, float]:
    platform = load_platform(platform_path)
    ideal = Engine(platform, workload, create_scheduler(name, options))
    t0 = time.perf_counter()
    ideal.run()
    t1 = time.perf_counter()
    timed = BatsimTimedEngine(platform, workload, create_scheduler(name, options),
                              routes=message_routes(platform_path))
    timed.run()
    return metrics(ideal), metrics(timed), t1 - t0, time.perf_counter() - t1


def row(label: str, ideal: dict, timed: dict, t_ideal: float, t_timed: float) -> str:
    wait = (ideal["mean_waiting_time_s"] - timed["mean_waiting_time_s"]) / timed["mean_waiting_time_s"] * 100
    bsld = (ideal["mean_bounded_slowdown"] - timed["mean_bounded_slowdown"]) / timed["mean_bounded_slowdown"] * 100
    return (f"{label:<44} {timed['mean_waiting_time_s']:>10.0f} {wait:>+8.1f}% "
            f"{timed['mean_bounded_slowdown']:>9.2f} {bsld:>+8.1f}%   {t_ideal:5.2f} s / {t_timed:5.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--kth", help="KTH-SP2 as a Batsim workload (100 cores), e.g. converted from its SWF")
    args = parser.parse_args()
    print("ideal vs batsim timing: mean wait (s) and mean bounded slowdown under batsim timing, and how far "
          "ideal timing is from them")
    print(f"{'workload, scheduler':<44} {'wait':>10} {'ideal Δ':>9} {'bsld':>9} {'ideal Δ':>9}   ideal / batsim run")
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Path(tmp) / "cluster512.xml"
        cluster.write_text(cluster_xml(512))
        for load in (0.9, 1.2):
            for seed in (1, 2):
                workload = generate(nb_jobs=args.jobs, nb_resources=512, seed=seed, load=load)
                for name, options in SCHEDULERS:
                    label = f"{args.jobs} jobs load {load} seed {seed}, {name}{' machines' if options else ''}"
                    print(row(label, *both(cluster, workload, name, options)), flush=True)
        for seed in (1, 2):  # the Lublin model: integer arrivals, whole seconds; walltime = 3 x run time
            path = Path(tmp) / f"lublin{seed}.json"
            subprocess.run([sys.executable, "-m", "schedlab", "workload", "lublin", "--nodes", "512", "--jobs",
                            str(args.jobs), "--seed", str(seed), "--missing-walltime", "factor:3", "--output",
                            str(path)], check=True,
                           stdout=subprocess.DEVNULL)
            workload = load_workload(path)
            for name, options in SCHEDULERS:
                label = f"Lublin {args.jobs} jobs seed {seed}, {name}{' machines' if options else ''}"
                print(row(label, *both(cluster, workload, name, options)), flush=True)
        for seed in (1, 2):
            workload = parse_workload(json.dumps(ties_and_kills(nb_jobs=args.jobs, nb_resources=512, seed=seed)))
            for name, options in SCHEDULERS:
                label = f"ties+kills {args.jobs} jobs seed {seed}, {name}{' machines' if options else ''}"
                print(row(label, *both(cluster, workload, name, options)), flush=True)
        if args.kth:
            kth = load_workload(args.kth)
            path = Path(tmp) / "kth.xml"
            path.write_text(cluster_xml(kth.nb_res or 100))
            print(row(f"KTH-SP2 ({len(kth.jobs)} jobs), easy", *both(path, kth, "easy", {})), flush=True)


if __name__ == "__main__":
    main()
