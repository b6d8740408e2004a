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
    shuffles = ["uniform", "authors"]  # trial orders (default ["uniform"]); the first makes fitted.toml
    tuples_from = "reference"       # score the reference table's first `tuples` tuples (default "trace": drawn)
    [paper]                         # the study's figures for this workload
    coefficients = "lublin256"      # its published fit (the sign of q is read from it)
    mae = { lin = 4.5e-3, ... }
    vif_max = { lin = 1.3, ... }

`schedlab experiment run FILE -o DIR` writes, per shuffle, DIR/scores/ID.csv (+ .json; ID hashes the
trace's content, tuples, trials, seed, m, shuffle, tuple source and the schedlab version: made once,
then reused) and DIR/fitted-SHUFFLE.toml; DIR/fitted.toml (the first shuffle's:
`queue_order=DIR/fitted.toml#lin`) and DIR/factory.json; `schedlab report DIR` renders them. With
`reference_scores` (the authors' table), that table is fitted too: a column that tells the effect of
our tuples and trials from the effect of our fit; with `tuples_from = "reference"` our trials run on
its own tuples, so its scores and ours compare row by row. With `trials = 0` (and no `trace`) the
factory only fits the reference table (one arm, "the authors' scores"): the study's fits of a
workload whose trace is not here (CTC-SP2, SDSC-Blue), set beside its published figures.
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
from schedlab.experiments.campaigns.kinds import StudyKind, study_kind
from schedlab.experiments.campaigns.versions import library_versions
from schedlab.experiments.papers.causes import size_verdict
from schedlab.paths import write_text_atomic

FACTORY_KEYS = {"kind", "name", "description", "trace", "tuples", "trials", "seed", "functions", "processors",
                "reference_scores", "paper", "shuffles", "tuples_from"}
PAPER_KEYS = {"coefficients", "mae", "vif_max", "mae_source", "mae_other", "mae_other_source"}


def load_factory(path: str | Path) -> dict[str, Any]:
    """Validate a factory file before any work; one line naming the file, line and key otherwise."""
    from schedlab.experiments.campaigns.tomlfile import read_checked
    from schedlab.experiments.studies.policy_scores import SHUFFLES
    from schedlab.schedulers.fitted_policies import FUNCTIONS, WORKLOADS

    path = Path(path)
    doc, at = read_checked(path, FACTORY_KEYS)
    files = {}
    for key in ("trace", "reference_scores"):
        if key in doc:
            files[key] = (path.parent / str(doc[key])).resolve()
            if not files[key].is_file():
                raise at.error(f"no such file: {files[key]}", key=key)
    numbers = {}
    for key, default, low in (("tuples", 440, 1), ("trials", 256_000, 0), ("seed", 0, 0), ("processors", 0, 0)):
        value = doc.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise at.error(f"expected an integer >= {low}", key=key)
        numbers[key] = value
    if numbers["trials"] == 0 and "reference_scores" not in files:
        raise at.error("trials = 0 fits the reference table only: give reference_scores", key="trials")
    if "trace" not in files and numbers["trials"] > 0:
        raise at.error("expected the path of an SWF trace", key="trace")
    functions = doc.get("functions", list(FUNCTIONS))
    if not isinstance(functions, list) or not functions or any(f not in FUNCTIONS for f in functions) \
            or len(set(functions)) != len(functions):
        raise at.error(f"expected a list of distinct functions ({', '.join(FUNCTIONS)})", key="functions")
    shuffles = doc.get("shuffles", ["uniform"])
    if not isinstance(shuffles, list) or not shuffles or any(x not in SHUFFLES for x in shuffles) \
            or len(set(shuffles)) != len(shuffles):
        raise at.error(f"expected a list of distinct shuffles ({', '.join(SHUFFLES)})", key="shuffles")
    tuples_from = doc.get("tuples_from", "trace")
    if tuples_from not in ("trace", "reference") or (tuples_from == "reference" and "reference_scores" not in files):
        raise at.error("expected \"trace\" or \"reference\" (which needs reference_scores)", key="tuples_from")
    paper = doc.get("paper", {})
    if not isinstance(paper, dict) or set(paper) - PAPER_KEYS:
        raise at.error(f"expected a table with {', '.join(sorted(PAPER_KEYS))}", key="paper")
    if "coefficients" in paper and paper["coefficients"] not in WORKLOADS:
        raise at.error(f"expected one of {', '.join(WORKLOADS)}", "paper", 0, "coefficients")
    for key in ("mae_source", "mae_other_source"):
        if key in paper and not isinstance(paper[key], str):
            raise at.error("expected a text (which version of the paper, which table)", "paper", 0, key)
    for key in ("mae", "vif_max", "mae_other"):
        values = paper.get(key, {})
        if not isinstance(values, dict) or any(k not in FUNCTIONS or not isinstance(v, int | float)
                                               for k, v in values.items()):
            raise at.error("expected { FUNCTION = number, ... }", "paper", 0, key)
    return {"kind": "policy-factory", "name": str(doc.get("name", path.stem)), "functions": functions,
            "shuffles": shuffles, "tuples_from": tuples_from,
            **numbers, **{k: str(v) for k, v in files.items()}, "paper": paper}


def _fits(p, q, r, score, functions: list[str], source: str) -> list[dict[str, Any]]:
    from schedlab.experiments.studies.policy_fitting import fit, vif

    out = []
    for function in functions:
        fitted = fit(p, q, r, score, function, source=source)
        out.append({"function": function, "terms": list(fitted.terms), "coefficients": list(fitted.coefficients),
                    "mae": fitted.mae, "vif": vif(p, q, r, function), "fitted": fitted})
    return out


def run_factory(factory: dict[str, Any], out: Path, workers: int = 1,
                progress: Callable[[str], None] | None = None, tuple_done: Callable[[int], None] | None = None) -> dict:
    """Scores per shuffle (each made once per recipe), fits, DIR/fitted.toml (the first shuffle's),
    DIR/fitted-SHUFFLE.toml and DIR/factory.json."""
    from schedlab.experiments.studies.policy_fitting import read_scores
    from schedlab.paths import atomic_write

    reference = reference_scores = None
    if factory.get("reference_scores"):
        path = Path(factory["reference_scores"])
        reference_scores = read_scores(path)
        reference = _fits(*reference_scores, factory["functions"], path.name)
    if factory["trials"] == 0:  # the reference table only: its fit is the one arm
        arms = [_reference_arm(factory, out, reference, reference_scores)]
        reference = None
    else:
        arms = [_arm(factory, shuffle, out, workers, progress, tuple_done, reference_scores)
                for shuffle in factory.get("shuffles", ["uniform"])]
    first = arms[0]
    write_text_atomic(out / "fitted.toml", (out / f"fitted-{first['shuffle']}.toml").read_text(encoding="utf-8"))
    result = {"factory": factory, "scores": first["scores"], "scores_sha256": first["scores_sha256"],
              "metadata": first["metadata"], "fits": first["fits"], "arms": arms,
              "reference_fits": None if reference is None else [{k: v for k, v in f.items() if k != "fitted"}
                                                                for f in reference],
              "reference_spread": None if reference_scores is None else _spread(
                  reference_scores[3][:first["metadata"]["rows"]] if factory.get("tuples_from") == "reference"
                  else reference_scores[3]),
              "versions": library_versions()}
    with atomic_write(out / "factory.json") as handle:
        handle.write(json.dumps(result, indent=1) + "\n")
    if progress:
        for arm in arms:
            for f in arm["fits"]:
                progress(f"{arm['shuffle']} {f['function']}: MAE {f['mae'] * 1e3:.2f}e-3, "
                         f"max VIF {max(f['vif'].values()):,.1f}")
    return result


def _spread(score) -> dict[str, float]:
    import numpy as np

    score = np.asarray(score, dtype=float)
    return {"std": float(np.std(score)), "q25": float(np.quantile(score, 0.25)),
            "q75": float(np.quantile(score, 0.75))}


def _reference_arm(factory: dict[str, Any], out: Path, fits: Any, table: Any) -> dict[str, Any]:
    """A factory without trials: the reference table's own fits, as its one arm."""
    from schedlab.experiments.studies.policy_fitting import save_fitted
    from schedlab.paths import sha256_file

    path = Path(factory["reference_scores"])
    digest = sha256_file(path)
    save_fitted(out / "fitted-reference.toml", [f["fitted"] for f in fits],
                header=f"schedlab experiment run: {factory['name']}; the authors' scores {path.name} (sha256 {digest}) "
                       "fitted; weight (p*q)^2; use queue_order=FILE#NAME")
    metadata = {"tuples": None, "trials": 0, "rows": len(table[3]), "source": path.name}
    return {"shuffle": "reference", "scores": str(path), "scores_sha256": digest, "metadata": metadata,
            "fits": [{k: v for k, v in f.items() if k != "fitted"} for f in fits], "spread": _spread(table[3]),
            "agreement": None}


def _arm(factory: dict[str, Any], shuffle: str, out: Path, workers: int, progress, tuple_done,
         reference_scores) -> dict[str, Any]:
    """One shuffle: its scores (reused when made earlier), fits, spread and agreement with the
    reference table (row by row when the tuples are the reference's own)."""
    import numpy as np

    from schedlab.experiments.studies.policy_fitting import read_scores, save_fitted
    from schedlab.experiments.studies.policy_scores import score_trace, write_scores
    from schedlab.paths import canonical_hash, sha256_file

    own_tuples = factory.get("tuples_from", "trace") == "reference"
    recipe = {"trace": sha256_file(Path(factory["trace"])), "tuples": factory["tuples"], "trials": factory["trials"],
              "seed": factory["seed"], "processors": factory["processors"], "version": __version__}
    if shuffle != "uniform" or own_tuples:  # the recipe of earlier uniform runs is unchanged
        recipe.update(shuffle=shuffle, tuples_of=sha256_file(Path(factory["reference_scores"])) if own_tuples else "")
    scores_path = out / "scores" / f"{canonical_hash(recipe)[:16]}.csv"
    if not (scores_path.is_file() and Path(f"{scores_path}.json").is_file()):
        scores_path.parent.mkdir(parents=True, exist_ok=True)
        tuples, scores, metadata = score_trace(factory["trace"], factory["tuples"], factory["trials"],
                                               factory["seed"], factory["processors"], workers, progress=tuple_done,
                                               shuffle=shuffle,
                                               tuples_of=factory["reference_scores"] if own_tuples else None)
        write_scores(scores_path, tuples, scores, metadata)
    elif progress:
        progress(f"scores ({shuffle}): {scores_path} (made earlier, reused)")
    metadata = json.loads(Path(f"{scores_path}.json").read_text())
    digest = sha256_file(scores_path)
    table = read_scores(scores_path)
    fits = _fits(*table, factory["functions"], f"{scores_path.name} sha256:{digest[:16]} ({shuffle} shuffle)")
    save_fitted(out / f"fitted-{shuffle}.toml", [f["fitted"] for f in fits],
                header=f"schedlab experiment run: {factory['name']}; scores {scores_path.name} (sha256 {digest}), "
                       f"{shuffle} shuffle; weight (p*q)^2; use queue_order=FILE#NAME")
    agreement = None
    if own_tuples and reference_scores is not None:
        ours = np.asarray(table[3], dtype=float)
        theirs = np.asarray(reference_scores[3], dtype=float)[:len(ours)]  # their first `tuples` tuples
        agreement = {"correlation": float(np.corrcoef(ours, theirs)[0, 1]),
                     "rms_difference": float(np.sqrt(np.mean((ours - theirs) ** 2)))}
    return {"shuffle": shuffle, "scores": str(scores_path), "scores_sha256": digest, "metadata": metadata,
            "fits": [{k: v for k, v in f.items() if k != "fitted"} for f in fits], "spread": _spread(table[3]),
            "agreement": agreement}


def _sign(value: float) -> str:
    return "+" if value > 0 else ("\u2212" if value < 0 else "0")  # a minus sign


def _same(ours: str, paper: str) -> str:
    return "yes" if ours == paper else "no"


LABELS = {"uniform": "uniform", "authors": "authors' shuffle", "reference": "the authors' scores, our fit"}


def _arms(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The result's shuffles (a factory.json written before shuffles existed has one, uniform)."""
    return result.get("arms") or [{"shuffle": result["metadata"].get("shuffle", "uniform"), "fits": result["fits"],
                                   "spread": None, "agreement": None}]


def _verdicts(verdicts: list[str], arms: list[dict[str, Any]]) -> str:
    if len(arms) == 1:
        return verdicts[0]
    return "; ".join(f"{LABELS[a['shuffle']]}: {v}" for a, v in zip(arms, verdicts, strict=True))


def paper_rows(result: dict[str, Any]) -> pd.DataFrame:
    """`paper figure | ours (per shuffle) | same sign?` for the factory's rows."""
    from schedlab.schedulers.fitted_policies import PUBLISHED

    paper, arms = result["factory"]["paper"], _arms(result)
    fits = [{f["function"]: f for f in arm["fits"]} for arm in arms]
    functions = [f for f in ("lin", "qdr", "cub", "qua") if f in fits[0]]
    columns = [f"ours ({LABELS[arm['shuffle']]})" for arm in arms]
    rows = []

    def add(name: str, theirs: str, ours: list[str], verdicts: list[str], matches: list[bool],
            source: str = "paper", sizes: list[str] | None = None) -> None:
        rows.append({"row": name, "source": source, "paper figure": theirs, **dict(zip(columns, ours, strict=True)),
                     "same sign?": _verdicts(verdicts, arms),
                     "same size?": "-" if sizes is None else _verdicts(sizes, arms), "cause": _cause(arms, matches)})

    def near(ratio: float, within: float = 1.25) -> bool:
        return 1 / within <= ratio <= within

    if paper.get("vif_max"):
        theirs = [paper["vif_max"].get(f, math.nan) for f in functions]
        paper_grows = all(b > a for a, b in itertools.pairwise(theirs))
        ours = [[max(fit[f]["vif"].values()) for f in functions] for fit in fits]
        grows = [all(b > a for a, b in itertools.pairwise(values)) for values in ours]
        add(f"VIF max: {' / '.join(f.capitalize() for f in functions)}", " / ".join(f"{v:,.1f}" for v in theirs),
            [" / ".join(f"{v:,.1f}" for v in values) for values in ours],
            [f"{_same(str(g), str(paper_grows))} (grows with the degree: {'yes' if g else 'no'})" for g in grows],
            [g == paper_grows for g in grows])
    if paper.get("coefficients"):
        key = paper["coefficients"]
        theirs = [_sign(PUBLISHED[(f, key)][2]) for f in functions]
        ours = [[_sign(fit[f]["coefficients"][fit[f]["terms"].index("q")]) for f in functions] for fit in fits]
        add(f"sign of the q coefficient: {', '.join(f.capitalize() for f in functions)}", ", ".join(theirs),
            [", ".join(o) for o in ours],
            [f"{_same(''.join(o), ''.join(theirs))} ({sum(a == b for a, b in zip(o, theirs, strict=True))} of "
             f"{len(functions)})" for o in ours], [o == theirs for o in ours])
        if "lin" in functions:
            published = PUBLISHED[("lin", key)][fits[0]["lin"]["terms"].index("r")]
            ours_r = [fit["lin"]["coefficients"][fit["lin"]["terms"].index("r")] for fit in fits]
            add("Lin: coefficient of r", f"{published:.3g}", [f"{v:.3g}" for v in ours_r],
                [f"{_same(_sign(v), _sign(published))} (ratio {v / published:.2f})" for v in ours_r],
                [near(v / published) for v in ours_r])
    for function in functions:
        if function in paper.get("mae", {}):
            their_mae = float(paper["mae"][function])
            our_mae = [float(fit[function]["mae"]) for fit in fits]
            other = paper.get("mae_other", {}).get(function)  # the other version of the paper prints another
            printed = f"{their_mae * 1e3:.2f}·10⁻³" + (
                f" ({paper.get('mae_source', 'paper')}; {paper.get('mae_other_source', 'other version')}: "
                f"{float(other) * 1e3:.2f}·10⁻³)" if other is not None else "")
            add(f"MAE of {function.capitalize()}", printed,
                [f"{v * 1e3:.2f}·10⁻³" for v in our_mae],
                [f"ratio {v / their_mae:.2f}" if their_mae else "-" for v in our_mae],
                [bool(their_mae) and near(v / their_mae) for v in our_mae],
                sizes=[size_verdict(v, their_mae, 1.25) for v in our_mae])
    spread = result.get("reference_spread")
    if spread and all(arm.get("spread") for arm in arms) and any(arm["shuffle"] != "reference" for arm in arms):
        def text(s: dict[str, float]) -> str:
            return f"std {s['std']:.4f}, IQR {s['q25']:.4f}-{s['q75']:.4f}"

        add("score spread (the authors' table)", text(spread), [text(arm["spread"]) for arm in arms],
            [f"std ratio {arm['spread']['std'] / spread['std']:.2f}" for arm in arms],
            [near(arm["spread"]["std"] / spread["std"], 1.1) for arm in arms], source="the authors' data",
            sizes=[size_verdict(arm["spread"]["std"], spread["std"], 1.1) for arm in arms])
    if all(arm.get("agreement") for arm in arms):
        add("scores vs the authors' table, row by row (their tuples)", "1 (itself)",
            [f"correlation {arm['agreement']['correlation']:.3f}" for arm in arms],
            [f"RMS difference {arm['agreement']['rms_difference']:.1e}" for arm in arms],
            [arm["agreement"]["correlation"] > 0.9 for arm in arms], source="the authors' data")
    return pd.DataFrame(rows)


def _cause(arms: list[dict[str, Any]], matches: list[bool]) -> str:
    """Why ours differs, from which trial order reproduces the paper's figure."""
    found = {arm["shuffle"]: match for arm, match in zip(arms, matches, strict=True)}
    if all(found.values()):
        return "none"
    if found.get("authors") and not found.get("uniform", True):
        return ("method; measured by ablation (the trial order: the authors' shuffle in place of the uniform one): "
                "ours matches the paper's with it, not without; note: the authors' code's loop, not the uniform "
                "permutations the papers describe")
    return "unknown"


def coefficient_table(result: dict[str, Any], function: str) -> pd.DataFrame:
    """Per term: ours (per shuffle), the authors' scores refitted, the published value; and the VIF."""
    from schedlab.schedulers.fitted_policies import PUBLISHED

    arms = _arms(result)
    fits = [next(f for f in arm["fits"] if f["function"] == function) for arm in arms]
    labels = [f"ours ({LABELS[arm['shuffle']]})" for arm in arms]
    reference = next((f for f in result["reference_fits"] or [] if f["function"] == function), None)
    key = result["factory"]["paper"].get("coefficients")
    published = PUBLISHED.get((function, key)) if key else None
    rows = []
    for index, term in enumerate(fits[0]["terms"]):
        row = {"term": term, **{label: f"{fit['coefficients'][index]:.6e}" for label, fit in zip(labels, fits,
                                                                                                   strict=True)}}
        if reference is not None:
            row["authors' scores, our fit"] = f"{reference['coefficients'][index]:.6e}"
        if published is not None:
            row[f"published ({key})"] = f"{published[index]:.6e}"
            row["same sign?"] = _verdicts([_same(_sign(fit["coefficients"][index]), _sign(published[index]))
                                           for fit in fits], arms)
        row["VIF ours"] = f"{fits[0]['vif'][term]:,.1f}" if term in fits[0]["vif"] else "-"
        if reference is not None:
            row["VIF authors' scores"] = f"{reference['vif'][term]:,.1f}" if term in reference["vif"] else "-"
        rows.append(row)
    mae = {"term": "MAE", **{label: f"{fit['mae']:.4e}" for label, fit in zip(labels, fits, strict=True)}}
    if reference is not None:
        mae["authors' scores, our fit"] = f"{reference['mae']:.4e}"
    rows.append(mae)
    return pd.DataFrame(rows).fillna("")


def encoding_paragraph(result: dict[str, Any]) -> str:
    """What the published coefficients encode, in numbers (both shuffles run, Lin fitted)."""
    from schedlab.experiments.studies.policy_scores import authors_first_place_odds
    from schedlab.schedulers.fitted_policies import PUBLISHED

    arms = {arm["shuffle"]: {f["function"]: f for f in arm["fits"]} for arm in _arms(result)}
    key = result["factory"]["paper"].get("coefficients")
    if set(arms) != {"uniform", "authors"} or "lin" not in arms["uniform"] or not key:
        return ""

    def r_of(fit: dict[str, Any]) -> float:
        return fit["coefficients"][fit["terms"].index("r")]

    odds = [float(x) * 32 for x in authors_first_place_odds(32)]
    published = PUBLISHED[("lin", key)][arms["uniform"]["lin"]["terms"].index("r")]
    reference = {f["function"]: f for f in result.get("reference_fits") or []}
    theirs = f", our fit of the authors' table {r_of(reference['lin']):.3g}" if "lin" in reference else ""
    return (f"What the published coefficients encode: the authors' trials draw orders with a biased loop, under "
            f"which a queued job heads a trial with {odds[1]:.2f} times the fair odds when it is the second "
            f"submitted, {odds[0]:.2f} when first and {odds[31]:.2f} when last (exact, `policy_scores."
            f"authors_first_place_odds`). Scores then carry a factor that falls with r, and Lin's r coefficient "
            f"measures it: published {published:.3g}{theirs}, ours with the authors' shuffle "
            f"{r_of(arms['authors']['lin']):.3g}, with uniform permutations {r_of(arms['uniform']['lin']):.3g}.")


def sections(results_dir: Path) -> list[tuple[str, str, Any]]:
    result = json.loads((results_dir / "factory.json").read_text())
    factory, metadata = result["factory"], result["metadata"]
    own = factory.get("tuples_from", "trace") == "reference"
    shuffles = ", ".join(LABELS[arm["shuffle"]] for arm in _arms(result))
    if metadata.get("trials") == 0:
        text = (f"The authors' score table {metadata['source']} ({metadata['rows']:,} scores) fitted, no trials of "
                "ours (its trace is not here). Fits weight the squared residual by (p q)²; VIF uncentered, as the "
                "study.")
        return [("Factory", text, None), ("Paper vs ours", "", paper_rows(result)),
                *((f"{fit['function'].capitalize()}: coefficients and VIF", "", coefficient_table(result,
                                                                                                fit["function"]))
                  for fit in result["fits"])]
    text = (f"{metadata['tuples']} tuples x {metadata['trials']:,} trials of {Path(factory['trace']).name} "
            f"(m = {metadata['processors']}, seed {metadata['seed']}, {metadata['jobs_dropped']} trace jobs dropped: "
            f"run time or processors <= 0) -> {metadata['rows']:,} scores, each tuple's summing to 1 within "
            f"{metadata['max_sum_error']:.1e}; trial orders: {shuffles}. Fits weight the squared residual by (p q)²; "
            "VIF uncentered, as the study. "
            + ("The tuples are the authors' own (located in the trace from their score table): scores compare "
               "row by row." if own else "Our tuples are not the authors': expect other coefficients; the signs "
               "and the growth of the VIF with the degree are the check."))
    encoding = encoding_paragraph(result)
    out: list[tuple[str, str, Any]] = [("Factory", text, None), ("Paper vs ours", encoding, paper_rows(result))]
    for fit in result["fits"]:
        out.append((f"{fit['function'].capitalize()}: coefficients and VIF", "", coefficient_table(result,
                                                                                                  fit["function"])))
    return out


def plot_factory(results_dir: Path, path: Path) -> Path:
    """Max VIF and MAE per function: ours, the authors' scores refitted, the paper's."""
    from schedlab.experiments.campaigns.render import _pyplot, _save

    result = json.loads((results_dir / "factory.json").read_text())
    paper = result["factory"]["paper"]
    functions = [f["function"] for f in result["fits"]]
    colors = {"uniform": "#1f77b4", "authors": "#2ca02c", "reference": "#ff7f0e"}
    series = [(f"ours ({LABELS[arm['shuffle']]})", {f["function"]: f for f in arm["fits"]}, colors[arm["shuffle"]])
              for arm in _arms(result)]
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
    metadata = result["metadata"]
    fig.suptitle(f"{result['factory']['name']}: " + (
        f"the authors' scores {metadata['source']} fitted" if metadata.get("trials") == 0 else
        f"{metadata['tuples']} tuples x {metadata['trials']:,} trials of {Path(result['factory']['trace']).name}"),
        fontsize=10)
    return _save(fig, path)


@study_kind
class PolicyFactory(StudyKind):
    """`kind = "policy-factory"`: score tuples, fits, and the study's Tab. 2-6 beside ours."""

    kind, label, record = "policy-factory", "policy factory", "factory.json"
    figure = ("factory.png", "Largest VIF and MAE, ours vs paper")
    plot = staticmethod(plot_factory)
    sections = staticmethod(sections)
    results_file = "factory.json"  # scores and fits: no results table
    record_sorted = False
    other_outputs = ("fitted.toml",)

    def load(self, path: str | Path) -> dict[str, Any]:
        return load_factory(path)

    def describe(self, spec: dict[str, Any], path: str) -> list[str]:
        if spec["trials"] == 0:
            return [f"policy factory {spec['name']!r} ({path}): fits of {', '.join(spec['functions'])} to the "
                    f"reference table {spec['reference_scores']} (no trials)"]
        return [f"policy factory {spec['name']!r} ({path}): {spec['tuples']} tuples x {spec['trials']:,} trials of "
                f"{spec['trace']} (seed {spec['seed']}), then fits of {', '.join(spec['functions'])}"]

    def progress_units(self, spec: dict[str, Any]) -> tuple[int, str] | None:
        return (spec["tuples"], "tuple") if spec["trials"] else None

    def run(self, spec: dict[str, Any], out: Path, *, workers: int, say: Any, unit_done: Any) -> str:
        run_factory(spec, out, workers=workers, progress=say, tuple_done=unit_done)
        return f"policy factory {spec['name']!r}: -> {out / 'fitted.toml'}, {out / 'factory.json'}"

    def name_of(self, results_dir: Path) -> str:
        return str(self.read_record(results_dir)["factory"]["name"])

    def paper_table(self, results_dir: Path, frames: dict[str, Any], locations: dict[str, str]) -> tuple[str, Any]:
        from schedlab.experiments.papers.reproductions import COLUMNS, display_path

        result = self.read_record(results_dir)
        table = paper_rows(result)
        if table.empty:  # a factory without [paper]: nothing published to compare
            return result["factory"]["name"], pd.DataFrame(columns=COLUMNS)
        arms = [c for c in table.columns if c.startswith("ours (")]
        ours = table[arms].apply(lambda r: "; ".join(f"{c[6:-1]}: {r[c]}" for c in arms), axis=1)
        frame = pd.DataFrame({"row": table["row"], "where": result["factory"]["name"], "source": table["source"],
                              "paper": table["paper figure"], "ours": ours, "same sign?": table["same sign?"],
                              "same size?": table["same size?"], "cause": table["cause"],
                              "evidence": f"{display_path(results_dir)}/factory.json"})
        return result["factory"]["name"], frame[COLUMNS]

    def refresh(self, spec: dict[str, Any], update: Any) -> dict[str, Any]:
        update(self.record, lambda data: data["factory"].update(paper=spec["paper"]))
        source = spec.get("trace") or spec["reference_scores"]  # a factory without trials: the table
        return {"name": "trace" if "trace" in spec else "scores", "source": Path(source).name}
