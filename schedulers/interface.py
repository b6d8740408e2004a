"""The scheduler interface (batsched's `make_decisions` shape) and the table of schedulers by name.

A scheduler has no sockets, clocks or globals. The host (embedded engine, `schedlab serve`, the
pybatsim entry files) calls the `on_*` hooks for what happened at an instant, then `decide(now)`
once, and applies the frozen decisions it returns. Options, creation by name and plugins build on
this module (`base.py`, `plugins.py`); it imports neither.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
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
    #: options a scheduler made by name must be given: {option: what to say when it is not}
    required_options: ClassVar[dict[str, str]] = {}
    #: dict attributes keyed by job id that only reports read after the run (reservations,
    #: predictions), merged along the bases. A streamed run (engine/stream.py) sets `keeps_records`
    #: False: each job's entries are then forgotten once it ended (`forget_job`), so a scheduler
    #: holds its live jobs and its own window, not the trace.
    per_job_records: ClassVar[tuple[str, ...]] = ()
    keeps_records = True
    #: time per job relative to EASY's (a campaign dispatches the runs expected longest first)
    relative_cost: ClassVar[float] = 1.0
    #: peak memory per resource of the platform, rounded up (`schedlab.memory` refuses runs that
    #: cannot fit): EASY and FCFS on 1,000,000 resources, 75 bytes each
    bytes_per_resource: ClassVar[int] = 100

    def __new__(cls, *args: Any, **kwargs: Any) -> Scheduler:
        """Every option with a `Literal[...]` annotation is checked here, once for all classes, against
        the class created (its subclasses' internal `super().__init__` calls are not)."""
        for key, choices in _literal_options(cls).items():
            if key in kwargs and kwargs[key] not in choices:
                raise ValueError(f"{key} must be one of {', '.join(map(str, choices))}, got {kwargs[key]!r}")
        return super().__new__(cls)

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
        (InputError: one line naming the option and file), before any output is touched. `workload`
        is an `InputsView`: sizes, submit times, walltimes, extra fields and profile types, never a
        run time nor the file's path (its `source_sha256` instead)."""

    # ---- hooks (record only)
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        """The platform, before anything else; sets `platform` and `nb_resources` (call super())."""
        self.platform = platform
        self.nb_resources = platform.nb_resources

    def on_job_submitted(self, job: Job, now: float) -> None:
        """A job was submitted (the Job is your copy: the host keeps its own). Record it: `decide`
        comes once every event of the instant is told."""
        raise NotImplementedError(f"{type(self).__name__} must implement on_job_submitted(job, now)")

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        """A job you started ended (`state`: see Job states); its run time is `now` minus its start.
        Never called for a job you rejected."""
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
        """Once per instant, after the hooks of all its events: the decisions to apply now, in
        order (maybe none). The only place that decides."""
        raise NotImplementedError(f"{type(self).__name__} must implement decide(now)")

    def options(self) -> dict[str, Any]:
        """The options this instance runs with, as keyword arguments that re-create it (summary.json
        records them). Derived from `__init__` as scikit-learn's `get_params` is: each keyword option
        is read from the attribute of its name, which `__init__` stores; an option that acts only with
        other values (`option_acts_only`) is left out where they make it inert, since creation refuses
        it there. A class keeping an option under another name overrides this."""
        values = {key: getattr(self, key) for key in keyword_options(type(self)) if hasattr(self, key)}
        inert = inert_options_of(type(self), values)
        return {key: value for key, value in values.items() if key not in inert}

    def forget_job(self, job_id: str) -> None:
        """A job's entries in the `per_job_records` dicts, dropped (a streamed run, once it ended)."""
        for name in _per_job_records(type(self)):
            getattr(self, name).pop(job_id, None)

    def run_report(self) -> dict[str, Any]:
        """Extension point: figures of the run worth keeping (summary.json's `scheduler_report`),
        e.g. how many jobs a hybrid planned as predictable."""
        return {}

    def run_notes(self) -> list[str]:
        """Extension point: what a user must be told after the run (one line each, on stderr), e.g.
        that a hybrid planned no job and so ran EASY's schedule."""
        return []


def option_bundle(bundle: type, *, before_own: bool = False,
                  **defaults: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorates an `__init__(self, *, ..., **bundled)` whose `**bundled` are the fields of the
    dataclass `bundle` (options several schedulers share, kept once): its signature, which options,
    listings and the command line read, shows the fields (typed, with their defaults, or these
    `defaults`, which the call also gets) in place of `**bundled`, after the `__init__`'s own
    options (before them with `before_own`)."""

    def wrap(init: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(init)
        hints = typing.get_type_hints(bundle)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        fields = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(f.name, f.default),
                                    annotation=hints[f.name]) for f in dataclasses.fields(bundle)]
        made = init
        if defaults:  # this class's defaults where the bundle's differ

            @functools.wraps(init)
            def made(self: Any, **options: Any) -> None:
                init(self, **{**defaults, **options})

        made.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[own[0], *fields, *own[1:]] if before_own else [*own, *fields])
        made.__annotations__ = {**init.__annotations__, **{p.name: p.annotation for p in fields}}
        return made

    return wrap


def keyword_options(cls: Any) -> dict[str, inspect.Parameter]:
    """A scheduler class's options: the keyword-only parameters of its `__init__`."""
    return {key: p for key, p in inspect.signature(cls.__init__).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


_LITERALS: dict[type, dict[str, tuple[Any, ...]]] = {}


def _literal_options(cls: Any) -> dict[str, tuple[Any, ...]]:
    """{option: its choices} for the options `cls.__init__` annotates with a Literal (cached per class;
    annotations that cannot be resolved check nothing)."""
    if cls not in _LITERALS:
        try:
            hints = typing.get_type_hints(cls.__init__)
        except Exception:  # a user's annotation naming what its module does not define
            hints = {}
        _LITERALS[cls] = {key: typing.get_args(hint) for key, hint in hints.items()
                          if typing.get_origin(hint) is typing.Literal}
    return _LITERALS[cls]


def merged_class_dict(cls: type, attribute: str) -> dict[str, Any]:
    """A class-level dict attribute merged along the bases (a subclass's entries win)."""
    merged: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        merged.update(vars(klass).get(attribute, {}))
    return merged


def inert_options_of(cls: type, options: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """{option: (the others' values, when it acts)} for each option of `options` that would have no
    effect with the others (`option_acts_only`; omitted options count at their defaults)."""
    effective = {key: p.default for key, p in keyword_options(cls).items()} | dict(options)
    found = {}
    for key, (others, acts, when) in merged_class_dict(cls, "option_acts_only").items():
        if key in options and not acts(effective):
            found[key] = (", ".join(f"{other}={effective.get(other)}" if effective.get(other) not in ("", None)
                                    else f"no {other}=" for other in others), when)
    return found


SCHEDULERS: dict[str, type[Scheduler]] = {}

#: The module defining each shipped scheduler: `create_scheduler` imports only the one asked for, so
#: `simulate easy` does not load the predictors' dependencies (scikit-learn, pandas).
BUILTIN_MODULES = {
    "fcfs": "fcfs", "easy": "easy", "easy-sjbf": "easy", "easy-pp": "easy_pp", "diws": "diws",
    "hybrid": "hybrid", "online-sjf": "plan_based", "online-svf": "plan_based", "fcfs-bf1": "plan_based",
    "fcfs-bf2": "plan_based", "easy-predicted": "probabilistic", "easy-prob": "probabilistic",
    "policy": "agent",
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


_PER_JOB_RECORDS: dict[type, tuple[str, ...]] = {}


def _per_job_records(klass: type) -> tuple[str, ...]:
    """Every `per_job_records` name of `klass` and its bases, found once (asked at every job's end)."""
    names = _PER_JOB_RECORDS.get(klass)
    if names is None:
        names = _PER_JOB_RECORDS[klass] = tuple(sorted(
            {name for base in klass.__mro__ for name in vars(base).get("per_job_records", ())}))
    return names
