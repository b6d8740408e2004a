"""What a site knows about finished jobs at an instant: a history appended to **only at job
completion** and read at submission, so no feature can look ahead.

`CompletionHistory.record(...)` is to be called when a job ends (from a scheduler's `job_finished`
hook, or by `replay` over a trace's recorded completions); `features(jobs, now)` gives, per job, the
user's
run-time and core statistics over the completions recorded so far: the history features of the
hybrid study's Tab. 1 (last, beflast, beflast2, lastcpu, maxrt, maxcpu, meanrt, stdrt, meancpu,
stdcpu, prevuser, time since the user's last completion) and the time of day / day of week as
cos/sin pairs (tod1, tod2, dow1, dow2, as Gaussier et al.'s code does). A user without completed
jobs gets the job's requested time for every run-time feature and its requested cores for every
core feature (the study's fallback), 0 for the spreads and prevuser, and NaN for the time since the
last completion. It is the feature builder the hybrid scheduler's online models need; DIWS's and
EASY++'s `user-last2` keep their own per-user history (UserLast2Baseline.partial_fit).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

HISTORY_COLUMNS = ("last", "beflast", "beflast2", "lastcpu", "maxrt", "maxcpu", "meanrt", "stdrt", "meancpu",
                   "stdcpu", "prevuser", "since_last_s", "tod1", "tod2", "dow1", "dow2")


@dataclass
class _UserStats:
    runtimes_s: list[float] = field(default_factory=list)  # the last three, oldest first
    last_cores: float = 0.0
    count: int = 0
    max_runtime_s: float = 0.0
    max_cores: float = 0.0
    # Welford's running mean and sum of squared deviations
    mean_runtime_s: float = 0.0
    m2_runtime: float = 0.0
    mean_cores: float = 0.0
    m2_cores: float = 0.0
    last_end_s: float = -math.inf


class CompletionHistory:
    """Per-user statistics of completed jobs, recorded in completion order."""

    def __init__(self) -> None:
        self._users: dict[str, _UserStats] = {}
        self.now_s = -math.inf  # time of the latest completion recorded
        self.nb_completed = 0

    def record(self, *, user: Any, runtime_s: float, cores: float, end_s: float) -> None:
        """A job of `user` ended at `end_s` after `runtime_s` on `cores`. Completions come in time
        order: an earlier one recorded after a later one would mean the caller looked ahead."""
        if end_s < self.now_s:
            raise ValueError(f"completion at {end_s} recorded after one at {self.now_s}: histories grow in time order")
        self.now_s = end_s
        self.nb_completed += 1
        stats = self._users.setdefault(str(user), _UserStats())
        stats.runtimes_s = [*stats.runtimes_s[-2:], float(runtime_s)]
        stats.last_cores = float(cores)
        stats.count += 1
        stats.max_runtime_s = max(stats.max_runtime_s, runtime_s)
        stats.max_cores = max(stats.max_cores, cores)
        delta = runtime_s - stats.mean_runtime_s
        stats.mean_runtime_s += delta / stats.count
        stats.m2_runtime += delta * (runtime_s - stats.mean_runtime_s)
        delta = cores - stats.mean_cores
        stats.mean_cores += delta / stats.count
        stats.m2_cores += delta * (cores - stats.mean_cores)
        stats.last_end_s = end_s

    def user_runtimes_s(self, user: Any) -> list[float]:
        """The user's last (up to three) completed run times, oldest first."""
        stats = self._users.get(str(user))
        return list(stats.runtimes_s) if stats else []

    def features(self, jobs: Iterable[tuple[Any, float, float, float]], now_s: float) -> pd.DataFrame:
        """One row per (user, submit_s, requested_time_s, cores): HISTORY_COLUMNS as floats. Asking
        about an instant before the latest completion recorded would read the future: refused."""
        if now_s < self.now_s:
            raise ValueError(f"features at {now_s} asked of a history that holds a completion at {self.now_s}")
        rows = [self._row(user, submit, requested, cores, now_s) for user, submit, requested, cores in jobs]
        return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS), dtype=float)

    def row(self, user: Any, submit_s: float, requested_s: float, cores: float, now_s: float) -> list[float]:
        """One job's HISTORY_COLUMNS as a list (what a scheduler asks per submission, without pandas)."""
        if now_s < self.now_s:
            raise ValueError(f"features at {now_s} asked of a history that holds a completion at {self.now_s}")
        return self._row(user, submit_s, requested_s, cores, now_s)

    def _row(self, user: Any, submit_s: float, requested_s: float, cores: float, now_s: float) -> list[float]:
        day = 86400.0
        tod, dow = 2 * math.pi * (submit_s % day) / day, 2 * math.pi * (submit_s % (7 * day)) / (7 * day)
        clock = [math.cos(tod), math.sin(tod), math.cos(dow), math.sin(dow)]
        stats = self._users.get(str(user))
        if stats is None:
            return [requested_s] * 3 + [cores, requested_s, cores, requested_s, 0.0, cores, 0.0, 0.0, math.nan, *clock]
        runtimes = [requested_s] * (3 - len(stats.runtimes_s)) + stats.runtimes_s
        std_rt = math.sqrt(stats.m2_runtime / stats.count)
        std_cpu = math.sqrt(stats.m2_cores / stats.count)
        return [runtimes[2], runtimes[1], runtimes[0], stats.last_cores, stats.max_runtime_s, stats.max_cores,
                stats.mean_runtime_s, std_rt, stats.mean_cores, std_cpu, float(stats.count),
                now_s - stats.last_end_s, *clock]


def replay(completions: pd.DataFrame, until_s: float) -> CompletionHistory:
    """The history a site had at `until_s`: the completions (columns user, runtime_s, cores, end_s)
    that ended strictly before it, recorded in end order (ties by row order)."""
    history = CompletionHistory()
    done = completions[completions["end_s"] < until_s]
    order = np.argsort(done["end_s"].to_numpy(dtype=float), kind="stable")
    for row in done.iloc[order].itertuples(index=False):
        history.record(user=row.user, runtime_s=float(row.runtime_s), cores=float(row.cores), end_s=float(row.end_s))
    return history
