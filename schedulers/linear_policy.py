"""A scoring policy linear in its coefficients (as the regression-obtained queue policies are): each
allowed job's score is a weighted sum of basis functions of its observed features; the best scored
job starts, and the policy waits only when no job is allowed. Saved as JSON (weights, observation settings, how it
was trained), never pickled: `schedlab simulate -s policy -O policy=FILE.json` runs it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from schedlab.errors import InputError
from schedlab.parsing import json_loads
from schedlab.schedulers.observation import (
    FITS,
    JOB_FEATURES,
    PREDICTION,
    REQUESTED,
    RES,
    USER_LAST2,
    USER_RUNNING,
    WAIT,
    ObservationLayout,
)

KIND = "schedlab-linear-scoring-policy"
#: the basis: log(1 + seconds) of the time features, log of the requested resources, the user's
#: running jobs and whether the job fits now
BASIS = ("log_wait_s", "log_requested_s", "log_prediction_s", "log_user_last2_s", "log_res",
         "user_running_jobs", "fits_now")


class LinearScoringPolicy:
    """score(job) = weights . basis(job); the action is the allowed job of highest score (the first
    on ties), or wait when none is allowed. `settings`: the observation it was trained on
    (`AgentScheduler.observation_settings()`), checked by whoever runs it."""

    def __init__(self, weights: Any, *, settings: dict[str, Any], card: dict[str, Any] | None = None) -> None:
        self.weights = np.asarray(weights, float)
        if self.weights.shape != (len(BASIS),):
            raise ValueError(f"weights: expected {len(BASIS)} numbers ({', '.join(BASIS)}), got {self.weights.shape}")
        self.settings = dict(settings)
        self.layout = ObservationLayout(int(settings["max_queue"]), tuple(float(h) for h in settings["horizons_s"]),
                                        float(settings["time_scale_s"]))
        self.card = dict(card or {})

    def basis(self, observation: np.ndarray) -> np.ndarray:
        """(K, len(BASIS)): each visible job's basis values."""
        layout = self.layout
        rows = np.asarray(observation[:layout.machine_start], float).reshape(layout.max_queue, len(JOB_FEATURES))
        scale = layout.time_scale_s
        out = np.empty((layout.max_queue, len(BASIS)))
        out[:, 0] = np.log1p(np.maximum(rows[:, WAIT], 0.0) * scale)
        out[:, 1] = np.log1p(np.minimum(rows[:, REQUESTED] * scale, 1e12))
        out[:, 2] = np.log1p(np.minimum(rows[:, PREDICTION] * scale, 1e12))
        out[:, 3] = np.log1p(np.minimum(rows[:, USER_LAST2] * scale, 1e12))
        out[:, 4] = np.log(np.maximum(rows[:, RES], 1e-12))  # log(res) less a constant: same order
        out[:, 5] = rows[:, USER_RUNNING]
        out[:, 6] = rows[:, FITS]
        return out

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> int:
        wait = len(mask) - 1
        allowed = np.flatnonzero(mask[:wait])
        if not len(allowed):
            return wait
        scores = self.basis(observation)[allowed] @ self.weights
        return int(allowed[int(np.argmax(scores))])

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        return {"kind": KIND, "version": 1, "basis": list(BASIS), "weights": [float(w) for w in self.weights],
                "settings": self.settings, "card": self.card}

    def save(self, path: str | Path) -> Path:
        from schedlab.paths import atomic_write

        with atomic_write(path) as handle:
            handle.write(json.dumps(self.to_dict(), indent=1) + "\n")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> LinearScoringPolicy:
        try:
            doc = json_loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"cannot read the policy: {exc.strerror}", path=str(path)) from None
        except ValueError as exc:
            raise InputError(f"not JSON: {exc}", path=str(path)) from None
        if not isinstance(doc, dict) or doc.get("kind") != KIND:
            raise InputError(f"field 'kind': expected {KIND!r} (a policy saved by schedlab.rl)", path=str(path))
        if doc.get("basis") != list(BASIS):
            raise InputError(f"field 'basis': expected {list(BASIS)}", path=str(path))
        try:
            settings = doc["settings"]
            if not isinstance(settings, dict) or set(settings) != set(SETTINGS):
                raise ValueError(f"settings must have exactly the keys {', '.join(SETTINGS)}")
            if not isinstance(settings["backfill"], bool):
                raise ValueError("settings.backfill must be true or false")
            weights = [float(w) for w in doc["weights"]]
            if not all(math.isfinite(w) for w in weights):
                raise ValueError("weights must be finite")
            return cls(weights, settings=settings, card=doc.get("card") or {})
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"bad policy field: {exc}", path=str(path)) from None

    def check_settings(self, settings: dict[str, Any]) -> None:
        """A scheduler running this policy must observe as it was trained (ValueError otherwise,
        naming the options to give)."""
        differ = [key for key in SETTINGS if _same(settings.get(key)) != _same(self.settings[key])]
        if differ:
            wanted = ", ".join(f"{key}={_as_option(self.settings[key])}" for key in differ)
            raise ValueError(f"the policy was trained with {wanted}: give these options")


#: what a saved policy records of the observation it was trained on
SETTINGS = ("max_queue", "horizons_s", "time_scale_s", "backfill", "queue_order", "day_start_s", "model_sha256")


def _same(value: Any) -> Any:
    """A setting as compared (a JSON list and a tuple of the same numbers are the same)."""
    return [float(v) for v in value] if isinstance(value, list | tuple) else value


def _as_option(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(f"{v:g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) if value != "" else "(none)"
