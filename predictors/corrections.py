"""Corrections of a running job's planning limit (the COARE walltime study §4.4, EASY++'s ladder).

A running job has a current limit L (seconds from its start: the duration the plan gives it). A
correction fires when its elapsed time reaches L - 60 s and gives the next limit:

- `simple`: L + 1 h per firing (the study's proposal);
- `power`: the k-th firing adds 15 * 2^(k-1) min (15, 30, 60, 120 ... min; the paper writes
  15 * 2^(i-2), i = 2..n), added to the current limit (the reading that fits its Fig. 5);
- `tsafrir`: EASY++'s ladder as predictsim implements it: after the k-th firing the limit is the
  *original* prediction + the k-th step of 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h,
  50 h, 100 h (past the ladder: the walltime); the same limits as predictsim's, each reached 60 s
  earlier (predictsim corrects at the limit itself);
- `walltime`: straight to the job's walltime;
- `none`: never fires (the limit stays; an overdue job falls back to its walltime end).

Every limit is capped by the study's hard limit of 7 days and by the walltime, which stays Batsim's
kill time (a limit past it would only mislead the plan). A firing that leaves L - 60 s <= elapsed
(tiny predictions) is applied again until it does not, so a planned end is never in the past.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedlab.model import TIME_TOLERANCE_S

CORRECTIONS = ("none", "simple", "power", "tsafrir", "walltime")
LEAD_S = 60.0  # a correction fires this long before the current limit
#: "elapsed reaches limit - 60 s" is compared within the time tolerance: elapsed times are
#: differences of absolute times (now - start).
TOLERANCE_S = TIME_TOLERANCE_S
HARD_LIMIT_S = 7 * 86400.0  # the COARE study's cap
TSAFRIR_LADDER_S = tuple(60.0 * m for m in (1, 5, 15, 30, 60, 120, 300, 600, 1200, 3000, 6000))


@dataclass
class Limit:
    """A running job's planning limit and how many times it was corrected."""

    original_s: float
    current_s: float
    firings: int = 0


def cap_s(walltime_s: float | None) -> float:
    """The largest limit: the walltime (the kill time) and the 7-day hard limit."""
    return min(HARD_LIMIT_S, math.inf if walltime_s is None else walltime_s)


def _next_limit_s(kind: str, limit: Limit, walltime_s: float | None) -> float:
    k = limit.firings + 1
    if kind == "simple":
        return limit.current_s + 3600.0
    if kind == "power":
        return limit.current_s + 15.0 * 60.0 * 2.0 ** (k - 1)
    if kind == "tsafrir":
        if k <= len(TSAFRIR_LADDER_S):
            return max(limit.current_s, limit.original_s + TSAFRIR_LADDER_S[k - 1])
        return math.inf  # past the ladder: the walltime (capped below)
    if kind == "walltime":
        return math.inf
    raise ValueError(f"unknown correction {kind!r} (known: {', '.join(CORRECTIONS)})")


def settle(kind: str, limit: Limit, elapsed_s: float, walltime_s: float | None) -> Limit:
    """Apply firings while elapsed >= limit - 60 s and the cap is not reached; returns the limit
    (the same object, updated). `none` changes nothing."""
    if kind == "none":
        return limit
    top = cap_s(walltime_s)
    while limit.current_s < top and elapsed_s >= limit.current_s - LEAD_S - TOLERANCE_S:
        limit.current_s = min(top, _next_limit_s(kind, limit, walltime_s))
        limit.firings += 1
    return limit
