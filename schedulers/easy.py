"""EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001) and its SJBF variant.

At each decision: start queue-head jobs while they fit; give the first job that does not fit (the
head) a reservation at its shadow time (the earliest instant enough resources are free, assuming
running jobs end at start + estimate); then start a later job now if it fits and either ends (by its
estimate) before the shadow time or only uses the `extra` resources the head does not need then.
Only the head is protected. Textbook count-based rule; estimates are walltimes unless a subclass
overrides `estimate_s`.
"""

from __future__ import annotations

import itertools
import math
from bisect import bisect_left
from typing import Any, Literal

from sortedcontainers import SortedList

from schedlab.model import Decision, Job, JobState, Platform
from schedlab.schedulers.base import register
from schedlab.schedulers.easy_machines import MachineReservationMixin
from schedlab.schedulers.queue import QueueScheduler
from schedlab.schedulers.queue_index import CandidateIndex


@register("easy")
class EasyBackfilling(MachineReservationMixin, QueueScheduler):
    """EASY backfilling: the queue's head gets a reservation, later jobs start now if they do not delay it.

    Candidates tried in queue order (`backfill_order="queue"`),
    shortest-estimate first (`"sjbf"`, Tsafrir et al. 2007) or smallest volume (estimate x
    resources) first (`"svf"`, the hybrid study's FCFS-BF2). `reservation="machines"` follows
    batsched's easy_bf instead of the textbook count-based rule (see easy_machines.py)."""

    #: CALL_ME_LATER only for planned ends that can change a decision (see `call_wanted`); False:
    #: for every end before the kill time (the same schedule, more wake-ups; tests compare the two)
    calls_for_plan_only = True
    #: Find backfilling candidates through a CandidateIndex (static queue orders, count mode): a
    #: pass then costs O(log queue) instead of a walk of the queue. False: the plain walk, which
    #: the tests compare it to.
    use_index = True

    option_help = {"backfill_order": "the order backfilling candidates are tried in: queue order, shortest "
                                     "estimate first, or smallest estimate x resources first",
                   "reservation": "count: the textbook rule (the head's reservation counts free resources); "
                                  "machines: batsched easy_bf's rule on specific machines",
                   "rjms_delay_s": "seconds batsched adds to every walltime when it plans on machines "
                                   "(reservation=machines only)"}
    option_acts_only = {"rjms_delay_s": (("reservation",), lambda o: o["reservation"] == "machines",
                                         "with reservation=machines")}

    def __init__(self, *, queue_order: str = "fcfs", backfill_order: Literal["queue", "sjbf", "svf"] = "queue",
                 reservation: Literal["count", "machines"] = "count", rjms_delay_s: float = 5.0) -> None:
        super().__init__(queue_order=queue_order)
        if reservation == "machines" and (backfill_order != "queue" or self._policy.dynamic):
            raise ValueError("reservation=machines follows batsched: backfill_order=queue and a static queue order")
        if rjms_delay_s < 0:
            raise ValueError("rjms_delay_s must be >= 0")
        if reservation == "machines" and type(self).estimate_s is not QueueScheduler.estimate_s:
            raise ValueError("reservation=machines plans with walltimes, as batsched does; it takes no "
                             "predicted estimates (use reservation=count)")
        self.backfill_order = backfill_order
        self.reservation = reservation
        self.rjms_delay_s = rjms_delay_s
        if reservation == "machines":
            self._machines_init()
        self._reservation: tuple[str, float, int] | None = None  # (head id, shadow time, extra)
        self._index: CandidateIndex | None = None  # the waiting jobs in backfilling order (count mode)
        self._watched_s = -math.inf  # every planned end up to this time has its CALL_ME_LATER
        self._in_pass = False
        #: Latest shadow time computed for each job while it was the head (the invariant to check:
        #: with estimates that bound run times, a head never starts later than this).
        self.head_reservations_s: dict[str, float] = {}

    def on_simulation_begins(self, platform: Platform, now: float) -> None:
        super().on_simulation_begins(platform, now)
        if self.use_index and self.reservation == "count" and not self._policy.dynamic:
            key = (lambda e: e[:3]) if self.backfill_order == "queue" else self._backfill_key
            self._index = CandidateIndex(key)
            self._queue = SortedList(self._queue)  # O(log n) removals anywhere in a long queue

    def on_job_submitted(self, job: Job, now: float) -> None:
        if self.reservation == "machines" and job.res <= self.nb_resources:
            rejection = self._machines_reject(job)
            if rejection is not None:
                self._pending.append(rejection)
                return
        super().on_job_submitted(job, now)

    def on_job_completed(self, job_id: str, state: JobState, now: float) -> None:
        super().on_job_completed(job_id, state, now)
        if self.reservation == "machines":
            self._machines_completed(job_id)

    def revise_estimate(self, job_id: str, estimate_s: float, now: float) -> None:
        self._refuse_in_machines_mode()
        super().revise_estimate(job_id, estimate_s, now)

    def revise_expected_end(self, job_id: str, end_s: float, now: float) -> None:
        self._refuse_in_machines_mode()
        super().revise_expected_end(job_id, end_s, now)

    def call_wanted(self, end_s: float) -> bool:
        """Only ends at or before the head's shadow time can change a decision when revised (see
        `end_change_matters`): calls for the others would wake the scheduler (a Batsim round trip)
        for nothing. A pass asks, at its end, for what its reservation needs. A dynamic queue order
        re-sorts at every decision, so any wake-up may change the head: a call for every end then."""
        if not self.calls_for_plan_only or self.reservation == "machines" or self._policy.dynamic:
            return True
        if self._in_pass:
            return False
        cached = self._reservation
        return cached is not None and end_s <= cached[1]

    def end_change_matters(self, old_end_s: float, new_end_s: float) -> bool:
        """A planned end that was, and stays, after the head's shadow time counts neither towards
        the shadow time nor towards `extra`: the reservation holds, and candidates that failed
        before still fail (time only moves their ends later). Corrections of long jobs are mostly
        such: no full pass for them."""
        cached = self._reservation
        return cached is None or min(old_end_s, new_end_s) <= cached[1]

    def _refuse_in_machines_mode(self) -> None:
        if self.reservation == "machines":
            raise RuntimeError("reservation=machines plans with walltimes (batsched's rule): estimates are fixed")

    def _enqueue(self, entry: tuple[Any, ...]) -> None:
        if self._index is None:
            super()._enqueue(entry)
        else:
            self._queue.add(entry)
            self._index.add(entry)

    def _dequeue(self, entry: tuple[Any, ...], index: int | None = None) -> None:
        if self._index is None:
            super()._dequeue(entry, index)
        else:
            if index is None:
                self._queue.remove(entry)
            else:
                del self._queue[index]
            self._index.remove(entry)

    def _dequeue_head(self, nb: int) -> list[tuple[Any, ...]]:
        started = super()._dequeue_head(nb)
        if self._index is not None:
            for entry in started:
                self._index.remove(entry)
        return started

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if self.reservation == "machines":
            self._schedule_machines(now, decisions)
            return
        self._in_pass = True
        try:
            started, full_pass = self._pass(now, decisions)
        finally:
            self._in_pass = False
        for job in started:
            self._ask_call(self._running[job.id], now, decisions)
        cached = self._reservation
        if cached is None:  # nothing waits: no revision can matter
            self._watched_s = -math.inf
        elif full_pass:
            # Every end up to the shadow time is watched; those up to the previous shadow time
            # already are (or were asked when they moved or started), so only the rest is asked.
            ends, shadow_s = self._ends, cached[1]
            if shadow_s > self._watched_s:
                position = bisect_left(ends, (self._watched_s, math.inf))
                while position < len(ends) and ends[position][0] <= shadow_s:
                    self._ask_call(self._by_end[ends[position]], now, decisions)
                    position += 1
            self._watched_s = shadow_s

    def _pass(self, now: float, decisions: list[Decision]) -> tuple[list[Job], bool]:
        """Start what EASY starts now; returns the jobs started, and whether the pass was full."""
        queue = self._queue
        cached = self._reservation
        full_pass: bool = self._released or cached is None or cached[0] != queue[0][3].id
        if full_pass:
            started = self._start_head_jobs(now, decisions)
            if not queue:
                self._reservation = None
                return [entry[3] for entry in started], True
            head = queue[0][3]
            shadow_s, extra = self._shadow(head, now)
            self.head_reservations_s[head.id] = shadow_s
            state = [self._resources.nb_free, extra]
            if self._index is not None:  # the head cannot be a candidate: it does not fit
                candidates: Any = self._index.candidates(state, now, shadow_s)
            else:
                candidates = itertools.islice(queue, 1, None)
                if self.backfill_order != "queue":
                    candidates = sorted(candidates, key=self._backfill_key)
        else:
            # Nothing was freed since the last pass: the jobs tried then still cannot start, so
            # only new arrivals are candidates (batsched's rule too). The head is unchanged.
            head_id, shadow_s, extra = cached
            if self._resources.nb_free == 0:
                return [], False
            candidates = [e for e in self._new if e[3].id != head_id]
            if not candidates:
                return [], False
            candidates.sort(key=self._queue_position() if self.backfill_order == "queue" else self._backfill_key)
            started = []
            state = [self._resources.nb_free, extra]
        nb_heads = len(started)
        self._backfill(candidates, state, now, shadow_s, decisions, started)
        if len(started) > nb_heads:
            self._remove_waiting(started[nb_heads:])
        self._reservation = (queue[0][3].id, shadow_s, state[1])
        return [entry[3] for entry in started], full_pass

    def _backfill_key(self, entry: tuple[Any, ...]) -> tuple[Any, ...]:
        """Candidates' order for `backfill_order` sjbf (estimate) or svf (estimate x size), ties
        in submission order."""
        if self.backfill_order == "sjbf":
            return entry[4], entry[1], entry[2]
        return entry[4] * entry[5], entry[1], entry[2]

    def _queue_position(self) -> Any:
        """Sort key giving entries their queue position (incremental passes: a static queue,
        sorted, so a bisection away; a dynamic order makes every pass full)."""
        queue = self._queue
        if isinstance(queue, SortedList):
            return queue.bisect_left
        return lambda entry: bisect_left(queue, entry)

    def _remove_waiting(self, entries: list[tuple[Any, ...]]) -> None:
        queue = self._queue
        if self._index is not None:
            for entry in entries:
                self._dequeue(entry)
        elif self._policy.dynamic:  # re-sorted at each decision: not in tuple order
            gone = {id(entry) for entry in entries}
            queue[:] = [entry for entry in queue if id(entry) not in gone]
        else:
            for entry in entries:
                del queue[bisect_left(queue, entry)]

    def _backfill(self, candidates: Any, state: list[int], now: float, shadow_s: float,
                  decisions: list[Decision], started: list[tuple[Any, ...]]) -> None:
        """The hot loop of EASY: start each candidate that fits now and either ends (as planned)
        by the shadow time or uses only the extra resources. state = [free, extra], lowered as
        jobs start (the index reads them between candidates)."""
        for entry in candidates:
            free = state[0]
            if free == 0:
                break
            res = entry[5]
            if res > free:
                continue
            if now + entry[6] > shadow_s:  # ends after the shadow time (as planned): only on extra resources
                if res > state[1]:
                    continue
                state[1] -= res
            self._start(entry[3], now, decisions, entry[4])
            state[0] = free - res
            started.append(entry)

    def _shadow(self, head: Job, now: float) -> tuple[float, int]:
        """Shadow time and extra resources for `head`, from the estimated ends of running jobs.

        Every job ending at or before the shadow time counts towards `extra` (textbook EASY, pyss's
        CPU snapshot), so the result does not depend on the order of jobs ending at the same instant.
        """
        available = self._resources.nb_free
        ends = self._ends
        for index, (end, _, res) in enumerate(ends):
            available += res
            if available >= head.res:
                shadow_s = max(end, now)
                for later_end, _, later_res in itertools.islice(ends, index + 1, None):
                    if later_end > shadow_s:
                        break
                    available += later_res
                return shadow_s, available - head.res
        return math.inf, 0  # unreachable when head.res <= platform size


@register("easy-sjbf")
class EasySJBF(EasyBackfilling):
    """EASY with backfill candidates tried shortest estimate first (EASY-SJBF)."""

    def __init__(self, *, queue_order: str = "fcfs") -> None:
        super().__init__(queue_order=queue_order, backfill_order="sjbf")
