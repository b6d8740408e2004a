"""An availability profile: free cores over time, for plan-based schedulers.

A step function over [now, inf): segment i covers [times[i], times[i+1]) (the last one is
unbounded) and holds `free[i]` cores nobody uses or has reserved, and `capped[i]`, what is left of a
share of the machine that a class of jobs may not exceed (the hybrid scheduler's alpha share of
planned jobs: the share minus what its own jobs use; a capped job needs its cores in both). Jobs
are counts of cores (rigid, any cores), as in the count-based EASY: a job planned at t with c cores
needs c free cores during its whole duration.

`earliest(cores, duration_s)` finds the first instant a job fits, `reserve(start, end, cores)` books
it. Planning Q jobs in order on a profile of n steps costs O(Q (Q + n)).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable


class AvailabilityProfile:
    """Free cores (and free cores of a capped share) over time, from `now` on."""

    __slots__ = ("capped", "free", "times")

    def __init__(self, now: float, free_now: int, *, capped_now: int | None = None,
                 releases: Iterable[tuple[float, int, int]] = ()) -> None:
        """`releases`: (time, cores freed, of which in the capped share), e.g. the planned ends of
        running jobs; times at or before `now` count as now (an end being revised is never past)."""
        self.times = [now]
        self.free = [free_now]
        self.capped = [free_now if capped_now is None else capped_now]
        for time_s, cores, capped_cores in sorted(releases):
            if time_s <= now:
                self.free[0] += cores
                self.capped[0] += capped_cores
                continue
            if time_s != self.times[-1]:
                self.times.append(time_s)
                self.free.append(self.free[-1])
                self.capped.append(self.capped[-1])
            self.free[-1] += cores
            self.capped[-1] += capped_cores

    @classmethod
    def of_running(cls, now: float, free_now: int, ends: list[tuple[float, int, int]], *,
                   capped_now: int | None = None, capped_cores: list[int] | None = None) -> AvailabilityProfile:
        """The profile `__init__` makes of `releases=[(end, res, capped_cores[k]) for each (end, _,
        res) = ends[k]]` (0 in the share without `capped_cores`), from `ends` already ascending (a
        scheduler's running jobs by planned end): one pass, no sort (the plan-based schedulers
        build one at every decision, of every running job)."""
        profile = cls.__new__(cls)
        times, free, capped = [now], [], []
        free_s, capped_s = free_now, free_now if capped_now is None else capped_now
        last_s = now
        for (end_s, _, res), in_share in zip(ends, [0] * len(ends) if capped_cores is None else capped_cores,
                                             strict=True):
            if end_s > last_s:
                free.append(free_s)
                capped.append(capped_s)
                times.append(end_s)
                last_s = end_s
            free_s += res
            capped_s += in_share
        free.append(free_s)
        capped.append(capped_s)
        profile.times, profile.free, profile.capped = times, free, capped
        return profile

    def earliest(self, cores: int, duration_s: float, *, capped: bool = False,
                 not_before: float | None = None) -> float:
        """The earliest start >= `not_before` (default: now) at which `cores` are free for
        `duration_s` (in the capped share too when `capped`); inf if never."""
        times, free, share = self.times, self.free, self.capped
        n = len(times)
        start_s = times[0] if not_before is None else max(not_before, times[0])
        j = bisect_right(times, start_s) - 1
        # one pass: a step without room moves the candidate start to the next step; a step with
        # room that lasts until the candidate's end is the answer
        while j < n:
            if free[j] < cores or (capped and share[j] < cores):
                j += 1
                if j < n:
                    start_s = times[j]
                continue
            j += 1
            if j == n or times[j] >= start_s + duration_s:
                return start_s
        return math.inf

    def fits_now(self, cores: int, duration_s: float, *, capped: bool = False) -> bool:
        """Whether `earliest(...)` is now: only the steps within the duration are read (a job
        that does not fit now needs no search of the whole profile for its slot)."""
        times, free, share = self.times, self.free, self.capped
        end_s = times[0] + duration_s
        for j in range(len(times)):
            if j and times[j] >= end_s:
                return True
            if free[j] < cores or (capped and share[j] < cores):
                return False
        return True

    def _split(self, time_s: float) -> int:
        """Index of the step starting at `time_s` (inserted if needed)."""
        i = bisect_right(self.times, time_s) - 1
        if self.times[i] == time_s:
            return i
        self.times.insert(i + 1, time_s)
        self.free.insert(i + 1, self.free[i])
        self.capped.insert(i + 1, self.capped[i])
        return i + 1

    def reserve(self, start_s: float, end_s: float, cores: int, *, capped: bool = False) -> None:
        """Book `cores` over [start_s, end_s) (in the capped share too when `capped`). The share
        counts only its own jobs: a job outside it lowers `free`, and a capped job needs both."""
        if not end_s > start_s:
            return
        first = self._split(start_s)
        last = self._split(end_s) if math.isfinite(end_s) else len(self.times)
        free, share = self.free, self.capped
        for k in range(first, last):
            free[k] -= cores
            if capped:
                share[k] -= cores

    #: lists of at least this many jobs are planned by the compiled loop (profile_kernel.py)
    KERNEL_MIN = 32

    def plan(self, cores: list[int], durations_s: list[float], *, capped: bool = False,
             stop_below: list[int] | None = None, compiled: bool | None = None) -> list[float]:
        """`earliest` then `reserve` for each job in order; before job i, stop if fewer cores are
        free now (in the share too when `capped`) than `stop_below[i]`. Returns the starts of the
        jobs planned (a prefix). `compiled` (default: at least `KERNEL_MIN` jobs) runs the same
        plan in a compiled loop."""
        count = len(cores)
        if not (count >= self.KERNEL_MIN if compiled is None else compiled):
            starts = []
            for index, (need, duration_s) in enumerate(zip(cores, durations_s, strict=True)):
                if stop_below is not None and \
                        min(self.free[0], self.capped[0] if capped else self.free[0]) < stop_below[index]:
                    break
                start_s = self.earliest(need, duration_s, capped=capped)
                self.reserve(start_s, start_s + duration_s, need, capped=capped)
                starts.append(start_s)
            return starts
        import numpy as np

        from schedlab.schedulers.profile_kernel import plan_jobs

        n = len(self.times)
        room = n + 2 * count + 1
        times, free, share = np.empty(room), np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
        times[:n], free[:n], share[:n] = self.times, self.free, self.capped
        starts_array = np.empty(count)
        stop = np.full(count, np.iinfo(np.int64).min) if stop_below is None else np.asarray(stop_below, dtype=np.int64)
        planned, n = plan_jobs(times, free, share, n, np.asarray(cores, dtype=np.int64),
                               np.asarray(durations_s, dtype=float), capped, stop, starts_array)
        self.times, self.free, self.capped = times[:n].tolist(), free[:n].tolist(), share[:n].tolist()
        return starts_array[:planned].tolist()

    def steps(self) -> list[tuple[float, int, int]]:
        """(start, free, capped) of every step (tests, plots)."""
        return list(zip(self.times, self.free, self.capped, strict=True))


def load_plan_kernel() -> None:
    """Compile (or load from numba's cache) `plan`'s loop on a throwaway profile: hosts call it
    in `prepare`, outside the scheduling time they measure."""
    AvailabilityProfile(0.0, 2).plan([1, 2], [1.0, 1.0], capped=True, stop_below=[0, 1], compiled=True)
