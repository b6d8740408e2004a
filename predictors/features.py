"""Feature sets by name: what a job tells at submission, as a table with one row per job.

Every column comes from a declared list of job fields and extras (the requests, the user, the QoS
or queue); none from the profile name or anything derived from the run time. Columns a trace lacks
are dropped and listed (the model card records them). Per-user means (`diws-aug`) are learned by a
transformer fitted on the training rows only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from schedlab.errors import InputError
from schedlab.model import Job

#: column -> (where to look, in order: "res"/"walltime" are job fields, other names are extras; scale)
SOURCES: dict[str, tuple[tuple[str, ...], float]] = {
    "cpu": (("requested_procs", "cores_req", "res"), 1.0),
    "mem_gb": (("requested_mem_kb",), 1.0 / 1048576.0),
    "mem": (("mem_req",), 1.0),  # a table's memory request, in its own unit
    "node": (("nodes_req",), 1.0),
    "gpu": (("gpus_req",), 1.0),
    "user": (("user",), 1.0),
    "qos": (("qos", "queue", "partition"), 1.0),  # what a trace has of a service class, in this order
    "time_limit": (("requested_time_s", "walltime"), 1.0),
}
CATEGORICAL = ("user", "qos")


@dataclass(frozen=True)
class FeatureSet:
    name: str
    columns: tuple[str, ...]
    user_means: tuple[str, ...] = ()  # columns whose per-user training mean is added
    doc: str = ""


FEATURE_SETS = {
    "diws": FeatureSet("diws", ("cpu", "mem_gb", "mem", "node", "gpu", "user", "qos", "time_limit"),
                       doc="DIWS study Tab. 1: requested cores, memory, nodes, GPUs, user, QoS/queue, time "
                           "limit; user and QoS as integer codes"),
    "diws-aug": FeatureSet("diws-aug", ("cpu", "mem_gb", "mem", "node", "gpu", "user", "qos", "time_limit"),
                           user_means=("cpu", "mem_gb", "mem", "node", "gpu", "time_limit"),
                           doc="diws + the user's mean requested cores, memory, nodes, GPUs and time limit over "
                               "the training set (study §3.2.1)"),
    "coare": FeatureSet("coare", ("user", "cpu", "mem_gb", "mem", "time_limit"),
                        doc="COARE walltime study's AdaBoost inputs: user (integer code), requested CPUs, "
                            "requested memory, requested walltime (the paper's 'job runtime' is the target)"),
}


def get_feature_set(name: str) -> FeatureSet:
    try:
        return FEATURE_SETS[name]
    except KeyError:
        raise InputError(f"unknown feature set {name!r} (known: {', '.join(FEATURE_SETS)})") from None


def _known(value: Any, categorical: bool) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    if not isinstance(value, int | float):
        return True
    # SWF writes -1 for unknown: a negative code is no class, a non-positive request no request
    return value >= 0 if categorical else value > 0


def user_and_limit(job: Job) -> tuple[str | None, float]:
    """A job's user (as job_table writes it) and time limit (NaN when unknown): all the baselines
    read, without building a table (schedulers call this once per submission)."""
    user, limit = job_values(job, ("user", "time_limit"))
    return user, (math.nan if limit is None else limit)


def job_values(job: Job, columns: Iterable[str]) -> list[Any]:
    """One job's row as job_table makes it (categorical values as strings, numbers scaled, None
    when unknown), without pandas. A column takes the first of its sources the job knows; a time
    limit the trace says is unknown stays unknown, never the walltime instead, which a converter
    may have derived from the run time (--missing-walltime runtime|factor)."""
    extra = job.extra
    row = []
    for column in columns:
        names, scale = SOURCES[column]
        categorical = column in CATEGORICAL
        value: Any = None
        for name in names:
            if name == "res":
                value = job.res
                break
            if name == "walltime":
                value = job.walltime_s
                break
            if name in extra:
                candidate = extra[name]
                if _known(candidate, categorical):
                    value = candidate
                    break
                if column == "time_limit":
                    break
        row.append(None if value is None else (str(value) if categorical else float(value) * scale))
    return row


def job_table(jobs: Iterable[Job], columns: Iterable[str]) -> pd.DataFrame:
    """One row per job, the requested columns as floats (categorical ones as strings), NaN when the
    job does not say."""
    columns = list(columns)
    return rows_table([job_values(job, columns) for job in jobs], columns)


def rows_table(rows: list[list[Any]] | list[tuple[Any, ...]], columns: list[str]) -> pd.DataFrame:
    """The job table of rows made by `job_values(job, columns)` (kept by who predicts or learns
    job by job, so a job's row is read once)."""
    data: dict[str, Any] = {}
    for index, column in enumerate(columns):
        values = [row[index] for row in rows]
        if column in CATEGORICAL:
            data[column] = pd.Series(values, dtype=object)
        else:
            data[column] = pd.Series([np.nan if v is None else v for v in values], dtype=float)
    return pd.DataFrame(data)


def present_columns(frame: pd.DataFrame, feature_set: FeatureSet) -> tuple[list[str], list[str]]:
    """(kept, dropped): a column no job fills is dropped."""
    kept = [c for c in feature_set.columns if c in frame and frame[c].notna().any()]
    return kept, [c for c in feature_set.columns if c not in kept]


class UserMeans(TransformerMixin, BaseEstimator):
    """Adds `user_mean_<c>` columns: the user's mean of each column over the rows it was fitted on
    (the training set only); users unseen in training get the training mean."""

    def __init__(self, *, columns: tuple[str, ...] = (), user: str = "user") -> None:
        self.columns = columns
        self.user = user

    def fit(self, X: pd.DataFrame, y: Any = None) -> UserMeans:  # noqa: N803 (scikit-learn's names)
        # plain dicts, not pandas objects: the model is saved with skops, which persists those safely
        columns = [c for c in self.columns if c in X]
        self.columns_ = columns
        grouped = X.groupby(self.user)[columns].mean() if columns else pd.DataFrame()
        self.means_ = {column: {str(user): float(value) for user, value in grouped[column].items()
                                if value == value} for column in columns}
        self.overall_ = {column: float(X[column].mean()) for column in columns}
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:  # noqa: N803
        out = X.copy()
        users = X[self.user].astype(str)
        for column in self.columns_:
            out[f"user_mean_{column}"] = users.map(self.means_[column]).astype(float).fillna(self.overall_[column])
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        names = list(input_features) if input_features is not None else []
        return np.array(names + [f"user_mean_{c}" for c in self.columns_], dtype=object)
