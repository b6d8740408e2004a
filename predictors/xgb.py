"""`gb-xgb`: xgboost's gradient boosting (optional dependency), kept as xgboost's own JSON model text.

The fitted booster is stored as a string attribute, so a skops file holds xgboost JSON and no
xgboost object (loading trusts this class only); the booster is rebuilt from the text on first use.
Hyper-parameters are xgboost's defaults (the study gives none), one thread, a fixed seed.
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

    def __init__(self, *, seed: int = 0, subsample: float = 1.0) -> None:
        self.seed = seed
        self.subsample = subsample  # row sampling without replacement per tree (1.0: xgboost's default)

    def fit(self, X: Any, y: Any) -> XGBoostJSON:  # noqa: N803 (scikit-learn's names)
        xgboost = xgboost_module()
        model = xgboost.XGBRegressor(random_state=self.seed, n_jobs=1, subsample=self.subsample)
        model.fit(np.asarray(X, dtype=float), np.asarray(y, dtype=float))
        self.booster_json_ = bytes(model.get_booster().save_raw(raw_format="json")).decode()
        self.xgboost_version_ = xgboost.__version__
        _boosters[self] = model.get_booster()
        return self

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        booster = _boosters.get(self)
        if booster is None:
            booster = xgboost_module().Booster()
            booster.load_model(bytearray(self.booster_json_.encode()))
            booster.set_param({"nthread": 1})  # as fitted: one thread
            _boosters[self] = booster
        return np.asarray(booster.inplace_predict(np.asarray(X, dtype=float)), dtype=float)
