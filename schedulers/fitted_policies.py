"""Regression-obtained queue policies (Rosa, Carastan-Santos, Goldman): polynomials f(p~, q, r)
as a scheduler evaluates them, their published coefficients, and fitted files loaded by name
(`queue_order=FILE#NAME`). Fitting them on permutation-simulation scores is the policy factory's
(schedlab/experiments/studies/policy_fitting.py, schedlab/experiments/studies/policy_scores.py).

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

import math
from dataclasses import dataclass
from pathlib import Path

from schedlab.errors import InputError
from schedlab.parsing import toml_loads

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


def load_fitted(path: Path, name: str) -> FittedPolicy:
    """Table `name` of a file written by `save_fitted`."""
    import tomllib

    try:
        table = toml_loads(path.read_text())[name]
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
