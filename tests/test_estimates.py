"""The estimate API of list schedulers: revised waiting estimates and running ends, overrun handling,
calls at predicted ends. Prediction-driven schedulers (DIWS, EASY++, hybrid) build on it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from schedlab.engine import Engine
from schedlab.errors import InputError
from schedlab.model import CallMeLater, Platform
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.easy import EasyBackfilling
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import check_invariants, scenarios


class Scaled(EasyBackfilling):
    """EASY planning with walltime x factor (a stand-in for a predictor; the kill time is unchanged).
    Records, at every decision, the planned ends it holds."""

    factor = 0.5

    def __init__(self, *, queue_order: str = "fcfs", reservation: str = "count") -> None:
        super().__init__(queue_order=queue_order, reservation=reservation)
        self.ends_seen: list[tuple[float, list[float]]] = []
        self.calls: list[float] = []

    def estimate_s(self, job):
        return super().estimate_s(job) * self.factor

    def decide(self, now):
        decisions = super().decide(now)
        self.ends_seen.append((now, [key[0] for key in self._ends]))
        new_calls = [d.at_s for d in decisions if isinstance(d, CallMeLater)]
        assert all(at > now for at in new_calls) and not set(new_calls) & set(self.calls)  # future, once
        assert len(self._ends) == len(self._running)  # one planned end per running job
        assert sorted(r.end_key for r in self._running.values()) == self._ends
        self.calls += new_calls
        return decisions


def run(specs, nb_res, scheduler):
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs, nb_res=nb_res), scheduler)
    engine.run()
    return engine


def test_a_predicted_end_gets_a_call_and_an_overdue_job_is_replanned_to_its_walltime():
    """4 resources. A (4 res, walltime 100, runs 80) starts at 0, planned to end at 50 (half its
    walltime): the scheduler asks to be called at 50. At 50, A still runs: its planned end becomes
    0 + 100, never 50 (which would count its resources as free). B (walltime 20) starts when A ends
    at 80, planned to 90: another call if calls are asked for every planned end; none by default,
    as nothing waits then (its revision could change no decision)."""
    eager = Scaled()
    eager.calls_for_plan_only = False
    run([("A", 0, 4, 80, 100), ("B", 10, 2, 10, 20)], 4, eager)
    assert eager.calls == [50.0, 90.0]
    scheduler = Scaled()
    engine = run([("A", 0, 4, 80, 100), ("B", 10, 2, 10, 20)], 4, scheduler)
    assert scheduler.calls == [50.0]
    ends_at = dict(scheduler.ends_seen)
    assert ends_at[10.0] == [50.0]  # B arrives: A is planned to end at 50, B's reservation too
    assert ends_at[50.0] == [100.0]  # the call: A overdue, replanned to its walltime end
    assert scheduler.head_reservations_s["w0!B"] == 100.0
    assert engine.records["w0!B"].start_s == 80.0


@pytest.mark.parametrize("factor", [0.3, 0.8, 1.5])
@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_plans_never_hold_an_end_in_the_past_and_invariants_hold(monkeypatch, factor, scenario):
    nb_res, specs = scenario
    monkeypatch.setattr(Scaled, "factor", factor)
    scheduler = Scaled()
    engine = run(specs, nb_res, scheduler)
    check_invariants(engine, nb_res)
    for now, ends in scheduler.ends_seen:
        assert all(end > now for end in ends), (now, ends)


def test_revising_a_waiting_estimate_moves_it_in_an_estimate_ordered_queue():
    scheduler = create_scheduler("easy", {"queue_order": "spt"})
    engine = Engine(Platform.homogeneous(1), make_workload([("X", 0, 1, 10, 10), ("Y", 1, 1, 5, 50),
                                                           ("Z", 1, 1, 5, 40)], nb_res=1), scheduler)
    engine.start()
    engine.step()  # t=0: X starts
    engine.step()  # t=1: Y, Z wait; spt: Z (40) before Y (50)
    assert [j.name for j in scheduler.queue] == ["Z", "Y"]
    scheduler.revise_estimate("w0!Y", 30.0, 1.0)
    assert [j.name for j in scheduler.queue] == ["Y", "Z"] and scheduler.waiting_estimate_s("w0!Y") == 30.0
    engine.run()
    assert engine.records["w0!Y"].start_s == 10.0 and engine.records["w0!Z"].start_s == 15.0


def test_revising_a_running_end_moves_the_head_reservation():
    scheduler = create_scheduler("easy")
    engine = Engine(Platform.homogeneous(2), make_workload([("A", 0, 2, 30, 100), ("B", 1, 2, 5, 10)], nb_res=2),
                    scheduler)
    engine.start()
    engine.step()
    engine.step()
    assert scheduler.head_reservations_s["w0!B"] == 100.0 and scheduler.expected_end_s("w0!A") == 100.0
    scheduler.revise_expected_end("w0!A", 40.0, 1.0)
    scheduler.decide(1.0)
    assert scheduler.head_reservations_s["w0!B"] == 40.0
    scheduler.revise_expected_end("w0!A", 0.5, 1.0)  # never in the past
    assert scheduler.expected_end_s("w0!A") == 1.0


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_walltime_estimates_ask_for_no_calls(monkeypatch, scenario):
    """Plain EASY plans with walltimes, which end when Batsim kills: nothing to be called for, so
    its decisions are those it made before the estimate API existed."""
    nb_res, specs = scenario
    monkeypatch.setattr(Scaled, "factor", 1.0)
    scheduler = Scaled()
    run(specs, nb_res, scheduler)
    assert scheduler.calls == []


def test_machine_reservations_refuse_predicted_estimates(monkeypatch):
    from schedlab.schedulers.base import SCHEDULERS

    monkeypatch.setitem(SCHEDULERS, "scaled", Scaled)
    with pytest.raises(InputError, match="reservation=machines plans with walltimes"):
        create_scheduler("scaled", {"reservation": "machines"})
    machines = create_scheduler("easy", {"reservation": "machines"})
    with pytest.raises(RuntimeError, match="estimates are fixed"):
        machines.revise_expected_end("w0!A", 5.0, 0.0)


@pytest.mark.parametrize("queue_order", ["fcfs", "spt", "unicef", "wfp3"])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_estimates_below_the_walltime_need_calls_only_for_ends_that_matter(monkeypatch, queue_order, scenario):
    """Planned ends before the kill time: the same schedule as is, with a full pass at every
    decision, and with a call for every end (dynamic orders keep every call: a wake-up re-sorts)."""
    from tests.helpers.invariants import PLAN_MODES, render, watch_plan

    nb_res, specs = scenario
    monkeypatch.setattr(Scaled, "factor", 0.4)
    engines = [run(specs, nb_res, watch_plan(Scaled(queue_order=queue_order), mode)) for mode in PLAN_MODES]
    assert render(engines[0]) == render(engines[1]) == render(engines[2])


def test_a_dynamic_order_keeps_a_call_for_every_end():
    """The counter-example an independent review found: under UNICEF a wake-up re-sorts the queue,
    so the call for job 0's planned end (asked at its start, 141.5) must come even though job 0
    ended long before: there job 6 becomes the head and starts (176 without the call)."""
    specs = [("0", 3, 4, 2, 277), ("2", 77, 3, 356, 198), ("6", 99, 1, 71, 161), ("8", 79, 4, 354, 128)]
    starts = []
    for plan_only in (True, False):
        scheduler = Scaled(queue_order="unicef")
        scheduler.calls_for_plan_only = plan_only
        starts.append({k: r.start_s for k, r in run(specs, 4, scheduler).records.items()})
    assert starts[0] == starts[1] and starts[0]["w0!6"] == 141.5
