"""`schedlab scheduler check`: does a scheduler keep Batsim's rules, never look ahead, and give the
same schedule twice? And how fast is it, next to EASY?

- Rules: each workload of `edge_case_workloads` (simultaneous submissions and ends, walltime kills,
  jobs as wide as the machine, sub-second and zero-length jobs) and a trace-like one run on the
  engine, which aborts on what Batsim aborts on (a core used twice, a decision for an unknown or
  already decided job, a call in the past, jobs left undecided); the records are then checked
  again (no start before submission, each job ran its delay or was killed exactly at its walltime,
  no core used twice). The first
  violation is shrunk to a small workload that still shows it (fewer jobs, greedily), written to disk.
- Look-ahead: for cuts t over the run, the run times of the jobs that end after t are changed (they
  still end after t; the jobs themselves are untouched); every decision at or before t must stay
  the same. Reading run times (profiles, the engine's memory) is caught when it changes a decision.
- Determinism: two fresh instances give the same decisions and jobs.csv rows, and so does another
  process with another PYTHONHASHSEED (an order that follows string hashing shows there).
- Speed: scheduling time per job against EASY's on the same workload (reported, never a failure).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from schedlab.engine import Engine
from schedlab.errors import InputError, SchedlabError
from schedlab.model import Job, Platform, Profile
from schedlab.workload import Workload

Factory = Callable[[], Any]


@dataclass
class Finding:
    check: str  # rules | look-ahead | determinism
    message: str
    files: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    lines: list[str] = field(default_factory=list)  # what held, and the speed
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


def build_workload(specs: Iterable[tuple[Any, ...]], name: str = "w0", *, nb_res: int | None = None,
                   source: str | None = None) -> Workload:
    """specs: (job name, submit s, res, run time s, walltime s or None[, extra fields]); one profile
    per job, named after the job (profile names never tell run times); its raw `delay` as given."""
    jobs, profiles = [], {}
    for spec in specs:
        job_name, submit_s, res, runtime_s, walltime_s = spec[:5]
        extra = spec[5] if len(spec) > 5 else {}
        profile = f"p{job_name}"
        profiles[profile] = Profile(profile, "delay", float(runtime_s),
                                    MappingProxyType({"type": "delay", "delay": runtime_s}))
        jobs.append(Job(f"{name}!{job_name}", float(submit_s), int(res),
                        None if walltime_s is None else float(walltime_s), profile, MappingProxyType(dict(extra))))
    jobs.sort(key=lambda job: (job.submit_time_s, job.id))
    return Workload(name=name, jobs=tuple(jobs), profiles=profiles, nb_res=nb_res,
                    source=f"<{name}>" if source is None else source)


def with_own_profiles(workload: Workload) -> Workload:
    """Each job on a delay profile of its own, named after the job (run times can then change job
    by job, and profile names tell nothing)."""
    from dataclasses import replace

    jobs, profiles = [], {}
    for job in workload.jobs:
        name = f"p{job.name}"
        delay_s = workload.profiles[job.profile].delay_s
        profiles[name] = Profile(name, "delay", delay_s, MappingProxyType({"type": "delay", "delay": delay_s}))
        jobs.append(replace(job, profile=name))
    return replace(workload, jobs=tuple(jobs), profiles=profiles)


def _subset(workload: Workload, jobs: list[Job] | tuple[Job, ...]) -> Workload:
    from dataclasses import replace

    return replace(workload, jobs=tuple(jobs), profiles={job.profile: workload.profiles[job.profile] for job in jobs})


def edge_case_workloads(nb_res: int, seed: int = 0) -> dict[str, Workload]:
    """Small workloads where schedulers usually break, by name."""
    rng = np.random.default_rng(seed)
    half, quarter = max(1, nb_res // 2), max(1, nb_res // 4)
    cases: dict[str, list[tuple[Any, ...]]] = {}
    # bursts of submissions at the same instants; equal run times make ends coincide too
    cases["simultaneous"] = [(f"b{burst}-{k}", 100 * burst, int(rng.integers(1, half + 1)), 50.0, 60.0)
                             for burst in range(6) for k in range(8)]
    # run times past the walltime (killed there), exactly at it, and just under it
    cases["walltime-kills"] = [(f"k{i}", 7 * i, int(rng.integers(1, quarter + 1)), runtime, 40.0)
                               for i, runtime in enumerate([80.0, 40.0, 39.999, 120.0, 40.0, 5.0] * 5)]
    # jobs as wide as the machine among small ones
    cases["machine-wide"] = [(f"m{i}", 10 * i, nb_res if i % 4 == 0 else int(rng.integers(1, quarter + 1)),
                              float(rng.integers(5, 60)), 100.0) for i in range(30)]
    # sub-second and zero-length jobs at fractional instants, some without a walltime
    cases["sub-second"] = [(f"s{i}", round(0.37 * i, 3), int(rng.integers(1, half + 1)),
                            0.0 if i % 7 == 0 else round(float(rng.uniform(0.001, 0.9)), 3),
                            None if i % 5 == 0 else 1.0) for i in range(40)]
    return {name: build_workload(specs, name=name) for name, specs in cases.items()}


def trace_like_workload(nb_res: int, nb_jobs: int = 300, seed: int = 1) -> Workload:
    """A generated workload with a queue (load 0.95, 5% of jobs killed at their walltime)."""
    from schedlab.workloads.synthetic import generate

    return generate(nb_jobs=nb_jobs, nb_resources=nb_res, seed=seed, load=0.95, max_runtime_s=7200.0, name="trace")


# ---------------------------------------------------------------------------------------------- running


def _record_decisions(scheduler: Any) -> list[tuple[float, tuple[str, ...]]]:
    """Wrap the instance's decide to log (now, decisions) of each call."""
    log: list[tuple[float, tuple[str, ...]]] = []
    decide = scheduler.decide

    def recorded(now: float) -> list[Any]:
        decisions = decide(now)
        log.append((now, tuple(map(repr, decisions))))
        return decisions

    scheduler.decide = recorded
    return log


@dataclass
class _Run:
    engine: Engine | None
    log: list[tuple[float, tuple[str, ...]]]
    failure: str | None


def _run(factory: Factory, nb_res: int, workload: Workload) -> _Run:
    scheduler = factory()
    log = _record_decisions(scheduler)
    engine = None
    try:
        scheduler.prepare()
        engine = Engine(Platform.homogeneous(nb_res), workload, scheduler)
        engine.run()
    except InputError:
        raise  # the scheduler's own inputs (a file an option names): said as bad input, not a rule
    except SchedlabError as exc:
        return _Run(engine, log, f"rule broken: {exc}")
    except Exception as exc:
        return _Run(engine, log, f"the scheduler raised {type(exc).__name__}: {exc}")
    return _Run(engine, log, invariant_failure(engine))


def invariant_failure(engine: Engine, *, tolerance_s: float = 1e-6,
                      may_reject: Callable[[Job], bool] | None = None) -> str | None:
    """The first broken schedule invariant of a finished run, checked again independently of the
    engine's own checks, or None: each job decided once (and finished once); no start before its
    submission; an allocation of exactly its size within the platform; each job ran its profile's
    delay (COMPLETED_SUCCESSFULLY) or was killed exactly at its walltime (COMPLETED_WALLTIME_REACHED),
    or by a Kill; no resource used by two jobs at once. Times compare within `tolerance_s` (the
    property tests: 0). `may_reject(job)`: which rejections are allowed (default: any, a scheduler's
    right under Batsim)."""
    from schedlab.model import JobState

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


def _kind(failure: str) -> str:
    """A failure without its numbers and ids: shrinking keeps a workload only if this stays."""
    return re.sub(r"'[^']*'|\b[\w.-]*\d[\w.!-]*\b", "#", failure)


def shrink(factory: Factory, nb_res: int, workload: Workload, failure: str, *, budget_s: float = 20.0,
           max_runs: int = 200) -> Workload:
    """A smaller workload with the same kind of failure: chunks of jobs removed greedily (halves,
    then smaller), each removal kept if the failure remains."""
    jobs, kind = list(workload.jobs), _kind(failure)
    deadline, runs = time.monotonic() + budget_s, 0
    chunk = max(1, len(jobs) // 2)
    while chunk >= 1 and len(jobs) > 1:
        start = 0
        while start < len(jobs) and len(jobs) > 1:
            if time.monotonic() > deadline or runs >= max_runs:
                return _subset(workload, jobs)
            candidate = jobs[:start] + jobs[start + chunk:]
            runs += 1
            result = _run(factory, nb_res, _subset(workload, candidate))
            if candidate and result.failure is not None and _kind(result.failure) == kind:
                jobs = candidate
            else:
                start += chunk
        chunk //= 2
    return _subset(workload, jobs)


def reproduction_files(nb_res: int) -> list[str]:
    """The names `--out` may receive (a violation's workload, replay text, platform)."""
    labels = [*edge_case_workloads(max(nb_res, 2)), "trace", "yours"]
    return [f"violation-{label}{ext}" for label in labels for ext in (".json", ".txt")] + [f"platform{nb_res}.xml"]


def _write_reproduction(out_dir: Path, label: str, nb_res: int, workload: Workload, failure: str,
                        spec: str, options: Mapping[str, Any]) -> list[str]:
    import shlex

    from schedlab.paths import write_text_atomic
    from schedlab.platforms.generate import cluster_xml

    out_dir.mkdir(parents=True, exist_ok=True)
    workload_path, platform_path = out_dir / f"{label}.json", out_dir / f"platform{nb_res}.xml"
    body = {"nb_res": nb_res, "description": f"schedlab scheduler check: {failure}", **workload.to_json()}
    write_text_atomic(workload_path, json.dumps(body, indent=1) + "\n")
    write_text_atomic(platform_path, cluster_xml(nb_res))
    words = ["schedlab", "simulate", "-p", str(platform_path), "-w", str(workload_path), "-s", spec,
             *[item for key, value in options.items() for item in ("-O", f"{key}={value}")], "-o", str(out_dir / label)]
    write_text_atomic(out_dir / f"{label}.txt", f"{failure}\n\nreplay: {shlex.join(words)}\n")
    return [str(workload_path), str(platform_path)]


def changed_runtimes(workload: Workload, engine: Engine, cut_s: float, seed: int) -> Workload:
    """The workload (jobs on profiles of their own) with the run time of every job that ended
    after `cut_s` changed, longer or shorter at random, each still ending after `cut_s` if it starts
    as before; the jobs themselves (ids, requests, extra fields) are untouched."""
    from dataclasses import replace

    rng = np.random.default_rng(seed)
    profiles = dict(workload.profiles)
    for job in workload.jobs:
        record = engine.records[job.id]
        if record.finish_s is None or record.finish_s <= cut_s:
            continue
        runtime_s = workload.profiles[job.profile].replay_delay_s
        if rng.random() < 0.5:
            runtime_s = runtime_s * float(rng.uniform(1.2, 3.0)) + 1.0
        else:
            shortest = (cut_s - record.start_s) if record.start_s is not None else 0.0
            runtime_s = max(runtime_s * float(rng.uniform(0.1, 0.8)), shortest + 0.5 * (runtime_s - shortest))
        profiles[job.profile] = Profile(job.profile, "delay", runtime_s,
                                        MappingProxyType({"type": "delay", "delay": runtime_s}))
    return replace(workload, profiles=profiles)


def look_ahead_finding(factory: Factory, nb_res: int, workload: Workload, first: _Run,
                       nb_cuts: int = 4) -> str | None:
    """The first decision at or before a cut that changes with the run times of later-ending jobs."""
    assert first.engine is not None
    ends = sorted(r.finish_s for r in first.engine.records.values() if r.finish_s is not None)
    if not ends:
        return None
    cuts = sorted({ends[int(q * (len(ends) - 1))] for q in np.linspace(0.1, 0.7, nb_cuts)})
    for number, cut_s in enumerate(cuts):
        again = _run(factory, nb_res, changed_runtimes(workload, first.engine, cut_s, seed=number))
        before = [entry for entry in first.log if entry[0] <= cut_s]
        after = [entry for entry in again.log if entry[0] <= cut_s]
        for (now_a, decisions_a), (now_b, decisions_b) in zip(before, after, strict=False):
            if (now_a, decisions_a) != (now_b, decisions_b):
                at = min(now_a, now_b)
                return (f"the decisions at t={at:g} changed when only the run times of jobs ending after "
                        f"t={cut_s:g} did: {list(decisions_a) or 'none'} became {list(decisions_b) or 'none'} "
                        f"(workload {workload.name})")
        if len(before) != len(after):
            return (f"the number of decisions up to t={cut_s:g} changed ({len(before)} -> {len(after)}) when only "
                    f"the run times of jobs ending after t={cut_s:g} did (workload {workload.name})")
    return None


def _jobs_rows(engine: Engine) -> list[str]:
    from schedlab.outputs import job_row

    return [job_row(engine.records[job_id]) for job_id in engine.finished]


def trace_rows_in_a_child(spec: str, options: Mapping[str, Any], nb_res: int, hash_seed: int) -> list[str] | None:
    """jobs.csv rows of the trace-like workload from another process with another PYTHONHASHSEED
    (an order that depends on hashing strings shows there); None if the child cannot make the
    scheduler (a class defined in a notebook or a test, say)."""
    import os
    import subprocess
    import sys

    code = ("import json, sys\nfrom schedlab.checker import _child\n"
            "print(json.dumps(_child(json.loads(sys.argv[1]))))")
    argument = json.dumps({"spec": spec, "options": {k: str(v) for k, v in options.items()}, "nb_res": nb_res})
    try:
        done = subprocess.run([sys.executable, "-c", code, argument], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONHASHSEED": str(hash_seed)})
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(argument: dict[str, Any]) -> list[str]:
    from schedlab.schedulers.base import create_scheduler

    nb_res = argument["nb_res"]
    result = _run(lambda: create_scheduler(argument["spec"], argument["options"]), nb_res,
                  with_own_profiles(trace_like_workload(nb_res)))
    return _jobs_rows(result.engine) if result.engine is not None else []


def _first_difference(first: list[str], second: list[str]) -> str:
    differ = next((i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b),
                  min(len(first), len(second)))
    def show(rows):
        return (repr(rows[differ]) if differ < len(rows) else "no row")
    return f"jobs.csv row {differ + 1}: {show(first)} vs {show(second)}"


def check_scheduler(factory: Factory, spec: str, *, options: Mapping[str, Any] | None = None, nb_res: int = 16,
                    extra: Workload | None = None, out_dir: Path | None = None,
                    progress: Callable[[str], None] | None = None, speed_jobs: int = 2000) -> CheckReport:
    """Every check on the edge cases, the trace-like workload and `extra` (a user's). `spec` and
    `options` name the scheduler `factory` makes (reproductions and the determinism child use them)."""
    options = dict(options or {})
    report = CheckReport()
    say = progress or (lambda text: None)
    workloads = edge_case_workloads(nb_res)
    workloads["trace"] = trace_like_workload(nb_res)
    if extra is not None:
        workloads[extra.name or "yours"] = extra
    workloads = {label: with_own_profiles(workload) for label, workload in workloads.items()}
    runs: dict[str, _Run] = {}
    for label, workload in workloads.items():
        say(f"rules on {label}")
        runs[label] = result = _run(factory, nb_res, workload)
        if result.failure is not None:
            say(f"shrinking the {label} workload")
            small = shrink(factory, nb_res, workload, result.failure)
            files = [] if out_dir is None else _write_reproduction(out_dir, f"violation-{label}", nb_res, small,
                                                                   result.failure, spec, options)
            report.findings.append(Finding("rules", f"{label} ({len(workload.jobs)} jobs): {result.failure}; "
                                                    f"reproduced with {len(small.jobs)} job(s)", files))
            break  # the first violation: later checks would trip on it again
    else:
        total = sum(len(w.jobs) for w in workloads.values())
        report.lines.append(f"rules: held on {len(workloads)} workloads ({total} jobs; "
                            f"{', '.join(workloads)}) on {nb_res} resources")
    clean = [label for label, run in runs.items()
             if run.failure is None and label in ("trace", "simultaneous", "walltime-kills", "yours")]
    if "trace" in clean:
        say("determinism")
        again = _run(factory, nb_res, workloads["trace"])
        first_rows, second_rows = _jobs_rows(runs["trace"].engine), _jobs_rows(again.engine)  # type: ignore[arg-type]
        if first_rows != second_rows or again.log != runs["trace"].log:
            report.findings.append(Finding("determinism", "two fresh instances in one process differ at "
                                                          + _first_difference(first_rows, second_rows)))
            clean = []  # decisions that change by themselves would read as look-ahead
        else:
            import os

            seed = 12345 if os.environ.get("PYTHONHASHSEED") != "12345" else 54321  # never the parent's
            child = trace_rows_in_a_child(spec, options, nb_res, hash_seed=seed)
            if child is None:
                report.lines.append(f"determinism: two fresh instances gave the same {len(first_rows)} jobs.csv rows "
                                    "(another process could not make the scheduler: hash seeds not varied)")
            elif child != first_rows:
                report.findings.append(Finding("determinism", f"another process (PYTHONHASHSEED={seed}) differs at "
                                                              + _first_difference(first_rows, child)
                                                              + " (an order that follows hashing, e.g. of a set?)"))
            else:
                report.lines.append(f"determinism: the same {len(first_rows)} jobs.csv rows from two instances and "
                                    "from another process with another hash seed")
    for label in clean:
        say(f"look-ahead on {label}")
        found = look_ahead_finding(factory, nb_res, workloads[label], runs[label])
        if found is not None:
            report.findings.append(Finding("look-ahead", found))
            break
    else:
        if clean:
            report.lines.append(f"look-ahead: none (decisions up to 4 cuts unchanged when later-ending jobs' "
                                f"run times change; {', '.join(clean)})")
    if "trace" in runs and runs["trace"].failure is None:
        say("speed")
        report.lines.append(_speed_line(factory, nb_res, speed_jobs))
    return report


def _speed_line(factory: Factory, nb_res: int, nb_jobs: int = 2000) -> str:
    from schedlab.schedulers.base import create_scheduler

    workload = trace_like_workload(nb_res, nb_jobs=nb_jobs, seed=2)
    figures = {"easy": (math.inf, 0), "yours": (math.inf, 0)}
    for _ in range(3):  # the best of three, alternating: the first may pay for imports, others for noise
        for label, make in (("easy", lambda: create_scheduler("easy")), ("yours", factory)):
            scheduler = make()
            scheduler.prepare()
            engine = Engine(Platform.homogeneous(nb_res), workload, scheduler)
            try:
                engine.run()
            except Exception:
                return "speed: not measured (the run failed)"
            figures[label] = min(figures[label], (engine.scheduling_time_s, engine.nb_decisions))
    (yours_s, yours_n), (easy_s, _) = figures["yours"], figures["easy"]
    ratio = yours_s / easy_s if easy_s > 0 else math.inf
    rate = yours_n / yours_s if yours_s > 0 else math.inf
    return (f"speed: {1e6 * yours_s / nb_jobs:.1f} us of scheduling per job on {nb_jobs} jobs "
            f"({rate:,.0f} decisions/s), {ratio:.1f}x EASY's {1e6 * easy_s / nb_jobs:.1f} us")
