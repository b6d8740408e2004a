"""What every sub-command shares: exit codes, the argument parser, progress bars, warnings, the
report of a bug, and the files a scheduler and its options name. It imports no command."""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedlab.errors import InputError

EXIT_FAILURE, EXIT_INPUT, EXIT_BUG, EXIT_INTERRUPTED = 1, 2, 3, 130


def say_stopped(text: str) -> None:
    """The line a stopped command ends with, on stderr, if there still is one: after SIGHUP the
    terminal is gone and writing to it fails (EIO), which must not turn exit 129 into a traceback."""
    import contextlib
    import sys

    with contextlib.suppress(OSError):
        print(text, file=sys.stderr, flush=True)


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


def warn(message: str) -> None:
    print(f"schedlab: warning: {message}", file=sys.stderr)


def report_bug(exc: BaseException, context: str = "", message: str | None = None, *,
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


def option_pairs(args: argparse.Namespace) -> dict[str, str]:
    from schedlab.schedulers.base import parse_options

    return parse_options(args.option or [])


def file_use():
    from schedlab.paths import FileUse

    return FileUse()


def scheduler_use(args: argparse.Namespace):
    use = file_use()
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


def add_scheduler_args(parser: argparse.ArgumentParser, positional: bool) -> None:
    if positional:
        parser.add_argument("scheduler", help="scheduler name (see `schedlab schedulers`) or MODULE:CLASS")
    else:
        parser.add_argument("--scheduler", "-s", help="scheduler name (see `schedlab schedulers`) or MODULE:CLASS")
    parser.add_argument("--option", "-O", action="append", metavar="KEY=VALUE",
                        help="scheduler option, repeatable, each key once (e.g. -O queue_order=spt)")
