"""Corrections of a running job's planning limit: hand-computed ladders, caps, settling."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.predictors.corrections import CORRECTIONS, HARD_LIMIT_S, Limit, settle
from tests.helpers.data import examples


def firings(kind: str, original_s: float, walltime_s: float | None, runtime_s: float) -> list[float]:
    """The limits a job running `runtime_s` goes through, firing at each limit - 60 s."""
    limit = Limit(original_s, original_s)
    seen = [limit.current_s]
    settle(kind, limit, 0.0, walltime_s)
    while True:
        if limit.current_s != seen[-1]:
            seen.append(limit.current_s)
        fire_at = limit.current_s - 60.0
        if fire_at >= runtime_s or limit.firings > 1000:
            return seen
        before = limit.current_s
        settle(kind, limit, fire_at, walltime_s)
        if limit.current_s == before:
            return seen


def test_simple_adds_an_hour_per_firing():
    assert firings("simple", 600.0, 86400.0, 9000.0) == [600.0, 4200.0, 7800.0, 11400.0]


def test_power_adds_15_30_60_minutes():
    assert firings("power", 600.0, 86400.0, 9000.0) == [600.0, 1500.0, 3300.0, 6900.0, 14100.0]


def test_tsafrir_steps_from_the_original_prediction():
    # original 600 s; after k firings: 600 + 1, 5, 15, 30, 60 min ...
    assert firings("tsafrir", 600.0, 86400.0, 2000.0)[:4] == [600.0, 660.0, 900.0, 1500.0]
    # a tiny original prediction at start: 10 + 1 min leaves 70 - 60 > 0, one firing is enough
    limit = settle("tsafrir", Limit(10.0, 10.0), 0.0, 86400.0)
    assert limit.current_s == 70.0 and limit.firings == 1
    # found late (elapsed 400 s): steps are applied until one leaves room: 10 + 15 min
    limit = settle("tsafrir", Limit(10.0, 10.0), 400.0, 86400.0)
    assert limit.current_s == 910.0 and limit.firings == 3


def test_walltime_jumps_to_the_kill_time_and_none_never_fires():
    assert firings("walltime", 600.0, 5000.0, 4000.0) == [600.0, 5000.0]
    assert firings("none", 600.0, 5000.0, 4000.0) == [600.0]


def test_caps_the_walltime_and_seven_days():
    assert firings("simple", 600.0, 5000.0, 4990.0) == [600.0, 4200.0, 5000.0]
    assert firings("power", 3600.0, None, 10 * 86400.0)[-1] == HARD_LIMIT_S
    limit = settle("simple", Limit(HARD_LIMIT_S, HARD_LIMIT_S), HARD_LIMIT_S, None)
    assert limit.firings == 0  # at the cap: nothing more


def test_a_firing_within_60_s_is_settled_at_once():
    limit = settle("simple", Limit(30.0, 30.0), 0.0, 86400.0)
    assert limit.current_s == 3630.0 and limit.firings == 1
    limit = settle("power", Limit(1.0, 1.0), 0.0, 86400.0)
    assert limit.current_s == 901.0 and limit.firings == 1


@settings(max_examples=examples(200), deadline=None)
@given(kind=st.sampled_from(CORRECTIONS), original=st.floats(1.0, 1e6), walltime=st.one_of(st.none(),
       st.floats(1.0, 2e6)), elapsed=st.floats(0.0, 2e6))
def test_settled_limits_grow_stay_capped_and_leave_no_end_in_the_past(kind, original, walltime, elapsed):
    if walltime is not None:
        original = min(original, walltime)
        elapsed = min(elapsed, walltime)  # Batsim kills it at its walltime
    limit = Limit(original, original)
    settle(kind, limit, elapsed, walltime)
    assert limit.current_s >= original
    top = min(HARD_LIMIT_S, math.inf if walltime is None else walltime)
    assert limit.current_s <= max(original, top)
    if kind != "none" and limit.current_s < top:
        assert limit.current_s - 60.0 > elapsed


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown correction"):
        settle("double", Limit(1.0, 1.0), 0.0, 100.0)


def test_a_firing_due_at_a_call_is_not_lost_to_rounding():
    """Called at end - 60 = (start + L) - 60, the elapsed time now - start can come out one ulp
    below L - 60: the correction must still fire."""
    start, limit_s = 6213.284671532846, 240.20802919708
    now = (start + limit_s) - 60.0
    assert now - start < limit_s - 60.0  # the float trap this guards against
    limit = settle("simple", Limit(limit_s, limit_s), now - start, 86400.0)
    assert limit.firings == 1
