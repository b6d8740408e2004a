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
from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList

from schedlab.model import Decision, Job, Reject
from schedlab.resources import procset_from_sorted

if TYPE_CHECKING:
    from schedlab.schedulers.queue import Entry

Intervals = list[tuple[int, int]]  # disjoint, ascending (first, last) runs of machine ids


def _count(intervals: Intervals) -> int:
    return sum(last - first + 1 for first, last in intervals)


def _lowest(intervals: Iterable[tuple[int, int]], count: int) -> Intervals:
    """The `count` lowest ids of `intervals` (ascending, disjoint, holding at least that many),
    runs that touch joined (procset's form)."""
    picked: Intervals = []
    for first, last in intervals:
        if picked and picked[-1][1] == first - 1:
            previous_first, previous_last = picked.pop()
            count += previous_last - previous_first + 1
            first = previous_first
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


def _lowest_of_union(parts: list[Intervals], count: int) -> Intervals:
    """The `count` lowest ids of the union of disjoint interval lists: sorted, then `_lowest` stops
    once it has them (the union itself is never built)."""
    return _lowest(sorted(itertools.chain.from_iterable(parts)), count)


class MachineReservation:
    """EASY's `reservation="machines"` strategy (EasyBackfilling composes it when that option is
    given): batsched's rule on specific machines in place of the count-based one. Machine sets are
    sorted interval lists, so a decision costs O(runs of machines), not O(machines) (marconi100 has
    15,680). It reads and starts through the EASY it serves (its queue, resources and `_start`)."""

    def __init__(self, easy: Any) -> None:
        self.easy = easy
        # running jobs: (estimated end, seq, machines, their count), by job id and ascending by (end, seq)
        self._machine_ends: dict[str, tuple[Fraction, int, Intervals, int]] = {}
        self._ends_by_time: SortedList = SortedList()
        self._walltimes_q: dict[str, Fraction] = {}  # waiting and running jobs' walltime + rjms_delay
        self._priority: tuple[str, Fraction, Intervals] | None = None  # id, start, machines
        self._priority_before: str | None = None

    @staticmethod
    def refuse_revision() -> None:
        raise RuntimeError("reservation=machines plans with walltimes (batsched's rule): estimates are fixed")

    def reject(self, job: Job) -> Reject | None:
        """A Reject for a job batsched would refuse; else None, and its exact walltime + rjms
        delay is kept for the rounds to come (a Fraction once per job, not per test)."""
        if job.walltime_s is None:
            return Reject(job.id, "no walltime (batsched easy_bf rejects such jobs)")
        self._walltimes_q[job.id] = Fraction(job.walltime_s) + Fraction(self.easy.rjms_delay_s)
        return None

    def completed(self, job_id: str) -> None:
        item = self._machine_ends.pop(job_id, None)
        if item is not None:
            self._ends_by_time.remove(item)
            del self._walltimes_q[job_id]

    # ------------------------------------------------------------------ placement
    def _free_runs(self) -> Intervals:
        return self.easy._resources.free_runs()

    def _place_priority(self, job: Job, now_q: Fraction) -> tuple[Fraction, Intervals]:
        """First fit among running jobs only: earliest instant with enough machines, lowest ids."""
        free = self._free_runs()
        available = self.easy._resources.nb_free
        if available >= job.res:
            return now_q, _lowest(free, job.res)
        parts = [free]
        enough_at: Fraction | None = None  # the end at which enough machines are free
        for end, _, machines, count in self._ends_by_time:
            if enough_at is not None and end != enough_at:
                break  # every job ending then is in: batsched frees them together
            parts.append(machines)
            available += count
            if enough_at is None and available >= job.res:
                enough_at = end
        if enough_at is None:
            raise RuntimeError(f"job {job.id} cannot fit on the platform")  # rejected at submission
        return max(enough_at, now_q), _lowest_of_union(parts, job.res)

    def _reserve(self, job: Job, start: Fraction, machines: Intervals) -> None:
        self._priority = (job.id, start, machines)
        self.easy.head_reservations_s[job.id] = float(start)

    def _available_now(self, free: Intervals, now_q: Fraction) -> tuple[Intervals, Intervals, Fraction | None]:
        """Machines a job may take now: all free ones if it ends before the priority job's start,
        else the free ones outside the priority job's reservation; and the time left until that
        start (None: no reservation)."""
        if self._priority is None:
            return free, free, None
        return free, _minus(free, self._priority[2]), self._priority[1] - now_q

    def _can_start_now(self, job: Job, free: Intervals, outside: Intervals,
                       until_priority_q: Fraction | None) -> Intervals | None:
        available = free
        if until_priority_q is not None and until_priority_q < self._walltimes_q[job.id]:
            available = outside  # would still run when the priority job starts
        if _count(available) < job.res:
            return None
        return _lowest(available, job.res)

    def _run(self, entry: Entry, machines: Intervals, now: float, now_q: Fraction,
             decisions: list[Decision]) -> None:
        job = entry.job
        self.easy._start(job, now, decisions, entry.estimate_s, procset_from_sorted(machines))
        easy = self.easy
        easy._seq += 1
        item = (now_q + self._walltimes_q[job.id], easy._seq, machines, entry.res)
        self._machine_ends[job.id] = item
        self._ends_by_time.add(item)

    def _start_priority_jobs(self, now: float, now_q: Fraction, decisions: list[Decision]) -> None:
        """The priority job changed: place it; while it can start now, start it and take the next."""
        queue = self.easy._queue
        while queue:
            head = queue[0]
            start, machines = self._place_priority(head.job, now_q)
            if start == now_q:
                self._priority = None
                self._run(head, machines, now, now_q, decisions)
                del queue[0]
            else:
                self._reserve(head.job, start, machines)
                return
        self._priority = None

    # ------------------------------------------------------------------ one round
    def schedule(self, now: float, decisions: list[Decision]) -> None:
        """One round of batsched's easy_bf."""
        queue = self.easy._queue
        now_q = Fraction(now)
        head_id = queue[0].job.id if queue else None
        if head_id != self._priority_before:
            self._start_priority_jobs(now, now_q, decisions)
        if not self.easy._completed:
            free, outside, until_priority_q = self._available_now(self._free_runs(), now_q)
            nb_available = self.easy._resources.nb_free
            for entry in list(self.easy._new):
                if nb_available <= 0:
                    break
                position = bisect_left(queue, entry)  # a static order: the queue is sorted
                if position == len(queue) or queue[position] is not entry or position == 0 or entry.res > nb_available:
                    continue  # started already, or the priority job, or too large
                machines = self._can_start_now(entry.job, free, outside, until_priority_q)
                if machines is not None:
                    self._run(entry, machines, now, now_q, decisions)
                    del queue[position]
                    nb_available -= entry.res
                    free, outside = _minus(free, machines), _minus(outside, machines)
        elif self.easy._resources.nb_free > 0:
            while queue:  # the priority job: placed again against running jobs only
                head = queue[0]
                start, machines = self._place_priority(head.job, now_q)
                if start != now_q:
                    self._reserve(head.job, start, machines)
                    break
                self._priority = None
                self._run(head, machines, now, now_q, decisions)
                del queue[0]
            nb_free = self.easy._resources.nb_free
            if queue and nb_free > 0:
                free, outside, until_priority_q = self._available_now(self._free_runs(), now_q)
                started = []
                for entry in itertools.islice(queue, 1, None):
                    res = entry.res
                    if res <= nb_free:  # the count rules most jobs out without touching machine sets
                        machines = self._can_start_now(entry.job, free, outside, until_priority_q)
                        if machines is not None:
                            self._run(entry, machines, now, now_q, decisions)
                            started.append(entry)
                            free, outside = _minus(free, machines), _minus(outside, machines)
                            nb_free -= res
                            if nb_free == 0:
                                break  # requests are >= 1 resource: nothing else fits
                for entry in started:
                    del queue[bisect_left(queue, entry)]  # a static order: the queue is sorted
        self._priority_before = queue[0].job.id if queue else None
        if self._priority is not None and (not queue or self._priority[0] != queue[0].job.id):
            self._priority = None
