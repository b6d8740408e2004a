"""The memory a run will need, estimated before it is built, against what this process may use.

`resources = 1000000000` in a campaign ran 83 s and was killed for memory with no word (exit 137);
`simulate -p 100000000` ran 94 s unannounced. Each is now estimated from its inputs' sizes (measured
costs below) and refused (exit 2, naming the field and the estimate) when it cannot fit, or said in
one line when it takes more than a quarter of what there is. What there is: the machine's available
memory, or less where this process is limited: its cgroup's memory limit (a container's, a Slurm
job's) and its address-space limit (ulimit -v)."""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from pathlib import Path

#: measured on this project's machine (the interpreter, numpy, pandas and the engine loaded)
BASE_BYTES = 150 * 2**20
#: a whole-file JSON workload in memory: about 13.5 bytes per byte of file (200,000 jobs: 31 MB of
#: JSON, 424 MB peak for EASY), rounded up
BYTES_PER_JSON_BYTE = 16
#: a job generated, simulated and written (a campaign's synthetic and Lublin workloads): 2.1 kB measured
BYTES_PER_GENERATED_JOB = 2_500
#: share of what there is beyond which a run is said to be large (simulate -p 100000000 under EASY:
#: about 10 GB of 22 GB, run for 94 s unannounced)
LARGE_SHARE = 0.25


def _number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat(path: Path, key: str) -> int:
    """A cgroup memory.stat entry, in bytes (0 when absent)."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def _cgroup_room() -> int | None:
    """The least room left under this process's cgroup memory limits (v2 and v1), up its hierarchy."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    rooms = []
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if controllers == "":  # cgroup v2
            root, limit_name, usage_name = Path("/sys/fs/cgroup"), "memory.max", "memory.current"
            cache_name = "inactive_file"
        elif "memory" in controllers.split(","):
            root = Path("/sys/fs/cgroup/memory")
            limit_name, usage_name = "memory.limit_in_bytes", "memory.usage_in_bytes"
            cache_name = "total_inactive_file"
        else:
            continue
        folder = root / where.lstrip("/")
        while True:
            limit, usage = _number(folder / limit_name), _number(folder / usage_name)
            if limit is not None and limit < 2**60:  # v1 writes "no limit" as a huge number, v2 as "max"
                # the usage counts the page cache: its inactive part is given back under pressure
                rooms.append(limit - max(0, (usage or 0) - _stat(folder / "memory.stat", cache_name)))
            if folder == root or root not in folder.parents:
                break
            folder = folder.parent
    return min(rooms) if rooms else None


def available_bytes(per_process: bool = True) -> tuple[int, str]:
    """(bytes this process may still use, what limits it) - the least of the machine's available
    memory, its cgroup's room and (`per_process`) its address-space limit, which each worker process
    has whole (a pool is sized without it)."""
    candidates: list[tuple[int, str]] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                candidates.append((int(line.split()[1]) * 1024, "available on this machine"))
    except OSError:
        pass
    room = _cgroup_room()
    if room is not None:
        candidates.append((room, "left under this process's cgroup limit (a container's or batch job's)"))
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_DATA) if per_process else ():
        soft = resource.getrlimit(limit)[0]
        if soft != resource.RLIM_INFINITY:
            candidates.append((soft, "this process's ulimit allows"))
    if not candidates:  # no way to tell here: nothing is refused
        return 2**62, "available"
    return min(candidates)


def size(nb_bytes: float) -> str:
    """Bytes for a person: 9.5 GB."""
    for unit, scale in (("TB", 2**40), ("GB", 2**30), ("MB", 2**20)):
        if nb_bytes >= scale:
            return f"{nb_bytes / scale:.1f} {unit}"
    return f"{nb_bytes / 2**10:.0f} kB"


def workers_that_fit(run_bytes: int) -> tuple[int, str]:
    """How many processes of `run_bytes` each the memory there is holds (at least 1), and why."""
    available_b, where = available_bytes(per_process=False)
    nb_fit = max(1, available_b // run_bytes)
    return nb_fit, f"{nb_fit} runs of about {size(run_bytes)} fit in the {size(available_b)} {where}"


def estimate_run(nb_resources: int, bytes_per_resource: int, *, workload_file: str | Path | None = None,
                 generated_jobs: int = 0) -> int:
    """A run's peak: the base, its platform at the scheduler's cost per resource, its workload (a whole
    JSON file read, or jobs generated; a columnar workload is streamed: bounded)."""
    estimate = BASE_BYTES + nb_resources * bytes_per_resource + generated_jobs * BYTES_PER_GENERATED_JOB
    if workload_file is not None and not str(workload_file).endswith(".parquet"):
        with contextlib.suppress(OSError):  # a missing file is said where it is read
            estimate += os.path.getsize(workload_file) * BYTES_PER_JSON_BYTE
    return estimate


def check_fits(estimate_b: int, what: str, refuse: Callable[[str], Exception],
               say: Callable[[str], None] | None = None) -> None:
    """Raise refuse(message) when a run of `estimate_b` bytes cannot fit in what there is; say one
    line when it takes more than a quarter of it."""
    available_b, where = available_bytes()
    if estimate_b > available_b:
        raise refuse(f"{what} needs about {size(estimate_b)} of memory, more than the {size(available_b)} {where}")
    if say is not None and estimate_b > LARGE_SHARE * available_b:
        say(f"{what} needs about {size(estimate_b)} of memory, of the {size(available_b)} {where}")
