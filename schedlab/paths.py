"""Output paths are checked before any long work starts, so a bad `--out` or `-o` costs one line and
exit 2, never a finished simulation thrown away."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from schedlab.errors import InputError


def sha256_file(path: str | Path) -> str:
    """A file's SHA-256 (hex), read in blocks: what campaigns, model cards and score tables record."""
    import hashlib

    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

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


def clear_run_files(directory: Path, keep: tuple[str, ...] = ()) -> list[str]:
    """Remove our own files from an earlier run in `directory` (but those in `keep`, already
    rewritten by this run); returns their names."""
    removed = []
    for name in RUN_FILES:
        stale = directory / name
        if name in keep:
            continue
        if stale.is_file():
            stale.unlink()
            removed.append(name)
    return removed


def give_usual_mode(path: str | Path) -> None:
    """The mode a plain `open(path, "w")` would give (mkstemp makes 0600: other users could not read it)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


@contextmanager
def atomic_write(path: str | Path) -> Iterator[IO[str]]:
    """A text handle on a temporary file beside `path`, renamed over it only once the write is
    complete: an interrupted or failed write never leaves a truncated file under the name asked for."""
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        give_usual_mode(temporary)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(temporary, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def read_input_text(path: str | Path, what: str = "an input file") -> str:
    """The text of an input file; a missing, unreadable or undecodable one is one line (exit 2)."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, expected {what}", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=str(path)) from None
