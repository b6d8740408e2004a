"""Causes of a difference between a paper's figure and ours, as measurements rather than sentences.

A row of the table of record that does not agree with its paper (another sign, or a size beyond
the study's factor) names its cause, and the cause says what measures it:

    cause = "unknown"                      # not known (the default): said as it is, with the note
    cause = { kind = "unknown", ruled_out = [{ study = "x-skip16" }], note = "..." }  # and what was
                                           # measured in vain (each ablation leaves at least half the gap)
    [scheduling.cause]                     # (or `cause = { ... }` inline)
    kind = "data"                          # data | method | defect fixed
    note = "free text beside the measured value"
    # exactly one of:
    cited = "the paper's Table 7"          # a fact with its source (a table, the text, data availability)
    statistic = "median"                   # a number computed from the studies' committed evidence
    ablation = { schedulers = ["fcfs-bf1-exact", "hybrid-exact"], study = "hybrid-clairvoyance" }
    ablation = { candidate = "hybrid-soft" }   # only the row's candidate replaced

A statistic (`median`, `max`, `min` of `metric` over the complete unperturbed runs of
`schedulers` (each; with `by = OPTION`, each value of that option), optionally of `workload`,
`platform`, `study`, `options` (the row's workload and platform by default); `share-below`: the
share of those runs with the metric below `threshold`; `ratio`: the median of the first
scheduler's over the second's) supports its cause when it is `below` or `above` the bound given.
An ablation recomputes the row on another arm (other schedulers, policies, workload, metric or
study) and supports its cause when that moves ours towards the paper's figure. `schedlab
reproductions` prints the measured value in the row, and fails, naming the paper file and line,
on a cause whose measurement is absent or does not support it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from schedlab.errors import InputError

KINDS = ("data", "method", "defect fixed")
#: an ablation is ruled out as a cause when the gap it leaves is at least this share of ours
RULED_OUT_SHARE = 0.5
STATISTICS = ("median", "max", "min", "share-below", "ratio")
CAUSE_KEYS = {"kind", "note", "cited", "statistic", "ablation", "metric", "schedulers", "workload", "platform",
              "study", "options", "by", "below", "above", "threshold", "evidence", "ruled_out"}
ABLATION_KEYS = {"schedulers", "candidate", "policies", "workload", "platform", "metric", "study", "options"}


class CauseError(InputError):
    """A cause the evidence does not support (or cannot measure): the paper file is wrong."""


def load_cause(raw: Any, at: Any, section: str | None, index: int, key: str = "cause") -> dict[str, Any]:
    """A checked cause: {"kind": "unknown", "note"} or a measured/cited cause with where it was
    written (`at`: path and line, for the generator's errors)."""
    where = {"path": str(at.path), "line": at.line(section, index, key)}
    if raw is None or raw == "unknown":
        return {"kind": "unknown", "note": "", **where}
    if isinstance(raw, str):
        if raw.startswith("unknown"):
            return {"kind": "unknown", "note": raw[len("unknown"):].lstrip(" :(").rstrip(")"), **where}
        raise at.error("a cause is measured or cited, not typed: give { kind, note, and one of cited, statistic, "
                       "ablation } (schedlab.experiments.papers.causes), or \"unknown\"", section, index, key)
    if not isinstance(raw, dict):
        raise at.error("expected a table { kind, note, cited | statistic | ablation } or \"unknown\"", section,
                       index, key)

    def fail(message: str, field: str) -> InputError:
        return at.error(message, section, index, f"{key}.{field}")

    unknown = sorted(set(raw) - CAUSE_KEYS)
    if unknown:
        raise fail(f"unknown key (known: {', '.join(sorted(CAUSE_KEYS))})", unknown[0])
    ruled_out = raw.get("ruled_out", [])
    if not isinstance(ruled_out, list) or not all(isinstance(a, dict) and a and not set(a) - ABLATION_KEYS
                                                    for a in ruled_out):
        raise fail(f"expected a list of ablation arms ({', '.join(sorted(ABLATION_KEYS))}) tried in vain",
                   "ruled_out")
    if raw.get("kind") == "unknown":  # not known, with what was measured and did not explain it
        if set(raw) - {"kind", "note", "ruled_out", "evidence"}:
            raise fail("an unknown cause has only a note and what was ruled out", "kind")
        return {"note": "", **raw, **where}
    if raw.get("kind") not in KINDS:
        raise fail(f"expected one of {', '.join(KINDS)} (or unknown)", "kind")
    for text in ("note", "cited", "evidence"):
        if text in raw and not isinstance(raw[text], str):
            raise fail("expected a text", text)
    ways = [w for w in ("cited", "statistic", "ablation") if w in raw]
    if len(ways) != 1:
        raise fail("give exactly one of cited (a fact and its source), statistic or ablation (measured)", "kind")
    cause = {**raw, **where}
    if ways[0] == "statistic":
        if raw["statistic"] not in STATISTICS:
            raise fail(f"expected one of {', '.join(STATISTICS)}", "statistic")
        if not isinstance(raw.get("metric"), str):
            raise fail("expected the results column measured", "metric")
        labels = raw.get("schedulers")
        if not isinstance(labels, list) or not labels or not all(isinstance(s, str) for s in labels):
            raise fail("expected a list of scheduler labels", "schedulers")
        if raw["statistic"] == "ratio" and len(labels) != 2:
            raise fail("a ratio takes two schedulers", "schedulers")
        if raw["statistic"] == "share-below" and not _number(raw.get("threshold")):
            raise fail("expected a number (share of runs below it)", "threshold")
        bounds = [b for b in ("below", "above") if b in raw]
        if not bounds or not all(_number(raw[b]) for b in bounds):
            raise fail("expected a number: the bound that supports the cause (below and/or above)", "below")
    elif ways[0] == "ablation":
        arm = raw["ablation"]
        if not isinstance(arm, dict) or not arm or set(arm) - ABLATION_KEYS:
            raise fail(f"expected a table of what changes ({', '.join(sorted(ABLATION_KEYS))})", "ablation")
    for text in ("workload", "platform", "study"):
        if text in raw and not isinstance(raw[text], str):
            raise fail("expected a text", text)
    if "by" in raw and not isinstance(raw["by"], str):
        raise fail("expected an option name (the statistic per value of it)", "by")
    if "options" in raw and not isinstance(raw["options"], dict):
        raise fail("expected a table of option values", "options")
    return cause


def load_size_factor(doc: dict[str, Any], at: Any, default: float) -> float:
    """A study file's `size_factor`: ours within this factor of the paper's figure has its size."""
    factor = doc.get("size_factor", default)
    if not _number(factor) or not factor > 1:
        raise at.error("expected a number > 1 (ours within this factor of the paper's figure has its size)",
                       key="size_factor")
    return float(factor)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def runs_of(frame: pd.DataFrame, scheduler: str | None = None, workload: str | None = None,
            platform: str | None = None, options: dict[str, Any] | None = None) -> pd.DataFrame:
    """The complete, unperturbed runs of a results frame that match."""
    keep = frame["complete"].astype(bool) & frame["repetition"].isna()
    for column, value in (("scheduler", scheduler), ("workload", workload), ("platform", platform)):
        if value is not None:
            keep &= frame[column] == value
    for option, value in (options or {}).items():
        column = f"opt_{option}"
        keep &= frame[column].astype(str) == str(value) if column in frame else False
    return frame[keep]


def _value_text(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.3g}"
    return f"{value:,.4g}"


def measure_statistic(cause: dict[str, Any], frame: pd.DataFrame, context: dict[str, Any]) -> tuple[str, bool]:
    """(the statistic in words, whether it is within the cause's bounds)."""
    metric, name = cause["metric"], cause["statistic"]
    workload = cause.get("workload", context.get("workload"))
    platform = cause.get("platform", context.get("platform"))
    if metric not in frame:
        raise _unmeasurable(cause, f"the evidence has no column {metric!r}")
    values: list[tuple[str, float]] = []
    series: dict[str, pd.Series] = {}
    for label in cause["schedulers"]:
        runs = runs_of(frame, label, workload, platform, cause.get("options"))
        by = f"opt_{cause['by']}" if "by" in cause else None
        if by is None or by not in runs:
            series[label] = runs[metric].dropna()
            continue
        for value, group in runs.groupby(by):
            series[f"{label} {cause['by']}={value}"] = group[metric].dropna()
    empty = [label for label, s in series.items() if s.empty]
    if empty:
        raise _unmeasurable(cause, f"no complete run of {', '.join(empty)} on {workload or 'any workload'}, "
                                   f"{platform or 'any platform'} in {cause.get('study', 'this study')}")
    if name == "ratio":
        a, b = list(series)
        values = [(f"{a} / {b}", float(series[a].median() / series[b].median()))]
    else:
        for label, s in series.items():
            if name == "share-below":
                values.append((label, float((s < cause["threshold"]).mean())))
            else:
                values.append((label, float(getattr(s, name)())))
    bounds = [(b, cause[b]) for b in ("below", "above") if b in cause]
    holds = all((v < bound) if b == "below" else (v > bound) for _, v in values for b, bound in bounds)
    what = (f"share of runs with {metric} < {_value_text(cause['threshold'])}" if name == "share-below"
            else f"{name} {metric}")
    where = ", ".join(filter(None, [workload, platform, cause.get("study")]))
    shown = ", ".join(f"{label} {_value_text(v)}" for label, v in values)
    bound_text = " and ".join(f"{'<' if b == 'below' else '>'} {_value_text(x)}" for b, x in bounds)
    n = max(len(s) for s in series.values())
    return f"{what} ({where}; n = {n}): {shown} ({bound_text}: {'yes' if holds else 'no'})", holds


def _unmeasurable(cause: dict[str, Any], why: str) -> CauseError:
    return CauseError(f"the cause cannot be measured: {why}", path=cause.get("path"), line=cause.get("line"),
                      field="cause")


#: recompute(ablation) -> (text, distance to the paper's figure) of the row on another arm; None
#: when the row's kind has no distance (a value without sign)
Recompute = Callable[[dict[str, Any]], tuple[str, float] | None]


def cause_text(cause: dict[str, Any], *, frames: dict[str, pd.DataFrame], study: str, context: dict[str, Any],
               ours_distance: float | None = None, recompute: Recompute | None = None) -> str:
    """The cause column: its kind, the measured value (or the citation) and the note. Raises
    CauseError when the measurement is absent or does not support the cause."""
    note = cause.get("note", "")
    ruled = [_ruled_out(cause, arm, frames, study, ours_distance, recompute) for arm in cause.get("ruled_out", [])]
    ruled_text = "".join(f"; ruled out by ablation ({text}" for text in ruled)
    if cause["kind"] == "unknown":
        return "unknown" + ruled_text + (f"; note: {note}" if note else "")
    if "cited" in cause:
        measured = f"cited: {cause['cited']}"
    elif "statistic" in cause:
        name = cause.get("study", study)
        if name not in frames:
            raise _unmeasurable(cause, f"no evidence of study {name!r} was given (given: {', '.join(sorted(frames))})")
        measured, holds = measure_statistic(cause, frames[name], context)
        if not holds:
            raise CauseError(f"the measurement does not support the cause: {measured}", path=cause.get("path"),
                             line=cause.get("line"), field="cause")
        measured = f"measured: {measured}"
    else:
        arm = cause["ablation"]
        text, distance = _ablate(cause, arm, frames, study, ours_distance, recompute)
        closer = ours_distance is not None and distance < ours_distance
        measured = f"ablation ({_arm_text(arm)}): {text}, {'closer to' if closer else 'not closer to'} the paper's"
        if not closer:
            raise CauseError(f"the ablation does not move ours towards the paper's figure: {measured}",
                             path=cause.get("path"), line=cause.get("line"), field="cause")
        measured = f"measured by {measured}"
    return f"{cause['kind']}; {measured}" + ruled_text + (f"; note: {note}" if note else "")


def _ablate(cause: dict[str, Any], arm: dict[str, Any], frames: dict[str, pd.DataFrame], study: str,
            ours_distance: float | None, recompute: Recompute | None) -> tuple[str, float]:
    """The row recomputed on an ablation arm: (ours there in words, its distance to the paper's)."""
    if recompute is None or ours_distance is None:
        raise _unmeasurable(cause, "this row has no figure an ablation can move (no paper sign or number)")
    if arm.get("study", study) not in frames:
        raise _unmeasurable(cause, f"no evidence of study {arm['study']!r} was given")
    result = recompute(arm)
    if result is None:
        raise _unmeasurable(cause, f"the ablation arm {arm} has no complete runs")
    return result


def _ruled_out(cause: dict[str, Any], arm: dict[str, Any], frames: dict[str, pd.DataFrame], study: str,
               ours_distance: float | None, recompute: Recompute | None) -> str:
    """An ablation tried in vain: it leaves at least half of ours' gap (else it is a cause)."""
    text, distance = _ablate(cause, arm, frames, study, ours_distance, recompute)
    assert ours_distance is not None  # _ablate checked it
    if distance < RULED_OUT_SHARE * ours_distance:
        raise CauseError(f"an ablation said to be ruled out closes half or more of the gap to the paper's figure "
                         f"({_arm_text(arm)}: {text}): it is a cause", path=cause.get("path"), line=cause.get("line"),
                         field="cause")
    return f"{_arm_text(arm)}): {text}, its gap {distance / ours_distance:.0%} of ours" if ours_distance else \
        f"{_arm_text(arm)}): {text}"


def studies_named(cause: dict[str, Any]) -> list[str]:
    """The other studies whose evidence a cause measures on."""
    arms = [cause.get("ablation") or {}, *cause.get("ruled_out", [])]
    named = [cause.get("study"), *(arm.get("study") for arm in arms)]
    return list(dict.fromkeys(n for n in named if n))


def _arm_text(arm: dict[str, Any]) -> str:
    return ", ".join(f"{k} {'/'.join(v) if isinstance(v, list) else v}" for k, v in arm.items())


def size_verdict(ours: float, paper: float, factor: float) -> str:
    """'yes' when ours is within the factor of the paper's figure (same sign), 'no (xR)' else, '-'
    when either is not a number or the paper's is 0."""
    if any(math.isnan(v) or math.isinf(v) for v in (ours, paper)) or paper == 0:
        return "-"
    ratio = ours / paper
    if ours == 0:
        return "no (ours 0)"
    if ratio < 0:
        return "no (opposite sign)"
    return "yes" if 1 / factor <= ratio <= factor else f"no (x{ratio:.2g})"


def needs_cause(same_sign: str, same_size: str) -> bool:
    """A row agrees (cause "none") when its sign does and its size is within the factor or has none."""
    return not (same_sign in ("yes", "holds") and (same_size == "-" or same_size == "yes"))


def final_cause(cause: dict[str, Any], agrees: bool, **measure: Any) -> str:
    """'none' for a row that agrees (a cause of a difference is moot there: one cause may serve a
    row's several candidates), else the cause's text, measured."""
    if agrees:
        return "none"
    return cause_text(cause, **measure)


def stated(cause: dict[str, Any] | str) -> str:
    """A cause as its file states it, unmeasured (a campaign's report; `reproductions` measures it)."""
    if isinstance(cause, str):
        return cause
    if cause["kind"] == "unknown":
        return "unknown" + (f"; note: {cause['note']}" if cause.get("note") else "")
    how = "cited" if "cited" in cause else "measured by `schedlab reproductions`"
    return f"{cause['kind']} ({how})" + (f": {cause['note']}" if cause.get("note") else "")
