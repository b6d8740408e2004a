"""Free/busy state of a platform's resources: a byte mask (1 = free), `ProcSet`s at the edges.

procset's set algebra is pure Python and dominated the first profiles of the engine and EASY; on a
bytearray, finding runs of free resources and marking them are single C calls (`find`, slice
assignment), so allocation costs O(runs), not O(resources). Only decisions carry `ProcSet`s.
"""

from __future__ import annotations

from collections.abc import Sequence

from procset import ProcInt, ProcSet

_FREE, _BUSY = 1, 0


def procset_from_sorted(intervals: Sequence[tuple[int, int]]) -> ProcSet:
    """A ProcSet from disjoint, non-adjacent, ascending (inf, sup) intervals, without procset's
    pure-Python merge (which cost more than the whole EASY decision). Relies on procset 1.x's
    documented invariant: `_itvs` is the list of disjoint ProcInt in increasing order."""
    result = _new_procset(ProcSet)  # without ProcSet.__init__'s argument handling
    result._itvs = [_new_interval(ProcInt, bounds) for bounds in intervals]  # nor ProcInt's checks
    return result


_new_procset = object.__new__
_new_interval = tuple.__new__  # ProcInt is a tuple (inf, sup); the callers' bounds are valid ints


class ResourceMask:
    def __init__(self, nb_resources: int) -> None:
        self.free = bytearray([_FREE]) * nb_resources
        self.nb_free = nb_resources
        self._ones = memoryview(bytes([_FREE]) * nb_resources)  # slices of these fill runs without copies
        self._zeros = memoryview(bytes(nb_resources))

    def _runs(self, value: int, start: int = 0):
        """(first, last) of each maximal run of `value`, ascending."""
        mask, other, size = self.free, 1 - value, len(self.free)
        pos = mask.find(value, start)
        while pos >= 0:
            end = mask.find(other, pos)
            if end < 0:
                end = size
            yield pos, end - 1
            pos = mask.find(value, end)

    def take_lowest(self, count: int) -> ProcSet:
        """Allocate the `count` lowest free ids (caller checked that enough are free)."""
        mask = self.free
        first = mask.find(_FREE)
        end = mask.find(_BUSY, first)
        if end < 0:
            end = len(mask)
        if end - first >= count:  # the common case: the lowest free run is wide enough
            mask[first:first + count] = self._zeros[:count]
            self.nb_free -= count
            return procset_from_sorted(((first, first + count - 1),))
        picked: list[tuple[int, int]] = []
        need = count
        for first, last in self._runs(_FREE):
            width = last - first + 1
            if width >= need:
                picked.append((first, first + need - 1))
                mask[first:first + need] = self._zeros[:need]
                break
            picked.append((first, last))
            mask[first:last + 1] = self._zeros[:width]
            need -= width
        self.nb_free -= count
        return procset_from_sorted(picked)

    def busy_part(self, alloc: ProcSet) -> ProcSet:
        """The resources of `alloc` that are not free (empty when it can be taken)."""
        mask = self.free
        busy: list[int] = []
        for interval in alloc.intervals():
            if mask.find(_BUSY, interval.inf, interval.sup + 1) >= 0:
                busy.extend(i for i in range(interval.inf, interval.sup + 1) if mask[i] == _BUSY)
        return ProcSet(*busy)

    def take_if_free(self, alloc: ProcSet, size: int) -> ProcSet | None:
        """Take `alloc` if all of it is free; else change nothing and return its busy part."""
        mask = self.free
        for inf, sup in alloc._itvs:  # procset 1.x's interval list (procset_from_sorted's invariant)
            if mask.find(_BUSY, inf, sup + 1) >= 0:
                return self.busy_part(alloc)
        self.take(alloc, size)
        return None

    def take(self, alloc: ProcSet, size: int) -> None:
        """Mark `alloc` (of `size` resources, known to be free) busy."""
        mask, zeros = self.free, self._zeros
        for inf, sup in alloc._itvs:
            mask[inf:sup + 1] = zeros[:sup - inf + 1]
        self.nb_free -= size

    def release(self, alloc: ProcSet, size: int) -> None:
        mask, ones = self.free, self._ones
        for inf, sup in alloc._itvs:
            mask[inf:sup + 1] = ones[:sup - inf + 1]
        self.nb_free += size

    def free_runs(self) -> list[tuple[int, int]]:
        """The free ids as (first, last) runs, ascending."""
        return list(self._runs(_FREE))

    def free_set(self) -> ProcSet:
        return procset_from_sorted(self.free_runs())
