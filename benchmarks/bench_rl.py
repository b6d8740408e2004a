"""Benchmark (learned schedulers issue): the Gymnasium environment's steps per second, one env and a
vector of 2 (sync and async), beside EASY's decisions per second and the same policy run as a
Scheduler (`PolicyScheduler` under the engine), all in one run on the same workload.

    .venv/bin/python benchmarks/bench_rl.py [--jobs 10000] [--nodes 256] [--repeat 3]

Goals: at least 10,000 steps/s for one env on 256 resources; the env's time per episode at most 3x
the equivalent Scheduler's. Each figure is the best of `--repeat` runs (the machine's noise is
one-sided). Policies: `first` (the first allowed action: the environment's own cost) and `shortest`
(numpy over the observation: the shortest requested time allowed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np

import schedlab
from schedlab.rl.env import SchedulingEnv
from schedlab.rl.episodes import lublin
from schedlab.schedulers.agent import PolicyScheduler

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "data"))
from policies import first_allowed, shortest_requested

POLICIES = {"first": first_allowed, "shortest": shortest_requested}
STEPS_GOAL = 10_000
OVERHEAD_GOAL = 3.0


def best_of(repeat: int, run) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - t0)
    return best, value


def episode(workload, policy, backfill: bool) -> int:
    env = SchedulingEnv(platform=workload.nb_res, workloads=workload, backfill=backfill)
    obs, info = env.reset(seed=0)
    steps, done = 0, False
    while not done:
        obs, _, done, _, info = env.step(policy(obs, info["action_mask"]))
        steps += 1
    return steps


def vector_steps(workload, vector, nb_steps: int) -> int:
    def make():
        return SchedulingEnv(platform=workload.nb_res, workloads=workload)

    envs = vector([make, make])
    _, info = envs.reset(seed=[0, 1])
    for _ in range(nb_steps):
        actions = np.array([int(np.flatnonzero(mask)[0]) for mask in info["action_mask"]])
        _obs, _, _, _, info = envs.step(actions)
    envs.close()
    return 2 * nb_steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--nodes", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    workload = lublin(nodes=args.nodes, jobs=args.jobs, missing_walltime="factor:2")(1)
    print(f"Lublin-Feitelson typeless, {args.jobs:,} jobs on {args.nodes} resources (walltimes factor:2); "
          f"best of {args.repeat}")

    easy_s, easy = best_of(args.repeat, lambda: schedlab.simulate(args.nodes, workload, "easy"))
    nb_easy = easy.summary["timing"]["nb_decisions"]  # type: ignore[attr-defined]
    print(f"\nEASY: {easy_s:.2f} s, {nb_easy:,} decisions, {nb_easy / easy_s:,.0f} decisions/s")

    print("\n| policy | backfill | env steps | env s | env steps/s | Scheduler s | env / Scheduler |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for label, policy in POLICIES.items():
        for backfill in (False, True):
            env_s, steps = best_of(args.repeat, lambda p=policy, b=backfill: episode(workload, p, b))
            sched_s, _ = best_of(args.repeat, lambda p=policy, b=backfill: schedlab.simulate(
                args.nodes, workload, PolicyScheduler(policy=p, backfill=b)))
            rate = steps / env_s  # type: ignore[operator]
            ratio = env_s / sched_s
            worst = max(worst, ratio)
            flag = " (UNDER)" if rate < STEPS_GOAL and label == "first" and not backfill else ""
            print(f"| {label} | {backfill} | {steps:,} | {env_s:.2f} | {rate:,.0f}{flag} | {sched_s:.2f} | "
                  f"{ratio:.2f}{' (OVER)' if ratio > OVERHEAD_GOAL else ''} |")

    print("\n| vector of 2 (first allowed) | steps | s | steps/s |")
    print("|---|---|---|---|")
    for name, vector in (("SyncVectorEnv", gymnasium.vector.SyncVectorEnv),
                         ("AsyncVectorEnv", gymnasium.vector.AsyncVectorEnv)):
        seconds, steps = best_of(args.repeat, lambda v=vector: vector_steps(workload, v, 5_000))
        print(f"| {name} | {steps:,} | {seconds:.2f} | {steps / seconds:,.0f} |")  # type: ignore[operator]
    print(f"\ngoals: >= {STEPS_GOAL:,} steps/s for one env (policy 'first'); env / Scheduler <= {OVERHEAD_GOAL}x "
          f"(worst {worst:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
