"""Metrics are checked: hand-computed values, the same read back from our jobs.csv and from real
Batsim's, Batsim's own schedule.csv figures, and a published figure (KTH-SP2 EASY AVEbsld)."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys

import pytest

from schedlab.engine import Engine
from schedlab.metrics import compute_metrics, read_jobs_csv
from schedlab.model import Platform
from schedlab.outputs import outcomes, write_outputs
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import create_scheduler
from tests.helpers.data import BATSIM_DATA, SHARED_DATA, make_workload, need_shared
from tests.helpers.workloads import SPECS

# The EASY golden case (tests/test_schedulers_golden.py), by hand:
#   job  submit res  start finish  wait  turnaround  execution  slowdown  bounded (tau 10 s)
#   A      0    3     0     10      0       10          10        1         max(10/10, 1) = 1
#   C      2    1     2     10      0        8           8        1         max(8/10, 1)  = 1
#   B      1    4    10     15      9       14           5        2.8       14/10         = 1.4
#   D      2    1    15     19     13       17           4        4.25      17/10         = 1.7
#   E     20    2    20     25      0        5           5 (killed) 1       max(5/10, 1)  = 1
#   F     21    5    rejected (larger than the platform): counted, excluded from the means
# area = 3*10 + 1*8 + 4*5 + 1*4 + 2*5 = 72 over 4 resources x (25 - 0) s -> utilisation 0.72
GOLDEN = {
    "nb_jobs": 6, "nb_jobs_ran": 5,
    "jobs_per_state": {"COMPLETED_SUCCESSFULLY": 4, "COMPLETED_WALLTIME_REACHED": 1, "REJECTED": 1},
    "makespan_s": 25.0,
    "mean_waiting_time_s": 22 / 5, "max_waiting_time_s": 13.0,
    "mean_turnaround_time_s": 54 / 5, "max_turnaround_time_s": 17.0,
    "mean_slowdown": (1 + 1 + 2.8 + 4.25 + 1) / 5, "max_slowdown": 4.25,
    "mean_bounded_slowdown": (1 + 1 + 1.4 + 1.7 + 1) / 5, "max_bounded_slowdown": 1.7,
    "bounded_slowdown_tau_s": 10.0, "utilisation": 0.72, "nb_resources": 4,
    # waits 0, 0, 9, 13, 0 s: all under a minute
    "share_wait_lt_1min": 1.0, "share_wait_lt_10min": 1.0, "share_wait_lt_1h": 1.0, "share_wait_lt_6h": 1.0,
    "nb_wait_gt_1day": 0,
}


def test_waiting_time_shares_by_hand():
    from schedlab.metrics import Outcome

    waits = [30, 59.9, 60, 599, 3600, 21599, 86401]  # s
    got = compute_metrics([Outcome(str(i), 0.0, 1, "COMPLETED_SUCCESSFULLY", w, w + 5) for i, w in enumerate(waits)]
                          + [Outcome("r", 0.0, 9, "REJECTED", None, None)], 1)
    assert (got["share_wait_lt_1min"], got["share_wait_lt_10min"], got["share_wait_lt_1h"],
            got["share_wait_lt_6h"], got["nb_wait_gt_1day"]) == (2 / 7, 4 / 7, 4 / 7, 6 / 7, 1)
#: KTH-SP2 EASY average bounded slowdown reported by predictsim (Gaussier et al., SC'15 code).
KTH_EASY_AVEBSLD_PREDICTSIM = 92.58


def assert_metrics(got: dict, expected: dict, rel: float = 1e-12, abs_: float = 0.0) -> None:
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=rel, abs=abs_), key
        else:
            assert got[key] == value, key


def golden_run() -> Engine:
    engine = Engine(Platform.homogeneous(4), make_workload(SPECS, nb_res=4), create_scheduler("easy"))
    engine.run()
    return engine


def test_the_columns_metrics_need_are_batsims():
    from schedlab.metrics import REQUIRED_JOBS_COLUMNS
    from schedlab.outputs import JOBS_COLUMNS

    assert set(REQUIRED_JOBS_COLUMNS) <= set(JOBS_COLUMNS)


def test_hand_computed_metrics():
    assert_metrics(compute_metrics(outcomes(golden_run().records.values()), 4), GOLDEN)


def test_the_same_metrics_from_our_jobs_csv_and_summary(tmp_path):
    summary = write_outputs(golden_run(), tmp_path, run_info={}, simulation_time_s=0.0)
    assert_metrics(summary["metrics"], GOLDEN)
    assert_metrics(compute_metrics(read_jobs_csv(tmp_path / "jobs.csv"), 4), GOLDEN)
    assert_metrics(json.loads((tmp_path / "summary.json").read_text())["metrics"], GOLDEN)


def test_metrics_of_a_real_batsim_jobs_csv_equal_batsims_own_schedule_csv():
    """Batsim 4.2.1's schedule.csv (batsched easy_bf, 800 jobs): its means divide by every job; none
    is rejected here, so they are ours."""
    ours = compute_metrics(read_jobs_csv(BATSIM_DATA / "cluster512_paper32_easy_bf_jobs.csv"), 32)
    with (BATSIM_DATA / "cluster512_paper32_easy_bf_schedule.csv").open() as handle:
        theirs = next(csv.DictReader(handle))
    assert ours["nb_jobs"] == int(theirs["nb_jobs"]) == 800 and theirs["nb_jobs_rejected"] == "0"
    for mine, batsim in [("makespan_s", "makespan"), ("mean_waiting_time_s", "mean_waiting_time"),
                         ("max_waiting_time_s", "max_waiting_time"), ("mean_turnaround_time_s", "mean_turnaround_time"),
                         ("max_turnaround_time_s", "max_turnaround_time"), ("mean_slowdown", "mean_slowdown"),
                         ("max_slowdown", "max_slowdown")]:
        assert ours[mine] == pytest.approx(float(theirs[batsim]), rel=1e-6), mine


@pytest.mark.batsim
def test_the_same_metrics_from_a_real_batsim_run_of_the_golden_case(tmp_path):
    """Real Batsim + `schedlab serve easy` on the golden case: its jobs.csv gives the hand-computed
    metrics, up to Batsim's simulated message latencies (milliseconds)."""
    from tests.helpers.real_batsim import run_real_batsim

    (tmp_path / "p.xml").write_text(cluster_xml(4))
    (tmp_path / "w.json").write_text(json.dumps(make_workload(SPECS, nb_res=4).to_json()))
    run_real_batsim(tmp_path, tmp_path / "p.xml", tmp_path / "w.json",
                    [sys.executable, "-m", "schedlab", "serve", "easy", "--socket", "{socket}"])
    real = compute_metrics(read_jobs_csv(tmp_path / "out_jobs.csv"), 4)
    assert_metrics(real, GOLDEN, rel=0.0, abs_=0.05)


@pytest.mark.traces
def test_kth_sp2_easy_bounded_slowdown_against_the_published_figure(tmp_path):
    """predictsim reports AVEbsld 92.58 for EASY on this KTH-SP2 file with its own conversion. Ours
    (default conversion: the 8 jobs with run time 0 dropped, requested times as walltimes, 513 jobs
    killed at them, 100 resources, tau 10 s) gives 92.69: +0.12%."""
    trace = need_shared(SHARED_DATA / "swf" / "KTH-SP2-1996-2_predictsim-unfiltered.swf.gz")
    (tmp_path / "p.xml").write_text(cluster_xml(100))
    done = subprocess.run([sys.executable, "-m", "schedlab", "workload", "from-swf", str(trace),
                           "-o", str(tmp_path / "w.json")], capture_output=True, text=True, check=True)
    assert "28481 of 28489 jobs kept" in done.stdout
    subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-p", str(tmp_path / "p.xml"),
                    "-w", str(tmp_path / "w.json"), "-s", "easy", "-o", str(tmp_path / "o"), "-q"], check=True)
    metrics = json.loads((tmp_path / "o" / "summary.json").read_text())["metrics"]
    ours = metrics["mean_bounded_slowdown"]
    assert math.isclose(ours, 92.69, abs_tol=0.01)
    assert abs(ours - KTH_EASY_AVEBSLD_PREDICTSIM) / KTH_EASY_AVEBSLD_PREDICTSIM < 0.005
