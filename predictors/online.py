"""The hybrid study's online runtime predictor and its feature rows.

`NormalizedRegression` is online normalised regression (Ross, Mineiro, Langford 2013, Algorithm
NAG: per-coordinate scale normalisation + AdaGrad steps scaled by sqrt(t / N)) of an l2-regularised
polynomial of the features, with the study's symmetric squared loss lambda_j (f(z_j) - p_j)^2. It
follows scikit-learn's contract (`partial_fit` one job or many, learned state in `name_`
attributes). Targets are learned in hours (a constant scale: the loss's minimiser is unchanged, and
the AdaGrad step size means something in those units); predictions are in seconds, clipped by the
caller. The degree (2), lambda (1e-6), per-job weights (1) and learning rate (1.0) are our choices:
the study gives none.

`HYBRID_PREDICTOR_FEATURES` (Tab. 1, 18) and `HYBRID_RELIABILITY_FEATURES` (Tab. 2, 16, + the
prediction) are built from a `CompletionHistory` row (history updated only at completions) and what
the scheduler sees running at the submission (current, st).
"""

from __future__ import annotations

import math
from itertools import combinations_with_replacement
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba missing: the same code, interpreted
    def njit(*_args, **_kwargs):  # type: ignore[no-redef]
        return lambda function: function

from schedlab.predictors.history import HISTORY_COLUMNS

HYBRID_PREDICTOR_FEATURES = ("reqTime", "last", "beflast", "beflast2", "lastcpu", "maxrt", "maxcpu", "tod1", "tod2",
                             "dow1", "dow2", "meanrt", "stdrt", "meancpu", "stdcpu", "current", "st", "since_last")
HYBRID_RELIABILITY_FEATURES = ("reqTime", "last", "beflast", "beflast2", "lastcpu", "maxrt", "maxcpu", "tod1",
                               "tod2", "dow1", "dow2", "meanrt", "stdrt", "meancpu", "stdcpu", "prevuser")
_AT = {name: index for index, name in enumerate(HISTORY_COLUMNS)}
_PREDICTOR_FROM_HISTORY = [_AT[c] for c in HYBRID_PREDICTOR_FEATURES[1:15]]
_RELIABILITY_FROM_HISTORY = [_AT[c] for c in HYBRID_RELIABILITY_FEATURES[1:]]


def predictor_row(history_row: list[float], requested_s: float, current: int, st_s: float) -> list[float]:
    """Tab. 1's 18 features; the time since the user's last completion is 0 for a user without
    one (NaN in the history row)."""
    since = history_row[_AT["since_last_s"]]
    return [requested_s, *(history_row[i] for i in _PREDICTOR_FROM_HISTORY), float(current), st_s,
            0.0 if math.isnan(since) else since]


def reliability_row(history_row: list[float], requested_s: float, predicted_s: float) -> list[float]:
    """Tab. 2's 16 features and the prediction p^ (17 inputs of the reliability model); an
    unknown (infinite) p^ reads as 0, as an unknown request does."""
    return [requested_s, *(history_row[i] for i in _RELIABILITY_FROM_HISTORY),
            predicted_s if math.isfinite(predicted_s) else 0.0]


def accuracy(predicted_s: np.ndarray | float, actual_s: np.ndarray | float) -> np.ndarray:
    """The study's Eq. 2: min(p^, p) / max(p^, p), in (0, 1]."""
    predicted, actual = np.asarray(predicted_s, dtype=float), np.asarray(actual_s, dtype=float)
    return np.minimum(predicted, actual) / np.maximum(predicted, actual)


def planned_prediction_s(model: NormalizedRegression, row: list[float], requested_s: float) -> float:
    """The prediction a scheduler plans with: the request until the model has learned from a
    completion (alone it would say 0, then 1 s), then |f(z)| clipped to [1 s, request] (predictsim's
    rule: a negative output is read by its magnitude, not pinned at 1 s, which would make the job
    look instantaneous); the request again if the model diverged (inf: an unknown request)."""
    if not getattr(model, "n_updates_", 0):
        return requested_s
    predicted = abs(float(model.predict([row])[0]))
    if not math.isfinite(predicted):
        return requested_s
    return min(max(predicted, 1.0), requested_s)


def history_prediction_s(kind: str, history_row: list[float], requested_s: float) -> float:
    """The history baselines of `predictor=`: `user-last`, the user's last completed run time;
    `user-last2`, the mean of the last two (EASY++); the request until that many are known; then
    clipped to [1 s, request]."""
    needed = 1 if kind == "user-last" else 2
    if history_row[_AT["prevuser"]] < needed:
        return requested_s
    last = history_row[_AT["last"]]
    value = last if needed == 1 else (last + history_row[_AT["beflast"]]) / 2.0
    return min(max(value, 1.0), requested_s)


def polynomial_terms(nb_features: int, degree: int) -> np.ndarray:
    """Monomials of degree 0..`degree` of the features, as rows of `degree` indices into [1, x]
    (index 0 is the constant: (0, 0) is 1, (0, i) is x_i, (i, j) is x_i x_j for degree 2)."""
    return np.array(list(combinations_with_replacement(range(nb_features + 1), degree)), dtype=np.intp)


class NormalizedRegression(RegressorMixin, BaseEstimator):
    """Online polynomial regression by normalised adaptive gradient (NAG), updated job by job."""

    SCALE_S = 3600.0  # targets are learned in hours

    def __init__(self, *, degree: int = 2, l2: float = 1e-6, learning_rate: float = 1.0) -> None:
        self.degree = degree
        self.l2 = l2
        self.learning_rate = learning_rate

    def _check(self, nb_features: int) -> None:
        if self.degree < 1:
            raise ValueError(f"degree must be >= 1, got {self.degree}")
        if not (self.learning_rate > 0 and self.l2 >= 0):
            raise ValueError("learning_rate must be > 0 and l2 >= 0")
        self.n_features_in_ = nb_features
        self.terms_ = polynomial_terms(nb_features, self.degree)
        width = len(self.terms_)
        self.coef_ = np.zeros(width)
        self.scale_ = np.zeros(width)  # s_i: the largest |x_i| seen
        self.grad_sq_ = np.zeros(width)  # G_i: sum of squared gradients
        self.norm_ = 0.0  # N: sum over updates of sum_i x_i^2 / s_i^2
        self.n_updates_ = 0

    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> NormalizedRegression:  # noqa: N803
        """One NAG step per row, in order (rows are completions in completion order)."""
        x = np.atleast_2d(np.asarray(X, dtype=float))
        if not hasattr(self, "coef_"):
            self._check(x.shape[1])
        targets = np.atleast_1d(np.asarray(y, dtype=float)) / self.SCALE_S
        weights = np.ones(len(x)) if sample_weight is None else np.atleast_1d(np.asarray(sample_weight, dtype=float))
        self.norm_, self.n_updates_ = _nag_steps(self.coef_, self.scale_, self.grad_sq_, float(self.norm_),
                                                 int(self.n_updates_), x, targets, weights, self.terms_,
                                                 float(self.l2), float(self.learning_rate))
        return self

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> NormalizedRegression:  # noqa: N803
        """A fresh model, then one pass of `partial_fit` over the rows in order."""
        for name in ("coef_", "scale_", "grad_sq_", "norm_", "n_updates_", "terms_", "n_features_in_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y, sample_weight)

    def predict(self, X: Any) -> np.ndarray:  # noqa: N803
        """Seconds (unclipped); 0 before any update."""
        x = np.atleast_2d(np.asarray(X, dtype=float))
        if not hasattr(self, "coef_"):
            return np.zeros(len(x))
        return _predict(self.coef_, self.terms_, x) * self.SCALE_S


def load_kernels() -> None:
    """Compile (or load from numba's cache) the kernels on a throwaway model: a host calls it in
    `prepare`, so the first completion does not pay ~0.3 s inside the scheduling time it measures."""
    model = NormalizedRegression()
    model.partial_fit(np.zeros((1, 2)), np.ones(1))
    model.predict(np.zeros((1, 2)))


@njit(cache=True)
def _monomials(x: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """[1, x_i, x_i x_j, ...] of one row (`terms` index [1, x])."""
    z = np.empty(terms.shape[0])
    for k in range(terms.shape[0]):
        value = 1.0
        for index in terms[k]:
            if index > 0:
                value *= x[index - 1]
        z[k] = value
    return z


@njit(cache=True)
def _predict(w: np.ndarray, terms: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape[0])
    for row in range(x.shape[0]):
        z = _monomials(x[row], terms)
        total = 0.0
        for k in range(z.shape[0]):
            total += w[k] * z[k]
        out[row] = total
    return out


@njit(cache=True)
def _nag_steps(w: np.ndarray, s: np.ndarray, g2: np.ndarray, norm: float, updates: int, x: np.ndarray,
               targets: np.ndarray, weights: np.ndarray, terms: np.ndarray, l2: float,
               learning_rate: float) -> tuple[float, int]:
    """NAG (Ross, Mineiro, Langford 2013), in place on w, s (largest |z_i| seen), g2 (sum of squared
    gradients); returns the new N (sum of sum_i z_i^2 / s_i^2) and update count."""
    for row in range(x.shape[0]):
        z = _monomials(x[row], terms)
        for i in range(z.shape[0]):
            magnitude = abs(z[i])
            if magnitude > s[i]:
                if s[i] > 0:  # seen at a larger scale: w_i shrinks so that w_i z_i keeps its size
                    w[i] *= s[i] / magnitude
                s[i] = magnitude
        updates += 1
        predicted = 0.0
        for i in range(z.shape[0]):
            if s[i] > 0:
                norm += (z[i] / s[i]) ** 2
            predicted += w[i] * z[i]
        residual = 2.0 * weights[row] * (predicted - targets[row])
        rate = learning_rate * np.sqrt(updates / norm) if norm > 0 else 0.0
        for i in range(z.shape[0]):
            gradient = residual * z[i] + l2 * w[i]
            g2[i] += gradient * gradient
            if s[i] > 0 and g2[i] > 0:
                w[i] -= rate * gradient / (s[i] * np.sqrt(g2[i]))
    return norm, updates
