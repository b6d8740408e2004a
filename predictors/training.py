"""Training and evaluating runtime predictors on a workload file (the run times are the delays of
its profiles: offline training data, earlier than whatever the predictor is used on)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from schedlab.errors import InputError
from schedlab.predictors.distribution import DistributionPredictor, make_distribution_predictor
from schedlab.predictors.evaluate import prediction_report, quantile_report
from schedlab.predictors.features import SOURCES, get_feature_set, job_table
from schedlab.predictors.models import MODEL_KINDS, model_names
from schedlab.predictors.runtime import Predictor, data_hash, make_predictor, versions

#: every model name `predictor train` and the studies know: point models, baselines, distributions
ALL_MODELS = model_names()  # every registered model: the point ones, then the distributions
#: the levels a distribution predictor's card and `predictor evaluate` report calibration at
REPORTED_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)

SPLITS = ("random", "time", "none")


def load_training_data(path: str | Path, *, with_conversion: bool = False):
    """(jobs, their table with every known column, run times in seconds), in submission order;
    `with_conversion`: and the workload's `conversion` object (where its jobs came from: what a
    model card records so that its use on a later window of the same trace can be checked)."""
    from schedlab.workload import load_workload

    workload = load_workload(path)
    jobs = list(workload.jobs)
    if not jobs:
        raise InputError("no job to learn from", path=str(path))
    delays = [workload.profiles[job.profile].delay_s for job in jobs]
    if any(delay is None for delay in delays):
        raise InputError("runtime predictors learn from delay profiles only", path=str(path))
    data = jobs, job_table(jobs, SOURCES), np.asarray(delays, dtype=float)
    if with_conversion:
        conversion = workload.extra.get("conversion")
        return (*data, conversion if isinstance(conversion, dict) else {})
    return data


def split_indices(jobs: list[Any], kind: str, test_share: float, seed: int,
                  runtimes_s: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """random: a seeded test share; time: the last jobs by submission (the same count), so training
    data precede the test window; with `runtimes_s`, training jobs that cannot have ended before the
    first test submission (submit + run time later than it: the earliest end, a workload records no
    wait) are left out of both sets; none: everything trains, nothing tests."""
    n = len(jobs)
    if kind not in SPLITS:
        raise InputError(f"unknown split {kind!r} (known: {', '.join(SPLITS)})")
    if kind == "none":
        return np.arange(n), np.arange(0)
    if not 0 < test_share < 1:
        raise InputError(f"--test-share must be in (0, 1), got {test_share:g}")
    nb_test = max(1, round(n * test_share))
    if kind == "random":
        order = np.random.default_rng(seed).permutation(n)
        return np.sort(order[nb_test:]), np.sort(order[:nb_test])
    submits = np.array([job.submit_time_s for job in jobs], dtype=float)
    order = np.argsort(submits, kind="stable")
    train_idx, test_idx = np.sort(order[:n - nb_test]), np.sort(order[n - nb_test:])
    if runtimes_s is not None and len(test_idx):
        cut = submits[test_idx].min()
        train_idx = train_idx[submits[train_idx] + np.asarray(runtimes_s, dtype=float)[train_idx] <= cut]
    return train_idx, test_idx


def train(workload_path: str | Path, *, features: str = "diws", model: str = "dt", split: str = "time",
          test_share: float = 0.3, seed: int = 0, margin_min: float = 0.0) -> tuple[Predictor, dict[str, Any]]:
    """Fit on the training part, evaluate on the test part; returns the predictor and its card."""
    check_choices(features, model)
    *data, conversion = load_training_data(workload_path, with_conversion=True)
    return train_on(tuple(data), workload_path, features=features, model=model, split=split, test_share=test_share,
                    seed=seed, margin_min=margin_min, conversion=conversion)


def check_choices(features: str, model: str) -> None:
    """Unknown names, or xgboost missing for gb-xgb: said before any data is read."""
    get_feature_set(features)
    if model not in ALL_MODELS:
        raise InputError(f"unknown model {model!r} (known: {', '.join(ALL_MODELS)})")
    requires = MODEL_KINDS[model].requires
    if requires is not None:
        requires()


def train_on(data, workload_path: str | Path, *, features: str = "diws", model: str = "dt", split: str = "time",
             test_share: float = 0.3, seed: int = 0, margin_min: float = 0.0,
             sha256: str | None = None, conversion: dict[str, Any] | None = None,
             params: dict[str, Any] | None = None) -> tuple[Predictor | DistributionPredictor, dict[str, Any]]:
    """`train` on data already loaded (load_training_data): a study trains many models on one file.
    The card also records the fitting and prediction times (seconds; per job for predictions), and
    when the training jobs end at the earliest (`last_end_s`: submit + run time, the file's clock)
    with where they came from (`conversion`), which `model_overlap` checks a simulation against."""
    import time

    check_choices(features, model)
    jobs, table, runtimes = data
    train_idx, test_idx = split_indices(jobs, split, test_share, seed, runtimes)
    predictor = new_predictor(model=model, features=features, seed=seed, margin_min=margin_min, params=params)
    began = time.perf_counter()
    if isinstance(predictor, DistributionPredictor):  # a job killed at its walltime ran to it, censored there
        observed, killed = killed_at_walltime(jobs, runtimes)
        predictor.fit(table.iloc[train_idx].reset_index(drop=True), observed[train_idx], censored=killed[train_idx])
    else:
        predictor.fit(table.iloc[train_idx].reset_index(drop=True), runtimes[train_idx])
    fit_s = time.perf_counter() - began
    submits = np.array([job.submit_time_s for job in jobs])
    completed_before = ((conversion or {}).get("options") or {}).get("completed_before")
    card: dict[str, Any] = {
        "features": {"set": features, "description": get_feature_set(features).doc, "used": predictor.columns_,
                     "dropped_not_in_data": predictor.dropped_},
        "model": {"name": model, "description": ALL_MODELS[model], "params": predictor.get_params()},
        "training_data": {"path": str(workload_path), "sha256": sha256 or data_hash(workload_path),
                          "nb_jobs": len(train_idx),
                          "submit_window_s": [float(submits[train_idx].min()), float(submits[train_idx].max())],
                          "last_end_s": float(np.max(submits[train_idx] + runtimes[train_idx])),
                          "conversion": {key: (conversion or {})[key] for key in ("source", "ids", "submit_shift_s")
                                         if key in (conversion or {})}
                          | ({"completed_before": completed_before} if completed_before is not None else {})},
        "split": {"kind": split, "test_share": test_share if split != "none" else 0.0, "seed": seed,
                  "nb_test_jobs": len(test_idx),
                  # time split: earlier jobs still running at the first test submission, in neither set
                  "nb_left_out_running": len(jobs) - len(train_idx) - len(test_idx)},
        "seed": seed, "versions": versions(), "timing": {"fit_s": fit_s},
    }
    if len(test_idx):
        test = table.iloc[test_idx].reset_index(drop=True)
        card["split"]["test_submit_window_s"] = [float(submits[test_idx].min()), float(submits[test_idx].max())]
        began = time.perf_counter()
        predicted = predictor.predict(test)
        card["timing"]["predict_s_per_job"] = (time.perf_counter() - began) / len(test_idx)
        card["metrics"] = prediction_report(runtimes[test_idx], predicted, test["time_limit"].to_numpy(dtype=float),
                                            cores=np.array([jobs[i].res for i in test_idx], dtype=float))
        if isinstance(predictor, DistributionPredictor):
            card["metrics"]["quantiles"] = quantile_report(runtimes[test_idx],
                                                           predictor.predict_quantiles(test, REPORTED_LEVELS),
                                                           REPORTED_LEVELS)
    return predictor, card


def killed_at_walltime(jobs: list[Any], runtimes_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the run times jobs would run: capped at their walltime, whether each is killed there): what
    a censoring-aware learner is given for a workload's jobs (delays may exceed walltimes)."""
    walltimes = np.array([np.inf if job.walltime_s is None else job.walltime_s for job in jobs], dtype=float)
    runtimes = np.asarray(runtimes_s, dtype=float)
    return np.minimum(runtimes, walltimes), runtimes >= walltimes


def new_predictor(*, model: str, features: str = "diws", seed: int = 0, margin_min: float = 0.0,
                  params: dict[str, Any] | None = None) -> Predictor | DistributionPredictor:
    """The unfitted predictor of any ALL_MODELS name."""
    kind = MODEL_KINDS.get(model)
    if kind is not None and kind.family == "distribution":
        if margin_min:
            raise InputError(f"model {model!r} predicts a distribution: choose its quantile, not a margin")
        return make_distribution_predictor(model=model, features=features, seed=seed, params=params)
    return make_predictor(model=model, features=features, seed=seed, margin_min=margin_min, params=params)


def history_overlap(history, workload) -> str | None:
    """Why training on `history` would look ahead into the simulated `workload`, or None. Two
    workloads converted from the same trace compare in trace time (submit time + the converter's
    shift): a history job that is a simulated job is refused; so is a history converted with
    `completed_before` later than the first simulated submission. A history converted without it
    is refused when a job ends (submit + run, a lower bound) after that submission, and otherwise
    too: its jobs' waits are not in the file, so when they ended is unknown. Workloads from
    different sources: a job with the same id, submit time, size, walltime and run time is the same
    job."""
    def conversion(w) -> dict[str, Any]:
        value = w.extra.get("conversion")
        return value if isinstance(value, dict) else {}

    ours, theirs = conversion(workload), conversion(history)
    if ours.get("source") and theirs.get("source") and Path(str(ours["source"])).name == \
            Path(str(theirs["source"])).name:
        shift_w, shift_h = float(ours.get("submit_shift_s", 0.0)), float(theirs.get("submit_shift_s", 0.0))
        ids = {job.extra.get("swf_job", job.id.rpartition("!")[2]) for job in workload.jobs}
        same = [job for job in history.jobs if job.extra.get("swf_job", job.id.rpartition("!")[2]) in ids]
        if same and ours.get("ids") == theirs.get("ids") == "trace job numbers":
            return (f"{len(same)} of its jobs are simulated jobs too (trace job {same[0].id.rpartition('!')[2]}, "
                    "...)")
        if not workload.jobs:
            return None
        first_s = min(job.submit_time_s for job in workload.jobs) + shift_w
        before = (theirs.get("options") or {}).get("completed_before")
        if before is not None:  # what a site knew at `before`: exact, the converter saw the waits
            if float(before) > first_s:
                return (f"it holds the jobs completed before trace time {float(before):g} s, after the first "
                        f"simulated submission ({first_s:g} s)")
            return None
        for job in history.jobs:
            delay = history.profiles[job.profile].delay_s
            end_s = job.submit_time_s + shift_h + (0.0 if delay is None else delay)  # + an unknown wait
            if end_s > first_s:
                return (f"job {job.id.rpartition('!')[2]} ends at trace time {end_s:g} s or later, after the first "
                        f"simulated submission ({first_s:g} s)")
        return ("it was converted without completed_before, and its jobs' waits are not in the file: whether "
                f"they ended before the first simulated submission (trace time {first_s:g} s) is unknown; convert "
                f"it with --completed-before {first_s:g}")

    def signature(job) -> tuple[Any, ...]:  # no run time: check_inputs is never given one
        return (job.id.rpartition("!")[2], job.submit_time_s, job.res, job.walltime_s)

    simulated = {signature(job) for job in workload.jobs}
    same = [job for job in history.jobs if signature(job) in simulated]
    if same:
        return f"{len(same)} of its jobs are simulated jobs too (job {same[0].id.rpartition('!')[2]}, ...)"
    return None


def model_overlap(card: dict[str, Any], workload) -> str | None:
    """Why a saved model would look ahead into the simulated `workload`, or None. Its card must show
    training data ending before the first simulated submission, by history_overlap's rule: a model
    trained on the simulated file itself is refused; one converted from the same trace compares in
    trace time: its `completed_before` must not be later than the first simulated submission; without
    one, a job ending later (submit + run, a lower bound) is refused, and so is the rest (the waits are
    not in the file: when its jobs ended is unknown; convert with --completed-before). One from
    another source cannot hold the simulated jobs. A model without its card is refused (its training
    data are unknown)."""
    trained = card.get("training_data") if isinstance(card, dict) else None
    if not isinstance(trained, dict):
        return "its card (MODEL.card.json, written beside it by `schedlab predictor train`) is missing: what it " \
               "was trained on is unknown"
    digest = getattr(workload, "source_sha256", None)  # an InputsView (check_inputs) holds no path
    if digest is None and workload.source and Path(workload.source).is_file():
        digest = data_hash(workload.source)
    if digest is not None and trained.get("sha256") == digest:
        return "it was trained on the simulated workload itself"
    ours = workload.extra.get("conversion") if isinstance(workload.extra.get("conversion"), dict) else {}
    theirs = trained.get("conversion") or {}
    if not (ours.get("source") and theirs.get("source")
            and Path(str(ours["source"])).name == Path(str(theirs["source"])).name) or not workload.jobs:
        return None  # another source (or a card from before cards said it): no shared clock to compare
    first_s = min(job.submit_time_s for job in workload.jobs) + float(ours.get("submit_shift_s", 0.0))
    if theirs.get("completed_before") is not None:  # what a site knew then: exact
        if float(theirs["completed_before"]) > first_s:
            return (f"it learned from the jobs completed before trace time {float(theirs['completed_before']):g} s, "
                    f"after the first simulated submission ({first_s:g} s)")
        return None
    if "last_end_s" in trained:
        end_s = float(trained["last_end_s"]) + float(theirs.get("submit_shift_s", 0.0))
        if end_s > first_s:
            return (f"its training data end at trace time {end_s:g} s or later, after the first simulated "
                    f"submission ({first_s:g} s)")
    return ("its training workload was converted without completed_before, and its jobs' waits are not in the "
            f"file: whether they ended before the first simulated submission (trace time {first_s:g} s) is unknown; "
            f"train on a history converted with --completed-before {first_s:g}")


def refuse_look_ahead_model(path: str | Path, workload, *, option: str = "model") -> None:
    """InputError (naming the model file) when its card does not show training data ending before
    the simulated `workload` starts (model_overlap)."""
    import json

    from schedlab.predictors.runtime import card_path

    card_file = card_path(Path(path))
    try:
        card = json.loads(card_file.read_text(encoding="utf-8")) if card_file.is_file() else {}
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the model card: {exc}", path=str(card_file)) from None
    reason = model_overlap(card, workload)
    if reason is not None:
        raise InputError(f"{option}= overlaps the simulated workload: {reason}; predicting with it looks ahead",
                         path=str(path))
