"""FCFS: start jobs strictly in queue order; the head blocks everything behind it (no backfilling).

`sort_window=N` (default 0: the whole queue) sorts by `queue_order` only the first N waiting jobs in
submission order, the rest following in submission order: the on-line tester of the regression-
policies study's authors (`QUEUE_NUM_TASKS 32` in their C simulator; their papers describe the
whole queue sorted)."""

from __future__ import annotations

import heapq

from schedlab.model import Decision
from schedlab.schedulers.base import register
from schedlab.schedulers.queue import QueueScheduler


@register("fcfs")
class FCFS(QueueScheduler):
    """First come, first served (or any other `queue_order`), as batsched's `fcfs_fast`."""

    option_choices = {"sort_window": "N >= 0"}
    option_help = {"sort_window": "sort only the first N waiting jobs (in submission order) by queue_order, as the "
                                  "regression-policies authors' tester does; 0: the whole queue"}

    def __init__(self, *, queue_order: str = "fcfs", sort_window: int = 0) -> None:
        super().__init__(queue_order=queue_order)
        if sort_window < 0:
            raise ValueError(f"sort_window must be >= 0 (0: the whole queue), got {sort_window}")
        self.sort_window = sort_window

    def options(self) -> dict:
        return {**super().options(), **({"sort_window": self.sort_window} if self.sort_window else {})}

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if not (self._released or self._new):
            return
        if not self.sort_window:
            self._start_head_jobs(now, decisions)
            return
        while self._queue:  # the head of the sorted window starts while it fits
            window = heapq.nsmallest(self.sort_window, range(len(self._queue)),
                                     key=lambda i: (self._queue[i][1], self._queue[i][2]))
            head = min(window)  # the queue is in the policy's order (a dynamic one re-sorted for this decision)
            entry = self._queue[head]
            if entry[5] > self._resources.nb_free:
                return
            self._start(entry[3], now, decisions, entry[4])
            self._dequeue(entry, head)
