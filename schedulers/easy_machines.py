"""EASY with machine-level reservations, following batsched 1.4.0's `easy_bf` rules.

batsched keeps a time-sliced schedule of specific machines: running jobs hold their machines until
start + walltime + rjms_delay; the queue's first job (the priority job) is placed first-fit (the
earliest instant enough machines are free; the lowest such ids); another job starts now only if
machines are free for its whole walltime + rjms_delay without touching the priority job's machines
during its reservation. Dates are exact rationals there, so they are `Fraction`s here. A round
with no completion tries only the jobs submitted in it; jobs without walltime are rejected.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from procset import ProcSet

from schedlab.model import Decision, Job, Reject
from schedlab.resources import procset_from_sorted


def _lowest(ids: list[int], count: int) -> ProcSet:
    chosen = ids[:count]
    intervals: list[tuple[int, int]] = []
    for i in chosen:
        if intervals and intervals[-1][1] == i - 1:
            intervals[-1] = (intervals[-1][0], i)
        else:
            intervals.append((i, i))
    return procset_from_sorted(intervals)


class MachineReservationMixin:
    """Mixed into EasyBackfilling; active with `reservation="machines"`."""

    rjms_delay_s: float
    head_reservations_s: dict[str, float]
    _queue: list[tuple[Any, ...]]
    _new: list[tuple[Any, ...]]
    _completed: bool

    def _machines_init(self) -> None:
        self._machine_ends: dict[str, tuple[Fraction, frozenset[int]]] = {}  # running: est end, machines
        self._priority: tuple[str, Fraction, frozenset[int]] | None = None  # id, start, machines
        self._priority_before: str | None = None

    def _walltime_q(self, job: Job) -> Fraction:
        return Fraction(job.walltime_s) + Fraction(self.rjms_delay_s)

    def _machines_reject(self, job: Job) -> Reject | None:
        if job.walltime_s is None:
            return Reject(job.id, "no walltime (batsched easy_bf rejects such jobs)")
        return None

    def _machines_completed(self, job_id: str) -> None:
        self._machine_ends.pop(job_id, None)

    # ------------------------------------------------------------------ placement
    def _free_ids(self) -> list[int]:
        mask = self._resources.free
        return [i for i, value in enumerate(mask) if value]

    def _place_priority(self, job: Job, now_q: Fraction) -> tuple[Fraction, frozenset[int]]:
        """First fit among running jobs only: earliest instant with enough machines, lowest ids."""
        free = set(self._free_ids())
        if len(free) >= job.res:
            return now_q, frozenset(sorted(free)[:job.res])
        by_end = sorted(self._machine_ends.values(), key=lambda item: item[0])
        available = set(free)
        index = 0
        while index < len(by_end):
            end = by_end[index][0]
            while index < len(by_end) and by_end[index][0] == end:
                available |= by_end[index][1]
                index += 1
            if len(available) >= job.res:
                return max(end, now_q), frozenset(sorted(available)[:job.res])
        raise RuntimeError(f"job {job.id} cannot fit on the platform")  # rejected at submission

    def _reserve(self, job: Job, start: Fraction, machines: frozenset[int]) -> None:
        self._priority = (job.id, start, machines)
        self.head_reservations_s[job.id] = float(start)

    def _can_start_now(self, job: Job, now_q: Fraction, free: list[int]) -> ProcSet | None:
        walltime = self._walltime_q(job)
        available = free
        if self._priority is not None:
            start, machines = self._priority[1], self._priority[2]
            if start - now_q < walltime:  # would still run when the priority job starts
                available = [i for i in free if i not in machines]
        if len(available) < job.res:
            return None
        return _lowest(available, job.res)

    def _run(self, entry: tuple[Any, ...], alloc: ProcSet, now: float, now_q: Fraction,
             decisions: list[Decision]) -> None:
        job = entry[3]
        self._start(job, now, decisions, entry[4], alloc)
        self._machine_ends[job.id] = (now_q + self._walltime_q(job), frozenset(alloc))

    def _start_priority_jobs(self, now: float, now_q: Fraction, decisions: list[Decision]) -> None:
        """The priority job changed: place it; while it can start now, start it and take the next."""
        queue = self._queue
        while queue:
            head = queue[0]
            start, machines = self._place_priority(head[3], now_q)
            if start == now_q:
                self._priority = None
                self._run(head, _lowest(sorted(machines), head[5]), now, now_q, decisions)
                del queue[0]
            else:
                self._reserve(head[3], start, machines)
                return
        self._priority = None

    # ------------------------------------------------------------------ one round
    def _schedule_machines(self, now: float, decisions: list[Decision]) -> None:
        queue = self._queue
        now_q = Fraction(now)
        head_id = queue[0][3].id if queue else None
        if head_id != self._priority_before:
            self._start_priority_jobs(now, now_q, decisions)
        if not self._completed:
            free = self._free_ids()
            nb_available = len(free)
            for entry in list(self._new):
                if nb_available <= 0:
                    break
                if entry not in queue or (queue and entry is queue[0]) or entry[5] > nb_available:
                    continue
                alloc = self._can_start_now(entry[3], now_q, free)
                if alloc is not None:
                    self._run(entry, alloc, now, now_q, decisions)
                    queue.remove(entry)
                    nb_available -= entry[5]
                    taken = set(alloc)
                    free = [i for i in free if i not in taken]
        elif self._resources.nb_free > 0:
            position = 0
            while position < len(queue):
                entry = queue[position]
                if position == 0:  # the priority job: placed again against running jobs only
                    start, machines = self._place_priority(entry[3], now_q)
                    if start == now_q:
                        self._priority = None
                        self._run(entry, _lowest(sorted(machines), entry[5]), now, now_q, decisions)
                        del queue[0]
                        continue
                    self._reserve(entry[3], start, machines)
                    free = self._free_ids()
                else:
                    alloc = self._can_start_now(entry[3], now_q, free)
                    if alloc is not None:
                        self._run(entry, alloc, now, now_q, decisions)
                        del queue[position]
                        taken = set(alloc)
                        free = [i for i in free if i not in taken]
                        continue
                position += 1
        self._priority_before = queue[0][3].id if queue else None
        if self._priority is not None and (not queue or self._priority[0] != queue[0][3].id):
            self._priority = None
