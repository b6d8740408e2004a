"""The schedule's invariants, checked again after a run independently of the engine's own checks,
and what is legal under Batsim but worth a warning."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from schedlab.model import Job, JobState


def invariant_failure(engine: Any, *, tolerance_s: float = 1e-6,
                      may_reject: Callable[[Job], bool] | None = None) -> str | None:
    """The first broken schedule invariant of a finished run, checked again independently of the
    engine's own checks, or None: each job decided once (and finished once); no start before its
    submission; an allocation of exactly its size within the platform; each job ran its profile's
    delay (COMPLETED_SUCCESSFULLY) or was killed exactly at its walltime (COMPLETED_WALLTIME_REACHED),
    or by a Kill; no resource used by two jobs at once. Times compare within `tolerance_s` (the
    property tests: 0). `may_reject(job)`: which rejections are allowed (default: any, a scheduler's
    right under Batsim)."""

    if sorted(engine.finished) != sorted(engine.records) or len(set(engine.finished)) != len(engine.finished):
        undecided = sorted(set(engine.records) - set(engine.finished))
        return f"jobs decided or finished other than once: {undecided[:3] or 'a job finished twice'}"
    nb_res = engine.platform.nb_resources
    events = []
    for record in engine.records.values():
        job = record.job
        if record.state is JobState.REJECTED:
            if may_reject is not None and not may_reject(job):
                return f"job {job.id} (res {job.res}, walltime {job.walltime_s}) was rejected though it can run"
            continue
        if record.start_s is None or record.finish_s is None:
            continue
        start_s, finish_s = record.start_s, record.finish_s
        if start_s < job.submit_time_s - tolerance_s:
            return f"job {job.id} started at {start_s} before its submission at {job.submit_time_s}"
        if record.alloc is not None and (len(record.alloc) != job.res or record.alloc.min < 0
                                         or record.alloc.max >= nb_res):
            return f"job {job.id} requested {job.res} resources and got {record.alloc} on {nb_res}"
        runtime = finish_s - start_s
        delay_s = engine.workload.profiles[job.profile].replay_delay_s
        walltime_s = math.inf if job.walltime_s is None else job.walltime_s
        expected = min(delay_s, walltime_s)
        if record.state is not JobState.COMPLETED_KILLED:
            if abs(finish_s - (start_s + expected)) > tolerance_s:  # the engine adds, as Batsim
                return (f"job {job.id} ran {runtime} s, not {expected} s (its profile's {delay_s} s, killed at its "
                        f"walltime {job.walltime_s} s)")
            state = JobState.COMPLETED_WALLTIME_REACHED if delay_s >= walltime_s else JobState.COMPLETED_SUCCESSFULLY
            if record.state is not state:
                return f"job {job.id} ended {record.state.value}, not {state.value}"
        if finish_s > start_s + walltime_s + tolerance_s:
            return f"job {job.id} ran {runtime} s, past its walltime {job.walltime_s} s (Batsim kills it there)"
        if record.alloc is not None and runtime > 0:
            for resource in record.alloc:
                events.append((resource, start_s, finish_s, job.id))
    events.sort()
    for (res_a, _, end_a, job_a), (res_b, start_b, _, job_b) in itertools.pairwise(events):
        if res_a == res_b and start_b < end_a - tolerance_s:
            return f"resource {res_a} used by {job_a} and {job_b} at once (t={start_b})"
    return None


def suspicious(engine: Any) -> dict[str, list[str]]:
    """What Batsim allows but a user should see: jobs killed before their walltime (by a Kill),
    jobs rejected though they fit the machine; job ids by kind."""
    nb_res = engine.platform.nb_resources
    found: dict[str, list[str]] = {"killed before their walltime": [], "rejected though they fit the machine": []}
    for record in engine.records.values():
        job = record.job
        if record.state is JobState.COMPLETED_KILLED:
            found["killed before their walltime"].append(job.id)
        elif record.state is JobState.REJECTED and job.res <= nb_res:
            found["rejected though they fit the machine"].append(job.id)
    return found
