"""A campaign's inputs made concrete, and its runs.

Each workload instance (a trace window, a generated workload for one seed, a file) is written once
as Batsim JSON under DIR/workloads/, named by the hash of what made it, and reused on later runs of
the campaign; platforms likewise under DIR/platforms/. A run is then plain data: paths, names,
options, seed, jitter; its id hashes the content of its inputs with everything else that decides
its result, and the schedlab version.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from schedlab import __version__
from schedlab.errors import InputError
from schedlab.experiments.campaigns.campaign import HISTORY, WORKLOAD, Campaign, WorkloadSpec
from schedlab.paths import canonical_hash, sha256_file, write_text_atomic


@dataclass(frozen=True)
class Input:
    """A concrete workload or platform file and the hash of its content."""

    name: str
    path: str
    sha256: str
    window: int | None = None
    seed: int | None = None
    history_path: str | None = None  # the trace's jobs completed before this instance starts
    history_sha256: str | None = None


@dataclass(frozen=True, kw_only=True)
class Run:
    """One run of a campaign: plain data (it goes to pool and Dask workers as it is)."""

    id: str
    campaign: str
    workload: str
    window: int | None
    instance: str  # the workload instance: name, #window, @seed of a generated one
    workload_path: str
    workload_sha256: str
    platform: str
    platform_path: str
    platform_sha256: str
    scheduler: str  # label
    scheduler_name: str
    options: dict[str, Any]
    seed: int | None
    jitter_s: float | None
    repetition: int | None  # None: unperturbed; 0..R-1: jittered copies
    timing: str
    metrics: tuple[str, ...] | None
    history_path: str | None = None  # what an option given as "@history" stands for
    warmup_share: float = 0.0  # metrics leave out this share of the first jobs by submission
    warmup_jobs: int = 0  # or this many of them
    files: dict[str, str] | None = None  # options naming a file: the absolute FILE#NAME the scheduler gets

    @property
    def key(self) -> str:
        """A readable, version-independent name of the run (expected-results files use it)."""
        options = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        parts = [self.workload if self.window is None else f"{self.workload}#{self.window}", self.platform,
                 f"{self.scheduler}({options})" if options else self.scheduler]
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        if self.repetition is not None:
            parts.append(f"jitter={self.jitter_s:g}#{self.repetition}")
        return " | ".join(parts)



def _cached(directory: Path, recipe: dict[str, Any], write) -> Input:
    """The file made by `write(path)` for `recipe`, made once: named by the recipe's hash."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{canonical_hash(recipe)[:20]}.json"
    digest = path.with_suffix(".sha256")
    if not (path.is_file() and digest.is_file()):
        write(path)
        write_text_atomic(digest, sha256_file(path) + "\n")
    return Input(recipe["name"], str(path), digest.read_text().strip(), recipe.get("window"), recipe.get("seed"))


def _file_recipe(path: str) -> dict[str, Any]:
    return {"file_sha256": sha256_file(Path(path))}


def _selection_start(convert: dict[str, Any], trace) -> float | None:
    """Where a trace selection starts on the trace clock: `start`, else `last_hours` before the last
    submission, else None (the trace start)."""
    import numpy as np

    from schedlab.workloads.convert import ConversionOptions, start_offset

    start = start_offset(ConversionOptions(**convert), trace)
    if start is None and convert.get("last_hours") is not None:
        start = float(np.nanmax(trace.submit_s)) - float(convert["last_hours"]) * 3600.0
    return start


def _write_synthetic(path: Path, source: dict[str, Any], convert: dict[str, Any], seed: int) -> None:
    from schedlab.workloads.synthetic import SyntheticSpec, write_generated

    write_generated(path, SyntheticSpec(nb_jobs=source["jobs"], nb_resources=source["resources"], seed=seed,
                                        load=float(source.get("load", 0.9))))


def _write_lublin(path: Path, source: dict[str, Any], convert: dict[str, Any], seed: int) -> None:
    from schedlab.workloads.convert import ConversionOptions, convert_columns
    from schedlab.workloads.lublin import generate, to_trace_jobs

    options = ConversionOptions(**{"missing_walltime": source.get("missing_walltime", "none"), **convert})
    mode = source.get("mode", "typed")
    jobs = generate(nodes=source["nodes"], nb_jobs=source["jobs"], seed=seed, typed=mode == "typed")
    trace = to_trace_jobs(jobs, nodes=source["nodes"], seed=seed, mode=mode)
    convert_columns(trace, options, description=jobs.header["Note"])[0].write(str(path))


def _write_one(item: tuple[Any, ...]) -> None:
    writer, path, args = item
    writer(Path(path), *args)
    write_text_atomic(Path(path).with_suffix(".sha256"), sha256_file(Path(path)) + "\n")


def _make_missing(directory: Path, items: list[tuple[dict[str, Any], Any, tuple[Any, ...]]], workers: int) -> None:
    """Each generated workload file not made yet (`_cached`'s names), by `workers` processes: the
    parent would otherwise make them one by one before any run starts."""
    directory.mkdir(parents=True, exist_ok=True)
    todo = []
    for recipe, writer, args in items:
        path = directory / f"{canonical_hash(recipe)[:20]}.json"
        if not (path.is_file() and path.with_suffix(".sha256").is_file()):
            todo.append((writer, str(path), args))
    if workers > 1 and len(todo) > 1:
        import multiprocessing

        from schedlab.interrupts import worker_process

        with multiprocessing.get_context().Pool(min(workers, len(todo)), initializer=worker_process) as pool:
            pool.map(_write_one, todo, chunksize=1)
    else:
        for item in todo:
            _write_one(item)


def workload_inputs(spec: WorkloadSpec, seeds: tuple[int, ...], directory: Path, workers: int = 1) -> list[Input]:
    from schedlab.workloads.convert import ConversionOptions, convert_columns

    if spec.kind == "file":
        return [Input(spec.name, spec.source, sha256_file(Path(spec.source)))]
    # converter 2: requests marked unknown where walltimes come from run times (a cached file of the
    # same options and version would lack the mark)
    base = {"name": spec.name, "kind": spec.kind, "convert": spec.convert, "version": __version__, "converter": 2}
    if spec.kind in ("synthetic", "lublin"):
        recipes = [{**base, "generator": spec.source, "seed": seed} for seed in seeds]
        writer = _write_synthetic if spec.kind == "synthetic" else _write_lublin
        _make_missing(directory, [(recipe, writer, (spec.source, spec.convert, recipe["seed"])) for recipe in recipes],
                      workers)
        return [_cached(directory, recipe, lambda path: None) for recipe in recipes]
    # a trace: read it once, convert the whole selection or each window
    recipe = {**base, **_file_recipe(spec.source)}
    trace = None

    def read():
        nonlocal trace
        if trace is None:
            from schedlab.workloads.formats import read_trace

            trace = read_trace(spec.kind, spec.source)
        return trace

    def options_for(convert: dict[str, Any]) -> ConversionOptions:
        options = ConversionOptions(**convert)
        if options.platform_size is None and read().max_procs:  # the machine a trace states (SWF's MaxProcs)
            options = replace(options, platform_size=read().max_procs)
        return options

    def with_history(instance: Input, start: float | None) -> Input:
        """The instance and, for `history`, the jobs of the whole trace completed before `start`."""
        if not spec.history:
            return instance
        kept = {k: v for k, v in spec.convert.items() if k not in ("start", "days", "last_hours", "first")}
        # "ended": how a completion time is read (submit + wait + run): files made by older rules differ
        def write(path: Path) -> None:
            converted, summary = convert_columns(read(), options_for({**kept, "completed_before": start}))
            converted.write(str(path))
            unknown = summary.get("nb_completion_assumes_no_wait", 0)
            if unknown:  # said by `experiment plan` and `run`: such a history may hold later completions
                write_text_atomic(f"{path}.note",
                    f"{unknown} of {summary['nb_kept']} jobs have no recorded wait: completion taken as submit + "
                    "run time, the earliest it can be (some may have ended after the window started)\n")

        history = _cached(directory, {**recipe, "history_before": start, "ended": "submit+wait+run"}, write)
        return replace(instance, history_path=history.path, history_sha256=history.sha256)

    if spec.windows is None:
        instance = _cached(directory, recipe, lambda path: convert_columns(read(), options_for(spec.convert))[0]
                           .write(str(path)))
        return [with_history(instance, _selection_start(spec.convert, read()))] if spec.history else [instance]
    # windows: the list of non-empty windows is remembered too, so a later plan reads no trace
    # windows counted back from the last submission end with it: (start, start + days]
    closed = "right" if spec.convert.get("last_hours") is not None else "left"
    manifest_key = {**recipe, "windows": spec.windows, "history": spec.history,
                    **({"window_closed": closed} if closed == "right" else {})}
    manifest = directory / f"{canonical_hash(manifest_key)[:20]}.windows.json"
    if manifest.is_file():
        return [Input(**entry) for entry in json.loads(manifest.read_text())]
    import numpy as np

    submits = read().submit_s[np.isfinite(read().submit_s)]
    first = _selection_start(spec.convert, read())  # "the last 7 x 24 h of X" too
    origin = float(submits.min()) if first is None else first
    days_s = float(spec.convert["days"]) * 86400.0
    count = spec.windows if isinstance(spec.windows, int) else int((float(submits.max()) - origin) // days_s) + 1
    inputs = []
    for window in range(count):
        start = origin + window * days_s
        convert = {**{k: v for k, v in spec.convert.items() if k != "last_hours"}, "start": repr(start),
                   **({"window_closed": closed} if closed == "right" else {})}
        try:
            instance = _cached(directory, {**recipe, "window": window, **({"window_closed": closed}
                                                                         if closed == "right" else {})},
                               lambda path, c=convert: convert_columns(read(), options_for(c))[0].write(str(path)))
            inputs.append(with_history(instance, start))
        except InputError as exc:
            if "no job kept" not in str(exc):
                raise  # an empty window (or one with no history yet) is skipped; anything else is an error
    if not inputs:
        raise InputError(f"workload {spec.name!r}: no window holds a job", path=spec.source)
    write_text_atomic(manifest, json.dumps([asdict(i) for i in inputs]))
    return inputs


def platform_input(spec, directory: Path) -> Input:
    from schedlab.platforms import platform_path
    from schedlab.platforms.generate import cluster_xml

    if spec.file is not None:
        return Input(spec.name, spec.file, sha256_file(Path(spec.file)))
    if spec.resources is not None:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"cluster{spec.resources}.xml"
        if not path.is_file():
            write_text_atomic(path, cluster_xml(spec.resources))
        return Input(spec.name, str(path), sha256_file(path))
    path = platform_path(spec.name)
    return Input(spec.name, str(path), sha256_file(path))


def option_values(options: dict[str, Any]) -> dict[str, Any]:
    """Campaign option values as the command line would give them (schedulers coerce strings)."""
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}


def effective_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options a scheduler really runs with (values coerced, defaults filled in): `5`, `5.0`
    and `"5"` are one run, and so are an omitted option and its default."""
    from schedlab.schedulers.base import create_scheduler

    return create_scheduler(name, option_values(options)).options()


def expand(campaign: Campaign, out_dir: Path, *, workers: int = 1) -> list[Run]:
    """Every run of the campaign, in a stable order; inputs are made under `out_dir` as needed
    (absolute paths: Dask workers may start elsewhere), generated workloads by `workers` processes."""
    from schedlab.schedulers.base import scheduler_class
    from schedlab.schedulers.plugins import code_identity

    out_dir = out_dir.resolve()
    # each configuration's effective options, once; "@history" stays a placeholder until an instance
    configurations = [(scheduler, options, file_identity(effective_options(scheduler.name, {
        **options, **scheduler.files(options)}), scheduler.files(options)))
        for scheduler in campaign.schedulers for options in scheduler.combinations()]
    codes = {scheduler.name: code_identity(scheduler_class(scheduler.name)) for scheduler in campaign.schedulers}
    workloads = [(spec, workload_inputs(spec, spec.seeds or campaign.seeds, out_dir / "workloads", workers))
                 for spec in campaign.workloads]
    platforms = [platform_input(spec, out_dir / "platforms") for spec in campaign.platforms]
    runs = []
    for spec, instances in workloads:
        for instance in instances:
            # (seed, repetition) pairs: a generated workload has its seed; a fixed one runs once
            # unjittered (seed None), and its jittered copies use the campaign's seeds
            repetitions = range(campaign.repetitions)
            instance_name = spec.name + ("" if instance.window is None else f"#{instance.window}") + \
                ("" if instance.seed is None else f"@{instance.seed}")
            if spec.seeded:
                variants: list[tuple[int | None, int | None]] = [(instance.seed, None)]
                variants += [(instance.seed, r) for r in repetitions]
            else:
                variants = [(None, None)] + [(seed, r) for seed in spec.seeds or campaign.seeds for r in repetitions]
            for platform in platforms:
                if spec.platforms and platform.name not in spec.platforms:
                    continue
                for scheduler, options, effective in configurations:
                    if HISTORY in effective.values():  # the history's content identifies the run
                        if instance.history_path is None:
                            raise InputError(f"an option is {HISTORY!r} but workload {spec.name!r} has no history "
                                             '(history = "completed-before")')
                        effective = resolve_history(effective, f"sha256:{instance.history_sha256}")
                    for seed, repetition in variants:
                        jitter = campaign.jitter_s if repetition is not None else None
                        identity = {"workload": instance.sha256, "platform": platform.sha256,
                                    "scheduler": scheduler.name,
                                    "options": effective, "seed": seed,
                                    "jitter_s": jitter, "repetition": repetition,
                                    "timing": campaign.timing, "version": __version__}
                        if codes[scheduler.name] is not None:  # a user's or a plugin's code: its file's hash
                            identity["code"] = codes[scheduler.name]
                        if campaign.warmup_share:  # only then: other runs keep their ids
                            identity["warmup_share"] = campaign.warmup_share
                        if campaign.warmup_jobs:
                            identity["warmup_jobs"] = campaign.warmup_jobs
                        runs.append(Run(
                            id=canonical_hash(identity)[:16], campaign=campaign.name, workload=spec.name,
                            window=instance.window, instance=instance_name, workload_path=instance.path,
                            workload_sha256=instance.sha256, platform=platform.name, platform_path=platform.path,
                            platform_sha256=platform.sha256, scheduler=scheduler.label, scheduler_name=scheduler.name,
                            options=options, seed=seed, jitter_s=jitter, repetition=repetition,
                            timing=campaign.timing, metrics=campaign.metrics, history_path=instance.history_path,
                            warmup_share=campaign.warmup_share, warmup_jobs=campaign.warmup_jobs,
                            files=scheduler.files(options)))
    seen: dict[str, Run] = {}
    keys: set[str] = set()
    for run in runs:
        if run.id in seen or run.key in keys:
            other = seen.get(run.id, run)
            raise InputError(f"runs {other.key!r} and {run.key!r} are the same run (identical inputs and "
                             "effective options)", path=str(campaign.path))
        seen[run.id] = run
        keys.add(run.key)
    return runs


def file_identity(effective: dict[str, Any], files: dict[str, str]) -> dict[str, Any]:
    """Options naming a file (FILE#NAME) are identified by the file's content, not its path."""
    named = {}
    for key, value in files.items():
        path, _, name = value.rpartition("#")
        named[key] = f"sha256:{sha256_file(Path(path))}#{name}"
    return {**effective, **named}


def resolve_history(options: dict[str, Any], history_path: str | None, workload_path: str | None = None
                    ) -> dict[str, Any]:
    """Options with "@history" standing for the instance's history workload file, and "@workload"
    for the workload the run simulates (the oracle of a clairvoyant scheduler: runtime=exact)."""
    return {k: history_path if v == HISTORY else workload_path if v == WORKLOAD and workload_path else v
            for k, v in options.items()}


def history_notes(runs: list[Run]) -> list[str]:
    """What the conversion of each history file noted (one line per file with a note)."""
    notes = []
    for path in sorted({run.history_path for run in runs if run.history_path}):
        note = Path(f"{path}.note")
        if note.is_file():
            notes.append(f"history {Path(path).name}: {note.read_text().strip()}")
    return notes


def window_notes(campaign: Campaign, runs: list[Run]) -> list[str]:
    """The windows a windowed trace did not make, said (an empty window is skipped, and with
    `history = "completed-before"` so is one before which no job had completed: `windows = 2` made
    one run's window, unsaid)."""
    notes = []
    for spec in campaign.workloads:
        if spec.windows is None:
            continue
        made = sorted({run.window for run in runs if run.workload == spec.name and run.window is not None})
        asked = spec.windows if isinstance(spec.windows, int) else (made[-1] + 1 if made else 0)
        missing = [window for window in range(asked) if window not in made]
        if missing:
            why = "it holds no job" + (", or no job of the trace completed before it (its history would be empty)"
                                       if spec.history else "")
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            notes.append(f"workload {spec.name}: windows = {spec.windows} made {len(made)} window(s); skipped "
                         f"window(s) {shown}: {why}")
    return notes


def campaign_notes(campaign: Campaign) -> list[str]:
    """What a report must say about how the campaign's inputs were made (e.g. clairvoyant walltimes)."""
    notes = []
    for spec in campaign.workloads:
        if spec.convert.get("walltime_from") == "runtime":
            notes.append(f"workload {spec.name}: every walltime is the job's run time (a clairvoyant workload: "
                         "schedulers plan with the actual run times without reading them). Batsim reports these "
                         "jobs COMPLETED_WALLTIME_REACHED at their normal end; no metric changes.")
        if spec.convert.get("walltime_from") == "none":
            notes.append(f"workload {spec.name}: no walltimes (no job is killed, as in the Alea simulator); "
                         "schedulers plan with the requested times kept in the jobs' requested_time_s.")
    return notes


def describe(runs: list[Run]) -> str:
    lines = [f"{len(runs)} runs"]
    lines += [f"  {run.id}  {run.key}" for run in runs]
    return "\n".join(lines)


