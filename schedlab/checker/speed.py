"""How a scheduler's time grows with the workload, next to EASY's on the same workloads: the
scheduling time per job at each size and the fitted exponent of time against jobs."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schedlab.checker.runs import DEFAULT_BUDGETS, Budgets, run_once
from schedlab.checker.workloads import trace_like_workload


@dataclass
class Speed:
    sizes: list[int] = field(default_factory=list)
    yours_s: list[float] = field(default_factory=list)  # scheduling time per size
    easy_s: list[float] = field(default_factory=list)
    failure: str | None = None  # a run that failed: a rules finding
    stopped: str | None = None  # sizes left out: the budget was spent

    @staticmethod
    def exponent(sizes: Sequence[int], times: Sequence[float]) -> float:
        """The slope of log(time) against log(jobs), least squares."""
        if len(sizes) < 2 or min(times) <= 0:
            return math.nan
        return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])

    def ratio(self) -> float:
        """Your time per job over EASY's, at the largest size measured."""
        if not self.sizes or self.easy_s[-1] <= 0:
            return math.nan
        return self.yours_s[-1] / self.easy_s[-1]

    def line(self) -> str:
        if not self.sizes:
            return f"speed: not measured ({self.stopped})"
        n = self.sizes[-1]
        text = (f"speed: {1e6 * self.yours_s[-1] / n:.1f} us of scheduling per job on {n:,} jobs, "
                f"{self.ratio():.1f}x EASY's {1e6 * self.easy_s[-1] / n:.1f} us; time grows as jobs^"
                f"{self.exponent(self.sizes, self.yours_s):.2f} over {', '.join(f'{s:,}' for s in self.sizes)} jobs "
                f"(EASY's ^{self.exponent(self.sizes, self.easy_s):.2f})")
        return text + (f"; {self.stopped}" if self.stopped else "")


def measure(factory: Callable[[], Any], nb_res: int, sizes: Sequence[int] = (1000, 2000, 4000), *,
            budgets: Budgets = DEFAULT_BUDGETS, size_budget_s: float = 20.0) -> Speed:
    """Scheduling time (the engine's own measure: hooks and decide) of yours and EASY on trace-like
    workloads of `sizes` jobs, the best of two runs each, alternating; larger sizes are left out
    once one takes more than `size_budget_s`."""
    from schedlab.schedulers.base import create_scheduler

    speed = Speed()
    for size in sizes:
        workload = trace_like_workload(nb_res, nb_jobs=size, seed=2, name="speed")
        best = {"easy": math.inf, "yours": math.inf}
        for _ in range(2):
            for label, make in (("easy", lambda: create_scheduler("easy")), ("yours", factory)):
                engines: list[Any] = []
                with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):  # the report owns stdout
                    result = run_once(make, f"speed-{size}", workload, nb_res, budgets, check_inputs=False,
                                      keep_engine=engines)
                if result.failure is not None:
                    if label == "yours":
                        speed.failure = f"on {size:,} trace-like jobs: {result.failure}"
                        return speed
                    continue
                best[label] = min(best[label], engines[0].scheduling_time_s)
            if best["yours"] > size_budget_s / 4:  # slow enough to measure once
                break
        speed.sizes.append(size)
        speed.yours_s.append(best["yours"])
        speed.easy_s.append(best["easy"])
        if best["yours"] > size_budget_s:
            left = [s for s in sizes if s > size]
            if left:
                speed.stopped = (f"{', '.join(f'{s:,}' for s in left)} jobs left out ({size:,} took "
                                 f"{best['yours']:.1f} s)")
            break
    return speed
