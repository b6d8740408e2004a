"""Output paths are checked before any long work starts, so a bad `--out` or `-o` costs one line and
exit 2, never a finished simulation thrown away."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from schedlab.errors import InputError

#: Files a run writes into its results directory; stale copies are removed before a new run, so a
#: directory never mixes two runs (other files are left alone).
RUN_FILES = ("jobs.csv", "schedule.csv", "summary.json", "external.log")


def _probe(directory: Path, what: str, shown: Path) -> None:
    probe = directory / f".schedlab-probe-{uuid.uuid4().hex}"
    try:
        probe.open("w").close()
        probe.unlink()
    except OSError as exc:
        raise InputError(f"{what} is not writable: {exc.strerror}", path=str(shown)) from None


def _make_dir(directory: Path, shown: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output directory: {exc.strerror}", path=str(shown)) from None


def check_output_dir(path: str | Path) -> Path:
    """A results directory: created if missing; an existing file or an unwritable place is an error."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise InputError("exists and is not a directory (expected an output directory)", path=str(directory))
    _make_dir(directory, directory)
    _probe(directory, "output directory", directory)
    return directory


def check_output_file(path: str | Path) -> Path:
    """A file to write: its directory is created if missing; a directory or unwritable place is an error."""
    target = Path(path)
    if target.is_dir():
        raise InputError("is a directory (expected a file to write)", path=str(target))
    parent = target.parent if str(target.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise InputError(f"{parent} is not a directory", path=str(target))
    _make_dir(parent, target)
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError("output file is not writable", path=str(target))
    _probe(parent, "output file's directory", target)
    return target


def clear_run_files(directory: Path) -> list[str]:
    """Remove our own files from an earlier run in `directory`; returns their names."""
    removed = []
    for name in RUN_FILES:
        stale = directory / name
        if stale.is_file():
            stale.unlink()
            removed.append(name)
    return removed
