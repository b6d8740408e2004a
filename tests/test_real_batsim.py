"""Against real Batsim 4.2.1 (marker `batsim`; skipped with a reason when it is not installed).

Batsim is found in $SCHEDLAB_BATSIM_PREFIX/bin, else ~/.cache/schedlab/batsim-4.2.1/bin, else PATH
(`bash scripts/install-batsim.sh` builds it).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from procset import ProcSet

from schedlab.engine import Engine
from schedlab.platform import parse_platform_xml
from schedlab.platforms.generate import cluster_xml
from schedlab.protocol.client import ExternalDecisionProcess, free_loopback_port
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate

pytestmark = pytest.mark.batsim


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


def inputs(tmp_path: Path, nb_jobs: int = 150, nb_res: int = 32, seed: int = 5):
    workload = generate(nb_jobs=nb_jobs, nb_resources=nb_res, seed=seed, load=0.6)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    (tmp_path / "p.xml").write_text(cluster_xml(nb_res))
    return workload, parse_platform_xml(cluster_xml(nb_res))


@pytest.mark.parametrize("name", ["fcfs", "easy", "easy-sjbf"])
def test_real_batsim_with_schedlab_serve_respects_invariants(tmp_path, name):
    workload, platform = inputs(tmp_path)
    rows = run_real_batsim(tmp_path, tmp_path / "p.xml", tmp_path / "w.json",
                           [sys.executable, "-m", "schedlab", "serve", name, "--socket", "{socket}"])
    assert len(rows) == len(workload.jobs)
    busy: dict[int, list[tuple[float, float]]] = {}
    for row in rows:
        assert float(row["starting_time"]) >= float(row["submission_time"])
        alloc = ProcSet.from_str(row["allocated_resources"])
        assert len(alloc) == int(row["requested_number_of_resources"])
        for r in alloc:
            busy.setdefault(r, []).append((float(row["starting_time"]), float(row["finish_time"])))
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-6 for a, b in itertools.pairwise(spans))
    if name == "fcfs":  # FCFS is insensitive to Batsim's message latencies: starts agree within 1 s
        engine = Engine(platform, workload, create_scheduler(name))
        engine.run()
        ours = {r.job.name: r.start_s for r in engine.records.values()}
        for row in rows:
            assert abs(float(row["starting_time"]) - ours[row["job_id"]]) < 1.0, row["job_id"]


def test_engine_hosts_real_batsched_fcfs_like_real_batsim(tmp_path):
    batsched = find_tool("batsched")
    workload, platform = inputs(tmp_path)
    rows = run_real_batsim(tmp_path, tmp_path / "p.xml", tmp_path / "w.json",
                           [batsched, "-v", "fcfs_fast", "-s", "{socket}"])
    external = ExternalDecisionProcess(f"{batsched} -v fcfs_fast -s {{socket}}", workload=workload, timeout_s=60)
    try:
        engine = Engine(platform, workload, external)
        engine.run()
    finally:
        external.close()
    ours = {r.job.name: r.start_s for r in engine.records.values()}
    for row in rows:
        assert abs(float(row["starting_time"]) - ours[row["job_id"]]) < 1.0, row["job_id"]
