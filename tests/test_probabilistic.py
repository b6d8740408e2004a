"""Schedulers that use a run-time distribution: EASY planned with a quantile (`easy-predicted`,
DIWS `quantile=`) and probabilistic backfilling (`easy-prob`). A point distribution gives EASY
planning with that point, the walltime gives EASY itself; the invariants hold for every option."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.errors import InputError
from schedlab.model import Platform
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.probabilistic import EasyPredicted, ProbabilisticBackfilling
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import check_invariants, render, scenarios, simulate


class Spread:
    """A test device: a distribution predictor whose q-quantile is limit x (share + spread x (q - 0.5)),
    read from the job's time limit only (no run time)."""

    reads_requests_only = False
    learns_each_completion = False
    columns_ = ["time_limit"]

    def __init__(self, share: float, spread: float) -> None:
        self.share, self.spread = share, spread

    def quantile_rows(self, rows, q):
        limits = np.array([np.nan if row[0] is None else row[0] for row in rows], dtype=float)
        return limits * max(0.01, self.share + self.spread * (q - 0.5))

    def predict_rows(self, rows):
        return self.quantile_rows(rows, 0.5)

    def predict_jobs(self, jobs):
        return self.predict_rows([[job.walltime_s] for job in jobs])


def with_predictor(cls, predictor, **options):
    scheduler = cls(learner="walltime", **options)
    scheduler.estimate._predictor = predictor  # what prepare() keeps (the learner's baseline is replaced)
    scheduler.prepare = lambda: None
    return scheduler


def run(nb_res, specs, scheduler) -> Engine:
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    return engine


def walltimed(specs):
    return [(n, s, r, d, w if w is not None else d + 5) for n, s, r, d, w in specs]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), p=st.sampled_from([0.1, 0.5, 0.9]))
def test_probabilistic_backfilling_with_the_walltime_is_easy(scenario, p):
    nb_res, specs = scenario
    easy = simulate(nb_res, specs, "easy", {})
    prob = simulate(nb_res, specs, "easy-prob", {"learner": "walltime", "p": str(p)})
    assert render(prob) == render(easy)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), p=st.sampled_from([0.1, 0.5, 0.9]), share=st.sampled_from([0.2, 0.5, 1.0]),
       overrun=st.sampled_from(["walltime", "tsafrir"]))
def test_a_point_distribution_gives_easy_planning_with_that_point(scenario, p, share, overrun):
    """Every quantile of a point distribution is the point: the p-quantile test is the plan's."""
    nb_res = scenario[0]
    specs = walltimed(scenario[1])
    point = Spread(share, 0.0)
    planned = run(nb_res, specs, with_predictor(EasyPredicted, point, overrun=overrun))
    prob = run(nb_res, specs, with_predictor(ProbabilisticBackfilling, point, p=p, overrun=overrun))
    assert render(prob) == render(planned)
    # and user-last2 (a point learner, online) the same way
    assert render(simulate(nb_res, specs, "easy-prob", {"learner": "user-last2", "p": str(p)})) == \
        render(simulate(nb_res, specs, "easy-predicted", {"learner": "user-last2"}))


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), p=st.sampled_from([0.1, 0.5, 0.95]), quantile=st.sampled_from([0.3, 0.5, 0.9]),
       overrun=st.sampled_from(["walltime", "power"]))
def test_invariants_with_a_spread_distribution(scenario, p, quantile, overrun):
    nb_res, specs = scenario
    spread = Spread(0.4, 1.0)
    engines = [run(nb_res, specs, with_predictor(ProbabilisticBackfilling, spread, p=p, quantile=quantile,
                                                 overrun=overrun)) for _ in range(2)]
    check_invariants(engines[0], nb_res)
    assert render(engines[0]) == render(engines[1])


def test_the_plan_uses_the_chosen_quantile():
    specs = [("a", 0, 1, 50, 1000), ("b", 0, 1, 50, 400)]
    spread = Spread(0.4, 1.0)  # q-quantile: limit x (0.4 + (q - 0.5))
    for quantile, share in ((0.5, 0.4), (0.9, 0.8), (0.2, 0.1)):
        scheduler = with_predictor(EasyPredicted, spread, quantile=quantile)
        run(2, specs, scheduler)
        assert scheduler.predictions_s == pytest.approx({"w0!a": 1000 * share, "w0!b": 400 * share})


def test_backfilling_by_probability():
    """Four resources; `big` (4 wide) waits for `long` to end at its planned 100 s x share; `cand`
    (1 wide) may backfill if it ends before that shadow time with probability >= p."""
    specs = [("long", 0, 2, 500, 1000), ("big", 1, 4, 10, 100), ("cand", 2, 3, 100, 250)]
    # planning quantile 0.5: long's estimate 1000 x 0.5 = 500 s, shadow 500; cand's q-quantile 250 x (0.5 + (q - 0.5))
    spread = Spread(0.5, 1.0)
    started = {}
    for p in (0.3, 0.9, 0.99):
        engine = run(4, specs, with_predictor(ProbabilisticBackfilling, spread, p=p))
        started[p] = engine.records["w0!cand"].start_s
    # cand's p-quantile: 250 p s; it ends before 500 s from t = 2 for every p < 1, but cand needs 3 of the 2 free
    # resources: it cannot backfill at all; the test is of the probability when it fits, below
    assert started[0.3] == started[0.9] == started[0.99]
    specs = [("long", 0, 2, 500, 1000), ("big", 1, 4, 10, 100), ("cand", 2, 2, 100, 1200)]
    starts = {p: run(4, specs, with_predictor(ProbabilisticBackfilling, spread, p=p)).records["w0!cand"].start_s
              for p in (0.3, 0.45, 0.9)}
    # cand's p-quantile 1200 p: 360 s and 540 s at p = 0.3 and 0.45 (540 > 498 s left: refused), 1080 s at 0.9
    assert starts[0.3] == 2.0 and starts[0.45] > 2.0 and starts[0.9] > 2.0


def test_options_are_checked_and_named():
    with pytest.raises(InputError, match="p must be in"):
        create_scheduler("easy-prob", {"learner": "walltime", "p": "1"})
    with pytest.raises(InputError, match="quantile must be in"):
        create_scheduler("easy-predicted", {"learner": "walltime", "quantile": "0"})
    with pytest.raises(InputError, match="give model=PATH"):
        create_scheduler("easy-prob", {})
    assert create_scheduler("easy-prob", {"learner": "walltime"}).p == 0.9


@pytest.fixture(scope="module")
def aft_model(tmp_path_factory):
    """An aft model trained on a generated workload of its own (another source than any simulated)."""
    from schedlab.predictors.runtime import save
    from schedlab.predictors.training import train
    from tests.helpers.workloads import workload_file

    folder = tmp_path_factory.mktemp("aft")
    predictor, card = train(workload_file(folder, n=300), model="aft", split="none")
    return save(predictor, folder / "aft.skops", card)


def test_a_distribution_model_plans_its_quantiles(aft_model, tmp_path):
    from schedlab.api import simulate as simulate_api
    from tests.helpers.workloads import workload_file

    other = workload_file(tmp_path, name="other.json", n=80)
    estimates = {}
    for quantile in (0.5, 0.9):
        result = simulate_api(16, other, "easy-prob", options={"model": str(aft_model), "quantile": quantile})
        assert result.complete, result.error
        estimates[quantile] = result.engine.scheduler.predictions_s
    assert all(estimates[0.9][job] >= estimates[0.5][job] for job in estimates[0.5])
    assert sum(estimates[0.9][job] > estimates[0.5][job] for job in estimates[0.5]) > 40


@pytest.mark.slow  # about a minute: every check on every built-in workload, and two speed sizes
def test_check_passes_probabilistic_backfilling_with_a_distribution_model(aft_model):
    from schedlab.checker import check_scheduler

    options = {"model": str(aft_model), "p": "0.8"}
    report = check_scheduler(lambda: create_scheduler("easy-prob", options), "easy-prob", options=options,
                             nb_res=8, speed_sizes=(200, 400))
    assert report.ok, report.findings


@pytest.mark.slow
@pytest.mark.batsim
def test_serve_under_real_batsim_equals_the_engine(aft_model, tmp_path):
    """`schedlab serve easy-prob` with a distribution model beside real Batsim 4.2.1 gives the
    engine's jobs.csv under --timing batsim, byte for byte."""
    import json
    import subprocess
    import sys

    from schedlab.workloads.synthetic import ties_and_kills
    from tests.helpers.real_batsim import run_real_batsim

    platform = Path(__file__).resolve().parents[1] / "platforms" / "lublin256.xml"
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(ties_and_kills(nb_jobs=1000, nb_resources=256, seed=3)))
    argv = ["easy-prob", "-O", f"model={aft_model}", "-O", "p=0.7", "-O", "overrun=tsafrir"]
    run_real_batsim(tmp_path / "real", platform, workload,
                    [sys.executable, "-m", "schedlab", "serve", *argv, "--socket", "{socket}"])
    done = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-q", "-p", str(platform), "-w",
                           str(workload), "--timing", "batsim", "--out", str(tmp_path / "ours"), "-s", *argv],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    real = (tmp_path / "real" / "out_jobs.csv").read_text().splitlines()
    assert len(real) == 1001 and real == (tmp_path / "ours" / "jobs.csv").read_text().splitlines()


# ---------------------------------------------------------------------------------------------- online refits


@pytest.mark.parametrize(("learner", "refit"), [("dt", {"refit_jobs": 3}), ("gb-xgb", {"refit_s": 40}),
                                               ("quantile-xgb", {"refit_jobs": 4}), ("aft", {"refit_s": 30}),
                                               ("aft-naive", {"refit_jobs": 2}), ("adaboost", {"refit_jobs": 3})])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), cut=st.integers(10, 150))
def test_online_refits_never_look_ahead(learner, refit, scenario, cut):
    """Other run times for the jobs that end after a cut change no start before it: a learner
    refitted online learns a job only once it has ended."""
    nb_res, specs = scenario
    options = {"learner": learner, "quantile": 0.7, **refit}
    first = run(nb_res, specs, create_scheduler("easy-prob", options))
    check_invariants(first, nb_res)
    ends = {record.job.name: record.finish_s for record in first.records.values()}  # None: rejected
    changed = [(n, s, r, d * 3 + 7 if (ends[n] or 0) > cut else d, w) for n, s, r, d, w in specs]
    second = run(nb_res, changed, create_scheduler("easy-prob", options))

    def before_cut(engine):
        return {job_id: r.start_s for job_id, r in engine.records.items() if r.start_s is not None and r.start_s < cut}

    assert before_cut(first) == before_cut(second)


def test_refits_learn_from_completions_and_censor_the_killed(tmp_path):
    """Jobs of 16 cores run 1,000 s, of 1 core 10 s, all under 2,000 s walltimes; after the first refit
    the learner tells them apart. A killed job is learned as censored at its limit."""
    specs = [(f"j{i}", 30 * i, 16 if i % 2 else 1, 1000 if i % 2 else 10, 2000) for i in range(60)]
    scheduler = create_scheduler("easy-predicted", {"learner": "aft", "refit_jobs": 10})
    run(32, specs, scheduler)
    assert scheduler.estimate.refits >= 3
    late = {job_id: s for job_id, s in scheduler.predictions_s.items() if int(job_id.split("!j")[1]) >= 40}
    wide = [s for job_id, s in late.items() if int(job_id.split("!j")[1]) % 2]
    narrow = [s for job_id, s in late.items() if not int(job_id.split("!j")[1]) % 2]
    assert min(wide) > 300 and max(narrow) < 100
    before = [s for job_id, s in scheduler.predictions_s.items() if job_id == "w0!j0"]
    assert before == [2000.0]  # walltimes until the first fit


def test_refit_options_are_checked():
    with pytest.raises(InputError, match="refit_s > 0 or refit_jobs > 0"):
        create_scheduler("easy-predicted", {"learner": "dt", "refit_s": "10", "refit_jobs": "3"})
    with pytest.raises(InputError, match="no effect"):
        create_scheduler("easy-predicted", {"learner": "user-last2", "refit_jobs": "3"})


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_the_clairvoyant_reference_plans_with_the_real_run_times(scenario, tmp_path_factory):
    """learner=exact reads oracle= (the simulated workload): DIWS then equals the test's oracle device."""
    import json

    from tests.helpers.workloads import oracle

    nb_res, specs = scenario
    path = tmp_path_factory.mktemp("exact") / "w.json"
    path.write_text(json.dumps(make_workload(specs).to_json()))
    exact = create_scheduler("diws", {"learner": "exact", "oracle": str(path)})
    assert render(run(nb_res, specs, exact)) == render(run(nb_res, specs, oracle(specs)))


def test_the_clairvoyant_reference_needs_its_oracle(tmp_path):
    with pytest.raises(InputError, match="learner=exact plans with the run times of oracle="):
        create_scheduler("easy-predicted", {"learner": "exact"})
    with pytest.raises(InputError, match="no effect"):
        create_scheduler("easy-predicted", {"learner": "dt", "oracle": "w.json", "history": "h.json"})


def test_a_campaign_records_each_runs_prediction_quality(tmp_path, monkeypatch):
    """Runs whose scheduler planned with predictions get `pred_*` columns, computed after the run from
    its jobs.csv (the estimates planned against the run times the jobs ran); a distribution's
    quantiles recorded at submission give its calibration. Other schedulers' columns are empty."""
    import pandas as pd

    from schedlab.cli import main
    from tests.helpers.workloads import kth_excerpt_campaign

    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "p.toml"
    path.write_text(kth_excerpt_campaign([
        ("easy", None, None), ("easy-predicted", "dt", '{ history = "@history", learner = "dt" }'),
        ("easy-prob", "aft", '{ history = "@history", learner = "aft" }'),
        ("easy-predicted", "exact", '{ learner = "exact", oracle = "@workload" }'), ("fcfs-bf1", "nag", None)],
        days=1))
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1", "-q"]) == 0
    frame = pd.read_parquet(tmp_path / "o" / "results.parquet").set_index("scheduler")
    assert frame["complete"].all()
    assert frame.loc["easy", ["pred_mae_min", "pred_kill_pct"]].isna().all()
    assert frame.loc["exact", "pred_mae_min"] == pytest.approx(0.0, abs=1e-6)  # the clairvoyant reference
    assert frame.loc["exact", "pred_kill_pct"] == 0.0
    assert frame.loc["dt", "pred_mae_min"] > 0 and np.isnan(frame.loc["dt", "pred_calibration_error"])
    assert 0 <= frame.loc["aft", "pred_calibration_error"] < 0.5 and frame.loc["aft", "pred_pinball_mean_min"] > 0
    coverage = frame.loc["aft", [f"pred_coverage_q{q}" for q in (10, 25, 50, 75, 90)]].tolist()
    assert coverage == sorted(coverage) and 0 <= coverage[0] < coverage[-1] <= 1  # a calibration curve
    assert frame.loc["dt", ["pred_coverage_q10", "pred_coverage_q90"]].isna().all()  # a point has none
    assert frame.loc["nag", "pred_mae_min"] > 0  # the hybrid study's online NAG regression, the same columns


@st.composite
def busy(draw):
    """60 jobs on 4 cores, arriving in bursts, run times far below their walltimes: refits happen at
    instants with submissions, and their predictions decide backfilling."""
    import random

    rng = random.Random(draw(st.integers(0, 10_000)))
    specs, submit = [], 0
    for i in range(60):
        submit += rng.choice([0, 0, 5, 20])
        delay = rng.choice([10, 30, 60, 200])
        specs.append((str(i), submit, rng.choice([1, 1, 2, 4]), delay, delay * rng.choice([2, 5, 20])))
    return 4, specs


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=busy(), p=st.sampled_from([0.1, 0.9]), refit=st.sampled_from([{"refit_jobs": 2},
                                                                               {"refit_s": 20}]))
def test_a_refitted_point_learner_gives_easy_planning_with_it(scenario, p, refit):
    """The refit a decision owes comes before its submissions are predicted, at both levels: with a
    point learner refitted online, easy-prob is easy-predicted."""
    nb_res, specs = scenario
    options = {"learner": "dt", **refit}
    assert render(simulate(nb_res, specs, "easy-prob", {**options, "p": p})) == \
        render(simulate(nb_res, specs, "easy-predicted", options))


def test_jobs_without_an_estimate_leave_the_prediction_metrics_finite(tmp_path):
    """A job without walltime planned with the walltime baseline has no estimate (inf): the run's
    pred_* columns are over the others, and its summary stays valid JSON."""
    from schedlab.api import simulate as simulate_api
    from schedlab.experiments.campaigns.runner import prediction_metrics

    specs = [("a", 0, 1, 50, 100), ("b", 1, 1, 70, None), ("c", 2, 2, 30, 60)]
    workload = make_workload(specs)
    result = simulate_api(2, workload, "easy-predicted", options={"learner": "walltime"}, out=tmp_path / "o")
    assert result.complete, result.error
    metrics = prediction_metrics(result.engine.scheduler, workload, tmp_path / "o")
    assert metrics["pred_mae_min"] == pytest.approx((50 + 30) / 2 / 60)  # a and c: planned 100 and 60 s
    assert all(v is None or np.isfinite(v) for v in metrics.values())
