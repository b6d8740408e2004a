"""Schedulers steered by a policy: at each decision, an observation (observation.py) and a mask of
the allowed actions; the action starts one of the first K waiting jobs, or waits for the next event.

`AgentScheduler` (`policy`) holds the state and the rules, and composes what chooses the actions:
the Gymnasium environment (schedlab.rl) between an engine's pauses when it has no `policy`, or its
`policy` (a function, a model, a saved linear policy) inside `decide`. Both make the same calls in
the same order, so a policy gives one schedule through either, under `simulate`, `serve` (real
Batsim), pybatsim and campaigns. `PolicyScheduler` is its former name.

Actions (Discrete(K + 1)): i < K starts the i-th waiting job (queue order, FCFS by default); K waits.
The mask allows the jobs that fit now, and waiting unless nothing could happen any more (nothing
running, every job submitted, no call asked). With `backfill=True` (RLScheduler's setting) every
visible job is allowed: a pick that does not fit gets EASY's head reservation, the other jobs are
backfilled around it (count rule, walltimes) until it starts, and the agent is asked again only
then; always picking job 0 is then EASY, always picking job 0 without backfill is FCFS (tested).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from schedlab.errors import InputError, SchedulerFailure
from schedlab.model import Decision, Job, JobState, Platform
from schedlab.schedulers.base import register
from schedlab.schedulers.easy import EasyBackfilling
from schedlab.schedulers.observation import (
    DAY_S,
    FITS,
    JOB_FEATURES,
    UNBOUNDED,
    USER_LAST2,
    USER_RUNNING,
    WAIT,
    JobTable,
    ObservationLayout,
    parse_horizons,
)
from schedlab.schedulers.queue import Running

InvalidAction = Literal["raise", "wait"]


class InvalidActionError(ValueError):
    """An action the mask forbids, with `invalid_action="raise"`."""


@register("policy")
class AgentScheduler(EasyBackfilling):
    """A policy (observation -> action, or (observation, mask) -> action) run as a scheduler:
    `policy=` a function, an object with `predict` (Stable-Baselines3's: its first return value),
    FILE.json (a linear scoring policy: schedlab.rl's export) or FILE.py:NAME / MODULE:NAME; without
    one (in Python), schedlab.rl's environment chooses the actions."""

    option_help = {
        "policy": "the policy: FILE.json (schedlab.rl's linear scoring policy) or FILE.py:NAME / "
                  "MODULE:NAME of a function observation -> action or (observation, mask) -> action",
        "max_queue": "K: how many waiting jobs (in queue order) the observation shows and an action can start",
        "backfill": "a pick that does not fit now gets EASY's head reservation and the others are backfilled "
                    "around it (the agent is a queue policy)",
        "model": "a runtime predictor saved by `schedlab predictor train`: each job's prediction feature "
                 "(default: its requested time)",
        "horizons_s": "seconds ahead at which the observation gives the free resources (availability profile)",
        "time_scale_s": "seconds per unit of the observation's time features",
        "day_start_s": "the time of day (seconds after midnight) at simulated time 0",
        "invalid_action": "an action the mask forbids: raise, or wait (a start when waiting is forbidden too)",
    }
    option_choices = {"policy": "FILE.json | FILE.py:NAME | MODULE:NAME", "model": "PATH.skops",
                      "horizons_s": "SECONDS,SECONDS,..."}
    #: made by name (the command line, campaigns, the API), it needs its policy
    required_options = {"policy": "give policy=FILE.json, FILE.py:NAME or MODULE:NAME (or a function in Python)"}

    def __init__(self, *, policy: Any = "", max_queue: int = 32, backfill: bool = False, model: str = "",
                 horizons_s: str = "600,3600,14400,86400", time_scale_s: float = 3600.0, day_start_s: float = 0.0,
                 invalid_action: InvalidAction = "raise", queue_order: str = "fcfs") -> None:
        super().__init__(queue_order=queue_order)
        if self._policy.dynamic:
            raise ValueError("queue_order must be a static order: the agent sees the first K jobs of it")
        self.use_index = False  # the queue is a list: the agent picks anywhere in it
        self.layout = ObservationLayout(max_queue, parse_horizons(horizons_s), time_scale_s)
        self.max_queue, self.backfill, self.model = max_queue, backfill, model
        self.horizons_s, self.time_scale_s, self.day_start_s = horizons_s, time_scale_s, day_start_s
        self.invalid_action = invalid_action
        self._table = JobTable(0, time_scale_s)
        self._predictor: Any = None
        self._reserved: str | None = None  # backfill: the picked job holding the head's reservation
        self._no_more_jobs = False
        self._fresh: list[Job] = []  # submitted at this instant, predicted in one batch
        self.nb_actions = 0
        self.policy = policy
        self._steered_s: float | None = None  # the last instant the environment began (`begin`)
        #: what chooses the actions inside `decide` (None: the environment, between pauses)
        self._choose: Callable[[np.ndarray, np.ndarray], int] | None = None
        self._policy_module = ""  # the module of the policy's code (its failures are its own)
        if not (isinstance(policy, str) and not policy):
            loaded = load_policy(policy) if isinstance(policy, str) else policy
            check = getattr(loaded, "check_settings", None)
            if check is not None:  # a saved policy knows the observation it was trained on
                check(self.observation_settings())
            self._choose = _as_choice(loaded)
            self._policy_module = getattr(loaded, "__module__", None) or type(loaded).__module__

    def observation_settings(self) -> dict[str, Any]:
        """What decides what an observation means: a policy trained under other settings would read
        other numbers (a saved policy records these and is refused elsewhere)."""
        from schedlab.paths import sha256_file

        return {**self.layout.as_dict(), "backfill": self.backfill, "queue_order": self.queue_order,
                "day_start_s": self.day_start_s, "model_sha256": sha256_file(self.model) if self.model else ""}

    # ------------------------------------------------------------------ inputs
    def check_inputs(self, workload: Any) -> None:
        if self.model:
            from schedlab.predictors.training import refuse_look_ahead_model

            refuse_look_ahead_model(self.model, workload)

    def prepare(self) -> None:
        if self.model and self._predictor is None:
            from schedlab.predictors.runtime import load

            self._predictor = load(self.model)[0]

    # ------------------------------------------------------------------ hooks
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self._table = JobTable(platform.nb_resources, self.time_scale_s)
        self.prepare()

    def on_job_submitted(self, job: Job, now: float) -> None:
        super().on_job_submitted(job, now)
        if job.res <= self.nb_resources:
            self._fresh.append(job)

    def on_no_more_jobs(self, now: float) -> None:
        self._no_more_jobs = True

    def _start(self, job: Job, now: float, decisions: list[Decision], estimate_s: float | None = None,
               alloc: Any = None) -> None:
        if self._fresh:
            self._record_fresh()
        super()._start(job, now, decisions, estimate_s, alloc)
        self._table.started(job.id)

    def job_finished(self, running: Running, state: JobState, now: float) -> None:
        super().job_finished(running, state, now)
        self._table.ended(running.job.id, now - running.start_s)

    def _record_fresh(self) -> None:
        """The jobs submitted since the last look, into the table (their predictions in one call)."""
        jobs, self._fresh = self._fresh, []
        if self._predictor is not None:
            predicted = np.asarray(self._predictor.predict_jobs(jobs), float)
        for index, job in enumerate(jobs):
            requested = math.inf if job.walltime_s is None else job.walltime_s
            prediction = requested
            if self._predictor is not None and math.isfinite(float(predicted[index])):
                prediction = min(max(float(predicted[index]), 1.0), requested)  # else: the request
            self._table.add(job.id, job.submit_time_s, job.res, requested, prediction, job.extra.get("user"))

    # ------------------------------------------------------------------ what the agent sees
    def has_choice(self) -> bool:
        """Whether the agent is asked now: jobs wait, no reservation holds, and one can start (with
        backfill: any visible job)."""
        queue = self._queue
        if not queue or self._reserved is not None:
            return False
        if self.backfill:
            return True
        free = self._resources.nb_free
        return any(entry.res <= free for entry in queue[:self.max_queue])

    def wait_allowed(self) -> bool:
        """Waiting is allowed unless no event could come any more."""
        return bool(self._running) or not self._no_more_jobs or bool(self._call_times)

    def action_mask(self) -> np.ndarray:
        """int8, K + 1: the visible jobs that fit now (with backfill: every visible job), then wait."""
        k_max = self.max_queue
        mask = np.zeros(k_max + 1, np.int8)
        visible = self._queue[:k_max]
        if self.backfill:
            mask[:len(visible)] = 1
        else:
            free = self._resources.nb_free
            for index, entry in enumerate(visible):
                if entry.res <= free:
                    mask[index] = 1
        mask[k_max] = self.wait_allowed()
        return mask

    def observe(self, now: float) -> np.ndarray:
        """The observation now (float32, `layout.size`)."""
        if self._fresh:
            self._record_fresh()
        layout, table = self.layout, self._table
        k_max, nb = layout.max_queue, max(self.nb_resources, 1)
        obs = np.zeros(layout.size, np.float32)
        visible = self._queue[:k_max]
        k = len(visible)
        free = self._resources.nb_free
        if k:
            slot_of = table.slot
            slots = np.fromiter((slot_of[entry.job.id] for entry in visible), np.int64, k)
            rows = obs[:k * len(JOB_FEATURES)].reshape(k, len(JOB_FEATURES))
            stored = table.rows[slots]
            rows[:, JobTable.COLUMNS] = stored
            rows[:, WAIT] = np.minimum((now - table.submit_s[slots]) / layout.time_scale_s, UNBOUNDED)
            users = table.user[slots]
            means = table.user_mean[users]
            rows[:, USER_LAST2] = np.where(np.isnan(means), stored[:, 2], means)
            rows[:, USER_RUNNING] = table.running[users]
            rows[:, FITS] = stored[:, 1] * nb <= free + 0.5
        machine = layout.machine_start
        obs[machine] = free / nb
        ends, position, available = self._ends, 0, free
        for index, horizon in enumerate(layout.horizons_s, start=machine + 1):  # horizons ascending
            until = now + horizon
            while position < len(ends) and ends[position][0] <= until:
                available += ends[position][2]
                position += 1
            obs[index] = available / nb
        after = machine + 1 + len(layout.horizons_s)
        obs[after] = len(self._queue)
        obs[after + 1] = len(self._running)
        angle = 2.0 * math.pi * ((now + self.day_start_s) % DAY_S) / DAY_S
        obs[-2], obs[-1] = math.sin(angle), math.cos(angle)
        return obs

    # ------------------------------------------------------------------ acting
    def act(self, action: int, now: float) -> bool:
        """Apply one action now; returns whether the agent may act again at this instant (False
        after a wait, or a pick that took the reservation)."""
        action, k_max, queue = int(action), self.max_queue, self._queue
        if action == k_max:
            valid = self.wait_allowed()
        else:
            valid = 0 <= action < min(k_max, len(queue)) and (self.backfill or
                                                               queue[action].res <= self._resources.nb_free)
        if not valid:
            mask = self.action_mask()
            if self.invalid_action == "raise":
                allowed = [int(i) for i in np.flatnonzero(mask)]
                raise InvalidActionError(f"action {action} is not allowed now (t={now}): the mask allows {allowed} "
                                         f"({self.max_queue} waits)")
            action = self.max_queue if mask[self.max_queue] else int(np.flatnonzero(mask)[0])
        self.nb_actions += 1
        if action == self.max_queue:
            return False
        entry = self._queue[action]
        if entry.res <= self._resources.nb_free:
            self._start(entry.job, now, self._pending, entry.estimate_s)
            self._dequeue(entry, action)
            return self.has_choice()
        self._reserved = entry.job.id  # backfill only (the mask allows no other non-fitting pick)
        return False

    def _reserved_entry(self) -> tuple[int, Any]:
        assert self._reserved is not None  # asked only while a reservation holds
        position = self._waiting_index(self._reserved)
        return position, self._queue[position]

    def begin(self, now: float) -> None:
        """At each decision, before the agent acts: the reserved job starts once it fits (then the
        agent may be asked)."""
        self._steered_s = now
        if self._reserved is None:
            return
        position, head = self._reserved_entry()
        if head.res <= self._resources.nb_free:
            self._start(head.job, now, self._pending, head.estimate_s)
            self._dequeue(head, position)
            self._reserved = None

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        """After the agent: while a reservation holds, the other jobs are backfilled around it
        (EASY's count rule, with walltimes)."""
        if self._reserved is None:
            return
        head = self._reserved_entry()[1]
        shadow_s, extra = self._shadow(head.job, now)
        self.head_reservations_s[head.job.id] = shadow_s
        budget = self._budget
        budget.free, budget.extra = self._resources.nb_free, extra
        started: list[Any] = []
        candidates = [entry for entry in self._queue if entry is not head]
        self._backfill(candidates, budget, now, shadow_s, decisions, started)
        if started:
            self._remove_waiting(started)

    def run_report(self) -> dict[str, Any]:
        return {"nb_actions": self.nb_actions}

    def options(self) -> dict[str, Any]:
        options = super().options()
        if isinstance(self.policy, str) and not self.policy:  # steered by the environment: no policy to name
            options.pop("policy", None)
        elif not isinstance(self.policy, str):  # a function: named, not re-creatable from text
            options["policy"] = getattr(self.policy, "__qualname__", type(self.policy).__name__)
        return options

    def decide(self, now: float) -> list[Decision]:
        choose = self._choose
        if choose is None:  # the environment chose between pauses; nothing else would
            if self._steered_s != now:
                raise InputError(f"no policy steers {type(self).__name__}: {self.required_options['policy']}, or "
                                 "step it with schedlab.rl's environment")
            return super().decide(now)
        self.begin(now)
        while self.has_choice():
            try:
                action = choose(self.observe(now), self.action_mask())
                more = self.act(action, now)
            except InvalidActionError as exc:
                raise self._failure(f"chose {exc}", exc) from exc
            except Exception as exc:  # the policy's own code raised
                raise self._failure(f"raised {type(exc).__name__}: {exc} (at t={now})", exc) from exc
            if not more:
                break
        return super().decide(now)

    def _failure(self, what: str, exc: Exception) -> SchedulerFailure:
        """The policy failed: its own failure (a user's code), not the scheduler's."""
        name = self.policy if isinstance(self.policy, str) else getattr(self.policy, "__qualname__", "the policy")
        failure = SchedulerFailure(f"policy {name!r} {what}")
        failure.scheduler_module = self._policy_module
        failure.names_its_scheduler = True
        return failure


PolicyFn = Callable[..., Any]
#: the former name of AgentScheduler given a policy
PolicyScheduler = AgentScheduler


def _as_choice(policy: Any) -> Callable[[np.ndarray, np.ndarray], int]:
    """(observation, mask) -> action, from a function of one or two arguments or a `predict` object."""
    predict = getattr(policy, "predict", None)
    if predict is not None and not inspect.isfunction(policy):
        try:  # sb3-contrib's MaskablePPO takes the mask as `action_masks`
            masked = "action_masks" in inspect.signature(predict).parameters
        except (TypeError, ValueError):
            masked = False

        def from_model(obs: np.ndarray, mask: np.ndarray) -> int:
            out = predict(obs, action_masks=mask.astype(bool)) if masked else predict(obs)
            return int(out[0] if isinstance(out, tuple) else out)
        return from_model
    if not callable(policy):
        raise ValueError(f"policy: expected a function or an object with predict, got {type(policy).__name__}")
    try:
        takes_mask = len([p for p in inspect.signature(policy).parameters.values()
                          if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 2
    except (TypeError, ValueError):
        takes_mask = False
    if takes_mask:
        return lambda obs, mask: int(policy(obs, mask))
    return lambda obs, mask: int(policy(obs))


def load_policy(spec: str) -> Any:
    """The policy a text names: FILE.json (a linear scoring policy) or FILE.py:NAME / MODULE:NAME."""
    if spec.endswith(".json"):
        from schedlab.schedulers.linear_policy import LinearScoringPolicy

        return LinearScoringPolicy.load(spec)
    from schedlab.schedulers.plugins import object_from_spec

    return object_from_spec(spec, "policy")
