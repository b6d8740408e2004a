"""Hand-computed schedules where FCFS, EASY and EASY-SJBF differ (4 resources)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.model import JobState, Platform
from schedlab.outputs import JOBS_COLUMNS, job_row
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.easy_machines import _lowest_of_union
from tests.helpers.data import make_workload
from tests.helpers.workloads import SPECS

K, S, R = JobState.COMPLETED_WALLTIME_REACHED, JobState.COMPLETED_SUCCESSFULLY, JobState.REJECTED

EXPECTED = {  # job -> (start, finish, alloc, state)
    "fcfs": {"A": (0, 10, "0-2", S), "B": (10, 15, "0-3", S), "C": (15, 23, "0", S), "D": (15, 19, "1", S),
             "E": (20, 25, "1-2", K), "F": (None, None, None, R)},
    "easy": {"A": (0, 10, "0-2", S), "C": (2, 10, "3", S), "B": (10, 15, "0-3", S), "D": (15, 19, "0", S),
             "E": (20, 25, "0-1", K), "F": (None, None, None, R)},
    "easy-sjbf": {"A": (0, 10, "0-2", S), "D": (2, 6, "3", S), "B": (10, 15, "0-3", S), "C": (15, 23, "0", S),
                  "E": (20, 25, "1-2", K), "F": (None, None, None, R)},
}


def run(name: str, **options) -> Engine:
    engine = Engine(Platform.homogeneous(4), make_workload(SPECS), create_scheduler(name, options))
    engine.run()
    return engine


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hand_computed_schedule(name):
    engine = run(name)
    got = {}
    for record in engine.records.values():
        alloc = None if record.alloc is None else str(record.alloc)
        got[record.job.name] = (record.start_s, record.finish_s, alloc, record.state)
    assert got == EXPECTED[name]


def test_easy_jobs_csv_golden_bytes():
    engine = run("easy")
    rows = [",".join(JOBS_COLUMNS)] + [job_row(engine.records[j]) for j in engine.finished]
    assert "\n".join(rows) == "\n".join([
        ",".join(JOBS_COLUMNS),
        "A,w0,pA,0.000000,3,12.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,10.000000,0.000000,"
        '10.000000,1.000000,0-2,-1.000000,""',
        "C,w0,pC,2.000000,1,9.000000,1,COMPLETED_SUCCESSFULLY,2.000000,8.000000,10.000000,0.000000,"
        '8.000000,1.000000,3,-1.000000,""',
        "B,w0,pB,1.000000,4,6.000000,1,COMPLETED_SUCCESSFULLY,10.000000,5.000000,15.000000,9.000000,"
        '14.000000,2.800000,0-3,-1.000000,""',
        "D,w0,pD,2.000000,1,5.000000,1,COMPLETED_SUCCESSFULLY,15.000000,4.000000,19.000000,13.000000,"
        '17.000000,4.250000,0,-1.000000,""',
        # rows in completion order: F is rejected at 21, before E is killed at 25
        'F,w0,pF,21.000000,5,2.000000,0,REJECTED,,,,,,,,,"requests 5 resources, platform has 4"',
        "E,w0,pE,20.000000,2,5.000000,0,COMPLETED_WALLTIME_REACHED,20.000000,5.000000,25.000000,0.000000,"
        '5.000000,1.000000,0-1,-1.000000,""',
    ])


def test_easy_reservation_of_blocked_head_is_recorded():
    engine = run("easy")
    # B's shadow time is A's walltime end (12); it started earlier, when A really ended.
    assert engine.scheduler.head_reservations_s["w0!B"] == 12.0
    assert engine.records["w0!B"].start_s == 10.0


def test_queue_order_spt_lets_short_jobs_jump_the_queue():
    # One resource; while X runs, Y (long) and Z (short) arrive: SPT starts Z first, FCFS starts Y.
    specs = [("X", 0, 1, 10, 10.5), ("Y", 1, 1, 50, 60), ("Z", 2, 1, 5, 6)]
    starts = {}
    for order in ("fcfs", "spt"):
        engine = Engine(Platform.homogeneous(1), make_workload(specs),
                        create_scheduler("fcfs", {"queue_order": order}))
        engine.run()
        starts[order] = {r.job.name: r.start_s for r in engine.records.values()}
    assert starts["fcfs"] == {"X": 0, "Y": 10, "Z": 60}
    assert starts["spt"] == {"X": 0, "Z": 10, "Y": 15}


def test_machine_reservation_mode_on_the_hand_computed_case():
    """batsched's rule: C (2+9 <= 12) backfills on machine 3, which B's reservation (machines 0-3 from
    t=12) needs only after C ends. With rjms_delay 5 s every estimate grows by 5 s: the reservation
    moves to 17 and C (2+14 <= 17) still fits."""
    exact = run("easy", reservation="machines", rjms_delay_s=0.0)
    assert exact.scheduler.head_reservations_s["w0!B"] == 12.0
    assert (exact.records["w0!C"].start_s, exact.records["w0!B"].start_s) == (2.0, 10.0)
    padded = run("easy", reservation="machines")  # walltimes + 5 s: A ends at 17 by estimate
    assert padded.scheduler.head_reservations_s["w0!B"] == 17.0
    assert padded.records["w0!C"].start_s == 2.0 and padded.records["w0!D"].start_s == 15.0


@pytest.mark.parametrize("first_size", [6, 5])
def test_easy_counts_every_job_ending_at_the_shadow_time(first_size):
    """16 resources, all submitted at t=6. Jobs 0 and 1 (6 and 5 resources, either order) start and
    end by estimate at 3966; head 2 needs 6 of the 5 free. At the shadow time both have ended, so all
    16 are free and extra = 10: job 3 (5 resources, long walltime) may backfill now, whichever of jobs
    0 and 1 is counted first (counting only one of them gives extra 5 or 4)."""
    second_size = 11 - first_size
    specs = [("0", 6, first_size, 3000, 3960), ("1", 6, second_size, 3000, 3960),
             ("2", 6, 6, 100, 200), ("3", 6, 5, 5000, 6000)]
    engine = Engine(Platform.homogeneous(16), make_workload(specs), create_scheduler("easy"))
    engine.run()
    starts = {r.job.name: r.start_s for r in engine.records.values()}
    assert starts == {"0": 6.0, "1": 6.0, "2": 3006.0, "3": 6.0}
    assert engine.scheduler.head_reservations_s["w0!2"] == 3966.0


def _runs(ids):
    runs = []
    for i in sorted(ids):
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


@given(st.sets(st.integers(0, 63), min_size=1), st.data())
def test_machine_mode_takes_the_lowest_ids_of_a_union_of_disjoint_machine_sets(ids, data):
    """The priority job's machines: the `count` lowest ids of the free runs and the runs of jobs
    ending by its start, adjacent runs joined (procset requires it), without building the union."""
    owner = {i: data.draw(st.integers(0, 3)) for i in sorted(ids)}
    parts = [_runs(i for i in ids if owner[i] == part) for part in range(4)]
    count = data.draw(st.integers(1, len(ids)))
    assert _lowest_of_union(parts, count) == _runs(sorted(ids)[:count])


def test_a_sort_window_sorts_only_the_first_arrived_jobs():
    """1 core, busy until 10 s. Waiting: a (p 50), b (p 40), c (p 5), all submitted before 10 s in
    that order. SPT on the whole queue runs c, b, a; with sort_window = 2 only a and b are sorted
    (b first), then the window is a and c: c, then a."""
    from schedlab.engine import Engine
    from schedlab.model import Platform
    from schedlab.schedulers.base import create_scheduler
    from tests.helpers.data import make_workload

    specs = [("busy", 0, 1, 10, 10), ("a", 1, 1, 50, 50), ("b", 2, 1, 40, 40), ("c", 3, 1, 5, 5)]
    starts = {}
    for window in ("0", "2"):
        engine = Engine(Platform.homogeneous(1), make_workload(specs),
                        create_scheduler("fcfs", {"queue_order": "spt", "sort_window": window}))
        engine.run()
        starts[window] = {k.split("!")[1]: r.start_s for k, r in engine.records.items()}
    assert starts["0"] == {"busy": 0.0, "c": 10.0, "b": 15.0, "a": 55.0}
    assert starts["2"] == {"busy": 0.0, "b": 10.0, "c": 50.0, "a": 55.0}
