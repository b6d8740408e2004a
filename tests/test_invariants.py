"""Schedule invariants over random small workloads, for every scheduler (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from schedlab.engine import Engine
from schedlab.model import JobState, Platform
from schedlab.schedulers.base import all_schedulers, create_scheduler
from schedlab.schedulers.policies import get_policy
from tests.helpers.data import TEST_DATA, examples, make_workload
from tests.helpers.invariants import PLAN_MODES, check_invariants, render, scenarios, simulate, watch_plan

# diws and the EASY-with-predictor schedulers need a predictor: a point learner here (diws's invariants
# with models are in tests/test_diws.py, a distribution's in tests/test_probabilistic.py)
NEEDS_PREDICTOR = ("diws", "easy-predicted", "easy-prob")
#: the `policy` scheduler needs a policy: fixed ones (tests/data/policies.py), with and without backfill
POLICIES = str(TEST_DATA / "policies.py")
CONFIGS = [(name, {}) for name in sorted(all_schedulers()) if name not in (*NEEDS_PREDICTOR, "policy")] + [
    ("policy", {"policy": f"{POLICIES}:shortest_requested"}), ("policy", {"policy": f"{POLICIES}:first_allowed",
                                                                         "max_queue": 2}),
    ("policy", {"policy": f"{POLICIES}:shortest_requested", "backfill": True, "max_queue": 3}),
    ("easy-predicted", {"learner": "user-last2", "quantile": 0.9}),
    ("easy-prob", {"learner": "user-last2", "p": 0.5, "overrun": "tsafrir"}),
    ("easy", {"queue_order": "spt"}), ("easy", {"queue_order": "wfp3"}), ("fcfs", {"queue_order": "saf"}),
    ("easy-sjbf", {"queue_order": "f2"}), ("easy", {"reservation": "machines"}),
    ("easy", {"reservation": "machines", "rjms_delay_s": 0.0}),
    # the policies study's functions, both modes: a strict list (fcfs) and EASY
    *[(mode, {"queue_order": order}) for mode in ("fcfs", "easy")
      for order in ("lin", "qdr:ctc", "cub:sdsc", "qua", "unicef", "f2")],
    ("fcfs", {"queue_order": "wfp3"}),
    # the policies authors' tester: only the first N arrived jobs sorted
    ("fcfs", {"queue_order": "spt", "sort_window": 3}), ("fcfs", {"queue_order": "wfp3", "sort_window": 2}),
]
#: queue orders of the strict-list property: static ones, the study's polynomials, dynamic ones
STRICT_ORDERS = ("fcfs", "spt", "saf", "f2", "lin", "qdr", "cub:ctc", "qua:sdsc", "wfp3", "unicef")


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_schedule_invariants(name, options, scenario):
    nb_res, specs = scenario
    engine = simulate(nb_res, specs, name, options)
    check_invariants(engine, nb_res)
    # same input -> same bytes
    again = simulate(nb_res, specs, name, options)
    assert render(engine) == render(again)


@pytest.mark.parametrize(("name", "options"), [("easy", {}), ("easy-sjbf", {}), ("easy", {"reservation": "machines"}),
                                              ("fcfs-bf1", {"runtime": "requested"}),
                                              ("fcfs-bf2", {"runtime": "requested"}),
                                              ("easy", {"backfill_order": "svf"}),
                                              ("policy", {"policy": f"{POLICIES}:shortest_requested", "backfill": True,
                                                          "max_queue": 3})])
@settings(max_examples=examples(200), deadline=None)
@given(scenario=scenarios())
def test_easy_never_starts_the_head_after_its_reservation(name, options, scenario):
    """With walltimes as estimates (run times never exceed them), the head's reservation holds."""
    nb_res, specs = scenario
    specs = [(n, s, r, d, w if w is not None else d + 5) for n, s, r, d, w in specs]
    engine = simulate(nb_res, specs, name, options)
    reservations = engine.scheduler.head_reservations_s
    for job_id, shadow_s in reservations.items():
        assert engine.records[job_id].start_s <= shadow_s, job_id


@pytest.mark.parametrize(("name", "options"), [("easy", {}), ("easy-sjbf", {}), ("easy", {"queue_order": "spt"})])
@settings(max_examples=examples(100), deadline=None)
@given(scenario=scenarios())
def test_easy_plan_is_consistent_and_needs_no_full_pass(name, options, scenario):
    nb_res, specs = scenario
    engines = [Engine(Platform.homogeneous(nb_res), make_workload(specs),
                      watch_plan(create_scheduler(name, options), mode)) for mode in PLAN_MODES]
    for engine in engines:
        engine.run()
    assert render(engines[0]) == render(engines[1]) == render(engines[2])


@settings(max_examples=examples(100), deadline=None)
@given(scenario=scenarios())
def test_easy_is_never_worse_than_fcfs_for_the_first_blocked_job(scenario):
    """A sanity relation: every job FCFS starts at time 0 also starts at 0 under EASY."""
    nb_res, specs = scenario
    fcfs = simulate(nb_res, specs, "fcfs", {})
    easy = simulate(nb_res, specs, "easy", {})
    for job_id, record in fcfs.records.items():
        if record.start_s == 0.0:
            assert easy.records[job_id].start_s == 0.0


@pytest.mark.parametrize("queue_order", STRICT_ORDERS)
@settings(max_examples=examples(80), deadline=None)
@given(scenario=scenarios())
def test_the_strict_list_never_starts_a_job_before_an_earlier_ranked_one(queue_order, scenario):
    """`fcfs -O queue_order=X`: when a job starts, every job waiting since before that instant
    ranks after it by X at that instant (dynamic policies are ranked at the start time)."""
    nb_res, specs = scenario
    engine = simulate(nb_res, specs, "fcfs", {"queue_order": queue_order})
    policy = get_policy(queue_order)
    started = [r for r in engine.records.values() if r.state is not JobState.REJECTED]
    arrival = {job.id: index for index, job in enumerate(engine.workload.jobs)}  # ties: submission order
    for record in started:
        now = record.start_s

        def rank(job, now=now):
            estimate = job.walltime_s if job.walltime_s is not None else float("inf")
            return (policy.score(job, estimate, now), job.submit_time_s, arrival[job.id])

        for other in started:
            if other.job.submit_time_s < now < other.start_s:  # waiting when `record` started
                assert rank(other.job) > rank(record.job), (record.job.id, other.job.id, now)
