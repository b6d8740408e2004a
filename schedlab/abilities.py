"""Optional abilities of schedulers and engines: the one place that asks whether an object has one.

Hosts, outputs and campaigns need more of some schedulers and engines than their contracts
(`host.SchedulerHooks`, `host.EngineSurface`): a scheduler's report, notes, predictions or training
time, an engine's streamed columns. Each ability is declared here (a name, what it gives, a default
for those without it) and asked through one function, so no other module probes an object by name
(`tests/test_composition.py` checks that no `getattr`/`hasattr` on a scheduler or an engine appears
elsewhere). An object has an ability when it has the attribute: schedlab's `Scheduler` class
declares the common ones, a user's duck-typed scheduler may lack any.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def hook(scheduler: object, name: str) -> Callable[..., None]:
    """A hook of the host contract, bound once; one the scheduler lacks fails when its event comes
    (as calling it would), not when the host starts."""
    method = getattr(scheduler, name, None)
    return method if method is not None else lambda *args: getattr(scheduler, name)(*args)


def scheduler_name(scheduler: object) -> str:
    """Its registered name, '?' for an object without one."""
    return str(getattr(scheduler, "name", "?"))


def wants_event_timestamps(scheduler: object) -> bool:
    """Whether it reads each event's own time (an external process under Batsim's timing)."""
    return bool(getattr(scheduler, "wants_event_timestamps", False))


def forgets_ended_jobs(scheduler: object) -> None:
    """A streamed run: report-only entries go once a job ended (`Scheduler.keeps_records`), for
    schedulers that keep them."""
    if hasattr(scheduler, "keeps_records"):
        setattr(scheduler, "keeps_records", False)  # noqa: B010 (declared by Scheduler, not by object)


def training_time_s(scheduler: object) -> float:
    """Seconds it spent fitting models, within its scheduling time (0: none)."""
    return float(getattr(scheduler, "training_time_s", 0.0))


def run_report(scheduler: object) -> Callable[[], dict[str, Any]] | None:
    """What gives its figures worth keeping (summary.json's `scheduler_report`), or None."""
    return getattr(scheduler, "run_report", None)


def run_notes(scheduler: object) -> list[str]:
    """What a user must be told after its run (one line each)."""
    teller = getattr(scheduler, "run_notes", None)
    return [] if teller is None else list(teller())


def predictions_s(scheduler: object) -> dict[str, float] | None:
    """Each job's planning estimate at its submission, for a scheduler that plans with predictions
    (None: it does not)."""
    return getattr(scheduler, "predictions_s", None)


def records_quantiles(scheduler: object, levels: tuple[float, ...]) -> None:
    """Ask a scheduler planning with a distribution to record these quantiles of each job at its
    submission (for reports of calibration); others have no such ability."""
    if hasattr(scheduler, "recorded_levels"):
        scheduler.recorded_levels = levels


def recorded_quantiles(scheduler: object) -> tuple[tuple[float, ...], dict[str, list[float]]]:
    """(the levels it recorded, each job's quantiles at them): empty for the others."""
    return tuple(getattr(scheduler, "recorded_levels", ())), getattr(scheduler, "recorded_quantiles_s", {})


def streamed_columns(engine: object) -> Any:
    """A streamed run's columns of the rows it wrote as its jobs ended (its rows were forgotten), or
    None for an engine that keeps its records."""
    return getattr(engine, "columns", None)


def message_timing(engine: object) -> str:
    """How its messages take time: `ideal` or `batsim`."""
    return str(getattr(engine, "timing", "ideal"))


class FromEstimate:
    """A scheduler attribute that is its composed estimate's (schedlab.schedulers.strategies): what a
    prediction scheduler offers (`predictions_s`, `recorded_levels`, `recorded_quantiles_s`, asked
    for above), declared on each such class."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, scheduler: object, owner: type | None = None) -> Any:
        if scheduler is None:
            return self
        return getattr(getattr(scheduler, "estimate"), self.name)  # noqa: B009 (object declares none)

    def __set__(self, scheduler: object, value: Any) -> None:
        setattr(getattr(scheduler, "estimate"), self.name, value)  # noqa: B009
