"""Slurm `sacct` exports and PM100 / M100 job tables (CSV or Parquet) -> the converter's TraceJobs.

Columns are found by name among known aliases (PM100's `submit_time`, `time_limit`, `num_cores_req`
...; sacct's `Submit`, `Timelimit`, `NCPUS` ...). Times may be Unix seconds or timestamps; time
limits are minutes (PM100, sacct TimelimitRaw) or `[D-]HH:MM:SS`; INFINITE/UNLIMITED mean none.
Sources: the PM100 data set's documentation (repository francescoantici/PM100-data) and
Borghesi et al., "M100 ExaData", Scientific Data 2023.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from schedlab.errors import InputError
from schedlab.workloads.convert import TraceJobs
from schedlab.workloads.formats import TraceFormat, trace_format

ALIASES = {
    "job_id": ("job_id", "JobID", "JobIDRaw", "id"),
    "submit": ("submit_time", "Submit", "submit"),
    "start": ("start_time", "Start", "start"),
    "end": ("end_time", "End", "end"),
    "run": ("run_time", "ElapsedRaw", "elapsed_s"),
    "cores_req": ("num_cores_req", "num_cpus_req", "ReqCPUS", "cores_req", "cpu"),
    "cores_alloc": ("num_cores_alloc", "num_cpus_alloc", "AllocCPUS", "NCPUS"),
    "nodes_req": ("num_nodes_req", "ReqNodes", "node"),
    "nodes_alloc": ("num_nodes_alloc", "NNodes", "AllocNodes"),
    "time_limit": ("time_limit", "TimelimitRaw", "Timelimit", "timelimit"),
    "state": ("job_state", "State", "state"),
}
FEATURES = {  # output feature name -> aliases (submission-time information only)
    "user": ("user_id", "User", "UID", "user"),
    "group": ("group_id", "Group", "GID"),
    "qos": ("qos", "QOS"),
    "partition": ("partition", "Partition"),
    "mem_req": ("mem_req", "ReqMem", "mem"),
    "gpus_req": ("num_gpus_req", "gpu"),
    "cores_per_task": ("cores_per_task", "cpus_per_task"),
    "tasks": ("num_tasks",),
    "shared": ("shared",),
}
_CLOCK = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")


def _find(frame, names: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in frame.columns}
    for name in names:
        if name in frame.columns:
            return name
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def _seconds(series, path: str, column: str) -> np.ndarray:
    """Unix seconds from numbers or timestamps (UTC when no zone is given)."""
    import pandas as pd

    if not pd.api.types.is_datetime64_any_dtype(series):  # datetimes would read as nanoseconds
        numeric = pd.to_numeric(series, errors="coerce")
        if numeric.notna().sum() >= series.notna().sum() * 0.99:
            return numeric.to_numpy(dtype=np.float64)
    try:
        stamps = pd.to_datetime(series, utc=True, errors="coerce")
    except (ValueError, TypeError) as exc:
        raise InputError(f"cannot read times: {exc}", path=path, field=column) from None
    seconds = (stamps - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    return seconds.to_numpy(dtype=np.float64)


def _limit_minutes(value) -> float:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return -1.0
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    text = str(value).strip()
    if text.upper() in ("INFINITE", "UNLIMITED", "PARTITION_LIMIT", "", "NONE", "NAN"):
        return -1.0
    try:
        return float(text)
    except ValueError:
        pass
    match = _CLOCK.match(text)
    if match is None:
        return float("nan")
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return days * 1440 + hours * 60 + minutes + seconds / 60.0


def read_table(path: str | Path):
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=str(path))
    if path.is_dir():
        raise InputError("is a directory, expected a table (CSV or Parquet)", path=str(path))
    try:
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_csv(path, sep=None, engine="python") if path.suffix != ".csv" else pd.read_csv(path)
    except ImportError as exc:
        raise InputError(f"reading Parquet needs pyarrow (pip install 'schedlab[parquet]'): {exc}",
                         path=str(path)) from None
    except (ValueError, pd.errors.ParserError) as exc:
        first = str(exc).splitlines()[0]
        raise InputError(f"malformed table: {first}", path=str(path)) from None
    return frame


def to_trace_jobs(path: str | Path, *, unit: str = "cores") -> TraceJobs:
    """Read a Slurm/PM100 table; `unit` = cores (default) or nodes for the requested resources."""
    if unit not in ("cores", "nodes"):
        raise InputError(f"unit must be cores or nodes, got {unit!r}")
    path = Path(path)
    frame = read_table(path)
    cols = {key: _find(frame, names) for key, names in ALIASES.items()}
    where = str(path)
    if cols["submit"] is None:
        raise InputError(f"no submission time column (looked for {', '.join(ALIASES['submit'])})", path=where,
                         line=1, field="submit_time")
    submit = _seconds(frame[cols["submit"]], where, cols["submit"])
    if cols["run"] is not None:
        run = frame[cols["run"]].astype("float64").to_numpy()
    elif cols["start"] is not None and cols["end"] is not None:
        run = _seconds(frame[cols["end"]], where, cols["end"]) - _seconds(frame[cols["start"]], where, cols["start"])
    else:
        raise InputError("no run time (run_time/ElapsedRaw, or start and end columns)", path=where, line=1,
                         field="run_time")
    req_key, alloc_key = ("cores_req", "cores_alloc") if unit == "cores" else ("nodes_req", "nodes_alloc")
    if cols[req_key] is None and cols[alloc_key] is None:
        raise InputError(f"no {unit} column (looked for {', '.join(ALIASES[req_key] + ALIASES[alloc_key])})",
                         path=where, line=1, field=req_key)
    missing = np.full(len(frame), -1.0)
    requested = frame[cols[req_key]].astype("float64").to_numpy() if cols[req_key] else missing
    allocated = frame[cols[alloc_key]].astype("float64").to_numpy() if cols[alloc_key] else missing
    if cols["time_limit"] is not None:
        minutes = np.array([_limit_minutes(v) for v in frame[cols["time_limit"]].tolist()], dtype=np.float64)
        bad = np.flatnonzero(np.isnan(minutes))
        if len(bad):
            raise InputError(f"unreadable time limit {frame[cols['time_limit']].iloc[bad[0]]!r}", path=where,
                             line=int(bad[0]) + 2, field=cols["time_limit"])
        requested_time = np.where(minutes > 0, minutes * 60.0, -1.0)
    else:
        requested_time = missing
    status = None
    if cols["state"] is not None:
        status = np.where(frame[cols["state"]].astype(str).str.upper().str.startswith("COMPLETED"), 1.0, 0.0)
    extras = {}
    for feature, names in FEATURES.items():
        column = _find(frame, names)
        if column is not None:
            # object columns stay objects: a missing value is NaN/None (the key is left out), not "nan"
            extras[feature] = frame[column].to_numpy()
    # what predictors need whatever `unit` says res counts: both requests and the time limit itself
    # (the walltime may be filled in by --missing-walltime; this stays the user's request)
    for feature, key in (("cores_req", "cores_req"), ("nodes_req", "nodes_req")):
        if cols[key] is not None:
            extras[feature] = frame[cols[key]].astype("float64").to_numpy()
    if cols["time_limit"] is not None:
        extras["requested_time_s"] = requested_time  # -1 = unknown (kept: predictors must not fall back)
    wait = None
    if cols["start"] is not None:  # histories need completion times: submit + wait + run
        wait = _seconds(frame[cols["start"]], where, cols["start"]) - submit
    origin = float(np.floor(np.nanmin(submit))) if np.isfinite(submit).any() else 0.0  # none known: said later
    ids = frame[cols["job_id"]].to_numpy() if cols["job_id"] else np.arange(len(frame))
    steps = None
    import pandas as pd

    if cols["job_id"] is not None and not pd.api.types.is_numeric_dtype(frame[cols["job_id"]]):  # not floats' "7.0"
        # sacct without -X: rows "123.batch", "123.extern", "123.0" of job 123, which has its own row;
        # another table's ids with a dot are ids
        text_ids = frame[cols["job_id"]].astype(str)
        known = set(text_ids)
        steps = np.array([name.rpartition(".")[0] in known for name in text_ids], dtype=bool)
    return TraceJobs(source=where, job_ids=ids, submit_s=submit - origin, run_s=run, requested_procs=requested,
                     allocated_procs=allocated, requested_time_s=requested_time, status=status, extras=extras,
                     unix_start_s=origin if origin > 1e8 else None, wait_s=wait, steps=steps)


#: `workload from-table --help`: the columns it reads
FROM_TABLE_COLUMNS = """Columns are found by name (case-insensitive), the first alias present wins.
Needed: a submit time (submit_time | Submit | submit) and a run time (run_time | ElapsedRaw | elapsed_s,
or start_time | Start | start with end_time | End | end). Read when present: job_id | JobID | JobIDRaw | id;
requested cores num_cores_req | num_cpus_req | ReqCPUS | cores_req | cpu; allocated cores num_cores_alloc
| num_cpus_alloc | AllocCPUS | NCPUS; requested nodes num_nodes_req | ReqNodes | node; allocated nodes
num_nodes_alloc | NNodes | AllocNodes; time limit time_limit | TimelimitRaw | Timelimit | timelimit
(minutes or [D-]HH:MM:SS; INFINITE/UNLIMITED: none); state job_state | State | state. Kept as features
(what a user knows at submission): user user_id | User | UID | user; group group_id | Group | GID; qos |
QOS; partition | Partition; mem_req | ReqMem | mem; num_gpus_req | gpu; cores_per_task | cpus_per_task;
num_tasks; shared. Times are Unix seconds or timestamps."""

trace_format(TraceFormat(
    key="table", command="from-table", help="Slurm sacct / PM100 table (CSV or Parquet) -> Batsim JSON",
    argument="table", argument_help="a sacct export (sacct -P --format=...) or a PM100 / M100 table, CSV or Parquet",
    read=to_trace_jobs, description=FROM_TABLE_COLUMNS,
    options=((("--unit",), {"choices": ("cores", "nodes"), "default": "cores",
                            "help": "what res counts: cores (one resource per core) or nodes"}),)))
