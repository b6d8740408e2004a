"""The first waiting job at `now` under a dynamic policy scored by wait (`QueuePolicy.by_wait`).

Such a score (WFP3, UNICEF) depends on the job only through (estimate, res) and falls as the wait
grows, so within a group of equal (estimate, res) the order never changes: the group's earliest
submitted job (then lowest seq) is its best at any time. The best of the whole queue is then the
best of the group heads, and a decision re-scores a few hundred heads instead of re-sorting tens of
thousands of jobs (the long-term study's RICC windows: 219 groups for 93,907 jobs). The heads' scores
are the policy's own (array form, equal to the scalar one bit for bit), ties broken by (submit,
seq): the same job as the fully sorted queue's head.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import TYPE_CHECKING

import numpy as np

from schedlab.schedulers.policies import QueuePolicy

if TYPE_CHECKING:
    from schedlab.schedulers.queue import Entry


def _order(entry: Entry) -> tuple[float, int]:
    return entry.submit_s, entry.seq  # (submit, seq)


class GroupHeads:
    """Waiting entries (score, submit, seq, job, estimate, res, ...) grouped by (estimate, res),
    each group in (submit, seq) order; the heads' fields are kept in arrays, one slot per group."""

    def __init__(self, policy: QueuePolicy) -> None:
        if not policy.by_wait or policy.vector is None:
            raise ValueError(f"queue policy {policy.name!r} is not scored by wait with an array form")
        self._policy = policy
        self._groups: dict[tuple[float, int], list[Entry]] = {}
        self._slot: dict[tuple[float, int], int] = {}
        self._free: list[int] = []
        self._heads: list[Entry | None] = []
        self._submit = np.zeros(0)
        self._estimate = np.zeros(0)
        self._res = np.zeros(0)
        self._seq = np.zeros(0, dtype=np.int64)
        self._valid = np.zeros(0, dtype=bool)
        self._scored_at: float | None = None  # the time `_scores` hold, None when stale
        self._scores = np.zeros(0)
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, entry: Entry) -> None:
        key = (entry.estimate_s, entry.res)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = []
            self._slot[key] = self._new_slot()
        insort(group, entry, key=_order)
        self._count += 1
        if group[0] is entry:
            self._set_head(self._slot[key], entry)

    def remove(self, entry: Entry) -> None:
        key = (entry.estimate_s, entry.res)
        group = self._groups[key]
        index = bisect_left(group, _order(entry), key=_order)
        if group[index] is not entry:
            raise KeyError(f"job {entry.job.id!r} is not waiting")
        del group[index]
        self._count -= 1
        if index:
            return
        slot = self._slot[key]
        if group:
            self._set_head(slot, group[0])
        else:
            del self._groups[key], self._slot[key]
            self._heads[slot] = None
            self._valid[slot] = False
            self._free.append(slot)
            if self._scored_at is not None:
                self._scores[slot] = np.inf

    def best(self, now: float) -> Entry | None:
        """The entry a queue sorted by (score at `now`, submit, seq) would have first."""
        if not self._count:
            return None
        if self._scored_at != now:
            vector = self._policy.vector
            assert vector is not None  # groups serve only policies with an array form (fcfs.py)
            scores = vector(self._submit, self._estimate, self._res, now)
            self._scores = np.where(self._valid, scores, np.inf)
            self._scored_at = now
        scores = self._scores
        lowest = scores.min()
        ties = np.flatnonzero((scores == lowest) & self._valid)
        if len(ties) == 1:
            return self._heads[int(ties[0])]
        slot = min(ties.tolist(), key=lambda i: (self._submit[i], self._seq[i]))
        return self._heads[slot]

    # ------------------------------------------------------------------ slots
    def _new_slot(self) -> int:
        if self._free:
            return self._free.pop()
        slot = len(self._heads)
        self._heads.append(None)
        if slot >= len(self._submit):  # grow the arrays by doubling
            size = max(16, 2 * len(self._submit))
            for name in ("_submit", "_estimate", "_res", "_seq", "_valid", "_scores"):
                old = getattr(self, name)
                grown = np.zeros(size, dtype=old.dtype)
                grown[:len(old)] = old
                setattr(self, name, grown)
            self._scored_at = None  # the new slots hold no score
        return slot

    def _set_head(self, slot: int, entry: Entry) -> None:
        self._heads[slot] = entry
        self._submit[slot], self._estimate[slot], self._res[slot] = entry.submit_s, entry.estimate_s, entry.res
        self._seq[slot] = entry.seq
        self._valid[slot] = True
        if self._scored_at is not None:  # the scalar score equals the array form's bit for bit
            self._scores[slot] = self._policy.score(entry.job, entry.estimate_s, self._scored_at)
