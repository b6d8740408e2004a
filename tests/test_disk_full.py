"""A full disk, for real: a small tmpfs mounted for the test (root only; skipped otherwise). The
command says which file could not be written and why, removes what it had begun, and keeps the
earlier complete result."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCHEDLAB = [sys.executable, "-m", "schedlab"]
CAMPAIGN = """name = "full"
seeds = [1, 2, 3]
[[workloads]]
name = "s"
synthetic = { jobs = 3000, resources = 64 }
[[platforms]]
resources = 64
[[schedulers]]
name = "easy"
options = { queue_order = ["fcfs", "spt", "saf", "wfp3"] }
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB file system (a tmpfs), unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(disk)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("w") / "w.json"  # its jobs.csv: 1.6 MB
    subprocess.run([*SCHEDLAB, "workload", "generate", "--jobs", "10000", "--resources", "64", "--seed", "1", "-o",
                    str(path)], check=True, capture_output=True)
    return path


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_simulate_on_a_full_disk_names_the_file_and_keeps_the_earlier_run(small_disk, workload):
    out = small_disk / "sim"
    first = subprocess.run([*SCHEDLAB, "simulate", "-p", "64", "-w", str(workload), "-s", "easy", "-o", str(out),
                            "-q"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = digest(out)
    second = subprocess.run([*SCHEDLAB, "simulate", "-p", "64", "-w", str(workload), "-s", "easy-sjbf", "-o",
                             str(out), "-q"], capture_output=True, text=True)
    assert second.returncode == 1
    assert second.stderr == (f"schedlab: error: cannot write {out}/jobs.csv: No space left on device (the earlier "
                             "complete run there is kept)\n")
    assert digest(out) == before  # no staging folder, no incomplete/, the earlier run as it was


def test_a_campaign_on_a_full_disk_names_the_file_and_leaves_no_partial_file(small_disk, tmp_path):
    campaign = tmp_path / "c.toml"
    campaign.write_text(CAMPAIGN)
    out = small_disk / "c"
    done = subprocess.run([*SCHEDLAB, "experiment", "run", str(campaign), "-o", str(out), "--workers", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schedlab: error: cannot write {out}/runs/"), done.stderr
    assert lines[0].endswith(": No space left on device (nothing was written)") and "Traceback" not in done.stderr
    leftovers = [p.name for p in out.rglob("*") if p.name.endswith(".part")]
    assert leftovers == []  # neither a run cut short nor results.parquet.part
