"""SIGTERM and SIGHUP handled as Ctrl-C is.

`timeout`, `kill`, `docker stop`, Slurm at a job's time limit and a closed terminal send SIGTERM or
SIGHUP, whose default is to die on the spot: no incomplete results written, staging left behind,
workers orphaned. The commands run within `stop_on_termination()`: in the main thread either signal
raises `Terminated`, a KeyboardInterrupt, so every path that writes what finished on Ctrl-C runs for
them too; the exit code is the shell's 128 + the signal's number (130 for Ctrl-C).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: the signals a sender stops a process with, besides Ctrl-C's SIGINT
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP received: stop as for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise(signum: int, frame: FrameType | None) -> None:
    """The handler: Ctrl-C's path, for SIGTERM and SIGHUP."""
    raise Terminated(signum)


@contextmanager
def stop_on_termination() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise Terminated in the main thread; the former handlers after (a
    no-op outside the main thread, where handlers cannot be set). A signal the process was told to
    ignore (`nohup`) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in TERMINATING}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, _raise)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def default_termination() -> None:
    """In a worker process forked from one that stops on termination: die of the signal, as
    processes do (its parent, which also receives it or notices the worker gone, writes what
    finished). Only the main thread may set handlers: elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING:
        signal.signal(signum, signal.SIG_DFL)


def worker_process() -> None:
    """A pool's worker initializer: dies of SIGTERM and SIGHUP (its pool's terminate() sends SIGTERM;
    the handler forked with it is its parent's, which raises and prints a traceback) and with its
    parent however that dies."""
    default_termination()
    die_with_parent()


def die_with_parent() -> None:
    """In a worker process: SIGTERM when the parent dies, however it dies (SIGKILL included), so no
    worker is left orphaned computing for nobody (Linux's PR_SET_PDEATHSIG; elsewhere nothing)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    parent = os.getppid()  # the process that started this one (under forkserver: the fork server)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died during the request: the signal will never come
        os.kill(os.getpid(), signal.SIGTERM)


def exit_code(stop: KeyboardInterrupt) -> int:
    """128 + the signal's number: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + (stop.signum if isinstance(stop, Terminated) else int(signal.SIGINT))


def what_stopped(stop: KeyboardInterrupt) -> str:
    """'interrupted' (Ctrl-C) or 'terminated (SIGTERM)'."""
    return f"terminated ({signal.Signals(stop.signum).name})" if isinstance(stop, Terminated) else "interrupted"
