"""The `schedlab` command. Errors are one line on stderr and a conventional exit code: 2 bad input or
options (checked before long work), 1 a simulation/protocol failure (partial outputs kept), 3 an
internal error (a bug: traceback written to a log file), 130 interrupted (partial outputs kept)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedlab.errors import InputError, SchedlabError, SchedulerFailure

EXIT_FAILURE, EXIT_INPUT, EXIT_BUG, EXIT_INTERRUPTED = 1, 2, 3, 130


def progress_bar(total: int, enabled: bool, desc: str) -> tuple[Any, Any]:
    """A tqdm bar on stderr (only on a terminal) and a throttled callback for the engine."""
    if not enabled or total < 2000 or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="job", desc=desc, file=sys.stderr, leave=False, mininterval=0.5)
    state = {"last": 0}

    def update(nb_finished: int) -> None:
        if nb_finished - state["last"] >= 500 or nb_finished == total:
            bar.update(nb_finished - state["last"])
            state["last"] = nb_finished

    return bar, update


def _warn(message: str) -> None:
    print(f"schedlab: warning: {message}", file=sys.stderr)


def _report_bug(exc: BaseException, context: str = "", message: str | None = None, *,
                culprit: str | None = None, named: bool = False) -> int:
    """An unexpected exception is a bug: one line here, the whole traceback in a log file. With
    `culprit` (a user's scheduler raised, not schedlab) it is said as that scheduler's failure, exit 1
    (`named`: the message already names the scheduler)."""
    import tempfile
    import time
    import traceback

    log = Path(tempfile.gettempdir()) / f"schedlab-crash-{time.strftime('%Y%m%d-%H%M%S')}-{id(exc):x}.log"
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    try:
        log.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
        pointer = f"; traceback in {log}"
    except OSError:
        pointer = ""
    what = message or f"{type(exc).__name__}: {exc}{where}"
    if culprit is not None:
        told = what if named else f"scheduler {culprit} raised {what}"
        print(f"schedlab: error: {told}{context}{pointer}", file=sys.stderr)
        return EXIT_FAILURE
    print(f"schedlab: internal error (a bug, please report it): {what}{context}{pointer}", file=sys.stderr)
    return EXIT_BUG


def _option_pairs(args: argparse.Namespace) -> dict[str, str]:
    from schedlab.schedulers.base import parse_options

    return parse_options(args.option or [])


def _simulate_files(args: argparse.Namespace):
    """What `simulate` reads and writes (the rule of schedlab.paths.refuse_overwriting_inputs)."""
    from schedlab.paths import RUN_FILES, FileUse
    from schedlab.run import INCOMPLETE_DIR

    use = FileUse().read("the workload (-w)", args.workload).read("the platform (-p)", args.platform)
    scheduler_files(use, args.scheduler, args.option)
    return use.write("--record", args.record).into("the results directory (-o)", args.out, RUN_FILES,
                                                   owned=(INCOMPLETE_DIR,))


def _file_use():
    from schedlab.paths import FileUse

    return FileUse()


def _scheduler_use(args: argparse.Namespace):
    use = _file_use()
    scheduler_files(use, args.scheduler, args.option)
    return use


def scheduler_files(use: Any, scheduler: str | None, option_pairs: Sequence[str] | None) -> None:
    """The files a scheduler spec (FILE.py:CLASS) and its options (history=, model=, oracle=,
    queue_order=FILE#NAME, predictor=model:PATH; a model's card) name, as inputs of `use`."""
    from schedlab.paths import files_in_option
    from schedlab.schedulers.base import parse_options

    if scheduler and ":" in scheduler:
        use.read("the scheduler's file", scheduler.rpartition(":")[0])
    for key, value in parse_options(option_pairs or []).items():
        use.read(f"-O {key}", *files_in_option(value))


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


def cmd_simulate(args: argparse.Namespace) -> int:
    from schedlab.engine import Engine
    from schedlab.metrics import format_table
    from schedlab.paths import check_output_file, new_directories, remove_if_empty
    from schedlab.run import RunDirectory, simulate
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
    options = _option_pairs(args)
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
    platform, platform_path = _platform_of(args.platform, args.timing)
    if args.timing == "batsim":
        from schedlab.batsim_network import message_routes

        message_routes(platform_path)  # refuses what it does not model, before any work
    workload = load_workload(args.workload)
    require_batsim_fields(workload)
    if not args.external:
        from schedlab.schedulers.base import create_scheduler, option_named, raised_by

        scheduler: Any = create_scheduler(args.scheduler, options)
        try:
            with raised_by(type(scheduler), args.scheduler, "check_inputs", bad_options=False):
                scheduler.check_inputs(workload)
        except InputError as exc:
            raise option_named(exc, options) from None
    Engine.check_workload(workload)
    if args.external:
        from schedlab.protocol.client import ExternalDecisionProcess

        ExternalDecisionProcess.check_command(args.external)
    if args.record:
        check_output_file(args.record)
    if workload.nb_res != platform.nb_resources:  # said once the inputs are known good: a refusal is one line
        _warn(f"{args.workload}: nb_res {workload.nb_res} differs from the platform's {platform.nb_resources} "
              "resources (the platform decides; Batsim only uses nb_res with --mmax-workload)")
    made = new_directories(args.out)
    directory = RunDirectory(args.out)  # a bad output path is said before a model is trained
    out = directory.out
    try:
        if not args.external:
            try:  # loads or trains what the options name: a bad file fails before any output
                with raised_by(type(scheduler), args.scheduler, "prepare", bad_options=False):
                    scheduler.prepare()
            except InputError as exc:
                raise option_named(exc, options) from None
        if args.external:  # started first: a command that cannot start leaves an earlier run's files alone
            scheduler = ExternalDecisionProcess(args.external, workload=workload, timeout_s=args.timeout,
                                                record_path=args.record,
                                                log_path=str(directory.staging / "external.log"))
    except BaseException:
        directory.discard()
        remove_if_empty(made)  # made by the check above: nothing of ours stays behind
        raise
    name = f"external: {args.external}" if args.external else args.scheduler
    bar, update = progress_bar(len(workload.jobs), not args.quiet, name)
    info = {"scheduler": name, "options": scheduler.options(),
            "platform": {"path": str(platform_path or args.platform), "nb_resources": platform.nb_resources},
            "workload": {"path": str(args.workload), "nb_jobs": len(workload.jobs),
                         **({"generator": workload.extra["generator"]} if "generator" in workload.extra else {})},
            "cli_options": options}
    try:
        result = simulate(platform, workload, scheduler, directory, run_info=info, progress=update,
                          timing=args.timing)
    finally:
        directory.discard()
        if bar is not None:
            bar.close()
        closer = getattr(scheduler, "close", None)
        if closer is not None:
            closer()
    if result.replaced and not args.quiet:
        print(f"{out}: replaced {', '.join(result.replaced)} of an earlier run", file=sys.stderr)
    if not args.quiet:
        print(f"{name} on {platform.nb_resources} resources, {len(workload.jobs)} jobs -> {result.written_to}")
        metrics = dict(result.summary["metrics"], scheduling_time_s=result.summary["timing"]["scheduling_time_s"])
        print(format_table(metrics))
    for line in _run_notes(result):
        print(f"schedlab: note: {line}", file=sys.stderr)
    kept = f" (partial results in {result.written_to}, marked incomplete"
    kept += f"; the earlier complete run in {out} is kept)" if result.written_to != out else ")"
    if isinstance(result.exception, KeyboardInterrupt):
        print(f"schedlab: interrupted{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.is_bug:
        ours = type(scheduler).__module__.startswith("schedlab.")
        return _report_bug(result.exception, kept, culprit=None if ours else repr(args.scheduler))
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
    teller = getattr(result.engine.scheduler, "run_notes", None)
    if teller is not None:
        notes += teller()
    return notes


def _listening(what: str):
    return lambda endpoint: print(f"schedlab {what}: listening on {endpoint}", flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    from schedlab.paths import check_output_file
    from schedlab.protocol.server import serve
    from schedlab.schedulers.base import create_scheduler

    scheduler = create_scheduler(args.scheduler, _option_pairs(args))
    if args.record:
        check_output_file(args.record)
    serve(scheduler, args.socket, timeout_s=args.timeout, record_path=args.record, ready=_listening("serve"))
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
    from schedlab.schedulers.policy_fit import FUNCTIONS, WORKLOADS

    print("\nregression-obtained policies (Rosa, Carastan-Santos, Goldman), f(p~, q, r) with r the submit time:")
    for function, terms in FUNCTIONS.items():
        print(f"    {function}[:{'|'.join(WORKLOADS)}]  terms {', '.join(terms)}; the study's coefficients "
              f"(default {WORKLOADS[0]})")
    print("    FILE#NAME  a function fitted by `schedlab policy fit` (e.g. fitted.toml#qua)")
    for problem in PROBLEMS.values():
        _warn(problem)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from schedlab.cli_experiments import refuse_other_results
    from schedlab.experiments.demo import run_demo
    from schedlab.paths import check_output_dir

    # the demo's own directory (a demo with other sizes replaces its results), never a campaign's
    refuse_other_results(Path(args.out), "demo", identity="", remedy="the demo writes into a directory of its "
                         "own: give another -o")
    run_demo(check_output_dir(args.out), nb_jobs=args.jobs, nb_resources=args.resources, seed=args.seed,
             show_progress=not args.quiet)
    return 0


class _StoreOnce(argparse._StoreAction):
    """A single-valued option given twice is an error (`-o a --out b` used to keep `b` silently)."""

    def __call__(self, parser, namespace, values, option_string=None):  # argparse's signature
        seen = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in seen:
            names = "/".join(self.option_strings) or self.dest
            parser.error(f"{names} given twice (give it once)")
        seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class _DefaultsFormatter(argparse.HelpFormatter):
    """Each option's help ends with its default, unless the sentence already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("default" in text or action.default is None or action.default is False
                or action.default == argparse.SUPPRESS or not action.option_strings):
            return text
        return f"{text} (default: {action.default})"


class Parser(argparse.ArgumentParser):
    """argparse with single-valued options refused when repeated and defaults in the help;
    sub-commands inherit it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> typing.NoReturn:
        """One line like every other bad input (argparse prints its usage block and exits)."""
        command = self.prog.removeprefix("schedlab").strip()  # the sub-command, "" for the top level
        raise UsageError(f"{command + ': ' if command else ''}{message} (see `{self.prog} --help`)")


class UsageError(InputError):
    """A command line argparse cannot read: said in one line, exit 2."""


def _add_scheduler_args(parser: argparse.ArgumentParser, positional: bool) -> None:
    if positional:
        parser.add_argument("scheduler", help="scheduler name (see `schedlab schedulers`) or MODULE:CLASS")
    else:
        parser.add_argument("--scheduler", "-s", help="scheduler name (see `schedlab schedulers`) or MODULE:CLASS")
    parser.add_argument("--option", "-O", action="append", metavar="KEY=VALUE",
                        help="scheduler option, repeatable, each key once (e.g. -O queue_order=spt)")


def build_parser(*, light: bool = False) -> argparse.ArgumentParser:
    """The whole command line; `light`: the `predictor` command without its options (they load
    scikit-learn: start-up of every other command, `--version` and `--help` included)."""
    from schedlab import __version__
    from schedlab.cli_experiments import add_parsers as add_experiment_parsers
    from schedlab.cli_policies import add_parsers as add_policy_parsers
    from schedlab.cli_predictors import add_parsers as add_predictor_parsers
    from schedlab.cli_schedulers import add_parsers as add_scheduler_parsers
    from schedlab.cli_workloads import add_parsers

    parser = Parser(prog="schedlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"schedlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="run a workload on the embedded engine",
                       description="Run a Batsim JSON workload on a platform (a SimGrid XML file or a shipped "
                                   "platform's name) with one of our schedulers, or with an external Batsim 4 "
                                   "decision process, on the embedded engine. Writes Batsim's jobs.csv and "
                                   "schedule.csv and our summary.json into --out, and prints the metrics.")
    p.add_argument("--platform", "-p", required=True, help="SimGrid platform XML, or a shipped platform's name")
    p.add_argument("--workload", "-w", required=True, help="Batsim JSON workload")
    _add_scheduler_args(p, positional=False)
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
    _add_scheduler_args(p, positional=True)
    p.add_argument("--socket", default="tcp://127.0.0.1:28000",
                   help="endpoint to bind (default tcp://127.0.0.1:28000; tcp://*:PORT for all interfaces)")
    p.add_argument("--timeout", type=float, default=None,
                   help="give up when batsim sends nothing for this many seconds (default: wait forever)")
    p.add_argument("--record", help="write every message to this JSON-lines file")
    p.set_defaults(func=cmd_serve, files=lambda args: _scheduler_use(args).write("--record", args.record))

    p = sub.add_parser("record", help="relay Batsim <-> a decision process, writing every message")
    p.add_argument("--listen", required=True, help="endpoint batsim connects to (bound here), e.g. tcp://127.0.0.1:28000")
    p.add_argument("--forward", required=True, help="endpoint the decision process binds, e.g. tcp://127.0.0.1:28001")
    p.add_argument("--output", "-o", required=True, help="JSON-lines file to write, one message per line")
    p.add_argument("--timeout", type=float, default=None, help="give up after this many silent seconds")
    p.set_defaults(func=cmd_record, files=lambda args: _file_use().write("--output", args.output))

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

    add_parsers(sub)
    add_scheduler_parsers(sub, _add_scheduler_args)
    add_experiment_parsers(sub)
    add_predictor_parsers(sub, light=light)
    add_policy_parsers(sub)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """A sub-command without its own description shows its one-line help atop its --help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = helps[name][0].upper() + helps[name][1:] + "."
                _describe(sub)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(light=command != "predictor")
    try:
        args = parser.parse_args(arguments)
    except UsageError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    vars(args).pop("_given_once", None)
    try:
        files = vars(args).pop("files", None)
        if files is not None:  # the one rule for every command: no output is one of its inputs
            from schedlab.paths import refuse_overwriting_inputs

            refuse_overwriting_inputs(files(args))
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SchedulerFailure as exc:  # a scheduler raised while serving Batsim: ours is a bug, a user's its failure
        module = getattr(exc, "scheduler_module", "schedlab.")
        culprit = None if module.startswith("schedlab.") else repr(getattr(args, "scheduler", "?"))
        return _report_bug(exc.__cause__ or exc, message=str(exc), culprit=culprit, named=exc.names_its_scheduler)
    except SchedlabError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAILURE
    except OSError as exc:  # the machine, not the input or our code: disk full, permissions, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"schedlab: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:
        return _report_bug(exc)


if __name__ == "__main__":
    sys.exit(main())
