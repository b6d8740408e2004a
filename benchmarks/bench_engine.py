"""Benchmark: EASY on the embedded engine (in-process and over ZeroMQ) and EASY's decision cost
as the queue grows. Prints figures and ratios measured side by side in one run.

    .venv/bin/python benchmarks/bench_engine.py [--big]   (--big adds the 100,000-job workload)
"""

from __future__ import annotations

import argparse
import sys
import time
from types import MappingProxyType

from procset import ProcSet

from schedlab.engine import Engine
from schedlab.model import Job, JobState, Platform
from schedlab.protocol.client import ExternalDecisionProcess
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate

NB_RES = 512


def in_process(nb_jobs: int, name: str = "easy", seed: int = 1) -> tuple[float, float]:
    workload = generate(nb_jobs=nb_jobs, nb_resources=NB_RES, seed=seed)
    engine = Engine(Platform.homogeneous(NB_RES), workload, create_scheduler(name))
    t0 = time.perf_counter()
    engine.run()
    return time.perf_counter() - t0, engine.scheduling_time_s


def over_zeromq(nb_jobs: int, name: str = "easy", seed: int = 1) -> float:
    workload = generate(nb_jobs=nb_jobs, nb_resources=NB_RES, seed=seed)
    external = ExternalDecisionProcess(f"{sys.executable} -m schedlab serve {name} --socket {{socket}}",
                                       workload=workload, timeout_s=120)
    try:
        engine = Engine(Platform.homogeneous(NB_RES), workload, external)
        t0 = time.perf_counter()
        engine.run()
        return time.perf_counter() - t0
    finally:
        external.close()


def decision_times(queue_length: int, name: str = "easy", repeats: int = 50, *,
                   use_index: bool = True) -> list[float]:
    """Seconds of each decide() after a completion (a full EASY pass) with `queue_length` waiting
    jobs that cannot start: the worst case for a walk of the queue, every candidate is examined
    (`use_index`: EASY's candidate index, or the plain walk)."""
    scheduler = create_scheduler(name)
    scheduler.use_index = use_index
    scheduler.on_simulation_begins(Platform.homogeneous(NB_RES), 0.0)
    blocker = Job("w0!big", 0.0, NB_RES - 1, 1e6, "p", MappingProxyType({}))
    scheduler.on_job_submitted(blocker, 0.0)
    scheduler.decide(0.0)
    for i in range(queue_length):
        scheduler.on_job_submitted(Job(f"w0!{i}", 1.0, 2 + i % 100, 1e5 + i, "p", MappingProxyType({})), 1.0)
    scheduler.decide(1.0)
    times = []
    for r in range(repeats):
        filler = Job(f"w0!f{r}", 2.0 + r, 1, 10.0, "p", MappingProxyType({}))
        scheduler.on_job_submitted(filler, 2.0 + r)
        decisions = scheduler.decide(2.0 + r)  # the filler backfills into the one free resource
        assert decisions and decisions[0].alloc == ProcSet(NB_RES - 1)
        scheduler.on_job_completed(filler.id, JobState.COMPLETED_SUCCESSFULLY, 2.5 + r)
        t0 = time.perf_counter()
        scheduler.decide(2.5 + r)
        times.append(time.perf_counter() - t0)
    return times


def decision_cost(queue_length: int, name: str = "easy", repeats: int = 50) -> float:
    """Mean seconds per decide() of `decision_times`."""
    return sum(decision_times(queue_length, name, repeats)) / repeats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", action="store_true", help="also run 100,000 jobs (about a minute)")
    args = parser.parse_args()
    print(f"EASY, synthetic workloads (load 0.9, seed 1), {NB_RES} resources")
    sizes = [10_000] + ([100_000] if args.big else [])
    for nb_jobs in sizes:
        # This machine's speed varies from run to run: repeat, report the median and the best.
        runs = sorted(in_process(nb_jobs) for _ in range(5 if nb_jobs <= 10_000 else 1))
        wall, sched = runs[len(runs) // 2]
        print(f"  in-process  {nb_jobs:>7} jobs: {wall:7.2f} s  {nb_jobs / wall:9.0f} jobs/s median of {len(runs)} "
              f"(best {nb_jobs / runs[0][0]:.0f} jobs/s; scheduler {sched:.2f} s, engine {wall - sched:.2f} s)")
    for name in ("fcfs", "easy-sjbf"):
        wall, _ = in_process(10_000, name)
        print(f"  in-process  {name:<9} 10000 jobs: {wall:6.2f} s  {10_000 / wall:9.0f} jobs/s")
    wall_local, _ = in_process(10_000)
    wall_zmq = over_zeromq(10_000)
    print(f"  over ZeroMQ (engine REQ <-> schedlab serve REP) 10000 jobs: {wall_zmq:.2f} s "
          f"{10_000 / wall_zmq:.0f} jobs/s; in-process is {wall_zmq / wall_local:.1f}x faster")
    print("EASY decision cost after a completion (full pass, nothing fits)")
    costs = {q: decision_cost(q) for q in (1_000, 10_000)}
    for q, cost in costs.items():
        print(f"  queue {q:>6}: {cost * 1e3:8.3f} ms per decision ({cost / q * 1e9:6.0f} ns per waiting job)")
    print(f"  growth 1k -> 10k: x{costs[10_000] / costs[1_000]:.1f} (linear would be x10, Q log Q x13.3)")


if __name__ == "__main__":
    main()
