"""`schedlab experiment plan|run|check` and `schedlab report`: campaigns from TOML files."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from schedlab.cli.common import EXIT_FAILURE, say_stopped
from schedlab.errors import InputError
from schedlab.paths import atomic_write, check_output_dir, check_output_file, remove_if_empty

#: What `experiment check` compares, per run: the deterministic part of summary.json.
CHECKED_FIELDS = ("complete", "metrics")
#: The files a campaign or study writes at the top of its results directory, and the folders whose
#: content it replaces (runs, inputs it makes)
CAMPAIGN_FILES = ("results.parquet", "made-by.json", "compare.json", "notes.json", "claims.json", "predictions.json",
                  "results.csv", "versions.json")
RESULTS_DIRS = ("runs", "workloads", "platforms", "scores", "inputs")


def results_files() -> tuple[str, ...]:
    """The files a campaign or study writes at the top of its results directory."""
    from schedlab.experiments.campaigns.kinds import study_outputs

    return (*CAMPAIGN_FILES, *study_outputs())


def campaign_use(campaign_path: str | Path, out: str | Path | None, campaign=None):
    """What `experiment run|check` reads (the campaign file, and when loaded every file it names)
    and writes (its results directory)."""
    from schedlab.paths import FileUse, files_in_option

    use = FileUse().read("the campaign file", campaign_path)
    if campaign is not None:
        for spec in campaign.workloads:
            if isinstance(spec.source, str):
                use.read(f"workload {spec.name!r}", spec.source)
        for spec in campaign.platforms:
            use.read(f"platform {spec.name!r}", spec.file)
        for spec in campaign.schedulers:
            if ":" in spec.name:
                use.read(f"scheduler {spec.label!r}", spec.name.rpartition(":")[0])
            for options in spec.combinations():
                for key, value in {**options, **spec.files(options)}.items():  # FILE#NAME made absolute
                    use.read(f"scheduler {spec.label!r} option {key}", *files_in_option(value))
    return use.into("the results directory (-o)", out, results_files(), owned=RESULTS_DIRS)


def _load_campaign(args: argparse.Namespace):
    """The campaign file, or its small variant with --small."""
    from schedlab.experiments.campaigns.campaign import load_campaign, small_variant

    # runs on a Dask cluster are made elsewhere: this machine's memory does not bound them
    campaign = load_campaign(args.campaign, runs_here=getattr(args, "dask", None) in (None, "local"))
    return campaign if getattr(args, "small", None) is None else small_variant(campaign, args.small)


def _campaign_and_runs(args: argparse.Namespace, campaign=None):
    from schedlab.experiments.campaigns.plan import expand

    campaign = campaign or _load_campaign(args)
    out, _ = _results_dir(args, campaign.name, campaign_use(args.campaign, _out_of(args, campaign.name), campaign))
    return campaign, expand(campaign, out), out


def _out_of(args: argparse.Namespace, name: str) -> Path:
    """-o, else out/NAME (a study file's name checked here: a campaign's is checked where it is read)."""
    from schedlab.experiments.campaigns.tomlfile import name_problem

    if args.output:
        return Path(args.output)
    problem = name_problem(name)
    if problem is not None:
        raise InputError(problem, path=args.campaign, field="name")
    return Path("out") / name


def _results_dir(args: argparse.Namespace, name: str, use, identity: str | None = None,
                 campaign=None) -> tuple[Path, list[Path]]:
    """The results directory, checked before anything is written: no input written over, writable,
    and (with `identity`) not holding another campaign's or study's results unless --replace.
    Returns it (made) and the directories making it created (removed again on a failure)."""
    from schedlab.paths import new_directories, refuse_overwriting_inputs

    out = _out_of(args, name)
    refuse_overwriting_inputs(use)
    if identity is not None and not getattr(args, "replace", False):
        if campaign is None:
            refuse_other_results(out, name, identity)
        else:
            refuse_dropping_runs(out, campaign, identity)
    made = new_directories(out)
    return check_output_dir(out), made


def identity_of(spec: Any, base: Path) -> str:
    """What identifies a campaign (its parsed content) or a study (its dict), paths taken relative to
    its file's folder `base` (a moved project is the same campaign): recorded in made-by.json,
    compared before results are replaced."""
    import os
    from dataclasses import asdict, is_dataclass

    from schedlab.paths import canonical_hash

    if is_dataclass(spec) and not isinstance(spec, type):
        content = asdict(spec)
        content.pop("path", None)
        for scheduler in content.get("schedulers", ()):
            scheduler.pop("base", None)
    else:
        content = dict(spec)
    text = json.dumps(content, default=str, sort_keys=True).replace(json.dumps(str(base.resolve()) + os.sep)[1:-1], "")
    return canonical_hash(json.loads(text))


def _last_identity(out: Path) -> tuple[dict[str, Any] | None, bool]:
    """made-by.json's last invocation that recorded an identity, and whether any did."""
    try:
        invocations = json.loads((out / "made-by.json").read_text(encoding="utf-8")).get("invocations", [])
    except (OSError, ValueError, AttributeError):
        invocations = []
    known = [entry for entry in invocations if isinstance(entry, dict) and entry.get("identity")]
    return (known[-1] if known else None), bool(known)


def refuse_dropping_runs(out: Path, campaign, identity: str) -> None:
    """Exit 2 when results.parquet in `out` holds runs this campaign would drop from it (another
    campaign, or this one with runs taken out). The same content (made-by.json's identity) is
    checked at once; otherwise the plan is made aside and its run ids compared (a campaign grown by
    a seed or a scheduler, or moved with its files, keeps every earlier run: allowed)."""
    import tempfile

    from schedlab.experiments.campaigns.plan import expand

    if not (out / "results.parquet").is_file():
        return
    last, _ = _last_identity(out)
    if last is not None and last["identity"] == identity:
        return
    earlier = _result_column(out, "run_id")
    with tempfile.TemporaryDirectory(prefix="schedlab-plan-") as scratch:
        planned = {run.id for run in expand(campaign, Path(scratch))}
    dropped = earlier - planned
    if dropped:
        made = f" (made by {last.get('campaign', '?')} on {last.get('date', '?')})" if last else ""
        names = ", ".join(sorted(_result_column(out, "campaign"))) or "?"
        raise InputError(f"holds {len(dropped)} run(s) of campaign {names}{made} that campaign {campaign.name!r} "
                         "would drop from results.parquet; --replace replaces them (finished runs with the same "
                         "content are reused), or give another -o", path=str(out))


def refuse_other_results(out: Path, name: str, identity: str, remedy: str = "--replace replaces them (finished "
                         "runs with the same content are reused), or give another -o") -> None:
    """Exit 2 when `out` holds the results of another campaign or study (made-by.json's identity
    differs; for directories made before identities were recorded, another campaign name)."""
    from schedlab.experiments.campaigns.kinds import finished_markers

    if not any((out / marker).is_file() for marker in ("results.parquet", *finished_markers())):
        return
    last, _ = _last_identity(out)
    if last is not None:
        if last["identity"] == identity:
            return
        earlier = f"made by {last.get('campaign', '?')} on {last.get('date', '?')}, a different content"
    else:
        names = _result_column(out, "campaign") if (out / "results.parquet").is_file() else set()
        if names <= {name}:
            return
        earlier = f"campaign {', '.join(sorted(names)) or 'unknown'}"
    raise InputError(f"holds the results of another campaign or study ({earlier}); {remedy}", path=str(out))


def _result_column(out: Path, column: str) -> set[str]:
    """The values of a column of results.parquet ({"?"}: not ours, or unreadable)."""
    try:
        import pyarrow.parquet as pq

        return {str(v) for v in pq.read_table(out / "results.parquet", columns=[column]).column(0).to_pylist()}
    except Exception:  # not ours, or unreadable: nothing to compare with
        return {"?"}


def cmd_plan(args: argparse.Namespace) -> int:
    from schedlab.experiments.campaigns.kinds import kind_named
    from schedlab.experiments.campaigns.plan import describe
    from schedlab.experiments.campaigns.tomlfile import file_kind

    study = kind_named(file_kind(args.campaign))
    if study is not None:
        for line in study.describe(study.load(args.campaign), args.campaign):
            print(line)
        return 0
    import tempfile

    from schedlab.experiments.campaigns.campaign import load_campaign
    from schedlab.experiments.campaigns.plan import expand, history_notes, window_notes

    campaign = load_campaign(args.campaign)
    out = Path(args.output or Path("out") / campaign.name)
    with tempfile.TemporaryDirectory(prefix="schedlab-plan-") as scratch:  # plan only prints: inputs made aside
        runs = expand(campaign, Path(scratch))
        print(f"campaign {campaign.name!r} ({args.campaign}), inputs in {out} when run")
        for note in window_notes(campaign, runs) + history_notes(runs):
            print(f"note: {note}")
        print(describe(runs))
    return 0


def _say(args: argparse.Namespace):
    """print, flushed (a log shows each line as it comes), unless --quiet."""
    return (lambda line: None) if getattr(args, "quiet", False) else (lambda line: print(line, flush=True))


def _run(args: argparse.Namespace, campaign, runs, out: Path, connection=None) -> list[dict[str, Any]]:
    from schedlab.experiments.campaigns.runner import run_campaign

    bar = None
    if sys.stderr.isatty() and not args.quiet:  # a bar with ETA on a terminal; logs get the final line only
        from tqdm import tqdm

        bar = tqdm(total=len(runs), unit="run", desc=f"campaign {campaign.name}", file=sys.stderr, smoothing=0.1)

    def progress(done: int, total: int, failed: int) -> None:
        if bar is not None:
            if failed:
                bar.set_postfix(failed=failed, refresh=False)
            bar.update(done - bar.n)

    try:
        from schedlab.experiments.campaigns.campaign import run_memory_bytes

        return run_campaign(runs, out, workers=args.workers, dask=args.dask, progress=progress, connection=connection,
                            say=None if args.quiet else lambda line: print(line, file=sys.stderr),
                            run_bytes=run_memory_bytes(campaign))
    finally:
        if bar is not None:
            bar.close()


def _workers_that_fit(args: argparse.Namespace, campaign) -> None:
    """--dask local's workers: no more than this machine's memory holds of the campaign's largest
    run, said in one line (the pool is sized where the runs to do are known: runner.run_campaign)."""
    if args.dask != "local" or args.workers <= 1:
        return
    from schedlab.experiments.campaigns.campaign import run_memory_bytes
    from schedlab.memory import workers_that_fit

    nb_fit, why = workers_that_fit(run_memory_bytes(campaign))
    if args.workers > nb_fit:
        if not args.quiet:
            print(f"note: --workers {args.workers}: {why}, so {nb_fit} workers", file=sys.stderr)
        args.workers = nb_fit


def _check_workers(args: argparse.Namespace) -> None:
    if getattr(args, "workers", 1) < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")


def _study_use(args: argparse.Namespace, study: dict[str, Any]):
    use = campaign_use(args.campaign, _out_of(args, study["name"]))
    for key in ("source", "trace", "workload", "history"):
        if isinstance(study.get(key), str):
            use.read(f"the study's {key}", study[key])
    return use


def _run_study(args: argparse.Namespace, kind) -> int:
    """A study file (`kind = "..."`: campaigns/kinds.py): its results, no runs of a campaign."""
    study = kind.load(args.campaign)
    identity = identity_of(study, Path(args.campaign).parent)
    out, _ = _results_dir(args, study["name"], _study_use(args, study), identity)
    record_made_by(out, args, identity)
    units = kind.progress_units(study)
    bar = None
    if sys.stderr.isatty() and not args.quiet and units is not None:
        from tqdm import tqdm

        bar = tqdm(total=units[0], unit=units[1], desc=f"{kind.label} {study['name']}", file=sys.stderr)
    try:
        said = kind.run(study, out, workers=args.workers, say=_say(args), unit_done=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    _say(args)(said)
    return 0


def _small_needs_a_campaign(args: argparse.Namespace) -> str | None:
    """The file's kind; `--small` on a factory or study file is refused (one line)."""
    from schedlab.experiments.campaigns.campaign import file_kind

    kind = file_kind(args.campaign)
    if args.small is not None and kind is not None:
        raise InputError(f"--small shrinks a campaign's workloads; this is a {kind} file (its small version is "
                         "a file of its own)", path=args.campaign)
    return kind


def cmd_run(args: argparse.Namespace) -> int:
    _check_workers(args)  # every flag before anything is written
    from schedlab.experiments.campaigns.kinds import kind_named

    study = kind_named(_small_needs_a_campaign(args))
    if study is not None:
        return _run_study(args, study)
    from schedlab.experiments.campaigns.plan import campaign_notes, expand, history_notes, window_notes
    from schedlab.experiments.campaigns.runner import CampaignInterrupted, check_run_inputs

    campaign = _load_campaign(args)
    _workers_that_fit(args, campaign)
    identity = identity_of(campaign, Path(args.campaign).parent)
    out, made = _results_dir(args, campaign.name, campaign_use(args.campaign, _out_of(args, campaign.name), campaign),
                             identity, campaign)
    connection = None
    try:
        if args.dask:  # reached before anything is written: an unreachable scheduler leaves nothing behind
            from schedlab.experiments.campaigns.cluster import dask_client

            connection = dask_client(args.dask, args.workers)
        runs = expand(campaign, out, workers=args.workers)  # generated workloads made in parallel too
        check_run_inputs(runs)  # files options name (an oracle, a model) against each workload, as simulate does
    except BaseException:
        _close(connection)
        if made:  # made for this run and holding only the inputs it made: nothing of ours stays behind
            shutil.rmtree(out, ignore_errors=True)
            remove_if_empty(made)
        raise
    try:
        record_made_by(out, args, identity)
        skipped = window_notes(campaign, runs)
        for note in [] if args.quiet else skipped:
            print(f"note: {note}", file=sys.stderr)
        notes = [] if args.quiet else history_notes(runs)
        for note in notes[:3]:
            print(f"note: {note}", file=sys.stderr)
        if len(notes) > 3:
            print(f"note: ... and {len(notes) - 3} more histories like it (`experiment plan` lists them)",
                  file=sys.stderr)
        if campaign.compare is not None:  # what the report compares, and with which published figures
            with atomic_write(out / "compare.json") as handle:
                handle.write(json.dumps(campaign.compare, indent=1, sort_keys=True) + "\n")
        input_notes = campaign_notes(campaign) + skipped
        if input_notes:  # what the report must say about the inputs
            with atomic_write(out / "notes.json") as handle:
                handle.write(json.dumps(input_notes, indent=1) + "\n")
        if campaign.claims:  # the paper's findings the report checks
            with atomic_write(out / "claims.json") as handle:
                handle.write(json.dumps(list(campaign.claims), indent=1, sort_keys=True) + "\n")
        if campaign.predictions is not None:  # ML metrics against the schedule gain
            with atomic_write(out / "predictions.json") as handle:
                handle.write(json.dumps(campaign.predictions, indent=1, sort_keys=True) + "\n")
        rows = _run(args, campaign, runs, out, connection)
    except CampaignInterrupted as stopped:
        from schedlab.interrupts import exit_code, what_stopped

        say_stopped(f"schedlab: {what_stopped(stopped.stop)}: {stopped.finished} of {stopped.total} runs finished, "
                    f"their rows in {out / 'results.parquet'}; the same command resumes")
        return exit_code(stopped.stop)
    finally:
        _close(connection)
    failed = [r for r in rows if not r["complete"]]
    _say(args)(f"campaign {campaign.name!r}: {len(rows) - len(failed)} of {len(rows)} runs complete -> "
               f"{out / 'results.parquet'}")
    if failed:
        print(f"schedlab: error: {len(failed)} run(s) failed (first: {failed[0]['run_id']}: {failed[0]['error']})",
              file=sys.stderr)
        return EXIT_FAILURE
    return 0


def _close(connection) -> None:
    for closer in (connection or (None, []))[1]:
        closer()


def expected_entries(runs, out: Path) -> dict[str, Any]:
    entries = {}
    for run in runs:
        summary = json.loads((out / "runs" / run.id / "summary.json").read_text())
        entries[run.key] = {name: summary.get(name) for name in CHECKED_FIELDS}
    return entries


def _expected_path(args: argparse.Namespace) -> Path:
    stem = Path(args.campaign).stem + ("-small" if args.small is not None else "")
    return Path(args.expected or Path(args.campaign).parent / "expected" / f"{stem}.json")


def cmd_check(args: argparse.Namespace) -> int:
    """Every run is made afresh (a results directory of earlier runs would only be read back)."""
    import tempfile

    _check_workers(args)
    expected_path = _expected_path(args)
    if not args.update and not expected_path.is_file():
        raise InputError("no expected results (run with --update to record them)", path=str(expected_path))
    _small_needs_a_campaign(args)
    campaign = _load_campaign(args)  # a bad file or --small is said before any folder is made
    _workers_that_fit(args, campaign)
    if args.update:
        check_output_file(expected_path)  # its folder made now, not found missing after the runs
    if args.output and (Path(args.output) / "runs").exists():
        raise InputError("already holds runs: check needs an empty directory (or none: a temporary one)",
                         path=args.output)
    with tempfile.TemporaryDirectory(prefix="schedlab-check-") as scratch:
        args.output = args.output or scratch
        campaign, runs, out = _campaign_and_runs(args, campaign)
        _run(args, campaign, runs, out)
        return _compare(args, campaign, runs, out, expected_path)


def _compare(args: argparse.Namespace, campaign, runs, out: Path, expected_path: Path) -> int:
    got = expected_entries(runs, out)
    if args.update:
        with atomic_write(expected_path) as handle:
            handle.write(json.dumps({"campaign": campaign.name, "fields": list(CHECKED_FIELDS), "runs": got},
                                    indent=1, sort_keys=True) + "\n")
        _say(args)(f"{len(got)} runs recorded -> {expected_path}")
        return 0
    expected = json.loads(expected_path.read_text())["runs"]
    problems = [f"missing run: {key}" for key in expected if key not in got]
    problems += [f"unexpected run: {key}" for key in got if key not in expected]
    for key in sorted(set(got) & set(expected)):
        for field in CHECKED_FIELDS:
            mine, theirs = got[key].get(field), expected[key].get(field)
            if mine != theirs:
                if isinstance(mine, dict) and isinstance(theirs, dict):
                    diffs = [f"{k}: {theirs.get(k)!r} -> {mine.get(k)!r}" for k in sorted(set(mine) | set(theirs))
                             if mine.get(k) != theirs.get(k)]
                    problems.append(f"{key}: {field}: " + "; ".join(diffs))
                else:
                    problems.append(f"{key}: {field}: {theirs!r} -> {mine!r}")
    if problems:
        for problem in problems[:20]:
            print(f"  {problem}", file=sys.stderr)
        print(f"schedlab: error: {len(problems)} difference(s) from {expected_path} (a change that moves a figure "
              "updates it with --update and says why in CHANGELOG.md)", file=sys.stderr)
        return EXIT_FAILURE
    _say(args)(f"campaign {campaign.name!r}: {len(got)} runs equal {expected_path}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from schedlab.experiments.campaigns.report import check_gantt_run, make_report

    results = Path(args.results) / "results.parquet"
    from schedlab.experiments.campaigns.kinds import finished_markers

    if not results.is_file() and not any((Path(args.results) / name).is_file() for name in finished_markers()):
        raise InputError("no results.parquet here (run `schedlab experiment run` first)", path=args.results)
    if args.gantt:
        check_gantt_run(Path(args.results), args.gantt)
    out = check_output_dir(args.output)
    if args.results_file:
        check_output_file(args.results_file)
    paths = make_report(Path(args.results), out, gantt_run=args.gantt)
    print(f"report -> {paths['markdown']}, {paths['html']} ({len(paths['plots'])} plots)")
    if args.results_file:
        command = ["report", args.results, "-o", args.output, *(["--gantt", args.gantt] if args.gantt else []),
                   "--results-file", args.results_file]
        write_results_file(Path(args.results_file), Path(paths["markdown"]), command)
        print(f"results -> {args.results_file}")
    return 0


def record_made_by(out: Path, args: argparse.Namespace, identity: str | None = None) -> None:
    """DIR/made-by.json: each `experiment run` into DIR (command, campaign file, commit, version,
    date), oldest first: a resumed campaign keeps the runs an earlier invocation made, and says so
    (read by `report --results-file` and `reproductions`)."""
    import time

    from schedlab import __version__
    from schedlab.experiments.papers.reproductions import source_commit

    command = ["experiment", "run", args.campaign, "-o", str(out), "--workers", str(getattr(args, "workers", 1)),
               *(["--dask", args.dask] if getattr(args, "dask", None) else []),
               *(["--small", str(args.small)] if getattr(args, "small", None) is not None else [])]
    made = {"command": command, "campaign": str(args.campaign), "commit": source_commit(), "version": __version__,
            "date": time.strftime("%Y-%m-%d"), **({"identity": identity} if identity else {})}
    path = out / "made-by.json"
    earlier = json.loads(path.read_text()).get("invocations", []) if path.is_file() else []
    if earlier and earlier[-1].get("identity") not in (None, identity):
        earlier = []  # --replace: the results are another campaign's now, and so is their history
    with atomic_write(path) as handle:
        handle.write(json.dumps({"invocations": [*earlier, made]}, indent=1) + "\n")


def write_results_file(path: Path, markdown: Path, command: list[str]) -> None:
    """A study's table of record (RESULTS.md): the report's Markdown headed by what made it (the
    run's and the report's commands, the code's commits, dirty or not, the version), so no figure in
    it is typed by hand."""
    import shlex
    import time

    from schedlab import __version__
    from schedlab.experiments.papers.reproductions import made_by_text, source_commit

    header = (f"<!-- written by `schedlab report --results-file`: regenerate it, do not edit it -->\n"
              f"Results made by {made_by_text(Path(command[1]))}; report made by `schedlab {shlex.join(command)}` "
              f"on {time.strftime('%Y-%m-%d')}, schedlab {__version__}, commit {source_commit()}. Plots and the "
              "runs' files are in the results directory named there.\n\n")
    # plots stay in the report directory: name them instead of linking where they are not
    text = re.sub(r"!\[([^]]*)\]\(([^)]+)\)", r"(plot: \1, `\2` in the report directory)",
                  markdown.read_text(encoding="utf-8"))
    with atomic_write(path) as handle:
        handle.write(header + text)


def cmd_reproductions(args: argparse.Namespace) -> int:
    from schedlab.experiments.papers.reproductions import write_reproductions

    dirs = [Path(d) for d in args.results]
    check_output_file(args.output)
    # every directory read and every cause measured before the file is touched
    count = write_reproductions(dirs, Path(args.output), one_commit=args.one_commit,
                                not_attempted=Path(args.not_attempted) if args.not_attempted else None)
    print(f"reproductions: {count} rows of {len(dirs)} studies -> {args.output}")
    return 0


def cmd_evidence(args: argparse.Namespace) -> int:
    from schedlab.experiments.papers.reproductions import versions_text, write_evidence

    out = Path(args.output)
    versions = write_evidence(Path(args.results), out)
    print(f"evidence of {args.results} -> {out} ({versions_text(versions)})")
    return 0


def _results_read(directories: list[str]):
    """The files of results directories that `report` and `reproductions` read: the top files a
    campaign or study writes and everything in its folders."""
    from schedlab.paths import FileUse

    use = FileUse()
    for directory in directories:
        root = Path(directory)
        use.read(f"the results in {directory}", *(root / name for name in results_files()))
        for folder in RESULTS_DIRS:
            if (root / folder).is_dir():
                use.read(f"the results in {directory}", *(p for p in (root / folder).rglob("*") if p.is_file()))
    return use


def _evidence_use(args: argparse.Namespace):
    from schedlab.experiments.papers.evidence import evidence_files

    return _results_read([args.results]).into("the evidence directory (-o)", args.output, evidence_files())


def _report_use(args: argparse.Namespace):
    from schedlab.experiments.campaigns.report import REPORT_FILES

    return _results_read([args.results]).into("the report directory (-o)", args.output, REPORT_FILES).write(
        "--results-file", args.results_file)


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("experiment", help="campaigns: grids of workloads x platforms x schedulers x options x seeds")
    esub = p.add_subparsers(dest="experiment_command", required=True)
    for name, func, text in (("plan", cmd_plan, "print the runs a campaign file expands to"),
                             ("run", cmd_run, "run a campaign (resumable: finished runs are skipped)"),
                             ("check", cmd_check, "re-run a campaign and compare with its expected results")):
        g = esub.add_parser(name, help=text)
        g.add_argument("campaign", help="campaign file (TOML)")
        g.add_argument("--output", "-o", help="results directory (default: out/CAMPAIGN_NAME)")
        if name != "plan":
            g.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                           help="parallel runs: a process pool of this size, 1 = in this process "
                                "(default: the number of CPUs)")
            g.add_argument("--dask", metavar="TARGET",
                           help="run on Dask: local (a LocalCluster of --workers processes), slurm or pbs "
                                "(dask-jobqueue, from the dask configuration), or a scheduler address")
            g.add_argument("--quiet", "-q", action="store_true",
                           help="no progress bar, notes or summary line (errors are still said)")
            g.add_argument("--small", type=int, metavar="N",
                           help="the campaign's small variant (what CI recomputes): each trace's first window "
                                "cut to its first N jobs, generated workloads of N jobs, the first 3 seeds; "
                                "campaign NAME-small")
        if name == "check":
            g.add_argument("--expected", help="expected results (default: expected/STEM.json beside the campaign file, "
                                                 "STEM-small.json with --small)")
            g.add_argument("--update", action="store_true", help="record the results as the expected ones")
        if name == "run":
            g.add_argument("--replace", action="store_true",
                           help="replace the results of another campaign or study in --output (refused "
                                "otherwise); finished runs with the same content are reused")
        g.set_defaults(func=func, files=lambda args: campaign_use(args.campaign, args.output).write(
            "--expected", _expected_path(args) if getattr(args, "update", False) else None))
    p = sub.add_parser("report", help="Markdown + HTML report with plots of a campaign's results")
    p.add_argument("results", help="a campaign's results directory (holding results.parquet)")
    p.add_argument("--output", "-o", required=True, help="report directory to write (report.md, report.html, PNGs)")
    p.add_argument("--gantt", metavar="RUN_ID", help="run to draw as a Gantt chart (default: the first)")
    p.add_argument("--results-file", metavar="FILE",
                   help="also write the Markdown to FILE (a study's RESULTS.md) headed by the command, commit "
                        "and version that made it")
    p.set_defaults(func=cmd_report, files=_report_use)
    p = sub.add_parser("reproductions", help="the table of record: every published row of the studies' results "
                                             "directories, ours beside it, with the cause of each difference")
    p.add_argument("results", nargs="+", help="results directories (or their evidence: `schedlab evidence`) of "
                                             "campaigns with [compare] or [[claims]], factories and studies")
    p.add_argument("--output", "-o", required=True, help="Markdown file (docs/reproductions.md)")
    p.add_argument("--one-commit", action="store_true",
                   help="fail unless every study was made by one commit of the code (scripts/reproduce.sh all)")
    p.add_argument("--not-attempted", metavar="FILE",
                   help="published claims not reproduced, and why ([[claims]] study, claim, why: "
                        "experiments/not-attempted.toml): listed under their studies")
    p.set_defaults(func=cmd_reproductions, files=lambda args: _results_read(args.results).read(
        "--not-attempted", *([args.not_attempted] if args.not_attempted else [])).write("--output", args.output))
    p = sub.add_parser("evidence", help="a results directory's small files, to commit beside its study "
                                        "(experiments/STUDY/evidence/NAME): what `reproductions` measures causes on")
    p.add_argument("results", help="a results directory (a campaign's, a factory's or a study's)")
    p.add_argument("--output", "-o", required=True, help="the evidence directory (replaced as a whole)")
    p.set_defaults(func=cmd_evidence, files=_evidence_use)
