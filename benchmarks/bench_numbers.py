"""Benchmark: what reading numbers as Batsim reads them costs (schedlab.protocol.batsim_numbers).

Side by side in one run, alternating, best of N rounds each:
- parsing a workload file of 100,000 jobs whose times have 6 decimals (a converted trace's) and one
  whose times are Python's shortest repr of arbitrary doubles (up to 17 digits): `json.loads` (the
  former reading) against `batsim_numbers.loads(strict=False)` (now);
- a `--timing batsim` run of easy-pp (power correction, user-last2) on 2,000 overloaded jobs, whose
  call times and `now` are read back through `reads_as` and whose jobs reach the scheduler through
  `as_sent`, against the same run with both as the identity (the former behaviour).

    .venv/bin/python benchmarks/bench_numbers.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path


def best(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def workload_texts() -> dict[str, str]:
    from schedlab.workloads.synthetic import generate

    doc = generate(nb_jobs=100_000, nb_resources=256, seed=1, load=1.0, max_runtime_s=3600.0).to_json()
    rng = random.Random(1)
    decimals, long = json.loads(json.dumps(doc)), json.loads(json.dumps(doc))
    for job in decimals["jobs"]:
        job["subtime"] = round(job["subtime"] + rng.random(), 6)
    for job in long["jobs"]:
        job["subtime"] = job["subtime"] + rng.random()
    return {"6 decimals": json.dumps(decimals), "17 digits": json.dumps(long)}


def timed_run(platform: Path, workload, identity: bool) -> None:
    import schedlab.engine.batsim_timed as timed
    from schedlab.engine.batsim_network import message_routes
    from schedlab.platform import load_platform
    from schedlab.schedulers.base import create_scheduler

    saved = timed.reads_as, timed.as_sent
    if identity:
        timed.reads_as, timed.as_sent = (lambda value: value), (lambda job: job.view())
    try:
        engine = timed.BatsimTimedEngine(load_platform(platform), workload,
                                         create_scheduler("easy-pp", {"correction": "power"}),
                                         routes=message_routes(platform))
        engine.run()
    finally:
        timed.reads_as, timed.as_sent = saved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from schedlab.platforms.generate import cluster_xml
    from schedlab.protocol import batsim_numbers
    from schedlab.workloads.synthetic import generate

    print("workload parsing, 100,000 jobs (best of rounds, s): json.loads | batsim_numbers.loads | ratio")
    for name, text in workload_texts().items():
        before = after = float("inf")
        for _ in range(args.rounds):  # alternating
            before = min(before, best(lambda text=text: json.loads(text), 1))
            after = min(after, best(lambda text=text: batsim_numbers.loads(text, strict=False), 1))
        print(f"  {name}: {before:.3f} | {after:.3f} | {after / before:.2f}x")

    with tempfile.TemporaryDirectory() as scratch:
        platform = Path(scratch) / "p.xml"
        platform.write_text(cluster_xml(64))
        workload = generate(nb_jobs=2000, nb_resources=64, seed=3, load=1.3, max_runtime_s=3600.0)
        before = after = float("inf")
        for _ in range(args.rounds):
            before = min(before, best(lambda: timed_run(platform, workload, identity=True), 1))
            after = min(after, best(lambda: timed_run(platform, workload, identity=False), 1))
        print("easy-pp under --timing batsim, 2,000 jobs on 64 hosts (best of rounds, s): exact reading | "
              f"RapidJSON's | ratio\n  {before:.3f} | {after:.3f} | {after / before:.2f}x")


if __name__ == "__main__":
    main()
