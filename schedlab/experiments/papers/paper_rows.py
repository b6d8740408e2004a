"""Rows of a paper's published figures (`[[scheduling]]` in a paper file) and how ours compare.

Every row has `row` (its name), `setup` (a key of the campaign's `[compare] setups`: the platforms
standing for the paper's set-up), `metric` (a results column) and optionally `workload` (one
workload of the campaign), `unit = "min"` (seconds shown in minutes), `note`, `headline = true`
(the study's headline claim, which the table of record's summary quotes), `source` (where the
figure is printed, default "paper"), `printed` (what the paper prints when the figure compared is
a recomputation of it), and `schedulers = [BASELINE, CANDIDATE]` or `candidates = [...]` (labels;
default: `[compare]`'s pair). Then exactly one kind:

- `change_pct = X`: the candidate's change relative to the baseline, in % (`tolerance_pct`: with
  X = 0, "same outputs" holds when |ours| is within it);
- `baseline = A` and `candidate = B`: both values (shares in %, counts as they are);
- `difference = X`: candidate - baseline, in the row's unit;
- `sign = "higher"` or `"lower"`: the paper says only which way the candidate moves;
- `value = X`: the candidate's own value (e.g. "≈ 29,447"); no sign to compare;
- `below = X` with `among = [...]`: every listed scheduler's value is below X;
- `largest = LABEL` or `lowest = LABEL` (or a list: any of them) with `among = [...]`: which
  scheduler has the largest (lowest) value;
- `grows_more_than = [BASELINE2, CANDIDATE2]` beside `schedulers`: the candidate's median over its
  baseline's is larger than the other pair's (one class loses more than another).

`platform` restricts a row to one platform of its set-up (each platform's cause measured apart).

A row whose schedulers have no complete run says "missing" rather than vanish or judge part of them.
`cause` says why ours differs: measured or cited, never typed (schedlab.experiments.papers.causes; default
`unknown`); `evidence` where else to look. The file's top-level `size_factor` (default 2) is how far
ours may be from the paper's figure, by ratio, and still have its size ("same size?"); a row
whose sign or size differs gets a cause. `schedlab reproductions` measures the causes and gathers
the rows into docs/reproductions.md.

Ours is the median over the window instances of unperturbed runs; change rows also give the last
window and the count of windows with the paper's sign.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.errors import InputError
from schedlab.experiments.papers.causes import size_verdict
from schedlab.experiments.papers.changes import _change_pct, _groups, _over, _pct_text, _scale, _sign, _yes

KINDS = ("change_pct", "difference", "sign", "value", "below", "largest", "lowest", "grows_more_than")
DEFAULT_SIZE_FACTOR = 2.0
ROW_KEYS = {"row", "setup", "metric", "workload", "unit", "note", "cause", "evidence", "schedulers", "candidates",
            "among", "headline", "printed", "source", "platform",
            "tolerance_pct", "baseline", "candidate", *KINDS}


def _kind(row: dict[str, Any]) -> str | None:
    kinds = [k for k in KINDS if k in row] + (["values"] if "baseline" in row or "candidate" in row else [])
    return kinds[0] if len(kinds) == 1 else None


def load_paper_rows(path: Path, setups: dict[str, Any], labels: list[str]) -> list[dict[str, Any]]:
    """The `[[scheduling]]` rows of a paper figures file, each checked (file, line and key named)."""
    from schedlab.experiments.campaigns.tomlfile import _Locator
    from schedlab.experiments.papers.causes import load_cause, load_size_factor
    from schedlab.metrics import compute_metrics

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        paper = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", path=str(path)) from None
    at = _Locator(path, text)
    size_factor = load_size_factor(paper, at, DEFAULT_SIZE_FACTOR)
    rows = paper.get("scheduling", [])
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise at.error("expected [[scheduling]] tables", key="scheduling")
    known_metrics = set(compute_metrics([], 1, 0.0)) | {"scheduling_time_s"}

    def number(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    for index, row in enumerate(rows):
        def fail(message: str, key: str, index: int = index) -> InputError:
            return at.error(message, "scheduling", index, key)

        unknown = sorted(set(row) - ROW_KEYS)
        if unknown:
            raise fail(f"unknown key (known: {', '.join(sorted(ROW_KEYS))})", unknown[0])
        for key in ("row", "setup", "metric"):
            if not isinstance(row.get(key), str):
                raise fail("expected a string", key)
        for key in ("workload", "note", "evidence", "printed", "source", "platform"):
            if key in row and not isinstance(row[key], str):
                raise fail("expected a string", key)
        if not isinstance(row.get("headline", False), bool):
            raise fail("expected true or false (the study's headline claim)", "headline")
        row["cause"] = load_cause(row.get("cause"), at, "scheduling", index)
        row["size_factor"] = float(size_factor)
        if row["setup"] not in setups:
            raise fail(f"not a set-up of [compare] setups ({', '.join(setups)})", "setup")
        if "platform" in row and row["platform"] not in setups[row["setup"]]:
            raise fail(f"not a platform of set-up {row['setup']} ({', '.join(setups[row['setup']])})", "platform")
        if row["metric"] not in known_metrics:
            raise fail("unknown metric", "metric")
        if row.get("unit", "min") != "min" or ("unit" in row and not row["metric"].endswith("_s")):
            raise fail('unit = "min" converts a metric in seconds', "unit")
        kind = _kind(row)
        if kind is None:
            raise fail(f"give exactly one of {', '.join(KINDS)}, or baseline and candidate", "row")
        if kind == "sign" and row["sign"] not in ("higher", "lower"):
            raise fail('expected "higher" or "lower"', "sign")
        numbers = {"values": ("baseline", "candidate"), "largest": (), "lowest": (), "sign": (),
                   "grows_more_than": ()}.get(kind, (kind,))
        for key in (*numbers, *(("tolerance_pct",) if "tolerance_pct" in row else ())):
            if not number(row.get(key)):
                raise fail("expected a number", key)
        named = [*row.get("schedulers", []), *row.get("candidates", []), *row.get("among", [])]
        if kind in ("largest", "lowest"):
            expected = row[kind] if isinstance(row[kind], list) else [row[kind]]
            if not expected or not all(isinstance(label, str) for label in expected):
                raise fail("expected a scheduler label or a list of them", kind)
            named += expected
        for key in ("schedulers", "candidates", "among"):
            if key in row and (not isinstance(row[key], list) or not row[key]):
                raise fail("expected a list of scheduler labels", key)
        if "schedulers" in row and len(row["schedulers"]) != 2:
            raise fail("expected [baseline, candidate]", "schedulers")
        if kind == "grows_more_than":
            other = row["grows_more_than"]
            if not isinstance(other, list) or len(other) != 2 or "schedulers" not in row:
                raise fail("expected [baseline, candidate] of the other pair, beside schedulers = [...]",
                           "grows_more_than")
            named += other
        if kind in ("below", "largest", "lowest") and "among" not in row:
            raise fail("name the schedulers compared (among = [...])", kind)
        bad = next((label for label in named if label not in labels), None)
        if bad is not None:
            raise fail(f"{bad!r} is not a scheduler label of this campaign ({', '.join(labels)})", "row")
    return rows


def _unit(row: dict[str, Any], value: float) -> float:
    return _scale(row["metric"], value) / (60.0 if row.get("unit") == "min" else 1.0)


def _median_of(frame: pd.DataFrame, row: dict[str, Any], label: str, platform: str, workload: str) -> float:
    runs = frame[frame["complete"] & frame["repetition"].isna() & (frame["scheduler"] == label)
                 & (frame["platform"] == platform) & (frame["workload"] == workload)]
    return float(runs[row["metric"]].median()) if len(runs) else float("nan")


def paper_table(frame: pd.DataFrame, spec: dict[str, Any], *, measured: bool = False) -> pd.DataFrame:
    """One line per paper row, workload, platform of its set-up (and candidate). A report shows each
    cause as stated; `measured=True` keeps the cause tables and what `reproductions` needs to
    measure them (columns starting with `_`)."""
    lines = []
    for row in spec["rows"]:
        if row["metric"] not in frame:
            continue
        kind = _kind(row)
        platforms = [p for p in spec["setups"][row["setup"]] if row.get("platform", p) == p]
        if kind in ("below", "largest", "lowest", "grows_more_than"):
            lines += _group_lines(frame, row, kind, platforms)
            continue
        baseline = row.get("schedulers", [spec["baseline"]])[0]
        for candidate in row.get("candidates") or [row.get("schedulers", [None, spec["candidate"]])[1]]:
            pair = (baseline, candidate)
            found = set()
            for workload, platform, pairs, last in _groups(frame, spec, row["metric"], platforms, pair,
                                                           row.get("workload")):
                lines.append(_pair_line(row, kind, pair, workload, platform, pairs, last))
                found.add((workload, platform))
            for workload, platform in _expected(frame, row, platforms):  # say what is missing
                if (workload, platform) in found:
                    continue
                lines.append(_missing_line(row, workload, platform, f"no complete pair of {pair[0]} and {pair[1]}"))
    table = pd.DataFrame(lines)
    if measured or table.empty:
        return table
    from schedlab.experiments.papers.causes import stated

    table["cause"] = table["cause"].map(stated)
    return table.drop(columns=[c for c in table.columns if c.startswith("_")])


def _expected(frame: pd.DataFrame, row: dict[str, Any], platforms: list[str]) -> list[tuple[str, str]]:
    """The (workload, platform) pairs of this campaign a row is about, workloads sorted, platforms
    in the given order (a row naming another campaign's workload is about none)."""
    workloads = [row["workload"]] if "workload" in row else sorted(frame["workload"].unique())
    present = set(zip(frame["workload"], frame["platform"], strict=True))
    return [(w, p) for w in workloads for p in platforms if (w, p) in present]


def _missing_line(row: dict[str, Any], workload: str, platform: str, why: str) -> dict[str, Any]:
    return {"row": f"{row['setup']}: {row['row']}", "workload": workload, "platform": platform,
            "paper": "", "ours, last window": "missing", "ours, median": "missing",
            "same sign? last / median": "-", "same size?": "-", "windows with the paper's sign": "-",
            "beyond jitter noise": "-",
            "note": why, **_why(row)}


def _pair_line(row, kind, pair, workload, platform, pairs, last) -> dict[str, Any]:
    difference = pairs["candidate"] - pairs["baseline"]
    signs = difference.map(_sign)
    last_text = median_text = "-"
    paper_sign: int | None = None
    last_sign = median_sign = 0
    ours_figure, paper_figure = _figures(row, kind, pairs)
    if kind in ("change_pct", "sign"):
        if kind == "sign":
            paper_text, paper_sign = row["sign"], 1 if row["sign"] == "higher" else -1
        else:
            paper_text, paper_sign = f"{row['change_pct']:+.2f}%", _sign(row["change_pct"])
        change = _change_pct(pairs)
        median = float(change.median())
        last_text, median_text = _pct_text(float(change.loc[last.name])), _pct_text(median) + _over(change)
        last_sign = _sign(float(difference.loc[last.name]))
        median_sign = _sign(median) if change.notna().any() else _sign(float(difference.median()))
        tolerance = row.get("tolerance_pct")
        if tolerance is not None and paper_sign == 0 and kind == "change_pct":  # "the same outputs"
            last_sign = 0 if abs(float(change.loc[last.name])) <= tolerance else 1
            median_sign = 0 if abs(median) <= tolerance else 1
    elif kind == "values":
        paper_text = f"{row['baseline']:g} → {row['candidate']:g}"
        paper_sign = _sign(row["candidate"] - row["baseline"])
        last_text = f"{_unit(row, last['baseline']):.4g} → {_unit(row, last['candidate']):.4g}"
        medians = pairs["baseline"].median(), pairs["candidate"].median()
        median_text = f"{_unit(row, medians[0]):.4g} → {_unit(row, medians[1]):.4g}"
        last_sign, median_sign = _sign(float(difference.loc[last.name])), _sign(float(medians[1] - medians[0]))
    elif kind == "difference":
        paper_text, paper_sign = f"{row['difference']:+g}{_suffix(row)}", _sign(row["difference"])
        last_text = f"{_unit(row, float(difference.loc[last.name])):+.4g}{_suffix(row)}"
        median_text = f"{_unit(row, float(difference.median())):+.4g}{_suffix(row)}"
        last_sign, median_sign = _sign(float(difference.loc[last.name])), _sign(float(difference.median()))
    else:  # value: the candidate's own figure
        paper_text = f"≈ {row['value']:g}{_suffix(row)}"
        last_text = f"{_unit(row, float(last['candidate'])):.4g}{_suffix(row)}"
        median_text = f"{_unit(row, float(pairs['candidate'].median())):.4g}{_suffix(row)}"
    if kind == "change_pct" and row.get("tolerance_pct") is not None and paper_sign == 0:
        signs = _change_pct(pairs).map(lambda c: 0 if abs(c) <= row["tolerance_pct"] else 1)
    noise = pairs["beyond_noise"].dropna()
    verdict = "-" if paper_sign is None else f"{_yes(last_sign, paper_sign)} / {_yes(median_sign, paper_sign)}"
    agreeing = "-" if paper_sign is None else f"{int((signs == paper_sign).sum())} of {len(pairs)}"
    named = kind != "value" and ("schedulers" in row or "candidates" in row)  # else [compare]'s pair
    name = f"{row['row']} ({pair[1]} vs {pair[0]})" if named else row["row"]
    note = row.get("note", "")
    if kind == "change_pct" and row["metric"] in ("mean_bounded_slowdown", "mean_slowdown"):
        baseline = float(pairs["baseline"].median())
        floor = -100.0 * (baseline - 1.0) / baseline if baseline > 0 else 0.0
        if row["change_pct"] < floor:  # every job's (bounded) slowdown is >= 1
            bound = (f"out of reach here: a slowdown is >= 1, so a baseline of {baseline:.3g} allows at most "
                     f"{floor:.1f}%")
            note = f"{note}; {bound}" if note else bound
    size = "-" if paper_figure is None or kind == "sign" else size_verdict(ours_figure, paper_figure,
                                                                         row.get("size_factor", 2.0))
    return {"row": f"{row['setup']}: {name}", "workload": workload, "platform": platform, "paper": paper_text,
            "ours, last window": last_text, "ours, median": median_text, "same sign? last / median": verdict,
            "same size?": size, "windows with the paper's sign": agreeing,
            "beyond jitter noise": f"{int(noise.astype(bool).sum())} of {len(noise)}" if len(noise) else "-",
            "note": note, **_why(row), "_pair": pair, "_distance": _distance(kind, ours_figure, paper_figure, row)}


def _figures(row: dict[str, Any], kind: str, pairs: pd.DataFrame) -> tuple[float, float | None]:
    """(ours, the paper's) as one number each, in the row's unit: the median change in % (change_pct,
    sign), the difference of the medians (values), the median difference, the candidate's median
    (value). The paper's is None when it gives only a direction."""
    if kind in ("change_pct", "sign"):
        change = _change_pct(pairs)
        ours = float(change.median()) if change.notna().any() else float("nan")
        return ours, (None if kind == "sign" else float(row["change_pct"]))
    if kind == "values":
        ours = _unit(row, float(pairs["candidate"].median())) - _unit(row, float(pairs["baseline"].median()))
        return ours, float(row["candidate"] - row["baseline"])
    if kind == "difference":
        return _unit(row, float((pairs["candidate"] - pairs["baseline"]).median())), float(row["difference"])
    return _unit(row, float(pairs["candidate"].median())), float(row["value"])


def _distance(kind: str, ours: float, paper: float | None, row: dict[str, Any]) -> float | None:
    """How far ours is from the paper's figure (what an ablation must shrink): in the row's unit; for
    a direction only, 0 with the paper's sign, else how far ours is past 0."""
    if ours != ours:
        return None
    if paper is None:
        wanted = 1 if row.get("sign") == "higher" else -1
        return 0.0 if _sign(ours) == wanted else abs(ours)
    return abs(ours - paper)


def figure_distance(frame: pd.DataFrame, spec: dict[str, Any], row: dict[str, Any], pair: tuple[str, str],
                    workload: str, platform: str) -> tuple[str, float] | None:
    """The row recomputed for one pair of schedulers on one workload and platform: (ours in words,
    its distance to the paper's figure); None when no complete pair exists (an ablation's arm)."""
    kind = _kind(row)
    if kind not in ("change_pct", "sign", "values", "difference", "value"):
        return None
    for _, _, pairs, _ in _groups(frame, spec, row["metric"], [platform], pair, workload):
        ours, paper = _figures(row, kind, pairs)
        distance = _distance(kind, ours, paper, row)
        if distance is None:
            return None
        unit = "%" if kind in ("change_pct", "sign") else _suffix(row)
        return f"{pair[1]} vs {pair[0]} {ours:+.4g}{unit}", distance
    return None


def _why(row: dict[str, Any]) -> dict[str, Any]:
    """The row's cause of a difference (measured by `reproductions`) and where else to look."""
    return {"cause": row.get("cause") or {"kind": "unknown", "note": ""}, "evidence": row.get("evidence", ""),
            "_row": row}


def _suffix(row: dict[str, Any]) -> str:
    return " min" if row.get("unit") == "min" else ""


def _group_lines(frame: pd.DataFrame, row: dict[str, Any], kind: str, platforms: list[str]) -> list[dict[str, Any]]:
    """below / largest / lowest: one line per workload and platform, over the listed schedulers."""
    lines = []
    for workload, platform in _expected(frame, row, platforms):
        if kind == "grows_more_than":
            lines.append(_growth_line(frame, row, workload, platform))
            continue
        values = {label: _median_of(frame, row, label, platform, workload) for label in row["among"]}
        known = {label: value for label, value in values.items() if value == value}
        absent = [label for label in row["among"] if label not in known]
        if absent:  # a verdict over part of the schedulers would claim too much
            lines.append(_missing_line(row, workload, platform, f"no complete run of {', '.join(absent)}"))
            continue
        shown = ", ".join(f"{label} {_unit(row, value):.4g}" for label, value in known.items())
        if kind == "below":
            paper_text = f"all < {row['below']:g}{_suffix(row)}"
            holds: bool | None = all(_unit(row, value) < row["below"] for value in known.values())
            ours = f"max {_unit(row, max(known.values())):.4g}{_suffix(row)}"
        else:
            best = (max if kind == "largest" else min)(known.values())
            tied = [label for label, value in known.items() if value == best]  # equal medians: no ranking
            expected = row[kind] if isinstance(row[kind], list) else [row[kind]]  # any of them
            paper_text = f"{kind}: {' or '.join(expected)}"
            inside = [label in expected for label in tied]
            holds = True if all(inside) else False if not any(inside) else None  # None: a tie across the claim
            ours = f"{kind}: {tied[0]}" if len(tied) == 1 else f"{kind}: a tie of {', '.join(tied)}"
        verdict = "holds" if holds else "does not hold" if holds is False else "tie"
        lines.append({"row": f"{row['setup']}: {row['row']}", "workload": workload, "platform": platform,
                      "paper": paper_text, "ours, last window": "-", "ours, median": ours,
                      "same sign? last / median": verdict, "same size?": "-",
                      "windows with the paper's sign": "-", "beyond jitter noise": "-",
                      "note": "; ".join(filter(None, [row.get("note", ""), f"medians: {shown}"])), **_why(row)})
    return lines


def _growth_line(frame: pd.DataFrame, row: dict[str, Any], workload: str, platform: str) -> dict[str, Any]:
    """grows_more_than: the candidate's median over its baseline's exceeds the other pair's ("plan-based
    loses more than backfilling": each class's predicted over its exact)."""
    pairs = [row["schedulers"], row["grows_more_than"]]
    medians = [[_median_of(frame, row, label, platform, workload) for label in pair] for pair in pairs]
    absent = [label for pair, values in zip(pairs, medians, strict=True) for label, v in zip(pair, values, strict=True)
              if v != v]
    if absent:
        return _missing_line(row, workload, platform, f"no complete run of {', '.join(absent)}")
    ratios = [values[1] / values[0] if values[0] else float("inf") for values in medians]
    holds = ratios[0] > ratios[1]
    shown = "; ".join(f"{pair[1]} / {pair[0]} x{ratio:.3g}" for pair, ratio in zip(pairs, ratios, strict=True))
    return {"row": f"{row['setup']}: {row['row']}", "workload": workload, "platform": platform,
            "paper": f"{row['schedulers'][1]} / {row['schedulers'][0]} above {row['grows_more_than'][1]} / "
                     f"{row['grows_more_than'][0]}",
            "ours, last window": "-", "ours, median": shown,
            "same sign? last / median": "holds" if holds else "does not hold", "same size?": "-",
            "windows with the paper's sign": "-", "beyond jitter noise": "-", "note": row.get("note", ""),
            **_why(row)}
