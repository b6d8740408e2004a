"""The compiled form of planning a list of jobs on an availability profile (profile.py): for each
job in order, `earliest` then `reserve`, the same comparisons and additions on the same float64
times, so the same plan. Plan-based schedulers re-plan hundreds of waiting jobs at every event
(online-SJF on RICC: 1.8 million earliest/reserve pairs in 8,000 jobs); numba is imported only by
the schedulers that plan."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit


@njit(cache=True)
def _split(times: np.ndarray, free: np.ndarray, share: np.ndarray, n: int, time_s: float) -> tuple[Any, int]:
    """Index of the step starting at `time_s`, inserted if needed; and the new step count."""
    i = np.searchsorted(times[:n], time_s, side="right") - 1
    if times[i] == time_s:
        return i, n
    times[i + 2:n + 1] = times[i + 1:n].copy()
    free[i + 2:n + 1] = free[i + 1:n].copy()
    share[i + 2:n + 1] = share[i + 1:n].copy()
    times[i + 1] = time_s
    free[i + 1] = free[i]
    share[i + 1] = share[i]
    return i + 1, n + 1


@njit(cache=True)
def plan_jobs(times: np.ndarray, free: np.ndarray, share: np.ndarray, n: int, cores: np.ndarray,
              durations: np.ndarray, capped: bool, stop_below: np.ndarray, starts: np.ndarray) -> tuple[int, int]:
    """Plan jobs in order on the first `n` steps (arrays with room for two more per job); before
    job i, stop if fewer cores are free now than `stop_below[i]`. Fills `starts`; returns the number
    of jobs planned and of steps.

    Planning only takes room, so the steps before the first one with room for c cores never get
    room for c again: `room_from[c]` remembers that step's time, and the next job of c cores
    searches from there (a long queue planned far ahead walked the whole profile for each job)."""
    room_from = np.full(cores.max() + 1 if cores.shape[0] else 1, -math.inf)
    for i in range(cores.shape[0]):
        now_free = min(free[0], share[0]) if capped else free[0]
        if now_free < stop_below[i]:
            return i, n
        need, duration = cores[i], durations[i]
        j = 0
        if room_from[need] > times[0]:  # the step that starts then (steps are never removed)
            j = np.searchsorted(times[:n], room_from[need])
        start = times[j]
        found = math.inf
        seen_room = False
        while j < n:  # earliest: a step without room moves the start to the next step
            if free[j] < need or (capped and share[j] < need):
                j += 1
                if j < n:
                    start = times[j]
                continue
            if not seen_room:
                seen_room = True
                room_from[need] = times[j]
            j += 1
            if j == n or times[j] >= start + duration:
                found = start
                break
        starts[i] = found
        end = found + duration
        if not end > found:
            continue
        first, n = _split(times, free, share, n, found)
        if math.isfinite(end):
            last, n = _split(times, free, share, n, end)
        else:
            last = n
        for k in range(first, last):
            free[k] -= need
            if capped:
                share[k] -= need
    return cores.shape[0], n
