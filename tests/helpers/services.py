"""Real services for the `docker` and `slurm` tests: brought up by the project's scripts
(scripts/docker-local.sh, scripts/slurm-local.sh) and stopped again only where the test started them."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CANNOT = 3  # the scripts' exit code where they cannot run here (no root, no apt-get): the tests skip


def script(name: str, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(REPO / "scripts" / name), *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@contextmanager
def service(name: str, *up_args: str) -> Iterator[str]:
    """`name up` (the service's stdout is yielded); skips with the script's own line where it cannot
    run here; `name down` afterwards only if the service did not answer before (someone else's is
    left running)."""
    was_running = script(name, "status", timeout=60).returncode == 0
    started = script(name, "up", *up_args)
    if started.returncode == CANNOT:
        pytest.skip(started.stderr.strip().splitlines()[-1])
    try:  # an `up` that failed half-way is brought down too
        assert started.returncode == 0, f"{name} up failed:\n{started.stderr[-3000:]}"
        yield started.stdout
    finally:
        if not was_running:
            stopped = script(name, "down", timeout=300)
            assert stopped.returncode == 0, f"{name} down failed:\n{stopped.stderr[-2000:]}"
