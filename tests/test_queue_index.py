"""EASY's candidate index finds exactly what the plain walk of the queue finds."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.queue import Entry
from schedlab.schedulers.queue_index import Budget, CandidateIndex, _SizeClass
from tests.helpers.data import examples, make_workload
from tests.helpers.workloads import loaded

#: every EASY variant whose queue order is static (the index serves those), and the subclasses that
#: revise estimates and planned ends while jobs wait or run (easy-pp)
INDEXED = [("easy", {}), ("easy-sjbf", {}), ("easy", {"backfill_order": "svf"}), ("easy", {"queue_order": "spt"}),
           ("easy-sjbf", {"queue_order": "saf"}), ("fcfs-bf1", {}), ("fcfs-bf2", {}),
           ("easy-pp", {}), ("easy-pp", {"correction": "power"}), ("diws", {"learner": "user-last2"})]


def schedule(nb_res, specs, name, options, use_index):
    scheduler = create_scheduler(name, options)
    scheduler.use_index = use_index
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    return [(r.job.id, r.state, r.start_s, r.finish_s, str(r.alloc)) for r in engine.records.values()]


@pytest.mark.parametrize(("name", "options"), INDEXED, ids=[f"{n}-{o}" for n, o in INDEXED])
@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenario=loaded())
def test_indexed_easy_makes_the_plain_walks_schedule(name, options, scenario, monkeypatch):
    monkeypatch.setattr(_SizeClass, "LOAD", 2)  # blocks split, empty and compact on small queues
    nb_res, specs = scenario
    assert schedule(nb_res, specs, name, options, True) == schedule(nb_res, specs, name, options, False)


def test_the_index_is_used_for_static_orders_only():
    for name, options, indexed in (("easy", {}, True), ("easy", {"queue_order": "wfp3"}, False),
                                   ("easy", {"reservation": "machines"}, False)):
        scheduler = create_scheduler(name, options)
        scheduler.on_simulation_begins(Platform.homogeneous(4), 0.0)
        assert (scheduler._index is not None) is indexed


def entry(seq, res, duration):
    return Entry(float(seq), float(seq), seq, None, duration, res, duration)


@st.composite
def index_cases(draw):
    specs = draw(st.lists(st.tuples(st.integers(1, 6), st.sampled_from([1.0, 2.0, 5.0, 9.0, math.inf])),
                          min_size=0, max_size=80))
    removed = draw(st.sets(st.integers(0, max(len(specs) - 1, 0)), max_size=len(specs)))
    shadows = st.sampled_from([0.0, 3.0, 6.0, 20.0, math.inf])
    passes = draw(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), shadows), min_size=1, max_size=4))
    return specs, removed, passes


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=index_cases(), order=st.sampled_from(["queue", "duration"]))
def test_candidates_are_the_plain_walks_in_order(case, order, monkeypatch):
    monkeypatch.setattr(_SizeClass, "LOAD", 2)
    specs, removed, passes = case
    key = (lambda e: e[:3]) if order == "queue" else (lambda e: (e[4], e[1], e[2]))
    index = CandidateIndex(key)
    entries = [entry(seq, res, duration) for seq, (res, duration) in enumerate(specs)]
    for e in reversed(entries):  # out of order: blocks split in the middle
        index.add(e)
    for seq in removed:
        index.remove(entries[seq])
    waiting = sorted((e for seq, e in enumerate(entries) if seq not in removed), key=key)
    assert list(index) == sorted(waiting, key=lambda e: (e[5], key(e)))
    for free, extra, shadow in passes:
        # what a pass starts: each candidate that fits lowers free (and extra when it ends late)
        expected, state = [], [free, extra]
        for e in waiting:
            if state[0] == 0:
                break
            if e[5] <= state[0] and (e[5] <= state[1] or 1.0 + e[6] <= shadow):
                expected.append(e[2])
                state[1] -= e[5] if 1.0 + e[6] > shadow else 0
                state[0] -= e[5]
        got, state = [], Budget(free, extra)
        for e in index.candidates(state, 1.0, shadow):
            assert e[5] <= state.free and (e[5] <= state.extra or 1.0 + e[6] <= shadow)
            got.append(e[2])
            state.extra -= e[5] if 1.0 + e[6] > shadow else 0
            state.free -= e[5]
        assert got == expected
    with pytest.raises(KeyError):
        index.remove(entry(10_000, 1, 1.0))


def test_an_infinite_shadow_time_takes_every_entry(monkeypatch):
    """Running jobs without walltime put the shadow time at infinity: every waiting job then ends
    by it, including those without walltime (infinite planned duration), as in the plain walk."""
    monkeypatch.setattr(_SizeClass, "LOAD", 2)
    for nb_entries in range(1, 40):  # block counts that are and are not powers of two
        for nb_removed in range(nb_entries):
            index = CandidateIndex(lambda e: e[:3])
            entries = [entry(seq, 1, math.inf) for seq in range(nb_entries)]
            for e in entries:
                index.add(e)
            for e in entries[:nb_removed]:
                index.remove(e)
            state = Budget(100, 0)
            assert [e[2] for e in index.candidates(state, 8.0, math.inf)] == list(range(nb_removed, nb_entries))


def test_the_ci_case_runs_without_walltimes(monkeypatch):
    """Found by hypothesis in CI: unit jobs without walltime behind a whole-machine head."""
    monkeypatch.setattr(_SizeClass, "LOAD", 2)
    specs = ([(str(i), 0, 1, 1, None) for i in range(21)] + [(str(i), 5, 1, 1, None) for i in range(21, 36)]
             + [("36", 0, 2, 1, None), ("37", 0, 2, 5, None), ("38", 0, 6, 1, None)])
    specs[28] = ("28", 5, 1, 5, None)
    assert schedule(6, specs, "easy", {}, True) == schedule(6, specs, "easy", {}, False)


@st.composite
def interleaved(draw):
    """Adds, removes and re-adds under the same key (revise_estimate keeps score, submit and seq)
    in any order, each followed by a pass."""
    ops = draw(st.lists(st.tuples(st.sampled_from(["add", "remove", "readd"]), st.integers(0, 10),
                                  st.integers(1, 4), st.sampled_from([1.0, 4.0, 9.0, math.inf])),
                        min_size=1, max_size=120))
    shadow = draw(st.sampled_from([3.0, 8.0, math.inf]))
    return ops, shadow


#: a block emptied but kept, whose first key is re-added (it once went to the previous block)
EMPTIED_THEN_READDED = ([("add", i, 1, 5.0) for i in range(7)]
                        + [("remove", 2, 1, 1.0), ("readd", 3, 1, 9.0), ("remove", 3, 1, 1.0)], 8.0)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=interleaved(), order=st.sampled_from(["queue", "duration"]))
@example(case=EMPTIED_THEN_READDED, order="queue")
def test_interleaved_changes_keep_the_plain_walks_order(case, order, monkeypatch):
    monkeypatch.setattr(_SizeClass, "LOAD", 2)
    ops, shadow = case
    key = (lambda e: e[:3]) if order == "queue" else (lambda e: (e[4], e[1], e[2]))
    index = CandidateIndex(key)
    waiting: dict[int, tuple] = {}
    for op, seq, res, duration in ops:
        if op == "add" and seq not in waiting:
            waiting[seq] = entry(seq, res, duration)
            index.add(waiting[seq])
        elif op == "remove" and seq in waiting:
            index.remove(waiting.pop(seq))
        elif op == "readd" and seq in waiting:  # same queue key, new estimate
            index.remove(waiting[seq])
            old = waiting[seq]
            waiting[seq] = Entry(*old[:4], duration, old[5], duration)
            index.add(waiting[seq])
        ordered = sorted(waiting.values(), key=key)
        assert list(index) == sorted(ordered, key=lambda e: (e[5], key(e)))
        state = Budget(4, 1)
        got = [e[2] for e in index.candidates(state, 0.0, shadow)]  # nothing starts: every candidate
        assert got == [e[2] for e in ordered if e[5] <= 4 and (e[5] <= 1 or e[6] <= shadow)]
