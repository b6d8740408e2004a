"""A small seeded synthetic workload generator (Poisson arrivals, log-uniform run times, power-of-two
sizes, walltime = run time x an over-estimation factor). For demos, tests and benchmarks; the
Lublin-Feitelson model is the realistic generator.

Jobs are drawn in fixed-size chunks from one seeded generator, so a workload of any size streams to
its file in bounded memory and the same seed gives the same jobs whether they are built in memory
(`generate`) or written (`write_generated`).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from schedlab.errors import InputError
from schedlab.model import Job, Profile
from schedlab.workload import StreamedWorkload, Workload

CHUNK_JOBS = 65_536
_OVER_FACTORS = (1.0, 1.5, 2.0, 4.0, 10.0)
_OVER_WEIGHTS = (0.1, 0.3, 0.3, 0.2, 0.1)
_SERIAL_SHARE = 0.3


@dataclass(frozen=True)
class SyntheticSpec:
    nb_jobs: int
    nb_resources: int
    seed: int
    load: float = 0.9
    min_runtime_s: float = 10.0
    max_runtime_s: float = 36_000.0
    kill_fraction: float = 0.05
    nb_users: int = 20
    name: str = "w0"

    def validate(self) -> None:
        if self.nb_jobs < 0:
            raise InputError(f"--jobs must be >= 0, got {self.nb_jobs}")
        if self.nb_resources <= 0:
            raise InputError(f"--resources must be > 0, got {self.nb_resources}")
        if not (self.load > 0 and math.isfinite(self.load)):
            raise InputError(f"--load must be a finite number > 0, got {self.load}")
        if not 0 < self.min_runtime_s <= self.max_runtime_s:
            raise InputError("run times need 0 < min_runtime_s <= max_runtime_s")
        if not 0 <= self.kill_fraction <= 1 or self.nb_users < 1:
            raise InputError("kill_fraction must be in [0, 1] and nb_users >= 1")

    def mean_gap_s(self) -> float:
        """Mean inter-arrival time offering `load` x the platform's capacity, from the expected job
        area (sizes and run times are drawn independently), so no job needs to be drawn first."""
        max_exp = int(math.log2(self.nb_resources))
        mean_parallel = float(np.mean(2.0 ** np.arange(max_exp + 1)))
        mean_size = _SERIAL_SHARE + (1 - _SERIAL_SHARE) * mean_parallel
        low, high = self.min_runtime_s, self.max_runtime_s
        mean_runtime = low if high == low else (high - low) / math.log(high / low)
        return mean_size * mean_runtime / (self.nb_resources * self.load)

    def generator_info(self) -> dict[str, object]:
        return {"name": "schedlab.workloads.synthetic", "seed": self.seed, "load": self.load,
                "nb_jobs": self.nb_jobs}


@dataclass(frozen=True)
class Chunk:
    first_index: int
    submit_s: np.ndarray
    res: np.ndarray
    walltime_s: np.ndarray
    runtime_s: np.ndarray
    users: np.ndarray


def chunks(spec: SyntheticSpec) -> Iterator[Chunk]:
    """The jobs of `spec`, CHUNK_JOBS at a time, in submission order (the same every time)."""
    spec.validate()
    rng = np.random.default_rng(spec.seed)
    max_exp = int(math.log2(spec.nb_resources))
    gap = spec.mean_gap_s()
    clock = 0.0
    origin: float | None = None
    for first in range(0, spec.nb_jobs, CHUNK_JOBS):
        n = min(CHUNK_JOBS, spec.nb_jobs - first)
        sizes = 2 ** rng.integers(0, max_exp + 1, size=n)
        sizes = np.where(rng.random(n) < _SERIAL_SHARE, 1, sizes)
        runtimes = np.round(np.exp(rng.uniform(math.log(spec.min_runtime_s), math.log(spec.max_runtime_s), n)))
        over = rng.choice(_OVER_FACTORS, size=n, p=_OVER_WEIGHTS)
        walltimes = np.ceil(runtimes * over / 60.0) * 60.0
        # Under-estimates are whole minutes too (about half the run time, at least 1 min): a walltime
        # that is not a whole number of minutes would single out the jobs about to be killed.
        killed = rng.random(n) < spec.kill_fraction
        walltimes = np.where(killed, np.maximum(np.floor(runtimes * 0.5 / 60.0), 1.0) * 60.0, walltimes)
        arrivals = clock + np.cumsum(rng.exponential(gap, n))
        clock = float(arrivals[-1])
        submits = np.floor(arrivals)
        if origin is None:
            origin = float(submits[0])
        users = rng.integers(0, spec.nb_users, n)
        yield Chunk(first, submits - origin, sizes, walltimes, runtimes, users)


def rows(spec: SyntheticSpec) -> Iterator[list[tuple[int, float, int, float, float, dict[str, object]]]]:
    """Per chunk: (index, submit_s, res, walltime_s, runtime_s, features) of each job."""
    for chunk in chunks(spec):
        yield [(chunk.first_index + k, submit, res, walltime, runtime, features(res, walltime, user))
               for k, (submit, res, walltime, runtime, user) in enumerate(zip(
                   chunk.submit_s.tolist(), chunk.res.tolist(), chunk.walltime_s.tolist(),
                   chunk.runtime_s.tolist(), chunk.users.tolist(), strict=True))]


def features(res: int, walltime_s: float, user: int) -> dict[str, object]:
    """Submission-time features, from what the user asked for: never from the run time."""
    return {"user": f"u{user}", "mem_gb": res * 2, "queue": "long" if walltime_s > 3600 else "short"}


def generate(*, nb_jobs: int, nb_resources: int, seed: int, load: float = 0.9,
             min_runtime_s: float = 10.0, max_runtime_s: float = 36_000.0,
             kill_fraction: float = 0.05, nb_users: int = 20, name: str = "w0") -> Workload:
    """Jobs arriving at a rate that offers `load` x the platform's capacity.

    A `kill_fraction` of jobs underestimate their walltime (they get killed at it, as in real
    traces). Extra fields `user`, `mem_gb` and `queue` (long when the walltime exceeds 1 h) are
    derived from the request only. Each job has its own profile, named after the job.
    """
    spec = SyntheticSpec(nb_jobs, nb_resources, seed, load, min_runtime_s, max_runtime_s, kill_fraction,
                         nb_users, name)
    profiles: dict[str, Profile] = {}
    jobs = []
    for chunk in rows(spec):
        for index, submit, res, walltime, runtime, features in chunk:
            job_name = str(index)
            profiles[job_name] = Profile(job_name, "delay", runtime,
                                         MappingProxyType({"type": "delay", "delay": int(runtime)}))
            jobs.append(Job(f"{name}!{job_name}", submit, res, walltime, job_name, MappingProxyType(features)))
    jobs.sort(key=lambda j: (j.submit_time_s, j.id))
    return Workload(name=name, jobs=tuple(jobs), profiles=profiles, nb_res=nb_resources,
                    source=f"<synthetic seed={seed} jobs={nb_jobs} load={load}>",
                    extra={"generator": spec.generator_info()})


def stream(spec: SyntheticSpec) -> StreamedWorkload:
    """The workload of `spec` as a stream (the same jobs as `generate`, in the same order), drawn
    chunk by chunk when a run reads it: any size in bounded memory."""
    from schedlab.workload_columns import HEAD_JOBS, batsim_order

    spec.validate()
    name = spec.name

    def items() -> Iterator[tuple[Job, Profile]]:
        def drawn() -> Iterator[tuple[Job, Profile]]:
            for chunk in rows(spec):
                for index, submit, res, walltime, runtime, features in chunk:
                    job_name = str(index)
                    yield (Job(f"{name}!{job_name}", submit, res, walltime, job_name, MappingProxyType(features)),
                           Profile(job_name, "delay", runtime, MappingProxyType({"type": "delay",
                                                                                 "delay": int(runtime)})))
        return batsim_order(drawn())

    head = tuple(job for job, _ in itertools.islice(items(), HEAD_JOBS))
    return StreamedWorkload(name, (), {}, spec.nb_resources, f"<synthetic seed={spec.seed} jobs={spec.nb_jobs} "
                            f"load={spec.load}>", {"generator": spec.generator_info()}, items, spec.nb_jobs, head)


def write_generated(path: str | Path, spec: SyntheticSpec,
                    progress: Callable[[int], None] | None = None) -> None:
    """Stream the workload of `spec` to a Batsim JSON file, one job per line, in bounded memory and
    no temporary space: the jobs are drawn twice (seeded, so identically), once for the jobs and once
    for their profiles. The file appears complete or not at all."""
    from schedlab.paths import atomic_write

    spec.validate()
    dumps = json.dumps
    with atomic_write(path) as handle:
        handle.write(f'{{\n"nb_res": {spec.nb_resources},\n"generator": {dumps(spec.generator_info())},\n"jobs": [\n')
        separator = ""
        for chunk in rows(spec):
            handle.write(separator + ",\n".join(
                f'{{"id":{index},"subtime":{int(submit)},"walltime":{int(walltime)},"res":{res},'
                f'"profile":"{index}",{dumps(features, separators=(",", ":"))[1:]}'
                for index, submit, res, walltime, _, features in chunk))
            separator = ",\n"
            if progress is not None:
                progress(chunk[-1][0] + 1)
        handle.write('\n],\n"profiles": {\n')
        separator = ""
        for chunk in rows(spec):
            handle.write(separator + ",\n".join(f'"{index}":{{"type":"delay","delay":{int(runtime)}}}'
                                                 for index, _, _, _, runtime, _ in chunk))
            separator = ",\n"
        handle.write("\n}\n}\n")


def ties_and_kills(*, nb_jobs: int, nb_resources: int, seed: int) -> dict[str, object]:
    """A Batsim JSON workload that stresses message timing: half the jobs share the previous one's
    submit time, durations take six round values (many jobs end together), two in five are killed
    at their walltime (half of those with delay == walltime), and a few are larger than the platform. Used to
    compare `--timing ideal` and `--timing batsim` (tests, benchmarks/bench_timing.py)."""
    import random

    rng = random.Random(seed)
    sizes = [1, 1, 1, 2, 4, 8, 16, max(nb_resources // 8, 1), max(nb_resources // 2, 1), nb_resources,
             nb_resources + 1]
    jobs, profiles, submit = [], {}, 0
    for i in range(nb_jobs):
        if rng.random() >= 0.5:
            submit += rng.choice([1, 5, 30, 120])
        delay = rng.choice([10, 60, 300, 600, 1800, 3600])
        walltime = rng.choice([delay, delay // 2, delay * 2, delay * 3, delay * 3])
        jobs.append({"id": i, "subtime": submit, "res": rng.choice(sizes), "walltime": walltime,
                     "profile": f"d{delay}"})
        profiles[f"d{delay}"] = {"type": "delay", "delay": delay}
    return {"nb_res": nb_resources, "jobs": jobs, "profiles": profiles}
