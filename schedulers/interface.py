"""The scheduler interface (batsched's `make_decisions` shape) and the table of schedulers by name.

A scheduler has no sockets, clocks or globals. The host (embedded engine, `schedlab serve`, the
pybatsim entry files) calls the `on_*` hooks for what happened at an instant, then `decide(now)`
once, and applies the frozen decisions it returns. Options, creation by name and plugins build on
this module (`base.py`, `plugins.py`); it imports neither.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from schedlab.model import Decision, Job, JobState, Platform


class Scheduler:
    """Base class: hooks record what happened, `decide(now)` returns decisions."""

    name: ClassVar[str] = ""
    #: what each option does, one sentence for `schedlab schedulers`; merged along the class's bases
    option_help: ClassVar[dict[str, str]] = {}
    #: what values an option takes when its type cannot say it (e.g. "default:SECONDS"); merged too
    option_choices: ClassVar[dict[str, str]] = {}
    #: options that act only with other options' values: {option: (the others, test of the effective
    #: options, "when it acts")}. Given while the test fails, the option would be silently ignored,
    #: so `create_scheduler` refuses it.
    option_acts_only: ClassVar[dict[str, tuple[tuple[str, ...], Callable[[Mapping[str, Any]], bool], str]]] = {}

    def __init__(self) -> None:
        self.platform: Platform | None = None
        self.nb_resources = 0
        #: Seconds spent fitting models inside decisions (online refits): part of the scheduling
        #: time the host measures, reported apart so both can be read.
        self.training_time_s = 0.0

    def prepare(self) -> None:
        """Heavy set-up before the simulation (loading or training a model): hosts call it before
        SIMULATION_BEGINS, outside the scheduling time they measure. Idempotent."""

    def check_inputs(self, workload: Any) -> None:
        """Extension point: check the files the options name against the workload to simulate
        (InputError: one line naming the option and file), before any output is touched."""

    # ---- hooks (record only)
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        self.platform = platform
        self.nb_resources = platform.nb_resources

    def on_job_submitted(self, job: Job, now: float) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement on_job_submitted(job, now)")

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement on_job_completed(job_id, state, now)")

    def on_jobs_killed(self, job_ids: Sequence[str], now: float) -> None:
        """After a Kill: the jobs were already reported by `on_job_completed(COMPLETED_KILLED)`."""

    def on_requested_call(self, now: float) -> None:
        """A CallMeLater came due."""

    def on_no_more_jobs(self, now: float) -> None:
        """Batsim's NOTIFY no_more_static_job_to_submit."""

    def on_simulation_ends(self, now: float) -> None:
        """The end: nothing can be decided any more."""

    # ---- decisions
    def decide(self, now: float) -> list[Decision]:
        raise NotImplementedError(f"{type(self).__name__} must implement decide(now)")

    def options(self) -> dict[str, Any]:
        """The options this instance runs with (recorded in outputs)."""
        return {}

    def run_report(self) -> dict[str, Any]:
        """Extension point: figures of the run worth keeping (summary.json's `scheduler_report`),
        e.g. how many jobs a hybrid planned as predictable."""
        return {}

    def run_notes(self) -> list[str]:
        """Extension point: what a user must be told after the run (one line each, on stderr), e.g.
        that a hybrid planned no job and so ran EASY's schedule."""
        return []


SCHEDULERS: dict[str, type[Scheduler]] = {}

#: The module defining each shipped scheduler: `create_scheduler` imports only the one asked for, so
#: `simulate easy` does not load the predictors' dependencies (scikit-learn, pandas).
BUILTIN_MODULES = {
    "fcfs": "fcfs", "easy": "easy", "easy-sjbf": "easy", "easy-pp": "easy_pp", "diws": "diws",
    "hybrid": "hybrid", "online-sjf": "plan_based", "online-svf": "plan_based", "fcfs-bf1": "plan_based",
    "fcfs-bf2": "plan_based",
}


def register(name: str) -> Callable[[type[Scheduler]], type[Scheduler]]:
    """Class decorator: make a scheduler available by `name` (CLI, serve, pybatsim entries)."""

    def wrap(cls: type[Scheduler]) -> type[Scheduler]:
        if name in BUILTIN_MODULES and not cls.__module__.startswith("schedlab.schedulers."):
            raise ValueError(f"scheduler name {name!r} is a shipped scheduler's (choose another)")
        if name in SCHEDULERS and not _same_class(SCHEDULERS[name], cls):
            raise ValueError(f"scheduler name {name!r} registered twice")
        cls.name = name
        SCHEDULERS[name] = cls
        return cls

    return wrap


def _same_class(a: type, b: type) -> bool:
    """One class loaded twice (a user's file imported by path and as a module): same name, same file."""
    if a is b:
        return True
    try:
        return a.__qualname__ == b.__qualname__ and inspect.getsourcefile(a) == inspect.getsourcefile(b)
    except TypeError:
        return False
