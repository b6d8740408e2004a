"""SIGTERM and SIGHUP do what Ctrl-C does (`timeout`, `kill`, `docker stop`, Slurm at a time limit, a
closed terminal): real signals sent to real processes. What finished is written, the message says
where, the exit code is 128 + the signal (README, exit codes), and no worker outlives its parent,
even one killed with SIGKILL. (Campaigns on Slurm: tests/test_slurm_cluster.py.)"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from schedlab.runs import STAGING_PREFIX
from tests.helpers.cli import campaign_file

SCHEDLAB = [sys.executable, "-m", "schedlab"]
# SIGTERM by default; SIGHUP (the same handler, another code) and SIGKILL in CI's second pass
STOPS = [(signal.SIGTERM, 143, "terminated (SIGTERM)"),
         pytest.param(signal.SIGHUP, 129, "terminated (SIGHUP)", marks=pytest.mark.slow)]


def descendants(pid: int) -> list[int]:
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(c) for c in children] + [g for c in children for g in descendants(int(c))]


def running(pid: int) -> bool:
    """Alive and not a zombie (a dead orphan may wait unreaped under this sandbox's PID 1)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def none_left(pids: list[int], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while any(running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_for(condition, process: subprocess.Popen, what: str, within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    while not condition():
        assert process.poll() is None, f"ended before {what}: {process.communicate()[1][-1500:]}"
        assert time.monotonic() < deadline, f"no {what} within {within_s} s"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def big_workload(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "w.json"  # EASY on it runs for seconds
    subprocess.run([*SCHEDLAB, "workload", "generate", "--jobs", "60000", "--resources", "64", "--seed", "1", "-o",
                    str(path)], check=True, capture_output=True)
    return path


@pytest.mark.parametrize(("signum", "code", "said"), STOPS)
def test_simulate_writes_what_finished_on_sigterm_and_sighup(big_workload, tmp_path, signum, code, said):
    out = tmp_path / "o"
    process = subprocess.Popen([*SCHEDLAB, "simulate", "-p", "64", "-w", str(big_workload), "-s", "easy", "-o",
                                str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: out.is_dir() and any(p.name.startswith(STAGING_PREFIX) for p in out.iterdir()), process,
             "engine start")
    time.sleep(0.8)  # the engine built and running (under load, building 60,000 jobs can take 0.3 s)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)  # within any sender's grace (docker stop: 10 s)
    assert process.returncode == code
    assert err.strip().splitlines()[-1] == f"schedlab: {said} (partial results in {out}, marked incomplete)"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["error"] == said
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv", "schedule.csv", "summary.json"]  # no staging


@pytest.mark.parametrize(("signum", "code", "said"),
                         [*STOPS, pytest.param(signal.SIGKILL, -9, None, marks=pytest.mark.slow)])
def test_a_campaign_stopped_by_a_signal_leaves_no_worker(tmp_path, signum, code, said):
    path = campaign_file(tmp_path, jobs=6000)
    out = tmp_path / "o"
    process = subprocess.Popen([*SCHEDLAB, "experiment", "run", str(path), "-o", str(out), "--workers", "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: len(list((out / "runs").glob("[0-9a-f]*"))) >= 1, process, "finished run")
    workers = descendants(process.pid)
    assert len(workers) >= 2
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == code
    assert none_left(workers)  # SIGKILL too: each worker dies with its parent
    if said is not None:
        finished = sorted(pd.read_parquet(out / "results.parquet")["run_id"])
        assert err.strip().splitlines()[-1] == (f"schedlab: {said}: {len(finished)} of 12 runs finished, their "
                                                f"rows in {out / 'results.parquet'}; the same command resumes")
        assert "Traceback" not in err
    rerun = subprocess.run([*SCHEDLAB, "experiment", "run", str(path), "-o", str(out), "--workers", "2", "-q"],
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-1500:]  # resumes, whatever stopped it
    assert len(pd.read_parquet(out / "results.parquet")) == 12


@pytest.mark.slow  # a Dask local campaign's results: test_experiments, by default
def test_a_dask_local_campaign_stops_its_cluster_on_sigterm(tmp_path):
    pytest.importorskip("distributed")
    path = campaign_file(tmp_path, jobs=6000)
    out = tmp_path / "o"
    process = subprocess.Popen([*SCHEDLAB, "experiment", "run", str(path), "-o", str(out), "--dask", "local",
                                "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: len(list((out / "runs").glob("[0-9a-f]*"))) >= 1, process, "finished run")
    workers = descendants(process.pid)
    assert workers  # the cluster's processes
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 143, err[-1500:]
    assert "terminated (SIGTERM)" in err and (out / "results.parquet").is_file()
    assert none_left(workers, within_s=15)


def test_serve_stops_on_sigterm(tmp_path):
    import socket

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([*SCHEDLAB, "serve", "easy", "--socket", f"tcp://127.0.0.1:{port}", "--record",
                                str(tmp_path / "r.jsonl")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and "listening on" in process.stdout.readline()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=15)
    assert process.returncode == 143 and err.strip() == "schedlab: terminated (SIGTERM)"
    assert not (tmp_path / "r.jsonl").exists()  # a recording cut short never takes the record's name


def test_scheduler_check_stops_its_children_on_sigterm(tmp_path):
    process = subprocess.Popen([*SCHEDLAB, "scheduler", "check", "easy"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    children: list[int] = []

    def has_children() -> bool:
        children[:] = descendants(process.pid)
        return bool(children)

    wait_for(has_children, process, "child process")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 143 and err.strip().splitlines()[-1] == "schedlab: terminated (SIGTERM)"
    assert none_left(children)


VECTOR = """import gymnasium, os, schedlab.rl
envs = gymnasium.make_vec("schedlab/Scheduling-v0", num_envs=2, vectorization_mode="async")
envs.reset(seed=0)
print("ready", flush=True)
while True:
    envs.step(envs.action_space.sample())
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_vector_environment_workers_die_with_their_parent(tmp_path, signum):
    pytest.importorskip("gymnasium")
    process = subprocess.Popen([sys.executable, "-c", VECTOR], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    workers = descendants(process.pid)
    assert len(workers) == 2
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert none_left(workers)
    assert "Traceback" not in err  # not a BrokenPipeError from each worker's next reply
