"""The job ledger both engines keep: each job's record (one row of jobs.csv), the rows' order, the
busy resources, and the checks Batsim aborts on when a decision names a job or resources wrongly."""

from __future__ import annotations

from dataclasses import dataclass

from procset import ProcSet

from schedlab.errors import SimulationError
from schedlab.model import Job, JobState, Platform
from schedlab.resources import ResourceMask
from schedlab.workload import Workload


@dataclass(slots=True)
class JobRecord:
    """What happened to one job (one row of jobs.csv)."""

    job: Job
    state: JobState = JobState.NOT_SUBMITTED
    start_s: float | None = None
    finish_s: float | None = None
    alloc: ProcSet | None = None
    metadata: str = ""
    final_on_completion: JobState = JobState.COMPLETED_SUCCESSFULLY

    def span_s(self) -> tuple[float, float]:
        """(start, finish) of a job that ran."""
        start, finish = self.start_s, self.finish_s
        if start is None or finish is None:
            raise ValueError(f"job {self.job.id} has not run ({self.state.value})")
        return start, finish


class JobLedger:
    """`records` (by job id), `finished` (job ids in the order their rows are written: completion or
    rejection) and the resources in use."""

    def __init__(self, platform: Platform, workload: Workload) -> None:
        self.platform = platform
        self.records: dict[str, JobRecord] = {job.id: JobRecord(job) for job in workload.jobs}
        self.finished: list[str] = []
        self.resources = ResourceMask(platform.nb_resources)

    def record(self, job_id: str, what: str, now: float) -> JobRecord:
        """The record of a job a decision names (`what`: Batsim's name of the decision)."""
        record = self.records.get(job_id)
        if record is None:
            raise SimulationError(f"{what} for unknown job '{job_id}' at t={now!r}")
        return record

    def to_kill(self, job_id: str, now: float, *, forgotten: bool) -> JobRecord:
        """The record of a job a KILL_JOB names, with Batsim 4.2.1's checks (server_on_kill_jobs, in
        its order), which both engines apply: an unknown job aborts, so does one whose end Batsim has
        sent (`forgotten`: Batsim deletes a job once the message reporting its end is out, "it does
        not exist"), and so does one neither running nor complete."""
        record = self.record(job_id, "KILL_JOB", now)
        if forgotten:
            raise SimulationError(f"KILL_JOB for job '{job_id}' at t={now!r}, whose end Batsim has already "
                                  "sent and forgotten (Batsim 4.2.1 aborts: 'it does not exist')")
        if record.state is not JobState.RUNNING and not record.state.is_complete:
            raise SimulationError(f"KILL_JOB for job '{job_id}' at t={now!r}, which is {record.state.value}: "
                                  "not being executed nor completed (Batsim 4.2.1 aborts on this)")
        return record

    def submitted(self, job_id: str, what: str, now: float) -> JobRecord:
        """The record of a submitted job not yet decided, which `what` decides."""
        record = self.record(job_id, what, now)
        if record.state is not JobState.SUBMITTED:
            raise SimulationError(f"{what} for job '{job_id}' at t={now!r}, but it is "
                                  f"{record.state.value} (each job is decided exactly once, after its "
                                  "submission)")
        return record

    def start(self, record: JobRecord, alloc: ProcSet, now: float) -> None:
        """The job starts now on `alloc` (taken), or what Batsim would abort on is raised."""
        job = record.job
        intervals = alloc._itvs  # procset 1.x's sorted disjoint intervals (its len, min and max are Python code)
        if not intervals:
            size, lowest, highest = 0, 0, 0
        elif len(intervals) == 1:  # the common case: one run of ids
            lowest, highest = intervals[0]
            size = highest - lowest + 1
        else:
            size, lowest, highest = len(alloc), intervals[0][0], intervals[-1][1]
        if size != job.res:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: allocation '{alloc}' has "
                                  f"{size} resources, the job requests {job.res}")
        nb_resources = self.platform.nb_resources
        if lowest < 0 or highest >= nb_resources:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: allocation '{alloc}' is "
                                  f"outside resources 0-{nb_resources - 1}")
        overlap = self.resources.take_if_free(alloc, size)
        if overlap is not None:
            raise SimulationError(f"EXECUTE_JOB for job '{job.id}' at t={now!r}: resources '{overlap}' "
                                  "are already in use (compute sharing is disabled)")
        record.state, record.start_s, record.alloc = JobState.RUNNING, now, alloc

    def release(self, record: JobRecord) -> None:
        """The job's resources are free again."""
        assert record.alloc is not None  # a job that started
        self.resources.release(record.alloc, record.job.res)

    def add_row(self, record: JobRecord) -> None:
        self.finished.append(record.job.id)

    def finish(self, record: JobRecord, state: JobState, now: float) -> None:
        """The job ended now in `state`: resources released, its row written (`release` and
        `add_row` in one: the engine calls it at every end)."""
        record.state = state
        record.finish_s = now
        job, alloc = record.job, record.alloc
        assert alloc is not None  # a job that started
        self.resources.release(alloc, job.res)
        self.finished.append(job.id)

    def reject(self, record: JobRecord, reason: str = "") -> None:
        record.state = JobState.REJECTED
        if reason and not record.metadata:
            record.metadata = reason
        self.add_row(record)

    def undecided(self) -> list[str]:
        """Jobs submitted and never executed nor rejected (Batsim never ends with such)."""
        return [r.job.id for r in self.records.values() if r.state is JobState.SUBMITTED]
