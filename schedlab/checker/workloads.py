"""The checker's own workloads: small ones where schedulers usually break, and ones that reach the
conditions real traces do (hundreds of starts, jobs between half and the whole machine, platforms
of 100 and 1,000 resources, epoch-scale clocks, no walltime). Profiles are shared and named after
their delay, as many Batsim workloads name them (`delay_3600`): a scheduler that reads run times out
of profile names then has something to read, and the look-ahead check something to change."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from schedlab.model import Job, Profile
from schedlab.workload import Workload


@dataclass(frozen=True)
class CheckWorkload:
    """A workload the check runs, on a platform of `nb_res` resources."""

    label: str
    workload: Workload
    nb_res: int


def build_workload(specs: Iterable[tuple[Any, ...]], name: str = "w0", *, nb_res: int | None = None,
                   source: str | None = None) -> Workload:
    """specs: (job name, submit s, res, run time s, walltime s or None[, extra fields]); one profile
    per job, named after the job (profile names never tell run times); its raw `delay` as given."""
    jobs, profiles = [], {}
    for spec in specs:
        job_name, submit_s, res, runtime_s, walltime_s = spec[:5]
        extra = spec[5] if len(spec) > 5 else {}
        profile = f"p{job_name}"
        profiles[profile] = Profile(profile, "delay", float(runtime_s),
                                    MappingProxyType({"type": "delay", "delay": runtime_s}))
        jobs.append(Job(f"{name}!{job_name}", float(submit_s), int(res),
                        None if walltime_s is None else float(walltime_s), profile, MappingProxyType(dict(extra))))
    jobs.sort(key=lambda job: (job.submit_time_s, job.id))
    return Workload(name=name, jobs=tuple(jobs), profiles=profiles, nb_res=nb_res,
                    source=f"<{name}>" if source is None else source)


def delay_text(delay_s: float) -> str:
    """A delay as a profile name writes it: 3600, 39.999."""
    return str(int(delay_s)) if float(delay_s).is_integer() else repr(float(delay_s))


def named_by_delay(workload: Workload) -> Workload:
    """The workload with one profile per distinct delay, named `delay_<seconds>`."""
    profiles: dict[str, Profile] = {}
    jobs = []
    for job in workload.jobs:
        delay_s = workload.profiles[job.profile].replay_delay_s
        name = f"delay_{delay_text(delay_s)}"
        value: float | int = int(delay_s) if float(delay_s).is_integer() else delay_s
        profiles.setdefault(name, Profile(name, "delay", float(delay_s), MappingProxyType({"type": "delay",
                                                                                             "delay": value})))
        jobs.append(replace(job, profile=name))
    return replace(workload, jobs=tuple(jobs), profiles=profiles)


def edge_case_workloads(nb_res: int, seed: int = 0) -> dict[str, Workload]:
    """Small workloads where schedulers usually break, by name."""
    rng = np.random.default_rng(seed)
    half, quarter = max(1, nb_res // 2), max(1, nb_res // 4)
    cases: dict[str, list[tuple[Any, ...]]] = {}
    # bursts of submissions at the same instants; equal run times make ends coincide too
    cases["simultaneous"] = [(f"b{burst}-{k}", 100 * burst, int(rng.integers(1, half + 1)), 50.0, 60.0)
                             for burst in range(6) for k in range(8)]
    # run times past the walltime (killed there), exactly at it, and just under it
    cases["walltime-kills"] = [(f"k{i}", 7 * i, int(rng.integers(1, quarter + 1)), runtime, 40.0)
                               for i, runtime in enumerate([80.0, 40.0, 39.999, 120.0, 40.0, 5.0] * 5)]
    # jobs as wide as the machine among small ones
    cases["machine-wide"] = [(f"m{i}", 10 * i, nb_res if i % 4 == 0 else int(rng.integers(1, quarter + 1)),
                              float(rng.integers(5, 60)), 100.0) for i in range(30)]
    # sub-second and millisecond jobs (Batsim refuses a delay of 0) at fractional instants, some without a walltime
    cases["sub-second"] = [(f"s{i}", round(0.37 * i, 3), int(rng.integers(1, half + 1)),
                            0.001 if i % 7 == 0 else round(float(rng.uniform(0.001, 0.9)), 3),
                            None if i % 5 == 0 else 1.0) for i in range(40)]
    return {name: build_workload(specs, name=name, nb_res=nb_res) for name, specs in cases.items()}


def trace_like_workload(nb_res: int, nb_jobs: int = 300, seed: int = 1, load: float = 0.95,
                        max_runtime_s: float = 7200.0, name: str = "trace") -> Workload:
    """A generated workload with a queue (5% of jobs killed at their walltime)."""
    from schedlab.workloads.synthetic import generate

    return generate(nb_jobs=nb_jobs, nb_resources=nb_res, seed=seed, load=load, max_runtime_s=max_runtime_s,
                    name=name)


def _all_sizes(nb_res: int, nb_jobs: int, seed: int) -> Workload:
    """Sizes from 1 to the whole machine, half of them between half and the whole machine."""
    rng = np.random.default_rng(seed)
    specs = []
    for i in range(nb_jobs):
        res = int(rng.integers(nb_res // 2 + 1, nb_res + 1)) if i % 2 else int(rng.integers(1, nb_res // 2 + 1))
        if i % 17 == 0:
            res = nb_res
        runtime = float(rng.integers(10, 600))
        specs.append((f"z{i}", 40 * i, res, runtime, float(rng.choice([runtime * 2, runtime, runtime / 2 + 1]))))
    return build_workload(specs, name="sizes", nb_res=nb_res)


def coverage_workloads(seed: int = 3) -> list[CheckWorkload]:
    """The conditions real traces reach and the edge cases do not."""
    epoch = trace_like_workload(16, nb_jobs=120, seed=seed, name="epoch")
    epoch = replace(epoch, jobs=tuple(replace(job, submit_time_s=job.submit_time_s + 1_200_000_000.0)
                                      for job in epoch.jobs))
    no_walltime = trace_like_workload(16, nb_jobs=120, seed=seed + 1, name="no-walltime")
    no_walltime = replace(no_walltime, jobs=tuple(replace(job, walltime_s=None) for job in no_walltime.jobs))
    return [
        CheckWorkload("sizes-100", _all_sizes(100, 120, seed), 100),
        CheckWorkload("wide-1000", trace_like_workload(1000, nb_jobs=150, seed=seed + 2, name="wide"), 1000),
        CheckWorkload("epoch", epoch, 16),
        CheckWorkload("no-walltime", no_walltime, 16),
        CheckWorkload("long-queue", trace_like_workload(16, nb_jobs=700, seed=seed + 3, load=1.6, max_runtime_s=1800.0,
                                                        name="long"), 16),
    ]


def builtin_workloads(nb_res: int) -> list[CheckWorkload]:
    """Every workload of a default check: the edge cases and a trace-like one on `nb_res`
    resources, then the coverage ones on their own platforms; profiles named after their delays."""
    cases = [CheckWorkload(label, workload, nb_res) for label, workload in edge_case_workloads(nb_res).items()]
    cases.append(CheckWorkload("trace", trace_like_workload(nb_res), nb_res))
    cases += coverage_workloads()
    return [replace(case, workload=named_by_delay(case.workload)) for case in cases]
