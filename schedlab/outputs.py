"""Batsim-format outputs (`jobs.csv`, `schedule.csv`, exactly Batsim 4.2.1's columns) + summary.json.

jobs.csv rows are in completion order, numbers printed like C's `%f`, as Batsim writes them; evalys
reads these files. summary.json adds our metrics (deterministic part under "metrics", wall-clock
figures under "timing") and says whether the run is complete.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from procset import ProcSet

from schedlab import abilities
from schedlab.engine import JobRecord
from schedlab.host import EngineSurface
from schedlab.metrics import Outcome, OutcomeColumns, compute_metrics
from schedlab.model import JobState
from schedlab.paths import writing

JOBS_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy", "metadata",
)
SCHEDULE_COLUMNS = (
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished", "nb_jobs_killed",
    "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches", "scheduling_time", "simulation_time",
    "success_rate", "time_computing", "time_idle", "time_sleeping", "time_switching_off",
    "time_switching_on", "time_unavailable",
)


def _f(value: float) -> str:
    return f"{value:f}"


def _metadata(text: str) -> str:
    # Batsim writes '"' + metadata + '"' verbatim; doubling inner quotes keeps the CSV valid.
    return '"' + text.replace('"', '""') + '"'


def _alloc(alloc: ProcSet) -> str:
    """procset's own text form ("0-3 7"), without its per-interval formatting machinery (hot: one
    call per job). Reads procset 1.x's documented `_itvs` (resources.procset_from_sorted does)."""
    intervals = alloc._itvs
    if len(intervals) == 1:  # the common case: one run of ids
        inf, sup = intervals[0]
        return str(inf) if inf == sup else f"{inf}-{sup}"
    return " ".join(str(inf) if inf == sup else f"{inf}-{sup}" for inf, sup in intervals)


#: a row of a job that ran, in one %-format (C's %f, as Batsim prints): one call per job
_RAN_ROW = "%s,%s,%s,%f,%s,%f,%s,%s,%f,%f,%f,%f,%f,%f,%s,-1.000000,%s"
_REJECTED_ROW = "%s,%s,%s,%f,%s,%f,0,REJECTED,,,,,,,,,%s"
_SUCCESS, _REJECTED = JobState.COMPLETED_SUCCESSFULLY, JobState.REJECTED


def job_row(record: JobRecord) -> str:
    job = record.job
    job_id = job.id
    cut = job_id.find("!")  # Job.workload and Job.name, without two property calls
    workload, name = (job_id[:cut], job_id[cut + 1:]) if cut >= 0 else ("", job_id)
    walltime = job.walltime_s
    requested = -1.0 if walltime is None else walltime
    submit = job.submit_time_s
    state, metadata = record.state, record.metadata
    quoted = _metadata(metadata) if metadata else '""'
    if state is _REJECTED:
        return _REJECTED_ROW % (name, workload, job.profile, submit, job.res, requested, quoted)
    start, finish = record.span_s()
    runtime = finish - start
    turnaround = finish - submit
    stretch = turnaround / runtime if runtime > 0 else math.inf
    return _RAN_ROW % (name, workload, job.profile, submit, job.res, requested, "1" if state is _SUCCESS else "0",
                       state.value, start, runtime, finish, start - submit, turnaround, stretch,
                       _alloc(record.alloc), quoted)


def outcomes(records: Iterable[JobRecord]) -> list[Outcome]:
    return [Outcome(r.job.name, r.job.submit_time_s, r.job.res, r.state.value, r.start_s, r.finish_s)
            for r in records]


def schedule_row(records: list[JobRecord] | OutcomeColumns, nb_resources: int, scheduling_time_s: float,
                 simulation_time_s: float, version: str) -> dict[str, str]:
    """Batsim's schedule.csv values (its means divide by all jobs, rejected ones included), from the
    rows' records or their OutcomeColumns."""
    columns = records if isinstance(records, OutcomeColumns) else OutcomeColumns.of(outcomes(records))
    waits, turnarounds, executions = columns.waits, columns.turnarounds, columns.executions
    nb_ran = len(waits)

    def slowdowns() -> Iterator[float]:
        return (t / e if e > 0 else math.inf for t, e in zip(turnarounds, executions, strict=True))

    computing = math.fsum(e * r for e, r in zip(executions, columns.res, strict=True))
    makespan = columns.max_finish_s
    nb_jobs = columns.nb_rows
    success = columns.states[JobState.COMPLETED_SUCCESSFULLY.value]

    def mean(values: Iterable[float]) -> float:
        return math.fsum(values) / nb_jobs if nb_jobs else math.nan

    row = {
        "batsim_version": version, "consumed_joules": _f(0.0), "makespan": _f(makespan),
        "max_slowdown": _f(max(slowdowns(), default=0.0)), "max_turnaround_time": _f(max(turnarounds, default=0.0)),
        "max_waiting_time": _f(max(waits, default=0.0)), "mean_slowdown": _f(mean(slowdowns())),
        "mean_turnaround_time": _f(mean(turnarounds)), "mean_waiting_time": _f(mean(waits)),
        "nb_computing_machines": str(nb_resources), "nb_grouped_switches": "0", "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(nb_ran), "nb_jobs_killed": str(nb_ran - success),
        "nb_jobs_rejected": str(nb_jobs - nb_ran), "nb_jobs_success": str(success),
        "nb_machine_switches": "0", "scheduling_time": _f(scheduling_time_s),
        "simulation_time": _f(simulation_time_s),
        "success_rate": _f(success / nb_jobs if nb_jobs else math.nan), "time_computing": _f(computing),
        "time_idle": _f(max(nb_resources * makespan - computing, 0.0)), "time_sleeping": _f(0.0),
        "time_switching_off": _f(0.0), "time_switching_on": _f(0.0), "time_unavailable": _f(0.0),
    }
    return row


def _finite(value: Any) -> Any:
    """Strict JSON: non-finite floats become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def run_columns(engine: EngineSurface) -> OutcomeColumns:
    """The columns of the rows a run wrote: a streamed run keeps them (its rows were forgotten)."""
    columns = abilities.streamed_columns(engine)
    if columns is None:
        columns = OutcomeColumns.of(outcomes(engine.records[job_id] for job_id in engine.finished))
    return columns


def build_summary(engine: EngineSurface, *, run_info: Mapping[str, Any], simulation_time_s: float,
                  error: str | None = None, columns: OutcomeColumns | None = None) -> dict[str, Any]:
    """summary.json's content: run description, metrics (deterministic), timing (wall clock).
    `columns`: the run's (`run_columns`), when the caller has them already."""
    from schedlab import __version__

    if columns is None:
        columns = run_columns(engine)
    streamed = abilities.streamed_columns(engine) is not None
    nb_jobs = max(engine.workload.nb_jobs, engine.nb_jobs_read) if streamed else len(engine.records)  # type: ignore[attr-defined]
    return _finite({
        "schedlab_version": __version__,
        "engine": "embedded",
        "message_timing": abilities.message_timing(engine),
        "complete": error is None and engine.complete,
        "error": error,
        **run_info,
        "nb_jobs_in_workload": nb_jobs,
        "nb_jobs_unfinished": nb_jobs - columns.nb_rows,
        **({"most_jobs_held": engine.most_jobs_held} if streamed else {}),  # type: ignore[attr-defined]
        "simulated_time_s": engine.now,
        "metrics": compute_metrics(columns, engine.platform.nb_resources),
        "timing": {"scheduling_time_s": engine.scheduling_time_s, "simulation_time_s": simulation_time_s,
                   "training_time_s": abilities.training_time_s(engine.scheduler),  # within scheduling
                   "nb_steps": engine.nb_steps, "nb_decisions": engine.nb_decisions},
    })


def write_outputs(engine: EngineSurface, out_dir: str | Path, *, run_info: Mapping[str, Any],
                  simulation_time_s: float, error: str | None = None,
                  amend_summary: Callable[[dict[str, Any], Path], Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Write jobs.csv, schedule.csv and summary.json (also after a failure: partial, marked so);
    `amend_summary(summary, out_dir)` adds figures read from the files written before the summary."""
    from schedlab import __version__

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if abilities.streamed_columns(engine) is None:  # a streamed run wrote its rows there as its jobs ended
        with writing(out / "jobs.csv"), (out / "jobs.csv").open("w", encoding="utf-8", newline="") as handle:
            handle.write(",".join(JOBS_COLUMNS) + "\n")
            for job_id in engine.finished:
                handle.write(job_row(engine.records[job_id]) + "\n")
    columns = run_columns(engine)
    schedule = schedule_row(columns, engine.platform.nb_resources, engine.scheduling_time_s,
                            simulation_time_s, f"schedlab-{__version__}")
    with writing(out / "schedule.csv"), (out / "schedule.csv").open("w", encoding="utf-8", newline="") as handle:
        handle.write(",".join(SCHEDULE_COLUMNS) + "\n")
        handle.write(",".join(schedule[c] for c in SCHEDULE_COLUMNS) + "\n")
    summary = build_summary(engine, run_info=run_info, simulation_time_s=simulation_time_s, error=error,
                            columns=columns)
    if amend_summary is not None:
        summary.update(amend_summary(summary, out))
    with writing(out / "summary.json"):
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True, allow_nan=False,
                                                     default=str) + "\n", encoding="utf-8")
    return summary
