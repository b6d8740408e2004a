"""Prediction quality in the DIWS study's layout (errors in minutes).

- MAE, MSE, RMSE, R² of prediction vs actual run time;
- "95% interval": the 2.5th and 97.5th percentiles of the **absolute** error (the study's lower
  bound is 0.00 everywhere, which only this reading gives);
- over- (prediction > actual), under- and exact (|error| <= 0.5 s) shares, with min / max / mean of
  the errors in each class and the share of them under 60 minutes;
- effectiveness, an interpretation of the study's undefined figure (Loreti, Leone, Borghesi,
  "Duration-Informed Workload Scheduler", arXiv 2604.09599, §9): per job e = (|limit - actual| -
  |prediction - actual|) / |limit - actual|; "valid" = mean of e over jobs whose prediction is not
  below the actual run time; "general" = mean over all jobs with underestimates counted as 0; jobs
  whose limit equals their run time are left out;
- the share of jobs whose time limit underestimates their run time;
- what matters to a scheduler that plans with the prediction: the signed bias (mean of prediction -
  actual), the underestimate share (prediction < actual: the plan is late), the kill share (the
  jobs that would be killed if the prediction, capped by the time limit, were the walltime) and
  the core-hours those kills waste (each killed job's cores times the prediction it ran for);
- for a distribution (`quantile_report`): per level q, the coverage (share of run times at or below
  the predicted q-quantile: q for a calibrated predictor, the calibration curve) and the pinball
  loss (the quantile loss, minutes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: column -> (heading, how to read it from a prediction report)
METRICS: dict[str, tuple[str, Callable[[dict[str, Any]], Any]]] = {
    "mae_min": ("MAE (min)", lambda r: r["mae_min"]),
    "mse_min2": ("MSE (min²)", lambda r: r["mse_min2"]),
    "rmse_min": ("RMSE (min)", lambda r: r["rmse_min"]),
    "r2": ("R²", lambda r: r["r2"]),
    "interval95_high_min": ("95% interval of abs. error, upper (min)", lambda r: (r["interval95_abs_error_min"] or
                                                                             [None, None])[1]),
    "over_pct": ("over: share (%)", lambda r: _pct(r["over"]["share"])),
    "over_mean_min": ("over: mean error (min)", lambda r: r["over"]["mean"]),
    "over_lt60_pct": ("over: error < 60 min (%)", lambda r: _pct(r["over"]["share_under_60min"])),
    "under_pct": ("under: share (%)", lambda r: _pct(r["under"]["share"])),
    "under_mean_min": ("under: mean error (min)", lambda r: r["under"]["mean"]),
    "under_lt60_pct": ("under: error < 60 min (%)", lambda r: _pct(r["under"]["share_under_60min"])),
    "exact_pct": ("exact: share (%)", lambda r: _pct(r["exact"]["share"])),
    "effectiveness_general_pct": ("effectiveness general (%)", lambda r: _pct(r["effectiveness_general"])),
    "effectiveness_valid_pct": ("effectiveness valid (%)", lambda r: _pct(r["effectiveness_valid"])),
    "bias_min": ("signed bias (min)", lambda r: r.get("bias_min")),
    "underestimate_pct": ("underestimated: share (%)", lambda r: _pct(r.get("share_underestimated"))),
    "kill_pct": ("killed if the walltime: share (%)", lambda r: _pct(r.get("share_killed"))),
    "wasted_core_h": ("killed if the walltime: core-hours wasted", lambda r: r.get("wasted_core_h")),
}


def _pct(value: Any) -> Any:
    return None if value is None else 100.0 * value


def flat_report(report: dict[str, Any]) -> dict[str, Any]:
    """The report as one flat row (CSV, tables): METRICS' columns, shares in %."""
    return {"nb_jobs": report["nb_jobs"], **{column: read(report) for column, (_, read) in METRICS.items()}}


def prediction_report(actual_s: np.ndarray, predicted_s: np.ndarray, limit_s: np.ndarray,
                      cores: np.ndarray | None = None) -> dict[str, Any]:
    """Errors of point predictions (`cores`: each job's resources, for the core-hours of kills;
    1 each when not given)."""
    actual = np.asarray(actual_s, dtype=float) / 60.0
    predicted = np.asarray(predicted_s, dtype=float) / 60.0
    limit = np.asarray(limit_s, dtype=float) / 60.0
    error = predicted - actual
    absolute = np.abs(error)
    exact = absolute <= 0.5 / 60.0
    over = (error > 0) & ~exact
    under = (error < 0) & ~exact
    n = len(actual)
    variance = float(np.sum((actual - actual.mean()) ** 2)) if n else 0.0

    def errors(mask: np.ndarray) -> dict[str, Any]:
        values = absolute[mask]
        return {"share": float(mask.mean()) if n else None,
                "min": float(values.min()) if len(values) else None,
                "max": float(values.max()) if len(values) else None,
                "mean": float(values.mean()) if len(values) else None,
                "share_under_60min": float((values < 60.0).mean()) if len(values) else None}

    known = np.isfinite(limit)
    gap = np.abs(limit - actual)
    usable = known & (gap > 0)
    effect = np.where(usable, (gap - absolute) / np.where(usable, gap, 1.0), np.nan)
    valid = usable & (error >= 0)
    return {
        "nb_jobs": n,
        "mae_min": float(absolute.mean()) if n else None,
        "mse_min2": float((error ** 2).mean()) if n else None,
        "rmse_min": float(np.sqrt((error ** 2).mean())) if n else None,
        "r2": float(1.0 - np.sum(error ** 2) / variance) if variance > 0 else None,
        "interval95_abs_error_min": ([float(np.percentile(absolute, 2.5)), float(np.percentile(absolute, 97.5))]
                                     if n else None),
        "over": errors(over), "under": errors(under), "exact": {"share": float(exact.mean()) if n else None},
        "effectiveness_general": (float(np.nanmean(np.where(valid, effect, 0.0)[usable]))
                                  if usable.any() else None),
        "effectiveness_valid": float(np.nanmean(effect[valid])) if valid.any() else None,
        "share_limit_underestimates": float((known & (limit < actual)).mean()) if n else None,
        **_planning(actual, predicted, limit, np.ones(n) if cores is None else np.asarray(cores, dtype=float)),
    }


def _planning(actual: np.ndarray, predicted: np.ndarray, limit: np.ndarray, cores: np.ndarray) -> dict[str, Any]:
    """What a scheduler planning with the predictions meets (times in minutes)."""
    n = len(actual)
    as_walltime = np.where(np.isfinite(limit), np.minimum(predicted, limit), predicted)
    killed = as_walltime < actual
    return {"bias_min": float((predicted - actual).mean()) if n else None,
            "share_underestimated": float((predicted < actual).mean()) if n else None,
            "share_killed": float(killed.mean()) if n else None,
            "wasted_core_h": float(np.sum(np.where(killed, as_walltime * cores, 0.0)) / 60.0)}


def pinball_loss(actual: np.ndarray, quantile: np.ndarray, level: float) -> float:
    """Mean quantile (pinball) loss of predicted `level`-quantiles, in the unit of the inputs."""
    gap = np.asarray(actual, dtype=float) - np.asarray(quantile, dtype=float)
    return float(np.mean(np.maximum(level * gap, (level - 1.0) * gap))) if len(gap) else math.nan


def quantile_report(actual_s: np.ndarray, quantiles_s: np.ndarray, levels: Any) -> dict[str, Any]:
    """Calibration of predicted quantiles ((jobs, levels) seconds): per level, the coverage (share
    of run times at or below it; equal to the level when calibrated) and the pinball loss (minutes)."""
    actual = np.asarray(actual_s, dtype=float)
    quantiles = np.asarray(quantiles_s, dtype=float).reshape(len(actual), -1)
    levels = [float(q) for q in levels]
    return {"levels": levels,
            "coverage": [float((actual <= quantiles[:, k]).mean()) if len(actual) else None
                         for k in range(len(levels))],
            "pinball_min": [pinball_loss(actual / 60.0, quantiles[:, k] / 60.0, q) for k, q in enumerate(levels)]}


def calibration_error(report: dict[str, Any]) -> float:
    """The mean |coverage - level| of a quantile report (0: calibrated)."""
    return float(np.mean([abs(c - q) for c, q in zip(report["coverage"], report["levels"], strict=True)]))


def format_report(report: dict[str, Any]) -> str:
    def pct(value: Any) -> str:
        return "-" if value is None else f"{100 * value:.2f}%"

    def num(value: Any) -> str:
        return "-" if value is None else f"{value:.2f}"

    lines = [f"{report['nb_jobs']} jobs (errors in minutes)",
             f"  MAE {num(report['mae_min'])}  MSE {num(report['mse_min2'])}  RMSE {num(report['rmse_min'])}  "
             f"R2 {num(report['r2'])}",
             "  95% interval of |error| [" + ", ".join(num(v) for v in report["interval95_abs_error_min"] or []) + "]"]
    for name in ("over", "under"):
        part = report[name]
        lines.append(f"  {name:<5} {pct(part['share'])}  min/max/mean {num(part['min'])} / {num(part['max'])} / "
                     f"{num(part['mean'])}  under 60 min {pct(part['share_under_60min'])}")
    lines.append(f"  exact {pct(report['exact']['share'])}")
    lines.append(f"  effectiveness general {pct(report['effectiveness_general'])}, valid "
                 f"{pct(report['effectiveness_valid'])}; time limit underestimates "
                 f"{pct(report['share_limit_underestimates'])} of jobs")
    if "bias_min" in report:  # (cards written before these were measured lack them)
        lines.append(f"  signed bias {num(report['bias_min'])}; underestimated {pct(report['share_underestimated'])}; "
                     f"killed if the prediction were the walltime {pct(report['share_killed'])} "
                     f"({num(report['wasted_core_h'])} core-hours wasted)")
    if report.get("quantiles"):
        quantiles = report["quantiles"]
        lines.append("  quantile level / coverage / pinball loss (min): " + "; ".join(
            f"{q:g} / {pct(c)} / {num(p)}" for q, c, p in zip(quantiles["levels"], quantiles["coverage"],
                                                              quantiles["pinball_min"], strict=True))
            + f"; calibration error {pct(calibration_error(quantiles))}")
    return "\n".join(lines)


#: the columns a campaign's run gets when its scheduler planned with predictions (`pred_` + name)
PLANNING_COLUMNS = ("mae_min", "rmse_min", "r2", "bias_min", "underestimate_pct", "kill_pct", "wasted_core_h",
                    "calibration_error", "pinball_mean_min")


def planning_metrics(actual_s: np.ndarray, planned_s: np.ndarray, limit_s: np.ndarray, cores: np.ndarray,
                     quantiles_s: np.ndarray | None = None, levels: Any = ()) -> dict[str, Any]:
    """A run's prediction quality, flat (`pred_*` columns): the estimates the plan used against the
    run times the jobs ran (a killed job's: its limit), and, over the jobs a distribution predictor
    gave quantiles for at submission (`quantiles_s` rows of NaN for the others, e.g. before its
    first fit), their calibration error, mean pinball loss and coverage per level
    (`pred_coverage_q10` ...: the calibration curve). A plan's estimates never exceed the walltime,
    so there the kill share equals the underestimated share."""
    report = prediction_report(actual_s, planned_s, limit_s, cores=cores)
    calibration = pinball = None
    quantiles: dict[str, Any] = {}
    known = (np.isfinite(np.asarray(quantiles_s, dtype=float)).all(axis=1) if quantiles_s is not None
             else np.zeros(len(actual_s), dtype=bool))
    if len(levels) and known.any():  # over the jobs a distribution was given for
        quantiles = quantile_report(np.asarray(actual_s)[known], np.asarray(quantiles_s)[known], levels)
        calibration = calibration_error(quantiles)
        pinball = float(np.mean(quantiles["pinball_min"]))
    values = {"mae_min": report["mae_min"], "rmse_min": report["rmse_min"], "r2": report["r2"],
              "bias_min": report["bias_min"], "underestimate_pct": _pct(report["share_underestimated"]),
              "kill_pct": _pct(report["share_killed"]), "wasted_core_h": report["wasted_core_h"],
              "calibration_error": calibration, "pinball_mean_min": pinball}
    coverage = {f"pred_coverage_q{round(100 * level)}": (quantiles["coverage"][k] if calibration is not None
                                                          else None) for k, level in enumerate(levels)}
    return {**{f"pred_{name}": values[name] for name in PLANNING_COLUMNS}, **coverage}
