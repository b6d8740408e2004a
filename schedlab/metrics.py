"""Schedule metrics, computed the same way from our engine's records or from any Batsim jobs.csv."""

from __future__ import annotations

import csv
import io
import math
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.errors import InputError

#: Bounded-slowdown threshold (seconds): max(turnaround / max(runtime, tau), 1), Feitelson et al. 1997.
BSLD_TAU_S = 10.0
#: Waiting-time thresholds of the `share_wait_lt_*` metrics (shares of the jobs that ran).
WAIT_SHARES_S = {"1min": 60.0, "10min": 600.0, "1h": 3600.0, "6h": 21600.0}


@dataclass(frozen=True, slots=True)
class Outcome:
    """One jobs.csv row, as numbers. Rejected jobs have start/finish None."""

    job_id: str
    submit_s: float
    res: int
    state: str
    start_s: float | None
    finish_s: float | None


class OutcomeColumns:
    """Rows of jobs.csv added one at a time (in its order), kept as what the metrics need: per job
    that ran its wait, turnaround, execution and size, in float arrays (32 bytes a job), and
    running counts. `compute_metrics` and schedule.csv's values are computed from it, so a run
    whose rows are written as they finish (never all held) gives the same figures to the bit."""

    def __init__(self) -> None:
        self.states: Counter[str] = Counter()
        self.nb_rows = 0
        self.first_submit_s = math.inf
        self.waits, self.turnarounds, self.executions = array("d"), array("d"), array("d")
        self.res = array("q")
        self.max_finish_s = 0.0  # times are >= 0: the latest finish, 0 without a job that ran

    def add(self, submit_s: float, res: int, state: str, start_s: float | None, finish_s: float | None) -> None:
        self.nb_rows += 1
        self.states[state] += 1
        if submit_s < self.first_submit_s:
            self.first_submit_s = submit_s
        if start_s is not None and finish_s is not None:
            self.waits.append(start_s - submit_s)
            self.turnarounds.append(finish_s - submit_s)
            self.executions.append(finish_s - start_s)
            self.res.append(res)
            if finish_s > self.max_finish_s:
                self.max_finish_s = finish_s

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> OutcomeColumns:
        columns = cls()
        for o in outcomes:
            columns.add(o.submit_s, o.res, o.state, o.start_s, o.finish_s)
        return columns



def compute_metrics(outcomes: Sequence[Outcome] | OutcomeColumns, nb_resources: int | None,
                    scheduling_time_s: float | None = None) -> dict[str, Any]:
    """Makespan, waiting/turnaround/slowdown (mean, max), bounded slowdown, utilisation, states.

    Means are over the jobs that ran (rejected jobs excluded; Batsim's schedule.csv divides by all
    jobs instead). Slowdown is Batsim's unbounded turnaround / execution time. `outcomes`: the rows,
    or their OutcomeColumns.
    """
    columns = outcomes if isinstance(outcomes, OutcomeColumns) else OutcomeColumns.of(outcomes)
    waits, turnarounds, executions = columns.waits, columns.turnarounds, columns.executions
    nb_ran = len(waits)

    def mean(values: Iterable[float], count: int) -> float | None:
        return math.fsum(values) / count if count else None

    def slowdowns() -> Iterator[float]:
        return (t / e for t, e in zip(turnarounds, executions, strict=True) if e > 0)

    def bounded() -> Iterator[float]:
        return (max(t / max(e, BSLD_TAU_S), 1.0) for t, e in zip(turnarounds, executions, strict=True))

    nb_slowdowns = sum(1 for e in executions if e > 0)
    makespan = columns.max_finish_s
    first_submit = columns.first_submit_s if columns.nb_rows else 0.0
    area = sum(e * r for e, r in zip(executions, columns.res, strict=True))
    span = makespan - first_submit
    utilisation = area / (nb_resources * span) if nb_resources and span > 0 else None
    metrics: dict[str, Any] = {
        "nb_jobs": columns.nb_rows,
        "nb_jobs_ran": nb_ran,
        "jobs_per_state": dict(sorted(columns.states.items())),
        "makespan_s": makespan,
        "mean_waiting_time_s": mean(waits, nb_ran),
        "max_waiting_time_s": max(waits, default=None),
        "mean_turnaround_time_s": mean(turnarounds, nb_ran),
        "max_turnaround_time_s": max(turnarounds, default=None),
        "mean_slowdown": mean(slowdowns(), nb_slowdowns),
        "max_slowdown": max(slowdowns(), default=None),
        "mean_bounded_slowdown": mean(bounded(), nb_ran),
        "max_bounded_slowdown": max(bounded(), default=None),
        "bounded_slowdown_tau_s": BSLD_TAU_S,
        "utilisation": utilisation,
        "nb_resources": nb_resources,
    }
    for name, limit in WAIT_SHARES_S.items():
        metrics[f"share_wait_lt_{name}"] = sum(w < limit for w in waits) / nb_ran if nb_ran else None
    metrics["nb_wait_gt_1day"] = sum(w > 86400.0 for w in waits)
    if scheduling_time_s is not None:
        metrics["scheduling_time_s"] = scheduling_time_s
    return metrics


def _float(text: str, key: str, path: str, line: int) -> float | None:
    if text == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"not a number: {text!r}", path=path, line=line, field=key) from None
    if not math.isfinite(value):
        raise InputError(f"not a finite number: {text!r}", path=path, line=line, field=key)
    return value


#: Columns `read_jobs_csv` needs (Batsim 4.2.1's jobs.csv has them all).
REQUIRED_JOBS_COLUMNS = ("job_id", "submission_time", "requested_number_of_resources", "final_state",
                         "starting_time", "finish_time")


def read_jobs_csv(path: str | Path) -> list[Outcome]:
    """Read a Batsim (or schedlab) `_jobs.csv`. A file without a header, a short or long row, or a
    last line without its newline (a file cut while written) is an error naming the line."""
    from schedlab.paths import read_input_text

    where = str(path)
    text = read_input_text(path, "a Batsim jobs.csv")
    if not text.strip():
        raise InputError("empty file (no header line; expected a Batsim jobs.csv)", path=where, line=1)
    if not text.endswith("\n"):
        raise InputError("the last line has no newline: the file looks truncated", path=where,
                         line=text.count("\n") + 1)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    for column in REQUIRED_JOBS_COLUMNS:
        if column not in header:
            raise InputError("missing column (is this a Batsim jobs.csv?)", path=where, line=1, field=column)
    index = {name: header.index(name) for name in REQUIRED_JOBS_COLUMNS}
    outcomes: list[Outcome] = []
    for row in reader:
        line = reader.line_num
        if len(row) != len(header):
            raise InputError(f"{len(row)} fields, the header has {len(header)} (truncated or malformed row)",
                             path=where, line=line)
        submit = _float(row[index["submission_time"]], "submission_time", where, line)
        res = _float(row[index["requested_number_of_resources"]], "requested_number_of_resources", where, line)
        if submit is None or res is None:
            raise InputError("empty value", path=where, line=line,
                             field="submission_time" if submit is None else "requested_number_of_resources")
        outcomes.append(Outcome(row[index["job_id"]], submit, int(res), row[index["final_state"]],
                                _float(row[index["starting_time"]], "starting_time", where, line),
                                _float(row[index["finish_time"]], "finish_time", where, line)))
    return outcomes


def nb_resources_from_schedule_csv(path: str | Path) -> int | None:
    """`nb_computing_machines` of a Batsim `_schedule.csv`, if the file exists."""
    path = Path(path)
    if not path.exists():
        return None
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    try:
        return int(rows[0]["nb_computing_machines"])
    except (IndexError, KeyError, ValueError):
        raise InputError("no nb_computing_machines value", path=str(path), line=2,
                         field="nb_computing_machines") from None


def format_table(metrics: dict[str, Any], keys: Iterable[str] | None = None) -> str:
    """A short two-column text table for terminals."""
    keys = list(keys) if keys is not None else [
        "nb_jobs", "makespan_s", "mean_waiting_time_s", "max_waiting_time_s", "mean_turnaround_time_s",
        "mean_slowdown", "mean_bounded_slowdown", "max_bounded_slowdown", "utilisation",
        "scheduling_time_s"]
    lines = []
    for key in keys:
        value = metrics.get(key)
        if isinstance(value, float):
            text = f"{value:.4f}" if abs(value) < 1e6 else f"{value:.6g}"
        else:
            text = "-" if value is None else str(value)
        lines.append(f"  {key:<26} {text}")
    states = metrics.get("jobs_per_state") or {}
    if states:
        lines.append("  " + "jobs_per_state".ljust(26) + " " + ", ".join(f"{k}={v}" for k, v in states.items()))
    return "\n".join(lines)
