"""Running real Batsim 4.2.1 (and pybatsim) beside our decision processes."""

from __future__ import annotations

import csv
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from procset import ProcSet

from schedlab.protocol.client import free_loopback_port
from tests.helpers.data import REPO


def find_tool(name: str) -> str:
    prefixes = [os.environ.get("SCHEDLAB_BATSIM_PREFIX"), str(Path.home() / ".cache/schedlab/batsim-4.2.1")]
    for prefix in filter(None, prefixes):
        candidate = Path(prefix) / "bin" / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not found (run scripts/install-batsim.sh or set SCHEDLAB_BATSIM_PREFIX)")
    return found


def run_real_batsim(tmp_path: Path, platform: Path, workload: Path, scheduler_argv: list[str]) -> list[dict]:
    batsim = find_tool("batsim")
    tmp_path.mkdir(parents=True, exist_ok=True)
    port = free_loopback_port()
    argv = [a.replace("{socket}", f"tcp://127.0.0.1:{port}") for a in scheduler_argv]
    with (tmp_path / "sched.log").open("wb") as log:
        sched = subprocess.Popen(argv, stdout=log, stderr=log)
        try:
            done = subprocess.run([batsim, "-p", str(platform), "-w", str(workload), "-e", str(tmp_path / "out"),
                                   "-s", f"tcp://localhost:{port}"], capture_output=True, timeout=300)
            assert done.returncode == 0, done.stderr.decode()[-2000:]
            assert sched.wait(timeout=30) == 0, (tmp_path / "sched.log").read_text()[-2000:]
        finally:
            if sched.poll() is None:
                sched.kill()
    with (tmp_path / "out_jobs.csv").open() as handle:
        return list(csv.DictReader(handle))


def check_batsim_jobs_csv(rows: list[dict], nb_jobs: int) -> None:
    """The schedule invariants, on Batsim's own jobs.csv."""
    assert len(rows) == nb_jobs and len({r["job_id"] for r in rows}) == nb_jobs  # each job exactly once
    busy: dict[int, list[tuple[float, float]]] = {}
    for row in rows:
        if row["final_state"] == "REJECTED":
            continue
        assert float(row["starting_time"]) >= float(row["submission_time"])
        alloc = ProcSet.from_str(row["allocated_resources"])
        assert len(alloc) == int(row["requested_number_of_resources"])
        if row["final_state"] == "COMPLETED_WALLTIME_REACHED":
            assert abs(float(row["execution_time"]) - float(row["requested_time"])) < 0.01
        for r in alloc:
            busy.setdefault(r, []).append((float(row["starting_time"]), float(row["finish_time"])))
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-6 for a, b in itertools.pairwise(spans))


def pybatsim_entry(name: str) -> tuple[Path, Path]:
    """pybatsim (installed the documented way) and one of our entry files; skip without pybatsim."""
    pybatsim = Path(sys.executable).parent / "pybatsim"
    if not pybatsim.exists():
        pytest.skip("pybatsim is not installed in this environment (bash scripts/install-pybatsim.sh)")
    return pybatsim, REPO / "schedlab" / "pybatsim_entry" / name
