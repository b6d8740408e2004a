"""Predictor studies: runtime models trained and scored on one trace, in a paper's table layout,
beside its published values. A TOML file with `kind = "predictor-study"`:

    kind = "predictor-study"
    name = "diws-predictors-ricc"
    models = ["dt", "rf", "gb", "nn"]
    seed = 0
    test_share = 0.3
    paper = "paper.toml"            # optional: [predictors.<table>.<model>] published values
    search = { table = "time", gb = [{ max_depth = 6 }] }   # optional: settings tried beside the defaults
    causes = { gb = { kind = "data", ... } }                 # optional: a model's own cause (else `cause`)
    [workload]                      # swf, table or file (a Batsim workload), convert = {...} as campaigns
    swf = "trace.swf.gz"
    [[tables]]
    name = "random"                 # the key of the paper's values
    title = "Tab. 3: random 70/30 split"
    split = "random"                # random | time
    features = "diws"               # a feature set

`schedlab experiment run FILE -o DIR` trains every (table, model) once (results are
content-addressed under DIR/runs and reused), writes DIR/results.parquet and DIR/study.json;
`schedlab report DIR` renders the tables.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab import __version__
from schedlab.errors import InputError
from schedlab.experiments.campaigns.kinds import StudyKind, study_kind
from schedlab.experiments.campaigns.versions import library_versions
from schedlab.parsing import toml_loads
from schedlab.paths import atomic_path
from schedlab.predictors.evaluate import METRICS, flat_report

STUDY_KEYS = {"kind", "name", "description", "models", "seed", "test_share", "paper", "workload", "tables", "cause",
              "size_factor", "search", "causes"}
TABLE_KEYS = {"name", "title", "split", "features"}
def load_study(path: str | Path) -> dict[str, Any]:
    """Validate a study file before any work; one line naming the file, line and key otherwise."""
    from schedlab.experiments.campaigns.tomlfile import _table, read_checked
    from schedlab.predictors.features import FEATURE_SETS
    from schedlab.predictors.runtime import MODELS
    from schedlab.predictors.training import check_choices

    path = Path(path)
    doc, at = read_checked(path, STUDY_KEYS)
    models = doc.get("models", ["dt"])
    if not isinstance(models, list) or not models or any(m not in MODELS for m in models):
        raise at.error(f"expected a list of models ({', '.join(MODELS)})", key="models")
    if len(set(models)) != len(models):
        raise at.error("a model is listed twice", key="models")
    seed, share = doc.get("seed", 0), doc.get("test_share", 0.3)
    if not isinstance(seed, int) or seed < 0:
        raise at.error("expected an integer >= 0", key="seed")
    if not isinstance(share, int | float) or not 0 < share < 1:
        raise at.error("expected a share in (0, 1)", key="test_share")
    source = load_workload_table(doc, at, path)
    tables = doc.get("tables")
    if not isinstance(tables, list) or not tables:
        raise at.error("at least one [[tables]] table is needed", key="tables")
    for index, table in enumerate(tables):
        _table(table, TABLE_KEYS, at, "tables", index)
        if table.get("split") not in ("random", "time"):
            raise at.error("expected random or time", "tables", index, "split")
        if table.get("features", "diws") not in FEATURE_SETS:
            raise at.error(f"expected a feature set ({', '.join(FEATURE_SETS)})", "tables", index, "features")
        if not isinstance(table.get("name"), str):
            raise at.error("expected a name", "tables", index, "name")
        if table["name"] in [t.get("name") for t in tables[:index]]:
            raise at.error("this table name is used twice", "tables", index, "name")
    for model in models:
        check_choices("diws", model)
    from schedlab.experiments.papers.causes import load_cause, load_size_factor
    from schedlab.experiments.papers.paper_rows import DEFAULT_SIZE_FACTOR

    cause = load_cause(doc.get("cause"), at, None, 0)
    causes = doc.get("causes", {})
    if not isinstance(causes, dict) or any(m not in models for m in causes):
        raise at.error("expected { MODEL = cause } for models of this study", key="causes")
    causes = {m: load_cause(c, at, "causes", 0, m) for m, c in causes.items()}
    search = _search(doc.get("search"), at, models, [t["name"] for t in tables])
    size_factor = load_size_factor(doc, at, DEFAULT_SIZE_FACTOR)
    paper: dict[str, Any] = {}
    if "paper" in doc:
        paper_path = (path.parent / str(doc["paper"])).resolve()
        if not paper_path.is_file():
            raise at.error(f"no such file: {paper_path}", key="paper")
        paper = _paper_values(paper_path)
    return {"kind": "predictor-study", "name": str(doc.get("name", path.stem)), "models": models, "seed": seed,
            "test_share": float(share), **source,
            "tables": [{"features": "diws", "title": t["name"], **t} for t in tables], "paper": paper,
            "cause": cause, "causes": causes, "search": search, "size_factor": float(size_factor)}


def _search(raw: Any, at: Any, models: list[str], tables: list[str]) -> dict[str, Any] | None:
    """`[search]`: a small hyper-parameter search per model on one table, beside its defaults
    (`table = "time"`, `gb = [{ max_depth = 5 }, ...]`: each entry one setting of the regressor)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("table") not in tables:
        raise at.error(f"expected table = one of {', '.join(tables)}", key="search")
    settings: dict[str, list[dict[str, Any]]] = {}
    for model, entries in raw.items():
        if model == "table":
            continue
        if model not in models or not isinstance(entries, list) or not entries or not all(
                isinstance(e, dict) and e and all(isinstance(k, str) for k in e) for e in entries):
            raise at.error(f"expected MODEL = [{{ PARAMETER = VALUE }}, ...] for models of this study ({model!r})",
                           "search", 0, model)
        settings[model] = entries
    return {"table": raw["table"], "settings": settings}


def search_label(model: str, params: dict[str, Any]) -> str:
    """A searched setting's name in the results: `gb max_depth=5,n_estimators=300`."""
    return f"{model} " + ",".join(f"{k}={v}" for k, v in sorted(params.items()))


def load_workload_table(doc: dict[str, Any], at: Any, path: Path) -> dict[str, Any]:
    """A study's `[workload]` (swf, table or file, and convert = {...}): source_kind, source, convert."""
    from schedlab.experiments.campaigns.tomlfile import _table
    from schedlab.workloads.convert import ConversionOptions
    from schedlab.workloads.formats import all_trace_formats

    sources = (*all_trace_formats(), "file")
    workload = _table(doc.get("workload"), {*sources, "convert"}, at, "workload", 0)
    kinds = [k for k in sources if k in workload]
    if len(kinds) != 1:
        raise at.error(f"give exactly one of {', '.join(sources)}", "workload", 0)
    source = (path.parent / str(workload[kinds[0]])).resolve()
    if not source.is_file():
        raise at.error(f"no such file: {source}", "workload", 0, kinds[0])
    convert = _table(workload.get("convert", {}), set(ConversionOptions.__dataclass_fields__), at, "workload", 0)
    if convert and kinds[0] == "file":
        raise at.error("a Batsim workload file is used as it is", "workload", 0, "convert")
    try:
        ConversionOptions(**convert).validate()
    except (InputError, TypeError, ValueError) as exc:
        raise at.error(str(exc), "workload", 0, "convert") from None
    return {"source_kind": kinds[0], "source": str(source), "convert": convert}


def _paper_values(path: Path) -> dict[str, Any]:
    """`[predictors.TABLE.MODEL]` tables of numbers, keyed by METRICS columns."""
    from schedlab.experiments.campaigns.tomlfile import _Locator

    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        paper = toml_loads(text).get("predictors", {})
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"malformed TOML: {exc}", path=str(path)) from None
    at = _Locator(path, text)
    for table, models in paper.items() if isinstance(paper, dict) else [("", None)]:
        if not isinstance(models, dict):
            raise at.error("expected [predictors.TABLE.MODEL] tables", key="predictors")
        for model, values in models.items():
            section = f"predictors.{table}.{model}"
            if not isinstance(values, dict):
                raise at.error("expected a table of metric values", section)
            for key, value in values.items():
                if key not in METRICS:
                    raise at.error(f"unknown metric (known: {', '.join(METRICS)})", section, 0, key)
                if not isinstance(value, int | float) or isinstance(value, bool):
                    raise at.error("expected a number", section, 0, key)
    return paper


def _workload_file(study: dict[str, Any], directory: Path) -> Path:
    """The study's workload as a Batsim file (a trace converted once, named by its recipe)."""
    from schedlab.paths import canonical_hash, sha256_file

    if study["source_kind"] == "file":
        return Path(study["source"])
    from schedlab.workloads.convert import ConversionOptions, convert_columns

    recipe = {"source": sha256_file(Path(study["source"])), "kind": study["source_kind"],
              "convert": study["convert"], "version": __version__}
    path = directory / f"{canonical_hash(recipe)[:20]}.json"
    if not path.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        from schedlab.workloads.formats import read_trace

        trace = read_trace(study["source_kind"], study["source"])
        convert_columns(trace, ConversionOptions(**study["convert"]))[0].write(str(path))
    return path


def run_study(study: dict[str, Any], out: Path, progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Train and score every (table, model); finished ones (DIR/runs/ID.json) are reused."""
    from schedlab.paths import atomic_write, canonical_hash, sha256_file
    from schedlab.predictors.runtime import RECIPE_VERSION, versions
    from schedlab.predictors.training import load_training_data, train_on

    workload = _workload_file(study, out / "workloads")
    sha = sha256_file(workload)
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    data = None

    def trained(table: dict[str, Any], model: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """One (table, model[, setting]) trained once (DIR/runs/ID.json), as a results row."""
        nonlocal data
        key = {"workload": sha, "split": table["split"], "features": table["features"], "model": model,
               **({"params": params} if params is not None else {}), "seed": study["seed"],
               "test_share": study["test_share"], "versions": versions(), "recipe": RECIPE_VERSION}
        result = runs_dir / f"{canonical_hash(key)[:16]}.json"
        if not result.is_file():
            data = data or load_training_data(workload)
            _, card = train_on(data, workload, features=table["features"], model=model, split=table["split"],
                               test_share=study["test_share"], seed=study["seed"], sha256=sha, params=params)
            with atomic_write(result) as handle:
                handle.write(json.dumps(card, indent=1, sort_keys=True, default=str) + "\n")
        card = json.loads(result.read_text())
        searched = {} if params is None else {"model": search_label(model, params), "search_of": model,
                                              "params": json.dumps(params, sort_keys=True)}
        row = {"table": table["name"], "title": table["title"], "model": model, **searched, "split": table["split"],
               "features": table["features"], "nb_train": card["training_data"]["nb_jobs"],
               "nb_test": card["split"]["nb_test_jobs"], "fit_s": card["timing"]["fit_s"],
               "predict_us_per_job": 1e6 * card["timing"]["predict_s_per_job"], "result": result.name}
        row.update({k: v for k, v in flat_report(card["metrics"]).items() if k != "nb_jobs"})
        if progress:
            r2 = "-" if row["r2"] is None else f"{row['r2']:.3f}"  # None: the test run times do not vary
            progress(f"{table['title']}: {row['model']}: MAE {row['mae_min']:.2f} min, R2 {r2}, "
                     f"fit {row['fit_s']:.1f} s")
        return row

    rows = [trained(table, model, None) for table in study["tables"] for model in study["models"]]
    search: dict[str, Any] = study.get("search") or {"settings": {}}
    searched_table: dict[str, Any] = next((t for t in study["tables"] if t["name"] == search.get("table")), {})
    rows += [trained(searched_table, model, params) for model, entries in search["settings"].items()
             for params in entries]
    frame = pd.DataFrame(rows)
    with atomic_path(out / "results.parquet") as temporary:
        frame.to_parquet(temporary, index=False)
    with atomic_write(out / "study.json") as handle:
        handle.write(json.dumps({**study, "workload_file": str(workload), "workload_sha256": sha,
                                 "versions": library_versions()}, indent=1) + "\n")
    return frame


def table_layout(frame: pd.DataFrame, study: dict[str, Any], table: dict[str, Any]) -> pd.DataFrame:
    """The paper's layout: one row per metric, per model `ours` and `paper` columns."""
    part = frame[frame["table"] == table["name"]].set_index("model")
    paper = study.get("paper", {}).get(table["name"], {})
    lines = []
    for column, (heading, _) in METRICS.items():
        line: dict[str, Any] = {"metric": heading}
        for model in part.index:
            line[f"{model} ours"] = part.loc[model, column]
            if paper.get(model):
                line[f"{model} paper"] = paper[model].get(column)
        lines.append(line)
    for column, heading in (("fit_s", "fitting time (s)"), ("predict_us_per_job", "prediction (µs per job)")):
        lines.append({"metric": heading, **{f"{m} ours": part.loc[m, column] for m in part.index}})
    return pd.DataFrame(lines)


def paper_rows(results_dir: Path) -> pd.DataFrame:
    """The table of record's rows: per table and model with published values, R² and MAE, paper vs
    ours; then the paper's finding (the headline). The study file's `cause` explains them (measured
    by `reproductions`)."""
    from schedlab.experiments.papers.causes import size_verdict
    from schedlab.experiments.papers.evidence import read_results

    study = json.loads((results_dir / "study.json").read_text())
    frame = read_results(results_dir)
    default_cause = study.get("cause") or {"kind": "unknown", "note": ""}
    evidence = f"{results_dir.name}/results.csv"
    factor = study.get("size_factor", 2.0)
    lines = []
    for table in study["tables"]:
        for model in study["models"]:
            published = study.get("paper", {}).get(table["name"], {}).get(model)
            ours = frame[(frame["table"] == table["name"]) & (frame["model"] == model)]
            cause = (study.get("causes") or {}).get(model, default_cause)
            if not published or ours.empty:
                continue
            for column, heading in (("r2", "R²"), ("mae_min", "MAE (min)")):
                value = pd.to_numeric(ours[column], errors="coerce").iloc[0]  # None (constant targets): NaN
                if published.get(column) is not None and not pd.isna(value):
                    lines.append({"row": f"{table['title']}: {model} {heading}", "paper": f"{published[column]:.2f}",
                                  "ours": f"{float(value):.2f}", "same sign?": "-",
                                  "same size?": size_verdict(float(value), float(published[column]), factor),
                                  "cause": cause, "evidence": evidence})
    found = headline(frame, study)
    for row in [] if found is None else found.to_dict("records"):
        same = row["same direction (time split lower)?"]
        lines.append({"row": f"finding: {row['row']} (time split lower)", "paper": row["paper"], "ours": row["ours"],
                      "same sign?": same, "same size?": "-",
                      "cause": (study.get("causes") or {}).get("dt", default_cause), "evidence": evidence})
    return pd.DataFrame(lines, columns=["row", "paper", "ours", "same sign?", "same size?", "cause", "evidence"])


def headline(frame: pd.DataFrame, study: dict[str, Any]) -> pd.DataFrame | None:
    """The issue's rows: DT R² and MAE, random vs time split, and whether the paper's finding (the
    time split has the lower MAE but also the lower R²) holds here."""
    paper = study.get("paper", {})
    dt = frame[frame["model"] == "dt"].set_index("table")
    if not {"random", "time"} <= set(dt.index) or not all("dt" in paper.get(t, {}) for t in ("random", "time")):
        return None
    lines = []
    for column, heading in (("r2", "DT R²"), ("mae_min", "DT MAE (min)")):
        ours = (dt.loc["random", column], dt.loc["time", column])
        theirs = (paper["random"]["dt"].get(column), paper["time"]["dt"].get(column))
        if None in ours or None in theirs or any(pd.isna(v) for v in ours):
            continue
        same = (ours[1] < ours[0]) == (theirs[1] < theirs[0])
        lines.append({"row": f"{heading}, random / time split", "paper": f"{theirs[0]:.2f} / {theirs[1]:.2f}",
                      "ours": f"{ours[0]:.2f} / {ours[1]:.2f}",
                      "same direction (time split lower)?": "yes" if same else "no"})
    return pd.DataFrame(lines) if lines else None


def sections(results_dir: Path) -> list[tuple[str, str, Any]]:
    study = json.loads((results_dir / "study.json").read_text())
    frame = pd.read_parquet(results_dir / "results.parquet")
    out: list[tuple[str, str, Any]] = [(
        "Study", f"{study['name']}: {', '.join(study['models'])} on {Path(study['source']).name} "
                 f"({int(frame['nb_train'].iloc[0] + frame['nb_test'].iloc[0])} jobs), seed {study['seed']}; errors in "
                 "minutes. Hyper-parameters are the libraries' defaults (the paper gives none); the 95% interval is "
                 "the 2.5th-97.5th percentile of the absolute error; effectiveness is an interpretation of the DIWS "
                 "study's undefined figure (predictors/evaluate.py).", None)]
    top = headline(frame, study)
    if top is not None:
        out.append(("Paper vs ours", "", top))
    searched = frame[frame["search_of"].notna()] if "search_of" in frame else frame.iloc[:0]
    frame = frame.drop(searched.index)
    for table in study["tables"]:
        part = frame[frame["table"] == table["name"]]
        if not part.empty:
            out.append((table["title"], f"{table['split']} split, feature set {table['features']}, "
                        f"{int(part['nb_train'].iloc[0])} training and {int(part['nb_test'].iloc[0])} test jobs.",
                        table_layout(frame, study, table)))
    if not searched.empty:
        table_name = study["search"]["table"]
        defaults = frame[(frame["table"] == table_name) & frame["model"].isin(searched["search_of"])]
        shown = pd.concat([defaults.assign(search_of=defaults["model"], params="defaults"), searched])
        out.append(("Hyper-parameter search", f"Each model on table {table_name} with its defaults and each setting "
                    "searched (scikit-learn names); how far the hyper-parameters move the figures.",
                    shown[["search_of", "params", "r2", "mae_min", "fit_s"]].rename(columns={"search_of": "model"})
                    .sort_values(["model", "params"]).reset_index(drop=True)))
    return out


def plot_study(results_dir: Path, path: Path) -> Path:
    """MAE and R² per table and model, ours beside the paper's."""
    from schedlab.experiments.campaigns.render import _pyplot, _save

    study = json.loads((results_dir / "study.json").read_text())
    frame = pd.read_parquet(results_dir / "results.parquet")
    paper = study.get("paper", {})
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    labels = [f"{row.table}: {row.model}" for row in frame.itertuples()]
    x = range(len(frame))
    for axis, (column, heading) in zip(axes, (("mae_min", "MAE (min)"), ("r2", "R²")), strict=True):
        ours = frame[column].to_numpy(dtype=float)
        theirs = [paper.get(row.table, {}).get(row.model, {}).get(column, float("nan")) for row in frame.itertuples()]
        axis.bar([i - 0.2 for i in x], ours, 0.4, label="ours")
        axis.bar([i + 0.2 for i in x], theirs, 0.4, label="paper", color="#bbbbbb")
        axis.set_xticks(list(x), labels, fontsize=7, rotation=40, ha="right")
        for boundary in frame.index[frame["table"].ne(frame["table"].shift())][1:]:  # between tables
            axis.axvline(boundary - 0.5, color="#888888", linewidth=0.6, linestyle=":")
        axis.set_ylabel(heading)
        axis.set_title(heading, fontsize=10)
        axis.legend(fontsize=8)
    fig.suptitle(f"{study['name']}: test-set errors per split and model (ours: {Path(study['source']).name}; "
                 "paper: its own data)", fontsize=10)
    return _save(fig, path)


@study_kind
class PredictorStudy(StudyKind):
    """`kind = "predictor-study"`: runtime models trained and scored on one trace, beside a paper's table."""

    kind, label, record = "predictor-study", "predictor study", "study.json"
    figure = ("predictors.png", "Errors and fit, ours vs paper")
    plot = staticmethod(plot_study)
    sections = staticmethod(sections)

    def load(self, path: str | Path) -> dict[str, Any]:
        return load_study(path)

    def describe(self, spec: dict[str, Any], path: str) -> list[str]:
        lines = [f"predictor study {spec['name']!r} ({path}): {len(spec['tables'])} tables x "
                 f"{len(spec['models'])} models on {spec['source']}"]
        lines += [f"  {table['title']}: {table['split']} split, {table['features']}: {', '.join(spec['models'])}"
                  for table in spec["tables"]]
        lines += [f"  search on {spec['search']['table']}: " + ", ".join(search_label(model, p) for p in entries)
                  for model, entries in ((spec.get("search") or {}).get("settings") or {}).items()]
        return lines

    def run(self, spec: dict[str, Any], out: Path, *, workers: int, say: Any, unit_done: Any) -> str:
        frame = run_study(spec, out, progress=say)
        return f"predictor study {spec['name']!r}: {len(frame)} models -> {out / 'results.parquet'}"

    def paper_table(self, results_dir: Path, frames: dict[str, Any], locations: dict[str, str]) -> tuple[str, Any]:
        """Published model errors; a statistic reads a model's rows (its defaults and every searched
        setting) as a scheduler's runs, a table as a workload."""
        from schedlab.experiments.papers.causes import final_cause
        from schedlab.experiments.papers.evidence import read_results
        from schedlab.experiments.papers.reproductions import COLUMNS, agrees, display_path, evidence_places

        name = self.name_of(results_dir)
        models = read_results(results_dir)
        of = models["search_of"].fillna(models["model"]) if "search_of" in models else models["model"]
        frames.setdefault(name, models.assign(scheduler=of, workload=models["table"], platform="-", complete=True,
                                              repetition=float("nan")))
        table = paper_rows(results_dir)
        if table.empty:
            return name, pd.DataFrame(columns=COLUMNS)
        table["evidence"] = [evidence_places(c, name, "", locations, display_path(results_dir)) for c in table["cause"]]
        table["cause"] = [final_cause(c, agrees(s, z), frames=frames, study=name, context={})
                          for c, s, z in zip(table["cause"], table["same sign?"], table["same size?"], strict=True)]
        return name, pd.DataFrame({"where": name, "source": "paper", **{c: table[c] for c in table.columns}},
                                  columns=COLUMNS)
