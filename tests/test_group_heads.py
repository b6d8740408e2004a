"""FCFS under a policy scored by wait (WFP3, UNICEF) re-scores only each (estimate, res) group's
first job: the same schedules as re-sorting the whole queue at every decision."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.schedulers.fcfs import FCFS
from schedlab.schedulers.group_heads import GroupHeads
from schedlab.schedulers.policies import POLICIES, get_policy
from schedlab.schedulers.queue import Entry
from tests.helpers.data import examples, make_workload
from tests.helpers.workloads import loaded

BY_WAIT = [name for name, policy in POLICIES.items() if policy.by_wait]


class Revising(FCFS):
    """Doubles every third job's estimate while it waits (the path prediction schedulers take)."""

    def on_job_submitted(self, job, now):
        super().on_job_submitted(job, now)
        if int(job.id.split("!")[1]) % 3 == 0 and job.res <= self.nb_resources:
            self.revise_estimate(job.id, 2 * self.waiting_estimate_s(job.id) + 1, now)


def schedule(nb_res, specs, cls, order, grouped):
    scheduler = cls(queue_order=order)
    assert (scheduler._heads is not None) == (order in BY_WAIT)
    if not grouped:
        scheduler._heads = None  # the queue re-sorted in full at each decision
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    return [(r.job.id, r.state, r.start_s, r.finish_s, str(r.alloc)) for r in engine.records.values()]


def test_the_policies_scored_by_wait():
    assert sorted(BY_WAIT) == ["unicef", "wfp3"]
    assert FCFS(queue_order="wfp3", sort_window=4)._heads is None  # the authors' window: the plain walk
    with pytest.raises(ValueError, match="not scored by wait"):
        GroupHeads(get_policy("spt"))


@pytest.mark.parametrize("cls", [FCFS, Revising])
@pytest.mark.parametrize("order", BY_WAIT)
@settings(max_examples=examples(80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenario=loaded())
def test_group_heads_make_the_fully_sorted_schedule(cls, order, scenario):
    nb_res, specs = scenario
    assert schedule(nb_res, specs, cls, order, True) == schedule(nb_res, specs, cls, order, False)


@pytest.mark.parametrize("order", BY_WAIT)
@settings(max_examples=examples(300), deadline=None)
@given(estimate=st.one_of(st.just(math.inf), st.floats(0, 1e9)), res=st.integers(1, 100_000),
       submits=st.lists(st.floats(0, 1e8), min_size=2, max_size=2), now=st.floats(0, 2e8))
def test_a_score_by_wait_never_rises_as_the_wait_grows(order, estimate, res, submits, now):
    """The property the groups rest on, on the scalar and the array form."""
    import numpy as np

    policy = POLICIES[order]
    early, late = sorted(submits)
    jobs = make_workload([("a", early, res, 1, None), ("b", late, res, 1, None)], nb_res=res).jobs
    scalar = [policy.score(job, estimate, now) for job in jobs]
    assert scalar[0] <= scalar[1]
    vector = policy.vector(np.array([early, late]), np.full(2, estimate), np.full(2, float(res)), now)
    assert vector.tolist() == scalar


@settings(max_examples=examples(500), deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.sampled_from([1.0, 10.0, math.inf]),
                              st.sampled_from([1, 2, 7])), max_size=80),
       now=st.sampled_from([0.0, 50.0, 1000.0]))
def test_the_best_head_is_the_sorted_queues_first(ops, now):
    """Adds and removes in any order (removals of any entry, not only heads); `best` is the first
    entry of the queue sorted by (score at now, submit, seq)."""
    policy = POLICIES["wfp3"]
    heads, waiting, seq = GroupHeads(policy), [], 0
    for add, submit, estimate, res in ops:
        if add or not waiting:
            seq += 1
            job = make_workload([(str(seq), float(submit), res, 1, None)], nb_res=7).jobs[0]
            entry = Entry(0.0, float(submit), seq, job, estimate, res, estimate)
            heads.add(entry)
            waiting.append(entry)
        else:
            entry = waiting.pop(submit % len(waiting))
            heads.remove(entry)
        heads._scored_at = None if submit % 2 else heads._scored_at  # scores kept, or recomputed
        assert len(heads) == len(waiting)
        expected = min(waiting, key=lambda e: (policy.score(e[3], e[4], now), e[1], e[2]), default=None)
        assert heads.best(now) is expected
