"""Run any schedlab scheduler under pybatsim 3.2.1 (`pybatsim path/to/schedlabEasy.py`).

pybatsim loads a file and instantiates the class named after it (`schedlabEasy.py` ->
`SchedlabEasy`). Options come from pybatsim's `-o '{"queue_order": "spt"}'`. pybatsim is imported
only here, lazily: schedlab itself never needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedlab.host import Event, SchedulerDriver
from schedlab.model import CallMeLater, Execute, JobState, Kill, Platform, Reject, SetMetadata
from schedlab.protocol.jobs import job_from_json


def _execute(bs: Any, decision: Execute, batch: dict[str, list[Any]]) -> None:
    job = bs.jobs[decision.job_id]
    job.allocation = decision.alloc
    batch["execute"].append(job)


def _reject(bs: Any, decision: Reject, batch: dict[str, list[Any]]) -> None:
    if decision.reason:
        bs.set_job_metadata(decision.job_id, decision.reason)
    batch["reject"].append(bs.jobs[decision.job_id])


#: How each decision reaches pybatsim (executions and rejections are sent in one batch each).
_APPLY: dict[type, Callable[[Any, Any, dict[str, list[Any]]], None]] = {
    Execute: _execute,
    Reject: _reject,
    CallMeLater: lambda bs, d, batch: bs.wake_me_up_at(d.at_s),
    Kill: lambda bs, d, batch: bs.kill_jobs([bs.jobs[j] for j in d.job_ids]),
    SetMetadata: lambda bs, d, batch: bs.set_job_metadata(d.job_id, d.metadata),
}


def pybatsim_scheduler(scheduler_name: str, class_name: str) -> type:
    """A `batsim.batsim.BatsimScheduler` subclass driving the registered scheduler `scheduler_name`."""
    from batsim.batsim import BatsimScheduler  # pybatsim

    from schedlab.schedulers.base import create_scheduler

    def __init__(self: Any, options: dict[str, Any] | None = None) -> None:  # noqa: N807
        BatsimScheduler.__init__(self, options or {})
        opts = {k: v for k, v in (options or {}).items() if k not in ("export_prefix",)}
        self.scheduler = create_scheduler(scheduler_name, opts)
        self.driver = SchedulerDriver(self.scheduler)
        self.dirty = False

    def tell(self: Any, event: Event, payload: Any) -> None:
        self.driver.deliver([(event, payload)], self.bs.time())
        self.dirty = self.dirty or event is not Event.NO_MORE_JOBS

    def onSimulationBegins(self: Any) -> None:  # noqa: N802 (pybatsim's names)
        names = tuple(str(r["name"]) for _, r in sorted(self.bs.compute_resources.items()))
        self.tell(Event.SIMULATION_BEGINS, Platform(names, source="pybatsim"))  # prepared first

    def onJobSubmission(self: Any, job: Any) -> None:  # noqa: N802
        self.tell(Event.JOB_SUBMITTED, job_from_json(job.json_dict))

    def onJobCompletion(self: Any, job: Any) -> None:  # noqa: N802
        self.tell(Event.JOB_COMPLETED, (job.id, JobState(job.job_state.name)))

    def onJobsKilled(self: Any, jobs: Any) -> None:  # noqa: N802
        self.tell(Event.JOBS_KILLED, [j.id for j in jobs])

    def onRequestedCall(self: Any) -> None:  # noqa: N802
        self.tell(Event.REQUESTED_CALL, None)

    def onNoMoreJobsInWorkloads(self: Any) -> None:  # noqa: N802
        self.tell(Event.NO_MORE_JOBS, None)

    def onNoMoreEvents(self: Any) -> None:  # noqa: N802
        if not self.dirty:
            return
        self.dirty = False
        bs = self.bs
        batch: dict[str, list[Any]] = {"execute": [], "reject": []}
        for decision in self.driver.decide(bs.time()):
            _APPLY[type(decision)](bs, decision, batch)
        if batch["reject"]:
            bs.reject_jobs(batch["reject"])
        if batch["execute"]:
            bs.execute_jobs(batch["execute"])

    namespace = {name: fn for name, fn in locals().items() if callable(fn) and name[0] in "_ot"}
    namespace["__init__"] = __init__
    return type(class_name, (BatsimScheduler,), namespace)
