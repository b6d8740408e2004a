"""Run-time distributions: quantile and censoring-aware predictors, with scikit-learn's contract.

A scheduler that plans with a quantile, or backfills by the probability that a job ends in time,
needs more than one number per job. Both predictors here give `predict(X)` (the median, seconds)
and `predict_quantiles(X, qs)` (one column per level, seconds, never decreasing across levels),
from the same submission-time features as RuntimePredictor (features.py), and persist as xgboost
JSON text inside skops (no pickle).

- `QuantilePredictor(quantiles=(0.1, 0.25, 0.5, 0.75, 0.9))`: xgboost's quantile loss
  (`reg:quantileerror`, one model for all levels) on the log run time: a quantile of log T is the
  log of T's quantile, and the log spreads seconds-to-days targets. xgboost's levels can cross
  (25 of 1,000 adjacent pairs in a quick test): each row's levels are sorted. A level between two
  fitted ones is interpolated linearly in log time; one outside them is the outermost fitted level.
Defaults (ours; run times are noisy, shallow trees overfit less): quantiles 100 trees of depth 4,
AFT 100 of depth 3, learning rate 0.1.

- `CensoredPredictor(censoring="aft")`: xgboost's accelerated failure time model, log T = mu(x) +
  sigma Z (Z normal or logistic). A job whose run time reached its time limit was killed there:
  its run time is only known to exceed the limit (right-censored, as in TRIP). `censoring="naive"`
  is the fit that takes the limit for the run time, the comparison the field makes. sigma is the
  maximum-likelihood scale of held-out residuals (the last `holdout_share` of the training rows,
  in their order, predicted by a model fitted on the others; censored ones count by their
  survival), then mu is refitted on every row; with fewer than 10 finished jobs held out, sigma is
  xgboost's default 1 (an online refit's first days: a scale fitted on a few residuals collapses
  the distribution onto its median). A job is censored when the caller says it was killed
  (`fit(X, y, censored=)`: its walltime, the kill time, was reached), else when its run time
  reached its `time_limit` feature (the requested time, the kill time of most traces).

Run times below 1 s are learned as 1 s (the log needs a positive time).
"""

from __future__ import annotations

import math
import weakref
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from schedlab.errors import InputError
from schedlab.predictors.features import CATEGORICAL, get_feature_set, present_columns
from schedlab.predictors.models import MODEL_KINDS, model_names, register_model
from schedlab.predictors.runtime import build_pipeline, category_order
from schedlab.predictors.xgb import xgboost_module

DISTRIBUTIONS = ("normal", "logistic")
#: sigma is measured on at least this many held-out jobs that finished; below, DEFAULT_SCALE
MIN_HELD_OUT = 10
DEFAULT_SCALE = 1.0
CENSORING = ("aft", "naive")
DEFAULT_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
_boosters: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # rebuilt, never persisted
_INPUTS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # compiled inputs per fitted predictor
_NONE = object()


def _compiled_inputs(predictor: Any) -> Any:
    from schedlab.predictors.fast_trees import compile_inputs

    found = _INPUTS.get(predictor)
    if found is None:
        found = compile_inputs(predictor.pipeline_, predictor.columns_) or _NONE
        _INPUTS[predictor] = found
    return None if found is _NONE else found


def _booster(model: Any) -> Any:
    """The fitted booster of a learner (rebuilt from its JSON text after loading)."""
    booster = _boosters.get(model)
    if booster is None:
        booster = xgboost_module().Booster()
        booster.load_model(bytearray(model.booster_json_.encode()))
        booster.set_param({"nthread": 1})
        _boosters[model] = booster
    return booster


def _train(model: Any, params: dict[str, Any], data: Any, rounds: int) -> None:
    xgboost = xgboost_module()
    booster = xgboost.train({"tree_method": "hist", "nthread": 1, "seed": model.seed, **params}, data, rounds)
    model.booster_json_ = bytes(booster.save_raw(raw_format="json")).decode()
    model.xgboost_version_ = xgboost.__version__
    _boosters[model] = booster


class XGBoostQuantiles(RegressorMixin, BaseEstimator):
    """xgboost's multi-quantile model of log run time; `predict` gives (rows, levels) seconds,
    sorted across levels. Learned state: `booster_json_`."""

    def __init__(self, *, quantiles: tuple[float, ...] = DEFAULT_QUANTILES, seed: int = 0,
                 n_estimators: int = 100, learning_rate: float = 0.1, max_depth: int = 4) -> None:
        self.quantiles = quantiles
        self.seed = seed
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth

    def fit(self, X: Any, y: Any) -> XGBoostQuantiles:  # noqa: N803 (scikit-learn's names)
        target = np.log(np.maximum(np.asarray(y, dtype=float), 1.0))
        data = xgboost_module().DMatrix(np.asarray(X, dtype=float), label=target, nthread=1)
        _train(self, {"objective": "reg:quantileerror", "quantile_alpha": np.asarray(self.quantiles, dtype=float),
                      "eta": self.learning_rate, "max_depth": self.max_depth}, data, self.n_estimators)
        return self

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        logs = np.asarray(_booster(self).inplace_predict(np.asarray(X, dtype=float)), dtype=float)
        logs = logs.reshape(len(logs), -1)
        return np.exp(np.sort(logs, axis=1))


def _log_density(z: np.ndarray, distribution: str) -> np.ndarray:
    if distribution == "normal":
        return -0.5 * z * z - 0.5 * math.log(2 * math.pi)
    return -z - 2.0 * np.logaddexp(0.0, -z)


def _log_survival(z: np.ndarray, distribution: str) -> np.ndarray:
    if distribution == "normal":
        from scipy.special import log_ndtr

        return log_ndtr(-z)
    return -np.logaddexp(0.0, z)


def standard_quantile(q: np.ndarray | float, distribution: str) -> np.ndarray:
    """The q-quantile of Z (standard normal or logistic)."""
    q = np.asarray(q, dtype=float)
    if distribution == "normal":
        from scipy.special import ndtri

        return ndtri(q)
    return np.log(q / (1.0 - q))


def fit_scale(residuals: np.ndarray, censored: np.ndarray, distribution: str) -> float:
    """The maximum-likelihood sigma of log-time residuals (exact ones by their density, censored
    ones by their survival beyond the residual)."""
    from scipy.optimize import minimize_scalar

    r, c = np.asarray(residuals, dtype=float), np.asarray(censored, dtype=bool)

    def loss(log_sigma: float) -> float:
        sigma = math.exp(log_sigma)
        z = r / sigma
        return -float(np.sum(_log_density(z[~c], distribution) - log_sigma) + np.sum(_log_survival(z[c], distribution)))

    if not (~c).any():  # only censored rows: no finite maximum; xgboost's default scale
        return 1.0
    return math.exp(minimize_scalar(loss, bounds=(-7.0, 4.0), method="bounded").x)


class XGBoostAFT(RegressorMixin, BaseEstimator):
    """xgboost's accelerated failure time model; `fit(X, y)` takes y as (run time, censored) rows.
    `predict` gives exp(mu) (the median, seconds); learned: `booster_json_`, `sigma_`."""

    def __init__(self, *, distribution: str = "normal", seed: int = 0, n_estimators: int = 100,
                 learning_rate: float = 0.1, max_depth: int = 3, holdout_share: float = 0.2) -> None:
        self.distribution = distribution
        self.seed = seed
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.holdout_share = holdout_share

    def _data(self, X: np.ndarray, runtime: np.ndarray, censored: np.ndarray) -> Any:  # noqa: N803
        data = xgboost_module().DMatrix(X, nthread=1)
        data.set_float_info("label_lower_bound", runtime)
        data.set_float_info("label_upper_bound", np.where(censored, np.inf, runtime))
        return data

    def _fit_rows(self, X: np.ndarray, runtime: np.ndarray, censored: np.ndarray) -> None:  # noqa: N803
        _train(self, {"objective": "survival:aft", "aft_loss_distribution": self.distribution,
                      "aft_loss_distribution_scale": 1.0, "eta": self.learning_rate, "max_depth": self.max_depth},
               self._data(X, runtime, censored), self.n_estimators)

    def fit(self, X: Any, y: Any) -> XGBoostAFT:  # noqa: N803
        if self.distribution not in DISTRIBUTIONS:
            raise InputError(f"unknown distribution {self.distribution!r} (known: {', '.join(DISTRIBUTIONS)})")
        X, labels = np.asarray(X, dtype=float), np.asarray(y, dtype=float).reshape(len(X), -1)  # noqa: N806
        runtime = np.maximum(labels[:, 0], 1.0)
        censored = labels[:, 1].astype(bool) if labels.shape[1] > 1 else np.zeros(len(X), dtype=bool)
        cut = round(len(X) * (1.0 - self.holdout_share))
        self.sigma_ = DEFAULT_SCALE  # too few finished jobs held out to measure it: xgboost's default scale
        if 0 < cut < len(X) and (~censored[:cut]).any() and (~censored[cut:]).sum() >= MIN_HELD_OUT:
            self._fit_rows(X[:cut], runtime[:cut], censored[:cut])
            residuals = np.log(runtime[cut:]) - np.log(self.predict(X[cut:]))
            self.sigma_ = fit_scale(residuals, censored[cut:], self.distribution)
        self._fit_rows(X, runtime, censored)
        return self

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        return np.asarray(_booster(self).inplace_predict(np.asarray(X, dtype=float)), dtype=float)


class DistributionPredictor(RegressorMixin, BaseEstimator):
    """What both predictors share: the feature pipeline, `predict` (the median), `predict_quantiles`
    and the scheduler's entry points (`predict_jobs`, `predict_rows`, `quantile_rows`)."""

    reads_requests_only: ClassVar[bool] = False
    learns_each_completion: ClassVar[bool] = False
    model: str = ""

    def _learner(self) -> Any:
        raise NotImplementedError

    def _targets(self, X: pd.DataFrame, y: np.ndarray, censored: np.ndarray | None) -> np.ndarray:  # noqa: N803
        return y

    def fit(self, X: pd.DataFrame, y: Any, censored: Any = None) -> DistributionPredictor:  # noqa: N803
        """Learn from a job table and run times (s); `censored`: which jobs were killed at their
        walltime (their run time is only known to exceed it; None: read from `time_limit`)."""
        feature_set = get_feature_set(self.features)
        self.columns_, self.dropped_ = present_columns(X, feature_set)
        if not self.columns_:
            raise InputError(f"no feature of set {self.features!r} is present in the training jobs")
        categories = [category_order(X[c].tolist()) for c in self.columns_ if c in CATEGORICAL]
        self.pipeline_ = build_pipeline(self.columns_, feature_set.user_means, "", self.seed, categories,
                                        estimator=self._learner())
        _INPUTS.pop(self, None)  # a refit replaces what was compiled
        killed = None if censored is None else np.asarray(censored, dtype=bool)
        self.pipeline_.fit(X[self.columns_], self._targets(X, np.asarray(y, dtype=float), killed))
        return self

    def _transformed(self, X: pd.DataFrame) -> Any:  # noqa: N803
        return self.pipeline_[:-1].transform(X[self.columns_])

    def predict(self, X: pd.DataFrame) -> np.ndarray:  # noqa: N803
        """The median run time, seconds."""
        return self.predict_quantiles(X, [0.5])[:, 0]

    def predict_quantiles(self, X: pd.DataFrame, qs: Any) -> np.ndarray:  # noqa: N803
        """(rows, levels) run times in seconds, not decreasing along a row when `qs` increases."""
        levels = np.asarray(qs, dtype=float).reshape(-1)
        if not len(levels) or not ((levels > 0) & (levels < 1)).all():
            raise InputError(f"quantile levels are in (0, 1), got {list(levels)}")
        return self._quantiles(self._transformed(X), levels)

    def _quantiles(self, features: Any, levels: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def predict_rows(self, rows: list[list[Any]] | list[tuple[Any, ...]]) -> np.ndarray:
        """Medians for rows of `job_values(job, self.columns_)` (a scheduler memoises by them)."""
        return self.quantile_rows(rows, 0.5)

    def quantile_rows(self, rows: list[list[Any]] | list[tuple[Any, ...]], q: float) -> np.ndarray:
        """The q-quantile for rows of `job_values(job, self.columns_)`: the same numbers as
        `predict_quantiles` on their table; a few rows at a time (a scheduler's submissions) without
        pandas when the pipeline has no per-user means (fast_trees.compile_inputs)."""
        from schedlab.predictors.features import rows_table

        if not 0.0 < q < 1.0:
            raise InputError(f"quantile levels are in (0, 1), got {q}")
        inputs = _compiled_inputs(self) if len(rows) <= 64 else None
        if inputs is None:
            return self.predict_quantiles(rows_table(rows, self.columns_), [q])[:, 0]
        return self._quantiles(inputs(rows), np.array([float(q)]))[:, 0]

    def predict_jobs(self, jobs: list[Any]) -> np.ndarray:
        from schedlab.predictors.features import job_values

        return self.predict_rows([job_values(job, self.columns_) for job in jobs])

    def compile(self) -> DistributionPredictor:
        return self


class QuantilePredictor(DistributionPredictor):
    """Several quantiles of the run time (xgboost's quantile loss on log time)."""

    model = "quantile-xgb"

    def __init__(self, *, features: str = "diws", quantiles: tuple[float, ...] = DEFAULT_QUANTILES, seed: int = 0,
                 n_estimators: int = 100, learning_rate: float = 0.1, max_depth: int = 4) -> None:
        self.features = features
        self.quantiles = quantiles
        self.seed = seed
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth

    def _learner(self) -> XGBoostQuantiles:
        levels = tuple(sorted(float(q) for q in self.quantiles))
        if not levels or not all(0 < q < 1 for q in levels) or len(set(levels)) != len(levels):
            raise InputError(f"quantiles must be distinct levels in (0, 1), got {list(self.quantiles)}")
        return XGBoostQuantiles(quantiles=levels, seed=self.seed, n_estimators=self.n_estimators,
                                learning_rate=self.learning_rate, max_depth=self.max_depth)

    def _quantiles(self, features: Any, levels: np.ndarray) -> np.ndarray:
        learner = self.pipeline_.named_steps["model"]
        fitted = np.asarray(learner.quantiles, dtype=float)
        logs = np.log(learner.predict(features))
        if len(fitted) == 1:
            return np.exp(np.repeat(logs, len(levels), axis=1))
        at = np.clip(levels, fitted[0], fitted[-1])
        upper = np.clip(np.searchsorted(fitted, at, side="left"), 1, len(fitted) - 1)
        weight = (at - fitted[upper - 1]) / (fitted[upper] - fitted[upper - 1])
        return np.exp(logs[:, upper - 1] * (1.0 - weight) + logs[:, upper] * weight)


class CensoredPredictor(DistributionPredictor):
    """A run-time distribution from jobs some of which were killed at their time limit (AFT)."""

    def __init__(self, *, features: str = "diws", censoring: str = "aft", distribution: str = "normal",
                 seed: int = 0, n_estimators: int = 100, learning_rate: float = 0.1, max_depth: int = 3,
                 holdout_share: float = 0.2) -> None:
        self.features = features
        self.censoring = censoring
        self.distribution = distribution
        self.seed = seed
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.holdout_share = holdout_share

    @property
    def model(self) -> str:  # type: ignore[override]
        return "aft" if self.censoring == "aft" else "aft-naive"

    def _learner(self) -> XGBoostAFT:
        if self.censoring not in CENSORING:
            raise InputError(f"unknown censoring {self.censoring!r} (known: {', '.join(CENSORING)})")
        return XGBoostAFT(distribution=self.distribution, seed=self.seed, n_estimators=self.n_estimators,
                          learning_rate=self.learning_rate, max_depth=self.max_depth,
                          holdout_share=self.holdout_share)

    def _targets(self, X: pd.DataFrame, y: np.ndarray, censored: np.ndarray | None) -> np.ndarray:  # noqa: N803
        """(observed run time, censored): a killed job's run time (the caller's `censored`, else one
        at or past its `time_limit`, which it then is) is censored (`aft`) or taken as exact
        (`naive`)."""
        if censored is not None:
            killed, observed = censored, y
        else:
            limit = X["time_limit"].to_numpy(dtype=float) if "time_limit" in X else np.full(len(y), np.nan)
            killed = np.isfinite(limit) & (y >= limit)
            observed = np.where(killed, limit, y)
        return np.column_stack([observed, killed & (self.censoring == "aft")])

    def _quantiles(self, features: Any, levels: np.ndarray) -> np.ndarray:
        learner = self.pipeline_.named_steps["model"]
        mu = np.log(learner.predict(features))
        z = standard_quantile(levels, learner.distribution)
        return np.exp(mu[:, None] + learner.sigma_ * z[None, :])

    def survival(self, X: pd.DataFrame, t_s: Any) -> np.ndarray:  # noqa: N803
        """P(run time > t) per row (t: seconds, one per row or one for all)."""
        learner = self.pipeline_.named_steps["model"]
        mu = np.log(learner.predict(self._transformed(X)))
        z = (np.log(np.maximum(np.asarray(t_s, dtype=float), 1e-9)) - mu) / learner.sigma_
        return np.exp(_log_survival(z, learner.distribution))


def make_distribution_predictor(*, model: str, features: str = "diws", seed: int = 0,
                                params: dict[str, Any] | None = None) -> DistributionPredictor:
    """The unfitted predictor a DISTRIBUTION_MODELS name gives (`params`: its keyword arguments)."""
    kind = MODEL_KINDS.get(model)
    if kind is None or kind.family != "distribution":
        raise InputError(f"unknown distribution model {model!r} (known: {', '.join(DISTRIBUTION_MODELS)})")
    made: DistributionPredictor = kind.make(features=features, seed=seed)
    if params:
        try:
            made.set_params(**params)
        except ValueError as exc:
            raise InputError(f"model {model!r}: {exc}") from None
    return made


@register_model("quantile-xgb", "xgboost quantile loss on log run time (levels 0.1, 0.25, 0.5, 0.75, 0.9; 100 trees, "
                "eta 0.1, depth 4), levels sorted per row", "distribution")
def _quantiles(*, features: str, seed: int) -> DistributionPredictor:
    return QuantilePredictor(features=features, seed=seed)


@register_model("aft", "xgboost accelerated failure time (survival:aft, normal; 100 trees, eta 0.1, depth 3): jobs "
                "killed at their time limit are right-censored there; sigma fitted on held-out residuals",
                "distribution")
def _censored(*, features: str, seed: int) -> DistributionPredictor:
    return CensoredPredictor(features=features, seed=seed, censoring="aft")


@register_model("aft-naive", "aft with the time limit taken as a killed job's run time (no censoring): the naive "
                "comparison", "distribution")
def _naive(*, features: str, seed: int) -> DistributionPredictor:
    return CensoredPredictor(features=features, seed=seed, censoring="naive")


#: model name -> description (predictor train --model, predictor studies)
DISTRIBUTION_MODELS = model_names("distribution")
