"""Shared state of list schedulers: a waiting queue in policy order, running jobs, free resources."""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from dataclasses import dataclass
from typing import Any

from procset import ProcSet

from schedlab.model import Decision, Execute, Job, JobState, Platform, Reject
from schedlab.resources import ResourceMask
from schedlab.schedulers.base import Scheduler
from schedlab.schedulers.policies import get_policy


@dataclass(slots=True)
class Running:
    job: Job
    alloc: ProcSet
    start_s: float
    end_key: tuple[float, int, int]  # (estimated end, seq, res): its place in the sorted list of ends


class QueueScheduler(Scheduler):
    """Waiting jobs sorted by a queue policy; too-large jobs rejected; lowest free ids allocated.

    Subclasses implement `_schedule(now, decisions)`. `estimate_s(job)` is the planning duration:
    the walltime here; prediction-driven schedulers override it (the walltime stays the kill time).
    """

    def __init__(self, *, queue_order: str = "fcfs") -> None:
        super().__init__()
        self.queue_order = queue_order
        self._policy = get_policy(queue_order)
        self._queue: list[tuple[Any, ...]] = []  # (score, submit, seq, job, estimate, res), ascending
        self._new: list[tuple[Any, ...]] = []  # entries submitted since the last decide
        self._running: dict[str, Running] = {}
        self._ends: list[tuple[float, int, int]] = []  # (estimated end, seq, res) of running jobs, ascending
        self._resources = ResourceMask(0)
        self._released = True  # resources were freed (or a call came) since the last decide
        self._completed = False  # a job completed since the last decide
        self._seq = 0
        self._pending: list[Decision] = []

    def options(self) -> dict[str, Any]:
        return {"queue_order": self.queue_order}

    # ------------------------------------------------------------------ planning duration
    def estimate_s(self, job: Job) -> float:
        return math.inf if job.walltime_s is None else job.walltime_s

    # ------------------------------------------------------------------ hooks
    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        self._resources = ResourceMask(platform.nb_resources)

    def on_job_submitted(self, job: Job, now: float) -> None:
        if job.res > self.nb_resources:
            self._pending.append(Reject(job.id, f"requests {job.res} resources, platform has "
                                                f"{self.nb_resources}"))
            return
        self._seq += 1
        estimate = self.estimate_s(job)
        entry = (self._policy.score(job, estimate, now), job.submit_time_s, self._seq, job, estimate, job.res)
        insort(self._queue, entry)
        self._new.append(entry)

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        running = self._running.pop(job_id, None)
        if running is None:
            return  # a job we rejected, or not ours
        self._resources.release(running.alloc, running.job.res)
        index = bisect_left(self._ends, running.end_key)
        del self._ends[index]
        self._released = True
        self._completed = True

    def on_requested_call(self, now: float) -> None:
        self._released = True

    # ------------------------------------------------------------------ decisions
    def decide(self, now: float) -> list[Decision]:
        decisions, self._pending = self._pending, []
        if self._policy.dynamic and self._queue:
            self._queue = sorted((self._policy.score(e[3], e[4], now), *e[1:])
                                 for e in self._queue)
            self._released = True
        if self._queue:
            self._schedule(now, decisions)
        self._new.clear()
        self._released = self._completed = False
        return decisions

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        raise NotImplementedError

    def _start_head_jobs(self, now: float, decisions: list[Decision]) -> None:
        """Start queue-head jobs while they fit (the FCFS part of every list scheduler)."""
        queue = self._queue
        started = 0
        while started < len(queue) and queue[started][5] <= self._resources.nb_free:
            entry = queue[started]
            self._start(entry[3], now, decisions, entry[4])
            started += 1
        if started:
            del queue[:started]

    def _start(self, job: Job, now: float, decisions: list[Decision], estimate_s: float | None = None,
               alloc: ProcSet | None = None) -> None:
        """Start `job` now on `alloc` (default: the lowest free ids)."""
        if alloc is None:
            alloc = self._resources.take_lowest(job.res)
        else:
            self._resources.take(alloc, job.res)
        self._seq += 1
        end_key = (now + (self.estimate_s(job) if estimate_s is None else estimate_s), self._seq, job.res)
        insort(self._ends, end_key)
        self._running[job.id] = Running(job, alloc, now, end_key)
        decisions.append(Execute(job.id, alloc))

    # ------------------------------------------------------------------ introspection (tests, tools)
    @property
    def queue(self) -> list[Job]:
        return [entry[3] for entry in self._queue]

    @property
    def free_resources(self) -> ProcSet:
        return self._resources.free_set()

    @property
    def nb_free(self) -> int:
        return self._resources.nb_free
