"""Policy factories (the regression-policies study, §4.1 and Tab. 2-6): score tuples of a trace by
permutation simulation, fit Lin/Qdr/Cub/Qua, and set them beside the study's. A TOML file with
`kind = "policy-factory"`:

    kind = "policy-factory"
    name = "policies-factory"
    trace = "../../../shared/data/swf/lublin_256.swf"   # relative to this file
    tuples = 440                    # windows of 16 + 32 jobs
    trials = 256000                 # permutations per tuple
    seed = 1
    functions = ["lin", "qdr", "cub", "qua"]
    processors = 0                  # m; 0: the MaxProcs header (else MaxNodes)
    reference_scores = "../../../shared/data/policies/lublin-256-final-score.csv.gz"  # optional
    [paper]                         # the study's figures for this workload
    coefficients = "lublin256"      # its published fit (the sign of q is read from it)
    mae = { lin = 4.5e-3, ... }
    vif_max = { lin = 1.3, ... }

`schedlab experiment run FILE -o DIR` writes DIR/scores/ID.csv (+ .json; ID hashes the trace's
content, tuples, trials, seed, m and the schedlab version: made once, then reused), DIR/fitted.toml
(`queue_order=DIR/fitted.toml#lin`) and DIR/factory.json; `schedlab report DIR` renders them. With
`reference_scores` (the authors' table), that table is fitted too: a third column that tells the
effect of our tuples from the effect of our fit.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab import __version__

FACTORY_KEYS = {"kind", "name", "description", "trace", "tuples", "trials", "seed", "functions", "processors",
                "reference_scores", "paper"}
PAPER_KEYS = {"coefficients", "mae", "vif_max"}


def load_factory(path: str | Path) -> dict[str, Any]:
    """Validate a factory file before any work; one line naming the file, line and key otherwise."""
    from schedlab.experiments.campaign import read_checked
    from schedlab.schedulers.policy_fit import FUNCTIONS, WORKLOADS

    path = Path(path)
    doc, at = read_checked(path, FACTORY_KEYS)
    files = {}
    for key in ("trace", "reference_scores"):
        if key in doc:
            files[key] = (path.parent / str(doc[key])).resolve()
            if not files[key].is_file():
                raise at.error(f"no such file: {files[key]}", key=key)
    if "trace" not in files:
        raise at.error("expected the path of an SWF trace", key="trace")
    numbers = {}
    for key, default, low in (("tuples", 440, 1), ("trials", 256_000, 1), ("seed", 0, 0), ("processors", 0, 0)):
        value = doc.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise at.error(f"expected an integer >= {low}", key=key)
        numbers[key] = value
    functions = doc.get("functions", list(FUNCTIONS))
    if not isinstance(functions, list) or not functions or any(f not in FUNCTIONS for f in functions) \
            or len(set(functions)) != len(functions):
        raise at.error(f"expected a list of distinct functions ({', '.join(FUNCTIONS)})", key="functions")
    paper = doc.get("paper", {})
    if not isinstance(paper, dict) or set(paper) - PAPER_KEYS:
        raise at.error(f"expected a table with {', '.join(sorted(PAPER_KEYS))}", key="paper")
    if "coefficients" in paper and paper["coefficients"] not in WORKLOADS:
        raise at.error(f"expected one of {', '.join(WORKLOADS)}", "paper", 0, "coefficients")
    for key in ("mae", "vif_max"):
        values = paper.get(key, {})
        if not isinstance(values, dict) or any(k not in FUNCTIONS or not isinstance(v, int | float)
                                               for k, v in values.items()):
            raise at.error("expected { FUNCTION = number, ... }", "paper", 0, key)
    return {"kind": "policy-factory", "name": str(doc.get("name", path.stem)), "functions": functions,
            **numbers, **{k: str(v) for k, v in files.items()}, "paper": paper}


def _fits(p, q, r, score, functions: list[str], source: str) -> list[dict[str, Any]]:
    from schedlab.schedulers.policy_fit import fit, vif

    out = []
    for function in functions:
        fitted = fit(p, q, r, score, function, source=source)
        out.append({"function": function, "terms": list(fitted.terms), "coefficients": list(fitted.coefficients),
                    "mae": fitted.mae, "vif": vif(p, q, r, function), "fitted": fitted})
    return out


def run_factory(factory: dict[str, Any], out: Path, workers: int = 1,
                progress: Callable[[str], None] | None = None, tuple_done: Callable[[int], None] | None = None) -> dict:
    """Scores (made once per recipe), fits, DIR/fitted.toml and DIR/factory.json."""
    from schedlab.experiments.campaign import canonical_hash
    from schedlab.paths import atomic_write, sha256_file
    from schedlab.schedulers.policy_fit import read_scores, save_fitted
    from schedlab.schedulers.policy_scores import score_trace, write_scores

    recipe = {"trace": sha256_file(Path(factory["trace"])), "tuples": factory["tuples"], "trials": factory["trials"],
              "seed": factory["seed"], "processors": factory["processors"], "version": __version__}
    scores_path = out / "scores" / f"{canonical_hash(recipe)[:16]}.csv"
    if not (scores_path.is_file() and Path(f"{scores_path}.json").is_file()):
        scores_path.parent.mkdir(parents=True, exist_ok=True)
        tuples, scores, metadata = score_trace(factory["trace"], factory["tuples"], factory["trials"],
                                               factory["seed"], factory["processors"], workers, progress=tuple_done)
        write_scores(scores_path, tuples, scores, metadata)
    elif progress:
        progress(f"scores: {scores_path} (made earlier, reused)")
    metadata = json.loads(Path(f"{scores_path}.json").read_text())
    digest = sha256_file(scores_path)
    fits = _fits(*read_scores(scores_path), factory["functions"], f"{scores_path.name} sha256:{digest[:16]}")
    reference = None
    if factory.get("reference_scores"):
        path = Path(factory["reference_scores"])
        reference = _fits(*read_scores(path), factory["functions"], path.name)
    save_fitted(out / "fitted.toml", [f["fitted"] for f in fits],
                header=f"schedlab experiment run: {factory['name']}; scores {scores_path.name} (sha256 {digest}); "
                       "weight (p*q)^2; use queue_order=FILE#NAME")
    result = {"factory": factory, "scores": str(scores_path), "scores_sha256": digest, "metadata": metadata,
              "fits": [{k: v for k, v in f.items() if k != "fitted"} for f in fits],
              "reference_fits": None if reference is None else [{k: v for k, v in f.items() if k != "fitted"}
                                                                for f in reference]}
    with atomic_write(out / "factory.json") as handle:
        handle.write(json.dumps(result, indent=1) + "\n")
    if progress:
        for f in fits:
            progress(f"{f['function']}: MAE {f['mae'] * 1e3:.2f}e-3, max VIF {max(f['vif'].values()):,.1f}")
    return result


def _sign(value: float) -> str:
    return "+" if value > 0 else ("\u2212" if value < 0 else "0")  # a minus sign


def _same(ours: str, paper: str) -> str:
    return "yes" if ours == paper else "no"


def paper_rows(result: dict[str, Any]) -> pd.DataFrame:
    """`paper figure | ours | same sign?` for the issue's factory rows."""
    from schedlab.schedulers.policy_fit import PUBLISHED

    paper = result["factory"]["paper"]
    fits = {f["function"]: f for f in result["fits"]}
    functions = [f for f in ("lin", "qdr", "cub", "qua") if f in fits]
    rows = []
    if paper.get("vif_max"):
        theirs = [paper["vif_max"].get(f, math.nan) for f in functions]
        ours = [max(fits[f]["vif"].values()) for f in functions]
        grows = all(b > a for a, b in itertools.pairwise(ours))
        paper_grows = all(b > a for a, b in itertools.pairwise(theirs))
        rows.append({"row": f"VIF max: {' / '.join(f.capitalize() for f in functions)}",
                     "paper figure": " / ".join(f"{v:,.1f}" for v in theirs),
                     "ours": " / ".join(f"{v:,.1f}" for v in ours),
                     "same sign?": f"{_same(str(grows), str(paper_grows))} (grows with the degree: "
                                   f"{'yes' if grows else 'no'})"})
    if paper.get("coefficients"):
        key = paper["coefficients"]
        theirs = [_sign(PUBLISHED[(f, key)][2]) for f in functions]
        ours = [_sign(fits[f]["coefficients"][fits[f]["terms"].index("q")]) for f in functions]
        matches = sum(a == b for a, b in zip(ours, theirs, strict=True))
        rows.append({"row": f"sign of the q coefficient: {', '.join(f.capitalize() for f in functions)}",
                     "paper figure": ", ".join(theirs), "ours": ", ".join(ours),
                     "same sign?": f"{_same(''.join(ours), ''.join(theirs))} ({matches} of {len(functions)})"})
    for function in functions:
        if function in paper.get("mae", {}):
            theirs, ours = paper["mae"][function], fits[function]["mae"]
            rows.append({"row": f"MAE of {function.capitalize()}", "paper figure": f"{theirs * 1e3:.2f}·10⁻³",
                         "ours": f"{ours * 1e3:.2f}·10⁻³",
                         "same sign?": f"ratio {ours / theirs:.2f}" if theirs else "-"})
    return pd.DataFrame(rows)


def coefficient_table(result: dict[str, Any], function: str) -> pd.DataFrame:
    """Per term: ours, the authors' scores refitted, the published value; and the VIF."""
    from schedlab.schedulers.policy_fit import PUBLISHED

    fit = next(f for f in result["fits"] if f["function"] == function)
    reference = next((f for f in result["reference_fits"] or [] if f["function"] == function), None)
    key = result["factory"]["paper"].get("coefficients")
    published = PUBLISHED.get((function, key)) if key else None
    rows = []
    for index, term in enumerate(fit["terms"]):
        row = {"term": term, "ours": f"{fit['coefficients'][index]:.6e}"}
        if reference is not None:
            row["authors' scores, our fit"] = f"{reference['coefficients'][index]:.6e}"
        if published is not None:
            row[f"published ({key})"] = f"{published[index]:.6e}"
            row["same sign?"] = _same(_sign(fit["coefficients"][index]), _sign(published[index]))
        row["VIF ours"] = f"{fit['vif'][term]:,.1f}" if term in fit["vif"] else "-"
        if reference is not None:
            row["VIF authors' scores"] = f"{reference['vif'][term]:,.1f}" if term in reference["vif"] else "-"
        rows.append(row)
    mae = {"term": "MAE", "ours": f"{fit['mae']:.4e}"}
    if reference is not None:
        mae["authors' scores, our fit"] = f"{reference['mae']:.4e}"
    rows.append(mae)
    return pd.DataFrame(rows).fillna("")


def sections(results_dir: Path) -> list[tuple[str, str, Any]]:
    result = json.loads((results_dir / "factory.json").read_text())
    factory, metadata = result["factory"], result["metadata"]
    text = (f"{metadata['tuples']} tuples x {metadata['trials']:,} trials of {Path(factory['trace']).name} "
            f"(m = {metadata['processors']}, seed {metadata['seed']}, {metadata['jobs_dropped']} trace jobs dropped: "
            f"run time or processors <= 0) -> {metadata['rows']:,} scores, each tuple's summing to 1 within "
            f"{metadata['max_sum_error']:.1e}. Fits weight the squared residual by (p q)²; VIF uncentered, as the "
            "study. Our tuples are not the authors': expect other coefficients; the signs and the growth of "
            "the VIF with the degree are the check.")
    out: list[tuple[str, str, Any]] = [("Factory", text, None), ("Paper vs ours", "", paper_rows(result))]
    for fit in result["fits"]:
        out.append((f"{fit['function'].capitalize()}: coefficients and VIF", "", coefficient_table(result,
                                                                                                  fit["function"])))
    return out


def plot_factory(results_dir: Path, path: Path) -> Path:
    """Max VIF and MAE per function: ours, the authors' scores refitted, the paper's."""
    from schedlab.experiments.report import _pyplot, _save

    result = json.loads((results_dir / "factory.json").read_text())
    paper = result["factory"]["paper"]
    functions = [f["function"] for f in result["fits"]]
    series = [("ours", {f["function"]: f for f in result["fits"]}, "#1f77b4")]
    if result["reference_fits"]:
        series.append(("authors' scores, our fit", {f["function"]: f for f in result["reference_fits"]}, "#ff7f0e"))
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    width = 0.8 / (len(series) + 1)
    for axis, (key, heading) in zip(axes, (("vif_max", "largest VIF (log scale)"), ("mae", "MAE of the scores")),
                                    strict=True):
        for index, (label, fits, color) in enumerate(series):
            values = [max(fits[f]["vif"].values()) if key == "vif_max" else fits[f]["mae"] for f in functions]
            axis.bar([i + (index - len(series) / 2) * width for i in range(len(functions))], values, width,
                     label=label, color=color)
        values = [paper.get(key, {}).get(f, math.nan) for f in functions]
        axis.bar([i + (len(series) / 2) * width for i in range(len(functions))], values, width, label="paper",
                 color="#bbbbbb")
        axis.set_xticks(range(len(functions)), [f.capitalize() for f in functions])
        if key == "vif_max":
            axis.set_yscale("log")
        axis.set_title(heading, fontsize=10)
        axis.legend(fontsize=8)
    fig.suptitle(f"{result['factory']['name']}: {result['metadata']['tuples']} tuples x "
                 f"{result['metadata']['trials']:,} trials of {Path(result['factory']['trace']).name}", fontsize=10)
    return _save(fig, path)
