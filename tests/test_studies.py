"""Reproduction tooling: predictor studies (paper tables) and a campaign's paper comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from schedlab.cli import main
from schedlab.errors import InputError
from schedlab.experiments.papers.compare import study_layout, window_changes
from schedlab.experiments.papers.paper_rows import paper_table
from tests.helpers.cli import campaign_file, one_line_error
from tests.helpers.data import REPO
from tests.helpers.workloads import workload_file

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
    assert (frame["nb_test"] == 36).all()  # 30% of 120 jobs
    # random: the other 84; time: the earlier 84 but those still running at the first test submission
    assert frame.groupby("table")["nb_train"].max().to_dict() == {"random": 84, "time": 58}
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
    # the table of record: the published R² and MAE per table and model, then the paper's finding
    assert main(["reproductions", str(tmp_path / "out"), "-o", str(tmp_path / "rep.md")]) == 0
    record = (tmp_path / "rep.md").read_text()
    assert "| Tab. 3: random: dt R² | s | paper | 0.72 |" in record
    assert "| Tab. 5: time: dt MAE (min) | s | paper |" in record
    assert "finding: DT R², random / time split (time split lower) | s | paper | 0.72 / 0.62 |" in record
    # ours differs beyond x2 in size (R² 0.998 vs 0.72 is within it; MAE 0.08 vs 23.5 min is not)
    assert "| Tab. 3: random: dt MAE (min) | s | paper | 23.51 | 0.08 | - | no (x0.0033) | unknown |" in record
    assert "walltime R²" not in record  # nothing published for the baseline
    assert main(["evidence", str(tmp_path / "out"), "-o", str(tmp_path / "evidence")]) == 0
    assert main(["reproductions", str(tmp_path / "evidence"), "-o", str(tmp_path / "rep2.md")]) == 0
    assert "| Tab. 3: random: dt R² | s | paper | 0.72 |" in (tmp_path / "rep2.md").read_text()
    one_line_error(capsys, ["report", str(tmp_path / "out"), "-o", str(tmp_path / "r2"), "--gantt", "x"],
                   "holds no campaign's runs")
    assert not (tmp_path / "r2").exists()


def test_a_predictor_study_searches_hyper_parameters_and_measures_a_cause_on_them(tmp_path, capsys):
    """`[search]`: each setting trained beside the defaults on one table; a model's cause can be a
    statistic over its rows (defaults and settings), e.g. whether any setting reaches the paper's R²."""
    text = study_file(tmp_path, models='["dt"]').read_text()
    search = ('search = { table = "time", dt = [{ max_depth = 1 }, { min_samples_leaf = 10 }] }\n'
              'causes = { dt = { kind = "data", statistic = "min", metric = "r2", schedulers = ["dt"], '
              'workload = "time", above = -100, note = "no setting brings it to the paper" } }\n')
    study = tmp_path / "study.toml"
    study.write_text(text.replace("test_share = 0.3\n", "test_share = 0.3\n" + search))
    assert main(["experiment", "run", str(study), "-o", str(tmp_path / "out")]) == 0
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    searched = frame[frame["search_of"].notna()]
    assert sorted(searched["model"]) == ["dt max_depth=1", "dt min_samples_leaf=10"]
    default = frame[(frame["model"] == "dt") & (frame["table"] == "time")]["r2"].iloc[0]
    assert set(searched["table"]) == {"time"} and (searched["r2"] != default).any()  # a setting moves it
    depth1 = json.loads((tmp_path / "out" / "runs" / searched.set_index("model").loc["dt max_depth=1", "result"])
                        .read_text())
    assert depth1["model"]["params"]["params"] == {"max_depth": 1}
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report")]) == 0
    assert "## Hyper-parameter search" in (tmp_path / "report" / "report.md").read_text()
    record = tmp_path / "r.md"
    assert main(["reproductions", str(tmp_path / "out"), "-o", str(record)]) == 0
    rows = [line for line in record.read_text().splitlines() if line.startswith("| Tab. 5: time: dt R²")]
    assert len(rows) == 1 and ("| none |" in rows[0] or "data; measured: min r2 (time; n = 3): dt " in rows[0])
    study.write_text(text.replace("test_share = 0.3\n", "test_share = 0.3\n" + search.replace("dt = [", "rf = [")))
    one_line_error(capsys, ["experiment", "plan", str(study)], "field 'search[0].rf'")
    study.write_text(text.replace("test_share = 0.3\n", "test_share = 0.3\n" + search.replace(
        "max_depth = 1", "depth = 1")))
    one_line_error(capsys, ["experiment", "run", str(study), "-o", str(tmp_path / "o2")], "model 'dt':")


def test_a_predictor_study_checks_its_file_first(tmp_path, capsys):
    study = study_file(tmp_path, models='["dt", "svm"]')
    err = one_line_error(capsys, ["experiment", "run", str(study), "-o", str(tmp_path / "o")], "models")
    assert "study.toml:3:" in err
    study = study_file(tmp_path, models='["dt", "dt"]')
    one_line_error(capsys, ["experiment", "run", str(study), "-o", str(tmp_path / "o")], "listed twice")
    (tmp_path / "bad-paper.toml").write_text('[predictors.random.dt]\nmae_min = "23"\n')
    study.write_text(study_file(tmp_path).read_text().replace(str(REPO / "experiments" / "diws" / "paper.toml"),
                                                              str(tmp_path / "bad-paper.toml")))
    one_line_error(capsys, ["experiment", "plan", str(study), "-o", str(tmp_path / "o")],
                   "bad-paper.toml:2: field 'predictors.random.dt[0].mae_min': expected a number")
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 1 -1 -1 -1\n")
    study.write_text(study_file(tmp_path).read_text().replace(f'file = "{tmp_path / "w.json"}"',
                                                              f'swf = "{swf}"\nconvert = {{ days = "x" }}'))
    one_line_error(capsys, ["experiment", "plan", str(study), "-o", str(tmp_path / "o")], "workload[0].convert")
    text = study_file(tmp_path).read_text()
    study.write_text(text.replace("test_share = 0.3\n", 'test_share = 0.3\ncause = "because"\n'))
    one_line_error(capsys, ["experiment", "plan", str(study), "-o", str(tmp_path / "o")],
                   "a cause is measured or cited, not typed")


def test_a_study_on_run_times_that_do_not_vary_reports_no_r2(tmp_path, capsys):
    workload = workload_file(tmp_path, runtimes=[300.0] * 120)
    study = tmp_path / "flat.toml"
    study.write_text(STUDY.format(models='["dt"]', paper=REPO / "experiments" / "diws" / "paper.toml",
                                  workload=workload))
    assert main(["experiment", "run", str(study), "-o", str(tmp_path / "out")]) == 0
    assert "R2 -" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report")]) == 0


def frame_of(values: dict[tuple[str, int], tuple[float, float]], jitter: dict | None = None,
             workload: str = "t") -> pd.DataFrame:
    """Results rows: (platform, window) -> (easy's, diws's) mean wait (None: no run); jitter: the
    same per repetition; window None: a workload without windows."""
    rows = []

    def add(platform, window, repetition, pair):
        for scheduler, value in zip(("easy", "diws"), pair, strict=True):
            if value is not None:
                rows.append({"workload": workload, "platform": platform,
                             "instance": workload if window is None else f"{workload}#{window}",
                             "window": window, "scheduler": scheduler, "repetition": repetition, "complete": True,
                             "mean_waiting_time_s": value, "nb_jobs": 10})

    for (platform, window), pair in values.items():
        add(platform, window, None, pair)
    for (platform, window, repetition), pair in (jitter or {}).items():
        add(platform, window, repetition, pair)
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
    assert line["ours, median"] == "-20.0%" and line["same sign? last / median"] == "yes / yes"
    assert line["windows with the paper's sign"] == "2 of 3"
    # window 2: [159, 161] vs [199, 201] apart; window 1: [109, 111] meets [100, 104]? no: apart too
    assert line["beyond jitter noise"] == "2 of 2"
    values = {**SPEC, "rows": [{"row": "n", "setup": "A", "metric": "mean_waiting_time_s", "baseline": 5,
                                "candidate": 3}]}
    line = paper_table(frame, values).iloc[0]
    assert line["paper"] == "5 → 3" and line["ours, last window"] == "200 → 160"
    # medians 100 -> 110 rise, although the median difference (-40) falls: the verdict follows what is shown
    assert line["ours, median"] == "100 → 110" and line["same sign? last / median"] == "yes / no"
    assert line["beyond jitter noise"] == "2 of 2"
    layout = study_layout(frame, SPEC, "t", "big")
    assert layout.iloc[0].to_dict() == {"metric": "mean waiting time (s)", "diws": 160.0, "easy": 200.0,
                                        "change": "-20.00%", "median change over 3 windows": "-20.00%"}


def test_comparisons_without_windows_with_zero_baselines_missing_runs_and_several_workloads():
    single = frame_of({("big", None): (100.0, 80.0)}, workload="one")
    zero = frame_of({("big", 0): (0.0, 0.0), ("big", 1): (0.0, 5.0), ("big", 2): (10.0, 5.0),
                     ("big", 3): (10.0, None)}, workload="two")
    frame = pd.concat([single, zero], ignore_index=True)
    table = paper_table(frame, SPEC).set_index("workload")
    assert table.loc["one", "ours, last window"] == "-20.0%" and table.loc["one", "windows with the paper's sign"] \
        == "1 of 1"
    # two: window 0 ties (0 -> 0), window 1 has no relative change (0 -> 5), window 2 -50%, window 3
    # has no candidate run: three complete pairs, the median over the two known changes
    assert table.loc["two", "ours, last window"] == "-50.0%"
    assert table.loc["two", "ours, median"] == "-25.0% (of 2)"
    assert table.loc["two", "windows with the paper's sign"] == "1 of 3"
    changes = window_changes(frame, SPEC).set_index(["workload", "window"])["mean wait"]
    assert changes.loc[("two", 0)] == "+0.0%" and changes.loc[("two", 1)] == "n/a (baseline 0)"
    assert changes.loc[("two", 3)] == "missing" and len(changes) == 5
    assert study_layout(frame, SPEC, "one", "big").iloc[0]["change"] == "-20.00%"


@pytest.mark.parametrize(("row", "fragment"), [
    ('row = "w"\nsetup = "A"\nmetric = "mean_waiting_time_s"\nchange_pct = "-5"\n',
     "paper.toml:6: field 'scheduling[0].change_pct': expected a number"),
    ('setup = "A"\nmetric = "mean_waiting_time_s"\nchange_pct = -5\n', "field 'scheduling[0].row': expected a string"),
    ('row = "w"\nsetup = "A"\nmetric = "mean_waiting_time_s"\nbaseline = "1"\ncandidate = 2\n',
     "field 'scheduling[0].baseline': expected a number"),
    ('row = "w"\nsetup = "Z"\nmetric = "mean_waiting_time_s"\nchange_pct = -5\n', "field 'scheduling[0].setup'"),
    ('row = "w"\nsetup = "A"\nmetric = "wait"\nchange_pct = -5\n', "unknown metric"),
])
def test_paper_rows_are_checked_before_any_run(tmp_path, capsys, row, fragment):
    (tmp_path / "paper.toml").write_text("# figures\n[[scheduling]]\n" + row)
    extra = '\n[compare]\nbaseline = "fcfs"\ncandidate = "easy"\npaper = "paper.toml"\nsetups = { A = ["c32"] }\n'
    path = campaign_file(tmp_path, jobs=60, extra=extra)
    one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o")], fragment)


def test_a_campaign_compares_with_the_paper_in_its_report(tmp_path, capsys):
    paper = tmp_path / "paper.toml"
    paper.write_text('[[scheduling]]\nrow = "mean wait"\nsetup = "A"\nmetric = "mean_waiting_time_s"\n'
                     'change_pct = -10.0\n\n[[scheduling]]\nrow = "mean wait, the other way"\nsetup = "A"\n'
                     'metric = "mean_waiting_time_s"\nchange_pct = 10.0\nevidence = "this test"\n'
                     'cause = { kind = "data", statistic = "max", metric = "mean_waiting_time_s", schedulers = '
                     '["easy"], below = 1e9, note = "a tiny workload" }\n')
    extra = ('\n[compare]\nbaseline = "fcfs"\ncandidate = "easy"\npaper = "paper.toml"\n'
             'setups = { A = ["c32"] }\n')
    path = campaign_file(tmp_path, jobs=60, extra=extra)
    text = path.read_text().replace('options = { queue_order = ["fcfs", "spt"] }', "")
    path.write_text(text)
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    assert json.loads((tmp_path / "out" / "compare.json").read_text())["candidate"] == "easy"
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    # the trace's last window (window 1) and the median over its two windows, recomputed here
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    trace = frame[frame["workload"] == "trace"].pivot_table(index="window", columns="scheduler",
                                                             values="mean_waiting_time_s")
    change = 100 * (trace["easy"] - trace["fcfs"]) / trace["fcfs"]
    line = f"| A: mean wait | trace | c32 | -10.00% | {change.loc[1]:+.1f}% | {change.median():+.1f}% |"
    assert line in report
    assert "## Paper vs ours: easy vs fcfs" in report and "## Changes per window: easy vs fcfs" in report
    assert "## easy vs fcfs: trace on c32" in report and "## easy vs fcfs: synthetic on c32" in report

    # the table of record: every row with ours, its sign and a cause ("none" where ours agrees)
    record = tmp_path / "reproductions.md"
    assert main(["reproductions", str(tmp_path / "out"), "-o", str(record)]) == 0
    text = record.read_text()
    assert text.startswith("# Reproductions: the table of record") and "## " in text
    assert f"Made by `schedlab experiment run {path} -o {tmp_path / 'out'}" in text
    lines = [line for line in text.splitlines() if line.startswith("| A: mean wait")]
    assert len(lines) == 4  # two rows x two workloads
    falls = change.median() < 0
    for line in lines:
        other = "the other way" in line
        agrees = falls != other
        cells = line.split(" | ")
        assert cells[5] == ("yes" if agrees else "no"), line
        size = cells[6]  # ours within x2 of the paper's 10%, or not
        assert size in ("-", "yes", "no (opposite sign)", "no (ours 0)") or size.startswith("no (x"), line
        if agrees and size in ("-", "yes"):
            assert cells[7] == "none", line
        elif other:  # a measured cause, with its number
            assert cells[7].startswith("data; measured: max mean_waiting_time_s (") and "(< 1e+09: yes)" in cells[7]
            assert cells[7].endswith("; note: a tiny workload"), line
        else:
            assert cells[7] == "unknown", line
    capsys.readouterr()
    assert main(["reproductions", str(tmp_path), "-o", str(record)]) == 2  # not a results directory
    assert record.read_text() == text  # checked before the file is touched
    assert "no results here" in capsys.readouterr().err

    broken = path.read_text().replace('setups = { A = ["c32"] }', 'setups = { A = ["c64"] }')
    path.write_text(broken)
    err = one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o2")], "compare[0].setups")
    assert f"{path.name}:" in err


@pytest.mark.traces
def test_the_diws_configs_validate():
    from schedlab.experiments.campaigns.campaign import load_campaign
    from schedlab.experiments.studies.predictor_study import load_study
    from tests.helpers.data import need_shared

    need_shared(REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz")
    campaign = load_campaign(REPO / "experiments" / "diws" / "ricc.toml")
    assert campaign.compare["setups"]["B"] == ["setupB512"] and len(campaign.compare["rows"]) == 15
    assert campaign.compare["setups"]["A"] == ["marconi100"] and campaign.compare["setups"]["A-own"] == ["ricc8192"]
    study = load_study(REPO / "experiments" / "diws" / "predictors.toml")
    assert [t["name"] for t in study["tables"]] == ["random", "random-aug", "time"]
    assert set(study["paper"]["time"]) == {"dt", "rf", "gb", "nn"}



def test_paper_row_kinds_by_hand(tmp_path):
    """Several candidates against one baseline, a difference in minutes, a value, all-below, and
    which scheduler is largest or lowest: on hand-made medians of two windows."""
    from schedlab.experiments.papers.paper_rows import load_paper_rows

    waits = {"user": (6000.0, 12000.0), "simple": (600.0, 1200.0), "power": (594.0, 1206.0), "zero": (60.0, 120.0)}
    rows = [{"workload": "coare", "platform": "m", "instance": f"coare#{w}", "window": w, "scheduler": label,
             "repetition": None, "complete": True, "mean_waiting_time_s": pair[w], "nb_jobs": 10}
            for label, pair in waits.items() for w in (0, 1)]
    frame = pd.DataFrame(rows)
    paper = tmp_path / "paper.toml"
    paper.write_text("""
[[scheduling]]
row = "prediction + correction"
setup = "S"
metric = "mean_waiting_time_s"
schedulers = ["user", "simple"]
candidates = ["simple", "power"]
change_pct = -90.0
[[scheduling]]
row = "simple vs power"
setup = "S"
metric = "mean_waiting_time_s"
schedulers = ["simple", "power"]
change_pct = 0
tolerance_pct = 1.0
[[scheduling]]
row = "correction-only"
setup = "S"
metric = "mean_waiting_time_s"
unit = "min"
schedulers = ["user", "zero"]
difference = -160
[[scheduling]]
row = "user estimate"
setup = "S"
metric = "mean_waiting_time_s"
unit = "min"
schedulers = ["user", "user"]
value = 120
[[scheduling]]
row = "all under 30 min"
setup = "S"
metric = "mean_waiting_time_s"
unit = "min"
among = ["simple", "power", "zero"]
below = 30
[[scheduling]]
row = "largest"
setup = "S"
metric = "mean_waiting_time_s"
among = ["simple", "power", "zero"]
largest = "simple"
""")
    spec = {"baseline": "user", "candidate": "simple", "setups": {"S": ["m"]}, "paper_file": str(paper),
            "rows": load_paper_rows(paper, {"S": ["m"]}, list(waits))}
    table = paper_table(frame, spec).set_index("row")
    first = table.loc["S: prediction + correction (simple vs user)"]
    assert first["ours, last window"] == "-90.0%" and first["same sign? last / median"] == "yes / yes"
    assert table.loc["S: prediction + correction (power vs user)", "ours, median"] == "-90.0%"
    same = table.loc["S: simple vs power (power vs simple)"]  # -1% and +0.5%: within 1%
    assert same["ours, last window"] == "+0.5%" and same["same sign? last / median"] == "yes / yes"
    diff = table.loc["S: correction-only (zero vs user)"]  # (60 - 6000, 120 - 12000) s: -99 and -198 min
    assert diff["ours, last window"] == "-198 min" and diff["ours, median"] == "-148.5 min"
    assert table.loc["S: user estimate", "ours, median"] == "150 min"
    below = table.loc["S: all under 30 min"]  # medians 15, 15, 1.5 min
    assert below["ours, median"] == "max 15 min" and below["same sign? last / median"] == "holds"
    largest = table.loc["S: largest"]  # simple 900 s vs power 900 s: a tie is no ranking
    assert largest["ours, median"] == "largest: a tie of simple, power"
    assert largest["same sign? last / median"] == "tie"
    either = load_paper_rows(Path(str(paper)), {"S": ["m"]}, list(waits))
    for row in either:
        if row["row"] == "largest":
            row["largest"] = ["simple", "power"]  # both claimed: the tie holds
    tied = paper_table(frame, {**spec, "rows": either}).set_index("row").loc["S: largest"]
    assert tied["same sign? last / median"] == "holds"
    paper.write_text(paper.read_text().replace("tolerance_pct = 1.0", "tolerance_pct = 0.1"))
    spec["rows"] = load_paper_rows(paper, {"S": ["m"]}, list(waits))
    strict = paper_table(frame, spec).set_index("row").loc["S: simple vs power (power vs simple)"]
    assert strict["same sign? last / median"] == "no / no"  # 0.5% and 0.25% exceed 0.1%
    paper.write_text(paper.read_text().replace('largest = "simple"', 'largest = "fastest"'))
    with pytest.raises(InputError, match="'fastest' is not a scheduler label"):
        load_paper_rows(paper, {"S": ["m"]}, list(waits))


def test_paper_rows_without_runs_say_missing(tmp_path):
    from schedlab.experiments.papers.paper_rows import load_paper_rows

    frame = frame_of({("big", 0): (100.0, None), ("big", 1): (100.0, None)})  # diws never ran
    paper = tmp_path / "p.toml"
    paper.write_text('[[scheduling]]\nrow = "w"\nsetup = "A"\nmetric = "mean_waiting_time_s"\nchange_pct = -5\n'
                     '[[scheduling]]\nrow = "low"\nsetup = "A"\nmetric = "mean_waiting_time_s"\n'
                     'among = ["easy", "diws"]\nlowest = "diws"\n'
                     '[[scheduling]]\nrow = "elsewhere"\nworkload = "other"\nsetup = "A"\n'
                     'metric = "mean_waiting_time_s"\nchange_pct = -5\n')
    spec = {**SPEC, "rows": load_paper_rows(paper, {"A": ["big"]}, ["easy", "diws"])}
    table = paper_table(frame, spec).set_index("row")
    assert table.loc["A: w", "ours, median"] == "missing" and "no complete pair" in table.loc["A: w", "note"]
    assert table.loc["A: low", "ours, median"] == "missing" and "diws" in table.loc["A: low", "note"]
    assert "A: elsewhere" not in table.index  # another campaign's workload


def test_a_bsld_change_beyond_the_arithmetic_bound_says_so():
    """Every job's bounded slowdown is >= 1: a baseline mean of 4.41 allows at most -77.3%, so the
    COARE paper's -98.95% is out of reach, and the row says so; -50% is within reach (no note)."""
    frame = frame_of({("big", 0): (4.41, 2.0)}).rename(columns={"mean_waiting_time_s": "mean_bounded_slowdown"})
    rows = [{"row": "bsld", "setup": "A", "metric": "mean_bounded_slowdown", "change_pct": -98.95},
            {"row": "bsld2", "setup": "A", "metric": "mean_bounded_slowdown", "change_pct": -50.0, "note": "n"}]
    table = paper_table(frame, {**SPEC, "rows": rows})
    assert "out of reach here: a slowdown is >= 1, so a baseline of 4.41 allows at most -77.3%" in table.iloc[0]["note"]
    assert table.iloc[1]["note"] == "n"


STUDY_FILES = sorted(p for p in (REPO / "experiments").glob("*/*.toml")
                     if not p.name.startswith("paper") and not p.name.startswith("fitted"))


@pytest.mark.traces
@pytest.mark.parametrize("path", STUDY_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shipped_study_file_validates(path):
    """Each campaign, factory and study file of experiments/ loads (its traces, paper rows, claims
    and causes checked) with the shared data beside the repository."""
    from schedlab.experiments.campaigns.campaign import file_kind, load_campaign
    from schedlab.experiments.studies.hybrid_reliability import load_reliability_study
    from schedlab.experiments.studies.policy_factory import load_factory
    from schedlab.experiments.studies.predictor_study import load_study
    from tests.helpers.data import need_shared

    need_shared(REPO.parent / "shared" / "data" / "swf")
    loader = {"policy-factory": load_factory, "predictor-study": load_study,
              "hybrid-reliability": load_reliability_study}.get(file_kind(path), load_campaign)
    assert loader(path)


def test_a_paper_rows_cause_is_measured_or_cited_never_typed(tmp_path):
    from schedlab.experiments.papers.paper_rows import load_paper_rows

    path = tmp_path / "paper.toml"
    path.write_text('[[scheduling]]\nrow = "w"\nsetup = "A"\nmetric = "mean_waiting_time_s"\nchange_pct = -5\n'
                    'cause = "data: a smaller trace"\n')
    with pytest.raises(InputError, match=r"paper.toml:6: field 'scheduling\[0\].cause': a cause is measured or cited"):
        load_paper_rows(path, {"A": ["c"]}, ["easy"])
    path.write_text(path.read_text().replace('"data: a smaller trace"', '{ kind = "data", note = "smaller" }'))
    with pytest.raises(InputError, match=r"cause.kind': give exactly one of cited"):
        load_paper_rows(path, {"A": ["c"]}, ["easy"])
    path.write_text(path.read_text().replace('note = "smaller"', 'note = "smaller", cited = "the paper, §2"'))
    cause = load_paper_rows(path, {"A": ["c"]}, ["easy"])[0]["cause"]
    assert cause["kind"] == "data" and cause["cited"] == "the paper, §2" and cause["line"] == 6
    path.write_text(path.read_text().replace('cited = "the paper, §2"', 'statistic = "mode"'))
    with pytest.raises(InputError, match=r"cause.statistic': expected one of median"):
        load_paper_rows(path, {"A": ["c"]}, ["easy"])
    path.write_text(path.read_text().replace('{ kind = "data", note = "smaller", statistic = "mode" }', '"unknown"'))
    assert load_paper_rows(path, {"A": ["c"]}, ["easy"])[0]["cause"]["kind"] == "unknown"
