"""Runs of a scheduler in a child process that sees only copies of the user's files.

The child is started through a shim, so that its parent too shows no original path: both have the
user's command line with every path of a file given (the workload of `-w`, files an option names)
replaced by the path of a copy under a neutral name in a fresh directory, which is also the child's
working directory; the environment is rewritten alike. Before each run the child writes the copies
that run is meant to see (the simulated workload, perturbed or not, where `-w` pointed; an option
file holding the same jobs perturbed alike), so a scheduler that opens them (found in `sys.argv`,
`/proc/self/cmdline`, its parent's, an option or an environment variable) reads what the run is
about, and a look-ahead run changes what it reads. Results come back on a pipe of their own
(whatever the scheduler prints does not matter), one JSON line per run."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from schedlab.checker.runs import Budgets, RunResult, run_once, shrink, workload_of
from schedlab.errors import InputError
from schedlab.parsing import json_loads

WORKER = "from schedlab.checker.sandbox import worker_main; worker_main()"
SHIM = ("import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', " + repr(WORKER)
        + ", *sys.argv[1:]], close_fds=False).returncode)")
WORKLOAD_COPY = "workload.json"


@dataclass(frozen=True)
class GivenFile:
    """A file the user gave: every spelling by which the command line names it, its copy's neutral
    name, and whether it is the workload of `-w` (then the copy is always the simulated workload)."""

    spellings: tuple[str, ...]
    copy_name: str
    is_workload: bool
    is_json_workload: bool

    @property
    def given(self) -> str:
        return self.spellings[0]


def _spelled_files(value: object) -> list[str]:
    """The files an option value names, as it spells them (`files_in_option`'s rule: the value, FILE
    of FILE#NAME, PATH of KIND:PATH, FILE.py of FILE.py:NAME; a model's card beside it), only those
    that exist."""
    text = str(value)
    found = []
    for candidate in dict.fromkeys((text, text.rpartition("#")[0], text.partition(":")[2], text.rpartition(":")[0])):
        if candidate and os.path.isfile(candidate):
            found.append(candidate)
            if candidate.endswith(".skops") and os.path.isfile(f"{candidate}.card.json"):
                found.append(f"{candidate}.card.json")
    return found


def given_files(workload_path: str | None, options: Mapping[str, Any]) -> list[GivenFile]:
    """The files of `-w` and of the options, each with its neutral copy's name (a model's card
    follows its model's copy); one entry per file, whatever the spellings."""
    by_file: dict[str, GivenFile] = {}
    order: list[str] = []

    def add(spelled: str, name: str, is_workload: bool) -> None:
        real = os.path.realpath(spelled)
        known = by_file.get(real)
        if known is None:
            by_file[real] = GivenFile((spelled,), name, is_workload, is_workload or _is_json_workload(spelled))
            order.append(real)
        elif spelled not in known.spellings:
            by_file[real] = dataclasses.replace(known, spellings=(*known.spellings, spelled))

    if workload_path:
        add(str(workload_path), WORKLOAD_COPY, True)
    for key, value in options.items():
        for spelled in _spelled_files(value):
            if spelled.endswith(".card.json"):  # beside the model's copy, where card_path finds it
                name = f"{key}{Path(spelled[:-len('.card.json')]).suffix}.card.json"
            else:
                name = f"{key}{Path(spelled).suffix}"
            add(spelled, name, False)
    return [by_file[real] for real in order]


def _is_json_workload(path: str | Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(1)
        if head != b"{":
            return False
        doc = json_loads(Path(path).read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("jobs"), list)


_PATH_CHAR = r"[\w./~+-]"


def rewritten(text: str, paths: Mapping[str, str]) -> str:
    """`text` with every whole occurrence of an original path replaced by its copy's, in one pass
    (a replacement is never rewritten again; `./h.json` is a spelling of its own)."""
    if not paths:
        return text
    alternatives = "|".join(re.escape(original) for original in sorted(paths, key=len, reverse=True) if original)
    pattern = re.compile(f"(?<!{_PATH_CHAR})(?:{alternatives})(?!{_PATH_CHAR})")
    return pattern.sub(lambda match: paths[match.group(0)], text)


class Sandbox:
    """Child processes for the runs of `spec` with `options`, as the user's command gave them."""

    def __init__(self, spec: str, options: Mapping[str, Any], *, workload_path: str | None = None,
                 argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> None:
        self.spec, self.options = spec, dict(options)
        self.files = given_files(workload_path, self.options)
        self.argv = list(sys.argv if argv is None else argv)
        self.env = dict(os.environ if env is None else env)
        self.has_workload = workload_path is not None

    @functools.cached_property
    def option_docs(self) -> dict[str, dict[str, Any]]:
        """The option files that are Batsim JSON workloads (copy name -> parsed once, paths cut),
        which look-ahead runs perturb where they hold the simulated jobs."""
        return {f.copy_name: neutral_doc(json.loads(Path(f.given).read_text())) for f in self.files
                if f.is_json_workload and not f.is_workload}

    def _prepare_dir(self) -> tuple[Path, dict[str, str]]:
        directory = Path(tempfile.mkdtemp(prefix="run-", dir=_session_dir()))
        paths: dict[str, str] = {}
        for f in self.files:
            copy = directory / f.copy_name
            if not f.is_workload and not copy.exists():
                if f.copy_name.endswith(".card.json"):
                    copy.write_text(_neutral_card(Path(f.given).read_text()))
                elif f.is_json_workload:
                    copy.write_text(json.dumps(self.option_docs[f.copy_name]))
                else:
                    shutil.copyfile(f.given, copy)
            for spelled in f.spellings:
                for form in (spelled, os.path.abspath(spelled), os.path.realpath(spelled)):
                    paths[form] = str(copy)
        return directory, paths

    def run(self, runs: list[dict[str, Any]], *, hash_seed: int, budgets: Budgets, mode: str = "runs",
            timeout_s: float | None = None) -> list[RunResult | dict[str, Any]]:
        """Execute `runs` ({label, nb_res, doc, files: {copy name: perturbed doc}[, failure]}) in child
        processes, in order: a run a child did not finish is given as a failure ("progress" when it
        was stopped, "raised" when the child died) and the next runs go to a new child."""
        results: list[RunResult | dict[str, Any]] = []
        while len(results) < len(runs):
            results += self._run_in_one_child(runs[len(results):], hash_seed=hash_seed, budgets=budgets, mode=mode,
                                              timeout_s=timeout_s)
        return results

    def _run_in_one_child(self, runs: list[dict[str, Any]], *, hash_seed: int, budgets: Budgets, mode: str,
                          timeout_s: float | None) -> list[RunResult | dict[str, Any]]:
        directory, paths = self._prepare_dir()
        argv = [rewritten(arg, paths) for arg in self.argv]
        env = {key: rewritten(value, paths) for key, value in self.env.items() if key not in ("PWD", "OLDPWD")}
        env.update(PWD=str(directory), PYTHONHASHSEED=str(hash_seed))
        options = {key: rewritten(str(value), paths) for key, value in self.options.items()}
        module = self.spec.rpartition(":")[0]
        sys_path = [*([os.getcwd()] if not module.endswith(".py") else []), *sys.path]  # MODULE:CLASS from here
        read_fd, write_fd = os.pipe()
        task = {"spec": self.spec, "options": options, "argv": argv, "sys_path": sys_path,
                "mode": mode, "budgets": asdict(budgets), "runs": runs, "result_fd": write_fd,
                "write_workload": self.has_workload}
        limit = timeout_s if timeout_s is not None else 30.0 + budgets.wall_s * max(1, len(runs)) * (
            3 if mode == "shrink" else 1)
        stderr_path = _session_dir() / f"{directory.name}.stderr"
        lines: list[str] = []
        try:
            with open(stderr_path, "wb") as stderr:
                process = subprocess.Popen([sys.executable, "-c", SHIM, *argv[1:]], stdin=subprocess.PIPE,
                                           stdout=subprocess.DEVNULL, stderr=stderr, cwd=directory, env=env,
                                           pass_fds=(write_fd,), start_new_session=True)
                os.close(write_fd)
                write_fd = -1
                killed = _talk(process, json.dumps(task).encode(), read_fd, lines, time.monotonic() + limit)
                read_fd = -1  # _talk closed it
        finally:
            for fd in (read_fd, write_fd):
                if fd >= 0:
                    os.close(fd)
            shutil.rmtree(directory, ignore_errors=True)
        results: list[RunResult | dict[str, Any]] = []
        for line in lines:
            record = json.loads(line)
            results.append(RunResult(**record) if mode == "runs" else record)
        if len(results) < len(runs):
            missing = runs[len(results)]["label"]
            tail = stderr_path.read_text(errors="replace").strip().splitlines()
            if killed:
                failure = f"no progress: the run did not end within {limit:g} s of wall clock (stopped)"
                kind = "progress"
            else:
                failure = "the child process running the scheduler died" + (f": {tail[-1]}" if tail else "")
                kind = "raised"
            stub = RunResult(missing, failure=failure, kind=kind, nb_jobs=len(runs[len(results)]["doc"]["jobs"]))
            results.append(stub if mode == "runs" else {"label": missing, "failure": failure, "doc": None})
        stderr_path.unlink(missing_ok=True)
        return results


def neutral_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A workload for a child: the path of the trace it was converted from cut to its file name
    (what `history_overlap` and `model_overlap` compare), so the copy leads nowhere."""
    conversion = doc.get("conversion")
    if isinstance(conversion, dict) and isinstance(conversion.get("source"), str):
        doc = {**doc, "conversion": {**conversion, "source": Path(conversion["source"]).name}}
    return doc


def _neutral_card(text: str) -> str:
    """A model's card for a child: its training file's path cut to the file name (its sha256 and
    conversion stay: what `model_overlap` compares)."""
    try:
        card = json.loads(text)
    except ValueError:
        return text
    trained = card.get("training_data") if isinstance(card, dict) else None
    if isinstance(trained, dict):
        for key in ("path", "source"):
            if isinstance(trained.get(key), str):
                trained[key] = Path(trained[key]).name
        if isinstance(trained.get("conversion"), dict):
            trained["conversion"] = neutral_doc({"conversion": trained["conversion"]})["conversion"]
    return json.dumps(card)


def _talk(process: subprocess.Popen, task: bytes, read_fd: int, lines: list[str], deadline: float) -> bool:
    """Send the task, collect result lines until the child closes the pipe; True if it was killed
    at the deadline."""
    try:
        assert process.stdin is not None
        process.stdin.write(task)
        process.stdin.close()
    except BrokenPipeError:
        pass
    buffer = b""
    killed = False
    with selectors.DefaultSelector() as selector:
        selector.register(read_fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.killpg(process.pid, signal.SIGKILL)
                killed = True
                break
            if not selector.select(timeout=min(left, 1.0)):
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            lines.extend(line.decode() for line in complete if line)
    os.close(read_fd)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return killed


_SESSION: list[Path] = []


def _session_dir() -> Path:
    """A private directory for this check's children (removed at exit)."""
    if not _SESSION:
        import atexit

        _SESSION.append(Path(tempfile.mkdtemp(prefix="schedlab-check-")))
        atexit.register(shutil.rmtree, _SESSION[0], True)
    return _SESSION[0]


# ---------------------------------------------------------------------------------------------- the child


def execute(task: Mapping[str, Any], factory: Callable[[], Any], emit: Callable[[str], None],
            directory: Path | None) -> None:
    """The runs of a task, in this process; each result emitted as a JSON line. `directory`: where
    the copies go (None: in the checking process itself, no copies)."""
    budgets = Budgets(**task["budgets"])
    originals: dict[str, bytes] = {}  # option copies a run perturbed, as copied: restored for the next runs
    for run in task["runs"]:
        label, nb_res = run["label"], run["nb_res"]
        path = f"<{label}>"
        if directory is not None:
            for name in [name for name in originals if name not in run.get("files", {})]:
                (directory / name).write_bytes(originals.pop(name))
            for name, doc in run.get("files", {}).items():
                originals.setdefault(name, (directory / name).read_bytes())
                (directory / name).write_text(json.dumps(doc))
            if task.get("write_workload"):
                path = str(directory / WORKLOAD_COPY)
                Path(path).write_text(json.dumps(run["doc"]))

        def once(doc: dict[str, Any], path: str = path, label: str = label, nb_res: int = nb_res,
                 slow_master_s: float | None = run.get("slow_master_s")) -> RunResult:
            if directory is not None and task.get("write_workload"):
                Path(path).write_text(json.dumps(doc))
            try:
                return run_once(factory, label, workload_of(doc, path, label), nb_res, budgets,
                                slow_master_s=slow_master_s)
            except InputError as exc:  # a file an option names, refused by the scheduler's prepare
                return RunResult(label, failure=f"bad input: {exc}", kind="input", nb_jobs=len(doc["jobs"]))

        if task["mode"] == "shrink":
            small, failure = shrink(once, run["doc"], run["failure"])
            emit(json.dumps({"label": label, "doc": small, "failure": failure}))
        else:
            emit(once(run["doc"]).to_json())


def worker_main() -> None:
    """The child: read the task from stdin, run it, answer on the result pipe."""
    task = json.loads(sys.stdin.buffer.read())
    sys.argv = list(task["argv"])
    for entry in reversed(task["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    from schedlab.schedulers.base import create_scheduler

    with os.fdopen(task["result_fd"], "w", buffering=1) as out:
        def factory() -> Any:
            return create_scheduler(task["spec"], task["options"])

        def emit(line: str) -> None:
            out.write(line + "\n")

        execute(task, factory, emit, Path.cwd())
