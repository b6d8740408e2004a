"""`schedlab scheduler check`: the checks, run on every workload (the built-in ones and the user's),
and the report. Which process runs what: the runs of rules, determinism and look-ahead in child
processes (sandbox.py) that see only copies of the user's files; speed in this process."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab.checker.perturb import Changes, apply_changes, arrival_changes, runtime_changes
from schedlab.checker.runs import DEFAULT_BUDGETS, Budgets, RunResult
from schedlab.checker.sandbox import Sandbox, execute, neutral_doc
from schedlab.checker.workloads import CheckWorkload, builtin_workloads
from schedlab.workload import Workload

Factory = Callable[[], Any]
HASH_SEEDS = (12345, 54321)
#: quantiles of the base run's job ends where the look-ahead cuts fall
CUTS = (0.25, 0.6)
#: the trace workload runs once more under `--timing batsim`, on a platform whose master's messages
#: take this long (a wake-up asked closer than that reaches Batsim after its time)
SLOW_MASTER_S = 0.5
SLOW_LABEL = "slow-master"


@dataclass
class Finding:
    check: str  # rules | progress | determinism | look-ahead | speed
    message: str
    files: list[str] = field(default_factory=list)
    cause: str = ""  # what the evidence points to, in a few words


@dataclass
class CheckReport:
    lines: list[str] = field(default_factory=list)  # what held, and the speed
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # legal under Batsim, worth a look

    @property
    def ok(self) -> bool:
        return not self.findings


class _Runner:
    """Runs in child processes (a Sandbox), or in this process when no child can make the scheduler."""

    def __init__(self, factory: Factory, sandbox: Sandbox | None, budgets: Budgets) -> None:
        self.factory, self.sandbox, self.budgets = factory, sandbox, budgets

    def __call__(self, runs: list[dict[str, Any]], *, hash_seed: int = HASH_SEEDS[0], mode: str = "runs") -> list[Any]:
        if not runs:
            return []
        if self.sandbox is not None:
            return self.sandbox.run(runs, hash_seed=hash_seed, budgets=self.budgets, mode=mode)
        from dataclasses import asdict

        lines: list[str] = []
        execute({"runs": runs, "mode": mode, "budgets": asdict(self.budgets)}, self.factory, lines.append, None)
        return [RunResult.from_json(line) if mode == "runs" else json.loads(line) for line in lines]


def _shown(decisions: list[str], most: int = 3) -> str:
    if not decisions:
        return "none"
    more = f", ... ({len(decisions) - most} more)" if len(decisions) > most else ""
    return "[" + ", ".join(decisions[:most]) + more + "]"


def _first_difference(first: RunResult, second: RunResult, up_to_s: float | None = None, *,
                      prefix: bool = False) -> str | None:
    """Where two runs' decisions (at or before `up_to_s`) or, without a cut, jobs.csv rows first
    differ. `prefix`: the second run failed; only the decisions it made are compared."""
    a = [entry for entry in first.log if up_to_s is None or entry[0] <= up_to_s]
    b = [entry for entry in second.log if up_to_s is None or entry[0] <= up_to_s]
    if prefix:
        a = a[:len(b)]
    for (now_a, decisions_a), (now_b, decisions_b) in zip(a, b, strict=False):
        if (now_a, decisions_a) != (now_b, decisions_b):
            return f"the decisions at t={min(now_a, now_b):g}: {_shown(decisions_a)} became {_shown(decisions_b)}"
    if len(a) != len(b):
        at = f" up to t={up_to_s:g}" if up_to_s is not None else ""
        return f"the number of decide calls{at}: {len(a)} became {len(b)}"
    if up_to_s is None and first.rows != second.rows:
        row = next((i for i, (x, y) in enumerate(zip(first.rows, second.rows, strict=False)) if x != y),
                   min(len(first.rows), len(second.rows)))
        return f"jobs.csv row {row + 1}"
    return None


def _cuts(values: list[float], quantiles: tuple[float, ...]) -> list[float]:
    values = sorted(values)
    return sorted({values[int(q * (len(values) - 1))] for q in quantiles}) if values else []


def check_scheduler(factory: Factory, spec: str, *, options: Mapping[str, Any] | None = None, nb_res: int = 16,
                    extra: Workload | None = None, extra_nb_res: int | None = None, workload_path: str | None = None,
                    out_dir: Path | None = None, progress: Callable[[str], None] | None = None,
                    speed_sizes: tuple[int, ...] = (1000, 2000, 4000), max_times_easy: float | None = None,
                    budgets: Budgets = DEFAULT_BUDGETS, argv: list[str] | None = None,
                    in_child: bool | None = None) -> CheckReport:
    """Every check on every workload: the built-in ones (edge cases and a trace-like one on `nb_res`
    resources, the coverage ones on their own) and `extra` (a user's, from `workload_path`, on
    `extra_nb_res`). `spec` and `options` name the scheduler `factory` makes: the child processes
    and reproductions make it from them. `in_child`: None = in child processes when they can make
    it."""
    options = dict(options or {})
    report = CheckReport()
    say = progress or (lambda text: None)
    cases = builtin_workloads(nb_res)
    if extra is not None:  # first: a scheduler that reads its file once, at import, reads this one
        cases.insert(0, CheckWorkload("yours", extra, extra_nb_res or extra.nb_res or nb_res))
    docs = {case.label: neutral_doc(case.workload.to_json()) for case in cases}
    sizes = {case.label: case.nb_res for case in cases}
    sandbox = _sandbox(spec, options, workload_path if extra is not None else None, argv, in_child)
    if sandbox is None:
        report.lines.append("note: the scheduler was checked in this process (no child process could make "
                            f"{spec!r}): what it reads from outside the engine is not checked")
    runner = _Runner(factory, sandbox, budgets)
    option_docs = sandbox.option_docs if sandbox is not None else {}

    def runs_of(labels: list[str], changes: dict[str, Changes] | None = None) -> list[dict[str, Any]]:
        runs = []
        for label in labels:
            change = (changes or {}).get(label)
            doc = docs[label] if change is None else apply_changes(docs[label], change, simulated=True)
            files = {}  # only option files this run perturbs travel; the child keeps the others as copied
            if change is not None and label == "yours":
                for name, other in option_docs.items():
                    perturbed = apply_changes(other, change, simulated=False)
                    if perturbed != other:
                        files[name] = perturbed
            runs.append({"label": label, "nb_res": sizes[label], "doc": doc, "files": files})
        return runs

    say(f"runs on {len(cases)} workloads")
    base_runs = runs_of(list(docs))
    if "trace" in docs:
        base_runs.append({**runs_of(["trace"])[0], "label": SLOW_LABEL, "slow_master_s": SLOW_MASTER_S})
    base = {r.label: r for r in runner(base_runs)}
    slow = base.pop(SLOW_LABEL, None)
    clean = _rules(report, base, runner, docs, sizes, spec, options, out_dir, say)
    if slow is not None and "trace" in clean:
        _slow_master(report, slow, runner, docs["trace"], sizes["trace"], spec, options, out_dir, say)
    warned: dict[str, list[tuple[str, list[str]]]] = {}
    for result in base.values():
        for kind, ids in result.warnings.items():
            warned.setdefault(kind, []).append((result.label, ids))
    for kind, where in warned.items():
        report.warnings.append(f"{sum(len(ids) for _, ids in where)} job(s) {kind} (legal under Batsim: is it what you "
                               f"meant?): " + ", ".join(f"{len(ids)} on {label}" for label, ids in where)
                               + f"; first {where[0][1][0]}")

    if clean:
        say("determinism and look-ahead")
        # one process with another hash seed; per cut, one run where both the run times of the jobs
        # ending after it and the jobs submitted after it change (told apart only when it differs)
        variants: dict[str, tuple[dict[str, Changes] | None, int]] = {"hash": (None, HASH_SEEDS[1])}
        parts: dict[tuple[str, str], tuple[Changes, Changes]] = {}
        for number, quantile in enumerate(CUTS):
            combined = {}
            for label in clean:
                spans = {name: (span[0], span[1]) for name, span in base[label].spans.items()}
                for cut_s in _cuts([span[1] for span in spans.values() if span[1] is not None], (quantile,)):
                    runtime = runtime_changes(docs[label], spans, cut_s, seed=number)
                    arrival = arrival_changes(docs[label], cut_s, seed=number, nb_res=sizes[label])
                    both = Changes("run times and arrivals", cut_s, runtime.runtimes_s, arrival.removed,
                                   arrival.shifted_s, arrival.added)
                    if not both.empty:
                        combined[label] = both
                        parts[f"look-ahead {number}", label] = (runtime, arrival)
            variants[f"look-ahead {number}"] = (combined, HASH_SEEDS[0])

        def run_variant(item: tuple[str, tuple[dict[str, Changes] | None, int]]) -> tuple[str, dict[str, RunResult]]:
            name, (changes, seed) = item
            labels = clean if changes is None else [label for label in clean if label in changes]
            return name, {r.label: r for r in runner(runs_of(labels, changes), hash_seed=seed)}

        workers = min(2, os.cpu_count() or 1) if sandbox is not None else 1  # in this process: one at a time
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = dict(pool.map(run_variant, variants.items()))
        _judge(report, base, outcomes, variants, parts, clean, runner, runs_of)

    if "trace" in base and base["trace"].failure is None:
        say("speed")
        _speed(report, factory, nb_res, speed_sizes, max_times_easy, budgets)
    return report


def _sandbox(spec: str, options: Mapping[str, Any], workload_path: str | None, argv: list[str] | None,
             in_child: bool | None) -> Sandbox | None:
    if in_child is False:
        return None
    from schedlab.schedulers.base import scheduler_class

    try:
        scheduler_class(spec)
    except Exception:
        if in_child:
            raise
        return None
    module, colon, name = spec.rpartition(":")
    if colon and module.endswith(".py"):
        spec = f"{Path(module).resolve()}:{name}"  # the child works elsewhere
    return Sandbox(spec, options, workload_path=workload_path, argv=argv)


def _rules(report: CheckReport, base: dict[str, RunResult], runner: _Runner, docs: dict[str, Any],
           sizes: dict[str, int], spec: str, options: Mapping[str, Any], out_dir: Path | None,
           say: Callable[[str], None]) -> list[str]:
    """Rules, progress and refusals of the base runs, one finding per kind of failure (the first
    run that shows it quoted and shrunk, the others named); the labels whose runs are clean."""
    from schedlab.checker.runs import kind_of

    clean: list[str] = []
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for label, result in base.items():
        if result.kind == "refused":
            report.lines.append(f"not run on {label}: {result.failure}")
        elif result.failure is not None:
            groups.setdefault((result.kind or "", kind_of(result.failure)), []).append(result)
        else:
            clean.append(label)
    shrunk = False
    for (kind, _), results in groups.items():
        first = results[0]
        files, message = [], f"{first.label} ({first.nb_jobs} jobs): {first.failure}"
        if kind not in ("progress", "input") and not shrunk:  # the first violation is shrunk
            shrunk = True
            say(f"shrinking the {first.label} workload")
            small = runner([{"label": first.label, "nb_res": sizes[first.label], "doc": docs[first.label],
                             "files": {}, "failure": first.failure}], mode="shrink")[0]
            if small.get("doc") is not None:
                message += f"; reproduced with {len(small['doc']['jobs'])} job(s)"
                if out_dir is not None:
                    files = _write_reproduction(out_dir, f"violation-{first.label}", sizes[first.label], small["doc"],
                                                small["failure"], spec, options)
        if len(results) > 1:
            message += f"; the same on {', '.join(r.label for r in results[1:])}"
        if kind == "input":
            report.findings.append(Finding("input", message, cause="bad input: a file an option names"))
        elif kind == "progress":
            report.findings.append(Finding("progress", message, cause="no progress"))
        else:
            report.findings.append(Finding("rules", message, files,
                                           cause="raises" if kind == "raised" else "breaks Batsim's rules"))
    if clean and len(clean) == len(base):
        total = sum(r.nb_jobs for r in base.values())
        report.lines.append(f"rules: held on {len(base)} workloads ({total:,} jobs: "
                            + ", ".join(f"{label} on {sizes[label]}" for label in base) + " resources)")
    return clean


def _slow_master(report: CheckReport, result: RunResult, runner: _Runner, doc: dict[str, Any], nb_res: int,
                 spec: str, options: Mapping[str, Any], out_dir: Path | None, say: Callable[[str], None]) -> None:
    """The trace workload under Batsim's message timing on a slow master: its wake-ups must reach
    Batsim before their time (the trace's own failures are reported once, by its ideal run)."""
    import re

    what = f"the trace workload under --timing batsim, master messages {SLOW_MASTER_S:g} s"
    if result.failure is None:
        ahead = [float(at) - now for now, decisions in result.log for text in decisions
                 if (at := next(iter(re.findall(r"^CallMeLater\(at_s=([^)]+)\)$", text)), None)) is not None]
        calls = (f"; {len(ahead):,} wake-ups, the nearest {min(ahead):.3g} s ahead" if ahead else "; no wake-up")
        report.lines.append(f"slow master: held on {what} ({result.nb_jobs} jobs{calls})")
        return
    message, files = f"{SLOW_LABEL} ({what}, {result.nb_jobs} jobs): {result.failure}", []
    if result.kind == "progress":
        report.findings.append(Finding("progress", message, cause="no progress"))
        return
    say(f"shrinking the {SLOW_LABEL} workload")
    small = runner([{"label": SLOW_LABEL, "nb_res": nb_res, "doc": doc, "files": {}, "failure": result.failure,
                     "slow_master_s": SLOW_MASTER_S}], mode="shrink")[0]
    if small.get("doc") is not None:
        message += f"; reproduced with {len(small['doc']['jobs'])} job(s)"
        if out_dir is not None:
            files = _write_reproduction(out_dir, f"violation-{SLOW_LABEL}", nb_res, small["doc"], small["failure"],
                                        spec, options, slow_master_s=SLOW_MASTER_S)
    report.findings.append(Finding("rules", message, files, cause="raises" if result.kind == "raised"
                                   else "breaks Batsim's rules on a slow platform"))


def _judge(report: CheckReport, base: dict[str, RunResult], outcomes: dict[str, dict[str, RunResult]],
           variants: Mapping[str, Any], parts: Mapping[tuple[str, str], tuple[Changes, Changes]], clean: list[str],
           runner: Any, runs_of: Callable[..., Any]) -> None:
    """Determinism, then look-ahead. A run that differs is explained before anyone is blamed: the
    unperturbed run is repeated (a run that changes by itself is a determinism failure, not a hash
    order nor look-ahead), and a perturbed run that differs is split into its two changes to name
    the cause."""
    hashed = {label: where for label in clean
              if (where := _first_difference(base[label], outcomes["hash"].get(label, base[label]))) is not None}
    if hashed:
        repeat = {r.label: r for r in runner(runs_of(sorted(hashed)))}
        for label in sorted(hashed):
            where = _first_difference(base[label], repeat[label])
            if where is not None:
                report.findings.append(Finding(
                    "determinism", f"two runs of {label} in the same conditions differ: {where} (a wall clock, an "
                                   "unseeded random generator, a timing?)", cause="changes from run to run"))
                return  # decisions that change by themselves would read as look-ahead too
        label, where = next(iter(hashed.items()))
        report.findings.append(Finding(
            "determinism", f"a process with another PYTHONHASHSEED ({HASH_SEEDS[1]}) differs on {label}: {where} (an "
                           "order that follows string hashing, e.g. of a set)", cause="follows string hashing"))
    else:
        where = ("two processes with different hash seeds" if runner.sandbox is not None
                 else "two runs in this process (hash seeds not varied)")
        report.lines.append(f"determinism: the same decisions and jobs.csv rows on {len(clean)} workloads from {where}")
    suspects: list[tuple[str, str, Changes, str]] = []
    broken: list[tuple[str, Changes, RunResult]] = []
    unjudged: list[str] = []
    for name, outcome in outcomes.items():
        changes = variants[name][0]
        if changes is None:
            continue
        for label, result in outcome.items():
            change = changes[label]
            if result.kind in ("input", "progress") or (result.failure is not None and not result.log):
                # a budget stopped it, the child died before deciding, or the scheduler refused the
                # perturbed copy of its file: nothing to compare, and no blame
                unjudged.append(f"{label}: {result.failure}")
                continue
            where = _first_difference(base[label], result, up_to_s=change.cut_s, prefix=result.failure is not None)
            if where is not None:
                suspects.append((name, label, change, where))
            elif result.failure is not None:
                broken.append((label, change, result))
    checks = {finding.check for finding in report.findings}
    for label, change, result in broken[:1]:
        if ("progress" if result.kind == "progress" else "rules") in checks:
            break  # the base runs showed it already
        report.findings.append(Finding("progress" if result.kind == "progress" else "rules",
                                       f"{label} with other run times and arrivals after t={change.cut_s:g}: "
                                       f"{result.failure}", cause="no progress" if result.kind == "progress" else
                                       "raises" if result.kind == "raised" else "breaks Batsim's rules"))
    if not suspects:
        judged = sum(len(o) for n, o in outcomes.items() if variants[n][0] is not None) - len(unjudged)
        report.lines.append(f"look-ahead: none (decisions up to each cut unchanged when the run times of later-ending "
                            f"jobs and the jobs submitted later change; {len(clean)} workloads, {judged} runs"
                            + (f"; {len(unjudged)} not judged, first {unjudged[0]}" if unjudged else "") + ")")
        return
    first: dict[str, tuple[str, Changes, str]] = {}
    for name, label, change, where in suspects:
        first.setdefault(label, (name, change, where))
    labels = sorted(first)
    repeat = {r.label: r for r in runner(runs_of(labels))}
    for label in labels:
        if _first_difference(base[label], repeat[label], up_to_s=first[label][1].cut_s) is not None:
            report.findings.append(Finding(
                "determinism", f"two runs of {label} in the same conditions differ up to t={first[label][1].cut_s:g} "
                               "(a wall clock, an unseeded random generator, a timing?)",
                cause="changes from run to run"))
            return
    label = labels[0]  # one workload tells the cause: each change alone
    name, change, where = first[label]
    runtime, arrival = parts[name, label]
    alone = {kind: runner(runs_of([label], {label: part}))[0] for kind, part in (("run times", runtime),
                                                                                 ("arrivals", arrival))
             if not part.empty}
    found = False
    for kind, result in alone.items():
        part = runtime if kind == "run times" else arrival
        shown = _first_difference(base[label], result, up_to_s=part.cut_s, prefix=result.failure is not None)
        if shown is None or result.kind in ("input", "progress"):
            continue
        found = True
        if kind == "run times":
            message = (f"{shown} when only the run times of jobs ending after t={part.cut_s:g} changed "
                       f"({len(part.runtimes_s)} jobs; workload {label})")
            cause = "reads run times (profiles, profile names, the workload's file, the engine's memory)"
        else:
            message = (f"{shown} when only jobs submitted after t={part.cut_s:g} changed ({len(part.removed)} "
                       f"removed, {len(part.shifted_s)} shifted, {len(part.added)} added; workload {label})")
            cause = "sees future arrivals (the workload's file, the engine's memory)"
        report.findings.append(Finding("look-ahead", message, cause=cause))
    if not found:
        report.findings.append(Finding(
            "look-ahead", f"{where} when the run times of jobs ending after t={change.cut_s:g} and the jobs submitted "
                          f"after it changed together (neither alone changed them; workload {label})",
            cause="looks ahead (run times and arrivals together)"))


def _speed(report: CheckReport, factory: Factory, nb_res: int, sizes: tuple[int, ...], max_times_easy: float | None,
           budgets: Budgets) -> None:
    from schedlab.checker.speed import measure

    speed = measure(factory, nb_res, sizes, budgets=budgets)
    if speed.failure is not None:
        report.findings.append(Finding("rules", f"during the speed runs, {speed.failure}", cause="breaks Batsim's rules"
                                       if "rule broken" in speed.failure else "raises or stalls"))
        return
    line = speed.line()
    if max_times_easy is not None and speed.sizes and speed.ratio() > max_times_easy:
        report.findings.append(Finding("speed", f"{line[len('speed: '):]}: more than --max-times-easy "
                                                f"{max_times_easy:g}", cause="too slow"))
    else:
        report.lines.append(line)


def reproduction_files(nb_res: int) -> list[str]:
    """The names `--out` may receive: a violation's workload, replay text and platform."""
    labels = [case.label for case in builtin_workloads(max(nb_res, 2))] + ["yours", SLOW_LABEL]
    return [f"violation-{label}{ext}" for label in labels for ext in (".json", ".txt", ".xml")]


def _write_reproduction(out_dir: Path, label: str, nb_res: int, doc: dict[str, Any], failure: str,
                        spec: str, options: Mapping[str, Any], *, slow_master_s: float | None = None) -> list[str]:
    """The shrunk workload, a platform and a replay command with absolute paths (it replays from
    anywhere), quoting the shrunk workload's own failure. `slow_master_s`: the run was under
    `--timing batsim` on a slow master's platform."""
    import shlex

    from schedlab.paths import write_text_atomic
    from schedlab.platforms.generate import cluster_xml, slow_master_xml

    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    workload_path, platform_path = out_dir / f"{label}.json", out_dir / f"{label}.xml"
    body = {**doc, "nb_res": nb_res, "description": f"schedlab scheduler check: {failure}"}
    write_text_atomic(workload_path, json.dumps(body, indent=1) + "\n")
    write_text_atomic(platform_path, cluster_xml(nb_res) if slow_master_s is None
                      else slow_master_xml(nb_res, slow_master_s))
    module, colon, name = spec.rpartition(":")
    if colon and module.endswith(".py"):
        spec = f"{Path(module).resolve()}:{name}"
    words = ["schedlab", "simulate", "-p", str(platform_path), "-w", str(workload_path), "-s", spec,
             *[item for key, value in options.items() for item in ("-O", f"{key}={value}")], "-o", str(out_dir / label),
             *(["--timing", "batsim"] if slow_master_s is not None else [])]
    write_text_atomic(out_dir / f"{label}.txt", f"{failure}\n\nreplay: {shlex.join(words)}\n")
    return [str(workload_path), str(platform_path)]
