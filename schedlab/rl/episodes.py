"""Where an environment's episodes come from: one workload, a list, a Lublin-Feitelson workload per
seed, or windows of a trace. Each is a function seed -> Workload, so an episode is reproducible
from the seed `reset(seed=...)` draws it with."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from schedlab.workload import Workload, load_workload, parse_workload

EpisodeSource = Callable[[int], Workload]


def synthetic(*, nb_resources: int = 256, jobs: int = 1024, load: float = 0.9) -> EpisodeSource:
    """A synthetic workload per seed (`schedlab workload generate`'s): users, requests that do not
    tell run times (a share of jobs is killed at its walltime), arrivals at `load`."""
    from schedlab.workloads.synthetic import generate

    return lambda seed: generate(nb_jobs=jobs, nb_resources=nb_resources, seed=seed, load=load)


def lublin(*, nodes: int = 256, jobs: int = 1024, mode: str = "typeless", missing_walltime: str) -> EpisodeSource:
    """A Lublin-Feitelson workload per seed (`schedlab workload lublin`'s, same file for the same
    seed). The model has no user estimate, so `missing_walltime` must say where walltimes come
    from: `factor:2` (twice the run time: the policy studies' and RLScheduler's clairvoyant setting,
    where the request tells the run time) or `max:162754` (one walltime for all, the model's
    longest run: it tells nothing); see ConversionOptions."""
    from schedlab.workloads.convert import ConversionOptions, convert
    from schedlab.workloads.lublin import check_machine, generate, to_trace_jobs

    check_machine(nodes, mode == "typed")
    options = ConversionOptions(missing_walltime=missing_walltime)
    options.validate()

    def make(seed: int) -> Workload:
        generated = generate(nodes=nodes, nb_jobs=jobs, seed=seed, typed=mode == "typed")
        document, _ = convert(to_trace_jobs(generated, nodes=nodes, seed=seed, mode=mode), options,
                              description=generated.header["Note"])
        return parse_workload(json.dumps(document), f"<lublin nodes={nodes} jobs={jobs} seed={seed}>")

    return make


def trace_windows(workload: Workload | str | Path, *, jobs: int) -> EpisodeSource:
    """`jobs` consecutive submissions of a trace, starting at a job drawn from the seed."""
    whole = workload if isinstance(workload, Workload) else load_workload(workload)
    if not 0 < jobs <= len(whole.jobs):
        raise ValueError(f"jobs must be in [1, {len(whole.jobs)}] (the trace's jobs), got {jobs}")

    def make(seed: int) -> Workload:
        import numpy as np

        first = int(np.random.default_rng(seed).integers(len(whole.jobs) - jobs + 1))
        chosen = whole.jobs[first:first + jobs]
        profiles = {job.profile: whole.profiles[job.profile] for job in chosen}
        return Workload(name=whole.name, jobs=chosen, profiles=profiles, nb_res=whole.nb_res,
                        source=f"{whole.source}#jobs[{first}:{first + jobs}]")

    return make


def episode_source(workloads: Any) -> EpisodeSource:
    """A function seed -> Workload from what a user gave: a Workload or a path (always that one),
    a list of them (one drawn per episode) or a function already."""
    if callable(workloads) and not isinstance(workloads, Workload):
        return workloads
    if isinstance(workloads, Workload | str | Path):
        one = workloads if isinstance(workloads, Workload) else load_workload(workloads)
        return lambda seed: one
    if isinstance(workloads, Sequence) and workloads:
        many = [w if isinstance(w, Workload) else load_workload(w) for w in workloads]

        def draw(seed: int) -> Workload:
            import numpy as np

            return many[int(np.random.default_rng(seed).integers(len(many)))]

        return draw
    raise ValueError("workloads: expected a Workload, a path, a non-empty list of them, or a function seed -> Workload")
