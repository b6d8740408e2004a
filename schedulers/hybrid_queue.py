"""The hybrid scheduler's waiting queue split between its two steps, kept from one decision to the next.

Every decision of the hybrid (hybrid.py) takes its queue as two lists: step 1's jobs (predictable,
within the share) in online-SVF order, and step 2's (the others) in queue order, whose backfilling
tries every job that may start now. Splitting, sorting and walking the whole queue at every
decision made a decision cost O(queue) in Python: on RICC (447,794 jobs; the hybrid holds up to
89,948 at once) it had not finished after 14 minutes. Here the split is kept: new jobs are put in
place (bisection), started ones taken out, and it is made anew only when the share changes (each
retrain) or the queue changed another way. Step 2's jobs are also grouped by shape (cores,
requested time): its backfilling asks each shape once whether it fits now, and takes the fitting
shapes' jobs in order, the same jobs in the same order as a walk of the whole list (the tests
compare both schedules).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from schedlab.schedulers.queue import Entry

Key = Callable[[Entry], Any]


def svf_key(entry: Entry) -> tuple[float, float, int]:
    """Online-SVF's order: planned duration x cores, ties by submit time then submission order."""
    return entry.estimate_s * entry.res, entry.submit_s, entry.seq


class QueueSplit:
    """Step 1's entries (`planned`, in online-SVF order) and step 2's (`others`, in queue order,
    and by shape: (cores, requested time) -> entries in `step2_key` order), for one `share`."""

    __slots__ = ("_duration", "_step1", "_step2_key", "by_id", "others", "planned", "shapes", "share")

    def __init__(self, share: int, entries: Iterable[Entry], *, step1: Callable[[Entry], bool],
                 step2_key: Key, duration_s: Callable[[Entry], float]) -> None:
        self.share = share
        self._step1, self._step2_key, self._duration = step1, step2_key, duration_s
        self.planned: list[Entry] = []
        self.others: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.shapes: dict[tuple[int, float], list[Entry]] = {}
        for entry in entries:  # in queue order
            if step1(entry):
                self.planned.append(entry)
            else:
                self.others.append(entry)
                self._add_step2(entry)
        self.planned.sort(key=svf_key)

    def __len__(self) -> int:
        return len(self.planned) + len(self.others)

    def add(self, entry: Entry) -> None:
        if self._step1(entry):
            insort(self.planned, entry, key=svf_key)
        else:
            insort(self.others, entry)
            self._add_step2(entry)

    def _add_step2(self, entry: Entry) -> None:
        self.by_id[entry.job.id] = entry
        shape = self.shapes.setdefault((entry.res, self._duration(entry)), [])
        insort(shape, entry, key=self._step2_key)

    def remove(self, entry: Entry) -> None:
        """Take a started entry out (entries are unique: seq)."""
        if self.by_id.pop(entry.job.id, None) is entry:
            del self.others[bisect_left(self.others, entry)]
            shape_key = (entry.res, self._duration(entry))
            shape = self.shapes[shape_key]
            del shape[bisect_left(shape, self._step2_key(entry), key=self._step2_key)]
            if not shape:
                del self.shapes[shape_key]
        else:
            planned = self.planned
            del planned[bisect_left(planned, svf_key(entry), key=svf_key)]

    def step2_in_order(self, fits: Callable[[int, float], bool], skip: Callable[[Entry], bool]) -> Iterator[Entry]:
        """Step 2's entries that `fits(cores, requested time)` now, in `step2_key` order, each
        asked when its turn comes (the caller may start the previous one in between: fitting only
        gets harder as jobs start, so a shape that does not fit is never asked again). `skip`:
        entries not to yield (the head, those already started). The same entries, in the same
        order, as a walk of the whole list would start; its cost grows with the shapes waiting."""
        key = self._step2_key
        heap = [(key(entries[0]), shape, 0) for shape, entries in self.shapes.items() if fits(*shape)]
        heapq.heapify(heap)
        shapes = self.shapes
        while heap:
            _, shape, position = heap[0]
            entries = shapes[shape]
            entry = entries[position]
            skipped = skip(entry)
            if skipped or fits(*shape):
                if not skipped:
                    yield entry
                position += 1
                if position < len(entries):
                    heapq.heapreplace(heap, (key(entries[position]), shape, position))
                else:
                    heapq.heappop(heap)
            else:
                heapq.heappop(heap)  # no entry of this shape fits any more
