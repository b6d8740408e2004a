"""FCFS: start jobs strictly in queue order; the head blocks everything behind it (no backfilling)."""

from __future__ import annotations

from schedlab.model import Decision
from schedlab.schedulers.base import register
from schedlab.schedulers.queue import QueueScheduler


@register("fcfs")
class FCFS(QueueScheduler):
    """First come, first served (or any other `queue_order`), as batsched's `fcfs_fast`."""

    def _schedule(self, now: float, decisions: list[Decision]) -> None:
        if self._released or self._new:
            self._start_head_jobs(now, decisions)
