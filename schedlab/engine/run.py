"""One simulation on the embedded engine, with outputs written even when it fails part-way.

One way to start a run, whoever starts it (`schedlab simulate`, `schedlab.simulate`, a campaign's
worker): a `RunSpec` (what to run), `prepare()` (inputs checked, the results directory made, the
scheduler's models loaded or trained: all before any output), then `execute()`.

A results directory is written as a whole: the run's files go to a staging directory inside it and
are moved in when the run ends. A complete run replaces an earlier run's files; an incomplete one
never replaces an earlier complete run: it goes to DIR/incomplete/ beside it.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab.engine.core import Engine
from schedlab.errors import InputError, OutputError, SchedlabError
from schedlab.host import Closable, EngineSurface, HostedScheduler, SchedulerHooks
from schedlab.model import Platform
from schedlab.outputs import build_summary, write_outputs
from schedlab.workload import StreamedWorkload, Workload, inputs_view

if TYPE_CHECKING:
    from schedlab.schedulers.interface import Scheduler

#: where an incomplete run goes when its results directory holds an earlier complete run
INCOMPLETE_DIR = "incomplete"
#: the hidden directory a run is staged in, inside its results directory (then the process id)
STAGING_PREFIX = ".schedlab-run-"


def _said_complete(directory: Path) -> bool | None:
    """What the summary.json in `directory` says of `complete`; None without a readable one."""
    try:
        return json.loads((directory / "summary.json").read_text(encoding="utf-8")).get("complete")
    except (OSError, ValueError, AttributeError):
        return None


def _holds_an_incomplete_run(directory: Path) -> bool:
    """Only run files, and a summary saying `"complete": false`: what `publish` may replace."""
    from schedlab.paths import RUN_FILES

    if not directory.is_dir() or any(entry.name not in RUN_FILES for entry in directory.iterdir()):
        return False
    return _said_complete(directory) is False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunDirectory:
    """A results directory written as a whole. `staging` (inside it, hidden) receives the run's
    files; `publish` moves them in. Checked when made: none of the run's files may be a directory
    (a directory named jobs.csv would stop the move half-way)."""

    def __init__(self, out_dir: str | Path) -> None:
        from schedlab.paths import RUN_FILES, check_output_dir

        self.out = check_output_dir(out_dir)
        for name in RUN_FILES:
            if (self.out / name).exists() and not (self.out / name).is_file():
                raise InputError(f"{name} there is not a file: a run writes {name} (move it away)", path=str(self.out))
        incomplete = self.out / INCOMPLETE_DIR
        if incomplete.exists() and not _holds_an_incomplete_run(incomplete):
            raise InputError(f"{INCOMPLETE_DIR} there is not an incomplete run of schedlab's (it is replaced when a "
                             "run ends; move it away)", path=str(self.out))
        for stale in self.out.glob(f"{STAGING_PREFIX}*"):  # staged by a run that was killed (SIGKILL)
            pid = stale.name[len(STAGING_PREFIX):].partition("-")[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(stale, ignore_errors=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=self.out))
        self.replaced: list[str] = []

    def holds_complete_run(self) -> bool:
        """Whether the directory holds an earlier run's results that are not marked incomplete."""
        if (self.out / "summary.json").is_file():
            return _said_complete(self.out) is not False  # unreadable: not ours to judge, kept
        return (self.out / "jobs.csv").is_file()  # e.g. real Batsim's files: kept as a complete result

    def publish(self, complete: bool) -> Path:
        """Move the staged files in: into the directory when `complete` or when it holds no complete
        run (an earlier run's other files removed: a directory never mixes two runs), else into
        DIR/incomplete/ (replacing an earlier incomplete one). Returns where they went."""
        from schedlab.paths import RUN_FILES, give_usual_mode

        if not complete and self.holds_complete_run():
            target = self.out / INCOMPLETE_DIR
            shutil.rmtree(target, ignore_errors=True)  # an earlier incomplete run (checked when made)
            give_usual_mode(self.staging, directory=True)
            os.replace(self.staging, target)
            return target
        for name in RUN_FILES:
            staged, final = self.staging / name, self.out / name
            if final.is_file():
                self.replaced.append(name)
            if staged.is_file():
                os.replace(staged, final)
            elif final.is_file():
                final.unlink()
        shutil.rmtree(self.out / INCOMPLETE_DIR, ignore_errors=True)  # an older attempt's
        self.discard()
        return self.out

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def unwritten(self, failure: OutputError) -> OutputError:
        """A failure to write a staged file, said of the results directory's file (the staging is
        discarded: nothing partial stays), and what it keeps."""
        message = str(failure).replace(f"{self.staging}{os.sep}", f"{self.out}{os.sep}")
        kept = "the earlier complete run there is kept" if self.holds_complete_run() else "nothing was written"
        return OutputError(f"{message} ({kept})")


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
            engine = _engine(platform, workload, scheduler, timing, progress)
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
    report = getattr(scheduler, "run_report", None)
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


def _engine(platform: Platform, workload: Workload, scheduler: SchedulerHooks, timing: str,
            progress: Callable[[int], None] | None) -> Any:
    """The engine for `timing`: "ideal" (zero message latency) or "batsim" (Batsim 4.2.1's)."""
    if timing == "batsim":
        from schedlab.engine.batsim_network import message_routes
        from schedlab.engine.batsim_timed import BatsimTimedEngine

        if not platform.source or not Path(platform.source).is_file():
            raise ValueError(f"timing='batsim' derives message times from the platform file: platform "
                             f"{platform.source!r} was not read from one (load_platform(path) gives one that was)")
        return BatsimTimedEngine(platform, workload, scheduler, routes=message_routes(platform.source),
                                 progress=progress)
    if timing == "ideal":
        return Engine(platform, workload, scheduler, progress=progress)
    raise ValueError(f"timing must be 'ideal' or 'batsim', got {timing!r}")


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
