"""`schedlab simulate`, `serve`, `record`, `metrics`, `schedulers` and `demo`: a run on the
embedded engine, Batsim's decision process, and what reads a run's results."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from schedlab import abilities
from schedlab.cli.common import (
    EXIT_FAILURE,
    add_scheduler_args,
    file_use,
    option_pairs,
    progress_bar,
    report_bug,
    say_stopped,
    scheduler_files,
    scheduler_use,
    warn,
)
from schedlab.errors import InputError


def _simulate_files(args: argparse.Namespace):
    """What `simulate` reads and writes (the rule of schedlab.paths.refuse_overwriting_inputs)."""
    from schedlab.paths import RUN_FILES, FileUse
    from schedlab.runs import INCOMPLETE_DIR

    use = FileUse().read("the workload (-w)", args.workload).read("the platform (-p)", args.platform)
    scheduler_files(use, args.scheduler, args.option)
    return use.write("--record", args.record).into("the results directory (-o)", args.out, RUN_FILES,
                                                   owned=(INCOMPLETE_DIR,))


def _platform_of(text: str, timing: str) -> tuple[Any, Path | None]:
    """-p: a platform file, a shipped platform's name, or a number of resources (as in the API and
    campaigns: a flat cluster of that size, ideal timing only: no network to time)."""
    from schedlab.model import Platform
    from schedlab.platform import load_platform
    from schedlab.platforms import resolve_platform

    if text.isdigit() and not Path(text).exists():
        if int(text) < 1:
            raise InputError(f"--platform {text}: a number of resources must be at least 1")
        if timing == "batsim":
            raise InputError(f"--platform {text}: --timing batsim times messages on a platform file's network; "
                             f"give one (`schedlab platform generate --hosts {text} -o P.xml`)")
        return Platform.homogeneous(int(text)), None
    path = resolve_platform(text)
    return load_platform(path), path


def _check_memory(args: argparse.Namespace) -> None:
    """A number of resources and a whole-file workload, estimated before they are built: refused when
    the run cannot fit in the memory this process may use, said when it takes more than a quarter."""
    from schedlab.memory import check_fits, estimate_run
    from schedlab.schedulers.base import bytes_per_resource
    from schedlab.schedulers.interface import Scheduler

    nb_resources = int(args.platform) if args.platform.isdigit() and not Path(args.platform).exists() else 0
    per_resource = bytes_per_resource(args.scheduler) if args.scheduler else Scheduler.bytes_per_resource
    what = f"--platform {args.platform}" if nb_resources else f"--workload {args.workload}"
    if nb_resources and not str(args.workload).endswith(".parquet"):
        what += f" with --workload {args.workload}"
    check_fits(estimate_run(nb_resources, per_resource, workload_file=args.workload),
               f"{what} ({args.scheduler or 'an external scheduler'})", refuse=InputError,
               say=None if args.quiet else lambda line: print(f"schedlab: note: {line}", file=sys.stderr))


def cmd_simulate(args: argparse.Namespace) -> int:
    from schedlab.metrics import format_table
    from schedlab.paths import check_output_file, new_directories, remove_if_empty
    from schedlab.runs import RunSpec, is_ours
    from schedlab.workload import load_workload, require_batsim_fields

    if re.match(r"^\w+=", args.out):
        raise InputError(f"--out {args.out!r} looks like a scheduler option: -o is --out (the results "
                         "directory); give scheduler options with -O/--option KEY=VALUE")
    if args.record and not args.external:
        raise InputError("--record needs --external (it records the messages exchanged with that process)")
    if args.external and args.scheduler:
        raise InputError("give either --scheduler or --external, not both")
    if not args.external and not args.scheduler:
        raise InputError("--scheduler NAME (or --external CMD) is required")
    options = option_pairs(args)
    if args.external and options:
        raise InputError("-O/--option configures our schedulers; pass options to the --external command itself")
    if args.allow_overlap:
        from schedlab.schedulers.base import scheduler_class, scheduler_option_types

        if args.external or "allow_overlap" not in scheduler_option_types(scheduler_class(args.scheduler)):
            raise InputError(f"--allow-overlap lets a scheduler train on a history= or model= that overlaps the "
                             f"workload; {(args.external and 'an external process') or repr(args.scheduler)} takes "
                             "no such option (diws does)")
        if "allow_overlap" in options:
            raise InputError("give --allow-overlap or -O allow_overlap=..., not both")
        options["allow_overlap"] = "true"
    _check_memory(args)
    platform, platform_path = _platform_of(args.platform, args.timing)
    if args.timing == "batsim":
        from schedlab.engine.batsim_network import message_routes

        assert platform_path is not None  # a number of resources was refused with --timing batsim
        message_routes(platform_path)  # refuses what it does not model, before any work
    if str(args.workload).endswith(".parquet"):  # a columnar workload: read as the run goes
        from schedlab.workload_columns import read_columns

        if args.external or args.timing != "ideal":
            raise InputError(f"{args.workload}: a columnar workload runs our schedulers on the embedded engine with "
                             "--timing ideal; give a Batsim JSON workload for --external or --timing batsim")
        workload: Any = read_columns(args.workload)
    else:
        workload = load_workload(args.workload)
        require_batsim_fields(workload)
    nb_jobs = getattr(workload, "nb_jobs", None) or len(workload.jobs)
    name = f"external: {args.external}" if args.external else args.scheduler
    spec = RunSpec(platform=platform, workload=workload, name=name, options=options, timing=args.timing,
                   out=args.out)
    if args.external:
        from schedlab.protocol.client import ExternalDecisionProcess

        def start(staging: Path | None) -> Any:
            """Started once the results directory exists: one that cannot start leaves an earlier
            run's files alone."""
            assert staging is not None  # simulate always writes a results directory
            return ExternalDecisionProcess(args.external, workload=workload, timeout_s=args.timeout,
                                          record_path=args.record, log_path=str(staging / "external.log"))

        spec.start_scheduler = start
    else:
        from schedlab.schedulers.base import create_scheduler

        spec.scheduler = create_scheduler(args.scheduler, options)
    spec.check()
    if args.external:
        ExternalDecisionProcess.check_command(args.external)
    if args.record:
        check_output_file(args.record)
    if not hasattr(workload, "nb_jobs"):  # a whole workload (a streamed one is not read ahead)
        from schedlab.workload import rounding_losses

        lost = rounding_losses(workload)
        if lost is not None:
            warn(f"{args.workload}: {lost}")
    if workload.nb_res != platform.nb_resources:  # said once the inputs are known good: a refusal is one line
        warn(f"{args.workload}: nb_res {workload.nb_res} differs from the platform's {platform.nb_resources} "
              "resources (the platform decides; Batsim only uses nb_res with --mmax-workload)")
    made = new_directories(args.out)
    try:  # a bad output path is said before a model is trained
        prepared = spec.prepare(checked=True)
    except BaseException:
        remove_if_empty(made)  # made by the check above: nothing of ours stays behind
        raise
    assert prepared.directory is not None  # -o is required
    scheduler, out = prepared.scheduler, prepared.directory.out
    bar, update = progress_bar(nb_jobs, not args.quiet, name)
    spec.run_info = spec.describe(scheduler, cli_options=options) | {
        "platform": {"path": str(platform_path or args.platform), "nb_resources": platform.nb_resources},
        "workload": {"path": str(args.workload), "nb_jobs": nb_jobs,
                     **({"generator": workload.extra["generator"]} if "generator" in workload.extra else {})}}
    try:
        result = prepared.execute(progress=update)
    finally:
        if bar is not None:
            bar.close()
    if result.replaced and not args.quiet:
        print(f"{out}: replaced {', '.join(result.replaced)} of an earlier run", file=sys.stderr)
    if not args.quiet:
        print(f"{name} on {platform.nb_resources} resources, {nb_jobs} jobs -> {result.written_to}")
        metrics = dict(result.summary["metrics"], scheduling_time_s=result.summary["timing"]["scheduling_time_s"])
        print(format_table(metrics))
    for line in _run_notes(result):
        print(f"schedlab: note: {line}", file=sys.stderr)
    kept = f" (partial results in {result.written_to}, marked incomplete"
    kept += f"; the earlier complete run in {out} is kept)" if result.written_to != out else ")"
    if isinstance(result.exception, KeyboardInterrupt):
        from schedlab.interrupts import exit_code, what_stopped

        say_stopped(f"schedlab: {what_stopped(result.exception)}{kept}")
        return exit_code(result.exception)
    if result.is_bug and result.exception is not None:
        return report_bug(result.exception, kept, culprit=None if is_ours(scheduler) else repr(args.scheduler))
    if result.error is not None:
        print(f"schedlab: error: {result.error}{kept}", file=sys.stderr)
        return EXIT_FAILURE
    return 0


def _run_notes(result: Any) -> list[str]:
    """What a finished run must not leave unsaid: jobs the scheduler rejected (how many, why), and
    what the scheduler itself says of the run (`Scheduler.run_notes`). None after a failure: its
    one line is what counts then."""
    from collections import Counter

    from schedlab.model import JobState

    if result.exception is not None:
        return []
    records = result.engine.records.values()
    reasons = Counter(r.metadata or "no reason given" for r in records if r.state is JobState.REJECTED)
    notes = []
    if reasons:
        told = "; ".join(f"{count} {reason}" for reason, count in reasons.most_common(3))
        notes.append(f"{sum(reasons.values())} of {len(records)} jobs were rejected by the scheduler ({told})")
    notes += abilities.run_notes(result.engine.scheduler)
    return notes


def _listening(what: str):
    return lambda endpoint: print(f"schedlab {what}: listening on {endpoint}", flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    from schedlab.paths import check_output_file
    from schedlab.protocol.server import serve
    from schedlab.schedulers.base import create_scheduler

    platform = None
    if args.platform:  # its message time sets how far ahead wake-ups are asked (schedulers.wakeups)
        import dataclasses

        from schedlab.engine.batsim_network import message_routes
        from schedlab.engine.batsim_timed import slowest_message_s

        if args.platform.isdigit() and not Path(args.platform).exists():
            raise InputError(f"--platform {args.platform}: give the platform file batsim runs, whose routes time "
                             "the messages (or leave --platform out)")
        platform, path = _platform_of(args.platform, "batsim")
        assert path is not None  # a file or a shipped platform's
        platform = dataclasses.replace(platform, message_time_s=slowest_message_s(message_routes(path)))
    scheduler = create_scheduler(args.scheduler, option_pairs(args))
    if args.record:
        check_output_file(args.record)
    serve(scheduler, args.socket, timeout_s=args.timeout, record_path=args.record, ready=_listening("serve"),
          platform=platform)
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    from schedlab.paths import check_output_file
    from schedlab.protocol.recorder import record

    check_output_file(args.output)
    count = record(args.listen, args.forward, args.output, timeout_s=args.timeout, ready=_listening("record"))
    print(f"{count} messages recorded -> {args.output}", file=sys.stderr)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from schedlab.metrics import compute_metrics, format_table, nb_resources_from_schedule_csv, read_jobs_csv

    path = Path(args.jobs_csv)
    nb_res = args.nb_resources
    if nb_res is None:
        sibling = path.with_name(path.name.replace("jobs.csv", "schedule.csv"))
        nb_res = nb_resources_from_schedule_csv(sibling) if sibling != path else None
    metrics = compute_metrics(read_jobs_csv(path), nb_res)
    print(json.dumps(metrics, indent=2) if args.json else format_table(metrics))
    return 0


def _first_sentence(doc: str | None) -> str:
    """The docstring's first sentence, whole (lines joined), for one-line listings."""
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    # a sentence ends at . ! ? followed by the end or a capital, never after "al." / "e.g." / "i.e."
    match = re.search(r"^(.+?(?<! al)(?<!e\.g)(?<!i\.e)[.!?])(?=$|\s+[A-Z])", paragraph)
    return match.group(1) if match else paragraph


def cmd_schedulers(args: argparse.Namespace) -> int:
    from schedlab.schedulers.base import all_schedulers, scheduler_option_specs
    from schedlab.schedulers.plugins import PROBLEMS
    from schedlab.schedulers.policies import POLICIES

    for name, cls in sorted(all_schedulers().items()):
        origin = "" if cls.__module__.startswith("schedlab.") else f"  [plugin: {cls.__module__}]"
        print(f"{name}{origin}\n    {_first_sentence(cls.__doc__)}")
        for spec in scheduler_option_specs(cls):
            default = "none" if spec.default in ("", None) else str(spec.default).lower() if isinstance(
                spec.default, bool) else spec.default
            print(f"      -O {spec.name + '=':<16} {spec.choices} (default: {default})")
            print(textwrap.fill(spec.help, width=100, initial_indent=" " * 12, subsequent_indent=" " * 12))
    print("\nqueue_order policies (smallest score first):")
    for name, policy in sorted(POLICIES.items()):
        print(f"    {name:<8} {_first_sentence(policy.doc)}")
    from schedlab.schedulers.fitted_policies import FUNCTIONS, WORKLOADS

    print("\nregression-obtained policies (Rosa, Carastan-Santos, Goldman), f(p~, q, r) with r the submit time:")
    for function, terms in FUNCTIONS.items():
        print(f"    {function}[:{'|'.join(WORKLOADS)}]  terms {', '.join(terms)}; the study's coefficients "
              f"(default {WORKLOADS[0]})")
    print("    FILE#NAME  a function fitted by `schedlab policy fit` (e.g. fitted.toml#qua)")
    for problem in PROBLEMS.values():
        warn(problem)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from schedlab.cli.experiments import refuse_other_results
    from schedlab.experiments.campaigns.demo import run_demo
    from schedlab.paths import check_output_dir

    # the demo's own directory (a demo with other sizes replaces its results), never a campaign's
    refuse_other_results(Path(args.out), "demo", identity="", remedy="the demo writes into a directory of its "
                         "own: give another -o")
    run_demo(check_output_dir(args.out), nb_jobs=args.jobs, nb_resources=args.resources, seed=args.seed,
             show_progress=not args.quiet)
    return 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("simulate", help="run a workload on the embedded engine",
                       description="Run a Batsim JSON workload on a platform (a SimGrid XML file or a shipped "
                                   "platform's name) with one of our schedulers, or with an external Batsim 4 "
                                   "decision process, on the embedded engine. Writes Batsim's jobs.csv and "
                                   "schedule.csv and our summary.json into --out, and prints the metrics.")
    p.add_argument("--platform", "-p", required=True, help="SimGrid platform XML, or a shipped platform's name")
    p.add_argument("--workload", "-w", required=True, help="Batsim JSON workload")
    add_scheduler_args(p, positional=False)
    p.add_argument("--external", metavar="CMD",
                   help="drive an external Batsim 4 decision process instead; {socket} in CMD becomes "
                        "its bind endpoint (tcp://127.0.0.1:PORT); its output goes to OUT/external.log")
    p.add_argument("--out", "-o", default="out",
                   help="results directory (default: out); a complete run replaces an earlier run's files there, "
                        "an incomplete one goes to OUT/incomplete/ beside an earlier complete run")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for each external reply (default 60)")
    p.add_argument("--record", help="with --external: write every message to this JSON-lines file")
    p.add_argument("--timing", choices=("ideal", "batsim"), default="ideal",
                   help="message timing: ideal (zero latency, the default) or batsim (Batsim 4.2.1's "
                        "latencies on this platform: jobs.csv as real batsim + `schedlab serve` writes it)")
    p.add_argument("--allow-overlap", action="store_true",
                   help="let -O history=FILE hold simulated jobs or jobs ending after the first simulated "
                        "submission (refused otherwise: training on them looks ahead); for an oracle arm")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bar and no metrics table (errors are still said)")
    p.set_defaults(func=cmd_simulate, files=_simulate_files)

    p = sub.add_parser("serve", help="be the decision process of a real batsim (ZeroMQ REP)")
    add_scheduler_args(p, positional=True)
    p.add_argument("--socket", default="tcp://127.0.0.1:28000",
                   help="endpoint to bind (default tcp://127.0.0.1:28000; tcp://*:PORT for all interfaces)")
    p.add_argument("--timeout", type=float, default=None,
                   help="give up when batsim sends nothing for this many seconds (default: wait forever)")
    p.add_argument("--record", help="write every message to this JSON-lines file")
    p.add_argument("--platform", metavar="FILE",
                   help="the platform file batsim runs (-p), or a shipped platform's name: its message times "
                        "set how far ahead wake-ups are asked (default: bounded from the gaps between requests and "
                        "replies); only its compute host names are checked against batsim's")
    p.set_defaults(func=cmd_serve, files=lambda args: scheduler_use(args).read("--platform", args.platform)
                   .write("--record", args.record))

    p = sub.add_parser("record", help="relay Batsim <-> a decision process, writing every message")
    p.add_argument("--listen", required=True, help="endpoint batsim connects to (bound here), e.g. tcp://127.0.0.1:28000")
    p.add_argument("--forward", required=True, help="endpoint the decision process binds, e.g. tcp://127.0.0.1:28001")
    p.add_argument("--output", "-o", required=True, help="JSON-lines file to write, one message per line")
    p.add_argument("--timeout", type=float, default=None, help="give up after this many silent seconds")
    p.set_defaults(func=cmd_record, files=lambda args: file_use().write("--output", args.output))

    p = sub.add_parser("metrics", help="metrics of a jobs.csv (ours or Batsim's)")
    p.add_argument("jobs_csv", help="a jobs.csv written by schedlab or real Batsim (`OUT_jobs.csv`)")
    p.add_argument("--nb-resources", type=int, help="platform size (default: from the sibling schedule.csv)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON instead of a table")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("schedulers", help="list schedulers, their options and queue policies")
    p.set_defaults(func=cmd_schedulers)

    p = sub.add_parser("demo", help="generate a workload and compare fcfs, easy, easy-sjbf")
    p.add_argument("--out", "-o", default="out/demo", help="results directory (default out/demo)")
    p.add_argument("--jobs", type=int, default=2000, help="jobs in the generated workload")
    p.add_argument("--resources", type=int, default=256, help="resources of the platform and the workload")
    p.add_argument("--seed", type=int, default=1, help="seed of the generated workload")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_demo)
