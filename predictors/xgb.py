"""`gb-xgb` and the hybrid's xgboost reliability models, kept as xgboost's own JSON model text.

The fitted booster is stored as a string attribute, so a skops file holds xgboost JSON and no
xgboost object (loading trusts this class only); the booster is rebuilt from the text on first use.
Hyper-parameters are xgboost's defaults unless given (the studies give none), one thread, a fixed
seed. `compiled_predictor` turns a fitted model's trees into arrays a compiled loop walks, a few rows at a
time with xgboost's arithmetic (float32 inputs, `x < split` goes left, missing values to the default
side, leaves added in float32 from the base score): a scheduler asks at each decision with
submissions, where `inplace_predict` costs about 100 us of set-up per call.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from schedlab.errors import InputError

_boosters: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # rebuilt, never persisted


def xgboost_module():
    try:
        import xgboost
    except ImportError:
        raise InputError("model gb-xgb needs xgboost: pip install xgboost (or the CPU-only xgboost-cpu)") from None
    return xgboost


class XGBoostJSON(RegressorMixin, BaseEstimator):
    """xgboost.XGBRegressor with default hyper-parameters; learned state: `booster_json_` (text)."""

    def __init__(self, *, seed: int = 0, subsample: float = 1.0, n_estimators: int | None = None,
                 max_depth: int | None = None, learning_rate: float | None = None,
                 max_bin: int | None = None, reg_lambda: float | None = None) -> None:
        self.seed = seed
        self.subsample = subsample  # row sampling without replacement per tree (1.0: xgboost's default)
        self.n_estimators = n_estimators  # None: xgboost's default (100)
        self.max_depth = max_depth  # None: xgboost's default (6)
        self.learning_rate = learning_rate  # None: xgboost's default (0.3)
        self.max_bin = max_bin  # None: xgboost's default (256 histogram bins per feature)
        self.reg_lambda = reg_lambda  # None: xgboost's default (1: leaf weights shrunk by L2)

    def fit(self, X: Any, y: Any) -> XGBoostJSON:  # noqa: N803 (scikit-learn's names)
        xgboost = xgboost_module()
        params = {"objective": "reg:squarederror", "tree_method": "hist", "nthread": 1, "seed": self.seed,
                  "subsample": self.subsample}
        for name, key in (("max_depth", "max_depth"), ("learning_rate", "eta"), ("max_bin", "max_bin"),
                          ("reg_lambda", "lambda")):
            if getattr(self, name) is not None:
                params[key] = getattr(self, name)
        # boosting on a plain DMatrix: XGBRegressor's model (the same trees) without its wrapper's
        # QuantileDMatrix, which costs more than the fit itself on a few thousand rows
        data = xgboost.DMatrix(np.asarray(X, dtype=float), label=np.asarray(y, dtype=float), nthread=1)
        booster = xgboost.Booster(params, [data])  # xgboost.train's loop without its callbacks: the same trees
        for iteration in range(100 if self.n_estimators is None else self.n_estimators):
            booster.update(data, iteration)
        self.booster_json_ = bytes(booster.save_raw(raw_format="json")).decode()
        self.xgboost_version_ = xgboost.__version__
        _boosters[self] = booster
        return self

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        booster = _boosters.get(self)
        if booster is None:
            booster = xgboost_module().Booster()
            booster.load_model(bytearray(self.booster_json_.encode()))
            booster.set_param({"nthread": 1})  # as fitted: one thread
            _boosters[self] = booster
        return np.asarray(booster.inplace_predict(np.asarray(X, dtype=float)), dtype=float)



def compiled_predictor(model: XGBoostJSON) -> Any:
    """rows -> predictions, equal to `model.predict` bit for bit (tested on random models with missing
    values), for a fitted squared-error
    model of numerical splits; None for anything else (the caller then uses `predict`). The trees
    are arrays walked by a compiled loop (xgb_kernel.py; a leaf points to itself)."""
    import json

    learner = json.loads(model.booster_json_)["learner"]
    trees = learner["gradient_booster"]["model"].get("trees", [])
    if (learner["objective"]["name"] != "reg:squarederror" or not trees
            or any(any(tree["split_type"]) or tree["categories"] for tree in trees)):
        return None
    width = max(len(tree["left_children"]) for tree in trees)
    left = np.tile(np.arange(width), (len(trees), 1))
    right, feature = left.copy(), np.zeros_like(left)
    split = np.zeros(left.shape, dtype=np.float32)
    default_left = np.zeros(left.shape, dtype=bool)
    for k, tree in enumerate(trees):
        size = len(tree["left_children"])
        children = np.asarray(tree["left_children"])
        inner = children != -1
        left[k, :size] = np.where(inner, children, np.arange(size))
        right[k, :size] = np.where(inner, tree["right_children"], np.arange(size))
        feature[k, :size] = tree["split_indices"]
        split[k, :size] = tree["split_conditions"]  # a leaf's value
        default_left[k, :size] = np.asarray(tree["default_left"], dtype=bool)
    depth = 0
    for tree in trees:  # the deepest leaf: steps enough for every walk to end on a leaf
        levels, frontier = 0, [0]
        while frontier:
            frontier = [c for n in frontier for c in (tree["left_children"][n], tree["right_children"][n]) if c != -1]
            levels += 1
        depth = max(depth, levels - 1)
    base_score = learner["learner_model_param"]["base_score"]  # "5E-1" (2.x) or "[5E-1]" (3.x)
    if isinstance(base_score, list):
        base_score = base_score[0] if len(base_score) == 1 else None
    try:
        base = np.float32(float(str(base_score).strip("[]")))
    except ValueError:
        return None  # several targets, or a format this reading does not know: `predict` is used
    from schedlab.predictors.xgb_kernel import walk_trees

    max_feature = int(feature.max())

    def predict_rows(rows: list[list[float]]) -> list[float]:
        with np.errstate(over="ignore"):  # beyond float32's range is infinite, as in xgboost
            x = np.asarray(rows, dtype=np.float32)  # xgboost compares float32 inputs
        if not len(x):
            return []
        if x.ndim != 2 or x.shape[1] <= max_feature:  # the compiled walk reads without bounds checks
            raise ValueError(f"rows of {x.shape[1] if x.ndim == 2 else 'no'} columns; the model reads "
                             f"{max_feature + 1}")
        return walk_trees(x, feature, split, left, right, default_left, depth, base).tolist()

    return predict_rows
