"""A dependency-light trainer: the cross-entropy method over a linear scoring policy's weights
(schedulers/linear_policy.py), each candidate played through `SchedulingEnv` episodes.

A candidate's fitness is the mean over the training workloads of log(its mean bounded slowdown /
FCFS's on that workload): workloads of very different loads count alike. Each generation draws
`population` weight vectors from a normal distribution, keeps the best `elite` share, and moves the
distribution to them (mean and standard deviation, with a floor that keeps it exploring). Every
random draw comes from `seed`, and runs are the same whatever the number of workers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedlab.interrupts import worker_process
from schedlab.schedulers.linear_policy import BASIS, LinearScoringPolicy


@dataclass(frozen=True)
class Setting:
    """What an episode is: a Lublin-Feitelson workload per seed on `nodes` resources, the layout."""

    nodes: int = 256
    jobs: int = 1024
    max_queue: int = 32
    backfill: bool = False
    mode: str = "typeless"
    #: the model has no user estimate: factor:2 (walltime = 2 x run time) is the policy studies' and
    #: RLScheduler's clairvoyant setting; max:162754 (the model's longest run) tells nothing
    missing_walltime: str = "factor:2"

    def settings(self) -> dict[str, Any]:
        """The observation the policies see (what a saved policy records)."""
        from schedlab.schedulers.agent import AgentScheduler

        return AgentScheduler(max_queue=self.max_queue, backfill=self.backfill).observation_settings()

    def workload(self, seed: int) -> Any:
        from schedlab.rl.episodes import lublin

        return lublin(nodes=self.nodes, jobs=self.jobs, mode=self.mode, missing_walltime=self.missing_walltime)(seed)


@dataclass
class History:
    """What training did, generation by generation (the policy file's card keeps it)."""

    best_fitness: list[float] = field(default_factory=list)
    mean_fitness: list[float] = field(default_factory=list)
    mean_weights: list[list[float]] = field(default_factory=list)


def play_bsld(weights: Sequence[float], setting: Setting, seed: int) -> float:
    """Mean bounded slowdown of one episode (the workload of `seed`) under the linear policy."""
    from schedlab.rl.env import SchedulingEnv

    policy = LinearScoringPolicy(weights, settings=setting.settings())
    env = SchedulingEnv(platform=setting.nodes, workloads=setting.workload(seed), max_queue=setting.max_queue,
                        backfill=setting.backfill, invalid_action="raise")
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(policy(obs, info["action_mask"]))
    return float(info["metrics"]["mean_bounded_slowdown"])


def baseline_bsld(setting: Setting, seed: int, scheduler: str = "fcfs", queue_order: str = "fcfs") -> float:
    """Mean bounded slowdown of a shipped scheduler on the workload of `seed`."""
    import schedlab

    result = schedlab.simulate(setting.nodes, setting.workload(seed), scheduler, options={"queue_order": queue_order})
    return float(result.metrics["mean_bounded_slowdown"])


def _fitness(task: tuple[Sequence[float], Setting, Sequence[int], Sequence[float]]) -> float:
    weights, setting, seeds, references = task
    return float(np.mean([math.log(play_bsld(weights, setting, seed) / reference)
                          for seed, reference in zip(seeds, references, strict=True)]))


def train(setting: Setting, *, train_seeds: Sequence[int], generations: int = 10, population: int = 16,
          elite: float = 0.25, seed: int = 0, workers: int = 1, initial_std: float = 1.0, min_std: float = 0.05,
          progress: Callable[[int, float], None] | None = None) -> tuple[LinearScoringPolicy, History]:
    """The policy of the final distribution's mean, and the history of training."""
    if generations < 1 or population < 2 or not 0 < elite <= 1:
        raise ValueError("generations >= 1, population >= 2 and elite in (0, 1] are needed")
    rng = np.random.default_rng(seed)
    references = [baseline_bsld(setting, s) for s in train_seeds]
    mean = np.zeros(len(BASIS))
    std = np.full(len(BASIS), initial_std)
    nb_elite = max(1, round(elite * population))
    history = History()
    pool = ProcessPoolExecutor(workers, initializer=worker_process) if workers > 1 else None
    try:
        for generation in range(generations):
            candidates = mean + std * rng.standard_normal((population, len(BASIS)))
            candidates[0] = mean  # the current mean is always scored (elitism of the distribution)
            tasks = [(list(c), setting, list(train_seeds), references) for c in candidates]
            scores = np.array(list(pool.map(_fitness, tasks)) if pool else [_fitness(t) for t in tasks])
            order = np.argsort(scores, kind="stable")  # lower log-ratio is better
            chosen = candidates[order[:nb_elite]]
            mean = chosen.mean(axis=0)
            std = np.maximum(chosen.std(axis=0), min_std)
            history.best_fitness.append(float(scores[order[0]]))
            history.mean_fitness.append(float(scores.mean()))
            history.mean_weights.append([float(w) for w in mean])
            if progress is not None:
                progress(generation, float(scores[order[0]]))
    finally:
        if pool is not None:
            pool.shutdown()
    card = {"trainer": "cross-entropy method (schedlab.rl.cem)", "seed": seed, "generations": generations,
            "population": population, "elite": elite, "train_seeds": list(train_seeds),
            "workloads": {"generator": "lublin", "nodes": setting.nodes, "jobs": setting.jobs, "mode": setting.mode,
                          "missing_walltime": setting.missing_walltime},
            "fitness": "mean over the training workloads of log(mean bounded slowdown / FCFS's)",
            "best_fitness": history.best_fitness, "mean_fitness": history.mean_fitness}
    return LinearScoringPolicy(mean, settings=setting.settings(), card=card), history
