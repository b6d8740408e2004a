"""Predictor vs schedule: does the predictor that wins on an ML metric give the better schedule?

A campaign with a `[predictions]` table runs schedulers that plan with predictions (each run's
`pred_*` columns: its planning estimates against the run times, recorded by the runner) beside a
baseline (the user's request: EASY):

    [predictions]
    baseline = "easy"                    # the label each arm's schedule gain is measured against
    metric = "mean_bounded_slowdown"     # the schedule metric of the gain (lower is better)

Per trace (workload) and arm: the medians over the instances (windows, seeds) of the unperturbed
complete runs of every ML metric beside AVGbsld, mean wait and utilisation, and the gain: the
median over instances of 1 - metric / baseline's on the same instance and platform. Per scheduler
(its arms compare predictors), ML metric and trace: Spearman's rank correlation, over the
scheduler's arms, between "better on the metric" (each oriented so that larger is better: -MAE,
|bias| negated, R², ...) and the gain; across traces, its mean and the traces where it is positive.
A metric "predicts the schedule" when its mean rho is at least 0.5 and positive on at least two
thirds of the traces with rho, "does not" when its mean |rho| is below 0.3, "weakly" (or
"inversely") otherwise: the words are computed here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.errors import InputError

#: pred_* column -> (heading, orientation: +1 when larger is better, -1 when smaller, 0: closer to 0)
ML_METRICS: dict[str, tuple[str, int]] = {
    "pred_mae_min": ("MAE (min)", -1), "pred_rmse_min": ("RMSE (min)", -1), "pred_r2": ("R²", 1),
    "pred_bias_min": ("signed bias (min)", 0), "pred_underestimate_pct": ("underestimated (%)", -1),
    "pred_kill_pct": ("killed if walltime (%)", -1), "pred_wasted_core_h": ("wasted core-h", -1),
    "pred_calibration_error": ("calibration error", -1), "pred_pinball_mean_min": ("pinball (min)", -1),
}
SCHEDULE_METRICS = {"mean_bounded_slowdown": "AVGbsld", "mean_waiting_time_s": "mean wait (s)",
                    "utilisation": "utilisation"}
#: schedule metrics where larger is better (the gain is then metric / baseline's - 1)
HIGHER_IS_BETTER = ("utilisation",)
PREDICTS, WEAKLY, DOES_NOT = 0.5, 0.3, "does not predict the schedule"


def load_predictions(raw: Any, at: Any, labels: list[str]) -> dict[str, Any]:
    """The campaign's `[predictions]` table, checked."""
    if not isinstance(raw, dict) or set(raw) - {"baseline", "metric"}:
        raise at.error("expected a table { baseline = LABEL, metric = METRIC }", key="predictions")
    baseline = raw.get("baseline")
    if baseline not in labels:
        raise at.error(f"expected one of the campaign's scheduler labels ({', '.join(labels)})", "predictions", 0,
                       "baseline")
    metric = raw.get("metric", "mean_bounded_slowdown")
    if metric not in SCHEDULE_METRICS:
        raise at.error(f"expected one of {', '.join(SCHEDULE_METRICS)}", "predictions", 0, "metric")
    return {"baseline": baseline, "metric": metric}


def _runs(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["complete"].astype(bool) & frame["repetition"].isna()]


def gains(frame: pd.DataFrame, spec: dict[str, Any]) -> pd.DataFrame:
    """Each unperturbed complete run with `gain`: 1 - its metric / the baseline's on the same
    instance and platform (metric / baseline's - 1 for utilisation, where larger is better; NaN
    without a baseline run there)."""
    runs = _runs(frame).copy()
    metric = spec["metric"]
    keys = ["workload", "instance", "platform"]
    base = runs[runs["scheduler"] == spec["baseline"]].groupby(keys)[metric].median().rename("baseline_value")
    runs = runs.join(base, on=keys)
    ratio = runs[metric] / runs["baseline_value"].where(runs["baseline_value"] != 0)
    runs["gain"] = ratio - 1.0 if metric in HIGHER_IS_BETTER else 1.0 - ratio
    return runs


def gain_text(spec: dict[str, Any]) -> str:
    metric, baseline = spec["metric"], spec["baseline"]
    return (f"{metric} / {baseline}'s - 1" if metric in HIGHER_IS_BETTER else f"1 - {metric} / {baseline}'s")


def trace_tables(frame: pd.DataFrame, spec: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Per workload: one row per arm (the baseline first), medians over instances."""
    runs = gains(frame, spec)
    columns = [c for c in ML_METRICS if c in runs] + [c for c in SCHEDULE_METRICS if c in runs] + ["gain"]
    tables = {}
    for workload, group in runs.groupby("workload", sort=True):
        table = group.groupby("scheduler", sort=False)[columns].median()
        table.insert(0, "instances", group.groupby("scheduler", sort=False)["instance"].nunique())
        order = [spec["baseline"], *sorted(label for label in table.index if label != spec["baseline"])]
        table = table.loc[[label for label in order if label in table.index]]
        table["gain"] = 100.0 * table["gain"]
        headings = {**{c: h for c, (h, _) in ML_METRICS.items()}, **SCHEDULE_METRICS, "gain": f"gain in "
                    f"{SCHEDULE_METRICS[spec['metric']]} (%)"}
        tables[str(workload)] = table.rename(columns=headings).reset_index().rename(columns={"scheduler": "arm"})
    return tables


def _oriented(values: pd.Series, orientation: int) -> pd.Series:
    return -values.abs() if orientation == 0 else orientation * values


def _spearman(x: pd.Series, y: pd.Series) -> float:
    both = pd.concat([x, y], axis=1).dropna()
    if len(both) < 3 or both.iloc[:, 0].nunique() < 2 or both.iloc[:, 1].nunique() < 2:
        return math.nan
    ranks = both.rank()
    return float(ranks.iloc[:, 0].corr(ranks.iloc[:, 1]))


def correlations(frame: pd.DataFrame, spec: dict[str, Any]) -> pd.DataFrame:
    """Per scheduler (the arms of one scheduler compare its predictors; another scheduler changes
    the schedule for reasons of its own) and ML metric: Spearman's rho per trace between the
    oriented metric and the gain, over that scheduler's arms (medians over instances), its mean, the
    traces where it is positive, and the verdict in words. A scheduler with fewer than 3 arms is
    left out."""
    runs = gains(frame, spec)
    runs = runs[runs["scheduler"] != spec["baseline"]]
    rows = []
    workloads = sorted(runs["workload"].unique())
    for name, family in runs.groupby("scheduler_name", sort=True):
        if family["scheduler"].nunique() < 3:
            continue
        for column, (heading, orientation) in ML_METRICS.items():
            if column not in family or family[column].isna().all():
                continue
            rhos = {}
            for workload in workloads:
                arms = family[family["workload"] == workload].groupby("scheduler")[[column, "gain"]].median()
                rhos[workload] = _spearman(_oriented(arms[column], orientation), arms["gain"])
            known = [r for r in rhos.values() if not math.isnan(r)]
            mean = sum(known) / len(known) if known else math.nan
            positive = sum(r > 0 for r in known)
            rows.append({"scheduler": name, "arms": family["scheduler"].nunique(), "metric": heading,
                         **{f"rho {w}": rhos[w] for w in workloads}, "mean rho": mean,
                         "traces with rho > 0": f"{positive} of {len(known)}",
                         "verdict": verdict(mean, positive, len(known))})
    return pd.DataFrame(rows)


def verdict(mean: float, positive: int, known: int) -> str:
    """A metric's verdict from its rank correlations with the schedule gain across traces."""
    if not known or math.isnan(mean):
        return "not measured (fewer than 3 arms with different values)"
    if mean >= PREDICTS and positive * 3 >= 2 * known:
        return "predicts the schedule"
    if abs(mean) < WEAKLY:
        return DOES_NOT
    return "predicts it weakly" if mean > 0 else "predicts it inversely"


def plain_statement(table: pd.DataFrame) -> str:
    """Which metrics predict scheduling quality and which do not, per scheduler, from the
    correlation table."""
    if table.empty:
        return "No scheduler with 3 arms with predictions: nothing to correlate."
    order = ["predicts the schedule", "predicts it weakly", "predicts it inversely", DOES_NOT]
    sentences = []
    for name, rows in table.groupby("scheduler", sort=True):
        groups: dict[str, list[str]] = {}
        for _, row in rows.iterrows():
            groups.setdefault(row["verdict"], []).append(f"{row['metric']} (mean rho {row['mean rho']:.2f})")
        parts = [f"{verdict_name} {', '.join(groups[verdict_name])}" for verdict_name in order
                 if verdict_name in groups]
        parts += [f"{verdict_name}: {', '.join(items)}" for verdict_name, items in groups.items()
                  if verdict_name not in order]
        sentences.append(f"Under {name}: " + "; ".join(parts) + ".")
    return " ".join(sentences)


def plot_scatter(frame: pd.DataFrame, spec: dict[str, Any], path: Path) -> Path | None:
    """Each ML metric (x) against the schedule gain (y), one point per arm and trace."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = gains(frame, spec)
    runs = runs[runs["scheduler"] != spec["baseline"]]
    metrics = [c for c in ML_METRICS if c in runs and runs[c].notna().any()]
    if not metrics or runs.empty:
        return None
    per_arm = runs.groupby(["workload", "scheduler"])[[*metrics, "gain"]].median().reset_index()
    columns = 3
    rows = math.ceil(len(metrics) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False)
    for ax, column in zip(axes.flat, metrics, strict=False):
        for workload, group in per_arm.groupby("workload"):
            ax.scatter(group[column], 100.0 * group["gain"], s=18, label=str(workload))
        ax.axhline(0.0, color="grey", linewidth=0.6)
        positive = per_arm[column].dropna().abs()
        positive = positive[positive > 0]
        if len(positive) and positive.max() > 1000 * positive.min():  # orders of magnitude: a symmetric log axis
            ax.set_xscale("symlog", linthresh=float(positive.quantile(0.1)))
            if (per_arm[column].dropna() >= 0).all():
                ax.set_xlim(left=0.0)
        ax.set_xlabel(ML_METRICS[column][0])
        ax.set_ylabel(f"gain in {SCHEDULE_METRICS[spec['metric']]} (%)")
    for ax in list(axes.flat)[len(metrics):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), fontsize=8)
    figure.suptitle(f"ML metric vs schedule gain over {spec['baseline']} (one point per arm and trace)")
    figure.tight_layout(rect=(0, 0.06, 1, 0.96))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def coverage_columns(frame: pd.DataFrame) -> list[tuple[float, str]]:
    """(level, column) of the recorded coverage per quantile level, in level order."""
    found = [(int(c[len("pred_coverage_q"):]) / 100.0, c) for c in frame.columns if c.startswith("pred_coverage_q")]
    return sorted(found)


def plot_calibration(frame: pd.DataFrame, spec: dict[str, Any], path: Path) -> Path | None:
    """The calibration curve of each distribution arm per trace: the share of run times at or below
    the predicted q-quantile against q (medians over instances); the diagonal is calibrated."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = coverage_columns(frame)
    runs = _runs(frame)
    if not levels or runs[[c for _, c in levels]].isna().all().all():
        return None
    workloads = sorted(runs["workload"].unique())
    columns = min(4, len(workloads))
    rows = math.ceil(len(workloads) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(max(3.6 * columns, 6.5), 3.4 * rows), squeeze=False)
    for ax, workload in zip(axes.flat, workloads, strict=False):
        arms = runs[runs["workload"] == workload].groupby("scheduler")[[c for _, c in levels]].median().dropna()
        for arm, row in arms.iterrows():
            ax.plot([q for q, _ in levels], row.tolist(), marker="o", markersize=3, label=str(arm))
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.6, linestyle="--")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(str(workload), fontsize=9)
        ax.set_xlabel("quantile level")
        ax.set_ylabel("share of run times below it")
    for ax in list(axes.flat)[len(workloads):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8)
    figure.suptitle("Calibration of the distribution predictors (diagonal: calibrated)", fontsize=10)
    figure.tight_layout(rect=(0, 0.08, 1, 0.95))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def sections(frame: pd.DataFrame, spec: dict[str, Any], out: Path) -> tuple[list[tuple[str, str, Any]], list[Path]]:
    """The report's sections: a table per trace, the correlations with the plain statement, the scatter."""
    if "pred_mae_min" not in frame:
        raise InputError("no run planned with predictions (no pred_* columns): a [predictions] campaign needs "
                         "schedulers that use predictors (diws, easy-predicted, easy-prob, easy-pp)")
    parts: list[tuple[str, str, Any]] = []
    for workload, table in trace_tables(frame, spec).items():
        parts.append((f"Predictions and schedules: {workload}", f"Medians over instances of unperturbed complete "
                      f"runs; gain = {gain_text(spec)} on the same instance.", table))
    table = correlations(frame, spec)
    parts.append(("Which ML metric predicts the schedule", plain_statement(table) + " Spearman's rho per trace "
                  "between the metric (oriented: larger is better) and the gain, over one scheduler's arms; "
                  f"'predicts' needs mean rho >= {PREDICTS} and rho > 0 on two thirds of the traces, 'does not' "
                  f"mean |rho| < {WEAKLY}.", table))
    plots = []
    made = plot_scatter(frame, spec, out / "prediction_scatter.png")
    if made is not None:
        plots.append(made)
        parts.append(("ML metrics against the schedule gain", "", made))
    made = plot_calibration(frame, spec, out / "calibration.png")
    if made is not None:
        plots.append(made)
        parts.append(("Calibration of the distribution predictors", "Per trace and arm, the median over instances "
                      "of the share of run times at or below each predicted quantile (recorded at submission); "
                      "a killed job's run time is its limit.", made))
    return parts, plots
