"""Distribution predictors (quantiles, censoring-aware AFT) and the metrics a scheduler needs:
monotone quantiles, censoring that recovers a known answer, calibration of a known distribution,
safe persistence, no look-ahead."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.errors import InputError
from schedlab.predictors.distribution import CensoredPredictor, QuantilePredictor, fit_scale
from schedlab.predictors.evaluate import calibration_error, pinball_loss, prediction_report, quantile_report
from schedlab.predictors.runtime import TRUSTED_TYPES, load, save
from schedlab.predictors.training import load_training_data, train
from tests.helpers.workloads import workload_file


def lognormal_jobs(n: int = 2000, seed: int = 0, limit_log_offset: float = 2.0):
    """Jobs whose log run time is log 600 + 3x + N(0, 1) (x ~ cpu), with one time limit for all:
    exp(log 600 + limit_log_offset); returns (table, run times, true log medians)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    mu = np.log(600.0) + 3.0 * x
    runtime = np.exp(mu + rng.normal(0.0, 1.0, n))
    limit = np.full(n, np.exp(np.log(600.0) + limit_log_offset))
    table = pd.DataFrame({"cpu": np.round(1 + 63 * x), "time_limit": limit,
                          "user": pd.Series([str(i % 7) for i in range(n)], dtype=object)})
    return table, runtime, mu


def test_censoring_recovers_the_known_distribution_and_the_naive_fit_does_not():
    table, runtime, mu = lognormal_jobs()
    limit = table["time_limit"].to_numpy()
    observed = np.minimum(runtime, limit)  # what a trace records: killed jobs ran to their limit
    assert 0.25 < (runtime >= limit).mean() < 0.45
    aft = CensoredPredictor(censoring="aft").fit(table, observed)
    naive = CensoredPredictor(censoring="naive").fit(table, observed)
    error = {name: np.abs(np.log(p.predict(table)) - mu) for name, p in (("aft", aft), ("naive", naive))}
    heavy = table["cpu"].to_numpy() > 52  # most of these jobs were killed
    assert error["aft"].mean() < 0.5 * error["naive"].mean()
    assert error["aft"][heavy].mean() < 0.4 * error["naive"][heavy].mean()
    # the naive fit never predicts past the limit it took for run times; the censored one does
    assert np.median(naive.predict(table)[heavy]) < limit[0] < np.median(aft.predict(table)[heavy])
    sigma = {name: p.pipeline_.named_steps["model"].sigma_ for name, p in (("aft", aft), ("naive", naive))}
    assert abs(sigma["aft"] - 1.0) < 0.15 and sigma["naive"] < 0.85  # the true scale is 1
    # its distribution is calibrated on uncensored data: P(T > median) = 0.5
    survival = aft.survival(table, aft.predict(table))
    assert np.allclose(survival, 0.5, atol=1e-6)


def test_the_scale_of_censored_residuals_is_its_maximum_likelihood():
    rng = np.random.default_rng(3)
    residuals = rng.normal(0.0, 2.0, 20000)
    cut = 1.0
    censored = residuals > cut
    assert fit_scale(np.where(censored, cut, residuals), censored, "normal") == pytest.approx(2.0, rel=0.03)
    # dropping the censoring underestimates it
    assert fit_scale(np.where(censored, cut, residuals), np.zeros_like(censored), "normal") < 1.7


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), levels=st.lists(st.floats(0.01, 0.99), min_size=2, max_size=8, unique=True))
def test_quantiles_never_decrease_across_levels(seed, levels):
    table, runtime, _ = lognormal_jobs(n=300, seed=seed)
    predictor = QuantilePredictor(n_estimators=20, quantiles=(0.1, 0.5, 0.9)).fit(table, runtime)
    ordered = sorted(levels)
    for model in (predictor, CensoredPredictor(n_estimators=20).fit(table, runtime)):
        quantiles = model.predict_quantiles(table, ordered)
        assert quantiles.shape == (len(table), len(ordered))
        assert (np.diff(quantiles, axis=1) >= 0).all()
        assert (quantiles > 0).all()


def test_xgboost_levels_that_cross_are_sorted():
    """xgboost's multi-quantile outputs cross on this data; the learner's never do."""
    table, runtime, _ = lognormal_jobs(n=2000, seed=1)
    predictor = QuantilePredictor(quantiles=(0.1, 0.3, 0.5, 0.7, 0.9)).fit(table, runtime)
    learner = predictor.pipeline_.named_steps["model"]
    from schedlab.predictors.distribution import _booster

    raw = _booster(learner).inplace_predict(predictor._transformed(table).astype(float))
    assert (np.diff(raw, axis=1) < 0).sum() > 0  # xgboost's own levels cross
    assert (np.diff(learner.predict(predictor._transformed(table)), axis=1) >= 0).all()


def test_fitted_levels_are_reproduced_and_others_interpolated_in_log_time():
    table, runtime, _ = lognormal_jobs(n=500)
    predictor = QuantilePredictor(quantiles=(0.25, 0.75), n_estimators=30).fit(table, runtime)
    both = predictor.predict_quantiles(table, [0.25, 0.5, 0.75, 0.05, 0.95])
    assert np.allclose(both[:, 1], np.sqrt(both[:, 0] * both[:, 2]))  # halfway in log time
    assert np.array_equal(both[:, 3], both[:, 0]) and np.array_equal(both[:, 4], both[:, 2])  # outermost
    assert np.array_equal(predictor.predict(table), both[:, 1])
    with pytest.raises(InputError, match=r"in \(0, 1\)"):
        predictor.predict_quantiles(table, [0.0, 0.5])
    with pytest.raises(InputError, match="distinct levels"):
        QuantilePredictor(quantiles=(0.5, 0.5)).fit(table, runtime)


def test_quantile_loss_learns_calibrated_levels_out_of_sample():
    table, runtime, _ = lognormal_jobs(n=4000, seed=5, limit_log_offset=20.0)  # limits never reached
    train_rows, test_rows = slice(0, 3000), slice(3000, None)
    predictor = QuantilePredictor(quantiles=(0.1, 0.5, 0.9)).fit(table[train_rows], runtime[train_rows])
    levels = (0.1, 0.5, 0.9)
    report = quantile_report(runtime[test_rows], predictor.predict_quantiles(table[test_rows], levels), levels)
    assert calibration_error(report) < 0.04
    aft = CensoredPredictor().fit(table[train_rows], runtime[train_rows])
    report_aft = quantile_report(runtime[test_rows], aft.predict_quantiles(table[test_rows], levels), levels)
    assert calibration_error(report_aft) < 0.04


def test_calibration_of_a_known_distribution():
    """Exact quantiles of the run times' own distribution cover each level; a biased one does not,
    and has the larger pinball loss."""
    rng = np.random.default_rng(11)
    mu = rng.uniform(5, 9, 50_000)
    actual = np.exp(mu + rng.normal(0, 0.5, len(mu)))
    from scipy.special import ndtri

    levels = (0.1, 0.25, 0.5, 0.75, 0.9)
    exact = np.exp(mu[:, None] + 0.5 * ndtri(np.array(levels))[None, :])
    report = quantile_report(actual, exact, levels)
    assert np.allclose(report["coverage"], levels, atol=0.01) and calibration_error(report) < 0.01
    biased = quantile_report(actual, exact * 2.0, levels)
    assert all(c > q + 0.05 for c, q in zip(biased["coverage"], levels, strict=True))
    assert all(b > e for b, e in zip(biased["pinball_min"], report["pinball_min"], strict=True))


def test_pinball_loss_by_hand():
    assert pinball_loss(np.array([10.0]), np.array([4.0]), 0.9) == pytest.approx(0.9 * 6)
    assert pinball_loss(np.array([4.0]), np.array([10.0]), 0.9) == pytest.approx(0.1 * 6)


def test_scheduling_metrics_by_hand():
    # run times 60, 120, 600 s; predictions 30 (under), 240 (over), 600 (exact); limits 90, 3600, 3600
    report = prediction_report(np.array([60.0, 120.0, 600.0]), np.array([30.0, 240.0, 600.0]),
                               np.array([90.0, 3600.0, 3600.0]), cores=np.array([4.0, 1.0, 2.0]))
    assert report["bias_min"] == pytest.approx((-30 + 120 + 0) / 3 / 60)
    assert report["share_underestimated"] == pytest.approx(1 / 3)
    assert report["share_killed"] == pytest.approx(1 / 3)  # only the first would be killed, at 30 s
    assert report["wasted_core_h"] == pytest.approx(4 * 30 / 3600)
    # a prediction above the limit is killed at the limit
    capped = prediction_report(np.array([100.0]), np.array([500.0]), np.array([90.0]), cores=np.array([8.0]))
    assert capped["share_underestimated"] == 0 and capped["share_killed"] == 1
    assert capped["wasted_core_h"] == pytest.approx(8 * 90 / 3600)


@pytest.mark.parametrize("model", ["quantile-xgb", "aft", "aft-naive"])
def test_safe_round_trip_and_card(tmp_path, model):
    import skops.io

    path = workload_file(tmp_path)
    predictor, card = train(path, model=model, features="diws-aug", split="random", seed=5)
    assert card["metrics"]["quantiles"]["levels"] == [0.1, 0.25, 0.5, 0.75, 0.9]
    assert "share_killed" in card["metrics"] and card["model"]["name"] == model
    save(predictor, tmp_path / "m.skops", card)
    assert set(skops.io.get_untrusted_types(file=tmp_path / "m.skops")) <= TRUSTED_TYPES
    again, _ = load(tmp_path / "m.skops")
    _, table, _ = load_training_data(path)
    assert np.array_equal(predictor.predict_quantiles(table, [0.2, 0.8]), again.predict_quantiles(table, [0.2, 0.8]))
    jobs, _, _ = load_training_data(path)
    assert np.allclose(again.predict_jobs(jobs), predictor.predict(table))
    with pytest.raises(InputError, match="not a margin"):
        train(path, model=model, margin_min=5.0)


@pytest.mark.parametrize("model", ["quantile-xgb", "aft"])
def test_no_look_ahead_later_run_times_change_nothing_learned(tmp_path, model):
    base = workload_file(tmp_path, name="a.json")
    _, table, runtimes = load_training_data(base)
    changed = runtimes.copy()
    changed[84:] = changed[84:] * 7 + 13
    other = workload_file(tmp_path, runtimes=list(changed), name="b.json")
    first, _ = train(base, model=model, split="time")
    second, _ = train(other, model=model, split="time")
    assert np.array_equal(first.predict_quantiles(table, [0.1, 0.5, 0.9]),
                          second.predict_quantiles(table, [0.1, 0.5, 0.9]))


def test_cli_train_and_evaluate_print_the_calibration(tmp_path, capsys):
    path = workload_file(tmp_path)
    assert main(["predictor", "train", "-w", str(path), "--model", "aft", "--split", "random",
                 "-o", str(tmp_path / "aft.skops")]) == 0
    out = capsys.readouterr().out
    assert "quantile level / coverage / pinball loss" in out and "killed if the prediction were the walltime" in out
    other = workload_file(tmp_path, name="other.json", n=60)
    assert main(["predictor", "evaluate", "-m", str(tmp_path / "aft.skops"), "-w", str(other), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"]["name"] == "aft" and len(report["quantiles"]["coverage"]) == 5


@pytest.mark.parametrize("model", ["quantile-xgb", "aft"])
@pytest.mark.parametrize("features", ["diws", "diws-aug"])
def test_per_job_quantiles_equal_the_pipeline(tmp_path, model, features):
    """A scheduler's per-job path (compiled inputs, no pandas) gives predict_quantiles' numbers
    exactly, unseen users and missing values included."""
    from schedlab.predictors.features import job_values

    path = workload_file(tmp_path)
    predictor, _ = train(path, model=model, features=features, split="none")
    jobs, _, _ = load_training_data(workload_file(tmp_path, name="other.json", n=60))
    rows = [job_values(job, predictor.columns_) for job in jobs]
    rows[0] = [None] * len(rows[0])  # nothing known
    rows[1] = ["someone new" if isinstance(v, str) else v for v in rows[1]]
    from schedlab.predictors.features import rows_table

    for q in (0.1, 0.5, 0.93):
        expected = predictor.predict_quantiles(rows_table(rows, predictor.columns_), [q])[:, 0]
        assert np.array_equal(np.concatenate([predictor.quantile_rows(rows[i:i + 7], q)
                                              for i in range(0, len(rows), 7)]), expected)


def test_planning_metrics_calibrate_over_the_jobs_given_quantiles():
    """Jobs planned before a distribution was fitted have no quantiles (NaN rows): the calibration is
    over the others; the point metrics over all."""
    from schedlab.predictors.evaluate import planning_metrics

    actual = np.array([10.0, 20.0, 30.0, 40.0])
    quantiles = np.array([[np.nan, np.nan], [15.0, 25.0], [35.0, 45.0], [30.0, 50.0]])
    metrics = planning_metrics(actual, actual, np.full(4, 100.0), np.ones(4), quantiles, (0.25, 0.75))
    assert metrics["pred_mae_min"] == 0.0
    assert metrics["pred_coverage_q25"] == pytest.approx(1 / 3) and metrics["pred_coverage_q75"] == 1.0
    none = planning_metrics(actual, actual, np.full(4, 100.0), np.ones(4), np.full((4, 2), np.nan), (0.25, 0.75))
    assert none["pred_calibration_error"] is None and none["pred_coverage_q25"] is None


def test_killed_jobs_are_told_by_the_walltime_when_the_caller_knows_it():
    """A job that ran past its requested time (the time_limit feature) but not to its walltime was
    not killed: the caller's `censored` decides; without it, the limit feature does."""
    from schedlab.model import Job
    from schedlab.predictors.training import killed_at_walltime

    table = pd.DataFrame({"cpu": [1.0, 2.0, 4.0], "time_limit": [100.0, 100.0, 100.0]})
    y = np.array([50.0, 150.0, 300.0])
    aft = CensoredPredictor()
    derived = aft._targets(table, y, None)
    assert derived[:, 0].tolist() == [50.0, 100.0, 100.0] and derived[:, 1].tolist() == [0, 1, 1]
    told = aft._targets(table, y, np.array([False, False, True]))
    assert told[:, 0].tolist() == [50.0, 150.0, 300.0] and told[:, 1].tolist() == [0, 0, 1]
    assert CensoredPredictor(censoring="naive")._targets(table, y, np.array([False, False, True]))[:, 1].sum() == 0
    jobs = [Job(id=f"w0!{i}", submit_time_s=0.0, res=1, walltime_s=w, profile="p") for i, w in
            enumerate([200.0, 200.0, None])]
    observed, killed = killed_at_walltime(jobs, np.array([50.0, 250.0, 900.0]))
    assert observed.tolist() == [50.0, 200.0, 900.0] and killed.tolist() == [False, True, False]


def test_sigma_needs_ten_finished_jobs_held_out():
    table, runtime, _ = lognormal_jobs(n=30)
    assert CensoredPredictor().fit(table.iloc[:20], runtime[:20]).pipeline_.named_steps["model"].sigma_ == 1.0
    fitted = CensoredPredictor().fit(table, runtime).pipeline_.named_steps["model"].sigma_  # 6 held out of 30
    assert fitted == 1.0
    many = lognormal_jobs(n=400)
    assert CensoredPredictor().fit(many[0], many[1]).pipeline_.named_steps["model"].sigma_ != 1.0
