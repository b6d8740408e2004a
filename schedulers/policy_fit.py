"""Regression-obtained queue policies (Rosa, Carastan-Santos, Goldman): polynomials f(p~, q, r)
fitted on permutation-simulation scores, their VIF, and the published coefficients.

- Terms (the study's Tab. 1): Lin (1, p, q, r); Qdr adds p², q², r², pq; Cub adds p³, q³, r³, p²q,
  pq²; Qua adds p⁴, q⁴, r⁴, p³q, p²q², pq³. No mixed terms with r.
- Fit: weighted least squares minimising Σ [(p·q)·(f(θ, x) - score)]², i.e. weight (p·q)² on the
  squared residual (the authors' `curve_fit(..., sigma=1/(p·q))`; a weight of p·q gives other
  coefficients). Columns are scaled before solving: features reach p⁴ ≈ 10²⁰.
- MAE: unweighted mean |f - score|.
- VIF as the study computed it (statsmodels on the non-constant features, no intercept column): each
  feature regressed on the others without a constant, VIF = 1 / (1 - uncentered R²). A centred VIF
  gives other values (Lublin Lin 1.1/1.1/1.0 instead of 1.3/1.3/1.2).
Source: L. Rosa, D. Carastan-Santos, A. Goldman, "An experimental analysis of regression-obtained HPC
scheduling heuristics", JSSPP 2023 (doi 10.1007/978-3-031-43943-8_6), sections 3-5.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from schedlab.errors import InputError

#: term -> exponents of (p, q, r)
TERMS: dict[str, tuple[int, int, int]] = {
    "1": (0, 0, 0), "p": (1, 0, 0), "q": (0, 1, 0), "r": (0, 0, 1),
    "p2": (2, 0, 0), "q2": (0, 2, 0), "r2": (0, 0, 2), "pq": (1, 1, 0),
    "p3": (3, 0, 0), "q3": (0, 3, 0), "r3": (0, 0, 3), "p2q": (2, 1, 0), "pq2": (1, 2, 0),
    "p4": (4, 0, 0), "q4": (0, 4, 0), "r4": (0, 0, 4), "p3q": (3, 1, 0), "p2q2": (2, 2, 0), "pq3": (1, 3, 0),
}
_ORDER = list(TERMS)
FUNCTIONS: dict[str, tuple[str, ...]] = {"lin": tuple(_ORDER[:4]), "qdr": tuple(_ORDER[:8]),
                                         "cub": tuple(_ORDER[:13]), "qua": tuple(_ORDER)}


@dataclass(frozen=True)
class FittedPolicy:
    """f(p~, q, r) = Σ coefficient · p^a q^b r^c over `terms`; lowest value first."""

    function: str
    coefficients: tuple[float, ...]  # in the order of FUNCTIONS[function]
    source: str = ""
    mae: float = math.nan

    @property
    def terms(self) -> tuple[str, ...]:
        return FUNCTIONS[self.function]

    def value(self, p: float, q: float, r: float) -> float:
        total = 0.0
        for term, coefficient in zip(self.terms, self.coefficients, strict=True):
            a, b, c = TERMS[term]
            total += coefficient * p**a * q**b * r**c
        return total


#: The study's coefficients at full precision (the authors' parameters.c; rounded, [X] Tab. 3-5 and
#: [J] Tab. 3), by (function, workload): lublin256 (the Lublin-Feitelson model, 256 nodes), ctc
#: (CTC-SP2), sdsc (SDSC-Blue). Lin of lublin256 is the one of the long-term experiments.
PUBLISHED: dict[tuple[str, str], tuple[float, ...]] = {
    ("lin", "lublin256"): (3.238414E-02, 1.148218E-07, 2.607264E-05, -1.574367E-07),
    ("qdr", "lublin256"): (3.704903E-02, 2.652652E-07, -3.048969E-05, -3.962958E-07, -3.039085E-12,
        1.165374E-07, 2.754073E-12, 6.768290E-10),
    ("cub", "lublin256"): (3.329820E-02, 2.832131E-07, 8.706134E-05, -5.833754E-07, -6.331963E-14,
        -5.060627E-07, 6.778154E-12, -6.023765E-10, -7.546730E-18, 7.046300E-10, -2.137223E-17,
        -2.717244E-14, 9.524934E-12),
    ("qua", "lublin256"): (4.830325E-02, -6.421827E-07, -2.395060E-04, -6.500650E-07, 1.663399E-11,
        2.408450E-06, 8.812445E-12, 1.139545E-08, -2.029190E-16, -9.524341E-09, -4.671191E-17, 9.289385E-15,
        -7.944086E-11, 9.336013E-22, 1.357825E-11, 9.840852E-23, -9.067893E-19, 1.885031E-16, 1.552608E-13),
    ("lin", "ctc"): (3.114226E-02, 2.998210E-08, 5.421024E-05, -6.414781E-08),
    ("qdr", "ctc"): (2.864217E-02, 2.004076E-07, 2.266613E-05, 1.813038E-07, -3.139640E-12, -2.079958E-08,
        -4.194581E-12, 8.498514E-10),
    ("cub", "ctc"): (2.421484E-02, 1.180166E-06, -1.717558E-04, -1.374160E-08, -3.496627E-11, 1.660464E-06,
        4.572606E-12, 3.885303E-09, 2.972866E-16, -3.910893E-09, -1.022587E-16, -3.334139E-14, -6.328020E-12),
    ("qua", "ctc"): (6.091689E-02, -3.133573E-06, 8.728239E-05, -2.404511E-06, 1.419728E-10, -8.566428E-06,
        1.862265E-10, 1.486556E-08, -2.461805E-15, 6.029864E-08, -4.916852E-15, -6.875173E-13, 2.374783E-10,
        1.471984E-20, -1.122203E-10, 4.068266E-20, 6.110362E-18, -7.137686E-16, -9.750854E-13),
    ("lin", "sdsc"): (1.832435E-02, 8.876291E-08, 3.051363E-05, -6.874708E-08),
    ("qdr", "sdsc"): (1.393866E-02, -1.465094E-07, -8.401046E-05, -4.024130E-07, 5.588117E-14, 6.917965E-08,
        5.766644E-12, 5.497514E-10),
    ("cub", "sdsc"): (3.340658E-02, 5.970054E-08, 3.090837E-05, -4.789842E-07, 1.792613E-12, -1.024739E-07,
        1.121114E-11, -6.672173E-10, -1.505349E-17, 7.153055E-11, -9.274328E-17, -6.383445E-16, 1.077522E-12),
    ("qua", "sdsc"): (2.269846E-02, 1.576911E-06, 1.066359E-04, -1.766481E-06, -4.004486E-11, -1.912386E-07,
        1.043773E-10, -6.553666E-09, 3.928065E-16, 1.209082E-10, -2.264265E-15, 1.252028E-13, 4.028541E-12,
        -1.283297E-21, -1.492516E-14, 1.503653E-20, -6.678374E-19, -4.722375E-17, 3.651089E-16),
}
WORKLOADS = ("lublin256", "ctc", "sdsc")


def published(function: str, workload: str = "lublin256") -> FittedPolicy:
    try:
        coefficients = PUBLISHED[(function, workload)]
    except KeyError:
        raise InputError(f"no published {function!r} for workload {workload!r} (functions: "
                         f"{', '.join(FUNCTIONS)}; workloads: {', '.join(WORKLOADS)})") from None
    return FittedPolicy(function, coefficients, f"Rosa, Carastan-Santos, Goldman: {workload}")


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


def load_fitted(path: Path, name: str) -> FittedPolicy:
    """Table `name` of a file written by `save_fitted`."""
    import tomllib

    try:
        table = tomllib.loads(path.read_text())[name]
    except FileNotFoundError:
        raise InputError(f"{path}: no such policy file") from None
    except OSError as exc:  # a directory, no permission
        raise InputError(f"{path}: cannot read the policy file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML ({exc})") from None
    except KeyError:
        raise InputError(f"{path}: no policy [{name}]") from None
    function = table.get("function")
    if function not in FUNCTIONS or tuple(table.get("terms", ())) != FUNCTIONS[function]:
        raise InputError(f"{path}: [{name}] function/terms must be one of {', '.join(FUNCTIONS)} with its terms")
    coefficients = table.get("coefficients", [])
    if len(coefficients) != len(FUNCTIONS[function]) or not all(isinstance(c, int | float) for c in coefficients):
        raise InputError(f"{path}: [{name}] coefficients: {len(FUNCTIONS[function])} numbers expected")
    return FittedPolicy(function, tuple(float(c) for c in coefficients), str(table.get("source", path)),
                        float(table.get("mae", math.nan)))
