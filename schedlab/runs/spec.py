"""One simulation on the embedded engine, with outputs written even when it fails part-way.

One way to start a run, whoever starts it (`schedlab simulate`, `schedlab.simulate`, a campaign's
worker, the checker, the RL environment's episodes): a `RunSpec` (what to run), `prepare()`
(inputs checked, the results directory made (directory.py), the scheduler's models loaded or
trained: all before any output), then `execute()`.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab import abilities
from schedlab.engine import make_engine
from schedlab.engine.core import Engine
from schedlab.errors import InputError, OutputError, SchedlabError
from schedlab.host import Closable, EngineSurface, HostedScheduler, SchedulerHooks
from schedlab.model import Platform
from schedlab.outputs import build_summary, write_outputs
from schedlab.runs.directory import RunDirectory
from schedlab.workload import StreamedWorkload, Workload, inputs_view

if TYPE_CHECKING:
    from schedlab.schedulers.interface import Scheduler

@dataclass
class RunResult:
    engine: EngineSurface
    summary: dict[str, Any]
    error: str | None
    #: What stopped the run: a SchedlabError (a rule was broken: exit 1), KeyboardInterrupt (exit 130)
    #: or any other exception (a bug: exit 3). None when the run is complete.
    exception: BaseException | None = None
    #: where the files went: the results directory, or its incomplete/ beside an earlier complete run
    written_to: Path | None = None
    #: the files of an earlier run that this one replaced
    replaced: tuple[str, ...] = ()

    @property
    def is_bug(self) -> bool:
        return self.exception is not None and not isinstance(self.exception, SchedlabError | KeyboardInterrupt)


#: figures computed from a run's staged files before its summary.json is written: (summary, the
#: directory holding jobs.csv) -> entries to add (a campaign's warm-up metrics and wall time)
Amend = Callable[[dict[str, Any], Path], Mapping[str, Any]]


@dataclass(kw_only=True)
class RunSpec:
    """What one simulation needs. `scheduler` is a created scheduler; or `start_scheduler(staging)`
    starts one once the results directory exists (an external decision process logs there)."""

    platform: Platform
    workload: Workload
    name: str  # the scheduler as the user named it (summary.json's "scheduler")
    scheduler: Scheduler | None = None
    start_scheduler: Callable[[Path | None], HostedScheduler] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # as given: errors in a file an option names say it
    timing: str = "ideal"
    out: str | Path | None = None
    #: the run's description in summary.json (default: `describe()`)
    run_info: Mapping[str, Any] | None = None
    amend_summary: Amend | None = None
    #: whether `check()` asks the scheduler to check its files against the workload (a campaign's
    #: worker has checked them before jittering the workload)
    check_scheduler_inputs: bool = True

    def describe(self, scheduler: HostedScheduler, **more: Any) -> dict[str, Any]:
        """The run's description: scheduler, its options, platform and workload."""
        generator = self.workload.extra.get("generator")
        nb_jobs = self.workload.nb_jobs if isinstance(self.workload, StreamedWorkload) else len(self.workload.jobs)
        return {"scheduler": self.name, "options": scheduler.options(),
                "platform": {"path": self.platform.source, "nb_resources": self.platform.nb_resources},
                "workload": {"path": self.workload.source, "nb_jobs": nb_jobs,
                             **({"generator": generator} if generator is not None else {})}, **more}

    def check(self) -> None:
        """The inputs checked before any output: the files the scheduler's options name against the
        workload (`Scheduler.check_inputs`), and the workload against what the engine accepts."""
        if isinstance(self.workload, StreamedWorkload) and self.timing != "ideal":
            raise InputError(f"a streamed workload runs with --timing ideal, not {self.timing!r}",
                             path=self.workload.source or None)
        if self.scheduler is not None and self.check_scheduler_inputs:
            with self._said_by_scheduler("check_inputs"):
                self.scheduler.check_inputs(inputs_view(self.workload))  # never the run times
        Engine.check_workload(self.workload)

    def prepare(self, *, checked: bool = False) -> PreparedRun:
        """Checked (unless `checked`), the results directory made (RunDirectory), the scheduler
        prepared (models loaded or trained) or started: a failure leaves no output behind."""
        if not checked:
            self.check()
        directory = None if self.out is None else RunDirectory(self.out)
        try:
            scheduler: HostedScheduler
            if self.start_scheduler is not None:
                scheduler = self.start_scheduler(None if directory is None else directory.staging)
            else:
                if self.scheduler is None:
                    raise ValueError("a RunSpec needs a scheduler or start_scheduler")
                scheduler = self.scheduler
                with self._said_by_scheduler("prepare"):
                    self.scheduler.prepare()
        except BaseException:
            if directory is not None:
                directory.discard()
            raise
        return PreparedRun(self, scheduler, directory)

    def _said_by_scheduler(self, where: str) -> Any:
        """A user's scheduler raising in `where` is its failure; an error in a file an option names
        is said with the option (`-O model=M.skops: no such file`)."""
        import contextlib

        from schedlab.schedulers.base import option_named, raised_by

        @contextlib.contextmanager
        def said() -> Any:
            try:
                with raised_by(type(self.scheduler), self.name, where, bad_options=False):
                    yield
            except InputError as exc:
                raise option_named(exc, self.options) from None

        return said()


@dataclass
class PreparedRun:
    """A run ready to go: `execute()` runs it to the end and writes its files."""

    spec: RunSpec
    scheduler: HostedScheduler
    directory: RunDirectory | None

    def execute(self, progress: Callable[[int], None] | None = None) -> RunResult:
        spec = self.spec
        info = spec.run_info if spec.run_info is not None else spec.describe(self.scheduler)
        try:
            return simulate(spec.platform, spec.workload, self.scheduler, self.directory, run_info=info,
                            progress=progress, timing=spec.timing, amend_summary=spec.amend_summary,
                            name=spec.name)
        finally:
            if self.directory is not None:
                self.directory.discard()
            if isinstance(self.scheduler, Closable):  # an external decision process
                self.scheduler.close()


def simulate(platform: Platform, workload: Workload, scheduler: SchedulerHooks,
             out_dir: str | Path | RunDirectory | None, *,
             run_info: Mapping[str, Any] | None = None,
             progress: Callable[[int], None] | None = None, timing: str = "ideal",
             amend_summary: Amend | None = None, name: str | None = None) -> RunResult:
    """Run to the end. Whatever stops it once the engine has started (a broken rule, a scheduler
    bug, Ctrl-C) still writes what finished, marked `"complete": false` with the error; it never
    replaces an earlier complete run in `out_dir` (RunDirectory). `timing`: "ideal" (zero latency)
    or "batsim" (Batsim 4.2.1's message timing on the platform file `platform.source`; see
    batsim_timed.py)."""
    rows = None
    try:
        if isinstance(workload, StreamedWorkload):  # its rows are written as its jobs end
            if timing != "ideal":
                raise InputError(f"a streamed workload runs with --timing ideal, not {timing!r} (give a Batsim "
                                 "JSON workload for Batsim's timing)", path=workload.source or None)
            from schedlab.engine.stream import StreamEngine
            from schedlab.outputs import JOBS_COLUMNS

            if out_dir is not None and not isinstance(out_dir, RunDirectory):
                out_dir = RunDirectory(out_dir)
            rows = open(os.devnull if out_dir is None else out_dir.staging / "jobs.csv", "w",  # noqa: SIM115
                        encoding="utf-8", newline="")
            rows.write(",".join(JOBS_COLUMNS) + "\n")
            engine: Any = StreamEngine(platform, workload, scheduler, rows=rows, progress=progress)
        else:
            engine = make_engine(platform, workload, scheduler, timing, progress)
    except BaseException:
        if rows is not None:
            rows.close()
        if isinstance(out_dir, RunDirectory):
            out_dir.discard()
        raise
    exception: BaseException | None = None
    t0 = time.perf_counter()
    try:
        engine.run()
    except (Exception, KeyboardInterrupt) as exc:
        exception = exc
    finally:
        if rows is not None:
            try:
                rows.close()
            except OSError as exc:  # the last rows' flush
                exception = exception or exc
    if rows is not None and isinstance(out_dir, RunDirectory) and isinstance(exception, OSError) \
            and exception.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):  # the streamed rows' file
        failure = out_dir.unwritten(OutputError(f"cannot write {out_dir.staging / 'jobs.csv'}: {exception.strerror}"))
        out_dir.discard()
        raise failure from exception
    elapsed = time.perf_counter() - t0
    error = None
    if isinstance(exception, KeyboardInterrupt):
        from schedlab.interrupts import what_stopped

        error = what_stopped(exception)
    elif isinstance(exception, SchedlabError):
        error = str(exception)
    elif exception is not None:
        error = failure_text(exception, scheduler, name or (run_info or {}).get("scheduler"))
    info = dict(run_info or {})
    report = abilities.run_report(scheduler)
    if report is not None:
        try:
            figures = report()
        except Exception:  # a broken run's scheduler may not say; the run's own error is what counts
            if exception is None:
                raise
            figures = {}
        if figures:
            info["scheduler_report"] = figures
    if out_dir is None:
        return RunResult(engine, build_summary(engine, run_info=info, simulation_time_s=elapsed, error=error),
                         error, exception)
    summary, where, replaced = write_run(engine, out_dir, run_info=info, simulation_time_s=elapsed, error=error,
                                         amend_summary=amend_summary)
    return RunResult(engine, summary, error, exception, where, replaced)


def write_run(engine: EngineSurface, out_dir: str | Path | RunDirectory, *, run_info: Mapping[str, Any],
              simulation_time_s: float, error: str | None,
              amend_summary: Amend | None = None) -> tuple[dict[str, Any], Path, tuple[str, ...]]:
    """An engine's files written into a results directory as a whole (RunDirectory): returns the
    summary, where the files went and which of an earlier run's files they replaced."""
    directory = out_dir if isinstance(out_dir, RunDirectory) else RunDirectory(out_dir)
    try:
        summary = write_outputs(engine, directory.staging, run_info=run_info, simulation_time_s=simulation_time_s,
                                error=error, amend_summary=amend_summary)
        where = directory.publish(bool(summary["complete"]))
    except OutputError as exc:  # the staged file's name is the results directory's to the user
        raise directory.unwritten(exc) from exc.__cause__
    finally:
        directory.discard()
    return summary, where, tuple(directory.replaced)


def is_ours(scheduler: SchedulerHooks) -> bool:
    """Whether a scheduler's class is schedlab's (its exceptions are our bugs) or a user's."""
    return type(scheduler).__module__.startswith("schedlab.")


def failure_text(exception: BaseException, scheduler: SchedulerHooks, name: Any = None) -> str:
    """What stopped a run by an unexpected exception: our bug, or a user's scheduler's failure
    (`name`: how the user named it, else its class's)."""
    what = f"{type(exception).__name__}: {exception}"
    if is_ours(scheduler):
        return f"internal error: {what}"
    return f"scheduler {name if isinstance(name, str) else type(scheduler).__name__!r} raised {what}"
