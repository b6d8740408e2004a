"""The Python API: one simulation from a notebook or a script, `schedlab.simulate(...)`.

    import schedlab
    result = schedlab.simulate("lublin256", "w.json", "easy", options={"backfill_order": "sjbf"})
    result.jobs          # pandas DataFrame, Batsim's jobs.csv columns
    result.metrics       # the summary's metrics (mean waiting time, bounded slowdown, ...)
    result.write("out")  # jobs.csv, schedule.csv, summary.json as `schedlab simulate` writes them

Inputs are checked as the CLI checks them (InputError: one line naming the file and field).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from schedlab.model import Platform
from schedlab.workload import Workload

if TYPE_CHECKING:
    from schedlab.schedulers.interface import Scheduler

#: a scheduler as the API takes it: a name (shipped, plugin or MODULE:CLASS), a class or an instance
SchedulerGiven: TypeAlias = "str | type[Scheduler] | Scheduler"


@dataclass
class Result:
    """One finished (or stopped) simulation. `complete` is False when a rule was broken or the
    scheduler raised; `error` then says why and the tables hold what finished."""

    engine: Any = field(repr=False)
    summary: dict[str, Any]
    error: str | None
    _jobs: Any = field(default=None, repr=False)

    @property
    def complete(self) -> bool:
        return bool(self.summary["complete"])

    @property
    def metrics(self) -> dict[str, Any]:
        return self.summary["metrics"]

    @property
    def scheduler(self) -> Any:
        """The scheduler instance after the run (its diagnostics: predictions, alpha, ...)."""
        return self.engine.scheduler

    @property
    def jobs(self) -> Any:
        """Batsim's jobs.csv as a DataFrame (rows in completion order, Batsim's columns)."""
        if self._jobs is None:
            import pandas as pd

            from schedlab.outputs import JOBS_COLUMNS, job_row

            text = ",".join(JOBS_COLUMNS) + "\n" + "".join(
                job_row(self.engine.records[job_id]) + "\n" for job_id in self.engine.finished)
            texts = ("job_id", "workload_name", "profile", "final_state", "allocated_resources", "metadata")
            # names stay text ("007" is not 7); a rejected job's empty cells are missing numbers
            self._jobs = pd.read_csv(io.StringIO(text), dtype=dict.fromkeys(texts, str), keep_default_na=False,
                                     na_values={c: [""] for c in JOBS_COLUMNS if c not in texts})
        return self._jobs

    def write(self, out_dir: str | Path) -> Path:
        """jobs.csv, schedule.csv and summary.json into `out_dir` (made if needed); returns where
        they went: `out_dir`, or its incomplete/ when this run is incomplete and `out_dir` holds
        an earlier complete run (never replaced by an incomplete one)."""
        from schedlab.runs import write_run

        info: dict[str, Any] = {key: self.summary[key] for key in ("scheduler", "options", "platform", "workload",
                                                   "scheduler_report") if key in self.summary}
        return write_run(self.engine, out_dir, run_info=info,
                         simulation_time_s=self.summary["timing"]["simulation_time_s"], error=self.error)[1]


def _platform(platform: str | Path | Platform | int) -> Platform:
    import numbers

    from schedlab.errors import InputError
    from schedlab.platform import load_platform
    from schedlab.platforms import resolve_platform

    if isinstance(platform, Platform):
        return platform
    if isinstance(platform, numbers.Integral) and not isinstance(platform, bool):
        if platform < 1:
            raise InputError(f"platform: a number of resources must be at least 1, got {platform}")
        return Platform.homogeneous(int(platform))
    if not isinstance(platform, str | Path):
        raise InputError(f"platform: expected a shipped name, an XML path, a Platform or a number of resources, "
                         f"got {platform!r}")
    return load_platform(resolve_platform(platform))


def _workload(workload: str | Path | Workload) -> Workload:
    from schedlab.workload import load_workload

    return workload if isinstance(workload, Workload) else load_workload(workload)


def _scheduler(scheduler: SchedulerGiven, options: dict[str, Any] | None) -> Scheduler:
    from schedlab.errors import InputError
    from schedlab.schedulers.base import Scheduler, create_scheduler

    if isinstance(scheduler, Scheduler):
        if options:
            raise InputError("options= configures a scheduler given by name or class; this one is an instance")
        return scheduler
    if isinstance(scheduler, str) or (isinstance(scheduler, type) and issubclass(scheduler, Scheduler)):
        return create_scheduler(scheduler, options)
    raise InputError(f"scheduler: expected a name, a Scheduler subclass or an instance, got {type(scheduler).__name__}")


def simulate(platform: str | Path | Platform | int, workload: str | Path | Workload, scheduler: SchedulerGiven, *,
             options: dict[str, Any] | None = None, timing: str = "ideal", out: str | Path | None = None) -> Result:
    """Run `workload` on `platform` under `scheduler` on the embedded engine.

    platform: a shipped platform's name, a SimGrid XML path, a Platform, or a number of resources;
    workload: a Batsim JSON path or a Workload; scheduler: a name (shipped, plugin or MODULE:CLASS),
    a Scheduler subclass or an instance; options: the scheduler's options (values or strings as
    on the command line); timing: "ideal" or "batsim" (needs a platform file); out: also write
    Batsim's files there."""
    from schedlab.runs import RunSpec
    from schedlab.workload import require_batsim_fields

    the_platform = _platform(platform)
    the_workload = _workload(workload)
    if not isinstance(workload, Workload):
        require_batsim_fields(the_workload)  # a file: Batsim's rules (a Workload made in Python may lack nb_res)
    the_scheduler = _scheduler(scheduler, options)
    cls = type(the_scheduler)
    spec = RunSpec(platform=the_platform, workload=the_workload, scheduler=the_scheduler,
                   name=vars(cls).get("name") or cls.__name__,
                   options=options or {}, timing=timing, out=out)
    outcome = spec.prepare().execute()
    if outcome.is_bug:  # the scheduler raised: in Python, the exception itself is the most useful report
        raise outcome.exception  # type: ignore[misc]
    return Result(outcome.engine, outcome.summary, outcome.error)
