"""Output paths are checked before any long work starts, so a bad `--out` or `-o` costs one line and
exit 2, never a finished simulation thrown away."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from schedlab.errors import InputError, OutputError


def canonical_hash(obj: object) -> str:
    """The SHA-256 (hex) of a JSON-able value written canonically (sorted keys, no spaces): what
    names content-addressed runs, inputs and cached models."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def cache_dir() -> Path:
    """Where models trained on the fly are kept: $SCHEDLAB_CACHE, else $XDG_CACHE_HOME/schedlab, else
    ~/.cache/schedlab (delete it freely: its content is retrained)."""
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schedlab"
    return Path(os.environ.get("SCHEDLAB_CACHE") or default)


def sha256_file(path: str | Path) -> str:
    """A file's SHA-256 (hex), read in blocks: what campaigns, model cards and score tables record."""
    import hashlib

    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

#: Files a run writes into its results directory; a complete run removes an earlier run's copies it
#: did not write, so a directory never mixes two runs (other files are left alone; run.RunDirectory).
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


def umask() -> int:
    """The process's umask (read by setting it and back: there is no other way)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def give_usual_mode(path: str | Path, *, directory: bool = False) -> None:
    """The mode a plain `open(path, "w")` (or `mkdir` with `directory`) would give: mkstemp makes
    0600 and mkdtemp 0700, which other users could not read."""
    os.chmod(path, (0o777 if directory else 0o666) & ~umask())


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """An OSError while writing `path` (ENOSPC: "No space left on device" of no file) becomes an
    OutputError that names it."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


@contextmanager
def atomic_write(path: str | Path) -> Iterator[IO[str]]:
    """A text handle on a temporary file beside `path`, renamed over it only once the write is
    complete: an interrupted or failed write never leaves a truncated file under the name asked for
    (a failure to write is an OutputError naming `path`)."""
    target = Path(path)
    with writing(target):
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with writing(target):
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


# ------------------------------------------------------------------ a command never writes over its inputs


@dataclass
class FileUse:
    """What a command reads and what it would write, replace or delete, each with the role that
    names it in a message (`"--output"`, `"the workload (-w)"`). `out_dirs`: directories it writes
    into (one must not be an input file); `owned`: directories whose whole content it may replace
    (campaign runs), so no input may lie inside them."""

    reads: list[tuple[str, Path]] = field(default_factory=list)
    writes: list[tuple[str, Path]] = field(default_factory=list)
    out_dirs: list[tuple[str, Path]] = field(default_factory=list)
    owned: list[tuple[str, Path]] = field(default_factory=list)

    def read(self, role: str, *paths: str | Path | None) -> FileUse:
        self.reads += [(role, Path(p)) for p in paths if p is not None and str(p) != ""]
        return self

    def write(self, role: str, *paths: str | Path | None) -> FileUse:
        self.writes += [(role, Path(p)) for p in paths if p is not None and str(p) != ""]
        return self

    def into(self, role: str, directory: str | Path | None, names: Iterable[str] = (),
             owned: Iterable[str] = ()) -> FileUse:
        """`directory` is written into: the files `names` in it, the subdirectories `owned` whole."""
        if directory is None:
            return self
        directory = Path(directory)
        self.out_dirs.append((role, directory))
        self.writes += [(role, directory / name) for name in names]
        self.owned += [(role, directory / name) for name in owned]
        return self


def is_file(path: Path) -> bool:
    """`Path.is_file`, false for a name the system cannot even look up (too long, NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def files_in_option(value: object, base: Path = Path()) -> list[Path]:
    """The existing files an option value names: the value itself, FILE of FILE#NAME, PATH of
    KIND:PATH (`predictor=model:M.skops`), relative to `base`; a model's card beside it."""
    text = str(value)
    found = []
    for candidate in dict.fromkeys((text, text.rpartition("#")[0], text.partition(":")[2])):
        if candidate and is_file(base / candidate):
            found.append(base / candidate)
            if candidate.endswith(".skops"):
                found.append(base / f"{candidate}.card.json")
    return found


def _identity(path: Path) -> tuple[object, ...]:
    """One file whatever the name: (device, inode) when it exists (links followed, hard links
    equal), else the resolved path."""
    try:
        stat = path.stat()
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("inode", stat.st_dev, stat.st_ino)


def refuse_overwriting_inputs(use: FileUse) -> None:
    """The rule for every command (checked before any input is processed or any output touched): a
    file it would write, replace or delete may not be one of its inputs (the same file after
    resolving links), two outputs may not be one file, an output directory may not be an input
    file, and no input may lie in a directory the command replaces whole."""
    inputs: dict[tuple[object, ...], str] = {}
    for role, path in use.reads:
        if is_file(path):
            inputs.setdefault(_identity(path), role)
    written: dict[tuple[object, ...], str] = {}
    for role, path in use.writes:
        key = _identity(path)
        if key in inputs:
            raise InputError(f"{role} would write over {inputs[key]}, an input of this command (choose another "
                             "output)", path=str(path))
        if key in written and written[key] != role:
            raise InputError(f"{role} and {written[key]} name the same file: one output would be lost",
                             path=str(path))
        written[key] = role
    for role, directory in use.out_dirs:
        key = _identity(directory)
        if key in inputs:
            raise InputError(f"{role} is {inputs[key]}, an input file of this command (expected a directory to "
                             "write into)", path=str(directory))
    for role, directory in use.owned:
        root = os.path.realpath(directory)
        inside = [(what, path) for what, path in use.reads if is_file(path)]
        inside += [(what, path) for what, path in use.writes if what != role]  # another output in it
        for what, path in inside:
            if os.path.realpath(path).startswith(root + os.sep):
                raise InputError(f"{what} lies in {directory}, which {role} replaces (move it elsewhere)",
                                 path=str(path))


def new_directories(path: str | Path) -> list[Path]:
    """The directories that making `path` would create, outermost first (removed again, when still
    empty, by a command that fails before writing anything: `remove_if_empty`)."""
    made, current = [], Path(path).absolute()
    while not current.exists() and current != current.parent:
        made.append(current)
        current = current.parent
    return made[::-1]


def remove_if_empty(directories: list[Path]) -> None:
    """Remove `directories` (as `new_directories` lists them) that hold nothing, innermost first."""
    for directory in reversed(directories):
        with suppress(OSError):
            directory.rmdir()


@contextmanager
def atomic_path(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temporary path beside `path` for a writer that takes a file name (pandas, matplotlib,
    skops), renamed over `path` only once the writer has returned. `suffix`: what the writer needs
    to see at the end of the name (".png")."""
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".part{suffix}", dir=target.parent)
    os.close(fd)
    try:
        give_usual_mode(temporary)
        yield Path(temporary)
        os.replace(temporary, target)
    finally:
        with suppress(FileNotFoundError):
            os.unlink(temporary)


def write_text_atomic(path: str | Path, text: str) -> None:
    """`Path.write_text`, but the file appears whole or not at all."""
    with atomic_write(path) as handle:
        handle.write(text)
