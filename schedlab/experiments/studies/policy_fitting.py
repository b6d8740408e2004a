"""Fitting the regression-obtained policies (Rosa, Carastan-Santos, Goldman) on a score table:
weighted least squares, the VIF of the terms, reading score tables and writing fitted files (the
forms, their published coefficients and the loading of a fitted file are the scheduler's side:
schedulers/fitted_policies.py). The rules are in that module's docstring.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from schedlab.errors import InputError
from schedlab.schedulers.fitted_policies import FUNCTIONS, TERMS, FittedPolicy


def design(p: np.ndarray, q: np.ndarray, r: np.ndarray, function: str) -> np.ndarray:
    """One column per term of `function`."""
    p, q, r = (np.asarray(v, dtype=float) for v in (p, q, r))
    return np.column_stack([p**a * q**b * r**c for a, b, c in (TERMS[t] for t in FUNCTIONS[function])])


def fit(p: np.ndarray, q: np.ndarray, r: np.ndarray, score: np.ndarray, function: str,
        source: str = "") -> FittedPolicy:
    """Weighted least squares with weight (p·q)² on the squared residual."""
    if function not in FUNCTIONS:
        raise InputError(f"unknown function {function!r} (known: {', '.join(FUNCTIONS)})")
    x = design(p, q, r, function)
    weight = np.asarray(p, dtype=float) * np.asarray(q, dtype=float)
    a, b = x * weight[:, None], np.asarray(score, dtype=float) * weight
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    solution, *_ = np.linalg.lstsq(a / scale, b, rcond=None)
    theta = solution / scale
    mae = float(np.mean(np.abs(x @ theta - np.asarray(score, dtype=float))))
    return FittedPolicy(function, tuple(float(v) for v in theta), source, mae)


def vif(p: np.ndarray, q: np.ndarray, r: np.ndarray, function: str) -> dict[str, float]:
    """VIF of each non-constant term, regressed on the others without a constant (uncentered R²)."""
    terms = [t for t in FUNCTIONS[function] if t != "1"]
    x = design(p, q, r, function)[:, 1:]
    x = x / np.linalg.norm(x, axis=0)  # VIF does not depend on a column's scale
    out = {}
    for k, term in enumerate(terms):
        others = np.delete(x, k, axis=1)
        coefficients, *_ = np.linalg.lstsq(others, x[:, k], rcond=None)
        residual = float(np.sum((x[:, k] - others @ coefficients) ** 2))
        out[term] = math.inf if residual == 0 else float(np.sum(x[:, k] ** 2)) / residual
    return out


def read_scores(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """p, q, r, score from a score table: CSV rows `p,q,r,score` (gzipped or not; an optional
    header line starting with a letter)."""
    if not path.is_file():
        raise InputError(f"{path}: no such score table")
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    with opener(path, "rt") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.strip()
            if not line or (number == 1 and line[:1].isalpha()):
                continue
            fields = line.split(",")
            if len(fields) != 4:
                raise InputError(f"{path}:{number}: expected 4 fields p,q,r,score, got {len(fields)}")
            try:
                rows.append([float(v) for v in fields])
            except ValueError:
                raise InputError(f"{path}:{number}: fields p,q,r,score must be numbers") from None
    if not rows:
        raise InputError(f"{path}: no score rows")
    table = np.asarray(rows)
    return table[:, 0], table[:, 1], table[:, 2], table[:, 3]


def save_fitted(path: Path, fits: list[FittedPolicy], header: str = "") -> None:
    """A TOML file of fitted policies, one table per function; `queue_order=PATH#NAME` loads one."""
    lines = [f"# {line}" for line in header.splitlines()]
    for fitted in fits:
        lines += ["", f"[{fitted.function}]", f'function = "{fitted.function}"',
                  "terms = [" + ", ".join(f'"{t}"' for t in fitted.terms) + "]",
                  "coefficients = [" + ", ".join(repr(c) for c in fitted.coefficients) + "]",
                  f"mae = {fitted.mae!r}" if math.isfinite(fitted.mae) else "", f'source = "{fitted.source}"']
    from schedlab.paths import write_text_atomic

    write_text_atomic(path, "\n".join(line for line in lines if line) + "\n")
