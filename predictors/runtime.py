"""Runtime predictors with scikit-learn's contract, persisted safely (skops) with a model card.

`RuntimePredictor(features=..., model=..., seed=..., margin_min=...)` stores its parameters only;
`fit(X, y)` learns from a job table (features.job_table) and run times in seconds; `predict(X)`
gives seconds. Models: `dt` (default), `rf`, `gb` (scikit-learn), `gb-xgb` (xgboost,
kept as xgboost JSON), `nn` (a 3-hidden-layer MLP on MinMax-scaled inputs; scikit-learn has neither
dropout nor a Huber loss, so the study's network is approximated: squared loss, L2 penalty).
Hyper-parameters are the libraries' defaults (the study gives none), recorded in the card.

The baselines are estimators of their own, with the same contract: `TimeLimitBaseline` (model
`walltime`: the time limit) and `UserLast2Baseline` (`user-last2`, EASY++: mean of the user's last
two run times, in the order rows are given, capped by the time limit, the limit until two are
known; `partial_fit` adds completions). `make_predictor(model=...)` gives the class a name needs.
"""

from __future__ import annotations

import contextlib
import json
import platform as host
import weakref
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from schedlab import __version__
from schedlab.errors import InputError
from schedlab.paths import sha256_file
from schedlab.predictors.features import CATEGORICAL, UserMeans, get_feature_set, present_columns
from schedlab.predictors.models import MODEL_KINDS, model_names, register_model

#: Bumped whenever how a model is built or fed changes (pipeline, feature sources, target scaling):
#: caches of trained models (DIWS, predictor studies) are keyed by it, so none is reused stale.
RECIPE_VERSION = 3  # 3: numeric ids (user, qos) coded in numeric order

@register_model("dt", "DecisionTreeRegressor (scikit-learn defaults)", "regressor")
def _decision_tree(seed: int) -> Any:
    from sklearn.tree import DecisionTreeRegressor

    return DecisionTreeRegressor(random_state=seed)


@register_model("rf", "RandomForestRegressor (scikit-learn defaults)", "regressor")
def _random_forest(seed: int) -> Any:
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(random_state=seed, n_jobs=1)


@register_model("gb", "GradientBoostingRegressor (scikit-learn defaults)", "regressor")
def _gradient_boosting(seed: int) -> Any:
    from sklearn.ensemble import GradientBoostingRegressor

    return GradientBoostingRegressor(random_state=seed)


def _xgboost_installed() -> None:
    from schedlab.predictors.xgb import xgboost_module

    xgboost_module()


@register_model("gb-xgb", "xgboost XGBRegressor (xgboost defaults, one thread), stored as xgboost JSON", "regressor",
                requires=_xgboost_installed)
def _xgboost(seed: int) -> Any:
    from schedlab.predictors.xgb import XGBoostJSON

    return XGBoostJSON(seed=seed)


@register_model("adaboost", "AdaBoostRegressor (AdaBoost.R2, linear loss) of 50 depth-3 decision trees, learning "
                "rate 1.0 (scikit-learn defaults; the COARE study gives none)", "regressor")
def _adaboost(seed: int) -> Any:
    from sklearn.ensemble import AdaBoostRegressor
    from sklearn.tree import DecisionTreeRegressor

    return AdaBoostRegressor(DecisionTreeRegressor(max_depth=3, random_state=seed), loss="linear",
                             n_estimators=50, learning_rate=1.0, random_state=seed)


@register_model("nn", "MLPRegressor, 3 hidden layers of 64, MinMax-scaled inputs and target (no dropout/Huber in "
                "scikit-learn)", "regressor", scaled_inputs=True)
def _network(seed: int) -> Any:
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.neural_network import MLPRegressor
    from sklearn.preprocessing import MinMaxScaler

    # run times span seconds to days: the network learns them MinMax-scaled, as its inputs
    network = MLPRegressor(hidden_layer_sizes=(64, 64, 64), random_state=seed, max_iter=300, early_stopping=True)
    return TransformedTargetRegressor(regressor=network, transformer=MinMaxScaler())


def _estimator(model: str, seed: int):
    kind = MODEL_KINDS.get(model)
    if kind is None or kind.family != "regressor":
        raise InputError(f"unknown model {model!r} (known: {', '.join(MODELS)})")
    return kind.make(seed)


def category_order(values: Any) -> list[Any]:
    """A categorical column's categories in code order: numeric ids (every known value a number,
    as SWF user and queue ids) in numeric order, so a tree splits them as the DIWS study's tree split
    its numeric ids ("10" after "9", not after "1"); other values as strings; None (unknown) last."""
    known = sorted({v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))}, key=str)
    with contextlib.suppress(TypeError, ValueError):  # not all numbers: the string order stays
        known = sorted(known, key=float)
    return known + ([None] if any(v is None for v in values) else [])


def build_pipeline(columns: list[str], user_means: tuple[str, ...], model: str, seed: int,
                   categories: list[list[Any]] | None = None, estimator: Any = None):
    """Features -> codes (`categories`: per categorical column, its categories in code order;
    default: sorted) and imputation (fitted on training rows) -> [scaling] -> regressor (the
    model's, or `estimator`: predictors.distribution's quantile and censored learners)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OrdinalEncoder

    categorical = [c for c in columns if c in CATEGORICAL]
    means = tuple(c for c in user_means if c in columns) if "user" in columns else ()
    steps: list[tuple[str, Any]] = []
    if means:
        steps.append(("user_means", UserMeans(columns=means)))
    codes = OrdinalEncoder(categories="auto" if categories is None else [np.array(c, dtype=object) for c in categories],
                           handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-1)
    steps.append(("codes", ColumnTransformer([("categorical", codes, categorical)], remainder="passthrough")))
    steps.append(("impute", SimpleImputer(strategy="median", keep_empty_features=True)))
    if model in MODEL_KINDS and MODEL_KINDS[model].scaled_inputs:
        steps.append(("scale", MinMaxScaler()))
    steps.append(("model", _estimator(model, seed) if estimator is None else estimator))
    return Pipeline(steps)


class RuntimePredictor(RegressorMixin, BaseEstimator):
    """Predicts run times (seconds) from a job table, with a fitted model (`dt`, `rf`, `gb`,
    `gb-xgb`, `adaboost`, `nn`)."""

    #: predictions read each job's user and time limit only (schedulers then need no feature rows)
    reads_requests_only: ClassVar[bool] = False
    #: learns each completion as it comes (`learn_request`)
    learns_each_completion: ClassVar[bool] = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """`RuntimePredictor(model="walltime")` or `"user-last2"` gives that baseline's own estimator
        (as `make_predictor` does), so code written before they were classes keeps working."""
        model = kwargs.get("model")
        if cls is RuntimePredictor and model in BASELINES:
            return make_predictor(**kwargs)
        return super().__new__(cls)

    def __init__(self, *, features: str = "diws", model: str = "dt", seed: int = 0, margin_min: float = 0.0,
                 params: dict[str, Any] | None = None) -> None:
        self.features = features
        self.model = model
        self.seed = seed
        self.margin_min = margin_min
        self.params = params  # hyper-parameters set on the regressor (a predictor study's search); None: defaults

    def fit(self, X: pd.DataFrame, y: Any) -> RuntimePredictor:  # noqa: N803 (scikit-learn's names)
        _COMPILED.pop(self, None)  # a refit replaces what was compiled
        feature_set = get_feature_set(self.features)
        if self.model not in MODELS:
            raise InputError(f"unknown model {self.model!r} (known: {', '.join(MODELS)})")
        self.columns_, self.dropped_ = present_columns(X, feature_set)
        y = np.asarray(y, dtype=float)
        if not self.columns_:
            raise InputError(f"no feature of set {self.features!r} is present in the training jobs")
        categories = [category_order(X[c].tolist()) for c in self.columns_ if c in CATEGORICAL]
        self.pipeline_ = build_pipeline(self.columns_, feature_set.user_means, self.model, self.seed, categories)
        if self.params:
            try:
                self.pipeline_.named_steps["model"].set_params(**self.params)
            except ValueError as exc:  # a name the regressor does not have
                raise InputError(f"model {self.model!r}: {exc}") from None
        self.pipeline_.fit(X[self.columns_], y)
        return self

    def predict_jobs(self, jobs: list[Any]) -> np.ndarray:
        """Predictions for Job objects, what schedulers call at each submission: the same numbers as
        `predict(job_table(jobs))`, without pandas, a few jobs at a time, for single trees and
        AdaBoost (fast_trees.py)."""
        from schedlab.predictors.features import job_values

        return self.predict_rows([job_values(job, self.columns_) for job in jobs])

    def predict_rows(self, rows: list[list[Any]] | list[tuple[Any, ...]]) -> np.ndarray:
        """Fitted models: predictions for rows of `job_values(job, self.columns_)` (all a
        prediction depends on: a scheduler memoises by them)."""
        from schedlab.predictors.features import rows_table

        compiled = _compiled(self) if len(rows) <= 64 else None  # big batches: vectorised scikit-learn
        if compiled is not None:
            return compiled.predict_rows(rows) + 60.0 * self.margin_min
        return self.predict(rows_table(rows, self.columns_))

    def compile(self) -> RuntimePredictor:
        """Prepare the fast per-job path of `predict_rows` now (it is made at the first call
        otherwise); returns self."""
        _compiled(self)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:  # noqa: N803
        return np.asarray(self.pipeline_.predict(X[self.columns_]), dtype=float) + 60.0 * self.margin_min


class Baseline(RegressorMixin, BaseEstimator):
    """A baseline: predictions from each job's user and time limit only (features.user_and_limit),
    no model. The same numbers from a job table (`predict`), Job objects (`predict_jobs`) or
    (user, limit) pairs (`predict_requests`, without pandas: schedulers predict at each submission)."""

    model: ClassVar[str] = ""
    reads_requests_only: ClassVar[bool] = True
    learns_each_completion: ClassVar[bool] = False

    def __init__(self, *, features: str = "diws", seed: int = 0, margin_min: float = 0.0) -> None:
        self.features = features
        self.seed = seed
        self.margin_min = margin_min

    def fit(self, X: pd.DataFrame, y: Any) -> Baseline:  # noqa: N803
        self.columns_, self.dropped_ = present_columns(X, get_feature_set(self.features))
        self.pipeline_ = None
        return self

    def compile(self) -> Baseline:
        return self

    def predict_jobs(self, jobs: list[Any]) -> np.ndarray:
        from schedlab.predictors.features import user_and_limit

        return self.predict_requests([user_and_limit(job) for job in jobs])

    def predict_requests(self, requests: list[tuple[str | None, float]]) -> np.ndarray:
        predicted = [self._predict_one(user, limit) for user, limit in requests]
        return np.asarray(predicted, dtype=float) + 60.0 * self.margin_min

    def predict(self, X: pd.DataFrame) -> np.ndarray:  # noqa: N803
        limit = X["time_limit"].to_numpy(dtype=float) if "time_limit" in X else np.full(len(X), np.nan)
        users = X["user"].tolist() if "user" in X else [None] * len(X)
        return self.predict_requests(list(zip(users, limit.tolist(), strict=True)))

    def _predict_one(self, user: str | None, limit_s: float) -> float:
        raise NotImplementedError


@register_model("walltime", "baseline: the job's time limit", "baseline")
class TimeLimitBaseline(Baseline):
    """Model `walltime`: the job's time limit."""

    model = "walltime"

    def _predict_one(self, user: str | None, limit_s: float) -> float:
        return limit_s


@register_model("user-last2", "baseline (EASY++): mean of the user's last two run times, capped by the time limit; "
                "the limit until two are known", "baseline")
class UserLast2Baseline(Baseline):
    """Model `user-last2` (EASY++, Tsafrir et al.): the mean of the user's last two run times, capped
    by the time limit; the time limit until two are known (predictsim's convention)."""

    model = "user-last2"
    learns_each_completion = True

    def fit(self, X: pd.DataFrame, y: Any) -> UserLast2Baseline:  # noqa: N803
        super().fit(X, y)
        self.last_runtimes_: dict[str, list[float]] = {}
        return self.partial_fit(X, y)

    def partial_fit(self, X: pd.DataFrame, y: Any) -> UserLast2Baseline:  # noqa: N803
        """Completions, in completion order."""
        if not hasattr(self, "last_runtimes_"):
            self.columns_, self.dropped_, self.pipeline_, self.last_runtimes_ = list(X.columns), [], None, {}
        for user, runtime in zip(X["user"].tolist(), np.asarray(y, dtype=float).tolist(), strict=True):
            self.learn_request(user, runtime)
        return self

    def learn_request(self, user: str | None, runtime_s: float) -> None:
        """One completion (`partial_fit` of one row, without pandas)."""
        key = str(user)
        self.last_runtimes_[key] = [*self.last_runtimes_.get(key, [])[-1:], float(runtime_s)]

    def _predict_one(self, user: str | None, limit_s: float) -> float:
        last = self.last_runtimes_.get(str(user), ())
        if len(last) < 2:
            return limit_s
        mean = (last[0] + last[1]) / 2.0
        return min(mean, limit_s) if limit_s == limit_s else mean


#: any runtime predictor of ours (fitted model or baseline): the same contract
Predictor = RuntimePredictor | Baseline

#: the baselines' model names -> their classes
BASELINES: dict[str, type[Baseline]] = {name: cast(type[Baseline], MODEL_KINDS[name].make)
                                         for name in model_names("baseline")}
#: the point models (fitted regressors and baselines): name -> description
MODELS = model_names("regressor", "baseline")


def make_predictor(*, model: str = "dt", features: str = "diws", seed: int = 0,
                   margin_min: float = 0.0, params: dict[str, Any] | None = None) -> Predictor:
    """The unfitted predictor a model name gives: a baseline's own class, else RuntimePredictor
    (`params`: hyper-parameters of its regressor)."""
    if model in BASELINES:
        if params:
            raise InputError(f"model {model!r} has no hyper-parameters")
        return BASELINES[model](features=features, seed=seed, margin_min=margin_min)
    return RuntimePredictor(features=features, model=model, seed=seed, margin_min=margin_min, params=params)


_COMPILED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # rebuilt, never persisted
_NOT_COMPILABLE = object()


def _compiled(predictor: RuntimePredictor):
    """The predictor's compiled tree pipeline (made once per fitted predictor), or None."""
    from schedlab.predictors.fast_trees import compile_pipeline

    found = _COMPILED.get(predictor)
    if found is None:
        pipeline = getattr(predictor, "pipeline_", None)
        found = (compile_pipeline(pipeline, predictor.columns_) if pipeline is not None else None) or _NOT_COMPILABLE
        _COMPILED[predictor] = found
    return None if found is _NOT_COMPILABLE else found


def empty_baseline(model: str, seed: int = 0) -> Baseline:
    """A `walltime` or `user-last2` predictor that has seen nothing yet (online use)."""
    empty = pd.DataFrame({"user": pd.Series([], dtype=object), "time_limit": pd.Series([], dtype=float)})
    return BASELINES[model](seed=seed).fit(empty, [])


# ---------------------------------------------------------------------------------------------- files

#: Beyond skops' own safe defaults, exactly the types our models are made of (checked by a test
#: that saves every model kind): no function, no other class, so a crafted file cannot run code.
TRUSTED_TYPES = frozenset({
    "numpy.dtype", "schedlab.predictors.features.UserMeans", "schedlab.predictors.runtime.RuntimePredictor",
    "schedlab.predictors.runtime.TimeLimitBaseline", "schedlab.predictors.runtime.UserLast2Baseline",
    "schedlab.predictors.xgb.XGBoostJSON", "schedlab.predictors.distribution.QuantilePredictor",
    "schedlab.predictors.distribution.XGBoostQuantiles", "schedlab.predictors.distribution.CensoredPredictor",
    "schedlab.predictors.distribution.XGBoostAFT",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer", "sklearn.tree._tree.Tree",
})


def save(predictor: Predictor, path: str | Path, card: dict[str, Any]) -> Path:
    """The predictor in skops format (no pickle) and its card beside it (PATH.card.json), each
    written under a temporary name and renamed (a parallel reader never sees half a file)."""
    import os
    import tempfile

    import skops.io

    from schedlab.paths import atomic_write, give_usual_mode

    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        give_usual_mode(temporary)  # as its card: 0644 under the usual umask, not mkstemp's 0600
        skops.io.dump(predictor, temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    with atomic_write(card_path(path)) as handle:
        handle.write(json.dumps(card, indent=2, sort_keys=True, default=str) + "\n")
    return path


def _baseline_of(old: RuntimePredictor) -> Baseline:
    """A baseline saved before baselines were classes of their own (a RuntimePredictor whose model
    was `walltime` or `user-last2`), as its class now, with what it had learned."""
    baseline = BASELINES[old.model](features=old.features, seed=old.seed, margin_min=old.margin_min)
    for name in ("columns_", "dropped_", "pipeline_", "last_runtimes_"):
        if hasattr(old, name):
            setattr(baseline, name, getattr(old, name))
    return baseline


def card_path(path: Path) -> Path:
    return path.with_name(path.name + ".card.json")


def load(path: str | Path) -> tuple[Predictor, dict[str, Any]]:
    """Load a predictor, trusting only the types our models are made of (TRUSTED_TYPES)."""
    import skops.io

    path = Path(path)
    if not path.is_file():
        raise InputError("is a directory, not a model file" if path.is_dir() else "no such file", path=str(path))
    try:
        untrusted = skops.io.get_untrusted_types(file=path)
    except Exception as exc:  # skops raises many kinds on a file that is not its format
        raise InputError(f"not a skops model file: {exc}", path=str(path)) from None
    refused = sorted(set(untrusted) - TRUSTED_TYPES)
    if refused:
        raise InputError(f"refusing to load types {', '.join(refused[:3])} (not part of a schedlab predictor)",
                         path=str(path))
    predictor = skops.io.load(path, trusted=untrusted)
    # ours (a model, a baseline or a distribution predictor: predictors.distribution, a floor above)
    if not (isinstance(predictor, RuntimePredictor | Baseline)
            or type(predictor).__name__ in ("QuantilePredictor", "CensoredPredictor")):
        raise InputError(f"holds a {type(predictor).__name__}, not a schedlab runtime predictor", path=str(path))
    if isinstance(predictor, RuntimePredictor) and predictor.model in BASELINES:
        predictor = _baseline_of(predictor)
    card_file = card_path(path)
    card = json.loads(card_file.read_text()) if card_file.is_file() else {}
    return predictor, card


def versions() -> dict[str, str]:
    import sklearn
    import skops

    found = {"schedlab": __version__, "python": host.python_version(), "numpy": np.__version__,
             "pandas": pd.__version__, "scikit-learn": sklearn.__version__, "skops": skops.__version__}
    try:
        import xgboost

        found["xgboost"] = xgboost.__version__
    except ImportError:
        pass
    return found


data_hash = sha256_file  # a training file's hash, as model cards record it
