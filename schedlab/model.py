"""Core model: jobs, profiles, platform, job states and scheduler decisions.

Everything here is immutable: schedulers receive jobs and return decisions; only the engine (or the
real Batsim) changes state. Times are seconds of simulated time (floats), as in Batsim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

from procset import ProcSet


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class JobState(Enum):
    """Batsim's job states (its `job_state` strings are the values)."""

    NOT_SUBMITTED = "NOT_SUBMITTED"
    SUBMITTED = "SUBMITTED"
    RUNNING = "RUNNING"
    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_FAILED = "COMPLETED_FAILED"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"
    REJECTED = "REJECTED"

    @property
    def is_final(self) -> bool:
        return self in _FINAL_STATES

    @property
    def is_complete(self) -> bool:
        """Ran and ended, however (Batsim's Job::is_complete): final, but not rejected."""
        return self in _COMPLETE_STATES


_COMPLETE_STATES = frozenset({
    JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_FAILED, JobState.COMPLETED_WALLTIME_REACHED,
    JobState.COMPLETED_KILLED,
})
_FINAL_STATES = _COMPLETE_STATES | {JobState.REJECTED}


#: Instants are compared within this: Batsim's time resolution is a microsecond, and a time computed
#: as (end - 60) - start may differ from (end - start) - 60 in the last bit.
TIME_TOLERANCE_S = 1e-6

@dataclass(frozen=True, slots=True)
class Profile:
    """A Batsim profile. Only `delay` profiles carry a duration the embedded engine can replay."""

    name: str
    type: str
    delay_s: float | None = None
    raw: Mapping[str, Any] = field(default_factory=_empty, compare=False, repr=False)
    #: Batsim's `ret`: a job that ends before its walltime is COMPLETED_FAILED when it is > 0
    return_code: int = 0

    @property
    def replay_delay_s(self) -> float:
        """The duration the engines replay: a delay profile's (they refuse the others up front)."""
        if self.delay_s is None:
            raise ValueError(f"profile {self.name!r} ({self.type}) has no delay the engines can replay")
        return self.delay_s

    @property
    def state_in_time(self) -> JobState:
        """The state of a job of this profile that ends before its walltime (Batsim's rule)."""
        return JobState.COMPLETED_SUCCESSFULLY if self.return_code == 0 else JobState.COMPLETED_FAILED


_PROFILE_SLOTS = tuple(getattr(Profile, name).__set__ for name in Profile.__slots__)
assert Profile.__slots__ == ("name", "type", "delay_s", "raw", "return_code")


def new_profile(name: str, type: str, delay_s: float | None, raw: Mapping[str, Any],
                return_code: int) -> Profile:
    """`Profile(...)` with every field, faster (as `new_job`)."""
    set_name, set_type, set_delay, set_raw, set_return = _PROFILE_SLOTS
    profile = object.__new__(Profile)
    set_name(profile, name)
    set_type(profile, type)
    set_delay(profile, delay_s)
    set_raw(profile, raw)
    set_return(profile, return_code)
    return profile


@dataclass(frozen=True, slots=True)
class Job:
    """A job as a scheduler sees it at submission: what Batsim forwards in JOB_SUBMITTED.

    `walltime_s` is the kill time (None = no walltime, Batsim's -1). The run time is not here: it is
    unknown to an online scheduler; the engine reads it from the profile. `extra` holds the workload's
    other job fields (user, memory, qos, ...) as submission-time features for predictors.
    """

    id: str
    submit_time_s: float
    res: int
    walltime_s: float | None
    profile: str
    extra: Mapping[str, Any] = field(default_factory=_empty, compare=False)

    @property
    def workload(self) -> str:
        return self.id.split("!", 1)[0] if "!" in self.id else ""

    @property
    def name(self) -> str:
        """The job's name within its workload (Batsim's `job_id` column of jobs.csv)."""
        return self.id.split("!", 1)[1] if "!" in self.id else self.id

    def view(self) -> Job:
        """An equal copy, what an engine hands a scheduler: the engine keeps its own Job, so a
        scheduler that rewrites the one it holds (even through `object.__setattr__`) changes
        nothing the engine does (when it kills the job, what jobs.csv says)."""
        return new_job(self.id, self.submit_time_s, self.res, self.walltime_s, self.profile, self.extra)


# Hot-path constructors of the two objects made once per job read (ten-million-job traces): they fill
# the slots through their descriptors, in half the time of the generated frozen `__init__` (which
# looks `object.__setattr__` up per field). Same objects, every field given, nothing checked.
_new_object = object.__new__
_JOB_SLOTS = tuple(getattr(Job, name).__set__ for name in Job.__slots__)
assert Job.__slots__ == ("id", "submit_time_s", "res", "walltime_s", "profile", "extra")


def new_job(id: str, submit_time_s: float, res: int, walltime_s: float | None, profile: str,
            extra: Mapping[str, Any]) -> Job:
    """`Job(...)` with every field, faster (see above)."""
    set_id, set_submit, set_res, set_walltime, set_profile, set_extra = _JOB_SLOTS
    job = _new_object(Job)
    set_id(job, id)
    set_submit(job, submit_time_s)
    set_res(job, res)
    set_walltime(job, walltime_s)
    set_profile(job, profile)
    set_extra(job, extra)
    return job


@dataclass(frozen=True, slots=True)
class Platform:
    """Compute resources in Batsim's id order (host names sorted as strings, master excluded)."""

    resource_names: tuple[str, ...]
    source: str = ""
    #: the longest time one of Batsim's internal messages takes to reach its server (the master), when
    #: the host knows it: 0 in the ideal engine, the routes' under `--timing batsim` and
    #: `serve --platform`; None otherwise (schedulers.wakeups bounds it from the replies)
    message_time_s: float | None = None

    @property
    def nb_resources(self) -> int:
        return len(self.resource_names)

    @classmethod
    def homogeneous(cls, nb_resources: int) -> Platform:
        """A platform of `nb_resources` anonymous resources (ids 0..n-1), for tests and generators."""
        width = len(str(max(nb_resources - 1, 0)))
        return cls(tuple(f"r{i:0{width}d}" for i in range(nb_resources)), source=f"<{nb_resources} resources>")


# ---------------------------------------------------------------------------------------------- decisions


@dataclass(frozen=True, slots=True)
class Execute:
    """Start `job_id` now on exactly the resources of `alloc` (size must equal the job's `res`)."""

    job_id: str
    alloc: ProcSet


@dataclass(frozen=True, slots=True)
class Reject:
    """Refuse `job_id`; `reason` is written to the job's metadata (jobs.csv) when not empty."""

    job_id: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class CallMeLater:
    """Ask for a REQUESTED_CALL at `at_s` (strictly in the future)."""

    at_s: float


@dataclass(frozen=True, slots=True)
class Kill:
    """Kill running jobs now (they complete as COMPLETED_KILLED)."""

    job_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SetMetadata:
    """Attach a string to a job; it lands in the `metadata` column of jobs.csv."""

    job_id: str
    metadata: str


Decision = Execute | Reject | CallMeLater | Kill | SetMetadata


@dataclass(frozen=True, slots=True)
class Deferred:
    """Decisions an external process timestamped later than the message's `now` (Batsim applies
    them at their own timestamps); only the engine's REQ side produces these."""

    at_s: float
    decisions: tuple[Decision, ...]
