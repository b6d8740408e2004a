"""Model kinds: each runtime model's name (`predictor train --model`, predictor studies, DIWS's
`learner=`), what it is, and how its unfitted predictor or estimator is made.

A model registers itself where it is implemented (`@register_model` in runtime.py for the
scikit-learn and xgboost regressors and the baselines, in distribution.py for the distribution
predictors): adding a model touches that one file. Listings, checks and error messages read the
names here, in registration order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

#: regressor: an estimator in RuntimePredictor's pipeline (`make(seed)`); baseline: an estimator of
#: its own reading requests only (`make(features=, seed=, margin_min=)`); distribution: a predictor
#: of run-time distributions (`make(features=, seed=)`)
Family = Literal["regressor", "baseline", "distribution"]


@dataclass(frozen=True)
class ModelKind:
    name: str
    description: str
    family: Family
    make: Callable[..., Any]
    #: its pipeline scales the inputs to [0, 1] first (a network)
    scaled_inputs: bool = False
    #: raises when a library it needs is missing (called before any data is read), or None
    requires: Callable[[], Any] | None = None


MODEL_KINDS: dict[str, ModelKind] = {}


def register_model(name: str, description: str, family: Family, *, scaled_inputs: bool = False,
                   requires: Callable[[], Any] | None = None) -> Callable[[Any], Any]:
    """Decorator of the function (or class) that makes the model's estimator or predictor."""

    def wrap(make: Any) -> Any:
        if name in MODEL_KINDS and MODEL_KINDS[name].make is not make:
            raise ValueError(f"model {name!r} is registered twice")
        MODEL_KINDS[name] = ModelKind(name, description, family, make, scaled_inputs, requires)
        return make

    return wrap


def model_names(*families: Family) -> dict[str, str]:
    """Registered models of these families (all when none is given): name -> description."""
    return {name: kind.description for name, kind in MODEL_KINDS.items() if not families or kind.family in families}
