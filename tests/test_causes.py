"""The table of record's causes are measurements: a fake study (a small campaign beside a paper
file) whose causes the generator measures, prints, and refuses when the evidence does not
support them (schedlab.experiments.papers.causes)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from schedlab.cli import main
from tests.helpers.cli import one_line_error

PAIR_ROW = ('[[scheduling]]\nrow = "mean wait"\nsetup = "A"\nworkload = "synthetic"\nmetric = "mean_waiting_time_s"\n'
            'change_pct = {paper}\n{cause}\n')
CAMPAIGN = """name = "t"
description = "A fake study."
seeds = [1, 2]

[[workloads]]
name = "synthetic"
synthetic = { jobs = 80, resources = 32, load = 1.0 }

[[platforms]]
resources = 32
name = "c32"

[[schedulers]]
name = "fcfs"

[[schedulers]]
name = "easy"

[[schedulers]]
name = "easy"
label = "easy-spt"
options = { queue_order = "spt" }

[compare]
baseline = "fcfs"
candidate = "easy"
paper = "paper.toml"
setups = { A = ["c32"] }
"""


def fake_study(tmp_path, paper: float, cause: str = "") -> tuple:
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=paper, cause=cause))
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN)
    return path, tmp_path / "out"


def run(path, out) -> None:
    assert main(["experiment", "run", str(path), "-o", str(out), "--workers", "1", "-q"]) == 0


def changes(out) -> tuple[float, float]:
    """Ours (easy vs fcfs) and the ablation's (easy-spt vs fcfs): the median change of mean wait in %."""
    frame = pd.read_parquet(out / "results.parquet")
    runs = frame[frame["workload"] == "synthetic"].pivot_table(index="instance", columns="scheduler",
                                                                values="mean_waiting_time_s")
    change = 100 * (runs.sub(runs["fcfs"], axis=0)).div(runs["fcfs"], axis=0)
    return float(change["easy"].median()), float(change["easy-spt"].median())


def record_line(tmp_path, *dirs) -> list[str]:
    record = tmp_path / "record.md"
    assert main(["reproductions", *map(str, dirs), "-o", str(record)]) == 0
    return next(line.split(" | ") for line in record.read_text().splitlines() if line.startswith("| A: mean wait"))


def test_a_typed_cause_is_refused_where_it_is_written(tmp_path, capsys):
    path, out = fake_study(tmp_path, -10, 'cause = "data: a smaller trace"')
    one_line_error(capsys, ["experiment", "run", str(path), "-o", str(out)],
                   "paper.toml:7: field 'scheduling[0].cause': a cause is measured or cited, not typed")
    assert not out.exists()


def test_a_statistic_is_printed_with_its_value_and_refused_when_it_does_not_hold(tmp_path, capsys):
    holds = ('cause = { kind = "data", statistic = "median", metric = "mean_waiting_time_s", '
             'schedulers = ["fcfs", "easy"], above = 0, note = "jobs wait" }')
    path, out = fake_study(tmp_path, 1e6, holds)  # +1,000,000%: sign or size differs, a cause is needed
    run(path, out)
    frame = pd.read_parquet(out / "results.parquet")
    fcfs = frame[(frame["scheduler"] == "fcfs") & (frame["workload"] == "synthetic")]["mean_waiting_time_s"]
    cells = record_line(tmp_path, out)
    assert cells[6] == "no (opposite sign)", cells  # sign and size differ
    assert cells[7].startswith("data; measured: median mean_waiting_time_s (synthetic, c32; n = 2): fcfs ")
    assert f"fcfs {fcfs.median():,.4g}" in cells[7] and "(> 0: yes); note: jobs wait" in cells[7]
    # the same cause with a bound the evidence does not meet: the generator fails, naming the line
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=1e6, cause=holds.replace("above = 0",
                                                                                       "below = 0")))
    run(path, out)  # the campaign's runs are reused; its paper rows are read again
    record = tmp_path / "record.md"
    record.write_text("earlier")
    err = one_line_error(capsys, ["reproductions", str(out), "-o", str(record)],
                         "paper.toml:7: field 'cause': the measurement does not support the cause: median")
    assert "(< 0: no)" in err and record.read_text() == "earlier"  # checked before the file is touched


def test_an_ablation_must_move_ours_towards_the_paper(tmp_path, capsys):
    ablation = ('cause = { kind = "method", ablation = { schedulers = ["fcfs", "easy-spt"] }, '
                'note = "the queue order" }')
    path, out = fake_study(tmp_path, 0, ablation)
    run(path, out)
    ours, ablated = changes(out)
    assert ours != ablated  # the fake study needs two arms that differ
    # the paper's figure beyond the ablation's, out of ours' size: the ablation moves ours towards it
    towards = ablated * (2.5 if abs(ablated) > abs(ours) else 0.3)
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=round(towards, 6), cause=ablation))
    run(path, out)
    cells = record_line(tmp_path, out)
    assert cells[7].startswith("method; measured by ablation (schedulers fcfs/easy-spt): easy-spt vs fcfs ")
    assert "closer to the paper's; note: the queue order" in cells[7]
    # the paper's figure far beyond ours, away from the ablation: the ablation moves ours away from it
    away = ours + math.copysign(max(3 * abs(ours), 10), ours - ablated)
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=round(away, 6), cause=ablation))
    run(path, out)
    one_line_error(capsys, ["reproductions", str(out), "-o", str(tmp_path / "r.md")],
                   "the ablation does not move ours towards the paper's figure")
    # an arm of a study not given is not a measurement
    other = ablation.replace('schedulers = ["fcfs", "easy-spt"]', 'schedulers = ["fcfs", "easy-spt"], study = "x"')
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=round(towards, 6), cause=other))
    run(path, out)
    one_line_error(capsys, ["reproductions", str(out), "-o", str(tmp_path / "r.md")],
                   "the cause cannot be measured: no evidence of study 'x'")


def test_an_unknown_cause_says_what_was_ruled_out_and_only_what_leaves_the_gap(tmp_path, capsys):
    path, out = fake_study(tmp_path, 0)
    run(path, out)
    ours, ablated = changes(out)
    ruled = 'cause = { kind = "unknown", ruled_out = [{ candidate = "easy-spt" }], note = "not the order" }'
    # the paper's figure far on ours' side, away from the ablation: the arm leaves the whole gap
    away = ours + math.copysign(max(3 * abs(ours), 10), ours - ablated)
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=round(away, 6), cause=ruled))
    run(path, out)
    cells = record_line(tmp_path, out)
    assert cells[7].startswith("unknown; ruled out by ablation (candidate easy-spt): easy-spt vs fcfs ")
    assert "its gap " in cells[7] and cells[7].endswith("of ours; note: not the order")
    # an arm that closes most of the gap (FCFS against itself changes nothing; the paper's +5%) is no
    # ruled-out arm but a cause
    closing = ruled.replace('candidate = "easy-spt"', 'schedulers = ["fcfs", "fcfs"]')
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=5.0, cause=closing))
    run(path, out)
    one_line_error(capsys, ["reproductions", str(out), "-o", str(tmp_path / "r.md")],
                   "an ablation said to be ruled out closes half or more of the gap")


def test_same_sign_is_not_enough_the_size_must_agree_too(tmp_path):
    path, out = fake_study(tmp_path, -10)
    run(path, out)
    ours, _ = changes(out)
    assert ours < 0  # EASY backfills: the mean wait falls
    for paper, size, cause in ((ours * 1.5, "yes", "none"), (ours * 3, "no (x0.33)", "unknown"),
                               (-ours, "no (opposite sign)", "unknown")):
        (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=round(paper, 6), cause=""))
        run(path, out)
        cells = record_line(tmp_path, out)
        assert (cells[6], cells[7]) == (size, cause), cells


def test_a_cited_cause_and_the_evidence_committed_in_place_of_the_results(tmp_path, capsys, monkeypatch):
    cited = 'cause = { kind = "data", cited = "the paper, §4: another trace", note = "not reachable here" }'
    path, out = fake_study(tmp_path, 1e6, cited)
    run(path, out)
    from_results = record_line(tmp_path, out)
    assert from_results[7] == "data; cited: the paper, §4: another trace; note: not reachable here"
    evidence = tmp_path / "experiments" / "evidence" / "t"
    assert main(["evidence", str(out), "-o", str(evidence)]) == 0
    assert sorted(p.name for p in evidence.iterdir()) == ["compare.json", "inputs.json", "made-by.json",
                                                          "results.csv", "versions.json"]
    versions = json.loads((evidence / "versions.json").read_text())
    assert set(versions) == {"python", "numpy", "pandas", "scikit-learn", "xgboost"}
    assert "run_id" in (evidence / "results.csv").read_text().splitlines()[0]
    assert str(tmp_path) not in (evidence / "results.csv").read_text()  # no path of this machine
    # the same row from the committed files, which it names as its evidence
    assert record_line(tmp_path, evidence)[1:-1] == from_results[1:-1]
    assert record_line(tmp_path, evidence)[-1] == f"{evidence} |"
    text = (tmp_path / "record.md").read_text()
    assert f"numpy {versions['numpy'][0]}" in text and "every study made by commit" in text
    assert "## What reproduces and what does not" in text and "**t**: 0 of 1 rows agree" in text
    # what the study ran on heads its table: its description and its workloads
    assert "A fake study.\n\nTraces and workloads: synthetic = jobs 80, load 1.0, resources 32." in text
    # a cause corrected in the paper file is measured again from the evidence alone: no run, no new
    # invocation of the campaign (one commit still made every run)
    corrected = cited.replace("not reachable", "unreachable")
    (tmp_path / "paper.toml").write_text(PAIR_ROW.format(paper=1e6, cause=corrected))
    assert main(["evidence", str(out), "-o", str(evidence)]) == 0
    assert len(json.loads((evidence / "made-by.json").read_text())["invocations"]) == 1
    assert record_line(tmp_path, evidence)[7].endswith("note: unreachable here")
    monkeypatch.chdir(tmp_path)  # paths inside the working directory (the repository) are written relative to it
    assert main(["evidence", str(out), "-o", str(evidence)]) == 0
    assert str(tmp_path) not in (evidence / "compare.json").read_text()
    assert json.loads((evidence / "compare.json").read_text())["paper_file"] == "paper.toml"
    # one commit or none: the studies were made by one here; a second invocation at another commit is not
    made = json.loads((evidence / "made-by.json").read_text())
    made["invocations"].append({**made["invocations"][0], "commit": "0000000"})
    (evidence / "made-by.json").write_text(json.dumps(made))
    one_line_error(capsys, ["reproductions", str(evidence), "-o", str(tmp_path / "r.md"), "--one-commit"],
                   "the studies were made by 2 commits")
    one_line_error(capsys, ["evidence", str(out), "-o", str(out)], "would write over the results")
    # a claim not attempted is said under its study, with why; one of a study not given is an error
    skipped = tmp_path / "not-attempted.toml"
    skipped.write_text('[[claims]]\nstudy = "t"\nclaim = "Fig. 9"\nwhy = "no such trace here"\n')
    record = tmp_path / "r.md"
    assert main(["reproductions", str(out), "-o", str(record), "--not-attempted", str(skipped)]) == 0
    assert "  Not attempted: Fig. 9 (no such trace here)." in record.read_text()
    assert "Not attempted: Fig. 9. Why: no such trace here." in record.read_text()
    skipped.write_text(skipped.read_text().replace('"t"', '"u"'))
    one_line_error(capsys, ["reproductions", str(out), "-o", str(record), "--not-attempted", str(skipped)],
                   "no study named 'u' among the studies given")


def test_a_campaign_of_ablation_arms_alone_has_no_published_row(tmp_path):
    """A study run only for other studies' causes (no [compare], no [[claims]]) is listed, rowless."""
    path = tmp_path / "arms.toml"
    path.write_text(CAMPAIGN.split("[compare]")[0].replace('name = "t"', 'name = "arms"'))
    run(path, tmp_path / "arms")
    record = tmp_path / "r.md"
    assert main(["reproductions", str(tmp_path / "arms"), "-o", str(record)]) == 0
    assert "- **arms**: no published figure to compare." in record.read_text()


@pytest.mark.parametrize("cause, message", [
    ('{ kind = "data", statistic = "median", metric = "mean_waiting_time_s", schedulers = ["fcfs"] }',
     "cause.below': expected a number: the bound"),
    ('{ kind = "guess", cited = "x" }', "cause.kind': expected one of data, method, defect fixed"),
    ('{ kind = "data", cited = "x", statistic = "median" }', "give exactly one of cited"),
    ('{ kind = "data", ablation = "easy" }', "cause.ablation': expected a table of what changes"),
    ('{ kind = "data", cited = "x", because = 1 }', "cause.because': unknown key"),
])
def test_a_cause_table_is_checked_key_by_key(tmp_path, capsys, cause, message):
    path, _ = fake_study(tmp_path, -10, f"cause = {cause}")
    one_line_error(capsys, ["experiment", "plan", str(path)], message)
