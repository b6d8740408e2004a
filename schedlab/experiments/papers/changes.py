"""A candidate scheduler's change against a baseline, per workload instance: the pairs of values,
their relative change, its sign and how it is said. Shared by the `[compare]` tables (compare.py)
and the paper rows (paper_rows.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

PERCENT_METRICS = ("share_wait_lt_1min", "share_wait_lt_10min", "share_wait_lt_1h", "share_wait_lt_6h")


def _sign(value: float) -> int:
    return 0 if value == 0 or math.isnan(value) else (1 if value > 0 else -1)


def _scale(metric: str, value: float) -> float:
    return 100.0 * value if metric in PERCENT_METRICS else value


KEYS = ["workload", "platform", "instance", "window"]


def _pairs(frame: pd.DataFrame, spec: dict[str, Any], metric: str,
           labels: tuple[str, str] | None = None) -> pd.DataFrame:
    """Per (workload, platform, instance): the baseline's and the candidate's value of unperturbed
    runs (NaN when one is missing), and whether their jittered ranges do not overlap (NaN without a
    perturbation arm). A workload without windows has one instance, window NaN."""
    baseline, candidate = labels or (spec["baseline"], spec["candidate"])
    runs = frame[frame["complete"] & frame["scheduler"].isin([baseline, candidate])]
    plain = (runs[runs["repetition"].isna()].groupby([*KEYS, "scheduler"], dropna=False)[metric].median()
             .unstack("scheduler").reindex(columns=[baseline, candidate]))
    plain.columns = ["baseline", "candidate"]
    jittered = runs[runs["repetition"].notna()]
    if not jittered.empty:
        spread = (jittered.groupby([*KEYS, "scheduler"], dropna=False)[metric].agg(["min", "max"])
                  .unstack("scheduler"))
        if {baseline, candidate} <= set(spread.columns.get_level_values(1)):
            low_b, high_b = spread[("min", baseline)], spread[("max", baseline)]
            low_c, high_c = spread[("min", candidate)], spread[("max", candidate)]
            apart = ((low_c > high_b) | (high_c < low_b)).where(low_b.notna() & low_c.notna())
            plain = plain.join(apart.rename("beyond_noise"))
    if "beyond_noise" not in plain:
        plain["beyond_noise"] = np.nan
    return plain.reset_index()


def _groups(frame: pd.DataFrame, spec: dict[str, Any], metric: str, platforms: list[str],
            labels: tuple[str, str] | None = None, workload: str | None = None):
    """(workload, platform, its complete pairs, the last window's pair) for each workload (or the
    one named) on each of `platforms` that has at least one complete pair."""
    pairs = _pairs(frame, spec, metric, labels)
    for (name, platform), group in pairs.groupby(["workload", "platform"], sort=True):
        if platform not in platforms or (workload is not None and name != workload):
            continue
        complete = group.dropna(subset=["baseline", "candidate"])
        if not complete.empty:
            yield name, platform, complete, complete.loc[complete["window"].fillna(-1).idxmax()]


def _over(change: pd.Series) -> str:
    """' (of k)' when the median leaves out windows whose baseline is 0 and candidate is not."""
    known = int(change.notna().sum())
    return "" if known == len(change) else f" (of {known})"


def _change_pct(pairs: pd.DataFrame) -> pd.Series:
    """(candidate - baseline) / baseline in %; 0 when both are 0, NaN when only the baseline is."""
    difference = pairs["candidate"] - pairs["baseline"]
    change = 100.0 * difference / pairs["baseline"].where(pairs["baseline"] != 0)
    return change.where(~((pairs["baseline"] == 0) & (difference == 0)), 0.0)


def _pct_text(value: float, digits: int = 1) -> str:
    return "n/a (baseline 0)" if math.isnan(value) else f"{value:+.{digits}f}%"


def _yes(ours: int, paper: int) -> str:
    return "yes" if ours == paper else ("tie" if ours == 0 else "no")
