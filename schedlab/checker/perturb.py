"""What the look-ahead runs change, and how the change reaches every copy of a file the scheduler
was given. Two kinds, each after a cut t (decisions at or before t must not change):

- run times: every job that ended after t gets another run time (longer or shorter, still ending
  after t if it starts as before);
- future arrivals: jobs submitted after t are removed, shifted later, or added.

A change is kept by job (name, submit time, size), so that it applies to the simulated workload's
copy and to any option file that holds the same jobs (the whole workload given as a "history"); a
file of other jobs (a real history, which ends before the simulation) is copied as it is. Profile
names keep the user's form: a number in the name equal to the old delay becomes the new one
(`delay_3600` -> `delay_5117`)."""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Doc = dict[str, Any]  # a Batsim JSON workload as parsed


def job_key(raw: dict[str, Any]) -> tuple[str, float, int]:
    """A job of a workload file: (name, submit time, size)."""
    return (str(raw.get("id")), float(raw.get("subtime", math.nan)), int(raw.get("res", -1)))


@dataclass
class Changes:
    """What one perturbed run changes, by job (`job_key`)."""

    kind: str  # "run times" | "arrivals"
    cut_s: float
    runtimes_s: dict[tuple[str, float, int], float] = field(default_factory=dict)
    removed: set[tuple[str, float, int]] = field(default_factory=set)
    shifted_s: dict[tuple[str, float, int], float] = field(default_factory=dict)
    added: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.runtimes_s or self.removed or self.shifted_s or self.added)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _renamed(name: str, old_s: float, new_s: float) -> tuple[str, float] | None:
    """(the name with each number equal to the old delay written as the new one, the new delay as
    the name says it), or None when no number in the name is the delay."""
    said = [new_s]

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if float(token) != old_s:
            return token
        if "." not in token:
            said[0] = float(max(1, math.ceil(new_s)))
            return str(int(said[0]))
        decimals = len(token.split(".")[1])
        while math.ceil(new_s * 10**decimals) <= 0 and decimals < 9:  # never a delay of 0 (Batsim refuses it)
            decimals += 1
        # rounded up: a job the change keeps ending after the cut still does as the name says it
        said[0] = float(f"{math.ceil(new_s * 10**decimals) / 10**decimals:.{decimals}f}")
        return f"{said[0]:.{decimals}f}"

    renamed = _NUMBER.sub(substitute, name)
    return (renamed, said[0]) if renamed != name else None


def _delay_of(doc: Doc, raw: dict[str, Any]) -> float | None:
    profile = doc.get("profiles", {}).get(raw.get("profile"))
    delay = profile.get("delay") if isinstance(profile, dict) else None
    return float(delay) if isinstance(delay, (int, float)) and not isinstance(delay, bool) else None


def apply_changes(doc: Doc, changes: Changes, *, simulated: bool) -> Doc:
    """A perturbed copy of `doc`. `simulated`: the simulated workload itself (added jobs join it);
    another file gains the added jobs only if it holds some of the changed ones."""
    out = copy.deepcopy(doc)
    profiles: dict[str, Any] = out.setdefault("profiles", {})
    jobs, touched = [], False
    for raw in out.get("jobs", []):
        key = job_key(raw) if isinstance(raw, dict) else None
        if key is None:
            jobs.append(raw)
            continue
        if key in changes.removed:
            touched = True
            continue
        if key in changes.shifted_s:
            raw["subtime"] = changes.shifted_s[key]
            touched = True
        if key in changes.runtimes_s:
            touched = True
            _set_delay(profiles, raw, changes.runtimes_s[key], _delay_of(doc, raw))
        jobs.append(raw)
    if simulated or touched:
        for added in changes.added:
            raw = dict(added["job"])
            if raw.get("profile") not in profiles and added.get("profile") is not None:
                profiles[raw["profile"]] = dict(added["profile"])
            jobs.append(raw)
    out["jobs"] = jobs
    return out


def _set_delay(profiles: dict[str, Any], raw: dict[str, Any], new_s: float, old_s: float | None) -> None:
    """The job on a profile of `new_s` seconds, named in the user's form where the name says the
    delay; another job's profile of the same name and delay is shared."""
    name = str(raw.get("profile"))
    base = dict(profiles.get(name, {"type": "delay"}))
    renamed = _renamed(name, old_s, new_s) if old_s is not None else None
    candidate, delay = renamed if renamed is not None else (f"{name}-{_short(new_s)}", new_s)
    stem, number = candidate, 1
    while candidate in profiles and profiles[candidate].get("delay") != delay:
        number += 1
        candidate = f"{stem}-{number}"
    profiles[candidate] = {**base, "delay": int(delay) if delay.is_integer() else delay}
    raw["profile"] = candidate


def _short(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def runtime_changes(doc: Doc, spans: dict[str, tuple[float | None, float | None]], cut_s: float,
                    seed: int) -> Changes:
    """Another run time for every job that ended after `cut_s` in the base run (`spans`: job name
    -> (start, finish)), longer or shorter at random, still ending after `cut_s` if it starts as
    before."""
    rng = np.random.default_rng(seed)
    changes = Changes("run times", cut_s)
    for raw in doc.get("jobs", []):
        start, finish = spans.get(str(raw.get("id")), (None, None))
        delay = _delay_of(doc, raw)
        if finish is None or finish <= cut_s or delay is None:
            continue
        if rng.random() < 0.5:
            new_s = delay * float(rng.uniform(1.2, 3.0)) + 1.0
        else:
            shortest = (cut_s - start) if start is not None else 0.0
            new_s = max(delay * float(rng.uniform(0.1, 0.8)), shortest + 0.5 * (delay - shortest))
        new_s = max(new_s, 0.001)
        if float(delay).is_integer():
            new_s = float(math.ceil(new_s))
        if new_s != delay:
            changes.runtimes_s[job_key(raw)] = new_s
    return changes


def arrival_changes(doc: Doc, cut_s: float, seed: int, nb_res: int) -> Changes:
    """Jobs submitted after `cut_s` removed (a quarter), shifted later (a third), and copies of some
    added at new instants after `cut_s` (a quarter as many)."""
    rng = np.random.default_rng(seed)
    changes = Changes("arrivals", cut_s)
    later = [raw for raw in doc.get("jobs", []) if isinstance(raw, dict) and float(raw.get("subtime", 0)) > cut_s]
    if not later:
        return changes
    last_s = max(float(raw["subtime"]) for raw in later)
    span_s = max(60.0, last_s - cut_s)
    integral = all(float(raw["subtime"]).is_integer() for raw in later)
    for raw in later:
        draw = rng.random()
        if draw < 0.25:
            changes.removed.add(job_key(raw))
        elif draw < 0.6:
            shift = float(rng.uniform(1.0, 0.2 * span_s))
            changes.shifted_s[job_key(raw)] = float(raw["subtime"]) + (math.ceil(shift) if integral else shift)
    names = {str(raw.get("id")) for raw in doc.get("jobs", [])}
    for number in range(max(1, len(later) // 4)):
        model = later[int(rng.integers(len(later)))]
        name = f"{model.get('id')}x{number}"
        while name in names:
            name += "x"
        names.add(name)
        submit = cut_s + float(rng.uniform(0.001, span_s))
        job = {**model, "id": name, "subtime": float(math.ceil(submit)) if integral else submit,
               "res": min(int(model.get("res", 1)), nb_res)}
        profile = doc.get("profiles", {}).get(model.get("profile"))
        changes.added.append({"job": job, "profile": profile})
    return changes
