"""Runs that never hold the whole workload nor its outcomes (traces of tens of millions of jobs).

`StreamEngine` is the embedded engine (ideal timing) reading a `StreamedWorkload`: the next job is
read when the previous submission is handled, so the heap holds one pending submission; a job's
record lives from its reading to its end, when `RowWriter` writes its jobs.csv row, keeps what the
metrics need (`metrics.OutcomeColumns`: 32 bytes a job) and forgets it. Same events, same order,
same rows as `Engine` on the whole workload (tested on prefixes). What a run holds is then the
queue, the running jobs and what the scheduler itself keeps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import IO

from schedlab import abilities
from schedlab.engine.core import Engine
from schedlab.engine.ledger import JobRecord
from schedlab.host import Event, SchedulerHooks
from schedlab.metrics import OutcomeColumns
from schedlab.model import Job, Platform, Profile
from schedlab.workload import StreamedWorkload


class RowWriter:
    """The `finished` of a streamed run: `append(job_id)` writes the job's row, adds it to the
    columns and forgets its record and profile; `len()` counts the rows. Rows cannot be listed
    again (they are in jobs.csv)."""

    def __init__(self, handle: IO[str], records: dict[str, JobRecord], profiles: dict[str, Profile],
                 uses: dict[str, int]) -> None:
        from schedlab.outputs import job_row

        self.handle, self.records, self.profiles, self.uses = handle, records, profiles, uses
        self.columns = OutcomeColumns()
        self._row = job_row
        self.count = 0

    def append(self, job_id: str) -> None:
        record = self.records.pop(job_id)
        job = record.job
        self.handle.write(self._row(record) + "\n")
        self.columns.add(job.submit_time_s, job.res, record.state.value, record.start_s, record.finish_s)
        self.count += 1
        profile, uses = job.profile, self.uses
        left = uses[profile] - 1
        if left:
            uses[profile] = left
        else:
            del uses[profile], self.profiles[profile]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a streamed run's rows are in its jobs.csv, not kept")


class StreamEngine(Engine):
    """`Engine` on a StreamedWorkload; `rows` receives every row as it is decided."""

    def __init__(self, platform: Platform, workload: StreamedWorkload, scheduler: SchedulerHooks, *, rows: IO[str],
                 progress: Callable[[int], None] | None = None) -> None:
        live = dataclasses.replace(workload, profiles={})  # the profiles of the jobs read and not ended
        abilities.forgets_ended_jobs(scheduler)  # a job's report-only entries go once it ended
        super().__init__(platform, live, scheduler, progress=progress)
        self._profiles: dict[str, Profile] = live.profiles  # type: ignore[assignment]
        self._uses: dict[str, int] = {}  # jobs read and not ended, per profile
        self.finished = self.ledger.finished = RowWriter(rows, self.records, self._profiles, self._uses)  # type: ignore[assignment]
        self._source: Iterator[tuple[Job, Profile]] = iter(workload.stream())
        self._last_submit_s: float | None = None
        self.nb_jobs_read = 0
        self.most_jobs_held = 0  # the most job records held at once: what a run's memory follows
        self._read()

    @property
    def columns(self) -> OutcomeColumns:
        return self.finished.columns  # type: ignore[attr-defined]

    def _read(self) -> None:
        """The next job of the stream into the heap (or, after the last, the end of submissions)."""
        item = next(self._source, None)
        if item is None:
            if self._last_submit_s is not None:
                self._push(self._last_submit_s, Event.NO_MORE_JOBS, None)
                self._last_submit_s = None
            return
        job, profile = item
        if self._last_submit_s is not None and job.submit_time_s < self._last_submit_s:
            raise ValueError(f"the stream is not in submission order at job {job.id!r}")
        records = self.records
        records[job.id] = JobRecord(job)
        if len(records) > self.most_jobs_held:
            self.most_jobs_held = len(records)
        self._profiles[job.profile] = profile
        uses = self._uses
        uses[job.profile] = uses.get(job.profile, 0) + 1
        self._last_submit_s = job.submit_time_s
        self.nb_jobs_read += 1
        self._push(job.submit_time_s, Event.JOB_SUBMITTED, job)

    def _submission_read(self) -> None:
        self._read()
