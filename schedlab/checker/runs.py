"""One checked run, in whatever process runs it: the scheduler made fresh, its `check_inputs` given
what `simulate` gives it, prepared, run on the engine under budgets (simulated time, decisions, wall
clock, memory), its decisions logged; and the shrinking of a failing workload."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from schedlab.checker.invariants import invariant_failure, suspicious
from schedlab.engine import Engine
from schedlab.engine.batsim_timed import MIN_RUNTIME_S
from schedlab.errors import InputError, SchedlabError, SimulationError
from schedlab.host import SchedulerDriver, SchedulerHooks
from schedlab.model import CallMeLater, JobState, Platform
from schedlab.workload import Workload, inputs_view, parse_workload

Factory = Callable[[], Any]


@dataclass(frozen=True)
class Budgets:
    """When a run is ended as "no progress": its simulated clock passes `time_budget_s(workload)`
    while jobs are left, decide is called `idle_decisions` times in a row without starting or rejecting
    a job, the run takes `wall_s` seconds, or its memory grows by `memory_mb`. A run that ends
    with jobs never decided (Batsim aborts on it) is no progress too."""

    wall_s: float = 60.0
    memory_mb: float = 2048.0
    idle_decisions: int = 100_000


DEFAULT_BUDGETS = Budgets()


@dataclass
class RunResult:
    """What one run showed; `kind` of a failure: rules | raised | progress | refused (check_inputs
    refused the workload: not run)."""

    label: str
    failure: str | None = None
    kind: str | None = None
    log: list[list[Any]] = field(default_factory=list)  # [now, [decision reprs]] per decide call
    rows: list[str] = field(default_factory=list)  # jobs.csv rows
    spans: dict[str, list[float | None]] = field(default_factory=dict)  # job name -> [start, finish]
    warnings: dict[str, list[str]] = field(default_factory=dict)
    nb_jobs: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunResult:
        return cls(**json.loads(text))


class _OutOfTime(BaseException):
    """Raised into the scheduler's own code when a run's wall-clock budget is spent (a BaseException:
    a scheduler's `except Exception` does not swallow it)."""


@contextmanager
def _alarm(seconds: float):
    """Interrupt Python code (a decide that never returns) after `seconds` (main thread only)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum, frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _record_decisions(driver: SchedulerDriver, idle: list[int]) -> list[list[Any]]:
    """Log [now, decisions] of each decide the driver asks for (an observer of it); `idle[0]`: calls
    in a row that started or rejected no job."""
    from schedlab.model import Execute, Reject

    log: list[list[Any]] = []

    def recorded(now: float, decisions: list[Any]) -> None:
        log.append([now, [repr(d) for d in decisions]])
        idle[0] = 0 if any(isinstance(d, (Execute, Reject)) for d in decisions) else idle[0] + 1

    driver.after_decide.append(recorded)
    return log


def time_budget_s(workload: Workload) -> float:
    """The last submission plus ten times every job's run time (its walltime where shorter) end to
    end, plus a day: a schedule that starts one job at a time is done long before, even one that
    decides only every few minutes."""
    if not workload.jobs:
        return 0.0
    total = 0.0
    for job in workload.jobs:
        delay = workload.profiles[job.profile].delay_s or 0.0
        total += min(delay, job.walltime_s) if job.walltime_s is not None else delay
    return max(job.submit_time_s for job in workload.jobs) + 10.0 * total + 86_400.0


class _Stopped(BaseException):
    """A budget spent under `--timing batsim`, whose engine has no step(): raised by the driver's
    observer before a decide (`_guard_timed`)."""


def _timed_engine(workload: Workload, nb_res: int, scheduler: SchedulerHooks, master_message_s: float) -> Any:
    """The Batsim-timed engine on `nb_res` hosts and a master whose messages take `master_message_s`."""
    import tempfile
    from pathlib import Path

    from schedlab.engine.batsim_network import message_routes
    from schedlab.engine.batsim_timed import BatsimTimedEngine
    from schedlab.platform import load_platform
    from schedlab.platforms.generate import slow_master_xml

    with tempfile.TemporaryDirectory(prefix="schedlab-check-") as scratch:
        path = Path(scratch) / "slow-master.xml"
        path.write_text(slow_master_xml(nb_res, master_message_s))
        return BatsimTimedEngine(load_platform(path), workload, scheduler, routes=message_routes(path))


def _guard_timed(driver: SchedulerDriver, idle: list[int], limit_s: float, budgets: Budgets,
                 master_message_s: float) -> None:
    """Under `--timing batsim`: the budgets checked before each decide, and a wake-up asked less than
    one message time ahead named after it (it reaches Batsim after its time: Batsim aborts)."""

    def within_budgets(now: float) -> None:
        stop = _progress_stop(now > limit_s, idle, limit_s, budgets)
        if stop is not None:
            raise _Stopped(stop)

    def calls_in_time(now: float, decisions: list[Any]) -> None:
        for decision in decisions:
            if type(decision) is CallMeLater and decision.at_s - now < master_message_s:
                raise SimulationError(
                    f"CALL_ME_LATER for t={decision.at_s!r} asked at t={now!r}, {decision.at_s - now:.6g} s ahead: on "
                    f"a master whose messages take {master_message_s:g} s it reaches Batsim after its time (Batsim "
                    "aborts: 'You asked to be awaken in the past!'); ask at least a message time ahead "
                    "(schedlab.schedulers.wakeups)")

    driver.before_decide.append(within_budgets)
    driver.after_decide.append(calls_in_time)


def _progress_stop(late: bool, idle: list[int], limit_s: float, budgets: Budgets) -> str | None:
    """Why a run makes no progress (`late`: its clock passed `limit_s` with jobs left), or None."""
    if late:
        return (f"the simulated clock passed {limit_s:g} s: the last submission, ten times every run time end to "
                "end, and a day")
    if idle[0] >= budgets.idle_decisions:
        return f"decide was called {idle[0]:,} times in a row without starting or rejecting a job"
    return None


def _steps_within_budgets(engine: Engine, idle: list[int], limit_s: float, budgets: Budgets) -> str | None:
    """The ideal engine's run, step by step: why a budget stopped it, or None once it ended."""
    started, memory0 = time.monotonic(), _rss_mb()
    while engine.step():
        late = engine.now > limit_s and len(engine.finished) < len(engine.workload.jobs)
        if (stop := _progress_stop(late, idle, limit_s, budgets)) is not None:
            return stop
        if engine.nb_steps % 256 == 0 and _rss_mb() - memory0 > budgets.memory_mb:
            return f"its memory grew by more than {budgets.memory_mb:g} MB"
        if engine.nb_steps % 256 == 0 and time.monotonic() - started > budgets.wall_s:
            return f"the run took more than {budgets.wall_s:g} s"
    engine.end()
    return None


def run_once(factory: Factory, label: str, workload: Workload, nb_res: int, budgets: Budgets = DEFAULT_BUDGETS, *,
             check_inputs: bool = True, keep_engine: list[Any] | None = None,
             slow_master_s: float | None = None) -> RunResult:
    """One run of a fresh scheduler; `keep_engine` receives the engine (for the in-process callers).
    `slow_master_s`: under `--timing batsim`, on a platform whose master's messages take this long."""
    result = RunResult(label, nb_jobs=len(workload.jobs))
    try:
        scheduler = factory()
        if check_inputs:
            try:
                scheduler.check_inputs(inputs_view(workload))
            except InputError as exc:
                result.failure, result.kind = f"its check_inputs refused the workload: {exc}", "refused"
                return result
        scheduler.prepare()
    except InputError:
        raise  # the scheduler's own inputs (a file an option names): bad input, said before the check
    except Exception as exc:
        result.failure, result.kind = f"the scheduler raised {type(exc).__name__}: {exc}", "raised"
        return result
    idle = [0]
    limit_s = time_budget_s(workload)
    timed = slow_master_s is not None
    engine: Any = (Engine(Platform.homogeneous(nb_res), workload, scheduler) if slow_master_s is None
                   else _timed_engine(workload, nb_res, scheduler, slow_master_s))
    result.log = _record_decisions(engine.driver, idle)  # recorded before the wake-up check reads them
    if slow_master_s is not None:
        _guard_timed(engine.driver, idle, limit_s, budgets, slow_master_s)
    if keep_engine is not None:
        keep_engine.append(engine)
    stop = None
    try:
        with _alarm(budgets.wall_s):
            if timed:
                engine.run()  # its budgets are checked at each decide (_guard_timed)
            else:
                stop = _steps_within_budgets(engine, idle, limit_s, budgets)
    except _Stopped as exc:
        stop = str(exc)
    except _OutOfTime:
        stop = f"the run took more than {budgets.wall_s:g} s (stopped inside the scheduler's code)"
    except MemoryError:
        stop = "it ran out of memory"
    except SchedlabError as exc:
        if "undecided when no event was left" in str(exc):  # the engine's end: nothing will come
            stop = "it stopped deciding: no event was left, Batsim aborts there"
        else:
            result.failure, result.kind = f"rule broken: {exc}", "rules"
    except Exception as exc:
        result.failure, result.kind = f"the scheduler raised {type(exc).__name__}: {exc}", "raised"
    if stop is not None:
        undecided = sum(record.state in (JobState.SUBMITTED, JobState.NOT_SUBMITTED)
                        for record in engine.records.values())
        result.failure, result.kind = f"no progress: {undecided} jobs never decided ({stop})", "progress"
    elif result.failure is None:  # a job of no run time lasts 10 us under Batsim's timing
        failure = invariant_failure(engine, tolerance_s=MIN_RUNTIME_S) if timed else invariant_failure(engine)
        if failure is not None:
            result.failure, result.kind = failure, "rules"
    from schedlab.outputs import job_row

    result.rows = [job_row(engine.records[job_id]) for job_id in engine.finished]
    result.spans = {record.job.name: [record.start_s, record.finish_s] for record in engine.records.values()}
    if result.failure is None:
        result.warnings = {kind: ids for kind, ids in suspicious(engine).items() if ids}
    return result


def kind_of(failure: str) -> str:
    """A failure without its numbers and ids: shrinking keeps a workload only if this stays."""
    return re.sub(r"'[^']*'|\b[\w.-]*\d[\w.!-]*\b", "#", failure)


def subset_doc(doc: dict[str, Any], jobs: list[Any]) -> dict[str, Any]:
    used = {raw.get("profile") for raw in jobs}
    return {**doc, "jobs": jobs, "profiles": {k: v for k, v in doc.get("profiles", {}).items() if k in used}}


def shrink(run: Callable[[dict[str, Any]], RunResult], doc: dict[str, Any], failure: str, *,
           budget_s: float = 20.0, max_runs: int = 200) -> tuple[dict[str, Any], str]:
    """A smaller workload (doc) with the same kind of failure, and that workload's own failure:
    chunks of jobs removed greedily (halves, then smaller), each removal kept if the failure
    remains."""
    jobs, kind, own = list(doc.get("jobs", [])), kind_of(failure), failure
    deadline, runs = time.monotonic() + budget_s, 0
    chunk = max(1, len(jobs) // 2)
    while chunk >= 1 and len(jobs) > 1:
        start = 0
        while start < len(jobs) and len(jobs) > 1:
            if time.monotonic() > deadline or runs >= max_runs:
                return subset_doc(doc, jobs), own
            candidate = jobs[:start] + jobs[start + chunk:]
            runs += 1
            result = run(subset_doc(doc, candidate))
            if candidate and result.failure is not None and kind_of(result.failure) == kind:
                jobs, own = candidate, result.failure
            else:
                start += chunk
        chunk //= 2
    return subset_doc(doc, jobs), own


def workload_of(doc: dict[str, Any], path: str, label: str) -> Workload:
    return parse_workload(json.dumps(doc), path, name=re.sub(r"[^\w-]", "-", label) or "w0")


