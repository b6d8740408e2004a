"""Batsim job and profile JSON objects <-> the core model (shared by workload files and messages)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from schedlab.model import Job, Profile

#: Fields of a Batsim job object that the model holds in named attributes.
CORE_JOB_FIELDS = frozenset({"id", "subtime", "res", "walltime", "profile"})


class JobFieldError(ValueError):
    """A job/profile object is invalid; `field` names the culprit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


#: Profile types Batsim 4.2.1 knows (src/profiles.cpp); the embedded engine replays `delay` only.
BATSIM_PROFILE_TYPES = frozenset({
    "delay", "parallel", "parallel_homogeneous", "parallel_homogeneous_total", "composed",
    "parallel_homogeneous_pfs", "data_staging", "send", "recv", "smpi", "usage_trace",
})


def _number(obj: Mapping[str, Any], key: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise JobFieldError(key, f"expected a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any double: Batsim's JSON reader refuses it too
        bits = int(value).bit_length()
        raise JobFieldError(key, f"expected a finite number, got an integer of {bits} bits") from None
    if not math.isfinite(number):  # Python's json reads NaN and Infinity; Batsim's does not
        raise JobFieldError(key, f"expected a finite number, got {value!r}")
    return number


def job_from_json(obj: Mapping[str, Any], workload_name: str | None = None) -> Job:
    """Build a Job from a Batsim job object, applying Batsim's own checks.

    With `workload_name`, a bare workload id ("3" or 3) becomes Batsim's "w0!3"; without it the
    id is taken as already qualified (as in JOB_SUBMITTED messages).
    """
    if not isinstance(obj, Mapping):
        raise JobFieldError("job", f"expected a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        raise JobFieldError("id", "missing")
    raw_id = obj["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, int | str) or raw_id == "":
        raise JobFieldError("id", f"expected a non-empty string or integer, got {raw_id!r}")
    job_id = str(raw_id) if workload_name is None else f"{workload_name}!{raw_id}"
    subtime = _number(obj, "subtime")
    if subtime < 0:
        raise JobFieldError("subtime", f"must be >= 0, got {subtime:g}")
    res = obj.get("res")
    if isinstance(res, bool) or not isinstance(res, int) or res <= 0:
        raise JobFieldError("res", f"expected an integer > 0, got {res!r}")
    walltime: float | None = None
    if "walltime" in obj:
        walltime = _number(obj, "walltime")
        if walltime == -1:
            walltime = None
        elif walltime <= 0:
            raise JobFieldError("walltime", f"must be -1 (none) or > 0, got {walltime:g}")
    profile = obj.get("profile")
    if not isinstance(profile, str) or not profile:
        raise JobFieldError("profile", f"expected a profile name, got {profile!r}")
    extra = {k: v for k, v in obj.items() if k not in CORE_JOB_FIELDS}
    return Job(id=job_id, submit_time_s=subtime, res=res, walltime_s=walltime, profile=profile,
               extra=MappingProxyType(extra) if extra else MappingProxyType({}))


def job_to_json(job: Job, *, qualified: bool = True) -> dict[str, Any]:
    """The Batsim job object (what JOB_SUBMITTED carries), extra fields included."""
    obj: dict[str, Any] = {
        "id": job.id if qualified else _bare_id(job.name),
        "subtime": _compact(job.submit_time_s),
        "walltime": -1 if job.walltime_s is None else _compact(job.walltime_s),
        "res": job.res,
        "profile": job.profile,
    }
    obj.update(job.extra)
    return obj


def profile_from_json(name: str, obj: Mapping[str, Any]) -> Profile:
    if not isinstance(obj, Mapping):
        raise JobFieldError("profiles", f"profile '{name}' is not a JSON object")
    ptype = obj.get("type")
    if not isinstance(ptype, str):
        raise JobFieldError("type", f"profile '{name}' has no string 'type'")
    delay = None
    if ptype == "delay":
        delay = _number(obj, "delay")
        if delay <= 0:
            raise JobFieldError("delay", f"profile '{name}' must have delay > 0, got {delay:g}")
    ret = obj.get("ret", 0)
    if type(ret) is not int or ret < 0:  # Batsim reads -1 as 'walltime reached', -2 as 'killed'
        raise JobFieldError("ret", f"profile '{name}' must have an integer 'ret' >= 0, got {ret!r}")
    return Profile(name=name, type=ptype, delay_s=delay, raw=MappingProxyType(dict(obj)), return_code=ret)


def _compact(value: float) -> int | float:
    """Integers stay integers in JSON (Batsim's own files write `"subtime": 3`)."""
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def _bare_id(name: str) -> int | str:
    return int(name) if name.isdigit() and str(int(name)) == name else name
