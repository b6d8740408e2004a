"""Per-job predictions of a fitted tree pipeline without scikit-learn's per-call overhead.

A scheduler predicts at each submission, one or a few jobs at a time: a pipeline call then costs
about a millisecond of validation and pandas work for microseconds of tree walking. `compile_pipeline`
reads a fitted pipeline (integer codes -> median imputation -> a decision tree or AdaBoost.R2 of
trees) into plain lists and predicts rows of Python values with the same arithmetic: inputs cast to
float32 as scikit-learn's trees do, AdaBoost's weighted median as `AdaBoostRegressor.predict`. Any
other pipeline (per-user means, scaling, forests, boosting, networks) is left to scikit-learn
(`compile_pipeline` returns None). Equality with the pipeline is property-tested.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


class _Tree:
    __slots__ = ("feature", "left", "max_depth", "right", "threshold", "value")

    def __init__(self, tree: Any) -> None:
        self.left = tree.children_left.tolist()
        self.right = tree.children_right.tolist()
        self.feature = tree.feature.tolist()
        self.threshold = tree.threshold.tolist()
        self.value = tree.value[:, 0, 0].tolist()
        self.max_depth = int(tree.max_depth)

    def predict(self, row: list[float]) -> float:
        node, left, right, feature, threshold = 0, self.left, self.right, self.feature, self.threshold
        while left[node] != -1:
            node = left[node] if row[feature[node]] <= threshold[node] else right[node]
        return self.value[node]

    def expression(self, node: int = 0) -> str:
        """The tree as one Python expression of `r` (the row): nested conditionals whose numbers
        are written with repr, which reads back the same float."""
        if self.left[node] == -1:
            return repr(self.value[node])
        return (f"({self.expression(self.left[node])} if r[{self.feature[node]}] <= {self.threshold[node]!r} "
                f"else {self.expression(self.right[node])})")


#: Trees up to this depth are turned into Python code (AdaBoost's depth-3 learners, a predictor
#: asked per job); deeper ones are walked node by node (the parser limits nesting).
GENERATED_MAX_DEPTH = 12


def _all_trees(trees: list[_Tree]) -> Any:
    """A function of a row giving every tree's prediction, as a list: the trees turned into one
    list display of conditional expressions (as treelite or m2cgen do, in Python), 5-10x faster
    than walking them; only numbers of our own fitted trees go into the code."""
    if any(tree.max_depth > GENERATED_MAX_DEPTH for tree in trees):
        return lambda row: [tree.predict(row) for tree in trees]
    code = "lambda r: [" + ", ".join(tree.expression() for tree in trees) + "]"
    return eval(compile(code, "<schedlab compiled trees>", "eval"), {"__builtins__": {}})


class CompiledPipeline:
    """predict_rows([[value per column of `columns`], ...]) equals pipeline.predict on their table."""

    def __init__(self, columns: list[str], codes: dict[str, dict[Any, int]], order: list[str],
                 medians: list[float], trees: list[_Tree], weights: list[float] | None) -> None:
        self.columns, self.codes, self.medians, self.trees, self.weights = columns, codes, medians, trees, weights
        self._positions = [columns.index(name) for name in order]
        self._predict_all = _all_trees(trees)

    def _row(self, values: Sequence[Any]) -> list[float]:
        out = []
        for position, median in zip(self._positions, self.medians, strict=True):
            name, value = self.columns[position], values[position]
            if name in self.codes:
                number = float(self.codes[name].get(value, -1))  # unseen: scikit-learn's unknown_value
            else:
                number = math.nan if value is None else float(value)
            if number != number:
                number = median
            out.append(float(np.float32(number)))  # scikit-learn's trees compare float32 inputs
        return out

    def predict_rows(self, rows: list[list[Any]] | list[tuple[Any, ...]]) -> np.ndarray:
        if not rows:
            return np.zeros(0)
        table = [self._predict_all(row) for row in map(self._row, rows)]
        if self.weights is None:
            return np.asarray([predictions[0] for predictions in table], dtype=float)
        # AdaBoost.R2: the weighted median of the learners' predictions, as scikit-learn takes it
        # (argsort, cumulative weights in that order, the first at or past half): in plain Python,
        # the same additions in the same order, a row at a time (schedulers predict few rows)
        weights, out = self.weights, []
        for predictions in table:
            order = np.argsort(predictions).tolist()
            cdf, total = [], 0.0
            for index in order:
                total += weights[index]
                cdf.append(total)
            half = 0.5 * total
            out.append(predictions[order[next(k for k, c in enumerate(cdf) if c >= half)]])
        return np.asarray(out, dtype=float)


def _inputs(pipeline: Any, columns: list[str]) -> tuple[dict[str, dict[Any, int]], list[str], list[float]] | None:
    """(category codes per column, the columns in the transformer's output order, the imputer's
    medians) of a codes -> imputation -> model pipeline; None for any other."""
    if [name for name, _ in pipeline.steps] != ["codes", "impute", "model"]:
        return None
    transformer, imputer = pipeline.named_steps["codes"], pipeline.named_steps["impute"]
    codes: dict[str, dict[Any, int]] = {}
    order: list[str] = []
    for name, step, names in transformer.transformers_:
        if name == "remainder" and step == "drop":
            continue
        names = [columns[i] if isinstance(i, int | np.integer) else i for i in names]
        if not names:
            continue
        if name == "categorical":
            for column, categories in zip(names, step.categories_, strict=True):
                # None is a category of its own in a fitted OrdinalEncoder; only NaN is "missing" (-1)
                codes[column] = {c: i for i, c in enumerate(categories.tolist())
                                 if not (isinstance(c, float) and math.isnan(c))}
        order += names
    return codes, order, imputer.statistics_.tolist()


def compile_inputs(pipeline: Any, columns: list[str]) -> Any:
    """rows -> the matrix the pipeline's model is given (float64 holding float32-rounded values:
    xgboost reads float32, so its predictions equal the pipeline's), for a codes -> imputation ->
    model pipeline; None otherwise (the distribution predictors' per-job path)."""
    found = _inputs(pipeline, columns)
    if found is None:
        return None
    inputs = CompiledPipeline(columns, *found, [], None)
    return lambda rows: np.asarray([inputs._row(row) for row in rows], dtype=float).reshape(len(rows), -1)


def compile_pipeline(pipeline: Any, columns: list[str]) -> CompiledPipeline | None:
    """A CompiledPipeline for codes -> imputation -> tree or AdaBoost of trees; None otherwise."""
    from sklearn.ensemble import AdaBoostRegressor
    from sklearn.tree import DecisionTreeRegressor

    found = _inputs(pipeline, columns)
    if found is None:
        return None
    model = pipeline.named_steps["model"]
    if isinstance(model, DecisionTreeRegressor):
        trees, weights = [_Tree(model.tree_)], None
    elif isinstance(model, AdaBoostRegressor) and all(isinstance(e, DecisionTreeRegressor) for e in model.estimators_):
        count = len(model.estimators_)
        trees, weights = [_Tree(e.tree_) for e in model.estimators_], model.estimator_weights_[:count].tolist()
    else:
        return None
    return CompiledPipeline(columns, *found, trees, weights)
