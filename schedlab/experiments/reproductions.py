"""The table of record (`schedlab reproductions DIR... -o docs/reproductions.md`): per study, per
published row, `paper | ours | same sign? | cause | evidence`, generated from the results
directories of the campaigns and factories that reproduce the papers, each headed by what made it
(DIR/made-by.json). A row's cause comes from its paper file (`cause`, default `unknown`; `none`
when ours has the paper's sign and no cause is given) or, for a policy factory, from which trial
order reproduces the figure."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from schedlab.errors import InputError

COLUMNS = ["row", "where", "paper", "ours", "same sign?", "cause", "evidence"]


def source_commit() -> str:
    """The commit of the code running (short hash, and whether the tree has uncommitted changes)."""
    import subprocess

    source = Path(__file__).resolve().parents[1]  # the checkout holding the package
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        # the tables of record are outputs: regenerating them does not make the code "changed"
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)experiments/*/RESULTS-*.md", ":(exclude)docs/reproductions.md"],
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return commit + (" with uncommitted changes" if dirty else "")


def made_by_text(results_dir: Path) -> str:
    """Who made a results directory: each `experiment run` into it, oldest first."""
    import shlex

    path = results_dir / "made-by.json"
    if not path.is_file():
        return f"an `experiment run` into {results_dir} that did not record itself"
    invocations = json.loads(path.read_text()).get("invocations", [])
    texts = [f"`schedlab {shlex.join(m['command'])}` on {m['date']}, schedlab {m['version']}, commit {m['commit']}"
             for m in invocations]
    return texts[0] + "".join(f"; resumed (finished runs kept) by {text}" for text in texts[1:])


def study_table(results_dir: Path) -> tuple[str, pd.DataFrame]:
    """(the study's name, its rows in COLUMNS)."""
    if not results_dir.is_dir():
        raise InputError("no such directory", path=str(results_dir))
    if not (results_dir / "factory.json").is_file() and not (results_dir / "results.parquet").is_file():
        raise InputError("no results here (not a results directory, or a study that has not finished)",
                         path=str(results_dir))
    if (results_dir / "factory.json").is_file():
        from schedlab.experiments.policy_factory import paper_rows

        result = json.loads((results_dir / "factory.json").read_text())
        table = paper_rows(result)
        if table.empty:  # a factory without [paper]: nothing published to compare
            return result["factory"]["name"], pd.DataFrame(columns=COLUMNS)
        arms = [c for c in table.columns if c.startswith("ours (")]
        ours = table[arms].apply(lambda r: "; ".join(f"{c[6:-1]}: {r[c]}" for c in arms), axis=1)
        frame = pd.DataFrame({"row": table["row"], "where": result["factory"]["name"],
                              "paper": table["paper figure"], "ours": ours, "same sign?": table["same sign?"],
                              "cause": table["cause"], "evidence": f"{results_dir.name}/factory.json"})
        return result["factory"]["name"], frame
    if (results_dir / "study.json").is_file():  # a predictor study: published model errors
        from schedlab.experiments.predictor_study import paper_rows as predictor_rows

        name = json.loads((results_dir / "study.json").read_text())["name"]
        table = predictor_rows(results_dir)
        if table.empty:
            return name, pd.DataFrame(columns=COLUMNS)
        return name, pd.DataFrame({"where": name, **{c: table[c] for c in table.columns}}, columns=COLUMNS)
    if (results_dir / "reliability.json").is_file():  # the hybrid study's reliability models
        from schedlab.experiments.hybrid_reliability import paper_row

        study = json.loads((results_dir / "reliability.json").read_text())
        table = paper_row(pd.read_parquet(results_dir / "results.parquet"), study)
        if table.empty:
            return study["name"], pd.DataFrame(columns=COLUMNS)
        same = table["same sign?"].iloc[0]
        cause = study.get("cause", "unknown")
        return study["name"], pd.DataFrame({
            "row": table["row"], "where": Path(study["source"]).name, "paper": table["paper figure"],
            "ours": table["ours"], "same sign?": table["same sign?"],
            "cause": "none" if cause == "unknown" and same == "yes" else cause,
            "evidence": study.get("evidence", "")})
    if (results_dir / "claims.json").is_file():
        from schedlab.experiments.claims import claims_table

        results = pd.read_parquet(results_dir / "results.parquet")
        table = claims_table(results, json.loads((results_dir / "claims.json").read_text()))
        if table.empty:
            return str(results["campaign"].iloc[0]), pd.DataFrame(columns=COLUMNS)
        cause = [("none" if c == "unknown" and s == "yes" else c)
                 for c, s in zip(table["cause"], table["same sign?"], strict=True)]
        frame = pd.DataFrame({"row": table["row"], "where": str(results["campaign"].iloc[0]),
                              "paper": table["paper figure"], "ours": table["ours"], "same sign?": table["same sign?"],
                              "cause": cause, "evidence": table["evidence"]})
        return str(results["campaign"].iloc[0]), frame
    if not (results_dir / "compare.json").is_file():
        raise InputError("not a factory (factory.json), a predictor or reliability study (study.json, "
                         "reliability.json), nor a campaign with "
                         "[compare] (compare.json) or [[claims]]",
                         path=str(results_dir))
    from schedlab.experiments.paper_rows import paper_table

    spec = json.loads((results_dir / "compare.json").read_text())
    results = pd.read_parquet(results_dir / "results.parquet")
    table = paper_table(results, spec)
    if table.empty:
        return str(results["campaign"].iloc[0]), pd.DataFrame(columns=COLUMNS)
    same = table["same sign? last / median"].map(lambda v: v.split(" / ")[-1])
    # a finding that holds agrees with the paper as a same sign does
    cause = [("none" if c == "unknown" and s in ("yes", "holds") else c)
             for c, s in zip(table["cause"], same, strict=True)]
    cause = [f"{c} ({n})" if n and c != "none" else c for c, n in zip(cause, table["note"], strict=True)]
    frame = pd.DataFrame({"row": table["row"], "where": table["workload"] + " on " + table["platform"],
                          "paper": table["paper"], "ours": table["ours, median"], "same sign?": same,
                          "cause": cause, "evidence": table["evidence"]})
    return str(results["campaign"].iloc[0]), frame


def write_reproductions(results_dirs: list[Path], path: Path) -> int:
    """docs/reproductions.md from the results directories; returns the number of rows."""
    from schedlab.experiments.render import markdown_table
    from schedlab.paths import atomic_write

    parts = ["# Reproductions: the table of record",
             "<!-- written by `schedlab reproductions`: regenerate it, do not edit it -->",
             "Per study and published row: the paper's figure, ours (the median over windows), whether ours has "
             "the paper's sign, the measured cause of any difference (data / method / defect fixed / unknown; "
             "none when they agree) and where it was measured. Each study's results directory and the command "
             "that made it head its table; the studies' RESULTS files hold the full reports."]
    count = 0
    for results_dir in results_dirs:
        name, frame = study_table(results_dir)
        count += len(frame)
        parts += [f"## {name}", f"Made by {made_by_text(results_dir)}.",
                  markdown_table(frame) if len(frame) else "No published figure to compare."]
    with atomic_write(path) as handle:
        handle.write("\n\n".join(parts) + "\n")
    return count
