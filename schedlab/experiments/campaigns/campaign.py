"""Campaign files (TOML): a grid of workloads x platforms x schedulers x option values x seeds, and
its expansion into runs.

Validation happens before any work, and every problem is one line naming the file, the line and the
key. A run is described by plain data (paths, names, numbers), so it can travel to a process pool or
a Dask worker; its id is a hash of the content of its inputs, its options, seed, jitter and the
schedlab version, so finished runs are found again and skipped.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab.errors import InputError
from schedlab.experiments.campaigns.tomlfile import (  # noqa: F401 (file_kind, read_checked: this module's names too)
    _Locator,
    _table,
    file_kind,
    label_problem,
    name_problem,
    read_checked,
)
from schedlab.parsing import toml_loads
from schedlab.workloads.formats import all_trace_formats

TOP_KEYS = {"name", "description", "seeds", "timing", "metrics", "workloads", "platforms", "schedulers", "perturb",
            "compare", "warmup_share", "warmup_jobs", "claims", "predictions"}
#: the trace formats a workload may name (workloads/formats.py: swf, table)
TRACE_KINDS = tuple(all_trace_formats())
WORKLOAD_KINDS = ("file", *TRACE_KINDS, "synthetic", "lublin")
WORKLOAD_KEYS = {"name", "convert", "windows", "seeds", "history", "platforms", *WORKLOAD_KINDS}
HISTORY = "@history"  # a scheduler option value: the instance's history workload
WORKLOAD = "@workload"  # a scheduler option value: the workload file the run simulates
SYNTHETIC_KEYS = {"jobs", "resources", "load"}
LUBLIN_KEYS = {"nodes", "jobs", "mode", "missing_walltime"}
PLATFORM_KEYS = {"name", "file", "resources"}
SCHEDULER_KEYS = {"name", "label", "options"}
PERTURB_KEYS = {"submit_jitter_s", "repetitions"}
#: a shift of 2^42 s (140,000 years) keeps times to 1 ms in doubles (their spacing there: 2^42 x 2^-52 s);
#: a jitter of 1e308 made every run time 0
MAX_JITTER_S = 2.0**42
#: the engine's timings (`simulate --timing`): zero message latency, or Batsim 4.2.1's message timing
#: on each platform file's network (checked before any run: `runner.check_run_inputs`)
TIMINGS = ("ideal", "batsim")


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    kind: str  # one of WORKLOAD_KINDS
    source: Any  # path (file/swf/table) or generator parameters (dict)
    convert: dict[str, Any] = field(default_factory=dict)
    windows: int | str | None = None  # consecutive windows of convert.days: a count or "all"
    seeds: tuple[int, ...] = ()  # this workload's seeds (default: the campaign's)
    history: bool = False  # also make, per instance, the trace's jobs completed before it starts
    platforms: tuple[str, ...] = ()  # run on these platforms only (default: every platform)

    @property
    def seeded(self) -> bool:
        return self.kind in ("synthetic", "lublin")


@dataclass(frozen=True)
class PlatformSpec:
    name: str
    file: str | None = None  # a file, or None with `resources` (generated) or a shipped name
    resources: int | None = None


@dataclass(frozen=True)
class SchedulerSpec:
    name: str
    label: str
    grid: dict[str, list[Any]]
    base: str = "."  # the campaign file's folder: FILE#NAME option values are relative to it

    def combinations(self) -> list[dict[str, Any]]:
        """The grid's cross product. An option that acts in some combinations only (`oracle` with
        `runtime = ["exact", "predicted"]`) is left out of the others, where the scheduler would
        refuse it as ignored; given for none where it acts, it stays (and is refused)."""
        from schedlab.schedulers.base import inert_options

        keys = sorted(self.grid)
        combos = [dict(zip(keys, values, strict=True)) for values in itertools.product(*(self.grid[k] for k in keys))]
        inert = [inert_options(self.name, combo) for combo in combos]
        acting = {key for combo, idle in zip(combos, inert, strict=True) for key in combo if key not in idle}
        kept: list[dict[str, Any]] = []
        for combo, idle in zip(combos, inert, strict=True):
            combo = {k: v for k, v in combo.items() if not (k in idle and k in acting)}
            if combo not in kept:  # dropping an option can make two combinations one
                kept.append(combo)
        return kept

    def files(self, options: dict[str, Any]) -> dict[str, str]:
        """The options naming a file (`queue_order = "fitted.toml#lin"`), with the file's absolute
        path: what the scheduler runs with. The options keep the given text (run keys, reports)."""
        return option_files(options, Path(self.base))


#: options whose value may be FILE#NAME (a fitted policy): FILE is relative to the campaign file
FILE_OPTIONS = ("queue_order",)


def option_files(options: dict[str, Any], base: Path) -> dict[str, str]:
    out = {}
    for key in FILE_OPTIONS:
        value = options.get(key)
        if isinstance(value, str) and "#" in value:
            path, _, name = value.rpartition("#")
            out[key] = f"{(base / path).resolve()}#{name}"
    return out


@dataclass(frozen=True)
class Campaign:
    path: Path
    name: str
    seeds: tuple[int, ...]
    timing: str
    metrics: tuple[str, ...] | None
    workloads: tuple[WorkloadSpec, ...]
    platforms: tuple[PlatformSpec, ...]
    schedulers: tuple[SchedulerSpec, ...]
    jitter_s: float | None = None
    repetitions: int = 0
    compare: dict[str, Any] | None = None  # experiments.papers.compare: candidate vs baseline beside a paper
    warmup_share: float = 0.0  # metrics leave out this share of the first jobs by submission
    claims: tuple[dict[str, Any], ...] = ()  # experiments.papers.claims: a paper's findings on policies
    warmup_jobs: int = 0  # or this many first jobs (a tester's rule: the authors' skips 16)
    predictions: dict[str, Any] | None = None  # experiments.studies.campaign_predictions: ML metrics vs schedule gain


def _seeds(value: Any, at: _Locator, section: str | None, index: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(s, int) and s >= 0 for s in value):
        raise at.error("expected a non-empty list of integers >= 0", section, index, "seeds")
    if len(set(value)) != len(value):
        raise at.error("a seed is listed twice", section, index, "seeds")
    return tuple(value)


def _workload(raw: Any, at: _Locator, index: int, base: Path) -> WorkloadSpec:
    from schedlab.workloads.convert import ConversionOptions

    raw = _table(raw, WORKLOAD_KEYS, at, "workloads", index)
    kinds = [k for k in WORKLOAD_KINDS if k in raw]
    if len(kinds) != 1:
        raise at.error(f"give exactly one of {', '.join(WORKLOAD_KINDS)}", "workloads", index)
    kind = kinds[0]
    name = str(raw.get("name", f"{kind}{index}"))
    source = raw[kind]
    if kind == "file" or kind in TRACE_KINDS:
        if not isinstance(source, str):
            raise at.error("expected a file path", "workloads", index, kind)
        path = (base / source).resolve()
        if not path.is_file():
            raise at.error(f"no such file: {path}", "workloads", index, kind)
        source = str(path)
        if kind == "file":  # Batsim's rules, as simulate and `workload check` apply them
            from schedlab.workload import load_workload, require_batsim_fields

            try:
                require_batsim_fields(load_workload(path))
            except InputError as exc:
                raise at.error(str(exc), "workloads", index, kind) from None
    elif kind == "synthetic":
        source = _table(source, SYNTHETIC_KEYS, at, "workloads", index)
        for key in ("jobs", "resources"):
            if not isinstance(source.get(key), int) or source[key] <= 0:
                raise at.error("expected an integer > 0", "workloads", index, key)
        if not isinstance(source.get("load", 0.9), int | float) or not source.get("load", 0.9) > 0:
            raise at.error("expected a number > 0", "workloads", index, "load")
    else:
        source = _table(source, LUBLIN_KEYS, at, "workloads", index)
        for key in ("nodes", "jobs"):
            if not isinstance(source.get(key), int) or source[key] <= 0:
                raise at.error("expected an integer > 0", "workloads", index, key)
        if source.get("mode", "typed") not in ("typed", "typeless"):
            raise at.error("expected typed or typeless", "workloads", index, "mode")
        from schedlab.workloads.lublin import check_machine

        try:
            check_machine(source["nodes"], source.get("mode", "typed") == "typed")
        except InputError as exc:
            raise at.error(str(exc).replace("--nodes", "nodes"), "workloads", index, "nodes") from None
    convert = raw.get("convert", {})
    fields = set(ConversionOptions.__dataclass_fields__)
    convert = _table(convert, fields, at, "workloads", index)
    if convert and kind in ("file", "synthetic"):
        raise at.error(f"a {kind} workload is used as it is (convert applies to {', '.join(TRACE_KINDS)} and lublin)",
                       "workloads", index, "convert")
    try:
        ConversionOptions(**convert).validate()
    except (InputError, TypeError) as exc:
        raise at.error(str(exc), "workloads", index, "convert") from None
    windows = raw.get("windows")
    if windows is not None:
        if not (windows == "all" or (isinstance(windows, int) and windows > 0)):
            raise at.error('expected a count > 0 or "all"', "workloads", index, "windows")
        if "days" not in convert or kind not in TRACE_KINDS:
            raise at.error(f"windows split a trace ({' or '.join(TRACE_KINDS)}) into convert.days-long windows",
                           "workloads", index, "windows")
    seeds = _seeds(raw["seeds"], at, "workloads", index) if "seeds" in raw else ()
    history = raw.get("history", False)
    if history not in (False, "completed-before"):
        raise at.error('expected "completed-before"', "workloads", index, "history")
    if history and (kind not in TRACE_KINDS or not ({"start", "last_hours"} & set(convert) or windows)):
        raise at.error("a history needs a trace window (convert.start, convert.last_hours or windows)",
                       "workloads", index, "history")
    platforms = raw.get("platforms", [])
    if not isinstance(platforms, list) or not all(isinstance(p, str) for p in platforms):
        raise at.error("expected a list of platform names", "workloads", index, "platforms")
    return WorkloadSpec(name, kind, source, convert, windows, seeds, bool(history), tuple(platforms))


def _platform(raw: Any, at: _Locator, index: int, base: Path) -> PlatformSpec:
    from schedlab.platforms import SHIPPED

    raw = _table(raw, PLATFORM_KEYS, at, "platforms", index)
    if "file" in raw:
        path = (base / str(raw["file"])).resolve()
        if not path.is_file():
            raise at.error(f"no such file: {path}", "platforms", index, "file")
        return PlatformSpec(str(raw.get("name", path.stem)), str(path))
    if "resources" in raw:
        if not isinstance(raw["resources"], int) or raw["resources"] <= 0:
            raise at.error("expected an integer > 0", "platforms", index, "resources")
        return PlatformSpec(str(raw.get("name", f"{raw['resources']}res")), None, raw["resources"])
    name = raw.get("name")
    if name not in SHIPPED:
        raise at.error(f"give file, resources, or a shipped platform's name ({', '.join(SHIPPED)})", "platforms",
                       index, "name")
    return PlatformSpec(name)


def _scheduler(raw: Any, at: _Locator, index: int, base: Path) -> SchedulerSpec:
    from schedlab.schedulers.base import create_scheduler

    raw = _table(raw, SCHEDULER_KEYS, at, "schedulers", index)
    name = raw.get("name")
    if not isinstance(name, str):
        raise at.error("expected a scheduler name", "schedulers", index, "name")
    label = str(raw.get("label", name))
    problem = label_problem(label)
    if problem is not None:
        raise at.error(problem, "schedulers", index, "label" if "label" in raw else "name")
    module, colon, class_name = name.rpartition(":")
    if colon and module.endswith(".py") and not Path(module).is_absolute():
        name = f"{(base / module).resolve()}:{class_name}"  # FILE.py:CLASS, relative to the campaign file
    raw_options = raw.get("options", {})
    options = _table(raw_options, set(raw_options) if isinstance(raw_options, dict) else set(), at, "schedulers",
                     index)
    grid = {key: value if isinstance(value, list) else [value] for key, value in options.items()}
    for key, values in grid.items():
        if not values:
            raise at.error("an empty list of values makes no run", "schedulers", index, key)
    spec = SchedulerSpec(name, label, grid, str(base))
    for combination in spec.combinations():  # every combination must make a scheduler
        try:
            create_scheduler(name, {k: str(v) if isinstance(v, bool | int | float) else v
                                    for k, v in {**combination, **spec.files(combination)}.items()})
        except InputError as exc:
            named = {k: Path(v.rpartition("#")[0]).name for k, v in combination.items()
                     if isinstance(v, str) and "#" in v}  # a FILE#NAME value: its file is in the message
            bad = next((k for k in sorted(combination, key=len, reverse=True)
                        if k in str(exc) or (k in named and named[k] in str(exc))), None)
            raise at.error(str(exc), "schedulers", index, bad or "name") from None
    return spec


def run_memory_bytes(campaign: Campaign) -> int:
    """The most memory one run of the campaign is expected to take (schedlab.memory's estimate, with
    the largest platform, generated workload and cost per resource among its schedulers)."""
    return _largest_run(campaign.workloads, campaign.platforms, campaign.schedulers)[0]


def _largest_run(workloads: tuple[WorkloadSpec, ...], platforms: tuple[PlatformSpec, ...],
                 schedulers: tuple[SchedulerSpec, ...]) -> tuple[int, int, int]:
    """(the largest run's estimate, the cost per resource, the most jobs a generated workload has)."""
    from schedlab.memory import estimate_run
    from schedlab.schedulers.base import bytes_per_resource

    per_resource = max(bytes_per_resource(spec.name) for spec in schedulers)
    jobs = max((int(w.source["jobs"]) for w in workloads if w.kind in ("synthetic", "lublin")), default=0)
    resources = max((p.resources or 0 for p in platforms), default=0)
    return estimate_run(resources, per_resource, generated_jobs=jobs), per_resource, jobs


def _check_memory(workloads: tuple[WorkloadSpec, ...], platforms: tuple[PlatformSpec, ...],
                  schedulers: tuple[SchedulerSpec, ...], at: _Locator) -> None:
    """A platform or a generated workload too large for one run to fit in memory is refused at its
    field, before anything is made (a campaign of a billion resources was killed after 83 s)."""
    from schedlab.memory import check_fits, estimate_run

    def refuse(section: str, index: int, key: str):
        return lambda message: at.error(f"{message} (a cluster may hold it: --dask slurm)", section, index, key)

    _, per_resource, jobs = _largest_run(workloads, platforms, schedulers)
    for index, workload in enumerate(workloads):  # first: a platform's check counts the largest of them
        if workload.kind in ("synthetic", "lublin"):
            check_fits(estimate_run(0, per_resource, generated_jobs=int(workload.source["jobs"])),
                       f"a workload of {int(workload.source['jobs']):,} jobs", refuse("workloads", index, "jobs"))
    for index, platform in enumerate(platforms):
        if platform.resources:
            check_fits(estimate_run(platform.resources, per_resource, generated_jobs=jobs),
                       f"a run on {platform.resources:,} resources", refuse("platforms", index, "resources"))


def load_campaign(path: str | Path, *, runs_here: bool = True) -> Campaign:
    """Read and validate a campaign file; relative paths are relative to the file. `runs_here`: its
    runs are made on this machine (not on a Dask cluster), so a run that cannot fit in its memory is
    refused."""
    from schedlab.paths import read_input_text

    path = Path(path)
    text = read_input_text(path, "a campaign file (TOML)")
    try:
        doc = toml_loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else None
        raise InputError(f"malformed TOML: {exc}", path=str(path), line=line) from None
    return campaign_from_doc(doc, path, text, runs_here=runs_here)


def campaign_from_doc(doc: dict[str, Any], path: Path, text: str = "", *, runs_here: bool = True) -> Campaign:
    """A campaign from its parsed TOML (`text`: the file's, for line numbers in errors). From
    Python, `path` names a file that need not exist: relative paths are relative to its folder."""
    at = _Locator(path, text)
    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise at.error(f"unknown key (known: {', '.join(sorted(TOP_KEYS))})", key=unknown[0])
    problem = name_problem(doc.get("name", path.stem))
    if problem is not None:
        raise at.error(problem, key="name")
    seeds = _seeds(doc.get("seeds", [1]), at, None, 0)
    timing = doc.get("timing", "ideal")
    if timing not in TIMINGS:
        raise at.error(f"timing {timing!r} is not available (known: {', '.join(TIMINGS)})", key="timing")
    metrics = doc.get("metrics")
    if metrics is not None:
        from schedlab.metrics import compute_metrics

        known = set(compute_metrics([], 1, 0.0))
        if not (isinstance(metrics, list) and all(isinstance(m, str) for m in metrics)):
            raise at.error("expected a list of metric names", key="metrics")
        unknown_metrics = [m for m in metrics if m not in known]
        if unknown_metrics:
            raise at.error(f"unknown metric {unknown_metrics[0]!r} (known: {', '.join(sorted(known))})",
                           key="metrics")
    base = path.parent
    sections = {}
    for section in ("workloads", "platforms", "schedulers"):
        entries = doc.get(section)
        if not isinstance(entries, list) or not entries:
            raise at.error(f"at least one [[{section}]] table is needed", key=section)
        sections[section] = entries
    workloads = tuple(_workload(w, at, i, base) for i, w in enumerate(sections["workloads"]))
    platforms = tuple(_platform(p, at, i, base) for i, p in enumerate(sections["platforms"]))
    schedulers = tuple(_scheduler(s, at, i, base) for i, s in enumerate(sections["schedulers"]))
    without_history = [spec.name for spec in workloads if not spec.history]
    for index, spec in enumerate(schedulers):  # said now, before any trace is converted
        key = next((k for k, values in spec.grid.items() if HISTORY in values), None)
        if key is not None and without_history:
            raise at.error(f"{HISTORY!r} stands for each workload's history, and workload {without_history[0]!r} has "
                           'none (give it history = "completed-before")', "schedulers", index, key)
    names = [p.name for p in platforms]
    for index, workload in enumerate(workloads):
        unknown_platform = next((p for p in workload.platforms if p not in names), None)
        if unknown_platform is not None:
            raise at.error(f"no platform named {unknown_platform!r} (known: {', '.join(names)})", "workloads", index,
                           "platforms")
    for section, specs, attribute in (("workloads", workloads, "name"), ("platforms", platforms, "name"),
                                      ("schedulers", schedulers, "label")):
        names = [getattr(s, attribute) for s in specs]
        repeated = next((i for i, n in enumerate(names) if n in names[:i]), None)
        if repeated is not None:
            raise at.error(f"{attribute} {names[repeated]!r} is used twice", section, repeated, attribute)
    if runs_here:
        _check_memory(workloads, platforms, schedulers, at)
    jitter, repetitions = None, 0
    if "perturb" in doc:
        perturb = _table(doc["perturb"], PERTURB_KEYS, at, "perturb", 0)
        jitter = perturb.get("submit_jitter_s")
        repetitions = perturb.get("repetitions", 5)
        if not isinstance(jitter, int | float) or not jitter > 0:
            raise at.error("expected a number of seconds > 0", "perturb", 0, "submit_jitter_s")
        if not jitter <= MAX_JITTER_S:  # inf too
            raise at.error(f"expected at most {MAX_JITTER_S:.3g} s: submit times shifted further round run times "
                           "by more than a millisecond (floating point)", "perturb", 0, "submit_jitter_s")
        if not isinstance(repetitions, int) or repetitions < 1:
            raise at.error("expected an integer >= 1", "perturb", 0, "repetitions")
    warmup = doc.get("warmup_share", 0.0)
    if not isinstance(warmup, int | float) or isinstance(warmup, bool) or not 0 <= warmup < 0.5:
        raise at.error("expected a share in [0, 0.5)", key="warmup_share")
    warmup_jobs = doc.get("warmup_jobs", 0)
    if not isinstance(warmup_jobs, int) or isinstance(warmup_jobs, bool) or warmup_jobs < 0 or (
            warmup_jobs and warmup):
        raise at.error("expected a number of jobs >= 0 (not with warmup_share)", key="warmup_jobs")
    compare = None
    if "compare" in doc:
        from schedlab.experiments.papers.compare import load_compare

        compare = load_compare(doc["compare"], at, base, [s.label for s in schedulers], [p.name for p in platforms])
    claims: tuple[Any, ...] = ()
    if "claims" in doc:
        from schedlab.experiments.papers.claims import load_claims

        orders = {str(v) for s in schedulers for v in s.grid.get("queue_order", [])}
        claims = tuple(load_claims(doc["claims"], at, [s.label for s in schedulers], orders))
    predictions = None
    if "predictions" in doc:
        from schedlab.experiments.studies.campaign_predictions import load_predictions

        predictions = load_predictions(doc["predictions"], at, [s.label for s in schedulers])
    return Campaign(path, str(doc.get("name", path.stem)), seeds, timing,
                    tuple(metrics) if metrics else None, workloads, platforms, schedulers, jitter, repetitions,
                    compare, float(warmup), claims, warmup_jobs, predictions)


def small_variant(campaign: Campaign, nb_jobs: int) -> Campaign:
    """The same campaign on less data (`experiment run|check --small N`, what CI recomputes): each
    trace workload keeps its first window (when it has windows; it must hold jobs) and the first N
    jobs of it, each generated workload N jobs; the first SMALL_SEEDS seeds (generated instances,
    jittered copies); `file` workloads as they are; schedulers, options, platforms and claims stay.
    Its results are campaign NAME-small; `check --small` compares with expected/STEM-small.json."""
    from dataclasses import replace

    if nb_jobs < 1:
        raise InputError(f"--small needs a number of jobs >= 1, got {nb_jobs}")
    workloads = []
    for spec in campaign.workloads:
        spec = replace(spec, seeds=spec.seeds[:SMALL_SEEDS])
        if spec.kind in TRACE_KINDS:
            spec = replace(spec, convert={**spec.convert, "first": min(nb_jobs, spec.convert.get("first", nb_jobs))},
                           windows=None if spec.windows is None else 1)
        elif spec.kind in ("synthetic", "lublin"):
            spec = replace(spec, source={**spec.source, "jobs": min(nb_jobs, int(spec.source["jobs"]))})
        workloads.append(spec)
    return replace(campaign, name=f"{campaign.name}-small", workloads=tuple(workloads),
                   seeds=campaign.seeds[:SMALL_SEEDS])


#: a small variant's seeds: the campaign's first ones (instances of generated workloads, jitter)
SMALL_SEEDS = 3
