"""Standard Workload Format (SWF) reader: 18 named fields, gzip-transparent, header keys parsed,
extra columns (Alea's 21-field variant) and CRLF tolerated, one-line errors with file:line and field.
Source: the Parallel Workloads Archive's "Standard Workload Format" page (version 2.2)."""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from schedlab.errors import InputError
from schedlab.workloads.formats import TraceFormat, trace_format

SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
    "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
    "group_id", "executable_number", "queue_number", "partition_number", "preceding_job_number",
    "think_time",
)
_HEADER = re.compile(r"^;\s*([A-Za-z][\w ]*?)\s*:\s*(.*?)\s*$")


@dataclass
class SwfHeader:
    """`; Key: value` header lines. Repeated keys (Note, Queue, Partition) keep every value."""

    values: dict[str, list[str]] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        found = self.values.get(key)
        return found[0] if found else None

    def get_int(self, key: str) -> int | None:
        text = self.get(key)
        if text is None:
            return None
        match = re.match(r"-?\d+", text)
        return int(match.group()) if match else None

    @property
    def max_procs(self) -> int | None:
        """MaxProcs, else MaxNodes (the Lublin model writes only MaxNodes)."""
        procs = self.get_int("MaxProcs")
        return procs if procs is not None and procs > 0 else self.get_int("MaxNodes")

    @property
    def unix_start_time(self) -> int | None:
        return self.get_int("UnixStartTime")


@dataclass
class SwfTrace:
    path: str
    header: SwfHeader
    columns: dict[str, np.ndarray]  # one float64 array per SWF field, in file order

    def __len__(self) -> int:
        return len(self.columns["job_number"])


def _open(path: Path) -> IO[str]:
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline=None)
    if path.suffix == ".gz":
        raise InputError("named .gz but not gzip data (no gzip header): a broken download?", path=str(path))
    return path.open("r", encoding="utf-8", errors="replace", newline=None)


_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def _gzip_error(path: Path, exc: Exception) -> InputError:
    detail = "it ends early (truncated file)" if isinstance(exc, EOFError) else f"corrupt data ({exc})"
    return InputError(f"cannot decompress: {detail}", path=str(path))


def read_swf(path: str | Path) -> SwfTrace:
    """Fast path: pandas' C parser (a 450k-job trace in about a second). Anything odd (short lines,
    text in a numeric field) goes through the exact line-by-line reader, which names file:line:field."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=str(path))
    if path.is_dir():
        raise InputError("is a directory, expected an SWF trace", path=str(path))
    try:
        trace = _read_swf(path, pd)
    except _GZIP_ERRORS as exc:
        raise _gzip_error(path, exc) from None
    if len(trace) == 0:
        raise InputError("no job lines (an SWF trace has one job per line after ';' header lines)", path=str(path))
    return trace


def _read_swf(path: Path, pd) -> SwfTrace:
    header = SwfHeader()
    with _open(path) as handle:
        for text in handle:
            stripped = text.strip()
            if stripped and not stripped.startswith(";"):
                break
            match = _HEADER.match(stripped)
            if match:
                header.values.setdefault(match.group(1), []).append(match.group(2))
    try:
        with _open(path) as handle:
            frame = pd.read_csv(handle, sep=r"\s+", comment=";", header=None, usecols=range(len(SWF_FIELDS)),
                                dtype=np.float64, engine="c", skip_blank_lines=True)
        table = frame.to_numpy(dtype=np.float64)
        if np.isnan(table).any():
            raise ValueError("short line")
    except pd.errors.EmptyDataError:
        return SwfTrace(str(path), header, {name: np.empty(0) for name in SWF_FIELDS})
    except (ValueError, pd.errors.ParserError, IndexError):
        return _read_swf_exact(path)
    columns = {name: np.ascontiguousarray(table[:, i]) for i, name in enumerate(SWF_FIELDS)}
    return SwfTrace(str(path), header, columns)


def _read_swf_exact(path: Path) -> SwfTrace:
    header = SwfHeader()
    rows: list[list[float]] = []
    with _open(path) as handle:
        for number, text in enumerate(handle, start=1):
            stripped = text.strip()
            if not stripped:
                continue
            if stripped.startswith(";"):
                match = _HEADER.match(stripped)
                if match:
                    header.values.setdefault(match.group(1), []).append(match.group(2))
                continue
            parts = stripped.split()
            if len(parts) < len(SWF_FIELDS):
                raise InputError(f"{len(parts)} fields, SWF has {len(SWF_FIELDS)}", path=str(path), line=number,
                                 field=SWF_FIELDS[len(parts)])
            try:
                rows.append([float(value) for value in parts[:18]])
            except ValueError:
                for name, value in zip(SWF_FIELDS, parts, strict=False):
                    try:
                        float(value)
                    except ValueError:
                        raise InputError(f"not a number: {value!r}", path=str(path), line=number,
                                         field=name) from None
                raise
    table = np.array(rows, dtype=np.float64).reshape(-1, len(SWF_FIELDS))
    columns = {name: table[:, i] for i, name in enumerate(SWF_FIELDS)}
    return SwfTrace(str(path), header, columns)


def write_swf(handle: IO[str], columns: dict[str, np.ndarray], header: dict[str, str] | None = None) -> None:
    """Write SWF lines (integers where the value is integral), with `; Key: value` header lines."""
    for key, value in (header or {}).items():
        handle.write(f"; {key}: {value}\n")
    count = len(next(iter(columns.values()))) if columns else 0
    arrays = [columns.get(name, np.full(count, -1.0)) for name in SWF_FIELDS]
    for i in range(count):
        handle.write(" ".join(_fmt(a[i]) for a in arrays) + "\n")


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


#: The job fields an SWF trace gives a converted workload (Job.extra), and their SWF columns:
#: submission-time information only (a column unknown for every job is left out).
FEATURES = {
    "user": "user_id", "group": "group_id", "app": "executable_number", "queue": "queue_number",
    "partition": "partition_number", "requested_time_s": "requested_time", "requested_mem_kb": "requested_memory",
    "requested_procs": "requested_processors", "swf_job": "job_number",
}


def to_trace_jobs(trace: SwfTrace):
    """The converter's columnar view of an SWF trace (user/group/queue/... kept as features)."""
    from schedlab.workloads.convert import TraceJobs

    c = trace.columns
    extras = {name: c[column] for name, column in FEATURES.items()}
    extras = {k: v for k, v in extras.items() if np.any(v != -1)}  # drop all-unknown columns
    unix = trace.header.unix_start_time
    return TraceJobs(source=trace.path, job_ids=c["job_number"].astype(np.int64), submit_s=c["submit_time"],
                     run_s=np.where(c["run_time"] < 0, np.nan, c["run_time"]),
                     requested_procs=c["requested_processors"], allocated_procs=c["allocated_processors"],
                     requested_time_s=c["requested_time"], status=c["status"], extras=extras,
                     unix_start_s=float(unix) if unix else None, max_procs=trace.header.max_procs,
                     wait_s=np.where(c["wait_time"] < 0, np.nan, c["wait_time"]))


def read_trace_jobs(path: str | Path):
    """An SWF trace as the converter's columns (its MaxProcs header: the machine's size)."""
    return to_trace_jobs(read_swf(path))


trace_format(TraceFormat(key="swf", command="from-swf", help="SWF trace (gzip ok) -> Batsim JSON", argument="trace",
                         argument_help="an SWF trace (.swf or .swf.gz)", read=read_trace_jobs))
