"""A campaign's `[compare]` section: a candidate scheduler against a baseline, beside a paper's
published figures (`paper | ours | same sign?`).

    [compare]
    baseline = "easy"                    # scheduler labels of the campaign
    candidate = "diws"
    paper = "paper.toml"                 # the published figures, relative to the campaign file
    setups = { A = ["ricc8192", "marconi100"], B = ["setupB512"] }   # the paper's set-ups -> platforms

The paper file lists rows: `[[scheduling]]` with `row`, `setup`, `metric` (a results column) and
either `change_pct` (the candidate's change relative to the baseline, in %) or `baseline` and
`candidate` values (shares in %, counts as they are), and an optional `note`. Ours is computed per
window instance as (candidate - baseline) / baseline, from unperturbed runs; the table gives the
last window (the study's "last 24 h") and the median over windows, and how many windows have the
paper's sign. With a perturbation arm, it also counts the windows where the two schedulers'
jittered ranges do not overlap (a difference beyond the noise of small event shifts).
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.errors import InputError

COMPARE_KEYS = {"baseline", "candidate", "paper", "setups"}
ROW_KEYS = {"row", "setup", "metric", "change_pct", "baseline", "candidate", "note"}
PERCENT_METRICS = ("share_wait_lt_1min", "share_wait_lt_10min", "share_wait_lt_1h", "share_wait_lt_6h")
#: the study's Tab. 6/7 rows (and bounded slowdown, which it did not report)
TABLE_METRICS = {"makespan_s": "makespan (s)", "scheduling_time_s": "scheduling time (s)",
                 "mean_waiting_time_s": "mean waiting time (s)", "mean_turnaround_time_s": "mean turnaround (s)",
                 "mean_slowdown": "mean slowdown", "max_waiting_time_s": "max waiting time (s)",
                 "max_turnaround_time_s": "max turnaround (s)", "max_slowdown": "max slowdown",
                 "mean_bounded_slowdown": "mean bounded slowdown (tau 10 s)",
                 "share_wait_lt_10min": "jobs waiting < 10 min (%)", "nb_wait_gt_1day": "jobs waiting > 1 day"}


def load_compare(raw: Any, at: Any, base: Path, labels: list[str], platforms: list[str]) -> dict[str, Any]:
    """Validate the section (errors name the file, line and key) and read the paper's rows."""

    if not isinstance(raw, dict):
        raise at.error("expected a table", key="compare")
    unknown = sorted(set(raw) - COMPARE_KEYS)
    if unknown:
        raise at.error(f"unknown key (known: {', '.join(sorted(COMPARE_KEYS))})", "compare", 0, unknown[0])
    for key in ("baseline", "candidate"):
        if raw.get(key) not in labels:
            raise at.error(f"expected a scheduler label of this campaign ({', '.join(labels)})", "compare", 0, key)
    setups = raw.get("setups", {})
    if not isinstance(setups, dict) or not setups or not all(
            isinstance(v, list) and v and all(p in platforms for p in v) for v in setups.values()):
        raise at.error(f"expected {{ SETUP = [platform names of this campaign ({', '.join(platforms)})] }}",
                       "compare", 0, "setups")
    if not isinstance(raw.get("paper"), str):
        raise at.error("expected the path of a paper figures file (TOML)", "compare", 0, "paper")
    paper_path = (base / raw["paper"]).resolve()
    if not paper_path.is_file():
        raise at.error(f"no such file: {paper_path}", "compare", 0, "paper")
    rows = load_paper_rows(paper_path, setups)
    return {"baseline": raw["baseline"], "candidate": raw["candidate"], "setups": setups,
            "paper_file": str(paper_path), "rows": rows}


def load_paper_rows(path: Path, setups: dict[str, Any]) -> list[dict[str, Any]]:
    """The `[[scheduling]]` rows of a paper figures file, each checked (file, line and key named)."""
    from schedlab.experiments.campaign import _Locator
    from schedlab.metrics import compute_metrics

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        paper = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", path=str(path)) from None
    at = _Locator(path, text)
    rows = paper.get("scheduling", [])
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise at.error("expected [[scheduling]] tables", key="scheduling")
    known_metrics = set(compute_metrics([], 1, 0.0)) | {"scheduling_time_s"}
    for index, row in enumerate(rows):
        unknown = sorted(set(row) - ROW_KEYS)
        if unknown:
            raise at.error(f"unknown key (known: {', '.join(sorted(ROW_KEYS))})", "scheduling", index, unknown[0])
        for key in ("row", "setup", "metric"):
            if not isinstance(row.get(key), str):
                raise at.error("expected a string", "scheduling", index, key)
        if row["setup"] not in setups:
            raise at.error(f"not a set-up of [compare] setups ({', '.join(setups)})", "scheduling", index, "setup")
        if row["metric"] not in known_metrics:
            raise at.error("unknown metric", "scheduling", index, "metric")
        if ("change_pct" in row) == ("baseline" in row or "candidate" in row):
            raise at.error("give change_pct, or baseline and candidate", "scheduling", index, "row")
        for key in ("baseline", "candidate") if "change_pct" not in row else ("change_pct",):
            if not isinstance(row.get(key), int | float) or isinstance(row.get(key), bool):
                raise at.error("expected a number", "scheduling", index, key)
        if not isinstance(row.get("note", ""), str):
            raise at.error("expected a string", "scheduling", index, "note")
    return rows


def _sign(value: float) -> int:
    return 0 if value == 0 or math.isnan(value) else (1 if value > 0 else -1)


def _scale(metric: str, value: float) -> float:
    return 100.0 * value if metric in PERCENT_METRICS else value


KEYS = ["workload", "platform", "instance", "window"]


def _pairs(frame: pd.DataFrame, spec: dict[str, Any], metric: str) -> pd.DataFrame:
    """Per (workload, platform, instance): the baseline's and the candidate's value of unperturbed
    runs (NaN when one is missing), and whether their jittered ranges do not overlap (NaN without a
    perturbation arm). A workload without windows has one instance, window NaN."""
    runs = frame[frame["complete"] & frame["scheduler"].isin([spec["baseline"], spec["candidate"]])]
    plain = (runs[runs["repetition"].isna()].groupby([*KEYS, "scheduler"], dropna=False)[metric].median()
             .unstack("scheduler").reindex(columns=[spec["baseline"], spec["candidate"]]))
    plain.columns = ["baseline", "candidate"]
    jittered = runs[runs["repetition"].notna()]
    if not jittered.empty:
        spread = (jittered.groupby([*KEYS, "scheduler"], dropna=False)[metric].agg(["min", "max"])
                  .unstack("scheduler"))
        if {spec["baseline"], spec["candidate"]} <= set(spread.columns.get_level_values(1)):
            low_b, high_b = spread[("min", spec["baseline"])], spread[("max", spec["baseline"])]
            low_c, high_c = spread[("min", spec["candidate"])], spread[("max", spec["candidate"])]
            apart = ((low_c > high_b) | (high_c < low_b)).where(low_b.notna() & low_c.notna())
            plain = plain.join(apart.rename("beyond_noise"))
    if "beyond_noise" not in plain:
        plain["beyond_noise"] = np.nan
    return plain.reset_index()


def _groups(frame: pd.DataFrame, spec: dict[str, Any], metric: str, platforms: list[str]):
    """(workload, platform, its complete pairs, the last window's pair) for each workload on each
    of `platforms` that has at least one complete pair."""
    pairs = _pairs(frame, spec, metric)
    for (workload, platform), group in pairs.groupby(["workload", "platform"], sort=True):
        if platform not in platforms:
            continue
        complete = group.dropna(subset=["baseline", "candidate"])
        if not complete.empty:
            yield workload, platform, complete, complete.loc[complete["window"].fillna(-1).idxmax()]


def paper_table(frame: pd.DataFrame, spec: dict[str, Any]) -> pd.DataFrame:
    """One line per paper row, workload and platform of its set-up."""
    lines = []
    for row in spec["rows"]:
        metric = row["metric"]
        if metric not in frame:
            continue
        for workload, platform, pairs, last in _groups(frame, spec, metric, spec["setups"][row["setup"]]):
            difference = pairs["candidate"] - pairs["baseline"]
            signs = difference.map(_sign)
            if "change_pct" in row:
                paper_text, paper_sign = f"{row['change_pct']:+.2f}%", _sign(row["change_pct"])
                change = _change_pct(pairs)
                median = float(change.median())
                ours_last = _pct_text(float(change.loc[last.name]))
                ours_median = _pct_text(median) + _over(change)
                median_sign = _sign(median) if change.notna().any() else _sign(float(difference.median()))
            else:
                paper_text = f"{row['baseline']:g} → {row['candidate']:g}"
                paper_sign = _sign(row["candidate"] - row["baseline"])
                ours_last = f"{_scale(metric, last['baseline']):.4g} → {_scale(metric, last['candidate']):.4g}"
                medians = pairs["baseline"].median(), pairs["candidate"].median()
                ours_median = f"{_scale(metric, medians[0]):.4g} → {_scale(metric, medians[1]):.4g}"
                median_sign = _sign(float(medians[1] - medians[0]))  # the sign of what is shown
            noise = pairs["beyond_noise"].dropna()
            lines.append({
                "row": f"{row['setup']}: {row['row']}", "workload": workload, "platform": platform,
                "paper": paper_text, "ours, last window": ours_last, "ours, median": ours_median,
                "same sign? last / median": f"{_yes(signs.loc[last.name], paper_sign)} / "
                                            f"{_yes(median_sign, paper_sign)}",
                "windows with the paper's sign": f"{int((signs == paper_sign).sum())} of {len(pairs)}",
                "beyond jitter noise": (f"{int(noise.astype(bool).sum())} of {len(noise)}" if len(noise) else "-"),
                "note": row.get("note", ""),
            })
    return pd.DataFrame(lines)


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


def study_layout(frame: pd.DataFrame, spec: dict[str, Any], workload: str, platform: str) -> pd.DataFrame:
    """The study's Tab. 6/7 layout for one workload on one platform: candidate, baseline and change
    (relative to the baseline) in the last window, and the median change over windows."""
    lines = []
    for metric, heading in TABLE_METRICS.items():
        if metric not in frame:
            continue
        for name, _, pairs, last in _groups(frame, spec, metric, [platform]):
            if name != workload:
                continue
            change = _change_pct(pairs)
            lines.append({"metric": heading, spec["candidate"]: _scale(metric, float(last["candidate"])),
                          spec["baseline"]: _scale(metric, float(last["baseline"])),
                          "change": _pct_text(float(change.loc[last.name]), 2),
                          f"median change over {len(pairs)} windows": _pct_text(float(change.median()), 2)
                          + _over(change)})
    return pd.DataFrame(lines)


def window_changes(frame: pd.DataFrame, spec: dict[str, Any]) -> pd.DataFrame:
    """Per workload, platform and window: the candidate's change in the headline metrics ('missing'
    when either run is missing or failed)."""
    columns = {"mean_waiting_time_s": "mean wait", "mean_slowdown": "mean slowdown",
               "mean_bounded_slowdown": "mean bsld", "makespan_s": "makespan"}
    merged = None
    for metric, heading in columns.items():
        if metric not in frame:
            continue
        pairs = _pairs(frame, spec, metric)
        missing = pairs["baseline"].isna() | pairs["candidate"].isna()
        pairs[heading] = ["missing" if gone else _pct_text(value)
                          for gone, value in zip(missing, _change_pct(pairs), strict=True)]
        part = pairs[[*KEYS, heading]]
        merged = part if merged is None else merged.merge(part, on=KEYS, how="outer")
    if merged is None:
        return pd.DataFrame()
    jobs = frame[frame["repetition"].isna() & (frame["scheduler"] == spec["baseline"])]
    counts = jobs.groupby(KEYS, dropna=False)["nb_jobs"].first().rename("jobs")
    return (merged.join(counts, on=KEYS).sort_values(["workload", "platform", "window"])
            .drop(columns=["instance"]))


def sections(frame: pd.DataFrame, spec: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The report sections of a comparison: (title, text, table)."""
    name = f"{spec['candidate']} vs {spec['baseline']}"
    out = [(f"Paper vs ours: {name}",
            f"Figures from {Path(spec['paper_file']).name}; ours = ({spec['candidate']} - {spec['baseline']}) / "
            f"{spec['baseline']} per window, unperturbed runs; the median is over the windows. 'tie' = no change. "
            "'beyond jitter noise' counts the windows where the jittered ranges of the two do not overlap.",
            paper_table(frame, spec))]
    platforms = sorted({p for names in spec["setups"].values() for p in names})
    for workload in sorted(frame["workload"].unique()):
        for platform in platforms:
            table = study_layout(frame, spec, workload, platform)
            if not table.empty:
                out.append((f"Study layout (Tab. 6/7): {workload} on {platform}",
                            "Values of the last window; change relative to the baseline (as Tab. 6; Tab. 7 "
                            "divided by the candidate's value).", table))
    changes = window_changes(frame, spec)
    if not changes.empty:
        out.append((f"Changes per window: {name}", "Relative to the baseline, unperturbed runs.", changes))
    return out
