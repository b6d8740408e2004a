"""Reliability (meta-learning) models of the hybrid study: how accurate will a runtime prediction be?

Inputs: Tab. 2's 16 features and the prediction p^ (`online.reliability_row`); target: the
accuracy min(p^, p) / max(p^, p) of completed jobs. Kinds:

- `gbt`: stochastic gradient boosting (Friedman 2002: each stage fits a depth-3 tree on 80% of the
  rows drawn without replacement), scikit-learn's GradientBoostingRegressor(subsample=0.8), 100
  stages, learning rate 0.1 (its defaults; the study gives none), on features binned to at most 64
  quantiles of the training rows (as histogram boosting does, xgboost's `hist`: splits fall on bin
  edges; a retrain on Atlas's jobs takes a third of the time);
- `gbt-xgb`: the same with xgboost (subsample 0.8, one thread), optional;
- `dt`: one decision tree (depth 8, at least 20 rows per leaf: an unbounded tree memorises the noise
  of accuracies);
- `cnk`: Bosnic & Kononenko's k-NN estimate, as we read it (the study gives no formula): the accuracy
  between p^ and the mean run time of the k = 5 nearest completed jobs in standardised Tab. 2 space.
  It is fitted on run times (`runtime_s=`), not on accuracies.

Estimates are clipped to [0, 1]. Models are retrained from scratch (the study rebuilds its model every
24 h on all completed jobs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin

from schedlab.predictors.online import accuracy

RELIABILITY_MODELS = ("gbt", "gbt-xgb", "dt", "cnk")


class QuantileBins(TransformerMixin, BaseEstimator):
    """Each feature replaced by the index of its bin among at most `max_bins` quantile bins of the
    rows it was fitted on (trees split on bin edges; fewer distinct values, faster splits)."""

    def __init__(self, *, max_bins: int = 64) -> None:
        self.max_bins = max_bins

    def fit(self, X: Any, y: Any = None) -> QuantileBins:  # noqa: N803
        x = np.asarray(X, dtype=float)
        levels = np.linspace(0.0, 1.0, self.max_bins + 1)[1:-1]
        self.edges_ = [np.unique(np.quantile(column, levels)) for column in x.T]
        return self

    def transform(self, X: Any) -> np.ndarray:  # noqa: N803
        x = np.asarray(X, dtype=float)
        return np.column_stack([np.searchsorted(edges, column, side="right")
                                for edges, column in zip(self.edges_, x.T, strict=True)]).astype(np.float32)


class ReliabilityModel(RegressorMixin, BaseEstimator):
    """Estimated accuracy of a prediction from (Tab. 2 features, p^)."""

    def __init__(self, *, kind: str = "gbt", seed: int = 0, subsample: float = 0.8, neighbours: int = 5) -> None:
        self.kind = kind
        self.seed = seed
        self.subsample = subsample
        self.neighbours = neighbours

    def fit(self, X: Any, y: Any, *, runtime_s: Any = None) -> ReliabilityModel:  # noqa: N803
        x = np.asarray(X, dtype=float)
        if self.kind not in RELIABILITY_MODELS:
            raise ValueError(f"unknown reliability model {self.kind!r} (known: {', '.join(RELIABILITY_MODELS)})")
        self.n_features_in_ = x.shape[1]
        self.n_rows_ = len(x)
        if self.kind == "cnk":
            from sklearn.neighbors import KNeighborsRegressor
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            if runtime_s is None:
                raise ValueError("cnk is fitted on run times: pass runtime_s=")
            self.model_ = make_pipeline(StandardScaler(), KNeighborsRegressor(n_neighbors=min(self.neighbours, len(x))))
            self.model_.fit(x[:, :-1], np.asarray(runtime_s, dtype=float))
            return self
        target = np.asarray(y, dtype=float)
        if self.kind == "gbt":
            from sklearn.ensemble import GradientBoostingRegressor
            from sklearn.pipeline import make_pipeline

            self.model_ = make_pipeline(QuantileBins(), GradientBoostingRegressor(subsample=self.subsample,
                                                                                  random_state=self.seed))
        elif self.kind == "dt":
            from sklearn.tree import DecisionTreeRegressor

            self.model_ = DecisionTreeRegressor(max_depth=8, min_samples_leaf=20, random_state=self.seed)
        else:
            from schedlab.predictors.xgb import XGBoostJSON

            self.model_ = XGBoostJSON(seed=self.seed, subsample=self.subsample)
        self.model_.fit(x, target)
        return self

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        x = np.atleast_2d(np.asarray(X, dtype=float))
        if self.kind == "cnk":
            neighbours_mean_s = self.model_.predict(x[:, :-1])
            return accuracy(np.maximum(x[:, -1], 1e-9), np.maximum(neighbours_mean_s, 1e-9))
        return np.clip(self.model_.predict(x), 0.0, 1.0)
