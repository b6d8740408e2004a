"""A run's results directory, written as a whole: the run's files go to a staging directory inside
it and are moved in when the run ends. A complete run replaces an earlier run's files; an incomplete
one never replaces an earlier complete run: it goes to DIR/incomplete/ beside it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from schedlab.errors import InputError, OutputError

INCOMPLETE_DIR = "incomplete"
#: the hidden directory a run is staged in, inside its results directory (then the process id)
STAGING_PREFIX = ".schedlab-run-"


def _said_complete(directory: Path) -> bool | None:
    """What the summary.json in `directory` says of `complete`; None without a readable one."""
    try:
        return json.loads((directory / "summary.json").read_text(encoding="utf-8")).get("complete")
    except (OSError, ValueError, AttributeError):
        return None


def _holds_an_incomplete_run(directory: Path) -> bool:
    """Only run files, and a summary saying `"complete": false`: what `publish` may replace."""
    from schedlab.paths import RUN_FILES

    if not directory.is_dir() or any(entry.name not in RUN_FILES for entry in directory.iterdir()):
        return False
    return _said_complete(directory) is False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunDirectory:
    """A results directory written as a whole. `staging` (inside it, hidden) receives the run's
    files; `publish` moves them in. Checked when made: none of the run's files may be a directory
    (a directory named jobs.csv would stop the move half-way)."""

    def __init__(self, out_dir: str | Path) -> None:
        from schedlab.paths import RUN_FILES, check_output_dir

        self.out = check_output_dir(out_dir)
        for name in RUN_FILES:
            if (self.out / name).exists() and not (self.out / name).is_file():
                raise InputError(f"{name} there is not a file: a run writes {name} (move it away)", path=str(self.out))
        incomplete = self.out / INCOMPLETE_DIR
        if incomplete.exists() and not _holds_an_incomplete_run(incomplete):
            raise InputError(f"{INCOMPLETE_DIR} there is not an incomplete run of schedlab's (it is replaced when a "
                             "run ends; move it away)", path=str(self.out))
        for stale in self.out.glob(f"{STAGING_PREFIX}*"):  # staged by a run that was killed (SIGKILL)
            pid = stale.name[len(STAGING_PREFIX):].partition("-")[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(stale, ignore_errors=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=self.out))
        self.replaced: list[str] = []

    def holds_complete_run(self) -> bool:
        """Whether the directory holds an earlier run's results that are not marked incomplete."""
        if (self.out / "summary.json").is_file():
            return _said_complete(self.out) is not False  # unreadable: not ours to judge, kept
        return (self.out / "jobs.csv").is_file()  # e.g. real Batsim's files: kept as a complete result

    def publish(self, complete: bool) -> Path:
        """Move the staged files in: into the directory when `complete` or when it holds no complete
        run (an earlier run's other files removed: a directory never mixes two runs), else into
        DIR/incomplete/ (replacing an earlier incomplete one). Returns where they went."""
        from schedlab.paths import RUN_FILES, give_usual_mode

        if not complete and self.holds_complete_run():
            target = self.out / INCOMPLETE_DIR
            shutil.rmtree(target, ignore_errors=True)  # an earlier incomplete run (checked when made)
            give_usual_mode(self.staging, directory=True)
            os.replace(self.staging, target)
            return target
        for name in RUN_FILES:
            staged, final = self.staging / name, self.out / name
            if final.is_file():
                self.replaced.append(name)
            if staged.is_file():
                os.replace(staged, final)
            elif final.is_file():
                final.unlink()
        shutil.rmtree(self.out / INCOMPLETE_DIR, ignore_errors=True)  # an older attempt's
        self.discard()
        return self.out

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def unwritten(self, failure: OutputError) -> OutputError:
        """A failure to write a staged file, said of the results directory's file (the staging is
        discarded: nothing partial stays), and what it keeps."""
        message = str(failure).replace(f"{self.staging}{os.sep}", f"{self.out}{os.sep}")
        kept = "the earlier complete run there is kept" if self.holds_complete_run() else "nothing was written"
        return OutputError(f"{message} ({kept})")
