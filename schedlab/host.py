"""The host contract: what every host of a scheduler (the embedded engine, the Batsim-timed engine,
`schedlab serve`, the pybatsim adapter) may ask of it, and the one driver they all use.

A scheduler answers the hooks of `SchedulerHooks` (what happened) and `decide(now)`. Its optional
abilities are declared as Protocols, not looked up by name at each use: `Preparable` (heavy set-up
before the simulation, outside the scheduling time), `DecidesTimed` (an external process whose reply
carries its own timestamps), `WantsEventTimestamps` (each event's own Batsim timestamp rather than
the message's `now`), `Closable`. `SchedulerDriver` delivers `Event`s through one table, calls
`prepare` once, times the hooks and `decide` together, and, for hosts that must answer for it
(`serve`), says a scheduler's failure with the event it failed on.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

from schedlab import abilities
from schedlab.errors import SchedlabError, SchedulerFailure
from schedlab.model import Decision, Job, JobState, Platform


class Event(IntEnum):
    """What a host tells a scheduler. The value orders the events of one instant in the embedded
    engine's heap (Batsim reports completions first); DEFERRED_DECISIONS is the engine's own
    (decisions an external process timestamped later), never delivered to a scheduler."""

    DEFERRED_DECISIONS = 0
    JOB_COMPLETED = 1  # payload: (job id, JobState)
    JOBS_KILLED = 2  # payload: the job ids (each already reported by JOB_COMPLETED, COMPLETED_KILLED)
    JOB_SUBMITTED = 3  # payload: the Job
    NO_MORE_JOBS = 4  # Batsim's NOTIFY no_more_static_job_to_submit
    REQUESTED_CALL = 5
    SIMULATION_BEGINS = 6  # payload: the Platform
    SIMULATION_ENDS = 7


class SchedulerHooks(Protocol):
    """What every scheduler answers (schedlab.schedulers.interface.Scheduler is one)."""

    def on_simulation_begins(self, platform: Platform, now: float) -> None: ...
    def on_job_submitted(self, job: Job, now: float) -> None: ...
    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None: ...
    def on_jobs_killed(self, job_ids: Sequence[str], now: float) -> None: ...
    def on_requested_call(self, now: float) -> None: ...
    def on_no_more_jobs(self, now: float) -> None: ...
    def on_simulation_ends(self, now: float) -> None: ...
    def decide(self, now: float) -> list[Any]: ...


class HostedScheduler(SchedulerHooks, Protocol):
    """A scheduler a run hosts: its hooks, and the options its summary records (every schedlab
    Scheduler; an external decision process: its command)."""

    def options(self) -> dict[str, Any]: ...


@runtime_checkable
class Preparable(Protocol):
    def prepare(self) -> None: ...


@runtime_checkable
class DecidesTimed(Protocol):
    def decide_timed(self, now: float) -> tuple[float, list[tuple[float, Decision]]]: ...


@runtime_checkable
class WantsEventTimestamps(Protocol):
    wants_event_timestamps: bool


@runtime_checkable
class Closable(Protocol):
    def close(self) -> None: ...


class EngineSurface(Protocol):
    """What outputs, metrics and runs read of an engine (both engines have it)."""

    platform: Platform
    workload: Any
    scheduler: SchedulerHooks
    records: dict[str, Any]
    finished: list[str]
    scheduling_time_s: float
    nb_decisions: int
    nb_steps: int
    timing: str

    @property
    def now(self) -> float: ...
    @property
    def complete(self) -> bool: ...
    def run(self) -> None: ...


def _hooks(scheduler: SchedulerHooks) -> dict[Event, Callable[[Any, float], None]]:
    """One entry per event: how its payload reaches the scheduler's hook (bound once; a hook a
    duck-typed scheduler lacks fails when its event comes, as calling it would)."""

    hook = functools.partial(abilities.hook, scheduler)
    completed, killed = hook("on_job_completed"), hook("on_jobs_killed")
    call, no_more, ends = hook("on_requested_call"), hook("on_no_more_jobs"), hook("on_simulation_ends")
    return {
        Event.SIMULATION_BEGINS: hook("on_simulation_begins"),
        Event.JOB_SUBMITTED: hook("on_job_submitted"),
        Event.JOB_COMPLETED: lambda payload, now: completed(payload[0], payload[1], now),
        Event.JOBS_KILLED: lambda payload, now: killed(tuple(payload), now),
        Event.REQUESTED_CALL: lambda payload, now: call(now),
        Event.NO_MORE_JOBS: lambda payload, now: no_more(now),
        Event.SIMULATION_ENDS: lambda payload, now: ends(now),
    }


class SchedulerDriver:
    """One scheduler as every host drives it. `deliver` tells it what happened (one table keyed by
    Event), `decide` asks for decisions; both add to `scheduling_time_s`. `wrap_failures`: a
    scheduler's exception becomes a SchedulerFailure naming the event (a host answering Batsim for
    it); otherwise it propagates as raised (the engine's run says it)."""

    def __init__(self, scheduler: SchedulerHooks, *, wrap_failures: bool = False) -> None:
        self.scheduler = scheduler
        self.wrap_failures = wrap_failures
        self.scheduling_time_s = 0.0
        self.hooks = _hooks(scheduler)
        self.decides_timed = isinstance(scheduler, DecidesTimed)
        self.wants_event_timestamps = abilities.wants_event_timestamps(scheduler)
        self._prepared = False
        #: a host's observers of each decision, not the scheduler's code (the checker's budgets and
        #: recording): called with `now` before `decide`, and with `now` and the decisions after it
        self.before_decide: list[Callable[[float], None]] = []
        self.after_decide: list[Callable[[float, list[Any]], None]] = []

    def prepare(self) -> None:
        """The scheduler's heavy set-up, once, untimed (models loaded or trained)."""
        if not self._prepared:
            self._prepared = True
            if isinstance(self.scheduler, Preparable):
                self.scheduler.prepare()

    def deliver(self, events: Iterable[tuple[Event, Any]], now: float) -> None:
        """Each (event, payload) told to the scheduler at `now`, timed (SIMULATION_BEGINS prepares
        it first, untimed, if no host did)."""
        self.step(events, now, decide=False)

    def decide(self, now: float) -> list[Any]:
        return self.step((), now)

    def step(self, events: Iterable[tuple[Event, Any]], now: float, *, decide: bool = True) -> list[Any]:
        """What happened at `now` told, then (`decide`) the scheduler's decisions: one timed region,
        as the engine asks at each instant."""
        hooks, begins = self.hooks, Event.SIMULATION_BEGINS
        kind, payload, deciding = None, None, False
        t0 = time.perf_counter()
        try:
            for kind, payload in events:
                if kind is begins and not self._prepared:
                    began = time.perf_counter()
                    self.prepare()
                    t0 += time.perf_counter() - began
                hooks[kind](payload, now)
            deciding = decide
            if not decide:
                return []
            if self.before_decide or self.after_decide:
                return self._observed_decide(now)
            return self.scheduler.decide(now)
        except SchedlabError:
            raise
        except Exception as exc:
            if not self.wrap_failures:
                raise
            if deciding or kind is None:
                where = "in decide"
            else:  # JobSubmitted: Batsim's name of the event, as serve's errors give it
                where = f"on {kind.name.title().replace('_', '')}{_about(kind, payload)}"
            raise self._failure(where, now, exc) from exc
        finally:
            self.scheduling_time_s += time.perf_counter() - t0

    def _observed_decide(self, now: float) -> list[Any]:
        for observe in self.before_decide:
            observe(now)
        decisions = self.scheduler.decide(now)
        for seen in self.after_decide:
            seen(now, decisions)
        return decisions

    def decide_timed(self, now: float) -> tuple[float, list[tuple[float, Decision]]]:
        """An external process's reply as Batsim applies it: its `now` and (timestamp, decision)s."""
        scheduler = self.scheduler
        assert isinstance(scheduler, DecidesTimed)  # asked only when `decides_timed`
        t0 = time.perf_counter()
        try:
            return scheduler.decide_timed(now)
        finally:
            self.scheduling_time_s += time.perf_counter() - t0

    def _failure(self, where: str, now: float, exc: Exception) -> SchedulerFailure:
        failure = SchedulerFailure(f"scheduler {abilities.scheduler_name(self.scheduler)!r} failed {where} at t={now}: "
                                   f"{type(exc).__name__}: {exc}")
        failure.scheduler_module = type(self.scheduler).__module__
        return failure


def _about(kind: Event, payload: Any) -> str:
    job_id = payload.id if kind is Event.JOB_SUBMITTED else payload[0] if kind is Event.JOB_COMPLETED else None
    return f" for job '{job_id}'" if job_id else ""
