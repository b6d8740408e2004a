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

from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.experiments.papers.changes import (  # noqa: F401 (KEYS, PERCENT_METRICS: this module's names too)
    KEYS,
    PERCENT_METRICS,
    _change_pct,
    _groups,
    _over,
    _pairs,
    _pct_text,
    _scale,
    _sign,
    _yes,
)

COMPARE_KEYS = {"baseline", "candidate", "paper", "setups", "scenarios", "arms"}
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
    from schedlab.experiments.papers.paper_rows import load_paper_rows

    rows = load_paper_rows(paper_path, setups, labels)
    scenarios, arms = raw.get("scenarios", []), raw.get("arms", {"": ""})
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        raise at.error("expected a list of scenario names", "compare", 0, "scenarios")
    if not isinstance(arms, dict) or not all(isinstance(v, str) for v in arms.values()):
        raise at.error('expected { ARM = "label suffix" }', "compare", 0, "arms")
    missing = next((f"{s}{suffix}" for s in scenarios for suffix in arms.values() if f"{s}{suffix}" not in labels),
                   None)
    if missing is not None:
        raise at.error(f"no scheduler labelled {missing!r} (a scenario + an arm's suffix)", "compare", 0, "scenarios")
    return {"baseline": raw["baseline"], "candidate": raw["candidate"], "setups": setups,
            "paper_file": str(paper_path), "rows": rows, "scenarios": scenarios, "arms": arms}


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
               "mean_bounded_slowdown": "mean bsld", "max_waiting_time_s": "max wait", "makespan_s": "makespan"}
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


def scenario_table(frame: pd.DataFrame, spec: dict[str, Any], workload: str, platform: str) -> pd.DataFrame:
    """A paper's scenario layout (the COARE study's Tab. 4/5): one row per scenario, mean wait (in
    minutes) and mean bounded slowdown per arm (a scheduler label is scenario + the arm's suffix),
    medians over instances of unperturbed runs."""
    runs = frame[frame["complete"] & frame["repetition"].isna() & (frame["workload"] == workload)
                 & (frame["platform"] == platform)]
    lines = []
    for scenario in spec.get("scenarios", []):
        line: dict[str, Any] = {"scenario": scenario}
        for arm, suffix in spec["arms"].items():
            mine = runs[runs["scheduler"] == f"{scenario}{suffix}"]
            tag = f" ({arm})" if arm else ""
            wait = mine["mean_waiting_time_s"].median() if "mean_waiting_time_s" in mine else float("nan")
            line[f"mean wait (min){tag}"] = wait / 60.0
            line[f"avgBSLD{tag}"] = mine["mean_bounded_slowdown"].median() if "mean_bounded_slowdown" in mine \
                else float("nan")
        lines.append(line)
    return pd.DataFrame(lines)


def sections(frame: pd.DataFrame, spec: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The report sections of a comparison: (title, text, table)."""
    name = f"{spec['candidate']} vs {spec['baseline']}"
    from schedlab.experiments.papers.paper_rows import paper_table

    out = [(f"Paper vs ours: {name}",
            f"Figures from {Path(spec['paper_file']).name}; ours = ({spec['candidate']} - {spec['baseline']}) / "
            f"{spec['baseline']} per window, unperturbed runs; the median is over the windows. 'tie' = no change. "
            "'beyond jitter noise' counts the windows where the jittered ranges of the two do not overlap.",
            paper_table(frame, spec))]
    platforms = sorted({p for names in spec["setups"].values() for p in names})
    for workload in sorted(frame["workload"].unique()):
        for platform in platforms if spec.get("scenarios") else []:
            table = scenario_table(frame, spec, workload, platform)
            if not table.dropna(axis=1, how="all").shape[1] <= 1:
                arms = ", ".join(f"{arm or 'plain'} = label + '{suffix}'" for arm, suffix in spec["arms"].items())
                out.append((f"Scenarios: {workload} on {platform}", f"Median over instances; arms: {arms}; mean "
                            "bounded slowdown with tau = 10 s.", table))
        for platform in platforms:
            table = study_layout(frame, spec, workload, platform)
            if not table.empty:
                out.append((f"{spec['candidate']} vs {spec['baseline']}: {workload} on {platform}",
                            "Values of the last window; change relative to the baseline (the layout of the DIWS "
                            "study's Tab. 6, whose Tab. 7 divided by the candidate's value).", table))
    changes = window_changes(frame, spec)
    if not changes.empty:
        out.append((f"Changes per window: {name}", "Relative to the baseline, unperturbed runs.", changes))
    return out
