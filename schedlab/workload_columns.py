"""A compact columnar workload file (Parquet) beside Batsim JSON, read as a stream.

A Batsim JSON workload of ten million jobs is about 1.5 GB of text, and parsing it whole needs
several times that in memory. `W.parquet` holds the same jobs as columns (`id`, `subtime`,
`walltime` (-1: none), `res`, `profile`, `delay`, `ret` (the profile's return code), then one
column `x.KEY` per extra field), in Batsim's
submission order, in row groups read one at a time: `read_columns` gives a StreamedWorkload
(schedlab/workload.py) that the embedded engine runs in bounded memory (engine/stream.py).
`write_columns` writes any stream of (Job, Profile) pairs, a Batsim JSON workload's or a
generator's, one group at a time. The file's metadata holds the workload's name, `nb_res`,
number of jobs and its other top-level fields.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

from schedlab.errors import InputError
from schedlab.model import Job, Profile, new_job, new_profile
from schedlab.workload import StreamedWorkload, Workload

GROUP_JOBS = 65_536
FIXED = ("id", "subtime", "walltime", "res", "profile", "delay", "ret")
META_KEY = b"schedlab.workload"
HEAD_JOBS = 1_000


def batsim_order(items: Iterable[tuple[Job, Profile]]) -> Iterator[tuple[Job, Profile]]:
    """Jobs in nondecreasing submit time put in Batsim's order: at equal times, by id as text (a
    group of equal times is held until a later time comes)."""
    group: list[tuple[Job, Profile]] = []
    for item in items:
        if group and item[0].submit_time_s != group[0][0].submit_time_s:
            if item[0].submit_time_s < group[0][0].submit_time_s:
                raise InputError(f"job {item[0].id!r} is submitted before the job read before it: a stream is in "
                                 "submission order")
            if len(group) > 1:
                group.sort(key=lambda pair: pair[0].id)
            yield from group
            group.clear()
        group.append(item)
    if len(group) > 1:
        group.sort(key=lambda pair: pair[0].id)
    yield from group


def stream_of(workload: Workload) -> StreamedWorkload:
    """A workload held in memory as a stream (the tests compare the two runs)."""
    def stream() -> Iterator[tuple[Job, Profile]]:
        return ((job, workload.profiles[job.profile]) for job in workload.jobs)

    return StreamedWorkload(workload.name, (), {}, workload.nb_res, workload.source, workload.extra,
                            stream, len(workload.jobs), workload.jobs[:HEAD_JOBS])


def write_columns(path: str | Path, items: Iterable[tuple[Job, Profile]], *, name: str, nb_res: int | None,
                  nb_jobs: int, extra: dict[str, Any] | None = None,
                  progress: Callable[[int], None] | None = None) -> int:
    """Write (Job, Profile) pairs, in Batsim's submission order, as W.parquet; returns how many.
    Each profile must be a delay profile; the file appears complete or not at all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schedlab.paths import atomic_path

    meta = {META_KEY: json.dumps({"name": name, "nb_res": nb_res, "nb_jobs": nb_jobs,
                                  "extra": dict(extra or {})}).encode()}
    written = 0
    iterator = iter(items)
    with atomic_path(path) as staged:
        writer = None
        try:
            while True:
                group = list(itertools.islice(iterator, GROUP_JOBS))
                if not group:
                    break
                columns: dict[str, list[Any]] = {key: [] for key in FIXED}
                extras = sorted({key for job, _ in group for key in job.extra})
                for key in extras:
                    columns[f"x.{key}"] = []
                for job, profile in group:
                    if profile.delay_s is None:
                        raise InputError(f"job {job.id!r}: profile {profile.name!r} is {profile.type!r}; a columnar "
                                         "workload holds delay profiles only")
                    columns["id"].append(job.name)
                    columns["subtime"].append(job.submit_time_s)
                    columns["walltime"].append(-1.0 if job.walltime_s is None else job.walltime_s)
                    columns["res"].append(job.res)
                    columns["profile"].append(profile.name)
                    columns["delay"].append(profile.delay_s)
                    columns["ret"].append(profile.return_code)
                    for key in extras:
                        columns[f"x.{key}"].append(job.extra.get(key))
                table = pa.table(columns)
                if writer is None:
                    writer = pq.ParquetWriter(staged, table.schema.with_metadata(meta))
                    schema = writer.schema
                elif table.schema.remove_metadata() != schema.remove_metadata():
                    table = table.cast(schema)  # a later group may lack an extra field or type it as null
                writer.write_table(table)
                written += len(group)
                if progress is not None:
                    progress(written)
            if writer is None:  # no job: an empty file of the fixed columns
                writer = pq.ParquetWriter(staged, pa.schema([(key, pa.string()) for key in FIXED], metadata=meta))
        finally:
            if writer is not None:
                writer.close()
    return written


def read_columns(path: str | Path, name: str = "w0") -> StreamedWorkload:
    """W.parquet as a StreamedWorkload: errors name the file (and the job or column)."""
    import pyarrow.parquet as pq

    where = str(path)
    try:
        handle = pq.ParquetFile(where)
    except FileNotFoundError:
        raise InputError("no such file", path=where) from None
    except Exception as exc:  # pyarrow's own errors: not a Parquet file, cut short, ...
        raise InputError(f"not a readable Parquet workload: {exc}", path=where) from None
    raw = (handle.schema_arrow.metadata or {}).get(META_KEY)
    if raw is None:
        raise InputError("no schedlab workload metadata (write it with `schedlab workload generate -o W.parquet` or "
                         "`schedlab workload columns`)", path=where)
    meta = json.loads(raw)
    missing = [key for key in FIXED if key not in handle.schema_arrow.names]
    if missing:
        raise InputError("missing column", path=where, field=missing[0])
    workload_name = meta.get("name") or name
    extras = [key for key in handle.schema_arrow.names if key.startswith("x.")]

    def stream() -> Iterator[tuple[Job, Profile]]:
        # a reader per row group: one reader over the whole file keeps what it decoded (pyarrow's
        # allocation grew 33 bytes a job, apache/arrow#39808's kind); per group it stays flat
        for group in range(handle.metadata.num_row_groups):
            for batch in handle.iter_batches(batch_size=GROUP_JOBS, row_groups=[group]):
                yield from _jobs_of(batch, extras, workload_name, where)

    first = next(handle.iter_batches(batch_size=HEAD_JOBS), None)
    head = tuple(job for job, _ in _jobs_of(first, extras, workload_name, where)) if first is not None else ()
    return StreamedWorkload(workload_name, (), {}, meta.get("nb_res"), where, meta.get("extra") or {}, stream,
                            int(meta.get("nb_jobs", handle.metadata.num_rows)), head)


def _jobs_of(batch: Any, extras: list[str], workload_name: str, where: str) -> Iterator[tuple[Job, Profile]]:
    columns = {key: batch.column(key).to_pylist() for key in (*FIXED, *extras)}
    names = [key[2:] for key in extras]
    extra_values = list(zip(*(columns[key] for key in extras), strict=True)) if extras else None
    empty: MappingProxyType[str, Any] = MappingProxyType({})
    for index, (job_name, submit, walltime, res, profile, delay, ret) in enumerate(zip(
            *(columns[key] for key in FIXED), strict=True)):
        if not (isinstance(delay, (float, int)) and math.isfinite(delay) and delay >= 0):
            raise InputError(f"job {job_name!r}: not a delay >= 0: {delay!r}", path=where, field="delay")
        if not (isinstance(res, int) and res >= 1):
            raise InputError(f"job {job_name!r}: not a number of resources >= 1: {res!r}", path=where, field="res")
        extra = empty
        if extra_values is not None:
            extra = MappingProxyType({k: v for k, v in zip(names, extra_values[index], strict=True) if v is not None})
        job = new_job(f"{workload_name}!{job_name}", float(submit), res, None if walltime < 0 else float(walltime),
                      profile, extra)
        raw = {"type": "delay", "delay": delay}
        if ret:
            raw["ret"] = ret
        yield job, new_profile(profile, "delay", float(delay), MappingProxyType(raw), ret or 0)
