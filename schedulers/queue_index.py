"""An index of waiting jobs that finds the next one able to start without walking the others.

EASY's pass after a completion looks, in some order (queue order, or shortest estimate first), for
jobs that fit in the free resources and either end before the head's shadow time or use only the
`extra` resources. On an overloaded system thousands wait and almost none can start: walking all
of them made every decision cost O(queue).

Here waiting jobs are split by size (resources requested). Within one size, the entries are kept in
that order in blocks, with a segment tree of the least planned duration over the blocks; a size
that fits in `extra` takes its next entry, another size that fits in the free resources its next
entry that ends by the shadow time: each found in O(log n), exactly (one size per tree: no block
is opened that holds no candidate). A pass merges, by order key, the sizes that fit (a heap): its
cost grows with the number of distinct sizes that fit, not with the queue.

The index yields exactly the entries the plain walk would start, in the same order (the callers'
property tests compare the two); it never decides anything itself.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedlab.schedulers.queue import Entry


INF = math.inf


@dataclass(slots=True)
class Budget:
    """What a backfilling pass may still use: `free` resources now, and `extra`, those the head's
    reservation leaves over at its shadow time (a job ending after it may use only these). The
    pass lowers both as it starts jobs; the index reads them again between candidates."""

    free: int
    extra: int


class _SizeClass:
    """Entries of one size sorted by key, in blocks, with a segment tree of least planned durations."""

    #: Entries per block: a block splits above 2 x LOAD.
    LOAD = 32

    def __init__(self, res: int) -> None:
        self.res = res
        self._blocks: list[list[tuple[tuple[Any, ...], Entry]]] = []
        self._firsts: list[tuple[Any, ...]] = []  # each block's first key (for bisection)
        self._size = 1  # leaves in the tree (a power of two >= number of blocks)
        self._dur: list[float] = [INF, INF]  # node 1 is the root, leaves from _size
        self._empty = 0  # emptied blocks not yet dropped
        self.count = 0

    def add(self, key: tuple[Any, ...], entry: Entry) -> None:
        blocks = self._blocks
        self.count += 1
        if not blocks:
            blocks.append([(key, entry)])
            self._firsts.append(key)
            self._rebuild()
            return
        # the last block starting at or before key (an emptied block keeps its last first key,
        # which a re-added entry may share: it goes back there, where remove looks for it)
        b = max(bisect_right(self._firsts, key) - 1, 0)
        block = blocks[b]
        if not block:
            self._empty -= 1
        insort(block, (key, entry))
        self._firsts[b] = block[0][0]
        if len(block) > 2 * self.LOAD:
            half = len(block) // 2
            blocks.insert(b + 1, block[half:])
            del block[half:]
            self._firsts.insert(b + 1, blocks[b + 1][0][0])
            if b + 1 == len(blocks) - 1 and len(blocks) <= self._size:
                self._refresh(b)  # a split at the end (arrivals in queue order) shifts no block
                self._refresh(b + 1)
            else:  # the later blocks shift by one: their leaves are known, only the halves are new
                leaves = self._dur[self._size:self._size + len(blocks) - 1]
                leaves[b:b + 1] = [min(e.planned_s for _, e in half) for half in (block, blocks[b + 1])]
                self._rebuild(leaves)
        else:
            dur, tree, node = entry.planned_s, self._dur, b + self._size
            while node and dur < tree[node]:
                tree[node] = dur
                node >>= 1

    def remove(self, key: tuple[Any, ...], entry: Entry) -> None:
        b = bisect_left(self._firsts, key)
        if b == len(self._firsts) or self._firsts[b] != key:
            b -= 1
        block = self._blocks[b]
        i = bisect_left(block, (key,))
        if i == len(block) or block[i][0] != key:
            raise KeyError(f"entry {key!r} is not indexed")
        del block[i]
        self.count -= 1
        if block:
            self._firsts[b] = block[0][0]
        else:  # kept (its first key still orders it) until half the blocks are empty
            self._empty += 1
            if 2 * self._empty > len(self._blocks):
                self._compact()
                return
        if entry.planned_s == self._dur[b + self._size]:
            self._refresh(b)

    def _compact(self) -> None:
        keep = [b for b, block in enumerate(self._blocks) if block]
        leaves = self._dur[self._size:]
        self._blocks = [self._blocks[b] for b in keep]
        self._firsts = [self._firsts[b] for b in keep]
        self._empty = 0
        self._rebuild([leaves[b] for b in keep])

    @property
    def least_duration_s(self) -> float:
        return self._dur[1]  # the root (the only leaf when there is one block)

    def _refresh(self, b: int) -> None:
        """Recompute block `b`'s least duration and its path to the root."""
        tree = self._dur
        node = b + self._size
        block = self._blocks[b]
        tree[node] = min(e.planned_s for _, e in block) if block else INF
        node >>= 1
        while node:
            dur = min(tree[2 * node], tree[2 * node + 1])
            if dur == tree[node]:
                return
            tree[node] = dur
            node >>= 1

    def _rebuild(self, leaves: list[float] | None = None) -> None:
        """The tree anew over `leaves`, the blocks' least durations (computed from the entries when
        not given): O(blocks), not O(entries), for the splits and compactions that know them."""
        if leaves is None:
            leaves = [min(e.planned_s for _, e in block) if block else INF for block in self._blocks]
        nb = len(leaves)
        size = 1
        while size < nb:
            size *= 2
        tree = [INF] * size + leaves + [INF] * (size - nb)
        for node in range(size - 1, 0, -1):
            left, right = tree[2 * node], tree[2 * node + 1]
            tree[node] = left if left < right else right
        self._size, self._dur = size, tree

    def walk(self, budget: Budget, now: float, shadow_s: float) -> Iterator[Entry]:
        """This size's entries that may start, in order, while the size fits (the budget is read
        again at each step): all of them while it fits in extra, else those that end
        by the shadow time (found through the tree, skipping the others a subtree at a time)."""
        res, blocks = self.res, self._blocks
        b = 0
        while True:
            if res > budget.free:
                return
            if res > budget.extra and shadow_s < INF:  # (an infinite shadow time takes every entry,
                b = self._next_short_block(b, now, shadow_s)  # and the tree's padding leaves too)
                if b < 0:
                    return
            elif b >= len(blocks):
                return
            for _, entry in blocks[b]:
                if res > budget.free:
                    return
                if res <= budget.extra or now + entry.planned_s <= shadow_s:
                    yield entry
            b += 1

    def _next_short_block(self, b: int, now: float, shadow_s: float) -> int:
        """The first block from `b` holding an entry that ends by the shadow time, or -1."""
        tree, size = self._dur, self._size
        if b >= size:
            return -1
        node = b + size
        while now + tree[node] > shadow_s:  # not here: the next subtree to the right
            while node & 1:
                node >>= 1
            if node == 0:
                return -1
            node += 1
        while node < size:  # the tree's minimum says a child has one: the leftmost such
            node *= 2
            if now + tree[node] > shadow_s:
                node += 1
        return node - size


class CandidateIndex:
    """Waiting-queue entries split by size, each size sorted by `key(entry)` (keys are unique)."""

    def __init__(self, key: Callable[[Entry], tuple[Any, ...]]) -> None:
        self._key = key
        self._classes: dict[int, _SizeClass] = {}
        self._sizes: list[int] = []  # the sizes present, ascending
        self._len = 0

    def __len__(self) -> int:
        return self._len

    def add(self, entry: Entry) -> None:
        res = entry.res
        size_class = self._classes.get(res)
        if size_class is None:
            size_class = self._classes[res] = _SizeClass(res)
            insort(self._sizes, res)
        size_class.add(self._key(entry), entry)
        self._len += 1

    def remove(self, entry: Entry) -> None:
        res = entry.res
        size_class = self._classes[res]
        size_class.remove(self._key(entry), entry)
        self._len -= 1
        if not size_class.count:
            del self._classes[res]
            del self._sizes[bisect_left(self._sizes, res)]

    def candidates(self, budget: Budget, now: float, shadow_s: float) -> Iterator[Entry]:
        """Entries in index order that may start: size <= budget.free and either ending by the
        shadow time (now + planned duration <= shadow_s) or size <= budget.extra.

        `budget` is read again before each step, so the caller lowers free and extra as it starts
        jobs (the conditions only get stricter: an entry skipped once is never a candidate again in
        the same pass). The caller must not change the index until the iteration ends."""
        key = self._key
        heap = []
        classes = self._classes
        extra = budget.extra
        for res in self._sizes[:bisect_right(self._sizes, budget.free)]:
            size_class = classes[res]
            if res > extra and now + size_class.least_duration_s > shadow_s:
                continue  # none of this size can start: no walk
            stream = size_class.walk(budget, now, shadow_s)
            entry = next(stream, None)
            if entry is not None:
                heap.append((key(entry), entry, stream))  # keys are unique: entries never compared
        heapq.heapify(heap)
        while heap:
            _, entry, stream = heap[0]
            res = entry.res
            if res <= budget.free and (res <= budget.extra or now + entry.planned_s <= shadow_s):
                yield entry
                if budget.free <= 0:
                    return
            entry = next(stream, None)
            if entry is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (key(entry), entry, stream))

    def __iter__(self) -> Iterator[Entry]:
        for res in self._sizes:
            for block in self._classes[res]._blocks:
                for _, entry in block:
                    yield entry
