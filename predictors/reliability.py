"""Reliability (meta-learning) models of the hybrid study: how accurate will a runtime prediction be?

Inputs: Tab. 2's 16 features and the prediction p^ (`online.reliability_row`); target: the
accuracy min(p^, p) / max(p^, p) of completed jobs. Kinds:

- `gbt`: stochastic gradient boosting (Friedman 2002: each stage fits a depth-3 tree on 80% of the
  rows drawn without replacement), scikit-learn's GradientBoostingRegressor(subsample=0.8), 100
  stages, learning rate 0.1 (its defaults; the study gives none), on features binned to at most 64
  quantiles of the training rows (as histogram boosting does, xgboost's `hist`: splits fall on bin
  edges; a retrain on Atlas's jobs takes a third of the time);
- `gbt-hist` (the hybrid's default): the same stochastic gradient boosting fitted by xgboost's
  `hist` (depth 3, 100 stages, learning rate 0.1, subsample 0.8, 64 bins per feature, no L2 penalty
  on leaves: a leaf is its rows' mean residual, as Friedman's and scikit-learn's; one thread): 10-20x
  faster to retrain than `gbt` (splits and row draws differ from scikit-learn's), predicted through
  its trees walked with numpy (predictors/xgb.py);
- `gbt-xgb`: xgboost with its own defaults (depth 6, learning rate 0.3, 256 bins; subsample 0.8);
- `dt`: one decision tree (depth 8, at least 20 rows per leaf: an unbounded tree memorises the noise
  of accuracies);
- `cnk`: Bosnic & Kononenko's k-NN estimate, as we read it (the study gives no formula): the accuracy
  between p^ and the mean run time of the k = 5 nearest completed jobs in standardised Tab. 2 space.
  It is fitted on run times (`runtime_s=`), not on accuracies.

Estimates are clipped to [0, 1]. Models are retrained from scratch (the study rebuilds its model every
24 h on all completed jobs).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin

from schedlab.predictors.online import accuracy

RELIABILITY_MODELS = ("gbt", "gbt-hist", "gbt-xgb", "dt", "cnk")


_COMPILED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # rebuilt, never persisted


def _compile(model: ReliabilityModel) -> Any:
    """rows -> estimates for a fitted `gbt` (bins, then init + sum of learning_rate x tree value in
    stage order, as GradientBoostingRegressor.predict adds them), `dt` or an xgboost kind; False
    for other kinds."""
    from bisect import bisect_right

    from schedlab.predictors.fast_trees import _all_trees, _Tree

    if model.kind == "dt":
        predict_all = _all_trees([_Tree(model.model_.tree_)])

        def dt(rows: list[list[float]]) -> list[float]:
            cast = np.asarray(rows, dtype=np.float32).astype(float).tolist()  # trees compare float32
            return [min(max(predict_all(row)[0], 0.0), 1.0) for row in cast]

        return dt
    if model.kind in ("gbt-hist", "gbt-xgb"):
        from schedlab.predictors.xgb import compiled_predictor

        predict_rows = compiled_predictor(model.model_)
        if predict_rows is None:
            return False
        return lambda rows: [min(max(value, 0.0), 1.0) for value in predict_rows(rows)]
    if model.kind != "gbt":
        return False
    bins, boosting = model.model_[0], model.model_[-1]
    edges = [e.tolist() for e in bins.edges_]
    predict_all = _all_trees([_Tree(stage[0].tree_) for stage in boosting.estimators_])
    start, rate = float(boosting.init_.constant_[0, 0]), float(boosting.learning_rate)

    def gbt(rows: list[list[float]]) -> list[float]:
        out = []
        for row in rows:
            binned = [float(bisect_right(e, x)) for e, x in zip(edges, row, strict=True)]
            total = start
            for value in predict_all(binned):
                total += rate * value
            out.append(min(max(total, 0.0), 1.0))
        return out

    return gbt


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

    def __init__(self, *, kind: str = "gbt-hist", seed: int = 0, subsample: float = 0.8, neighbours: int = 5) -> None:
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

            study: dict[str, Any] = {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.1, "max_bin": 64,
                                     "reg_lambda": 0.0}
            self.model_ = XGBoostJSON(seed=self.seed, subsample=self.subsample,
                                      **(study if self.kind == "gbt-hist" else {}))
        self.model_.fit(x, target)
        return self

    def predict_rows(self, rows: list[list[float]]) -> list[float]:
        """`predict` of a few rows without scikit-learn's per-call validation (a scheduler asks
        at every decision with submissions): the tree kinds walk their trees outside the library
        (in generated Python, predictors/fast_trees.py; with numpy, predictors/xgb.py) with the same
        arithmetic; `cnk` calls `predict`."""
        compiled = _COMPILED.get(self)
        if compiled is None:
            compiled = _COMPILED[self] = _compile(self)
        if compiled is False:
            return self.predict(np.asarray(rows, dtype=float)).tolist()
        return compiled(rows)

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        x = np.atleast_2d(np.asarray(X, dtype=float))
        if self.kind == "cnk":
            neighbours_mean_s = self.model_.predict(x[:, :-1])
            return accuracy(np.maximum(x[:, -1], 1e-9), np.maximum(neighbours_mean_s, 1e-9))
        return np.clip(self.model_.predict(x), 0.0, 1.0)
