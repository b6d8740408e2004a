"""`simulate --timing batsim` against real Batsim 4.2.1 (marker `batsim`): jobs.csv equal byte for
byte, on overloaded workloads with simultaneous submissions, simultaneous ends and walltime kills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab.workloads.synthetic import ties_and_kills
from tests.conftest import BATSIM_DATA
from tests.test_real_batsim import find_tool, run_real_batsim

pytestmark = pytest.mark.batsim
ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = {"cluster512": (BATSIM_DATA / "cluster512.xml", 512),
             **{name: (ROOT / "platforms" / f"{name}.xml", size)
                for name, size in (("lublin256", 256), ("constrained512", 512), ("marconi100", 15680))}}
SCHEDULERS = {"fcfs": ["fcfs"], "easy": ["easy"], "easy-sjbf": ["easy-sjbf"],
              "easy-machines": ["easy", "-O", "reservation=machines"]}


def simulate_batsim_timing(tmp_path: Path, platform: Path, workload: Path, args: list[str]) -> list[str]:
    out = tmp_path / "ours"
    done = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", str(platform), "-w",
                           str(workload), "--timing", "batsim", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "summary.json").read_text())["message_timing"] == "batsim"
    return (out / "jobs.csv").read_text().splitlines()


def real_rows(tmp_path: Path, platform: Path, workload: Path, scheduler_argv: list[str]) -> list[str]:
    run_real_batsim(tmp_path / "real", platform, workload, scheduler_argv)
    return (tmp_path / "real" / "out_jobs.csv").read_text().splitlines()


def differing(real: list[str], ours: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(real, ours, strict=False) if a != b] + [("", "")] * abs(len(real) - len(ours))


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_jobs_csv_equals_real_batsim_with_schedlab_serve(tmp_path, platform, scheduler):
    path, size = PLATFORMS[platform]
    workload = tmp_path / "w.json"
    seed = len(platform) + len(scheduler)
    workload.write_text(json.dumps(ties_and_kills(nb_jobs=3000, nb_resources=size, seed=seed)))
    argv = SCHEDULERS[scheduler]
    real = real_rows(tmp_path, path, workload, [sys.executable, "-m", "schedlab", "serve", *argv,
                                                 "--socket", "{socket}"])
    ours = simulate_batsim_timing(tmp_path, path, workload, ["-s", *argv])
    assert len(real) == 3001
    assert differing(real, ours) == []


@pytest.mark.parametrize("platform", ["cluster512", "lublin256"])
def test_engine_hosting_batsched_equals_real_batsim_with_batsched(tmp_path, platform):
    batsched = find_tool("batsched")
    path, size = PLATFORMS[platform]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(ties_and_kills(nb_jobs=3000, nb_resources=size, seed=7)))
    real = real_rows(tmp_path, path, workload, [batsched, "-v", "easy_bf", "-s", "{socket}"])
    ours = simulate_batsim_timing(tmp_path, path, workload, ["--external", f"{batsched} -v easy_bf -s {{socket}}"])
    assert len(real) == 3001
    assert differing(real, ours) == []
