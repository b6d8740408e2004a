"""EASY with machine-level reservations, following batsched 1.4.0's `easy_bf` rules.

batsched keeps a time-sliced schedule of specific machines: running jobs hold their machines until
start + walltime + rjms_delay; the queue's first job (the priority job) is placed first-fit (the
earliest instant enough machines are free; the lowest such ids); another job starts now only if
machines are free for its whole walltime + rjms_delay without touching the priority job's machines
during its reservation. Dates are exact rationals there, so they are `Fraction`s here. A round
with no completion tries only the jobs submitted in it; jobs without walltime are rejected.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from fractions import Fraction
from typing import Any

from sortedcontainers import SortedList

from schedlab.model import Decision, Job, Reject
from schedlab.resources import procset_from_sorted

Intervals = list[tuple[int, int]]  # disjoint, ascending (first, last) runs of machine ids


def _count(intervals: Intervals) -> int:
    return sum(last - first + 1 for first, last in intervals)


def _lowest(intervals: Intervals, count: int) -> Intervals:
    """The `count` lowest ids of `intervals` (which hold at least that many)."""
    picked: Intervals = []
    for first, last in intervals:
        width = last - first + 1
        if width >= count:
            picked.append((first, first + count - 1))
            return picked
        picked.append((first, last))
        count -= width
    return picked


def _minus(intervals: Intervals, removed: Intervals) -> Intervals:
    """`intervals` without the ids of `removed` (both ascending): one merge pass."""
    result: Intervals = []
    j, nb_removed = 0, len(removed)
    for first, last in intervals:
        while j < nb_removed and removed[j][1] < first:
            j += 1
        k = j
        while first <= last:
            if k == nb_removed or removed[k][0] > last:
                result.append((first, last))
                break
            r_first, r_last = removed[k]
            if r_first > first:
                result.append((first, r_first - 1))
            first = max(first, r_last + 1)
            k += 1
    return result


def _union(parts: list[Intervals]) -> Intervals:
    """The union of disjoint interval lists, adjacent runs joined."""
    merged: Intervals = []
    for first, last in sorted(itertools.chain.from_iterable(parts)):
        if merged and merged[-1][1] >= first - 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


class MachineReservationMixin:
    """Mixed into EasyBackfilling; active with `reservation="machines"`. Machine sets are sorted
    interval lists, so a decision costs O(runs of machines), not O(machines) (marconi100 has 15,680)."""

    rjms_delay_s: float
    head_reservations_s: dict[str, float]
    _queue: list[tuple[Any, ...]]
    _new: list[tuple[Any, ...]]
    _completed: bool

    def _machines_init(self) -> None:
        self._machine_ends: dict[str, tuple[Fraction, int, Intervals]] = {}  # running: est end, seq, machines
        self._ends_by_time: SortedList = SortedList()  # the same, ascending by (end, seq)
        self._priority: tuple[str, Fraction, Intervals] | None = None  # id, start, machines
        self._priority_before: str | None = None

    def _walltime_q(self, job: Job) -> Fraction:
        return Fraction(job.walltime_s) + Fraction(self.rjms_delay_s)

    def _machines_reject(self, job: Job) -> Reject | None:
        if job.walltime_s is None:
            return Reject(job.id, "no walltime (batsched easy_bf rejects such jobs)")
        return None

    def _machines_completed(self, job_id: str) -> None:
        item = self._machine_ends.pop(job_id, None)
        if item is not None:
            self._ends_by_time.remove(item)

    # ------------------------------------------------------------------ placement
    def _free_runs(self) -> Intervals:
        return self._resources.free_runs()

    def _place_priority(self, job: Job, now_q: Fraction) -> tuple[Fraction, Intervals]:
        """First fit among running jobs only: earliest instant with enough machines, lowest ids."""
        free = self._free_runs()
        available = self._resources.nb_free
        if available >= job.res:
            return now_q, _lowest(free, job.res)
        parts = [free]
        ends = self._ends_by_time
        index = 0
        while index < len(ends):
            end = ends[index][0]
            while index < len(ends) and ends[index][0] == end:
                machines = ends[index][2]
                parts.append(machines)
                available += _count(machines)
                index += 1
            if available >= job.res:
                return max(end, now_q), _lowest(_union(parts), job.res)
        raise RuntimeError(f"job {job.id} cannot fit on the platform")  # rejected at submission

    def _reserve(self, job: Job, start: Fraction, machines: Intervals) -> None:
        self._priority = (job.id, start, machines)
        self.head_reservations_s[job.id] = float(start)

    def _available_now(self, free: Intervals) -> tuple[Intervals, Intervals]:
        """Machines a job may take now: all free ones if it ends before the priority job's start,
        else the free ones outside the priority job's reservation."""
        if self._priority is None:
            return free, free
        return free, _minus(free, self._priority[2])

    def _can_start_now(self, job: Job, now_q: Fraction, free: Intervals,
                       outside: Intervals) -> Intervals | None:
        walltime = self._walltime_q(job)
        available = free
        if self._priority is not None and self._priority[1] - now_q < walltime:
            available = outside  # would still run when the priority job starts
        if _count(available) < job.res:
            return None
        return _lowest(available, job.res)

    def _run(self, entry: tuple[Any, ...], machines: Intervals, now: float, now_q: Fraction,
             decisions: list[Decision]) -> None:
        job = entry[3]
        self._start(job, now, decisions, entry[4], procset_from_sorted(machines))
        self._seq += 1
        item = (now_q + self._walltime_q(job), self._seq, machines)
        self._machine_ends[job.id] = item
        self._ends_by_time.add(item)

    def _start_priority_jobs(self, now: float, now_q: Fraction, decisions: list[Decision]) -> None:
        """The priority job changed: place it; while it can start now, start it and take the next."""
        queue = self._queue
        while queue:
            head = queue[0]
            start, machines = self._place_priority(head[3], now_q)
            if start == now_q:
                self._priority = None
                self._run(head, machines, now, now_q, decisions)
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
            free = self._free_runs()
            free, outside = self._available_now(free)
            nb_available = self._resources.nb_free
            for entry in list(self._new):
                if nb_available <= 0:
                    break
                position = bisect_left(queue, entry)  # a static order: the queue is sorted
                if position == len(queue) or queue[position] is not entry or position == 0 or entry[5] > nb_available:
                    continue  # started already, or the priority job, or too large
                machines = self._can_start_now(entry[3], now_q, free, outside)
                if machines is not None:
                    self._run(entry, machines, now, now_q, decisions)
                    del queue[position]
                    nb_available -= entry[5]
                    free, outside = _minus(free, machines), _minus(outside, machines)
        elif self._resources.nb_free > 0:
            position = 0
            free = outside = []
            nb_free = 0
            while position < len(queue):
                entry = queue[position]
                if position == 0:  # the priority job: placed again against running jobs only
                    start, machines = self._place_priority(entry[3], now_q)
                    if start == now_q:
                        self._priority = None
                        self._run(entry, machines, now, now_q, decisions)
                        del queue[0]
                        continue
                    self._reserve(entry[3], start, machines)
                    free, outside = self._available_now(self._free_runs())
                    nb_free = _count(free)
                else:
                    res = entry[5]
                    if res <= nb_free:  # the count rules most jobs out without touching machine sets
                        machines = self._can_start_now(entry[3], now_q, free, outside)
                        if machines is not None:
                            self._run(entry, machines, now, now_q, decisions)
                            del queue[position]
                            free, outside = _minus(free, machines), _minus(outside, machines)
                            nb_free -= res
                            continue
                position += 1
        self._priority_before = queue[0][3].id if queue else None
        if self._priority is not None and (not queue or self._priority[0] != queue[0][3].id):
            self._priority = None
