"""Batsim JSON workloads: load and validate (`nb_res`, `jobs`, `profiles`), with file:line errors."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab.errors import InputError
from schedlab.model import Job, Profile
from schedlab.protocol import batsim_numbers
from schedlab.protocol.jobs import (
    BATSIM_PROFILE_TYPES,
    JobFieldError,
    job_from_json,
    job_to_json,
    profile_from_json,
)


@dataclass(frozen=True)
class Workload:
    """Jobs in Batsim's submission order, with the profiles they use."""

    name: str
    jobs: tuple[Job, ...]
    profiles: Mapping[str, Profile]
    nb_res: int | None = None
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = dict(self.extra)
        if self.nb_res is not None:
            obj["nb_res"] = self.nb_res
        obj["jobs"] = [job_to_json(job, qualified=False) for job in self.jobs]
        obj["profiles"] = {name: dict(p.raw) for name, p in self.profiles.items()}
        return obj


@dataclass(frozen=True)
class StreamedWorkload(Workload):
    """A workload read as a stream (`stream()`: (Job, Profile) pairs in Batsim's submission order,
    each job with a profile of its own), never held whole: `jobs` is empty, `head` its first jobs
    (what `Scheduler.check_inputs` is shown), `nb_jobs` how many it has. Only the embedded engine
    with ideal timing runs it (engine/stream.py); the rest refuses it."""

    stream: Any = None  # () -> Iterator[tuple[Job, Profile]]
    nb_jobs: int = 0
    head: tuple[Job, ...] = ()


@dataclass(frozen=True)
class InputsView(Workload):
    """What `Scheduler.check_inputs` is given to check its files against (`inputs_view`): the jobs
    (copies: ids, sizes, submit times, walltimes, extra fields), the workload's own fields, the
    profiles' names and types but never their delays, no path to the file (`source` is empty) but
    its sha256 (a model trained on the file itself is known by it)."""

    source_sha256: str | None = None


def inputs_view(workload: Workload) -> InputsView:
    """`workload` as `Scheduler.check_inputs` sees it: everything it needs to validate options and
    files against (sizes, submit times, walltimes, extra fields), nothing a plan could use to look
    ahead (no run time, no path to open)."""
    from types import MappingProxyType

    from schedlab.paths import sha256_file

    digest = sha256_file(workload.source) if workload.source and Path(workload.source).is_file() else None
    profiles = {name: Profile(name, profile.type, None, MappingProxyType({"type": profile.type}))
                for name, profile in workload.profiles.items()}
    jobs = workload.head if isinstance(workload, StreamedWorkload) else workload.jobs
    return InputsView(name=workload.name, jobs=tuple(job.view() for job in jobs), profiles=profiles,
                      nb_res=workload.nb_res, source="", extra=workload.extra, source_sha256=digest)


def _line_of_job(text: str, raw_id: Any, occurrence: int = 0) -> int | None:
    """Best-effort line of a job object: the `occurrence`-th `"id": <raw_id>` in the text (JSON
    parsers keep no positions)."""
    pattern = re.compile(r'"id"\s*:\s*' + re.escape(json.dumps(raw_id)) + r"\s*[,}]")
    for seen, match in enumerate(pattern.finditer(text)):
        if seen == occurrence:
            return text.count("\n", 0, match.start()) + 1
    return None


def job_line(path: str | Path, name: str) -> int | None:
    """The line of job `name` (its id without the workload prefix) in a workload file, for messages."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return _line_of_named_job(text, name)


def _line_of_named_job(text: str, name: str) -> int | None:
    """The line of job `name`, whose id may be written as a number or a string."""
    return (_line_of_job(text, int(name)) if name.isdigit() else None) or _line_of_job(text, name)


def _line_of_text(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1


#: what may hold a number RapidJSON refuses (NaN, Infinity, too big): the text is then read strictly too
_MAY_BE_REFUSED = re.compile(r"NaN|Infinity|[eE]\+?0*[1-9]\d{2}|\d{300}")


def parse_workload(text: str, path: str = "<string>", name: str = "w0") -> Workload:
    try:
        doc = batsim_numbers.loads(text, strict=False)  # numbers as Batsim 4.2.1 reads them (RapidJSON)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=path, line=exc.lineno) from None
    except ValueError:  # Python's json refuses integers of more than 4,300 digits (no double holds them)
        long = re.search(r"\d{4300}", text)
        raise InputError("a number of more than 4,300 digits: Batsim's JSON reader (RapidJSON) refuses it", path=path,
                         line=text.count("\n", 0, long.start()) + 1 if long else None) from None
    workload = _workload_of(doc, text, path, name)  # a field's own check names it first
    if _MAY_BE_REFUSED.search(text):
        try:
            batsim_numbers.loads(text)
        except batsim_numbers.NumberError as exc:
            raise InputError(f"{exc.token[:40]} is a number Batsim's JSON reader (RapidJSON) refuses: Batsim cannot "
                             "load this file", path=path, line=_line_of_text(text, exc.token)) from None
    return workload


def _workload_of(doc: Any, text: str, path: str, name: str) -> Workload:
    if not isinstance(doc, dict):
        raise InputError("a Batsim workload is a JSON object", path=path, line=1)
    nb_res = doc.get("nb_res")
    if nb_res is not None and (isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res <= 0):
        raise InputError(f"expected an integer > 0, got {nb_res!r}", path=path, field="nb_res")
    raw_jobs = doc.get("jobs")
    if not isinstance(raw_jobs, list):
        raise InputError("missing or not a list", path=path, field="jobs")
    raw_profiles = doc.get("profiles", {})
    if not isinstance(raw_profiles, dict):
        raise InputError("not a JSON object", path=path, field="profiles")
    profiles: dict[str, Profile] = {}
    for pname, pobj in raw_profiles.items():
        try:
            profiles[pname] = profile_from_json(pname, pobj)
        except JobFieldError as exc:
            line = _line_of_text(text, json.dumps(pname) + ":")
            raise InputError(str(exc), path=path, line=line, field=f"profiles.{pname}.{exc.field}") from None
    jobs: list[Job] = []
    seen: dict[str, int] = {}
    for index, obj in enumerate(raw_jobs):
        raw_id = obj.get("id") if isinstance(obj, dict) else None
        occurrence = seen.get(f"{name}!{raw_id}", 0)
        try:
            job = job_from_json(obj, name)
        except JobFieldError as exc:
            raise InputError(f"job #{index} (id {raw_id!r}): {exc}", path=path,
                             line=_line_of_job(text, raw_id, occurrence), field=exc.field) from None
        if job.id in seen:
            raise InputError(f"duplicate job id {raw_id!r}", path=path,
                             line=_line_of_job(text, raw_id, occurrence), field="id")
        if job.profile not in profiles:
            raise InputError(f"job {raw_id!r} uses undefined profile {job.profile!r}", path=path,
                             line=_line_of_job(text, raw_id, occurrence), field="profile")
        seen[job.id] = 1
        jobs.append(job)
    # Batsim's submission order: submission time, then the full id as a string ("w0!10" < "w0!2").
    jobs.sort(key=lambda j: (j.submit_time_s, j.id))
    extra = {k: v for k, v in doc.items() if k not in ("nb_res", "jobs", "profiles")}
    return Workload(name=name, jobs=tuple(jobs), profiles=profiles, nb_res=nb_res, source=path, extra=extra)


def _read_text(path: Path) -> str:
    from schedlab.paths import read_input_text

    return read_input_text(path, "a Batsim JSON workload")


def load_workload(path: str | Path, name: str = "w0") -> Workload:
    path = Path(path)
    return parse_workload(_read_text(path), str(path), name)


def require_batsim_fields(workload: Workload, text: str | None = None) -> None:
    """What real Batsim 4.2.1 refuses at start-up, refused here too (`workload check` and every
    command that simulates a workload file): no `nb_res`, a profile type it does not know."""
    path = workload.source or None
    if workload.nb_res is None:
        raise InputError("missing (Batsim 4.2.1 requires it)", path=path, field="nb_res")
    for pname, profile in workload.profiles.items():
        if profile.type not in BATSIM_PROFILE_TYPES:
            if text is None and path is not None and Path(path).is_file():
                text = _read_text(Path(path))
            raise InputError(f"profile {pname!r} has type {profile.type!r}, unknown to Batsim 4.2.1 (known: "
                             f"{', '.join(sorted(BATSIM_PROFILE_TYPES))})", path=path,
                             line=_line_of_text(text or "", json.dumps(pname) + ":"), field="type")


def check_workload_file(path: str | Path) -> tuple[Workload, list[str], list[str]]:
    """Load a workload and apply the checks real Batsim 4.2.1 makes at start-up (nb_res present,
    known profile types): failures raise InputError naming the line. Returns the workload, warnings
    (jobs larger than nb_res: Batsim loads them, a scheduler must reject them; `--too-large reject`
    conversions make them on purpose) and notes (run-time leaks)."""
    path = Path(path)
    text = _read_text(path)
    workload = parse_workload(text, str(path))
    require_batsim_fields(workload, text)
    warnings = []
    nb_res = workload.nb_res
    assert nb_res is not None  # require_batsim_fields: a workload file has one
    too_large = [job for job in workload.jobs if job.res > nb_res]
    if too_large:
        job = too_large[0]
        line = _line_of_named_job(text, job.name)
        warnings.append(str(InputError(
            f"{len(too_large)} job(s) request more than nb_res {workload.nb_res} (first: job {job.name!r}, "
            f"{job.res} resources): the scheduler must reject them", path=str(path), line=line, field="res")))
    lost = rounding_losses(workload)
    if lost is not None:
        warnings.append(f"{path}: {lost}")
    return workload, warnings, _leak_notes(workload)


def rounding_losses(workload: Workload) -> str | None:
    """What floating point takes from run times and walltimes at the jobs' submit times, said of the
    first job it hits (a subtime of 1e300 leaves a 100 s run 0 s long: the job ends as it starts, in
    real Batsim too, which computes in the same doubles), or None."""
    hit = []
    for job in workload.jobs:
        profile = workload.profiles.get(job.profile)
        run_s = profile.delay_s if profile is not None else None
        for what, span in (("run time", run_s), ("walltime", job.walltime_s)):
            if span is not None and span > 0:
                kept = (job.submit_time_s + span) - job.submit_time_s
                if abs(kept - span) > 1e-6 * span:
                    hit.append((job, what, span, kept))
    if not hit:
        return None
    job, what, span, kept = hit[0]
    return (f"{len(hit)} run time(s) or walltime(s) are changed by rounding at their submit time (first: job "
            f"{job.name!r} submitted at {job.submit_time_s:g} s: its {what} of {span:g} s becomes {kept:g} s, as in "
            "Batsim, which computes in the same floating point)")


def _leak_notes(workload: Workload) -> list[str]:
    """Profile names and profile sharing are visible to schedulers (JOB_SUBMITTED carries the name)."""
    notes = []
    delays = {n: p.delay_s for n, p in workload.profiles.items() if p.delay_s is not None}
    own = {job.profile for job in workload.jobs if job.profile == job.name}  # named after its job: no leak
    telling = [n for n, d in delays.items()
               if n not in own and d >= 10 and re.search(rf"(?<!\d){int(d)}(?!\d)", n)]
    if telling:
        notes.append(f"{len(telling)} of {len(delays)} delay profile names contain their delay (e.g. "
                     f"{telling[0]!r}): schedulers see profile names, so they can read run times")
    users = Counter(job.profile for job in workload.jobs)
    shared = sum(count for name, count in users.items() if count > 1 and name in delays)
    if shared:
        notes.append(f"{shared} jobs share a delay profile with another job: a scheduler can tell they run "
                     "equally long (schedlab's converters give each job its own profile)")
    return notes
