"""The `schedlab` command. Errors are one line on stderr and a conventional exit code: 2 bad input or
options (checked before long work), 1 a simulation/protocol failure (partial outputs kept), 3 an
internal error (a bug: traceback written to a log file), 130 interrupted (partial outputs kept), 143
and 129 terminated by SIGTERM and SIGHUP (as for Ctrl-C)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from schedlab.cli.common import (
    EXIT_FAILURE,
    EXIT_INPUT,
    Parser,
    UsageError,
    add_scheduler_args,
    report_bug,
    say_stopped,
)
from schedlab.errors import InputError, SchedlabError, SchedulerFailure


def build_parser(*, light: bool = False, traces: bool = True) -> argparse.ArgumentParser:
    """The whole command line; `light`: the `predictor` command without its options (they load
    scikit-learn: start-up of every other command, `--version` and `--help` included); `traces`:
    `workload`'s converters of the registered trace formats (finding them loads numpy)."""
    from schedlab import __version__
    from schedlab.cli.experiments import add_parsers as add_experiment_parsers
    from schedlab.cli.policies import add_parsers as add_policy_parsers
    from schedlab.cli.predictors import add_parsers as add_predictor_parsers
    from schedlab.cli.schedulers import add_parsers as add_scheduler_parsers
    from schedlab.cli.simulation import add_parsers as add_simulation_parsers
    from schedlab.cli.workloads import add_parsers

    parser = Parser(prog="schedlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"schedlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    add_simulation_parsers(sub)
    add_parsers(sub, traces=traces)
    add_scheduler_parsers(sub, add_scheduler_args)
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
                said = helps.get(name)
                if not sub.description and said:
                    sub.description = said[0].upper() + said[1:] + "."
                _describe(sub)


def main(argv: Sequence[str] | None = None) -> int:
    from schedlab.interrupts import stop_on_termination

    with stop_on_termination():  # SIGTERM and SIGHUP as Ctrl-C: what finished is written
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from schedlab.interrupts import exit_code, what_stopped

    arguments = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(light=command != "predictor", traces=command == "workload")
    try:
        args = parser.parse_args(arguments)
    except UsageError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    vars(args).pop("_given_once", None)
    for flag in ("out", "output", "record", "csv"):  # "" is no path: it wrote into the current folder
        if getattr(args, flag, None) == "":
            print(f"schedlab: error: --{flag} is empty: give a path", file=sys.stderr)
            return EXIT_INPUT
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
        return report_bug(exc.__cause__ or exc, message=str(exc), culprit=culprit, named=exc.names_its_scheduler)
    except SchedlabError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt as stop:
        say_stopped(f"schedlab: {what_stopped(stop)}")
        return exit_code(stop)
    except BrokenPipeError:
        return EXIT_FAILURE
    except OSError as exc:  # the machine, not the input or our code: disk full, permissions, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"schedlab: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:
        return report_bug(exc)


if __name__ == "__main__":
    sys.exit(main())
