"""Schedule invariants over random small workloads, for every scheduler (hypothesis)."""

from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.model import JobState, Platform
from schedlab.outputs import job_row
from schedlab.schedulers.base import all_schedulers, create_scheduler
from schedlab.schedulers.policies import get_policy
from tests.conftest import examples, make_workload

# diws needs a predictor: its invariants are checked in tests/test_diws.py
CONFIGS = [(name, {}) for name in sorted(all_schedulers()) if name != "diws"] + [
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


@st.composite
def scenarios(draw):
    nb_res = draw(st.integers(1, 8))
    nb_jobs = draw(st.integers(0, 25))
    specs = []
    for i in range(nb_jobs):
        submit = draw(st.integers(0, 60))
        res = draw(st.integers(1, nb_res + 1))  # sometimes too large: must be rejected
        delay = draw(st.integers(1, 40))
        walltime = draw(st.one_of(st.none(), st.integers(1, 50)))
        specs.append((str(i), submit, res, delay, walltime))
    return nb_res, specs


def simulate(nb_res, specs, name, options):
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler(name, options))
    engine.run()
    return engine


def check_invariants(engine: Engine, nb_res: int) -> None:
    delays = {p.name: p.delay_s for p in engine.workload.profiles.values()}
    # each job decided exactly once, and written exactly once
    assert sorted(engine.finished) == sorted(engine.records)
    intervals = {r: [] for r in range(nb_res)}
    for record in engine.records.values():
        job = record.job
        if record.state is JobState.REJECTED:
            # only impossible jobs are rejected (and, as batsched does, jobs without walltime in machines mode)
            machines = getattr(engine.scheduler, "reservation", "") == "machines"
            assert job.res > nb_res or (machines and job.walltime_s is None)
            continue
        assert job.res <= nb_res
        assert record.start_s >= job.submit_time_s  # no start before submission
        assert len(record.alloc) == job.res  # allocation size = request
        assert record.alloc.min >= 0 and record.alloc.max < nb_res
        delay = delays[job.profile]
        if job.walltime_s is not None and delay >= job.walltime_s:  # walltime kills are exact
            assert record.state is JobState.COMPLETED_WALLTIME_REACHED
            assert record.finish_s == record.start_s + job.walltime_s
        else:
            assert record.state is JobState.COMPLETED_SUCCESSFULLY
            assert record.finish_s == record.start_s + delay
        for resource in record.alloc:
            intervals[resource].append((record.start_s, record.finish_s, job.id))
    for resource, spans in intervals.items():  # no resource double-booked
        spans.sort()
        for (_, end_a, a), (start_b, _, b) in itertools.pairwise(spans):
            assert end_a <= start_b, f"resource {resource}: {a} and {b} overlap"


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


def render(engine: Engine) -> str:
    out = io.StringIO()
    for job_id in engine.finished:
        out.write(job_row(engine.records[job_id]) + "\n")
    return out.getvalue()


@pytest.mark.parametrize(("name", "options"), [("easy", {}), ("easy-sjbf", {}), ("easy", {"reservation": "machines"}),
                                              ("fcfs-bf1", {"runtime": "requested"}),
                                              ("fcfs-bf2", {"runtime": "requested"}),
                                              ("easy", {"backfill_order": "svf"})])
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


#: the ways a count-based EASY may take its decisions, which must all give the same schedule:
#: as it does; every decision a full pass; a CALL_ME_LATER for every planned end
PLAN_MODES = ("as is", "full passes", "all calls")


def watch_plan(scheduler, mode: str = "as is"):
    """Check after every decision of a count-based EASY that the cached reservation is what a
    fresh computation gives (backfilling never pushed the head's shadow time or its extra
    resources: what the incremental pass relies on); `mode` is one of PLAN_MODES."""
    decide = scheduler.decide
    full_passes = mode == "full passes"
    scheduler.calls_for_plan_only = mode != "all calls"

    def checked(now):
        if full_passes:
            scheduler._released = True
        decisions = decide(now)
        cached, queue = scheduler._reservation, scheduler._queue
        if queue and cached is not None and cached[0] == queue[0][3].id:
            assert scheduler._shadow(queue[0][3], now) == cached[1:], now
        return decisions

    scheduler.decide = checked
    return scheduler


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
