"""Reproduction tooling: predictor studies (paper tables) and a campaign's paper comparison."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.cli import main
from schedlab.experiments.compare import paper_table, study_layout
from tests.conftest import REPO
from tests.test_experiments import campaign_file, one_line_error
from tests.test_predictors import workload_file

STUDY = """kind = "predictor-study"
name = "s"
models = {models}
seed = 0
test_share = 0.3
paper = "{paper}"

[workload]
file = "{workload}"

[[tables]]
name = "random"
title = "Tab. 3: random"
split = "random"

[[tables]]
name = "time"
title = "Tab. 5: time"
split = "time"
"""


def study_file(tmp_path: Path, models: str = '["dt", "walltime"]') -> Path:
    path = tmp_path / "study.toml"
    path.write_text(STUDY.format(models=models, paper=REPO / "experiments" / "diws" / "paper.toml",
                                 workload=workload_file(tmp_path)))
    return path


def test_a_predictor_study_runs_once_and_reports_beside_the_paper(tmp_path, capsys, monkeypatch):
    study = study_file(tmp_path)
    assert main(["experiment", "run", str(study), "-o", str(tmp_path / "out")]) == 0
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert sorted(zip(frame["table"], frame["model"], strict=True)) == [
        ("random", "dt"), ("random", "walltime"), ("time", "dt"), ("time", "walltime")]
    assert (frame["nb_test"] == 36).all() and (frame["nb_train"] == 84).all()  # 30% of 120 jobs
    # the walltime baseline predicts 1000 s for jobs running 100-420 s: every error is an overestimate
    walltime = frame[frame["model"] == "walltime"].iloc[0]
    assert walltime["over_pct"] == 100.0 and walltime["effectiveness_general_pct"] == 0.0

    # a second run trains nothing: every result is found again
    import schedlab.predictors.training as training

    monkeypatch.setattr(training, "train_on", lambda *a, **k: pytest.fail("trained again"))
    assert main(["experiment", "run", str(study), "-o", str(tmp_path / "out")]) == 0
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Tab. 3: random" in text and "| dt ours | dt paper | walltime ours |" in text
    assert "| MAE (min) |" in text and "| 23.51 |" in text  # the paper's DT MAE, random split
    assert "| DT R², random / time split | 0.72 / 0.62 |" in text
    assert (tmp_path / "report" / "predictors.png").stat().st_size > 10_000


def test_a_predictor_study_checks_its_file_first(tmp_path, capsys):
    study = study_file(tmp_path, models='["dt", "svm"]')
    err = one_line_error(capsys, ["experiment", "run", str(study), "-o", str(tmp_path / "o")], "models")
    assert "study.toml:3:" in err


def frame_of(values: dict[tuple[str, int], tuple[float, float]], jitter: dict | None = None) -> pd.DataFrame:
    """Results rows: (platform, window) -> (easy's, diws's) mean wait; jitter: the same for repetitions."""
    rows = []
    for (platform, window), pair in values.items():
        for scheduler, value in zip(("easy", "diws"), pair, strict=True):
            rows.append({"platform": platform, "instance": f"t#{window}", "window": window, "scheduler": scheduler,
                         "repetition": None, "complete": True, "mean_waiting_time_s": value, "nb_jobs": 10})
    for (platform, window, repetition), pair in (jitter or {}).items():
        for scheduler, value in zip(("easy", "diws"), pair, strict=True):
            rows.append({"platform": platform, "instance": f"t#{window}", "window": window, "scheduler": scheduler,
                         "repetition": repetition, "complete": True, "mean_waiting_time_s": value, "nb_jobs": 10})
    return pd.DataFrame(rows)


SPEC = {"baseline": "easy", "candidate": "diws", "setups": {"A": ["big"]}, "paper_file": "paper.toml",
        "rows": [{"row": "mean wait", "setup": "A", "metric": "mean_waiting_time_s", "change_pct": -11.21}]}


def test_paper_table_by_hand():
    # windows 0..2: -50%, +10%, -20% (the last window); median -20%
    frame = frame_of({("big", 0): (100.0, 50.0), ("big", 1): (100.0, 110.0), ("big", 2): (200.0, 160.0)},
                     jitter={("big", 2, 0): (199.0, 161.0), ("big", 2, 1): (201.0, 159.0),
                             ("big", 1, 0): (100.0, 109.0), ("big", 1, 1): (104.0, 111.0)})
    line = paper_table(frame, SPEC).iloc[0]
    assert line["paper"] == "-11.21%" and line["ours, last window"] == "-20.0%"
    assert line["ours, median of 3"] == "-20.0%" and line["same sign? last / median"] == "yes / yes"
    assert line["windows with the paper's sign"] == "2 of 3"
    # window 2: [159, 161] vs [199, 201] apart; window 1: [109, 111] meets [100, 104]? no: apart too
    assert line["beyond jitter noise"] == "2 of 2"
    values = {**SPEC, "rows": [{"row": "n", "setup": "A", "metric": "mean_waiting_time_s", "baseline": 5,
                                "candidate": 3}]}
    line = paper_table(frame, values).iloc[0]
    assert line["paper"] == "5 → 3" and line["ours, last window"] == "200 → 160"
    assert line["same sign? last / median"] == "yes / yes" and line["beyond jitter noise"] == "2 of 2"
    layout = study_layout(frame, SPEC, "big")
    assert layout.iloc[0].to_dict() == {"metric": "mean waiting time (s)", "diws": 160.0, "easy": 200.0,
                                        "change": "-20.00%", "median change over 3 windows": "-20.00%"}


def test_a_campaign_compares_with_the_paper_in_its_report(tmp_path, capsys):
    paper = tmp_path / "paper.toml"
    paper.write_text('[[scheduling]]\nrow = "mean wait"\nsetup = "A"\nmetric = "mean_waiting_time_s"\n'
                     'change_pct = -10.0\n')
    extra = ('\n[compare]\nbaseline = "fcfs"\ncandidate = "easy"\npaper = "paper.toml"\n'
             'setups = { A = ["c32"] }\n')
    path = campaign_file(tmp_path, jobs=60, extra=extra)
    text = path.read_text().replace('options = { queue_order = ["fcfs", "spt"] }', "")
    path.write_text(text)
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert json.loads((tmp_path / "out" / "compare.json").read_text())["candidate"] == "easy"
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Paper vs ours: easy vs fcfs" in report and "| A: mean wait | c32 | -10.00% |" in report
    assert "## Study layout (Tab. 6/7): c32" in report and "## Changes per window: easy vs fcfs" in report
    # EASY never makes the mean wait worse than FCFS on these windows: it can only tie or win
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    pivot = frame.pivot_table(index=["instance"], columns="scheduler", values="mean_waiting_time_s")
    assert np.all(pivot["easy"] <= pivot["fcfs"] + 1e-9)

    broken = path.read_text().replace('setups = { A = ["c32"] }', 'setups = { A = ["c64"] }')
    path.write_text(broken)
    err = one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o2")], "compare[0].setups")
    assert f"{path.name}:" in err


@pytest.mark.traces
def test_the_diws_configs_validate():
    from schedlab.experiments.campaign import load_campaign
    from schedlab.experiments.predictor_study import load_study
    from tests.conftest import need_shared

    need_shared(REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz")
    campaign = load_campaign(REPO / "experiments" / "diws" / "ricc.toml")
    assert campaign.compare["setups"]["B"] == ["setupB512"] and len(campaign.compare["rows"]) == 10
    study = load_study(REPO / "experiments" / "diws" / "predictors.toml")
    assert [t["name"] for t in study["tables"]] == ["random", "random-aug", "time"]
    assert set(study["paper"]["time"]) == {"dt", "rf", "gb", "nn"}

