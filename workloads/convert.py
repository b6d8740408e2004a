"""Trace tables (SWF, Slurm/PM100) -> Batsim JSON workloads, with every choice explicit.

One columnar `TraceJobs` is what every reader produces; `convert` applies the filters in a fixed
order, counts each dropped job under exactly one reason, and records its options and counts in the
output (`conversion`), so results stay comparable. Walltimes are never inflated: a missing requested
time follows `missing_walltime` (default: no walltime, Batsim's -1), and a requested time shorter
than the run time is kept (the job is killed at it, as the site would have done).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import numpy as np

from schedlab.errors import InputError

#: the largest `res` Batsim 4.2.1 reads (RapidJSON's GetInt: a 32-bit integer)
MAX_RES = 2**31 - 1


@dataclass
class TraceJobs:
    """One entry per trace job; times in seconds on the trace's own clock; -1 or NaN = unknown."""

    source: str
    job_ids: np.ndarray
    submit_s: np.ndarray
    run_s: np.ndarray
    requested_procs: np.ndarray
    allocated_procs: np.ndarray
    requested_time_s: np.ndarray
    status: np.ndarray | None = None  # 1 = completed (SWF convention)
    extras: dict[str, np.ndarray] = field(default_factory=dict)  # submission-time features
    unix_start_s: float | None = None  # absolute time of trace time 0, when known
    max_procs: int | None = None
    wait_s: np.ndarray | None = None  # start - submit as recorded; NaN or negative = unknown
    #: rows that are parts of a job listed on its own row, not jobs (sacct's job steps without -X)
    steps: np.ndarray | None = None

    def end_s(self, run_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(completion times on the trace clock, mask of jobs whose wait is unknown and counted as 0:
        the earliest they can have ended)."""
        wait = (np.full(len(self.submit_s), np.nan) if self.wait_s is None
                else np.asarray(self.wait_s, dtype=np.float64))
        unknown = ~(wait >= 0)
        return self.submit_s.astype(np.float64) + np.where(unknown, 0.0, wait) + run_s, unknown

    def __len__(self) -> int:
        return len(self.submit_s)


@dataclass(frozen=True)
class ConversionOptions:
    res_from: str = "requested"  # requested | allocated (the other is the fallback when <= 0)
    missing_walltime: str = "none"  # none | drop | runtime | factor:F | max:SECONDS
    start: str | None = None  # seconds from trace time 0, or a date (UTC) when the trace has one
    days: float | None = None
    last_hours: float | None = None
    first: int | None = None
    keep_zero_runtime: bool = False  # run time 0 means < 0.5 s in SWF: replay it as 1 s
    max_runtime_s: float | None = None
    #: a counterfactual: every job's requested time (and so its walltime) becomes this many seconds
    #: (the COARE study's 7-day defaults on a trace whose users asked 1 h)
    requested_override_s: float | None = None
    completed_before: float | None = None  # trace seconds: keep jobs whose submit + wait + run is earlier
    platform_size: int | None = None
    too_large: str = "drop"  # drop | reject (kept: the scheduler rejects it, Batsim records it)
    nodes_to_cores: int = 1
    cores_to_nodes: int = 1
    only_completed: bool = False
    max_user_share: float | None = None  # drop every job of a user holding more than this share (a flurry)
    #: requested: walltimes from the trace; runtime: every walltime is the job's run time (a
    #: clairvoyant workload: schedulers plan with actual run times without ever reading them);
    #: none: no walltime (Batsim's -1: no job is killed, as in Alea), the requested time kept as the
    #: job's `requested_time_s` (a walltime of max(requested, run time) would tell the run time of
    #: every job that outruns its request)
    walltime_from: str = "requested"
    #: left: a window is [start, start + days); right: (start, start + days], so the last of windows
    #: counted back from the last submission (`last_hours`) holds that submission
    window_closed: str = "left"

    def validate(self) -> None:
        if self.walltime_from not in ("requested", "runtime", "none"):
            raise InputError(f"walltime_from must be requested, runtime or none, got {self.walltime_from!r}")
        if self.res_from not in ("requested", "allocated"):
            raise InputError(f"res_from must be requested or allocated, got {self.res_from!r}")
        if self.too_large not in ("drop", "reject"):
            raise InputError(f"too_large must be drop or reject, got {self.too_large!r}")
        policy = self.missing_walltime.split(":", 1)
        if policy[0] not in ("none", "drop", "runtime", "factor", "max") or (
                policy[0] in ("factor", "max") and (len(policy) != 2 or not _positive(policy[1]))):
            raise InputError(f"missing_walltime must be none, drop, runtime, factor:F or max:SECONDS, "
                             f"got {self.missing_walltime!r}")
        if self.nodes_to_cores < 1 or self.cores_to_nodes < 1:
            raise InputError("nodes_to_cores and cores_to_nodes must be >= 1")
        if self.first is not None and self.first < 0:
            raise InputError(f"--first must be >= 0, got {self.first}")
        for flag, value in (("--days", self.days), ("--last-hours", self.last_hours),
                            ("--max-runtime", self.max_runtime_s), ("requested_override_s", self.requested_override_s)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise InputError(f"{flag} must be a number > 0, got {value:g}")
        if self.platform_size is not None and self.platform_size < 1:
            raise InputError(f"--platform-size must be >= 1, got {self.platform_size}")
        if self.max_user_share is not None and not 0 < self.max_user_share <= 1:
            raise InputError(f"--max-user-share must be in (0, 1], got {self.max_user_share:g}")
        if self.window_closed not in ("left", "right"):
            raise InputError(f"window_closed must be left or right, got {self.window_closed!r}")
        if self.start is not None and self.last_hours is not None:
            raise InputError("--start and --last-hours both set the window start: give one of them")


def _positive(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False


def start_offset(options: ConversionOptions, trace: TraceJobs) -> float | None:
    """The window start in seconds of the trace clock (from `--start` seconds or a UTC date)."""
    if options.start is None:
        return None
    try:
        return float(options.start)
    except ValueError:
        pass
    if trace.unix_start_s is None:
        raise InputError(f"--start {options.start!r} is a date but {trace.source} has no absolute time "
                         "origin (UnixStartTime); give seconds from the trace start instead")
    try:
        moment = datetime.fromisoformat(options.start)
    except ValueError:
        raise InputError(f"--start {options.start!r}: expected seconds or an ISO date") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() - trace.unix_start_s


def _as_list(values: np.ndarray) -> list[Any]:
    """Python values for JSON: integral float columns become ints (Batsim's files write `3`, not `3.0`)."""
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if finite.all() and np.all(values == np.round(values)) and (np.abs(values) < 2**53).all():
            return values.astype(np.int64).tolist()
        return [int(v) if v == v and v.is_integer() else v for v in values.tolist()]
    if values.dtype.kind in "iub":
        return values.tolist()
    return [v.item() if isinstance(v, np.generic) else v for v in values.tolist()]


def convert_columns(trace: TraceJobs, options: ConversionOptions | None = None, *,
                    description: str = "") -> tuple[ConvertedWorkload, dict[str, Any]]:
    """Every trace job is kept or counted once in `dropped`."""
    options = options or ConversionOptions()
    options.validate()
    n = len(trace)
    dropped: Counter[str] = Counter()
    alive = np.ones(n, dtype=bool)

    def drop(mask: np.ndarray, reason: str) -> None:
        hit = alive & mask
        count = int(hit.sum())
        if count:
            dropped[reason] += count
            alive[hit] = False

    if trace.steps is not None:
        drop(np.asarray(trace.steps, dtype=bool), "job step, not a job (sacct without -X lists each step)")
    run = trace.run_s.astype(np.float64).copy()
    bad_run = ~np.isfinite(run) | (run < 0)
    drop(bad_run, "run time unknown or negative")
    if options.keep_zero_runtime:
        run[alive & (run == 0)] = 1.0
    else:
        drop(run == 0, "run time 0 (--keep-zero-runtime replays it as 1 s)")
    if options.only_completed and trace.status is not None:
        drop(trace.status != 1, "status not completed")
    primary, fallback = ((trace.requested_procs, trace.allocated_procs) if options.res_from == "requested"
                         else (trace.allocated_procs, trace.requested_procs))
    procs = np.where(np.nan_to_num(primary, nan=-1) > 0, primary, fallback).astype(np.float64)
    drop(~(np.nan_to_num(procs, nan=-1) > 0), "no processor count")
    procs = np.where(alive, procs, 1.0) * options.nodes_to_cores / options.cores_to_nodes
    # Batsim reads `res` as a 32-bit integer; larger counts wrapped to negative ones in the cast below
    drop(procs > MAX_RES, f"processor count over {MAX_RES:,} (Batsim reads res as a 32-bit integer)")
    res = np.ceil(np.where(alive, procs, 1.0)).astype(np.int64)

    submit = trace.submit_s.astype(np.float64)
    drop(~np.isfinite(submit), "submit time unknown")
    start = start_offset(options, trace)
    if options.last_hours is not None and start is None:
        end = float(np.nanmax(submit[alive])) if alive.any() else 0.0
        start = end - options.last_hours * 3600.0
    right = options.window_closed == "right"
    if start is not None:
        drop(submit <= start if right else submit < start, "outside the time window")
    if options.days is not None:
        origin = start if start is not None else (float(np.nanmin(submit[alive])) if alive.any() else 0.0)
        end_s = origin + options.days * 86400.0
        drop(submit > end_s if right else submit >= end_s, "outside the time window")
    if options.max_runtime_s is not None:
        drop(run > options.max_runtime_s, f"run time > {options.max_runtime_s:g} s")
    unknown_wait = np.zeros(n, dtype=bool)
    if options.completed_before is not None:  # a history: what a site knew at that instant
        ends, unknown_wait = trace.end_s(run)
        drop(~(ends < options.completed_before), f"not completed before {options.completed_before:g} s")
    if options.max_user_share is not None and "user" in trace.extras and alive.any():
        users = np.array([str(int(u)) if isinstance(u, float | np.floating) and float(u).is_integer() else str(u)
                          for u in np.asarray(trace.extras["user"]).tolist()])
        known = alive & ~np.isin(users, ["-1", "None", "nan"])  # unknown users are nobody's flurry
        names, counts = np.unique(users[known], return_counts=True)
        total = int(alive.sum())  # shares among the jobs kept so far
        for name, count in zip(names.tolist(), counts.tolist(), strict=True):
            if count > options.max_user_share * total:
                drop(users == name, f"user {name}'s flurry (> {100 * options.max_user_share:g}% of the jobs)")
    if options.platform_size is not None and options.too_large == "drop":
        drop(res > options.platform_size, f"larger than the platform ({options.platform_size})")

    requested = np.nan_to_num(trace.requested_time_s.astype(np.float64), nan=-1.0)
    if options.requested_override_s is not None:
        requested = np.full(n, float(options.requested_override_s))
    has_walltime = requested > 0
    policy, _, argument = options.missing_walltime.partition(":")
    if policy == "drop":
        drop(~has_walltime, "no requested time")
    if options.first is not None:
        kept_positions = np.flatnonzero(alive)
        if len(kept_positions) > options.first:
            beyond = np.zeros(n, dtype=bool)
            beyond[kept_positions[options.first:]] = True
            drop(beyond, f"beyond the first {options.first} jobs")

    kept = np.flatnonzero(alive)
    if len(kept) == 0:
        raise InputError(_nothing_kept(trace, dropped, submit, start, options), path=trace.source)
    walltime = requested.copy()
    if policy == "runtime":
        walltime = np.where(has_walltime, requested, run)
    elif policy == "factor":
        walltime = np.where(has_walltime, requested, run * float(argument))
    elif policy == "max":
        walltime = np.where(has_walltime, requested, float(argument))
    if options.walltime_from == "runtime":
        walltime = run.astype(np.float64).copy()
    elif options.walltime_from == "none":
        walltime = np.full(n, -1.0)
    no_walltime = ~(walltime > 0)
    shift = float(submit[kept].min()) if len(kept) else 0.0
    ids = trace.job_ids[kept]
    unique_ids = len(set(ids.tolist())) == len(kept)

    nb_kept = len(kept)
    killed = int((alive & ~no_walltime & (walltime <= run)).sum())
    nb_res = options.platform_size or (int(res[kept].max()) if nb_kept else 1)
    summary = {
        "source": trace.source, "nb_trace_jobs": n, "nb_kept": nb_kept, "dropped": dict(sorted(dropped.items())),
        "nb_without_walltime": int((alive & no_walltime).sum()),
        "nb_killed_at_walltime": killed,
        "nb_walltime_from_runtime": (nb_kept if options.walltime_from == "runtime" else
                                     int((alive & ~has_walltime).sum()) if policy in ("runtime", "factor") else 0),
        "nb_larger_than_platform_kept": int((alive & (res > nb_res)).sum()),
        "submit_shift_s": shift, "ids": "trace job numbers" if unique_ids else "0..n-1 (trace ids repeat)",
        "options": asdict(options),
        **({"nb_completion_assumes_no_wait": int((alive & unknown_wait).sum())}
           if options.completed_before is not None else {}),
    }
    if sum(dropped.values()) + nb_kept != n:
        raise RuntimeError("internal error: a job was neither kept nor counted as dropped")
    extras = [(key, requested if key == "requested_time_s" and options.requested_override_s is not None else column)
              for key, column in trace.extras.items()]
    derived = options.walltime_from == "runtime" or (options.walltime_from == "requested" and
                                                       policy in ("runtime", "factor"))
    if derived and "requested_time_s" not in trace.extras:
        # the walltime tells the run time: the job says its request is unknown (-1), so no
        # scheduler or predictor reading `requested_time_s` falls back to that walltime
        extras.append(("requested_time_s", requested))
    # Columns become Python lists once (C speed); per-job work only zips them.
    converted = ConvertedWorkload(
        head={"description": description or f"converted from {trace.source} by schedlab", "nb_res": nb_res},
        ids=_as_list(ids) if unique_ids else list(range(nb_kept)),
        subtimes=_as_list(submit[kept] - shift),
        walltimes=_as_list(np.where(no_walltime[kept], -1.0, walltime[kept])),
        res=res[kept].tolist(), delays=_as_list(run[kept]),
        extras=[(key, column[kept]) for key, column in extras],
        summary=summary)
    return converted, summary


def _nothing_kept(trace: TraceJobs, dropped: Counter[str], submit: np.ndarray, start: float | None,
                  options: ConversionOptions) -> str:
    reasons = ", ".join(f"{count} {reason}" for reason, count in dropped.most_common())
    message = f"no job kept out of {len(trace)} ({reasons or 'empty trace'})"
    finite = submit[np.isfinite(submit)]
    if "outside the time window" in dropped and len(finite):
        def when(seconds: float) -> str:
            if trace.unix_start_s is None:
                return f"{seconds:g} s"
            return datetime.fromtimestamp(trace.unix_start_s + seconds, UTC).strftime("%Y-%m-%d %H:%M")
        window = f"from {when(start)}" if start is not None else "from the trace start"
        if options.days is not None:
            window += f" for {options.days:g} days"
        message += (f"; the window ({window}) holds no submission: the trace's submissions run from "
                    f"{when(float(finite.min()))} to {when(float(finite.max()))}")
    return message


def convert(trace: TraceJobs, options: ConversionOptions | None = None, *,
            description: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """Returns (Batsim JSON workload as a dict, summary); see `convert_columns`."""
    converted, summary = convert_columns(trace, options, description=description)
    return converted.to_dict(), summary


def _json_texts(values: np.ndarray) -> list[str | None]:
    """Each value as JSON text, None where it is unknown (NaN, None, infinite): the key is then left
    out of that job. Booleans become true/false, integral floats integers (as Batsim's files write)."""
    kind = values.dtype.kind
    if kind == "b":
        return ["true" if v else "false" for v in values.tolist()]
    if kind in "iu":
        return list(map(str, values.tolist()))
    if kind == "f":
        return [_number_text(v) for v in values.tolist()]
    return [_any_text(v) for v in values.tolist()]


def _number_text(value: float) -> str | None:
    if value != value or value in (math.inf, -math.inf):
        return None
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _any_text(value: Any) -> str | None:
    if isinstance(value, np.generic):
        value = value.item()
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if value is None or isinstance(value, bool):
        return None if value is None else ("true" if value else "false")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number_text(value)
    return json.dumps(value if isinstance(value, str) else str(value))


@dataclass
class ConvertedWorkload:
    """A converted workload kept as columns: `write` streams one job per line, a chunk of jobs at a
    time, without building 450k dicts or strings (a large trace converts in seconds and bounded
    memory); `to_dict` gives the JSON object.

    Every job has its own delay profile, named after the job: a profile name or a profile shared by
    two jobs would tell a scheduler something about run times (docs/design.md, "runtime-blind").
    """

    head: dict[str, Any]
    ids: list[Any]
    subtimes: list[Any]
    walltimes: list[Any]
    res: list[int]
    delays: list[Any]
    extras: list[tuple[str, np.ndarray]]  # (key, one value per job; NaN/None = unknown, key left out)
    summary: dict[str, Any]
    tail: dict[str, Any] = field(default_factory=dict)

    CHUNK_JOBS: ClassVar[int] = 65_536

    @property
    def profile_names(self) -> list[str]:
        return [str(i) for i in self.ids]

    def profiles(self) -> dict[str, dict[str, Any]]:
        return {name: {"type": "delay", "delay": d} for name, d in zip(self.profile_names, self.delays, strict=True)}

    def _job_lines(self) -> Iterator[list[str]]:
        """The jobs as JSON text, one list of lines per chunk."""
        dumps = json.dumps
        keys = [dumps(key) for key, _ in self.extras]
        for first in range(0, len(self.ids), self.CHUNK_JOBS):
            last = first + self.CHUNK_JOBS
            texts = [_json_texts(values[first:last]) for _, values in self.extras]
            lines = []
            for k, (i, s, w, r) in enumerate(zip(self.ids[first:last], self.subtimes[first:last],
                                                 self.walltimes[first:last], self.res[first:last], strict=True)):
                id_text = dumps(i) if isinstance(i, str) else repr(i)
                line = f'{{"id":{id_text},"subtime":{s!r},"walltime":{w!r},"res":{r},"profile":{dumps(str(i))}'
                for key, column in zip(keys, texts, strict=True):
                    if column[k] is not None:
                        line += f",{key}:{column[k]}"
                lines.append(line + "}")
            yield lines

    def job_dicts(self) -> list[dict[str, Any]]:
        return [json.loads(line) for lines in self._job_lines() for line in lines]

    def to_dict(self) -> dict[str, Any]:
        return {**self.head, "jobs": self.job_dicts(), "profiles": self.profiles(), "conversion": self.summary,
                **self.tail}

    def write(self, path: str) -> None:
        """The same JSON as `json.dumps(self.to_dict())` up to white space, one job per line."""
        from schedlab.paths import atomic_write

        dumps = json.dumps
        with atomic_write(path) as handle:
            handle.write("{\n")
            for key, value in self.head.items():
                handle.write(f"{dumps(key)}: {dumps(value)},\n")
            handle.write('"jobs": [\n')
            separator = ""
            for lines in self._job_lines():
                handle.write(separator + ",\n".join(lines))
                separator = ",\n"
            handle.write('\n],\n"profiles": {')
            separator = ""
            for first in range(0, len(self.ids), self.CHUNK_JOBS):
                last = first + self.CHUNK_JOBS
                chunk = zip(self.ids[first:last], self.delays[first:last], strict=True)
                handle.write(separator + ",".join(f'{dumps(str(i))}:{{"type":"delay","delay":{d!r}}}'
                                                  for i, d in chunk))
                separator = ","
            handle.write("},\n")
            for key, value in self.tail.items():
                handle.write(f"{dumps(key)}: {dumps(value)},\n")
            handle.write(f'"conversion": {dumps(self.summary)}\n}}\n')


def format_summary(summary: dict[str, Any]) -> str:
    lines = [f"{summary['nb_kept']} of {summary['nb_trace_jobs']} jobs kept from {summary['source']}"]
    for reason, count in summary["dropped"].items():
        lines.append(f"  dropped {count:>8}  {reason}")
    lines.append(f"  {summary['nb_without_walltime']} without walltime (-1), {summary['nb_killed_at_walltime']} "
                 f"will reach their walltime, {summary['nb_larger_than_platform_kept']} larger than the platform "
                 "kept (to be rejected)")
    lines.append(f"  submission times shifted by -{summary['submit_shift_s']:g} s; ids: {summary['ids']}")
    if summary["options"].get("walltime_from") == "runtime":
        lines.append("  clairvoyant: every walltime is the job's run time (--walltime-from runtime); Batsim "
                     "reports such jobs COMPLETED_WALLTIME_REACHED at their normal end, metrics are unaffected")
    elif summary.get("nb_walltime_from_runtime"):
        lines.append(f"  warning: {summary['nb_walltime_from_runtime']} walltimes were derived from run times "
                     "(--missing-walltime runtime/factor): schedulers see walltimes, so these jobs reveal "
                     "their run time")
    if summary.get("nb_completion_assumes_no_wait"):
        lines.append(f"  note: {summary['nb_completion_assumes_no_wait']} jobs have no recorded wait: their completion "
                     "is taken as submit + run time (the earliest it can have been)")
    return "\n".join(lines)
