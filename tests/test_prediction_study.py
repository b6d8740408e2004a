"""The predictor-vs-schedule study's computations: gains against the baseline on the same instance,
Spearman's rho per trace, and the verdicts in words, on tables with known answers; and the report
of a small campaign."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from schedlab.experiments.studies.campaign_predictions import (
    correlations,
    gains,
    plain_statement,
    trace_tables,
    verdict,
)

SPEC = {"baseline": "easy", "metric": "mean_bounded_slowdown"}


def results(rows):
    frame = pd.DataFrame(rows)
    frame["complete"] = True
    frame["repetition"] = np.nan
    frame["platform"] = "c"
    frame["mean_waiting_time_s"] = 1.0
    frame["utilisation"] = 0.5
    return frame


def known_frame():
    """Two traces, two instances each; arms a..d whose MAE orders their gain exactly (lower MAE, lower
    AVGbsld) and whose kill share is the same everywhere except one arm."""
    rows = []
    for workload, scale in (("t1", 1.0), ("t2", 3.0)):
        for instance in ("i0", "i1"):
            rows.append({"workload": workload, "instance": instance, "scheduler": "easy", "scheduler_name": "easy",
                         "mean_bounded_slowdown": 10.0 * scale})
            for k, arm in enumerate("yz"):  # another scheduler of two arms: too few to correlate
                rows.append({"workload": workload, "instance": instance, "scheduler": arm, "scheduler_name": "w",
                             "mean_bounded_slowdown": 1.0, "pred_mae_min": 50.0 + k})
            for k, arm in enumerate("abcd"):
                rows.append({"workload": workload, "instance": instance, "scheduler": arm, "scheduler_name": "x",
                             "mean_bounded_slowdown": (5.0 + k) * scale, "pred_mae_min": 10.0 + 7 * k,
                             "pred_bias_min": [3.0, -1.0, 2.0, -4.0][k] * (1 if workload == "t1" else -1),
                             "pred_kill_pct": 5.0 if arm != "c" else 6.0})
    return results(rows)


def test_gains_are_against_the_baseline_on_the_same_instance():
    frame = known_frame()
    table = gains(frame, SPEC)
    a = table[(table["scheduler"] == "a") & (table["workload"] == "t2")]
    assert a["gain"].tolist() == pytest.approx([0.5, 0.5])
    assert table[table["scheduler"] == "easy"]["gain"].tolist() == pytest.approx([0.0] * 4)


def test_spearman_per_trace_and_the_verdicts():
    table = correlations(known_frame(), SPEC)
    assert set(table["scheduler"]) == {"x"} and (table["arms"] == 4).all()
    table = table.set_index("metric")
    assert table.loc["MAE (min)", "rho t1"] == pytest.approx(1.0) and table.loc["MAE (min)", "mean rho"] == 1.0
    assert table.loc["MAE (min)", "verdict"] == "predicts the schedule"
    assert table.loc["MAE (min)", "traces with rho > 0"] == "2 of 2"
    # |bias| 3, 1, 2, 4 against gains in order a > b > c > d: rho(-|bias|, gain) = 0.4 on both traces
    assert table.loc["signed bias (min)", "mean rho"] == pytest.approx(0.4)
    assert table.loc["signed bias (min)", "verdict"] == "predicts it weakly"
    assert table.loc["killed if walltime (%)", "verdict"] in ("predicts it weakly", "does not predict the schedule")
    statement = plain_statement(table.reset_index())
    assert statement.startswith("Under x: predicts the schedule MAE (min) (mean rho 1.00); predicts it weakly")


def test_verdict_thresholds():
    assert verdict(0.6, 3, 4) == "predicts the schedule"
    assert verdict(0.6, 2, 4) == "predicts it weakly"  # positive on half the traces only
    assert verdict(0.1, 2, 4) == "does not predict the schedule"
    assert verdict(-0.7, 0, 3) == "predicts it inversely"
    assert verdict(math.nan, 0, 0).startswith("not measured")


def test_trace_tables_put_the_baseline_first_with_medians():
    tables = trace_tables(known_frame(), SPEC)
    t1 = tables["t1"]
    assert t1["arm"].tolist() == ["easy", "a", "b", "c", "d", "y", "z"]
    assert t1.set_index("arm").loc["b", "gain in AVGbsld (%)"] == pytest.approx(40.0)
    assert t1.set_index("arm").loc["a", "MAE (min)"] == 10.0 and t1["instances"].tolist() == [2] * 7


def test_a_predictions_campaign_is_checked_and_reported(tmp_path, monkeypatch):
    from schedlab.cli import main
    from tests.helpers.workloads import kth_excerpt_campaign

    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    text = kth_excerpt_campaign([
        ("easy", None, None), ("easy-predicted", "dt", '{ history = "@history", learner = "dt" }'),
        ("easy-predicted", "last2", '{ learner = "user-last2" }'), ("easy-prob", "aft", '{ history = "@history" }'),
        ("easy-predicted", "exact", '{ learner = "exact", oracle = "@workload" }')],
        days=0.5, windows=2, head='description = "An excerpt of KTH stands for the traces."',
        tail='[predictions]\nbaseline = "easy"')
    path = tmp_path / "p.toml"
    path.write_text(text.replace('baseline = "easy"', 'baseline = "nope"'))
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists()
    path.write_text(text)
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1", "-q"]) == 0
    assert (tmp_path / "o" / "predictions.json").is_file()
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r")]) == 0
    report = (tmp_path / "r" / "report.md").read_text()
    assert "## Predictions and schedules: kth" in report and "## Which ML metric predicts the schedule" in report
    assert "## Study\n\nAn excerpt of KTH stands for the traces." in report  # the campaign's description
    assert (tmp_path / "r" / "prediction_scatter.png").is_file() and (tmp_path / "r" / "calibration.png").is_file()
    assert "## Calibration of the distribution predictors" in report


def test_a_larger_is_better_metric_gains_when_it_grows():
    frame = known_frame()
    frame["utilisation"] = frame["mean_bounded_slowdown"]  # utilisation 5..8 x scale against the baseline's 10
    table = gains(frame, {"baseline": "easy", "metric": "utilisation"})
    a = table[(table["scheduler"] == "a") & (table["workload"] == "t1")]
    assert a["gain"].tolist() == pytest.approx([-0.5, -0.5])  # lower utilisation: a loss
    rho = correlations(frame, {"baseline": "easy", "metric": "utilisation"}).set_index("metric")
    assert rho.loc["MAE (min)", "mean rho"] == pytest.approx(-1.0)
