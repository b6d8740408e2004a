"""Campaigns through dask-jobqueue on a real Slurm, and real sacct exports read back (marker
`slurm`, CI's second pass): a single-node Slurm with accounting from scripts/slurm-local.sh (skipped
with its line where it cannot run: no root, no apt-get).

schedlab is installed here without `-e` (as in a Docker image or from a wheel): an editable install
maps the subpackages wherever the process starts and hid the bug these tests guard, batch jobs that
start in the repository root importing the checkout's `schedlab/` instead of the installed package."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.workloads.slurm import to_trace_jobs
from tests.helpers.services import REPO, service

pytestmark = pytest.mark.slurm
#: what differs between two runs of a campaign: times, and the folder its workloads were made in
#: (their content is compared through workload_sha256)
VARYING = ("scheduling_time_s", "simulation_time_s", "training_time_s", "wall_time_s", "workload_path",
           "platform_path")
SACCT_FIELDS = "JobID,JobName,User,Submit,Start,End,ElapsedRaw,TimelimitRaw,NCPUS,ReqCPUS,State,ExitCode"
#: the batch sacct reads back: (sbatch options, command, the state Slurm gives it)
BATCH = [(["-n", "1", "-t", "2"], "sleep 3", "COMPLETED"),
         (["-n", "2", "-t", "5"], "sleep 6", "COMPLETED"),
         (["-n", "3", "-t", "10"], "sleep 1", "COMPLETED"),
         (["-n", "1", "-t", "3"], "sleep 2; exit 3", "FAILED"),
         (["-n", "1", "-t", "1"], "sleep 600", "TIMEOUT")]  # past its 1-minute limit: killed by Slurm


@pytest.fixture(scope="module")
def slurm_env(tmp_path_factory):
    """The cluster (4 CPUs declared: sleep jobs share the cores beside the Dask workers), the
    environment its clients need, and a dask-jobqueue configuration for it."""
    with service("slurm-local.sh", "--cpus", "4") as stdout:
        conf = stdout.strip().splitlines()[-1]
        folder = tmp_path_factory.mktemp("dask")
        logs = folder / "logs"
        logs.mkdir()
        (folder / "jobqueue.yaml").write_text(json.dumps({"jobqueue": {"slurm": {
            "name": "schedlab-worker", "queue": "debug", "cores": 1, "processes": 1, "memory": "2GB",
            "walltime": "00:30:00", "interface": "lo", "scheduler-options": {"host": "127.0.0.1"},
            "job-script-prologue": [f"export SLURM_CONF={conf}"], "local-directory": str(folder),
            "log-directory": str(logs)}}}))
        yield {**os.environ, "SLURM_CONF": conf, "DASK_CONFIG": str(folder)}


@pytest.fixture(scope="module")
def batch(slurm_env, tmp_path_factory):
    """The sacct batch, submitted first so that it runs (the TIMEOUT job for a minute and more)
    while the campaigns do; its job ids."""
    folder = tmp_path_factory.mktemp("batch")
    ids = []
    for options, command, _ in BATCH:
        done = subprocess.run(["sbatch", "--parsable", "-J", "sacct-check", "-o", str(folder / "%j.out"), *options,
                               "--wrap", command], capture_output=True, text=True, env=slurm_env, check=True)
        ids.append(done.stdout.strip().split(";")[0])
    return ids


@pytest.fixture(scope="module")
def installed(tmp_path_factory, batch):
    """A Python environment with schedlab installed without -e (its dependencies from this one)."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # no .pth of it is read
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-build-isolation", str(REPO)], check=True, capture_output=True)
    schedlab = venv / "bin" / "schedlab"
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import schedlab; print(schedlab.__file__)"],
                           capture_output=True, text=True, check=True, cwd=venv).stdout
    assert where.startswith(str(site))
    return schedlab


def campaign_rows(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path / "results.parquet")
    assert frame["run_id"].is_unique
    return frame.drop(columns=list(VARYING)).sort_values("run_id").reset_index(drop=True)


def run(argv: list, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_dask_slurm_from_the_repository_root_equals_the_pool(installed, slurm_env, tmp_path):
    smoke = "experiments/smoke.toml"
    on_slurm = run([installed, "experiment", "run", smoke, "--dask", "slurm", "--workers", "2", "-o",
                    tmp_path / "slurm"], slurm_env)
    assert on_slurm.returncode == 0, on_slurm.stderr[-2000:]
    pool = run([installed, "experiment", "run", smoke, "--workers", "2", "-o", tmp_path / "pool"], slurm_env)
    assert pool.returncode == 0, pool.stderr[-2000:]
    slurm_rows, pool_rows = campaign_rows(tmp_path / "slurm"), campaign_rows(tmp_path / "pool")
    assert len(slurm_rows) == 176 and slurm_rows["complete"].all()
    pd.testing.assert_frame_equal(slurm_rows, pool_rows)


LONG_CAMPAIGN = """name = "lost-worker"
seeds = [1, 2, 3, 4]
[[workloads]]
name = "lublin"
lublin = { nodes = 128, jobs = 4000 }
[[platforms]]
name = "p"
resources = 128
[[schedulers]]
name = "easy"
options = { queue_order = ["fcfs", "spt", "saf", "wfp3"] }
"""


def start_long_campaign(installed: Path, env: dict, campaign: Path, out: Path) -> subprocess.Popen:
    """LONG_CAMPAIGN written to `campaign` and started on 2 Slurm worker jobs, from the repository root."""
    campaign.write_text(LONG_CAMPAIGN)
    return subprocess.Popen([installed, "experiment", "run", campaign, "--dask", "slurm", "--workers", "2", "-o", out],
                            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_worker_job_cancelled_mid_campaign_loses_and_repeats_nothing(installed, slurm_env, tmp_path):
    campaign, out = tmp_path / "long.toml", tmp_path / "slurm"
    process = start_long_campaign(installed, slurm_env, campaign, out)
    try:
        finished_at_cancel, cancelled = None, None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            finished = [p for p in (out / "runs").glob("*") if not p.name.startswith(".")] if out.exists() else []
            workers = run(["squeue", "-h", "-n", "schedlab-worker", "-t", "RUNNING", "-o", "%i"],
                          slurm_env).stdout.split()
            if len(finished) >= 2 and len(workers) == 2:
                cancelled, finished_at_cancel = workers[0], len(finished)
                assert run(["scancel", cancelled], slurm_env).returncode == 0
                break
            time.sleep(0.2)
        _, stderr = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
    assert cancelled is not None, "the campaign ended before a worker job could be cancelled"
    assert process.returncode == 0, stderr[-2000:]
    assert finished_at_cancel < 16  # runs were still to come when the worker went
    state = run(["sacct", "-n", "-X", "-P", "-j", cancelled, "-o", "State"], slurm_env).stdout
    assert state.startswith("CANCELLED")
    rows = campaign_rows(out)
    assert len(rows) == 16 and rows["complete"].all()
    assert len([p for p in (out / "runs").iterdir() if not p.name.startswith(".")]) == 16  # one folder a run
    again = run([installed, "experiment", "run", campaign, "--dask", "slurm", "--workers", "2", "-o", out], slurm_env)
    assert again.returncode == 0, again.stderr[-2000:]  # nothing to do: the lost worker's begun folder removed
    assert not list((out / "runs").glob(".*.part"))
    pd.testing.assert_frame_equal(campaign_rows(out), rows, check_like=True)  # rows read back: keys sorted
    pool = run([installed, "experiment", "run", campaign, "--workers", "2", "-o", tmp_path / "pool"], slurm_env)
    assert pool.returncode == 0, pool.stderr[-2000:]
    pd.testing.assert_frame_equal(rows, campaign_rows(tmp_path / "pool"))


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                     (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_signal_to_a_slurm_campaign_writes_what_finished_and_cancels_the_workers(installed, slurm_env, tmp_path,
                                                                                   signum, code, said):
    """dask_jobqueue's import set a SIGINT handler exiting with 0: Ctrl-C ended the campaign silently
    with no results.parquet. Now as the pool: exit 130 (143 for SIGTERM, what Slurm sends a job at its
    time limit), the finished runs' rows, the worker jobs gone."""
    campaign, out = tmp_path / "long.toml", tmp_path / "slurm"
    process = start_long_campaign(installed, slurm_env, campaign, out)
    try:
        deadline = time.monotonic() + 300
        while not [p for p in (out / "runs").glob("[!.]*")] if (out / "runs").exists() else True:
            assert time.monotonic() < deadline and process.poll() is None, "no run finished"
            time.sleep(0.1)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stderr[-2000:]
    rows = pd.read_parquet(out / "results.parquet")
    assert 1 <= len(rows) < 16 and rows["complete"].all()
    assert f"{said}: {len(rows)} of 16 runs finished, their rows in {out / 'results.parquet'}" in stderr
    for _ in range(40):  # the workers' jobs are cancelled as the cluster closes
        if not run(["squeue", "-h", "-n", "schedlab-worker", "-o", "%i"], slurm_env).stdout.strip():
            break
        time.sleep(0.25)
    else:
        raise AssertionError("worker jobs outlived the campaign")


def sacct_export(env: dict, ids: list[str], path: Path, *extra: str) -> pd.DataFrame:
    text = run(["sacct", "--parsable2", *extra, "-j", ",".join(ids), f"--format={SACCT_FIELDS}"], env).stdout
    path.write_text(text)
    return pd.read_csv(path, sep="|", dtype=str)


def test_sacct_of_jobs_that_ran_here_reads_back_field_by_field(batch, installed, slurm_env, tmp_path):
    deadline = time.monotonic() + 240  # the TIMEOUT job: its minute, Slurm's time-limit check, KillWait
    while run(["squeue", "-h", "-j", ",".join(batch), "-o", "%i"], slurm_env).stdout.strip():
        assert time.monotonic() < deadline, "the sacct batch did not end"
        time.sleep(1)
    for _ in range(40):  # the end of the last job reaches slurmdbd shortly after
        table = sacct_export(slurm_env, batch, tmp_path / "jobs.txt", "-X")
        if len(table) == len(BATCH) and (table["End"] != "Unknown").all():
            break
        time.sleep(0.5)
    assert list(table["JobID"]) == batch
    assert list(table["State"]) == [state for *_, state in BATCH]
    steps = sacct_export(slurm_env, batch, tmp_path / "steps.txt")  # each job's steps as rows of their own
    assert len(steps) > len(table)
    stamps = {name: (pd.to_datetime(table[name]) - pd.Timestamp(0)).dt.total_seconds() for name in ("Submit", "End")}
    origin = stamps["Submit"].min()
    for name in ("jobs.txt", "steps.txt"):
        out = tmp_path / f"{name}.json"
        done = run([installed, "workload", "from-table", tmp_path / name, "-o", out, "--platform-size", "4",
                    "--keep-zero-runtime"], slurm_env)
        assert done.returncode == 0, done.stderr
        workload = json.loads(out.read_text())
        jobs = {str(job["id"]): job for job in workload["jobs"]}  # numbers, as sacct's ids are
        assert list(jobs) == batch
        for row, submit in zip(table.itertuples(), stamps["Submit"], strict=True):
            job = jobs[row.JobID]
            assert job["subtime"] == submit - origin
            assert job["walltime"] == int(row.TimelimitRaw) * 60
            assert job["res"] == int(row.ReqCPUS) == int(row.NCPUS)
            assert workload["profiles"][job["profile"]]["delay"] == int(row.ElapsedRaw)
        trace = to_trace_jobs(tmp_path / name)
        kept = np.ones(len(trace), dtype=bool) if trace.steps is None else ~trace.steps  # ids read as numbers
        assert [str(i) for i in trace.job_ids[kept]] == batch
        completion, unknown = trace.end_s(trace.run_s)
        assert not unknown[kept].any()
        assert np.array_equal(completion[kept], (stamps["End"] - origin).to_numpy(dtype=float))
        assert list(trace.status[kept]) == [1.0 if state == "COMPLETED" else 0.0 for *_, state in BATCH]
    timeout = table.iloc[-1]
    assert int(timeout.ElapsedRaw) >= 60 == int(timeout.TimelimitRaw) * 60
