"""The hybrid study's Tab. 3: how well reliability models estimate the accuracy of online runtime
predictions (Pearson r between estimated and actual accuracy). A TOML file with
`kind = "hybrid-reliability"`:

    kind = "hybrid-reliability"
    name = "hybrid-reliability-atlas"
    models = ["gbt", "dt", "cnk"]   # predictors/reliability.py
    retrain_s = 86400
    seed = 0
    paper = { gbt = 0.78, dt = 0.66, cnk = 0.50 }
    [workload]                      # swf, table or file, convert = {...} as campaigns
    swf = "trace.swf.gz"

The trace is replayed without a scheduler: jobs in submission order, each completing at submit +
run time (no queueing: only the order of completions matters here, and traces like Atlas record
no waits; documented). At each submission the online regression predicts p^ from the history of
completions so far; every `retrain_s` of trace time each model is retrained on all completions at
or before the boundary and estimates the accuracy of the jobs submitted until the next one. Jobs
submitted before the first model are left out. `schedlab experiment run FILE -o DIR` writes
DIR/results.parquet (one row per model) and DIR/reliability.json; `schedlab report DIR` renders them.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab import __version__
from schedlab.experiments.campaigns.kinds import StudyKind, study_kind
from schedlab.experiments.campaigns.versions import library_versions
from schedlab.paths import atomic_path, write_text_atomic

KEYS = {"kind", "name", "description", "models", "retrain_s", "seed", "paper", "workload", "cause", "evidence",
        "size_factor"}


def load_reliability_study(path: str | Path) -> dict[str, Any]:
    """Validate before any work; one line naming the file, line and key otherwise."""
    from schedlab.experiments.campaigns.tomlfile import read_checked
    from schedlab.experiments.studies.predictor_study import load_workload_table
    from schedlab.predictors.reliability import RELIABILITY_MODELS

    path = Path(path)
    doc, at = read_checked(path, KEYS)
    models = doc.get("models", ["gbt", "dt", "cnk"])
    if not isinstance(models, list) or not models or any(m not in RELIABILITY_MODELS for m in models):
        raise at.error(f"expected a list of models ({', '.join(RELIABILITY_MODELS)})", key="models")
    retrain, seed = doc.get("retrain_s", 86400), doc.get("seed", 0)
    if not isinstance(retrain, int | float) or not (retrain > 0 and math.isfinite(retrain)):
        raise at.error("expected a number of seconds > 0", key="retrain_s")
    if not isinstance(seed, int) or seed < 0:
        raise at.error("expected an integer >= 0", key="seed")
    paper = doc.get("paper", {})
    if not isinstance(paper, dict) or any(not isinstance(v, int | float) for v in paper.values()):
        raise at.error("expected { model = r, ... }", key="paper")
    from schedlab.experiments.papers.causes import load_cause, load_size_factor

    cause, evidence = load_cause(doc.get("cause"), at, None, 0), doc.get("evidence", "")
    size_factor = load_size_factor(doc, at, 1.2)
    if not isinstance(evidence, str):
        raise at.error("expected a string (where the cause was measured)", key="evidence")
    return {"kind": "hybrid-reliability", "name": str(doc.get("name", path.stem)), "models": models,
            "retrain_s": float(retrain), "seed": seed, "paper": {str(k): float(v) for k, v in paper.items()},
            "cause": cause, "evidence": evidence, "size_factor": float(size_factor),
            **load_workload_table(doc, at, path)}


def replay_rows(workload, predictor: str = "online-nag") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                   np.ndarray]:
    """(submit, completion, reliability rows, run time, accuracy of p^) per job, in submission order;
    p^ from `predictor` (online-nag, user-last or user-last2: the schedulers' `predictor=`)."""
    from schedlab.predictors.features import user_and_limit
    from schedlab.predictors.history import CompletionHistory
    from schedlab.predictors.online import (
        NormalizedRegression,
        accuracy,
        history_prediction_s,
        planned_prediction_s,
        predictor_row,
        reliability_row,
    )

    if predictor not in ("online-nag", "user-last", "user-last2"):
        raise ValueError(f"replay predictor must be online-nag, user-last or user-last2, got {predictor!r}")

    history, model = CompletionHistory(), NormalizedRegression()
    pending: list[tuple[float, int, list[float], float, str, float]] = []
    submit, end, rows, runtimes = [], [], [], []
    for index, job in enumerate(workload.jobs):
        now = job.submit_time_s
        while pending and pending[0][0] <= now:
            done_s, _, row, runtime_s, user, cores = heapq.heappop(pending)
            history.record(user=user, runtime_s=runtime_s, cores=cores, end_s=done_s)
            model.partial_fit([row], [runtime_s])
        job_user, limit = user_and_limit(job)
        requested = limit if math.isfinite(limit) and limit > 0 else 0.0
        history_row = history.row(str(job_user), now, requested, float(job.res), now)
        row = predictor_row(history_row, requested, len(pending), 0.0)
        known = requested if requested > 0 else math.inf
        predicted = (planned_prediction_s(model, row, known) if predictor == "online-nag"
                     else history_prediction_s(predictor, history_row, known))
        runtime = float(workload.profiles[job.profile].delay_s)
        submit.append(now)
        end.append(now + runtime)
        rows.append(reliability_row(history_row, requested, predicted))
        runtimes.append(runtime)
        heapq.heappush(pending, (now + runtime, index, row, runtime, str(job_user), float(job.res)))
    runtimes_a, rows_a = np.array(runtimes), np.array(rows)
    return np.array(submit), np.array(end), rows_a, runtimes_a, accuracy(rows_a[:, -1], runtimes_a)


def run_reliability_study(study: dict[str, Any], out: Path, progress: Callable[[str], None] | None = None
                          ) -> pd.DataFrame:
    from schedlab.experiments.studies.predictor_study import _workload_file
    from schedlab.predictors.reliability import ReliabilityModel
    from schedlab.workload import load_workload

    out.mkdir(parents=True, exist_ok=True)
    workload = load_workload(str(_workload_file(study, out / "inputs")))
    submit, end, rows, runtimes, actual = replay_rows(workload)
    order = np.argsort(end, kind="stable")
    estimates = {model: np.full(len(submit), np.nan) for model in study["models"]}
    boundary = submit[0] + study["retrain_s"] if len(submit) else math.inf
    while boundary <= submit[-1]:
        done = order[end[order] <= boundary]
        upcoming = np.flatnonzero((submit > boundary) & (submit <= boundary + study["retrain_s"]))
        if len(done) >= 5 and len(upcoming):
            for name in study["models"]:
                model = ReliabilityModel(kind=name, seed=study["seed"])
                model.fit(rows[done], actual[done], runtime_s=runtimes[done])
                estimates[name][upcoming] = model.predict(rows[upcoming])
        if progress is not None and int((boundary - submit[0]) / study["retrain_s"]) % 30 == 0:
            progress(f"{study['name']}: {(boundary - submit[0]) / 86400:.0f} days of {len(submit)} jobs' trace")
        boundary += study["retrain_s"]
    results = []
    for name in study["models"]:
        known = ~np.isnan(estimates[name])
        r = float(np.corrcoef(estimates[name][known], actual[known])[0, 1]) if known.sum() > 2 else math.nan
        results.append({"model": name, "pearson_r": r, "nb_jobs": int(known.sum()),
                        "paper_r": study["paper"].get(name, math.nan),
                        "mean_actual_accuracy": float(actual[known].mean()) if known.any() else math.nan,
                        "mean_estimated_accuracy": float(estimates[name][known].mean()) if known.any() else math.nan})
    frame = pd.DataFrame(results)
    with atomic_path(out / "results.parquet") as temporary:
        frame.to_parquet(temporary)
    write_text_atomic(out / "reliability.json", json.dumps({
        **study, "nb_jobs": len(submit), "schedlab_version": __version__, "versions": library_versions(),
        "mean_accuracy_of_predictions": float(actual.mean())}, indent=1) + "\n")
    return frame


def paper_row(frame: pd.DataFrame, study: dict[str, Any]) -> pd.DataFrame:
    """`paper figure | ours | same sign? | same size?`: same sign = every r positive and the paper's
    order kept; same size = every r within the study's factor of the paper's (default 1.2)."""
    from schedlab.experiments.papers.causes import size_verdict

    models = [m for m in frame["model"] if m in study["paper"]]
    ours = {row.model: row.pearson_r for row in frame.itertuples()}
    if not models:
        return pd.DataFrame()
    paper_order = sorted(models, key=lambda m: -study["paper"][m])
    our_order = sorted(models, key=lambda m: -ours[m])
    same = all(ours[m] > 0 for m in models) and paper_order == our_order
    factor = study.get("size_factor", 1.2)
    sizes = [size_verdict(float(ours[m]), float(study["paper"][m]), factor) for m in models]
    return pd.DataFrame([{"row": f"correlation {' / '.join(m.upper() for m in models)} ({study['name']})",
                          "paper figure": " / ".join(f"{study['paper'][m]:.2f}" for m in models),
                          "ours": " / ".join(f"{ours[m]:.2f}" for m in models),
                          "same sign?": "yes" if same else "no",
                          "same size?": "yes" if all(v == "yes" for v in sizes) else " / ".join(sizes)}])


def sections(results_dir: Path) -> list[tuple[str, str, Any]]:
    study = json.loads((results_dir / "reliability.json").read_text())
    frame = pd.read_parquet(results_dir / "results.parquet")
    text = (f"{study['name']}: {study['nb_jobs']} jobs of {Path(study['source']).name} replayed in submission "
            f"order (each completes at submit + run time), online predictions p^ (mean accuracy "
            f"{study['mean_accuracy_of_predictions']:.3f}); models retrained every {study['retrain_s']:g} s on "
            f"all completions; seed {study['seed']}. 'same sign?': every r positive and the paper's order kept.")
    return [("Study", text, None), ("Paper vs ours", "", paper_row(frame, study)),
            ("Pearson r per model", "", frame)]


def plot_reliability(results_dir: Path, path: Path) -> Path:
    from schedlab.experiments.campaigns.render import _pyplot, _save

    frame = pd.read_parquet(results_dir / "results.parquet")
    plt = _pyplot()
    fig, axis = plt.subplots(figsize=(6, 4))
    x = np.arange(len(frame))
    axis.bar(x - 0.2, frame["pearson_r"], 0.4, label="ours")
    axis.bar(x + 0.2, frame["paper_r"], 0.4, label="paper", color="#bbbbbb")
    axis.set_xticks(x, [m.upper() for m in frame["model"]])
    axis.set_ylabel("Pearson r, estimated vs actual accuracy")
    axis.axhline(0, color="black", linewidth=0.8)
    axis.legend()
    return _save(fig, path)


@study_kind
class HybridReliability(StudyKind):
    """`kind = "hybrid-reliability"`: the hybrid study's Tab. 3, reliability models beside the paper's r."""

    kind, label, record = "hybrid-reliability", "reliability study", "reliability.json"
    figure = ("reliability.png", "Pearson r, ours vs paper")
    plot = staticmethod(plot_reliability)
    sections = staticmethod(sections)

    def load(self, path: str | Path) -> dict[str, Any]:
        return load_reliability_study(path)

    def describe(self, spec: dict[str, Any], path: str) -> list[str]:
        return [f"reliability study {spec['name']!r} ({path}): {', '.join(spec['models'])} retrained every "
                f"{spec['retrain_s']:g} s on {spec['source']}"]

    def run(self, spec: dict[str, Any], out: Path, *, workers: int, say: Any, unit_done: Any) -> str:
        frame = run_reliability_study(spec, out, progress=say)
        return f"reliability study {spec['name']!r}: {len(frame)} models -> {out / 'results.parquet'}"

    def paper_table(self, results_dir: Path, frames: dict[str, Any], locations: dict[str, str]) -> tuple[str, Any]:
        from schedlab.experiments.papers.causes import final_cause
        from schedlab.experiments.papers.evidence import read_results
        from schedlab.experiments.papers.reproductions import COLUMNS, agrees, display_path, evidence_places

        study = self.read_record(results_dir)
        results = read_results(results_dir)
        frames.setdefault(study["name"], results)
        table = paper_row(results, study)
        if table.empty:
            return study["name"], pd.DataFrame(columns=COLUMNS)
        cause = [final_cause(study["cause"], agrees(s, z), frames=frames, study=study["name"], context={})
                 for s, z in zip(table["same sign?"], table["same size?"], strict=True)]
        return study["name"], pd.DataFrame({
            "row": table["row"], "where": Path(study["source"]).name, "source": "paper",
            "paper": table["paper figure"], "ours": table["ours"], "same sign?": table["same sign?"],
            "same size?": table["same size?"], "cause": cause,
            "evidence": evidence_places(study["cause"], study["name"], study.get("evidence", ""), locations,
                                        display_path(results_dir))})
