"""Runtime predictors: features, models, safe persistence with a card, the study's metrics, and no
look-ahead (training data precede the window; later run times change nothing learned)."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.errors import InputError
from schedlab.predictors.evaluate import prediction_report
from schedlab.predictors.features import UserMeans, job_table
from schedlab.predictors.runtime import RuntimePredictor, load, save
from schedlab.predictors.training import load_training_data, split_indices, train
from tests.helpers.data import examples, make_workload
from tests.helpers.workloads import workload_file


def test_a_tree_learns_user_habits_and_the_card_records_everything(tmp_path):
    predictor, card = train(workload_file(tmp_path), model="dt", split="time")
    assert card["metrics"]["mae_min"] < 0.5  # within 30 s: users are predictable here
    assert card["features"]["used"] == ["cpu", "user", "qos", "time_limit"]
    assert set(card["features"]["dropped_not_in_data"]) == {"mem_gb", "mem", "node", "gpu"}
    # the first 84 jobs precede the test window; those still running at its first submission (t = 840)
    # are left out: the model learns only what was known then
    _, _, runtimes = load_training_data(tmp_path / "w.json")
    known = sum(10 * i + runtimes[i] <= 840 for i in range(84))
    assert card["training_data"]["nb_jobs"] == known < 84 and card["split"]["nb_test_jobs"] == 36
    assert card["split"]["nb_left_out_running"] == 84 - known
    assert card["training_data"]["submit_window_s"][1] < card["split"]["test_submit_window_s"][0]
    assert card["model"]["params"] == predictor.get_params() and card["seed"] == 0
    assert {"scikit-learn", "skops", "numpy", "schedlab"} <= set(card["versions"])


@pytest.mark.parametrize("model", ["dt", "rf", "gb", "gb-xgb", "adaboost", "nn", "walltime", "user-last2"])
def test_safe_round_trip_gives_identical_predictions(tmp_path, model):
    path = workload_file(tmp_path)
    predictor, card = train(path, model=model, features="diws-aug", split="random", seed=5)
    save(predictor, tmp_path / "m.skops", card)
    import skops.io

    from schedlab.predictors.runtime import TRUSTED_TYPES

    assert set(skops.io.get_untrusted_types(file=tmp_path / "m.skops")) <= TRUSTED_TYPES
    again, card_again = load(tmp_path / "m.skops")
    _, table, _ = load_training_data(path)
    assert np.array_equal(predictor.predict(table), again.predict(table))
    assert card_again == json.loads(json.dumps(card, default=str))
    model_mode = (tmp_path / "m.skops").stat().st_mode & 0o777
    assert model_mode == (tmp_path / "m.skops.card.json").stat().st_mode & 0o777  # readable as its card
    assert model_mode & 0o044 or os.umask(os.umask(0)) & 0o044  # group/other read unless the umask forbids


class Evil:
    pass


def test_loading_refuses_foreign_types_and_code(tmp_path):
    import skops.io
    from sklearn.preprocessing import FunctionTransformer
    from sklearn.tree import DecisionTreeRegressor

    skops.io.dump({"payload": Evil()}, tmp_path / "evil.skops")
    with pytest.raises(InputError, match="refusing to load types"):
        load(tmp_path / "evil.skops")
    skops.io.dump(FunctionTransformer(func=exec), tmp_path / "exec.skops")  # a function that runs code
    with pytest.raises(InputError, match=r"refusing to load types.*exec"):
        load(tmp_path / "exec.skops")
    skops.io.dump(DecisionTreeRegressor().fit([[0], [1]], [0, 1]), tmp_path / "tree.skops")
    with pytest.raises(InputError, match="not a schedlab runtime predictor"):
        load(tmp_path / "tree.skops")
    (tmp_path / "junk.skops").write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a skops model file"):
        load(tmp_path / "junk.skops")


def test_no_look_ahead_later_run_times_change_nothing_learned(tmp_path):
    """A time split trains on the earlier jobs only: other run times for the later (test) jobs leave
    the model, its user means and every prediction unchanged."""
    base = workload_file(tmp_path, name="a.json")
    _, _, runtimes = load_training_data(base)
    changed = runtimes.copy()
    changed[84:] = changed[84:] * 7 + 13
    other = workload_file(tmp_path, runtimes=list(changed), name="b.json")
    _, table, _ = load_training_data(base)
    first, _ = train(base, model="dt", features="diws-aug", split="time")
    second, _ = train(other, model="dt", features="diws-aug", split="time")
    assert np.array_equal(first.predict(table), second.predict(table))
    means = [p.pipeline_.named_steps["user_means"].means_ for p in (first, second)]
    assert means[0] == means[1]


def test_user_means_use_the_training_rows_only():
    train_rows = pd.DataFrame({"user": ["a", "a", "b"], "cpu": [2.0, 4.0, 8.0]})
    means = UserMeans(columns=("cpu",)).fit(train_rows)
    out = means.transform(pd.DataFrame({"user": ["a", "b", "c"], "cpu": [100.0, 100.0, 100.0]}))
    assert out["user_mean_cpu"].tolist() == [3.0, 8.0, 14.0 / 3.0]  # c: unseen, the training mean


def test_baselines():
    table = pd.DataFrame({"user": ["a", "a", "a", "b"], "time_limit": [600.0, 600.0, 600.0, 900.0]})
    walltime = RuntimePredictor(model="walltime").fit(table, [1, 2, 3, 4])
    assert walltime.predict(table).tolist() == [600.0, 600.0, 600.0, 900.0]
    last2 = RuntimePredictor(model="user-last2").fit(table.iloc[:3], [10.0, 20.0, 40.0])
    assert last2.predict(table).tolist() == [30.0, 30.0, 30.0, 900.0]  # b: no history, its limit
    last2.partial_fit(table.iloc[3:], [70.0])
    assert last2.predict(table.iloc[3:]).tolist() == [900.0]  # one run time known: still the limit
    last2.partial_fit(table.iloc[3:], [1500.0])
    assert last2.predict(table.iloc[3:]).tolist() == [785.0]  # (70 + 1500) / 2
    last2.partial_fit(table.iloc[3:], [1700.0])
    assert last2.predict(table.iloc[3:]).tolist() == [900.0]  # (1500 + 1700) / 2 = 1600, capped by the limit
    margin = RuntimePredictor(model="walltime", margin_min=1.0).fit(table, [1, 2, 3, 4])
    assert margin.predict(table).tolist()[0] == 660.0


def test_baselines_are_estimators_of_their_own(tmp_path):
    from sklearn.base import clone

    from schedlab.predictors.runtime import TimeLimitBaseline, UserLast2Baseline, make_predictor

    assert type(make_predictor(model="walltime")) is TimeLimitBaseline
    assert type(RuntimePredictor(model="user-last2", seed=3)) is UserLast2Baseline  # code written before
    assert type(make_predictor(model="dt")) is RuntimePredictor
    last2 = UserLast2Baseline(margin_min=1.0)
    assert clone(last2).get_params() == {"features": "diws", "seed": 0, "margin_min": 1.0}
    assert last2.learns_each_completion and last2.reads_requests_only
    assert not RuntimePredictor(model="dt").reads_requests_only
    # a baseline saved when it was a RuntimePredictor loads as its class now, with what it learned
    old = RuntimePredictor.__new__(RuntimePredictor)
    old.__dict__.update(features="diws", model="user-last2", seed=0, margin_min=0.0, columns_=["user"],
                        dropped_=[], pipeline_=None, last_runtimes_={"a": [10.0, 20.0]})
    save(old, tmp_path / "old.skops", {})
    loaded, _ = load(tmp_path / "old.skops")
    assert type(loaded) is UserLast2Baseline and loaded.predict_requests([("a", 600.0)]).tolist() == [15.0]
    save(loaded, tmp_path / "new.skops", {})
    assert type(load(tmp_path / "new.skops")[0]) is UserLast2Baseline


def test_prediction_metrics_by_hand():
    # minutes: actual 10, 20, 30, 40; predicted 12 (over 2), 18 (under 2), 30 (exact), 50 (over 10)
    actual = np.array([10, 20, 30, 40]) * 60.0
    predicted = np.array([12, 18, 30, 50]) * 60.0
    limit = np.array([60, 60, 30, 35]) * 60.0  # the last limit underestimates its job
    report = prediction_report(actual, predicted, limit)
    assert report["mae_min"] == pytest.approx(14 / 4) and report["mse_min2"] == pytest.approx((4 + 4 + 100) / 4)
    assert report["rmse_min"] == pytest.approx(np.sqrt(27.0))
    assert report["r2"] == pytest.approx(1 - 108 / 500)
    assert report["over"]["share"] == 0.5 and report["over"]["mean"] == pytest.approx(6.0)
    assert report["over"]["max"] == pytest.approx(10.0) and report["under"]["share"] == 0.25
    assert report["exact"]["share"] == 0.25 and report["share_limit_underestimates"] == 0.25
    # effectiveness: e = (|limit-actual| - |pred-actual|) / |limit-actual|; job 3's gap is 0: left out
    e1, e2, e4 = (50 - 2) / 50, (40 - 2) / 40, (5 - 10) / 5
    assert report["effectiveness_valid"] == pytest.approx((e1 + e4) / 2)  # predictions >= actual
    assert report["effectiveness_general"] == pytest.approx((e1 + 0.0 + e4) / 3)  # underestimate: 0
    assert e2 > 0  # (counted as 0 in "general", by the study's reading)
    low, high = report["interval95_abs_error_min"]
    assert low == pytest.approx(np.percentile([2, 2, 0, 10], 2.5)) and high == pytest.approx(
        np.percentile([2, 2, 0, 10], 97.5))


def test_splits():
    jobs = make_workload([(str(i), 100 - i, 1, 5, 10) for i in range(10)]).jobs
    train_idx, test_idx = split_indices(list(jobs), "time", 0.3, 0)
    submits = [jobs[i].submit_time_s for i in range(10)]
    assert len(test_idx) == 3 and max(submits[i] for i in train_idx) <= min(submits[i] for i in test_idx)
    a, b = split_indices(list(jobs), "random", 0.3, 1), split_indices(list(jobs), "random", 0.3, 1)
    assert a[1].tolist() == b[1].tolist() and len(a[1]) == 3
    with pytest.raises(InputError, match="--test-share"):
        split_indices(list(jobs), "random", 1.5, 0)
    # submits 91..100 (sorted: 91, 92, ...): tests are the last three (98, 99, 100); with run times,
    # a training job still running at 98 (93 + 6 > 98) is left out of both sets (97 + 1 = 98 ends in time)
    runtimes = np.full(10, 1.0)
    runtimes[next(i for i in range(10) if jobs[i].submit_time_s == 93)] = 6.0
    kept, tested = split_indices(list(jobs), "time", 0.3, 0, runtimes)
    assert sorted(submits[i] for i in kept) == [91, 92, 94, 95, 96, 97] and len(tested) == 3


def test_an_unknown_time_limit_never_falls_back_to_the_walltime():
    """A converter may derive the walltime from the run time (--missing-walltime runtime): when the
    trace says its limit is unknown (-1), the feature is unknown too, not the walltime."""
    jobs = make_workload([("a", 0, 8, 50, 50, {"requested_time_s": -1}), ("b", 0, 8, 50, 600, {}),
                          ("c", 0, 8, 50, 50, {"requested_time_s": 900, "requested_procs": -1})]).jobs
    table = job_table(jobs, ["time_limit", "cpu"])
    assert np.isnan(table["time_limit"][0]) and table["time_limit"][1] == 600.0  # b: no such field at all
    assert table["time_limit"][2] == 900.0 and table["cpu"].tolist() == [8.0, 8.0, 8.0]  # -1 = unknown


def test_feature_table_reads_requests_only():
    jobs = make_workload([("a", 0, 8, 50, 600, {"user": 7, "requested_procs": 16, "requested_mem_kb": 1048576,
                                                 "qos": "high"})]).jobs
    table = job_table(jobs, ["cpu", "mem_gb", "user", "qos", "time_limit", "gpu"])
    assert table.iloc[0].to_dict() == {"cpu": 16.0, "mem_gb": 1.0, "user": "7", "qos": "high", "time_limit": 600.0,
                                       "gpu": pytest.approx(np.nan, nan_ok=True)}
    # a service class: the QoS, else the queue, else the partition (Atlas and Curie have only that)
    classes = make_workload([("a", 0, 1, 5, 60, {"queue": 3, "partition": 9}), ("b", 0, 1, 5, 60, {"partition": 9}),
                             ("c", 0, 1, 5, 60, {"queue": -1, "partition": 9})]).jobs
    assert job_table(classes, ["qos"])["qos"].tolist() == ["3", "9", "9"]  # c: queue -1 is unknown


def test_cli_train_and_evaluate(tmp_path, capsys):
    path = workload_file(tmp_path)
    assert main(["predictor", "train", "-w", str(path), "--model", "rf", "--split", "random",
                 "-o", str(tmp_path / "rf.skops")]) == 0
    assert "test set (random split)" in capsys.readouterr().out
    assert (tmp_path / "rf.skops.card.json").is_file()
    other = workload_file(tmp_path, name="other.json", n=60)
    assert main(["predictor", "evaluate", "-m", str(tmp_path / "rf.skops"), "-w", str(other), "--json",
                 "--csv", str(tmp_path / "e.csv")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["nb_jobs"] == 60 and report["model"]["name"] == "rf"
    row = pd.read_csv(tmp_path / "e.csv").iloc[0]
    assert row["model"] == "rf" and row["nb_jobs"] == 60 and row["mae_min"] == pytest.approx(report["mae_min"])
    assert row["over_pct"] == pytest.approx(100 * report["over"]["share"])
    # its own training file: only the held-out jobs are scored
    assert main(["predictor", "evaluate", "-m", str(tmp_path / "rf.skops"), "-w", str(path)]) == 0
    out = capsys.readouterr().out
    assert "scoring its 36 held-out jobs" in out and "\n36 jobs (errors in minutes)" in out
    assert main(["predictor", "evaluate", "-m", str(tmp_path / "none.skops"), "-w", str(path)]) == 2


def test_the_baselines_fast_path_equals_their_table_path():
    """Schedulers predict baselines from (user, limit) pairs without pandas: the same numbers."""
    from schedlab.predictors.features import SOURCES, user_and_limit

    specs = [(str(i), i, 1, 10 * i + 5, None if i % 5 == 0 else 100 * i,
              {"user": i % 3} if i % 4 else {}) for i in range(1, 30)]
    jobs = list(make_workload(specs).jobs)
    for model in ("walltime", "user-last2"):
        predictor = RuntimePredictor(model=model, margin_min=0.5).fit(job_table(jobs[:12], SOURCES),
                                                                      [float(j) for j in range(12)])
        for job, runtime in zip(jobs[12:20], range(8), strict=True):
            if model == "user-last2":
                predictor.learn_request(user_and_limit(job)[0], float(runtime))
        table = predictor.predict(job_table(jobs, SOURCES))
        fast = predictor.predict_requests([user_and_limit(job) for job in jobs])
        assert np.array_equal(table, fast, equal_nan=True)


@st.composite
def tree_data(draw):
    n = draw(st.integers(5, 80))
    rows = []
    for i in range(n):
        rows.append((str(i), draw(st.integers(0, 50)), draw(st.integers(1, 64)), draw(st.integers(1, 5000)),
                     draw(st.one_of(st.none(), st.sampled_from([600, 3600, 86400]))),
                     {"user": draw(st.one_of(st.none(), st.integers(0, 6))),
                      "requested_mem_kb": draw(st.sampled_from([-1, 1048576, 3 * 1048576 + 1]))}))
    return rows


@pytest.mark.parametrize(("model", "features"), [("dt", "diws"), ("adaboost", "coare"), ("rf", "diws"),
                                                 ("dt", "diws-aug"), ("gb", "coare")])
@settings(max_examples=examples(25), deadline=None)
@given(data=tree_data(), extra=tree_data())
def test_per_job_predictions_equal_the_pipeline(model, features, data, extra):
    """predict_jobs (compiled trees for dt and adaboost, scikit-learn otherwise) gives the numbers of
    predict on the job table, for seen and unseen users, missing values and any batch size."""
    from schedlab.predictors.features import SOURCES, job_values
    from schedlab.predictors.runtime import _compiled

    jobs = list(make_workload(data).jobs)
    others = list(make_workload([(f"x{s[0]}", *s[1:]) for s in extra]).jobs)
    predictor = RuntimePredictor(model=model, features=features, seed=1, margin_min=0.25).fit(
        job_table(jobs, SOURCES), [float(s[3]) for s in sorted(data, key=lambda s: (s[1], f"w0!{s[0]}"))])
    compilable = model in ("dt", "adaboost") and "user_means" not in predictor.pipeline_.named_steps
    assert (_compiled(predictor) is not None) == compilable
    everyone = jobs + others
    expected = predictor.predict(job_table(everyone, SOURCES))
    # one job at a time: every job for the compiled trees; the first 12 for scikit-learn's models,
    # whose per-call cost (~10 ms for a forest) is all this would measure beyond them
    probe = len(everyone) if compilable else 12
    one_by_one = np.concatenate([predictor.predict_jobs([job]) for job in everyone[:probe]])
    assert np.array_equal(one_by_one, expected[:probe])
    assert np.array_equal(predictor.predict_jobs(everyone), expected)  # and all at once
    if compilable:  # the trees as generated code and walked node by node: the same numbers
        compiled = _compiled(predictor)
        for job in everyone:
            row = compiled._row(job_values(job, predictor.columns_))
            assert compiled._predict_all(row) == [tree.predict(row) for tree in compiled.trees]


def test_numeric_ids_are_coded_in_numeric_order():
    """User ids 1..12 (strings in the job table): codes follow 1 < 2 < ... < 10, as the DIWS study's
    tree split numeric ids, not "1" < "10" < "11" < "2"; other ids keep the string order."""
    from schedlab.predictors.features import CATEGORICAL, get_feature_set, job_table
    from schedlab.predictors.runtime import RuntimePredictor, category_order
    from tests.helpers.data import make_workload

    assert category_order(["10", "9", "1", None, "2"]) == ["1", "2", "9", "10", None]
    assert category_order(["u2", "u10", None]) == ["u10", "u2", None]
    specs = [(str(i), 10 * i, 1, 100 * (1 + i % 12), 5000, {"user": 1 + i % 12}) for i in range(48)]
    jobs = list(make_workload(specs).jobs)
    table = job_table(jobs, get_feature_set("diws").columns)
    runtimes = [100.0 * (1 + i % 12) for i in range(48)]
    predictor = RuntimePredictor(features="diws", model="dt", seed=0).fit(table, runtimes)
    encoder = predictor.pipeline_.named_steps["codes"].named_transformers_["categorical"]
    categorical = [c for c in predictor.columns_ if c in CATEGORICAL]
    user_codes = encoder.categories_[categorical.index("user")]
    assert list(user_codes) == [str(u) for u in range(1, 13)]
    assert np.allclose(predictor.predict_jobs(jobs), predictor.predict(table))
