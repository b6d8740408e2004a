"""Plan-based schedulers (online-SJF, online-SVF) and the hybrid study's backfilling baselines.

A plan-based scheduler re-plans its whole queue at every event: jobs in queue order each get the
earliest slot of their planned duration in an availability profile (profile.py) built from the
running jobs' planned ends, and those planned for now start. Later jobs may fill holes left by
earlier ones (a hole-filling list plan: what "each job gets the earliest slot" means; the study does
not say). `online-sjf` orders by planned duration (Plan-based1), `online-svf` by duration x cores
(Plan-based2, Im, Naghshnejad & Singhal 2016), ties by submit time then submission order.

`fcfs-bf1` / `fcfs-bf2` are EASY (count-based) with backfill candidates by shortest duration / by
smallest volume. All four plan with `runtime=predicted|exact|perturbed:A|requested` (runtimes.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from typing import Any, ClassVar

from schedlab.model import Decision
from schedlab.schedulers.base import register
from schedlab.schedulers.easy import BackfillOrder, EasyBackfilling
from schedlab.schedulers.profile import AvailabilityProfile
from schedlab.schedulers.queue import Entry, QueueScheduler
from schedlab.schedulers.runtimes import RuntimeEstimates, RuntimeOptions, with_runtime_options


class PlanBased(RuntimeEstimates, QueueScheduler):
    """Re-plans the queue (in `queue_order`) on an availability profile at every event."""

    per_job_records: ClassVar[tuple[str, ...]] = ("planned_start_s",)
    relative_cost: ClassVar[float] = 7.0  # online-sjf, as the hybrid's measure: 3.2 s against EASY's 0.45 s
    bytes_per_resource: ClassVar[int] = 400  # online-sjf, fcfs-bf1, hybrid: 335-350 bytes at 1,000,000 resources

    @with_runtime_options
    def __init__(self, *, queue_order: str = "saf", **runtime: Any) -> None:
        super().__init__(queue_order=queue_order)
        self._init_runtimes(RuntimeOptions(**runtime))
        #: each job's planned start at the latest decision that planned it (online-SJF/SVF plan only
        #: until no core is free now: later jobs keep their previous entry)
        self.planned_start_s: dict[str, float] = {}

    def running_profile(self, now: float, *, share: int | None = None,
                        in_share: Collection[str] = frozenset()) -> AvailabilityProfile:
        """Free cores from now on, running jobs released at their planned ends. With `share`, the
        capped dimension starts at `share` minus the cores of the running jobs whose ids are
        `in_share`, and gets them back at their ends."""
        ends, free = self._ends, self._resources.nb_free
        if share is None:
            return AvailabilityProfile.of_running(now, free, ends)
        # the running jobs in the share put in place among the ends (fewer than the running jobs)
        shared = [0] * len(ends)
        running = self._running
        for job_id in in_share:
            key = running[job_id].end_key
            shared[bisect_left(ends, key)] = key[2]
        return AvailabilityProfile.of_running(now, free, ends, capped_now=share - sum(shared), capped_cores=shared)

    def plan_queue(self, profile: AvailabilityProfile, entries: list[Entry], now: float,
                   decisions: list[Decision], *, capped: bool = False, whole: bool = True,
                   started: list[Entry] | None = None) -> list[Entry]:
        """Give each entry (in order) its earliest slot, reserve it, start those planned for now;
        returns the entries not started (and appends those started to `started`, when given).
        `whole=False`: stop once fewer cores are free now than any later entry requests (nothing
        later can start now; the rest of the plan is only needed by who backfills around it)."""
        waiting = []
        smallest_after: list[int] = []  # smallest request from each entry on: who can still start now
        if not whole:
            smallest = self.nb_resources + 1
            for entry in reversed(entries):
                smallest = min(smallest, entry.res)
                smallest_after.append(smallest)
            smallest_after.reverse()
        starts = profile.plan([e.res for e in entries], [e.planned_s for e in entries], capped=capped,
                              stop_below=None if whole else smallest_after)
        for entry, start_s in zip(entries, starts, strict=False):
            job = entry.job
            self.planned_start_s[job.id] = start_s
            if start_s <= now:  # the profile gives exactly `now` to a job that fits now
                self._start(job, now, decisions, entry.estimate_s)
                if started is not None:
                    started.append(entry)
            else:
                waiting.append(entry)
        waiting.extend(entries[len(starts):])
        return waiting

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if not (self._released or self._new):
            return  # nothing freed, nothing new: the plan stands
        profile = self.running_profile(now)
        self._queue = self.plan_queue(profile, self._queue, now, decisions, whole=False)


@with_runtime_options
def _plan_in_order(self: Any, **runtime: Any) -> None:
    """`__init__` of a plan-based scheduler whose queue order is its class's `order`."""
    PlanBased.__init__(self, queue_order=self.order, **runtime)


@register("online-sjf")
class OnlineSJF(PlanBased):
    """Plan-based, shortest planned duration first (the study's Plan-based1)."""

    order = "spt"
    __init__ = _plan_in_order


@register("online-svf")
class OnlineSVF(PlanBased):
    """Plan-based, smallest volume (duration x cores) first (the study's Plan-based2)."""

    order = "saf"
    __init__ = _plan_in_order


@with_runtime_options
def _easy_with_runtimes(self: Any, **runtime: Any) -> None:
    """`__init__` of EASY (FCFS queue, count-based reservation) planned with the `runtime` option,
    backfill candidates in its class's `backfill` order."""
    EasyBackfilling.__init__(self, backfill_order=self.backfill)
    self._init_runtimes(RuntimeOptions(**runtime))


@register("fcfs-bf1")
class FcfsBF1(RuntimeEstimates, EasyBackfilling):
    """FCFS-BF1: EASY, candidates by shortest planned duration (easy-sjbf with `runtime=`)."""

    backfill: BackfillOrder = "sjbf"
    relative_cost: ClassVar[float] = 2.0  # fcfs-bf1: 1.0 s against EASY's 0.45 s
    __init__ = _easy_with_runtimes


@register("fcfs-bf2")
class FcfsBF2(RuntimeEstimates, EasyBackfilling):
    """FCFS-BF2: EASY, candidates by smallest volume (duration x cores)."""

    backfill: BackfillOrder = "svf"
    relative_cost: ClassVar[float] = 2.0
    __init__ = _easy_with_runtimes
