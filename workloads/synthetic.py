"""A small seeded synthetic workload generator (Poisson arrivals, log-uniform run times, power-of-two
sizes, walltime = run time x an over-estimation factor). For demos, tests and benchmarks; the
Lublin-Feitelson model is the realistic generator."""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np

from schedlab.model import Job, Profile
from schedlab.workload import Workload


def generate(*, nb_jobs: int, nb_resources: int, seed: int, load: float = 0.9,
             min_runtime_s: float = 10.0, max_runtime_s: float = 36_000.0,
             kill_fraction: float = 0.05, nb_users: int = 20, name: str = "w0") -> Workload:
    """Jobs arriving at a rate that offers `load` x the platform's capacity.

    A `kill_fraction` of jobs underestimate their walltime (they get killed at it, as in real
    traces). Extra fields `user`, `mem_gb` and `queue` are drawn so predictors have features.
    """
    if nb_jobs < 0 or nb_resources <= 0:
        raise ValueError("nb_jobs must be >= 0 and nb_resources > 0")
    rng = np.random.default_rng(seed)
    max_exp = int(math.log2(nb_resources))
    sizes = 2 ** rng.integers(0, max_exp + 1, size=nb_jobs)
    serial = rng.random(nb_jobs) < 0.3
    sizes = np.where(serial, 1, sizes)
    runtimes = np.round(np.exp(rng.uniform(math.log(min_runtime_s), math.log(max_runtime_s), nb_jobs)))
    over = rng.choice([1.0, 1.5, 2.0, 4.0, 10.0], size=nb_jobs, p=[0.1, 0.3, 0.3, 0.2, 0.1])
    walltimes = np.ceil(runtimes * over / 60.0) * 60.0
    killed = rng.random(nb_jobs) < kill_fraction
    walltimes = np.where(killed, np.maximum(np.floor(runtimes * 0.5), 1.0), walltimes)
    mean_area = float(np.mean(sizes * runtimes)) if nb_jobs else 1.0
    mean_gap = mean_area / (nb_resources * load)
    submits = np.floor(np.cumsum(rng.exponential(mean_gap, nb_jobs)))
    submits -= submits[0] if nb_jobs else 0
    users = rng.integers(0, nb_users, nb_jobs)
    queues = np.where(runtimes > 3600, "long", "short")
    profiles: dict[str, Profile] = {}
    jobs = []
    for i in range(nb_jobs):
        runtime = float(runtimes[i])
        pname = f"delay{int(runtime)}"
        if pname not in profiles:
            profiles[pname] = Profile(pname, "delay", runtime,
                                      MappingProxyType({"type": "delay", "delay": int(runtime)}))
        extra = {"user": f"u{int(users[i])}", "mem_gb": int(sizes[i]) * 2, "queue": str(queues[i])}
        jobs.append(Job(f"{name}!{i}", float(submits[i]), int(sizes[i]), float(walltimes[i]), pname,
                        MappingProxyType(extra)))
    jobs.sort(key=lambda j: (j.submit_time_s, j.id))
    return Workload(name=name, jobs=tuple(jobs), profiles=profiles, nb_res=nb_resources,
                    source=f"<synthetic seed={seed} jobs={nb_jobs} load={load}>",
                    extra={"generator": {"name": "schedlab.workloads.synthetic", "seed": seed,
                                         "load": load, "nb_jobs": nb_jobs}})
