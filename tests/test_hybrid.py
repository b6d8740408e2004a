"""The hybrid study: availability profile, online regression, reliability, plan-based schedulers and
the hybrid scheduler (no look-ahead, exact retraining, the alpha share, backfilling around the plan)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.errors import InputError
from schedlab.model import Platform
from schedlab.predictors.history import CompletionHistory
from schedlab.predictors.online import (
    HYBRID_PREDICTOR_FEATURES,
    HYBRID_RELIABILITY_FEATURES,
    NormalizedRegression,
    accuracy,
    predictor_row,
    reliability_row,
)
from schedlab.predictors.reliability import ReliabilityModel
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.profile import AvailabilityProfile
from schedlab.schedulers.runtimes import coin
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import check_invariants

# ---------------------------------------------------------------------------------------------- profile


def test_profile_from_running_jobs_and_earliest_slots():
    # 8 cores, 2 free now; 3 freed at 10 and 3 at 20 (of which 2 were in a share of 4, 1 used)
    profile = AvailabilityProfile(0.0, 2, capped_now=1, releases=[(20.0, 3, 2), (10.0, 3, 0), (0.0, 0, 0)])
    assert profile.steps() == [(0.0, 2, 1), (10.0, 5, 1), (20.0, 8, 3)]
    assert profile.earliest(2, 100.0) == 0.0
    assert profile.earliest(3, 5.0) == 10.0
    assert profile.earliest(6, 1.0) == 20.0
    assert profile.earliest(9, 1.0) == math.inf
    assert profile.earliest(2, 5.0, capped=True) == 20.0  # the share has 1 core until 20
    profile.reserve(10.0, 15.0, 4)  # a hole 10..15 for 4 cores
    assert profile.steps() == [(0.0, 2, 1), (10.0, 1, 1), (15.0, 5, 1), (20.0, 8, 3)]
    assert profile.earliest(2, 3.0) == 0.0  # fits before the hole
    assert profile.earliest(2, 11.0) == 15.0  # does not: after it
    assert profile.earliest(5, 1.0, not_before=12.0) == 15.0
    profile.reserve(20.0, math.inf, 3, capped=True)
    assert profile.steps()[-1] == (20.0, 5, 0)
    assert not profile.fits_now(3, 1.0) and profile.fits_now(1, 1.0, capped=True)


# ---------------------------------------------------------------------------------------------- learning


def test_normalized_regression_learns_a_polynomial_online():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, size=(3000, 2))
    y = 3600.0 * (1.0 + 0.5 * x[:, 0] + 0.1 * x[:, 0] * x[:, 1])
    model = NormalizedRegression()
    assert model.fit(x[:1], y[:1]) is model and not np.all(model.predict(x[:1]) == 0)
    model = NormalizedRegression()
    first = np.abs(model.predict(x[-200:]) - y[-200:]).mean()
    for start in range(0, 2800, 100):
        model.partial_fit(x[start:start + 100], y[start:start + 100])
    error = np.abs(model.predict(x[-200:]) - y[-200:]).mean()
    assert error < 0.1 * first
    assert model.n_updates_ == 2800 and model.coef_.shape == (6,)  # 1, x0, x1, x0^2, x0 x1, x1^2
    assert NormalizedRegression(degree=3).fit(x[:5], y[:5]).coef_.shape == (10,)


def test_feature_rows_on_a_hand_made_history():
    history = CompletionHistory()
    history.record(user="u", runtime_s=100.0, cores=2.0, end_s=1000.0)
    history.record(user="u", runtime_s=300.0, cores=4.0, end_s=2000.0)
    row = history.row("u", 86400.0 + 21600.0, 500.0, 8.0, 2600.0)
    features = dict(zip(HYBRID_PREDICTOR_FEATURES, predictor_row(row, 500.0, current=7, st_s=42.0), strict=True))
    assert features["reqTime"] == 500.0
    assert (features["last"], features["beflast"], features["beflast2"]) == (300.0, 100.0, 500.0)  # reqTime fills
    assert (features["lastcpu"], features["maxrt"], features["maxcpu"]) == (4.0, 300.0, 4.0)
    assert (features["meanrt"], features["stdrt"], features["meancpu"], features["stdcpu"]) == (200.0, 100.0, 3.0, 1.0)
    assert (features["current"], features["st"], features["since_last"]) == (7.0, 42.0, 600.0)
    assert features["tod1"] == pytest.approx(0.0, abs=1e-12) and features["tod2"] == pytest.approx(1.0)  # 06:00
    assert len(features) == 18
    reliability = dict(zip([*HYBRID_RELIABILITY_FEATURES, "p"], reliability_row(row, 500.0, 250.0), strict=True))
    assert reliability["prevuser"] == 2.0 and reliability["p"] == 250.0 and len(reliability) == 17
    assert "current" not in reliability and "st" not in reliability
    newcomer = predictor_row(history.row("v", 0.0, 500.0, 8.0, 2600.0), 500.0, current=0, st_s=0.0)
    assert newcomer[1:4] == [500.0] * 3 and newcomer[-1] == 0.0  # no history: reqTime, and no "since"


def test_reliability_models():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, size=(400, 17))
    y = np.clip(x[:, 1], 0, 1)
    for kind in ("gbt-hist", "gbt", "gbt-xgb", "dt"):
        model = ReliabilityModel(kind=kind).fit(x, y)
        assert np.corrcoef(model.predict(x), y)[0, 1] > 0.9
        assert model.predict(x).min() >= 0 and model.predict(x).max() <= 1
    assert ReliabilityModel(kind="gbt").fit(x, y).model_[-1].subsample == 0.8
    hist = ReliabilityModel().fit(x, y).model_  # the default: the study's boosting in xgboost's hist
    assert (hist.subsample, hist.max_depth, hist.learning_rate, hist.n_estimators, hist.max_bin,
            hist.reg_lambda) == (0.8, 3, 0.1, 100, 64, 0.0)
    assert '"num_trees":"100"' in hist.booster_json_.replace(" ", "")
    import xgboost  # our boosting loop on a plain DMatrix gives XGBRegressor's trees
    wrapper = xgboost.XGBRegressor(random_state=0, n_jobs=1, subsample=0.8, max_depth=3, learning_rate=0.1,
                                   max_bin=64, reg_lambda=0.0).fit(x, y)
    assert hist.predict(x).tolist() == wrapper.predict(x).astype(float).tolist()
    # the compiled per-row path gives scikit-learn's (xgboost's) numbers, bit for bit
    queries = np.vstack([x[:50], rng.lognormal(size=(200, 17))])
    queries[::7, 3] = np.nan  # xgboost sends a missing value to its node's default side
    for kind in ("gbt-hist", "gbt-xgb", "gbt", "dt"):
        model = ReliabilityModel(kind=kind, seed=2).fit(x, y)
        assert model.predict_rows(queries.tolist()) == model.predict(queries).tolist()
    # CNK: accuracy between p^ and the mean run time of the 5 nearest completed jobs
    rows = np.array([[float(i)] * 16 + [0.0] for i in range(10)])
    runtimes = np.array([100.0] * 5 + [1000.0] * 5)
    cnk = ReliabilityModel(kind="cnk").fit(rows, None, runtime_s=runtimes)
    query = np.array([[1.0] * 16 + [50.0], [9.0] * 16 + [2000.0]])
    assert cnk.predict(query).tolist() == pytest.approx([0.5, 0.5])
    with pytest.raises(ValueError):
        ReliabilityModel(kind="cnk").fit(rows, None)


def test_xgboost_trees_walked_by_the_compiled_loop_equal_xgboost_bit_for_bit():
    """Random models (depths 1-8, missing values in training and queries, values at and just below
    the splits, infinities): the compiled walk gives xgboost's own predictions, bit for bit."""
    from schedlab.predictors.xgb import XGBoostJSON, compiled_predictor

    rng = np.random.default_rng(7)
    for trial in range(8):
        x = rng.normal(size=(600, 5)) * rng.choice([1.0, 1e4], size=5)
        x[:, 0] = np.round(x[:, 0])  # few distinct values: splits fall on them
        x[rng.random(x.shape) < 0.1] = np.nan
        y = np.sin(np.nan_to_num(x[:, 1])) + rng.normal(size=600) * 0.1
        model = XGBoostJSON(seed=trial, subsample=0.8, max_depth=1 + trial, n_estimators=20 + 10 * trial,
                            reg_lambda=[None, 0.0][trial % 2]).fit(x, y)
        queries = np.vstack([x[:100], rng.normal(size=(100, 5)) * 1e4])
        queries[rng.random(queries.shape) < 0.15] = np.nan
        splits = np.unique(np.round(x[:, 0][~np.isnan(x[:, 0])]))
        edge = np.tile(queries[:1], (2 * len(splits), 1))
        edge[:, 0] = np.concatenate([splits, np.nextafter(splits.astype(np.float32), -np.inf)])
        queries = np.vstack([queries, edge, [[np.inf, -np.inf, 0.0, -0.0, 1e39]]])
        predict_rows = compiled_predictor(model)
        assert predict_rows(queries.tolist()) == model.predict(queries).astype(float).tolist()
    with pytest.raises(ValueError, match="rows of 1 columns"):  # the compiled walk checks no bounds itself
        predict_rows([[1.0]])


# ---------------------------------------------------------------------------------------------- runtimes


def oracle_file(tmp_path, workload):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload.to_json()))
    return str(path)


def test_runtime_option_sources(tmp_path):
    specs = [(str(i), 0, 1, 10.0 * (i + 1), 1000, {"requested_time_s": 500}) for i in range(40)]
    workload = make_workload(specs)
    oracle = oracle_file(tmp_path, workload)
    estimates = {}
    for runtime in ("requested", "exact", "perturbed:0.25"):
        given = {"runtime": runtime, "seed": "3", **({"oracle": oracle} if runtime != "requested" else {})}
        scheduler = create_scheduler("online-svf", given)
        Engine(Platform.homogeneous(64), workload, scheduler).run()
        estimates[runtime] = {job.id: scheduler.estimate_s(job) for job in workload.jobs}
    actual = {job.id: workload.profiles[job.profile].delay_s for job in workload.jobs}
    assert set(estimates["requested"].values()) == {500.0}  # the request, not the walltime
    assert estimates["exact"] == actual
    perturbed = estimates["perturbed:0.25"]
    assert all(accuracy(perturbed[j], actual[j]) == pytest.approx(0.25) for j in actual)
    assert 10 < sum(perturbed[j] < actual[j] for j in actual) < 30  # a fair coin
    assert all(perturbed[j] < actual[j] for j in actual if coin(3, j))
    for bad in ({"runtime": "exact"}, {"runtime": "perturbed:0"}, {"runtime": "perturbed:x", "oracle": oracle},
                {"runtime": "guessed"}):
        with pytest.raises(InputError):
            create_scheduler("online-sjf", bad)


def starts_of(workload, name, options, nb_res):
    engine = Engine(Platform.homogeneous(nb_res), workload, create_scheduler(name, options))
    engine.run()
    return {job_id.split("!")[1]: record.start_s for job_id, record in engine.records.items()}


def test_plan_based_and_backfilling_golden(tmp_path):
    """4 cores. A (0 s, 4 cores, 10 s) runs; at 1 s B (2 cores, 5 s), C (2, 20 s), D (4, 3 s) arrive.
    online-SVF plans by volume: B (10) at 10, D (12) at 15, C (40) at 18 (before: D holds all 4).
    online-SJF by duration: D (3) at 10, B (5) and C (20) at 13. FCFS-BF2 (EASY by volume) keeps
    FCFS order for the head: B and C at 10, D when C ends at 30."""
    specs = [("A", 0, 4, 10, 100), ("B", 1, 2, 5, 100), ("C", 1, 2, 20, 100), ("D", 1, 4, 3, 100)]
    workload = make_workload(specs)
    options = {"runtime": "exact", "oracle": oracle_file(tmp_path, workload)}
    assert starts_of(workload, "online-svf", options, 4) == {"A": 0.0, "B": 10.0, "D": 15.0, "C": 18.0}
    assert starts_of(workload, "online-sjf", options, 4) == {"A": 0.0, "D": 10.0, "B": 13.0, "C": 13.0}
    assert starts_of(workload, "fcfs-bf2", options, 4) == {"A": 0.0, "B": 10.0, "C": 10.0, "D": 30.0}


def test_fcfs_bf1_and_bf2_try_candidates_by_duration_and_by_volume(tmp_path):
    """3 cores. A (1 core, 100 s) runs; at 1 s the head H (3 cores) waits for it (shadow 100, no
    extra); X (1 core, 6 s, volume 6) and Y (2 cores, 4 s, volume 8) can each backfill, not both.
    BF1 takes Y (shorter) first, BF2 takes X (smaller)."""
    specs = [("A", 0, 1, 100, 200), ("H", 1, 3, 10, 200), ("X", 1, 1, 6, 200), ("Y", 1, 2, 4, 200)]
    workload = make_workload(specs)
    options = {"runtime": "exact", "oracle": oracle_file(tmp_path, workload)}
    assert starts_of(workload, "fcfs-bf1", options, 3) == {"A": 0.0, "Y": 1.0, "X": 5.0, "H": 100.0}
    assert starts_of(workload, "fcfs-bf2", options, 3) == {"A": 0.0, "X": 1.0, "Y": 7.0, "H": 100.0}


# ---------------------------------------------------------------------------------------------- hybrid


@st.composite
def hybrid_scenarios(draw):
    nb_res = draw(st.integers(2, 10))
    specs = []
    for i in range(draw(st.integers(5, 40))):
        submit = draw(st.integers(0, 400))
        res = draw(st.integers(1, nb_res))
        delay = draw(st.integers(1, 60))
        walltime = delay + draw(st.integers(0, 30))  # requested times bound the run times here
        user = f"u{draw(st.integers(0, 3))}"
        specs.append((str(i), submit, res, delay, walltime, {"user": user}))
    return nb_res, specs


def watched_hybrid(options):
    """A hybrid whose every decision is checked: the alpha share holds, the plan of predictable jobs
    is what a re-plan after the backfilled starts gives (backfilling delayed no planned job), and
    the unpredictable head's reservation is still its earliest slot."""
    scheduler = create_scheduler("hybrid", options)
    decide = scheduler.decide
    submitted_features = {}
    on_job_submitted = scheduler.on_job_submitted

    def submitted(job, now):
        on_job_submitted(job, now)
        if job.id in scheduler._predictor_rows:
            submitted_features[job.id] = list(scheduler._predictor_rows[job.id])

    def checked(now):
        before = {job_id for job_id in scheduler._planned}
        previous_head = scheduler._head
        planned_now.clear()
        decisions = decide(now)
        assert 0.1 <= scheduler.alpha <= 0.9
        assert all(end >= now for end, _, _ in scheduler._ends)  # overruns are replanned, never to the past
        if set(scheduler._planned) - before:
            assert scheduler.planned_cores_in_use <= scheduler.share
        if not planned_now:
            return decisions  # nothing changed: the plan of the previous decision stands
        share, profile = scheduler.share, plan_profile(now)
        others = [e[3] for e in scheduler._queue if not (scheduler.predictable[e[3].id] and e[5] <= share)]
        # the kept head: the previous decision's, still waiting outside the plan (wherever a smaller
        # share put it among the others); else a new head, the first of the others, reserved after the plan
        kept = next((job for job in others if previous_head is not None and job.id == previous_head[0]), None)
        head = kept if kept is not None else others[0] if others else None
        if head is not None and head.id not in scheduler.head_reservations_s:
            head = None

        def head_holds():
            start_s = profile.earliest(head.res, scheduler.requested_s(head))
            assert start_s == scheduler.head_reservations_s[head.id]
            profile.reserve(start_s, start_s + scheduler.requested_s(head), head.res)

        if head is not None and kept is not None:  # a head since an earlier decision: reserved before the plan
            head_holds()
        planned = sorted((e for e in scheduler._queue if scheduler.predictable[e[3].id] and e[5] <= share),
                         key=lambda e: (e[4] * e[5], e[1], e[2]))
        for entry in planned:
            start_s = profile.earliest(entry[5], entry[6], capped=True)
            profile.reserve(start_s, start_s + entry[6], entry[5], capped=True)
            assert start_s == scheduler.planned_start_s[entry[3].id]
            assert start_s > now
        if head is not None and not kept:
            head_holds()
        return decisions

    plan_profile = scheduler.plan_profile
    planned_now: list[bool] = []

    def planning(now):
        planned_now.append(True)
        return plan_profile(now)

    scheduler.decide = checked
    scheduler.on_job_submitted = submitted
    scheduler.plan_profile = planning
    return scheduler, submitted_features


# decision trees keep the property tests fast; one configuration with the default boosting
# (low thresholds: with few completions a tree estimates about the mean accuracy, and planning must happen)
HYBRID_OPTIONS = [{"retrain": "60", "reliability": "dt", "threshold": "0.1"},
                  {"retrain": "45", "alpha_rule": "paper", "alpha0": "0.9", "reliability": "dt", "threshold": "0.3"},
                  {"retrain": "100", "alpha_rule": "fixed", "alpha0": "0.3", "threshold": "0.0", "reliability": "dt"},
                  {"retrain": "30", "reliability": "dt", "threshold": "0.0", "protect_head": "false"},
                  {"retrain": "60", "reliability": "dt", "threshold": "0.1", "step2_order": "sjbf",
                   "predictor": "user-last2"},
                  {"retrain": "40", "reliability": "dt", "threshold": "0.1", "train_last": "8"},
                  {"retrain": "150"}]


@pytest.mark.parametrize("options", HYBRID_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=hybrid_scenarios())
def test_hybrid_invariants_share_and_plan(options, scenario):
    nb_res, specs = scenario
    scheduler, _ = watched_hybrid(options)
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    check_invariants(engine, nb_res)
    retrain = float(options["retrain"])  # engine.now: the last instant anything happened (a call included)
    assert scheduler.retrain_times_s == [retrain * k for k in range(1, int(engine.now // retrain) + 1)]
    # each retrain learned from exactly the completions at or before its boundary (none later)
    for boundary_s, rows in zip(scheduler.retrain_times_s, scheduler.training_rows, strict=True):
        done = sum(record.finish_s <= boundary_s for record in engine.records.values() if record.start_s is not None)
        assert rows == (done if done >= scheduler.MIN_TRAINING_ROWS else 0)
    alphas = [alpha for _, alpha in scheduler.alpha_history]
    assert all(0.1 <= a <= 0.9 for a in alphas)
    if options.get("alpha_rule") == "paper":
        assert all(later <= earlier for earlier, later in itertools.pairwise(alphas))
    if options.get("alpha_rule") == "fixed":
        assert set(alphas) == {0.3}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=hybrid_scenarios(), cut=st.integers(0, 400), extra_s=st.integers(1, 500))
def test_hybrid_does_not_look_ahead(scenario, cut, extra_s):
    """Lengthen every job that completes after `cut` (so it still does, at most at its walltime):
    the features, prediction and reliability estimate of every job submitted at or before `cut`
    stay the same."""
    nb_res, specs = scenario
    options = {"retrain": "50", "reliability": "dt"}
    first, features = watched_hybrid(options)
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), first)
    engine.run()
    later = {job_id.split("!")[1] for job_id, record in engine.records.items() if record.finish_s > cut}
    changed = [(n, s, r, d + extra_s if n in later else d, w, x) for n, s, r, d, w, x in specs]
    second, features_again = watched_hybrid(options)
    Engine(Platform.homogeneous(nb_res), make_workload(changed), second).run()
    early = [f"w0!{n}" for n, s, *_ in specs if s <= cut]
    for job_id in early:
        assert features_again[job_id] == features[job_id]
        assert second.predicted_s[job_id] == first.predicted_s[job_id]
        a, b = first.estimated_accuracy[job_id], second.estimated_accuracy[job_id]
        assert a == b or (math.isnan(a) and math.isnan(b))
        assert second.predictable[job_id] == first.predictable[job_id]


def test_hybrid_does_not_look_ahead_on_a_longer_run():
    rng = np.random.default_rng(11)
    specs = [(str(i), int(i * 20), int(rng.integers(1, 6)), int(rng.integers(5, 300)), 400, {"user": f"u{i % 4}"})
             for i in range(150)]
    cut = 1500
    first, features = watched_hybrid({"retrain": "300"})
    engine = Engine(Platform.homogeneous(8), make_workload(specs), first)
    engine.run()
    later = {job_id.split("!")[1] for job_id, record in engine.records.items() if record.finish_s > cut}
    second, features_again = watched_hybrid({"retrain": "300"})
    Engine(Platform.homogeneous(8), make_workload([(n, s, r, d + 77 if n in later else d, w, x)
                                                   for n, s, r, d, w, x in specs]), second).run()
    early = [f"w0!{n}" for n, s, *_ in specs if s <= cut]
    assert sum(not math.isnan(first.estimated_accuracy[j]) for j in early) > 10  # a model was used
    assert second.predicted_s != first.predicted_s  # the changed run times were learned from later
    for job_id in early:
        assert (features_again[job_id], second.predicted_s[job_id]) == (features[job_id], first.predicted_s[job_id])
        assert second.estimated_accuracy[job_id] == first.estimated_accuracy[job_id] or math.isnan(
            first.estimated_accuracy[job_id])


def test_hybrid_with_an_oracle_makes_every_job_predictable_once_a_model_exists(tmp_path):
    rng = np.random.default_rng(5)
    specs = [(str(i), int(i * 30), int(rng.integers(1, 5)), int(rng.integers(5, 200)), 400, {"user": f"u{i % 3}"})
             for i in range(200)]
    workload = make_workload(specs)
    scheduler = create_scheduler("hybrid", {"runtime": "exact", "oracle": oracle_file(tmp_path, workload),
                                            "retrain": "600"})
    Engine(Platform.homogeneous(16), workload, scheduler).run()
    before = [job.id for job in workload.jobs if job.submit_time_s < 600]
    after = [job.id for job in workload.jobs if job.submit_time_s > 600]
    assert not any(scheduler.predictable[j] for j in before)
    assert all(math.isnan(scheduler.estimated_accuracy[j]) for j in before)
    assert all(scheduler.predictable[j] for j in after)
    assert sum(start > 600 for start in scheduler.planned_start_s.values()) > 50  # planned by step 1
    # everything predictable: ema grows alpha to its cap, (0.6 + 1) / 2 = 0.8, then 0.9; paper keeps it
    assert [alpha for _, alpha in scheduler.alpha_history[:4]] == [0.6, 0.8, 0.9, 0.9]
    paper = create_scheduler("hybrid", {"runtime": "exact", "oracle": oracle_file(tmp_path, workload),
                                        "retrain": "600", "alpha_rule": "paper"})
    Engine(Platform.homogeneous(16), workload, paper).run()
    assert {alpha for _, alpha in paper.alpha_history} == {0.6}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=hybrid_scenarios())
def test_a_soft_share_keeps_the_rules_and_every_head_starts_by_its_reservation(scenario):
    """share_mode=soft: the engine's rules hold, planned jobs stay within the share, and a lent job
    delays no unpredictable head (each starts no later than the reservation it was last given).
    A lent job leaves its step-1 slot behind for the rest of that decision, so a reservation made
    then may be later than the earliest (the watcher's exact check does not apply): the next
    decision recomputes it from the running jobs."""
    nb_res, specs = scenario
    scheduler = create_scheduler("hybrid", {"retrain": "60", "reliability": "dt", "threshold": "0.0",
                                            "alpha_rule": "fixed", "alpha0": "0.3", "share_mode": "soft"})
    decide = scheduler.decide

    def checked(now):
        decisions = decide(now)
        assert scheduler.planned_cores_in_use <= scheduler.share
        return decisions

    scheduler.decide = checked
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    check_invariants(engine, nb_res)
    for job_id, reserved_s in scheduler.head_reservations_s.items():
        assert engine.records[job_id].start_s <= reserved_s + 1e-6


def test_a_soft_share_lends_idle_cores_to_planned_jobs(tmp_path):
    """Everything predictable once a model exists, a share of 1 core (alpha 0.1 on 16): strictly,
    planned jobs queue for that one core while the rest idles; with share_mode=soft the idle cores
    are lent (backfilled with requested times), so jobs wait less and more run at once."""
    rng = np.random.default_rng(7)
    specs = [(str(i), int(i * 20), 1, int(rng.integers(50, 300)), 400, {"user": f"u{i % 3}"}) for i in range(120)]
    workload = make_workload(specs)
    runs = {}
    for mode in ("strict", "soft"):
        scheduler = create_scheduler("hybrid", {"runtime": "exact", "oracle": oracle_file(tmp_path, workload),
                                                "retrain": "300", "alpha_rule": "fixed", "alpha0": "0.1",
                                                "share_mode": mode})
        engine = Engine(Platform.homogeneous(16), workload, scheduler)
        engine.run()
        check_invariants(engine, 16)
        waits = [r.start_s - r.job.submit_time_s for r in engine.records.values()]
        runs[mode] = (scheduler, float(np.mean(waits)))
    strict, soft = runs["strict"][0], runs["soft"][0]
    assert strict.nb_lent == 0 and "nb_jobs_started_on_lent_cores" not in strict.run_report()
    assert soft.nb_lent > 20 and soft.run_report()["nb_jobs_started_on_lent_cores"] == soft.nb_lent
    assert runs["soft"][1] < runs["strict"][1] / 2
    with pytest.raises(InputError):
        create_scheduler("hybrid", {"share_mode": "loose"})


def test_hybrid_options_are_checked():
    for bad in ({"alpha0": "0.95"}, {"threshold": "2"}, {"retrain": "0"}, {"alpha_rule": "max"}):
        with pytest.raises(InputError):
            create_scheduler("hybrid", bad)
    options = create_scheduler("hybrid", {}).options()
    assert options["alpha0"] == 0.6 and options["threshold"] == 0.6 and options["retrain"] == 86400.0
    assert options["alpha_rule"] == "ema" and options["runtime"] == "predicted"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=hybrid_scenarios(), name=st.sampled_from(["online-svf", "online-sjf"]))
def test_plan_based_stopping_early_changes_no_start(scenario, name):
    """Online-SJF/SVF stop planning once nothing later can start now: the same schedule as planning
    the whole queue at every decision."""
    from tests.helpers.invariants import render

    nb_res, specs = scenario
    engines = []
    for whole in (False, True):
        scheduler = create_scheduler(name, {"runtime": "requested"})
        if whole:
            plan = scheduler.plan_queue
            scheduler.plan_queue = lambda *args, plan=plan, **kwargs: plan(*args, **{**kwargs, "whole": True})
        engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
        engine.run()
        engines.append(engine)
    assert render(engines[0]) == render(engines[1])


@st.composite
def profiles_and_jobs(draw):
    """A profile of running jobs' ends (ties, ends at now, a capped share) and jobs to plan."""
    nb_res = draw(st.integers(1, 16))
    releases = [(draw(st.sampled_from([0.0, 1.0, 2.5, 10.0, 1e9])), draw(st.integers(0, 4)), draw(st.integers(0, 2)))
                for _ in range(draw(st.integers(0, 8)))]
    capped_now = draw(st.none() | st.integers(-2, nb_res))
    jobs = [(draw(st.integers(1, nb_res)), draw(st.sampled_from([1.0, 2.5, 1.5, 0.0, 7.5, 1e9, math.inf])))
            for _ in range(draw(st.integers(0, 30)))]
    stop = draw(st.none() | st.lists(st.integers(0, nb_res + 1), min_size=len(jobs), max_size=len(jobs)))
    return nb_res, releases, capped_now, jobs, stop, draw(st.booleans())


@settings(max_examples=examples(1000), deadline=None)
@given(case=profiles_and_jobs())
def test_the_compiled_plan_is_earliest_then_reserve_job_by_job(case):
    nb_res, releases, capped_now, jobs, stop, capped = case
    make = lambda: AvailabilityProfile(0.0, nb_res, capped_now=capped_now, releases=releases)  # noqa: E731
    reference, starts = make(), []
    for index, (cores, duration_s) in enumerate(jobs):
        now_free = min(reference.free[0], reference.capped[0]) if capped else reference.free[0]
        if stop is not None and now_free < stop[index]:
            break
        start_s = reference.earliest(cores, duration_s, capped=capped)
        reference.reserve(start_s, start_s + duration_s, cores, capped=capped)
        starts.append(start_s)
    compiled = make()
    assert compiled.plan([c for c, _ in jobs], [d for _, d in jobs], capped=capped, stop_below=stop,
                         compiled=True) == starts
    assert compiled.steps() == reference.steps()
    assert all(type(v) is int for v in compiled.free + compiled.capped)


@settings(max_examples=examples(1000), deadline=None)
@given(case=profiles_and_jobs())
def test_a_profile_of_running_jobs_by_end_is_the_profile_of_their_releases(case):
    nb_res, releases, capped_now, _, _, capped = case
    ends = sorted((end_s, seq, res) for seq, (end_s, res, _) in enumerate(releases))
    shared = [releases[seq][2] for _, seq, _ in ends] if capped else None
    made = AvailabilityProfile.of_running(0.0, nb_res, ends, capped_now=capped_now, capped_cores=shared)
    expected = AvailabilityProfile(0.0, nb_res, capped_now=capped_now,
                                   releases=[(end_s, res, shared[k] if shared else 0)
                                             for k, (end_s, _, res) in enumerate(ends)])
    assert made.steps() == expected.steps()


@settings(max_examples=examples(1000), deadline=None)
@given(case=profiles_and_jobs())
def test_fits_now_is_an_earliest_slot_at_now(case):
    """fits_now reads only the steps within the duration; it says what earliest(...) == now says."""
    nb_res, releases, capped_now, jobs, _, capped = case
    profile = AvailabilityProfile(0.0, nb_res, capped_now=capped_now, releases=releases)
    for cores, duration_s in jobs:
        for need in (cores, 0, nb_res + 1):
            assert profile.fits_now(need, duration_s, capped=capped) == \
                (profile.earliest(need, duration_s, capped=capped) == profile.times[0])
        start_s = profile.earliest(cores, duration_s, capped=capped)
        profile.reserve(start_s, start_s + duration_s, cores, capped=capped)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenario=hybrid_scenarios(), name=st.sampled_from(["online-svf", "online-sjf", "hybrid"]))
def test_plan_based_schedulers_plan_the_same_compiled(scenario, name, monkeypatch):
    """The compiled planning loop from the first waiting job (the default: from 32) makes the
    schedule of the job-by-job one."""
    from tests.helpers.invariants import render

    nb_res, specs = scenario
    options = ({"retrain": "60", "reliability": "dt", "threshold": "0.1"} if name == "hybrid"
               else {"runtime": "requested"})
    outputs = []
    for minimum in (0, 10**9):
        monkeypatch.setattr(AvailabilityProfile, "KERNEL_MIN", minimum)
        engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler(name, options))
        engine.run()
        outputs.append(render(engine))
    assert outputs[0] == outputs[1]


@st.composite
def backlog_scenarios(draw):
    """Many jobs of few shapes (cores, requested time) arriving faster than they run: a backlog
    whose step 2 holds several jobs of each shape."""
    nb_res = draw(st.integers(4, 12))
    specs = []
    for i in range(draw(st.integers(10, 70))):
        walltime = draw(st.sampled_from([20, 45, 90]))
        specs.append((str(i), draw(st.integers(0, 150)), draw(st.sampled_from([1, 2, nb_res // 2, nb_res])),
                      draw(st.integers(1, walltime)), walltime, {"user": f"u{draw(st.integers(0, 3))}"}))
    return nb_res, specs


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=hybrid_scenarios() | backlog_scenarios(),
       options=st.sampled_from([*HYBRID_OPTIONS[:6],
                                {"retrain": "50", "reliability": "dt", "threshold": "0.2", "share_mode": "soft",
                                 "alpha0": "0.3"},
                                {"retrain": "70", "reliability": "dt", "threshold": "0.0", "step2_order": "sjbf",
                                 "share_mode": "soft"}]))
def test_the_kept_queue_split_schedules_as_a_walk_of_the_whole_queue(scenario, options):
    """The split kept between decisions and step 2's search shape by shape (hybrid_queue.py) give
    the schedule of splitting and walking the whole queue at every decision; the running profile's
    share (only the planned jobs put in place) is the one counted job by job."""
    from tests.helpers.invariants import render

    nb_res, specs = scenario
    outputs = []
    for walks in (True, False):
        scheduler = create_scheduler("hybrid", options)
        scheduler.walks_whole_queue = walks
        running_profile = scheduler.running_profile

        def profile_checked(now, *, share=None, in_share=frozenset(), scheduler=scheduler,
                            running_profile=running_profile):
            made = running_profile(now, share=share, in_share=in_share)
            ends, by_end = scheduler._ends, scheduler._by_end
            shared = [key[2] if by_end[key].job.id in in_share else 0 for key in ends]
            releases = [(key[0], key[2], cores) for key, cores in zip(ends, shared, strict=True)]
            counted = AvailabilityProfile(now, scheduler.nb_free, capped_now=share - sum(shared), releases=releases)
            assert made.steps() == counted.steps()
            return made

        scheduler.running_profile = profile_checked
        engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
        engine.run()
        outputs.append((render(engine), scheduler.nb_started_by_plan, scheduler.nb_lent))
    assert outputs[0] == outputs[1]


def test_a_start_within_the_time_tolerance_of_an_end_takes_only_free_cores():
    """A call delivered 0.2 us before a running job's planned end (within the time tolerance):
    the job due then is not started on its cores, and an overrun is replanned past the tolerance."""
    from types import MappingProxyType

    from schedlab.model import Execute, Job

    for name in ("online-svf", "hybrid"):
        scheduler = create_scheduler(name, {"runtime": "requested"})
        scheduler.on_simulation_begins(Platform.homogeneous(3), 0.0)
        jobs = {key: Job(f"w0!{key}", submit, res, None, f"p{key}", MappingProxyType({"requested_time_s": ask,
                                                                                      "user": "u"}))
                for key, submit, res, ask in (("A", 0.0, 2, 100), ("B", 50.0, 2, 100), ("C", 100.0 - 2e-7, 1, 1000))}
        for key, job in jobs.items():
            scheduler.on_job_submitted(job, job.submit_time_s)
            if key == "C":
                scheduler.on_requested_call(job.submit_time_s)
            decisions = scheduler.decide(job.submit_time_s)
        started = [d.job_id for d in decisions if isinstance(d, Execute)]
        assert started == ["w0!C"] and scheduler.nb_free == 0  # B waits for A's cores
        assert scheduler.expected_end_s("w0!A") > 100.0 - 2e-7 + 1e-6


def test_the_unpredictable_head_keeps_its_reservation_against_a_stream_of_planned_jobs():
    """A 7-core head (larger than the 6-core share) arrives while 1-core predictable jobs keep
    coming: it starts when EASY would start it (715 s), not when the stream ends."""
    specs = [(f"warm{i}", i, 1, 20, 20, {"user": "u", "requested_time_s": 20}) for i in range(6)]
    specs.append(("BIG", 702, 7, 100, 100, {"user": "v", "requested_time_s": 100}))
    specs += [(f"s{k}", 390 + 25 * k, 1, 100, 100, {"user": "u", "requested_time_s": 100}) for k in range(120)]
    workload = make_workload(specs)
    options = {"retrain": "300", "threshold": "0", "alpha_rule": "fixed", "reliability": "dt"}
    assert starts_of(workload, "hybrid", options, 10)["BIG"] == 715.0
    assert starts_of(workload, "fcfs-bf2", {"runtime": "requested"}, 10)["BIG"] == 715.0
    assert starts_of(workload, "hybrid", {**options, "protect_head": "false"}, 10)["BIG"] > 3000.0


def test_a_larger_share_is_used_at_the_retrain_that_makes_it():
    """alpha grows at 600 s with no event then: a call at the boundary starts J2 at 600 s."""
    specs = [(f"warm{i}", i, 1, 20, 20, {"user": "u", "requested_time_s": 20}) for i in range(6)]
    specs += [(f"J{k}", 310, 2, 1000, 1000, {"user": "u", "requested_time_s": 1000}) for k in range(4)]
    options = {"retrain": "300", "threshold": "0", "alpha0": "0.1", "reliability": "dt"}
    starts = starts_of(make_workload(specs), "hybrid", options, 10)
    assert [starts[f"J{k}"] for k in range(4)] == [310.0, 310.0, 600.0, 1310.0]


def test_train_last_bounds_each_retrain_to_the_latest_completions():
    rng = np.random.default_rng(4)
    specs = [(str(i), int(i * 20), int(rng.integers(1, 4)), int(rng.integers(5, 200)), 400, {"user": f"u{i % 3}"})
             for i in range(120)]
    fits: dict[str, list[int]] = {}
    original_fit = ReliabilityModel.fit

    def fit(self, X, y, **kwargs):  # noqa: N803
        fits.setdefault(test_label, []).append(len(X))
        return original_fit(self, X, y, **kwargs)

    for test_label, options in (("all", {}), ("last 30", {"train_last": "30"}), ("last 10k", {"train_last": "10000"})):
        scheduler = create_scheduler("hybrid", {"retrain": "300", "reliability": "dt", **options})
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ReliabilityModel, "fit", fit)
            Engine(Platform.homogeneous(6), make_workload(specs), scheduler).run()
        fits[test_label + " rows seen"] = scheduler.training_rows
    assert fits["all"] == sorted(fits["all"]) and fits["all"][-1] > 60
    assert fits["last 30"] == [min(rows, 30) for rows in fits["all"]]
    assert fits["last 10k"] == fits["all"]  # a bound above the completions: the study's rule
    with pytest.raises(InputError, match="train_last"):
        create_scheduler("hybrid", {"train_last": "-1"})


def test_an_unknown_request_is_not_replaced_by_the_walltime():
    """A trace without a requested time whose converter derived the walltime from the run time:
    `requested` must not become the run time."""
    from schedlab.schedulers.runtimes import RuntimeEstimates

    specs = [(str(i), 0, 1, 100 + 37 * i, 100 + 37 * i, {"requested_time_s": -1, "user": "u"}) for i in range(3)]
    workload = make_workload(specs)
    assert all(RuntimeEstimates.requested_s(job) == math.inf for job in workload.jobs)
    native = make_workload([("n", 0, 1, 10, 60)])  # no requested_time_s at all: the walltime is the request
    assert RuntimeEstimates.requested_s(native.jobs[0]) == 60.0
    starts = starts_of(workload, "hybrid", {"runtime": "requested"}, 2)
    assert starts == {"0": 0.0, "1": 0.0, "2": 100.0}


def test_a_negative_regression_output_is_read_by_its_magnitude():
    """predictsim's rule: |f(z)| clipped to [1 s, request]; a clip of negatives to 1 s made the
    job look instantaneous (accuracy near 0)."""
    from types import SimpleNamespace

    from schedlab.predictors.online import planned_prediction_s

    def model(output_s):
        return SimpleNamespace(n_updates_=3, predict=lambda rows: np.array([output_s]))

    assert planned_prediction_s(model(-500.0), [0.0], 3600.0) == 500.0
    assert planned_prediction_s(model(-0.2), [0.0], 3600.0) == 1.0
    assert planned_prediction_s(model(-9000.0), [0.0], 3600.0) == 3600.0
    assert planned_prediction_s(model(700.0), [0.0], 3600.0) == 700.0
    assert planned_prediction_s(SimpleNamespace(n_updates_=0), [0.0], 3600.0) == 3600.0


def test_step2_order_sjbf_backfills_the_shorter_candidate():
    """4 cores, every job unpredictable (no model yet). A (3 cores, 100 s) runs; the head B (4 cores)
    reserves 100 s; at 2 s C (1 core, requested 90 s) and D (1 core, 10 s) can each backfill, not
    both. FCFS takes C (D then cannot finish by 100 s: after B, at 150 s); SJBF takes D first."""
    specs = [("A", 0, 3, 100, 100), ("B", 1, 4, 50, 50), ("C", 2, 1, 90, 90), ("D", 2, 1, 10, 10)]
    workload = make_workload([(*spec, {"user": "u"}) for spec in specs])
    options = {"runtime": "requested"}
    assert starts_of(workload, "hybrid", options, 4) == {"A": 0.0, "B": 100.0, "C": 2.0, "D": 150.0}
    assert starts_of(workload, "hybrid", {**options, "step2_order": "sjbf"}, 4) == {"A": 0.0, "B": 100.0,
                                                                                     "D": 2.0, "C": 150.0}
    with pytest.raises(InputError):
        create_scheduler("hybrid", {"step2_order": "svf"})


def test_history_baselines_of_the_predictor_option():
    """user-last: the user's last run time; user-last2: the mean of the last two; the request until
    the user has that many completions; clipped to [1 s, request]."""
    from schedlab.predictors.online import history_prediction_s

    history = CompletionHistory()
    row = history.row("u", 0.0, 500.0, 1.0, 0.0)
    assert history_prediction_s("user-last", row, 500.0) == 500.0
    history.record(user="u", runtime_s=100.0, cores=1.0, end_s=10.0)
    row = history.row("u", 20.0, 500.0, 1.0, 20.0)
    assert history_prediction_s("user-last", row, 500.0) == 100.0
    assert history_prediction_s("user-last2", row, 500.0) == 500.0  # one completion only
    history.record(user="u", runtime_s=0.2, cores=1.0, end_s=30.0)
    row = history.row("u", 40.0, 500.0, 1.0, 40.0)
    assert history_prediction_s("user-last", row, 500.0) == 1.0
    assert history_prediction_s("user-last2", row, 500.0) == pytest.approx(50.1)
    assert history_prediction_s("user-last2", row, 30.0) == 30.0


def test_the_hybrid_and_its_baselines_take_any_runtime_predictor(tmp_path):
    from schedlab.predictors.features import get_feature_set, job_table
    from schedlab.predictors.runtime import RuntimePredictor, save

    specs = [(str(i), 10 * i, 1 + i % 3, 50 + 10 * (i % 4), 400, {"user": f"u{i % 2}", "requested_time_s": 400})
             for i in range(40)]
    workload = make_workload(specs)
    table = job_table(list(workload.jobs), get_feature_set("diws").columns)
    runtimes = [workload.profiles[job.profile].delay_s for job in workload.jobs]
    model_path = tmp_path / "m.skops"
    save(RuntimePredictor(features="diws", model="dt", seed=0).fit(table, runtimes), model_path, {})
    for name in ("hybrid", "online-svf", "fcfs-bf1"):
        for predictor in ("user-last", "user-last2", f"model:{model_path}"):
            scheduler = create_scheduler(name, {"predictor": predictor, "retrain": "100"} if name == "hybrid"
                                         else {"predictor": predictor})
            engine = Engine(Platform.homogeneous(4), workload, scheduler)
            engine.run()
            check_invariants(engine, 4)
            assert scheduler.options()["predictor"] == predictor
            assert all(1.0 <= p <= 400.0 for p in scheduler.predicted_s.values())
        last = create_scheduler(name, {"predictor": "user-last"})
        Engine(Platform.homogeneous(4), workload, last).run()
        assert last.predicted_s["w0!0"] == 400.0  # the request before the user's first completion
    for bad in ("model:", "nag", f"model:{tmp_path / 'missing.skops'}"):
        with pytest.raises(InputError):
            create_scheduler("hybrid", {"predictor": bad})


@pytest.mark.parametrize("options", [{"missing_walltime": "factor:2"}, {"missing_walltime": "runtime"},
                                     {"walltime_from": "runtime"}])
def test_walltimes_derived_from_run_times_leave_the_request_unknown(options):
    """A model without user estimates (Lublin) converted with walltimes from run times: every job
    says its request is unknown (-1), so the hybrid study's schedulers never plan with the walltime
    as a request (it would be the run time: look-ahead)."""
    from schedlab.workload import parse_workload
    from schedlab.workloads.convert import ConversionOptions, convert
    from schedlab.workloads.lublin import generate, to_trace_jobs

    trace = to_trace_jobs(generate(nodes=16, nb_jobs=40, seed=2), nodes=16, seed=2, mode="typed")
    document, summary = convert(trace, ConversionOptions(**options))
    assert summary["nb_walltime_from_runtime"] == 40
    workload = parse_workload(json.dumps(document))
    assert all(job.walltime_s and job.extra["requested_time_s"] == -1 for job in workload.jobs)
    from schedlab.schedulers.runtimes import RuntimeEstimates

    assert all(RuntimeEstimates.requested_s(job) == math.inf for job in workload.jobs)
    scheduler = create_scheduler("fcfs-bf1", {"runtime": "requested"})
    Engine(Platform.homogeneous(16), workload, scheduler).run()
    assert {scheduler.estimate_s(job) for job in workload.jobs} == {math.inf}
    plain, _ = convert(trace, ConversionOptions())  # no walltime derived: no field added
    assert all("requested_time_s" not in job for job in plain["jobs"])
