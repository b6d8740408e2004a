"""Free/busy state of a platform's resources: a boolean mask (fast), `ProcSet`s at the edges.

procset's set algebra is pure Python and dominated profiles of the engine and EASY; a numpy mask
makes allocation O(P) in C, and only decisions carry `ProcSet`s (the protocol's interval sets).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from procset import ProcInt, ProcSet


def procset_from_sorted(intervals: Sequence[tuple[int, int]]) -> ProcSet:
    """A ProcSet from disjoint, non-adjacent, ascending (inf, sup) intervals, without procset's
    pure-Python merge (which cost more than the whole EASY decision). Relies on procset 1.x's
    documented invariant: `_itvs` is the list of disjoint ProcInt in increasing order."""
    result = ProcSet()
    result._itvs = [ProcInt(inf, sup) for inf, sup in intervals]
    return result


class ResourceMask:
    def __init__(self, nb_resources: int) -> None:
        self.free = np.ones(nb_resources, dtype=bool)
        self.nb_free = nb_resources

    def take_lowest(self, count: int) -> ProcSet:
        """Allocate the `count` lowest free ids (caller checked that enough are free)."""
        ids = np.flatnonzero(self.free)[:count]
        first, last = int(ids[0]), int(ids[-1])
        if last - first == count - 1:
            self.free[first:last + 1] = False
            alloc = procset_from_sorted(((first, last),))
        else:
            self.free[ids] = False
            breaks = np.flatnonzero(np.diff(ids) != 1)
            starts = [first, *ids[breaks + 1].tolist()]
            ends = [*ids[breaks].tolist(), last]
            alloc = procset_from_sorted(list(zip(starts, ends, strict=True)))
        self.nb_free -= count
        return alloc

    def busy_part(self, alloc: ProcSet) -> ProcSet:
        """The resources of `alloc` that are not free (empty when it can be taken)."""
        busy = []
        for interval in alloc.intervals():
            window = self.free[interval.inf:interval.sup + 1]
            if not window.all():
                busy.extend((interval.inf + np.flatnonzero(~window)).tolist())
        return ProcSet(*busy)

    def take(self, alloc: ProcSet) -> None:
        for interval in alloc.intervals():
            self.free[interval.inf:interval.sup + 1] = False
        self.nb_free -= len(alloc)

    def release(self, alloc: ProcSet) -> None:
        for interval in alloc.intervals():
            self.free[interval.inf:interval.sup + 1] = True
        self.nb_free += len(alloc)

    def free_set(self) -> ProcSet:
        ids = np.flatnonzero(self.free).tolist()
        return ProcSet(*ids) if ids else ProcSet()
