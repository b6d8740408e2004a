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

from schedlab.model import Decision, Job, JobState
from schedlab.schedulers.base import register
from schedlab.schedulers.easy_machines import MachineReservationMixin
from schedlab.schedulers.queue import QueueScheduler


@register("easy")
class EasyBackfilling(MachineReservationMixin, QueueScheduler):
    """EASY backfilling; candidates tried in queue order (`backfill_order="queue"`),
    shortest-estimate first (`"sjbf"`, Tsafrir et al. 2007) or smallest volume (estimate x
    resources) first (`"svf"`, the hybrid study's FCFS-BF2). `reservation="machines"` follows
    batsched's easy_bf instead of the textbook count-based rule (see easy_machines.py)."""

    #: CALL_ME_LATER only for planned ends that can change a decision (see `call_wanted`); False:
    #: for every end before the kill time (the same schedule, more wake-ups; tests compare the two)
    calls_for_plan_only = True

    def __init__(self, *, queue_order: str = "fcfs", backfill_order: Literal["queue", "sjbf", "svf"] = "queue",
                 reservation: Literal["count", "machines"] = "count", rjms_delay_s: float = 5.0) -> None:
        super().__init__(queue_order=queue_order)
        if backfill_order not in ("queue", "sjbf", "svf"):
            raise ValueError(f"backfill_order must be 'queue', 'sjbf' or 'svf', got {backfill_order!r}")
        if reservation not in ("count", "machines"):
            raise ValueError(f"reservation must be 'count' or 'machines', got {reservation!r}")
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
        self._in_pass = False
        #: Latest shadow time computed for each job while it was the head (the invariant to check:
        #: with estimates that bound run times, a head never starts later than this).
        self.head_reservations_s: dict[str, float] = {}

    def options(self) -> dict[str, Any]:
        options = {**super().options(), "backfill_order": self.backfill_order, "reservation": self.reservation}
        if self.reservation == "machines":
            options["rjms_delay_s"] = self.rjms_delay_s
        return options

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

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if self.reservation == "machines":
            self._schedule_machines(now, decisions)
            return
        self._in_pass = True
        try:
            started = self._pass(now, decisions)
        finally:
            self._in_pass = False
        cached = self._reservation
        if cached is None:
            return  # nothing waits: no revision can matter
        if started is None:  # a full pass: every end up to the shadow time is watched
            for key in itertools.takewhile(lambda key: key[0] <= cached[1], self._ends):
                self._ask_call(self._by_end[key], now, decisions)
        else:
            for job in started:
                self._ask_call(self._running[job.id], now, decisions)

    def _pass(self, now: float, decisions: list[Decision]) -> list[Job] | None:
        """Start what EASY starts now; returns the jobs started by an incremental pass, None
        after a full pass."""
        queue = self._queue
        cached = self._reservation
        full_pass: bool = self._released or cached is None or cached[0] != queue[0][3].id
        if full_pass:
            self._start_head_jobs(now, decisions)
            if not queue:
                self._reservation = None
                return
            head = queue[0][3]
            shadow_s, extra = self._shadow(head, now)
            self.head_reservations_s[head.id] = shadow_s
            candidates = itertools.islice(enumerate(queue), 1, None)
        else:
            # Nothing was freed since the last pass: the jobs tried then still cannot start, so
            # only new arrivals are candidates (batsched's rule too). The head is unchanged.
            head_id, shadow_s, extra = cached
            if self._resources.nb_free == 0:
                return []
            # the queue is sorted and its entries unique: a new entry's position is a bisection away
            candidates = sorted((bisect_left(queue, e), e) for e in self._new if e[3].id != head_id)
            if not candidates:
                return []
        if self.backfill_order == "sjbf":
            candidates = sorted(candidates, key=lambda c: (c[1][4], c[1][1], c[1][2]))
        elif self.backfill_order == "svf":
            candidates = sorted(candidates, key=lambda c: (c[1][4] * c[1][5], c[1][1], c[1][2]))
        started: list[int] = []
        free = self._resources.nb_free
        # The hot loop of EASY: locals only, the estimate cached in the queue entry.
        for position, entry in candidates:
            if free == 0:
                break
            res = entry[5]
            if res > free:
                continue
            if now + entry[6] > shadow_s:  # ends after the shadow time (as planned): only on extra resources
                if res > extra:
                    continue
                extra -= res
            self._start(entry[3], now, decisions, entry[4])
            free -= res
            started.append(position)
        started_jobs = [queue[position][3] for position in started]
        for position in sorted(started, reverse=True):
            del queue[position]
        self._reservation = (self._queue[0][3].id, shadow_s, extra)
        return None if full_pass else started_jobs

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
