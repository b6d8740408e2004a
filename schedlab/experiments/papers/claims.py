"""A campaign's `[[claims]]`: a paper's qualitative findings about queue policies, checked on the
median of a metric (default AVGbsld) over the instances (seeds, windows) of each workload,
platform and scheduler label, and printed as `paper figure | ours | same sign?`.

    [[claims]]
    row = "clairvoyant: median AVGbsld Lin vs SAF"
    paper = "comparable"                   # the paper's words
    check = "comparable"                   # comparable | closer-to | among-lowest | above
    policies = ["lin:lublin256", "saf"]    # queue_order values of this campaign
    scheduler = "list"                     # a scheduler label (default: each label)
    workload = "typeless"                  # one workload (default: each workload)
    factor = 1.5                           # comparable: the medians within this factor

Checks (m(x): the median of policy x in one group):
- comparable [a, b]: 1/factor <= m(a)/m(b) <= factor.
- closer-to policies, `to`, `than`: every policy is closer to `to` than to the best of `than`, on a
  log scale ("about as bad as FCFS").
- among-lowest [x], `rank`: x is among the `rank` lowest medians of the group's policies (or of
  `than` and x when given).
- above [x], `than`: m(x) is above every m(y) of `than`.
The thresholds are ours (the papers give none): chosen before the runs, stated in the rows.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

CLAIM_KEYS = {"row", "paper", "check", "policies", "than", "to", "scheduler", "rank", "factor", "metric", "cause",
              "evidence", "headline", "workload"}
CHECKS = ("comparable", "closer-to", "among-lowest", "above")


def load_claims(raw: Any, at: Any, labels: list[str], policies: set[str]) -> list[dict[str, Any]]:
    """Validate `[[claims]]` (errors name the file, line and key)."""
    from schedlab.experiments.campaigns.tomlfile import _table

    if not isinstance(raw, list) or not raw:
        raise at.error("expected [[claims]] tables", key="claims")
    claims = []
    for index, claim in enumerate(raw):
        claim = dict(_table(claim, CLAIM_KEYS, at, "claims", index))
        for key in ("row", "paper"):
            if not isinstance(claim.get(key), str):
                raise at.error("expected a text", "claims", index, key)
        if "evidence" in claim and not isinstance(claim["evidence"], str):  # where else to look
            raise at.error("expected a text", "claims", index, "evidence")
        from schedlab.experiments.papers.causes import load_cause

        claim["cause"] = load_cause(claim.get("cause"), at, "claims", index)  # measured by reproductions.py
        if claim.get("check") not in CHECKS:
            raise at.error(f"expected one of {', '.join(CHECKS)}", "claims", index, "check")
        for key in ("policies", "than"):
            value = claim.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise at.error("expected a list of queue_order values", "claims", index, key)
            unknown = next((v for v in value if v not in policies), None)
            if unknown is not None:
                raise at.error(f"no run has queue_order {unknown!r} (this campaign's: {', '.join(sorted(policies))})",
                               "claims", index, key)
        if claim.get("to") is not None and claim["to"] not in policies:
            raise at.error(f"no run has queue_order {claim['to']!r}", "claims", index, "to")
        needed = {"comparable": 2, "closer-to": 1, "among-lowest": 1, "above": 1}[claim["check"]]
        if len(claim.get("policies", [])) != needed and not (claim["check"] == "closer-to" and claim.get("policies")):
            raise at.error(f"{claim['check']} takes {needed} policies", "claims", index, "policies")
        if claim["check"] in ("closer-to", "above") and not claim.get("than"):
            raise at.error(f"{claim['check']} needs `than`", "claims", index, "than")
        if claim["check"] == "closer-to" and claim.get("to") is None:
            raise at.error("closer-to needs `to`", "claims", index, "to")
        if "workload" in claim and not isinstance(claim["workload"], str):
            raise at.error("expected a workload name of this campaign", "claims", index, "workload")
        if "scheduler" in claim and claim["scheduler"] not in labels:
            raise at.error(f"expected a scheduler label of this campaign ({', '.join(labels)})", "claims", index,
                           "scheduler")
        if not isinstance(claim.get("rank", 3), int) or claim.get("rank", 3) < 1:
            raise at.error("expected an integer >= 1", "claims", index, "rank")
        if not isinstance(claim.get("factor", 1.5), int | float) or not claim.get("factor", 1.5) > 1:
            raise at.error("expected a number > 1", "claims", index, "factor")
        claims.append({"factor": 1.5, "rank": 3, "metric": "mean_bounded_slowdown", **claim})
    return claims


def policy_name(value: str) -> str:
    """A short display name of a queue_order value: lin:lublin256 -> Lin, fitted.toml#lin -> Lin
    (ours), wfp3 -> WFP3."""
    if "#" in value:
        return f"{value.rpartition('#')[2].capitalize()} (ours)"
    name, _, workload = value.partition(":")
    if name in ("lin", "qdr", "cub", "qua"):
        return name.capitalize() + ("" if workload in ("", "lublin256") else f":{workload}")
    return value.upper()


def _median(part: pd.DataFrame, metric: str, policy: str) -> float:
    values = part.loc[part["opt_queue_order"] == policy, metric].dropna()
    return float(values.median()) if len(values) else math.nan


def _named_policies(claim: dict[str, Any]) -> list[str]:
    """The policies a claim names: its own, those it compares them with (`than`), and `to`."""
    return [*claim["policies"], *claim.get("than", []), *([claim["to"]] if claim.get("to") else [])]


def evaluate(claim: dict[str, Any], part: pd.DataFrame) -> tuple[str, bool | None]:
    """Ours (text) and whether the claim holds in one group (None: a median is missing)."""
    from schedlab.experiments.campaigns.render import median_text
    metric = claim["metric"]
    m = {p: _median(part, metric, p) for p in part["opt_queue_order"].dropna().unique()}
    policies = claim["policies"]
    involved = _named_policies(claim)
    if any(math.isnan(m.get(p, math.nan)) for p in involved):
        return "a policy has no complete run", None
    name = policy_name
    if claim["check"] == "among-lowest" and not claim.get("than"):
        involved = list(m)
    if len({m[p] for p in involved}) == 1:  # e.g. no job waits: AVGbsld 1 everywhere
        return f"all {len(involved)} medians are {median_text(m[involved[0]])}: a tie, nothing to rank", None
    if claim["check"] == "comparable":
        a, b = policies
        ratio = m[a] / m[b]
        holds = 1 / claim["factor"] <= ratio <= claim["factor"]
        text = f"{name(a)} {median_text(m[a])}, {name(b)} {median_text(m[b])}"
        return f"{text} (x{ratio:.2f}; within x{claim['factor']:g}?)", holds
    if claim["check"] == "closer-to":
        best = min(claim["than"], key=lambda p: m[p])
        to = claim["to"]
        holds = all(abs(math.log(m[p] / m[to])) < abs(math.log(m[p] / m[best])) for p in policies)
        listed = ", ".join(f"{name(p)} {median_text(m[p])}" for p in policies)
        return f"{listed}; {name(to)} {median_text(m[to])}, best other {name(best)} {median_text(m[best])}", holds
    if claim["check"] == "among-lowest":
        x = policies[0]
        pool = [*claim["than"], x] if claim.get("than") else sorted(m)
        ranked = sorted(pool, key=lambda p: (m[p], p))
        rank = 1 + sum(m[p] < m[x] for p in pool)  # ties share the better rank
        lowest = ", ".join(f"{name(p)} {median_text(m[p])}" for p in ranked[: claim["rank"]])
        return f"{name(x)} {rank} of {len(ranked)} (lowest: {lowest})", rank <= claim["rank"]
    x = policies[0]
    holds = all(m[x] > m[p] for p in claim["than"])
    others = ", ".join(f"{name(p)} {median_text(m[p])}" for p in claim["than"])
    return f"{name(x)} {median_text(m[x])} vs {others}", holds


def distance(claim: dict[str, Any], part: pd.DataFrame) -> tuple[str, float] | None:
    """(ours in words, how far ours is from the claim) for a `comparable` claim: how far the ratio
    of the medians is outside the factor, on a log scale (0 inside); None for the other checks."""
    if claim["check"] != "comparable":
        return None
    a, b = claim["policies"]
    ma, mb = _median(part, claim["metric"], a), _median(part, claim["metric"], b)
    if math.isnan(ma) or math.isnan(mb) or ma <= 0 or mb <= 0:
        return None
    ratio = ma / mb
    return (f"{policy_name(a)} / {policy_name(b)} x{ratio:.2f} ({claim['metric']})",
            max(0.0, abs(math.log(ratio)) - math.log(claim["factor"])))


#: the cause of a group where no policy can differ: next to nothing waits (1 is a slowdown's floor)
NOTHING_WAITS = {"kind": "data", "statistic": "median", "by": "queue_order", "metric": "mean_bounded_slowdown",
                 "below": 1.01,
                 "note": "next to nothing queues in these windows (every median within 1% of 1, a slowdown's "
                         "floor), so no policy can differ"}


def _no_wait_tie(claim: dict[str, Any], part: pd.DataFrame) -> bool:
    """Every policy's median is within 1% of 1 on a slowdown metric: a measured cause, not a miss."""
    medians = part.groupby("opt_queue_order")[claim["metric"]].median()
    involved = _named_policies(claim)
    return "slowdown" in claim["metric"] and all(p in medians.index for p in involved) and \
        bool((medians < 1.01).all())


def complete_runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["complete"] & frame["repetition"].isna()]


def recompute(frame: pd.DataFrame, claim: dict[str, Any], workload: str, platform: str, label: str,
              arm: dict[str, Any]) -> tuple[str, float] | None:
    """The ablation of a claim: the same check on another arm (policies, metric, workload, platform,
    scheduler label as `schedulers = [label]`) of `frame` (this study's, or another's)."""
    changed: dict[str, Any] = {**claim, **{k: arm[k] for k in ("policies", "metric") if k in arm}}
    where = arm.get("workload", workload), arm.get("platform", platform), (arm.get("schedulers") or [label])[0]
    data = complete_runs(frame)
    part = data[(data["workload"] == where[0]) & (data["platform"] == where[1]) & (data["scheduler"] == where[2])]
    if part.empty or changed["metric"] not in part or "opt_queue_order" not in part:
        return None
    return distance(changed, part)


def claims_table(frame: pd.DataFrame, claims: list[dict[str, Any]], *, measured: bool = False) -> pd.DataFrame:
    """One line per claim and group (workload, platform, scheduler label), and a count per claim
    when it has several groups. A report shows each cause as stated; `measured=True` keeps the
    cause tables and what `reproductions` needs to measure them (columns starting with `_`)."""
    from schedlab.experiments.papers.causes import stated
    data = complete_runs(frame)
    if "opt_queue_order" not in data:
        return pd.DataFrame()
    lines = []
    several_platforms = bool(data.groupby("workload")["platform"].nunique().max() > 1)
    for claim in claims:
        labels = [claim["scheduler"]] if "scheduler" in claim else sorted(data["scheduler"].unique())
        workloads = [claim["workload"]] if "workload" in claim else data["workload"].unique()
        groups = [(w, p, s) for w in workloads for p in data["platform"].unique() for s in labels]
        results = []
        for workload, platform, label in groups:
            part = data[(data["workload"] == workload) & (data["platform"] == platform) & (data["scheduler"] == label)]
            if part.empty:
                continue
            ours, holds = evaluate(claim, part)
            results.append(holds)
            where = f"{workload}, {label}" + (f", {platform}" if several_platforms else "")
            cause = claim.get("cause") or {"kind": "unknown", "note": ""}
            if holds is None and _no_wait_tie(claim, part):
                cause = dict(NOTHING_WAITS, schedulers=[label], metric=claim["metric"], path=cause.get("path"),
                             line=cause.get("line"))
            found = distance(claim, part)
            lines.append({"row": f"{claim['row']} ({where}; n = {part['instance'].nunique()})",
                          "paper figure": claim["paper"], "ours": ours,
                          "same sign?": "-" if holds is None else ("yes" if holds else "no"),
                          "cause": cause, "evidence": claim.get("evidence", ""), "_workload": workload,
                          "_platform": platform, "_distance": None if found is None else found[1],
                          "_claim": claim, "_label": label, "_headline": bool(claim.get("headline", False)),
                          "_summary": False})
        if len(results) > 1:
            known = [r for r in results if r is not None]
            lines.append({"row": f"{claim['row']}: all groups", "paper figure": claim["paper"],
                          "ours": f"holds in {sum(known)} of {len(known)}",
                          "same sign?": "-" if not known else ("yes" if all(known) else
                                                               ("mostly" if sum(known) * 2 > len(known) else "no")),
                          "cause": claim.get("cause") or {"kind": "unknown", "note": ""},
                          "evidence": claim.get("evidence", ""), "_workload": None, "_platform": None,
                          "_distance": None, "_claim": claim, "_label": None, "_headline": False, "_summary": True})
    table = pd.DataFrame(lines)
    if measured or table.empty:
        return table
    table["cause"] = table["cause"].map(stated)
    return table.drop(columns=[c for c in table.columns if c.startswith("_")])
