"""FCFS: start jobs strictly in queue order; the head blocks everything behind it (no backfilling).

`sort_window=N` (default 0: the whole queue) sorts by `queue_order` only the first N waiting jobs in
submission order, the rest following in submission order: the on-line tester of the regression-
policies study's authors (`QUEUE_NUM_TASKS 32` in their C simulator; their papers describe the
whole queue sorted)."""

from __future__ import annotations

import heapq

from schedlab.model import Decision
from schedlab.schedulers.base import register
from schedlab.schedulers.queue import Entry, QueueScheduler


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
        # a policy scored by wait: only each (estimate, res) group's first job is re-scored
        # (group_heads.py); the queue list is then unordered, its entries found by seq
        self._heads = None
        if self._policy.by_wait and self._policy.vector is not None and not sort_window:
            from schedlab.schedulers.group_heads import GroupHeads

            self._heads = GroupHeads(self._policy)
            self._position: dict[int, int] = {}  # seq -> index in the (unordered) queue list

    # ------------------------------------------------------------------ grouped dynamic queue
    def _rescored(self, now: float) -> list[Entry]:
        return self._queue if self._heads is not None else super()._rescored(now)

    def _enqueue(self, entry: Entry) -> None:
        if self._heads is None:
            super()._enqueue(entry)
            return
        self._position[entry.seq] = len(self._queue)
        self._queue.append(entry)
        self._heads.add(entry)

    def _dequeue(self, entry: Entry, index: int | None = None) -> None:
        if self._heads is None:
            super()._dequeue(entry, index)
            return
        index = self._position.pop(entry.seq)
        last = self._queue.pop()
        if last is not entry:  # the last entry fills the hole
            self._queue[index] = last
            self._position[last.seq] = index
        self._heads.remove(entry)

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if not (self._released or self._new):
            return
        if self._heads is not None:  # the best head starts while it fits
            while (entry := self._heads.best(now)) is not None and entry.res <= self._resources.nb_free:
                self._start(entry.job, now, decisions, entry.estimate_s)
                self._dequeue(entry)
            return
        if not self.sort_window:
            self._start_head_jobs(now, decisions)
            return
        while self._queue:  # the head of the sorted window starts while it fits
            window = heapq.nsmallest(self.sort_window, range(len(self._queue)),
                                     key=lambda i: (self._queue[i].submit_s, self._queue[i].seq))
            head = min(window)  # the queue is in the policy's order (a dynamic one re-sorted for this decision)
            entry = self._queue[head]
            if entry.res > self._resources.nb_free:
                return
            self._start(entry.job, now, decisions, entry.estimate_s)
            self._dequeue(entry, head)
