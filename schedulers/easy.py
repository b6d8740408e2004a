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
from typing import Any, ClassVar, Literal

from sortedcontainers import SortedList

from schedlab.model import Decision, Job, JobState
from schedlab.schedulers.base import register
from schedlab.schedulers.easy_machines import MachineReservation
from schedlab.schedulers.queue import Entry, QueueScheduler, Running
from schedlab.schedulers.queue_index import Budget, CandidateIndex

#: the orders backfilling candidates are tried in
BackfillOrder = Literal["queue", "sjbf", "svf"]


@register("easy")
class EasyBackfilling(QueueScheduler):
    """EASY backfilling: the queue's head gets a reservation, later jobs start now if they do not delay it.

    Candidates tried in queue order (`backfill_order="queue"`),
    shortest-estimate first (`"sjbf"`, Tsafrir et al. 2007) or smallest volume (estimate x
    resources) first (`"svf"`, the hybrid study's FCFS-BF2). `reservation="machines"` follows
    batsched's easy_bf instead of the textbook count-based rule: its own strategy
    (easy_machines.MachineReservation), which it composes in place of its count rule."""

    #: CALL_ME_LATER only for planned ends that can change a decision (see `call_wanted`); False:
    #: for every end before the kill time (the same schedule, more wake-ups; tests compare the two)
    calls_for_plan_only = True
    per_job_records: ClassVar[tuple[str, ...]] = ("head_reservations_s",)
    _queue: Any  # the waiting entries, sorted: a list, or a SortedList when the candidate index serves

    option_help = {"backfill_order": "the order backfilling candidates are tried in: queue order, shortest "
                                     "estimate first, or smallest estimate x resources first",
                   "reservation": "count: the textbook rule (the head's reservation counts free resources); "
                                  "machines: batsched easy_bf's rule on specific machines",
                   "rjms_delay_s": "seconds batsched adds to every walltime when it plans on machines "
                                   "(reservation=machines only)"}
    option_acts_only = {"rjms_delay_s": (("reservation",), lambda o: o["reservation"] == "machines",
                                         "with reservation=machines")}

    def __init__(self, *, queue_order: str = "fcfs", backfill_order: BackfillOrder = "queue",
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
        #: the machines rule when reservation="machines" (its decisions, refusals, releases), else None
        self._machines: MachineReservation | None = None
        if reservation == "machines":
            self._machines = MachineReservation(self)
            self._admission = self._machines.reject
        self._reservation: tuple[str, float, int] | None = None  # (head id, shadow time, extra)
        self._index: CandidateIndex | None = None  # the waiting jobs in backfilling order
        self._budget = Budget(0, 0)  # what a pass may still use (one object, reset at each pass)
        self.use_index = True
        self._watched_s = -math.inf  # every planned end up to this time has its CALL_ME_LATER
        self._in_pass = False
        #: Latest shadow time computed for each job while it was the head (the invariant to check:
        #: with estimates that bound run times, a head never starts later than this).
        self.head_reservations_s: dict[str, float] = {}

    @property
    def use_index(self) -> bool:
        """Whether backfilling candidates are found through a CandidateIndex (a pass then costs
        O(log queue) instead of a walk of the queue; static queue orders, count rule). Set False
        before any job is queued for the plain walk, which the tests compare it to."""
        return self._index is not None

    @use_index.setter
    def use_index(self, wanted: bool) -> None:
        if self._queue:
            raise RuntimeError("use_index is chosen before any job is queued")
        if wanted and self._index_serves():
            self._index = CandidateIndex((lambda e: e[:3]) if self.backfill_order == "queue" else self._backfill_key)
            self._queue = SortedList()  # O(log n) removals anywhere in a long queue
        else:
            self._index, self._queue = None, []

    def _index_serves(self) -> bool:
        # a dynamic order re-sorts the whole queue at each decision; the machines rule walks machine sets
        return not self._policy.dynamic and self._machines is None

    # ------------------------------------------------------------------ the machines rule's hooks
    def job_finished(self, running: Running, state: JobState, now: float) -> None:
        super().job_finished(running, state, now)
        if self._machines is not None:
            self._machines.completed(running.job.id)

    def revise_estimate(self, job_id: str, estimate_s: float, now: float) -> None:
        if self._machines is not None:
            self._machines.refuse_revision()
        super().revise_estimate(job_id, estimate_s, now)

    def revise_expected_end(self, job_id: str, end_s: float, now: float) -> None:
        if self._machines is not None:
            self._machines.refuse_revision()
        super().revise_expected_end(job_id, end_s, now)

    def call_wanted(self, end_s: float) -> bool:
        """Only ends at or before the head's shadow time can change a decision when revised (see
        `end_change_matters`): calls for the others would wake the scheduler (a Batsim round trip)
        for nothing. A pass asks, at its end, for what its reservation needs. A dynamic queue order
        re-sorts at every decision, so any wake-up may change the head: a call for every end then."""
        if not self.calls_for_plan_only or self._policy.dynamic or self._machines is not None:
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

    def _enqueue(self, entry: Entry) -> None:
        if self._index is None:
            super()._enqueue(entry)
        else:
            self._queue.add(entry)
            self._index.add(entry)

    def _dequeue(self, entry: Entry, index: int | None = None) -> None:
        if self._index is None:
            super()._dequeue(entry, index)
        else:
            if index is None:
                self._queue.remove(entry)
            else:
                del self._queue[index]
            self._index.remove(entry)

    def _dequeue_head(self, nb: int) -> list[Entry]:
        started = super()._dequeue_head(nb)
        if self._index is not None:
            for entry in started:
                self._index.remove(entry)
        return started

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if self._machines is not None:
            self._machines.schedule(now, decisions)
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
        head = queue[0].job
        full_pass: bool = self._released or cached is None or cached[0] != head.id
        if full_pass:
            started = self._start_head_jobs(now, decisions)
            if not queue:
                self._reservation = None
                return [entry.job for entry in started], True
            if started:
                head = queue[0].job
            shadow_s, extra = self._shadow(head, now)
            self.head_reservations_s[head.id] = shadow_s
            budget = self._budget
            budget.free, budget.extra = self._resources.nb_free, extra
            if self._index is not None:  # the head cannot be a candidate: it does not fit
                candidates: Any = self._index.candidates(budget, now, shadow_s)
            else:
                candidates = itertools.islice(queue, 1, None)
                if self.backfill_order != "queue":
                    candidates = sorted(candidates, key=self._backfill_key)
        else:
            # Nothing was freed since the last pass: the jobs tried then still cannot start, so
            # only new arrivals are candidates (batsched's rule too). The head is unchanged.
            assert cached is not None  # a pass is full without a reservation
            head_id, shadow_s, extra = cached
            if self._resources.nb_free == 0:
                return [], False
            candidates = [e for e in self._new if e.job.id != head_id]
            if not candidates:
                return [], False
            candidates.sort(key=self._queue_position() if self.backfill_order == "queue" else self._backfill_key)
            started = []
            budget = self._budget
            budget.free, budget.extra = self._resources.nb_free, extra
        nb_heads = len(started)
        self._backfill(candidates, budget, now, shadow_s, decisions, started)
        if len(started) > nb_heads:
            self._remove_waiting(started[nb_heads:])
        self._reservation = (head.id, shadow_s, budget.extra)  # backfilling never starts the head
        return [entry.job for entry in started], full_pass

    def _backfill_key(self, entry: Entry) -> tuple[Any, ...]:
        """Candidates' order for `backfill_order` sjbf (estimate) or svf (estimate x size), ties
        in submission order."""
        if self.backfill_order == "sjbf":
            return entry.estimate_s, entry.submit_s, entry.seq
        return entry.estimate_s * entry.res, entry.submit_s, entry.seq

    def _queue_position(self) -> Any:
        """Sort key giving entries their queue position (incremental passes: a static queue,
        sorted, so a bisection away; a dynamic order makes every pass full)."""
        queue = self._queue
        if isinstance(queue, SortedList):
            return queue.bisect_left
        return lambda entry: bisect_left(queue, entry)

    def _remove_waiting(self, entries: list[Entry]) -> None:
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

    def _backfill(self, candidates: Any, budget: Budget, now: float, shadow_s: float,
                  decisions: list[Decision], started: list[Entry]) -> None:
        """The hot loop of EASY: start each candidate that fits now and either ends (as planned)
        by the shadow time or uses only the extra resources. The budget is lowered as jobs start,
        before the next candidate is asked for (the index reads it between candidates)."""
        free, extra = budget.free, budget.extra
        if free == 0:
            return
        for entry in candidates:
            res = entry.res
            if res > free:
                continue
            if now + entry.planned_s > shadow_s:  # ends after the shadow time (as planned): only on extra resources
                if res > extra:
                    continue
                extra -= res
            self._start(entry.job, now, decisions, entry.estimate_s)
            free -= res
            budget.free, budget.extra = free, extra
            started.append(entry)
            if free == 0:
                break

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
