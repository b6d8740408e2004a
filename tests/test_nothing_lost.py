"""Nothing a user gave is lost, nothing wrong is silent (issue 38): no command writes over its own
inputs, a rerun never replaces a complete result with an incomplete one, oracle and model files
must describe what they claim to, and every error says whose it is. Data-loss cases compare the
earlier files' sha256 before and after."""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from schedlab.cli import main
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import SCHEDULERS, create_scheduler
from tests.helpers.cli import small_campaign
from tests.helpers.data import TRACES, make_workload
from tests.helpers.schedulers import FailingEasy as _Failing

SPECS = [("a", 0, 1, 2, 5), ("b", 5, 1, 2, 5), ("c", 9, 2, 3, 5)]
# jobs every 60 s, each waiting 400 s then running 100 s: a job submitted at t ends at t + 500
SWF = "; MaxProcs: 8\n" + "".join(f"{i} {60 * i} 400 100 4 -1 -1 4 200 -1 1 {i % 3} 3 -1 1 0 -1 -1\n"
                                  for i in range(1, 41))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under `root` (hidden ones too) by its relative path, with its sha256."""
    return {str(p.relative_to(root)): digest(p) for p in sorted(root.rglob("*")) if p.is_file()}


def inputs(tmp_path: Path, specs=SPECS, nb_res: int = 4) -> tuple[str, str]:
    (tmp_path / "p.xml").write_text(cluster_xml(nb_res))
    (tmp_path / "w.json").write_text(json.dumps(make_workload(specs, nb_res=nb_res).to_json()))
    return str(tmp_path / "p.xml"), str(tmp_path / "w.json")


def refused(capsys, argv, fragment: str, *, unchanged: Path) -> str:
    """Exit 2, one line holding `fragment`, and not one file under `unchanged` changed or added."""
    before = tree_digest(unchanged)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err, err
    assert tree_digest(unchanged) == before
    return err


# ------------------------------------------------------------------ 1. no command writes over what it reads


def _model(tmp_path: Path, workload: str, out: str = "m.skops") -> Path:
    path = tmp_path / out
    assert main(["predictor", "train", "-w", workload, "--model", "user-last2", "--split", "none",
                 "-o", str(path)]) == 0
    return path


def test_every_command_refuses_to_write_over_its_own_input(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    (tmp_path / "t.swf").write_text(SWF)
    (tmp_path / "t.csv").write_text("job_id,submit_time,run_time,num_cores_req,time_limit\n1,0,60,4,10\n")
    (tmp_path / "scores.csv").write_text("p,q,r,score\n" + "".join(f"{i},{i % 4 + 1},{i},{1 / 32}\n"
                                                                     for i in range(1, 65)))
    (tmp_path / "mine.py").write_text("from schedlab.schedulers.easy import EasyBackfilling\n\n\n"
                                      "class Mine(EasyBackfilling):\n    pass\n")
    model = _model(tmp_path, workload)
    (tmp_path / "m2.card.json").write_text(Path(workload).read_text())  # a workload named like a card
    swf, table, scores = (str(tmp_path / n) for n in ("t.swf", "t.csv", "scores.csv"))
    cases = [
        (["workload", "from-swf", swf, "-o", swf], "--output would write over the trace"),
        (["workload", "from-table", table, "-o", table], "--output would write over the table"),
        (["policy", "scores", swf, "--tuples", "1", "--trials", "10", "-o", swf], "would write over the trace"),
        (["policy", "scores", swf, "--tuples", "1", "--trials", "10", "-o", str(tmp_path / "t")],
         "--output's metadata would write over the trace"),  # t.json is not t.swf, but t -> t + .json
        (["policy", "fit", scores, "-o", scores], "would write over the score table"),
        (["predictor", "train", "-w", workload, "-o", workload], "--output would write over the workload"),
        (["predictor", "train", "-w", str(tmp_path / "m2.card.json"), "-o", str(tmp_path / "m2")],
         "model card would write over the workload"),
        (["predictor", "evaluate", "-m", str(model), "-w", workload, "--csv", str(model)], "--csv would write over"),
        (["workload", "lublin", "--nodes", "16", "--jobs", "5", "--seed", "1", "--swf", str(tmp_path / "x.json"),
          "-o", str(tmp_path / "x.json")], "name the same file: one output would be lost"),
        (["pybatsim-entry", f"{tmp_path / 'mine.py'}:Mine", "-o", str(tmp_path / "mine.py")],
         "would write over the scheduler's file"),
        (["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", workload], "is the workload (-w)"),
        (["scheduler", "check", "easy", "-w", workload, "-o", workload], "is the workload (-w)"),
    ]
    # swap the real policy-scores metadata case: t.json must exist as the trace for it to collide
    (tmp_path / "t.json").write_text(SWF)
    cases[3] = (["policy", "scores", str(tmp_path / "t.json"), "--tuples", "1", "--trials", "10", "-o",
                 str(tmp_path / "t")], "--output's metadata would write over the trace")
    for argv, fragment in cases:
        refused(capsys, argv, fragment, unchanged=tmp_path)


def test_simulate_refuses_inputs_that_are_its_own_output_files(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    out.mkdir()
    for name in ("jobs.csv", "schedule.csv", "summary.json", "external.log"):
        (out / name).write_text(Path(workload).read_text())
        refused(capsys, ["simulate", "-p", platform, "-w", str(out / name), "-s", "easy", "-o", str(out)],
                "would write over the workload (-w)", unchanged=tmp_path)
        (out / name).unlink()
    # an option's file: an oracle or a history kept as summary.json of the results directory
    (out / "summary.json").write_text(Path(workload).read_text())
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "fcfs-bf1", "-O", "runtime=exact", "-O",
                     f"oracle={out / 'summary.json'}", "-o", str(out)], "would write over -O oracle",
            unchanged=tmp_path)
    # the platform, through a symbolic link and through a hard link
    os.symlink(platform, out / "schedule.csv")
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)],
            "would write over the platform (-p)", unchanged=tmp_path)
    (out / "schedule.csv").unlink()
    os.link(platform, out / "jobs.csv")
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)],
            "would write over the platform (-p)", unchanged=tmp_path)


def test_writing_new_files_beside_inputs_stays_allowed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").mkdir()
    platform, workload = inputs(tmp_path / "out")
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-q"]) == 0  # the default -o out
    assert (tmp_path / "out" / "jobs.csv").is_file() and json.loads(Path(workload).read_text())["nb_res"] == 4


# ------------------------------------------------------------------ 2. a rerun never replaces a complete result


@pytest.mark.parametrize(("error", "module", "code"), [
    (KeyboardInterrupt(), __name__, 130),  # Ctrl-C
    (ValueError("bad state"), __name__, 1),  # a user's scheduler's failure
    (ValueError("bad state"), "schedlab.schedulers.failing", 3),  # a bug of ours
])
def test_a_failed_rerun_keeps_the_earlier_complete_run(tmp_path, capsys, monkeypatch, error, module, code):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "good"
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out), "-q"]) == 0
    before = tree_digest(out)
    monkeypatch.setattr(_Failing, "error", error)
    monkeypatch.setattr(_Failing, "__module__", module)
    monkeypatch.setitem(SCHEDULERS, "failing", _Failing)
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "failing", "-o", str(out), "-q"]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"partial results in {out / 'incomplete'}" in err
    assert f"the earlier complete run in {out} is kept" in err
    assert {k: v for k, v in tree_digest(out).items() if not k.startswith("incomplete/")} == before
    partial = json.loads((out / "incomplete" / "summary.json").read_text())
    assert partial["complete"] is False and partial["nb_jobs_unfinished"] == 2
    assert sorted(p.name for p in out.iterdir()) == ["incomplete", "jobs.csv", "schedule.csv", "summary.json"]
    # a complete rerun replaces the run and clears the older attempt
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "fcfs", "-o", str(out), "-q"]) == 0
    assert not (out / "incomplete").exists() and json.loads((out / "summary.json").read_text())["scheduler"] == "fcfs"


def test_an_incomplete_run_into_a_fresh_directory_stays_there(tmp_path, capsys, monkeypatch):
    platform, workload = inputs(tmp_path)
    monkeypatch.setitem(SCHEDULERS, "failing", _Failing)
    monkeypatch.setattr(_Failing, "__module__", __name__)
    out = tmp_path / "new"
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "failing", "-o", str(out), "-q"]) == 1
    assert f"partial results in {out}, marked incomplete" in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["complete"] is False and not (out / "incomplete").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_a_users_folder_named_incomplete_is_never_deleted(tmp_path, capsys, monkeypatch):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "res"
    (out / "incomplete").mkdir(parents=True)
    (out / "incomplete" / "notes.txt").write_text("mine")
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)],
            "incomplete there is not an incomplete run of schedlab's", unchanged=tmp_path)
    (out / "incomplete" / "notes.txt").unlink()
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-o", str(out), "--external", "x {socket}",
                     "--record", str(out / "incomplete" / "rec.jsonl")], "--record lies in", unchanged=tmp_path)
    # an incomplete run of ours there is replaced by the next one, and readable by others (not 0700)
    monkeypatch.setattr(_Failing, "__module__", __name__)
    monkeypatch.setitem(SCHEDULERS, "failing", _Failing)
    (out / "incomplete").rmdir()
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out), "-q"]) == 0
    for _ in range(2):
        assert main(["simulate", "-p", platform, "-w", workload, "-s", "failing", "-o", str(out), "-q"]) == 1
    capsys.readouterr()
    assert (out / "incomplete").stat().st_mode & 0o755 == 0o755 & ~_umask()


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def test_a_killed_runs_staging_is_cleared_by_the_next_run(tmp_path):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    (out / ".schedlab-run-999999999-abc").mkdir(parents=True)  # no such process
    (out / ".schedlab-run-999999999-abc" / "jobs.csv").write_text("half")
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out), "-q"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv", "schedule.csv", "summary.json"]


def test_a_directory_in_place_of_an_output_file_is_refused_before_the_run(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out), "-q"]) == 0
    (out / "jobs.csv").unlink()
    (out / "jobs.csv").mkdir()
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)],
            "jobs.csv there is not a file", unchanged=tmp_path)
    (out / "jobs.csv").rmdir()
    (out / "incomplete").write_text("mine")
    refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)],
            "incomplete there is not an incomplete run", unchanged=tmp_path)


def test_the_api_writes_a_results_directory_as_a_whole(tmp_path, monkeypatch):
    import schedlab

    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    schedlab.simulate(platform, workload, "easy", out=out)
    before = tree_digest(out)
    monkeypatch.setattr(_Failing, "__module__", __name__)
    with pytest.raises(ValueError, match="bad state"):  # in Python, the scheduler's exception itself
        schedlab.simulate(platform, workload, _Failing, out=out)
    assert {k: v for k, v in tree_digest(out).items() if not k.startswith("incomplete/")} == before
    assert json.loads((out / "incomplete" / "summary.json").read_text())["complete"] is False
    result = schedlab.simulate(platform, workload, "fcfs")
    assert result.write(out) == out and json.loads((out / "summary.json").read_text())["scheduler"] == "fcfs"


# ------------------------------------------------------------------ campaigns


_campaign = small_campaign


def test_another_campaign_never_replaces_results_silently(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["experiment", "run", str(_campaign(tmp_path)), "-o", str(out), "--workers", "1", "-q"]) == 0
    assert main(["experiment", "run", str(_campaign(tmp_path)), "-o", str(out), "--workers", "1", "-q"]) == 0
    other = _campaign(tmp_path, schedulers=("easy-sjbf",), file="other.toml")  # same name, other content
    err = refused(capsys, ["experiment", "run", str(other), "-o", str(out), "--workers", "1"], "--replace",
                  unchanged=tmp_path)
    assert "holds 2 run(s) of campaign c" in err and "would drop from results.parquet" in err
    assert main(["experiment", "run", str(other), "-o", str(out), "--workers", "1", "-q", "--replace"]) == 0
    frame = pd.read_parquet(out / "results.parquet")
    assert list(frame["scheduler"]) == ["easy-sjbf"]
    made = json.loads((out / "made-by.json").read_text())["invocations"]
    assert len(made) == 1 and made[0]["campaign"] == str(other)  # the history is the new campaign's


def test_a_campaign_grown_or_moved_keeps_its_results(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    out = project / "out"
    assert main(["experiment", "run", str(_campaign(project)), "-o", str(out), "--workers", "1", "-q"]) == 0
    # another scheduler: every earlier run stays in results.parquet, so no --replace is needed
    grown = _campaign(project, schedulers=("fcfs", "easy", "easy-sjbf"))
    assert main(["experiment", "run", str(grown), "-o", str(out), "--workers", "1", "-q"]) == 0
    assert len(pd.read_parquet(out / "results.parquet")) == 3
    moved = tmp_path / "moved"
    project.rename(moved)
    assert main(["experiment", "run", str(moved / "c.toml"), "-o", str(moved / "out"), "--workers", "1", "-q"]) == 0


def test_campaign_refusals_leave_nothing_behind(tmp_path, capsys, monkeypatch):
    path = _campaign(tmp_path)
    out = tmp_path / "out"
    assert main(["experiment", "run", str(path), "-o", str(out), "--workers", "1", "-q"]) == 0
    refused(capsys, ["experiment", "run", str(path), "-o", str(out), "--workers", "0"], "--workers must be >= 1",
            unchanged=tmp_path)
    monkeypatch.chdir(tmp_path / "out")  # the default -o out/NAME: neither folder stays behind
    refused(capsys, ["experiment", "run", str(path), "--dask", "tcp://127.0.0.1:9"],
            "cannot reach the Dask scheduler", unchanged=tmp_path)
    assert not (tmp_path / "out" / "out").exists()


def test_history_placeholder_without_a_history_is_refused_before_any_conversion(tmp_path, capsys):
    path = tmp_path / "h.toml"
    path.write_text(f"""name = "h"

[[workloads]]
name = "kth"
swf = "{TRACES / 'kth-sp2-excerpt.swf.gz'}"
convert = {{ days = 0.5, start = "648000" }}

[[platforms]]
resources = 100

[[schedulers]]
name = "diws"
options = {{ history = "@history" }}
""")
    err = refused(capsys, ["experiment", "run", str(path), "-o", str(tmp_path / "o")], "workload 'kth' has none",
                  unchanged=tmp_path)
    assert f"{path}:13: field 'schedulers[0].history'" in err and not (tmp_path / "o").exists()


def test_ctrl_c_writes_the_finished_rows_and_a_rerun_resumes(tmp_path, capsys, monkeypatch):
    from schedlab.experiments.campaigns import runner

    path = _campaign(tmp_path, schedulers=("fcfs", "easy", "easy-sjbf"))
    out = tmp_path / "out"
    original, calls = runner.execute_run, []

    def interrupted_third(run, runs_dir):
        calls.append(run.id)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(run, runs_dir)

    monkeypatch.setattr(runner, "execute_run", interrupted_third)
    assert main(["experiment", "run", str(path), "-o", str(out), "--workers", "1", "-q"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted: 2 of 3 runs finished" in err and "the same command resumes" in err
    assert len(pd.read_parquet(out / "results.parquet")) == 2
    monkeypatch.setattr(runner, "execute_run", original)
    assert main(["experiment", "run", str(path), "-o", str(out), "--workers", "1", "-q"]) == 0
    frame = pd.read_parquet(out / "results.parquet")
    assert len(frame) == 3 and frame["complete"].all()


def test_failed_runs_have_no_metrics_to_rank_by(tmp_path, monkeypatch):
    from schedlab.experiments.campaigns import runner
    from schedlab.experiments.campaigns.campaign import load_campaign
    from schedlab.experiments.campaigns.plan import expand

    monkeypatch.setattr(_Failing, "__module__", "mine")
    monkeypatch.setitem(SCHEDULERS, "failing", _Failing)
    runs = expand(load_campaign(_campaign(tmp_path, schedulers=("easy", "failing"))), tmp_path / "o")
    rows = runner.run_campaign(runs, tmp_path / "o")
    failed = next(r for r in rows if not r["complete"])
    assert math.isnan(failed["mean_waiting_time_s"]) and math.isnan(failed["mean_bounded_slowdown"])
    assert json.loads(failed["partial_metrics"])["nb_jobs"] > 0  # what it finished, apart
    assert failed["error"].startswith("scheduler 'failing' raised ValueError: bad state")
    frame = pd.DataFrame(rows)
    assert frame.groupby("scheduler")["mean_bounded_slowdown"].median().idxmin() == "easy"


# ------------------------------------------------------------------ 3. oracle, model and option files


def test_an_oracle_must_be_the_simulated_workload(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    other = tmp_path / "w2.json"  # the same job ids, other jobs
    other.write_text(json.dumps(make_workload([("a", 0, 1, 4, 5), ("b", 6, 1, 2, 5), ("c", 9, 2, 3, 5)],
                                              nb_res=4).to_json(), indent=1))
    base = ["simulate", "-p", platform, "-w", workload, "-s", "fcfs-bf1", "-O", "runtime=exact", "-o",
            str(tmp_path / "o")]
    err = refused(capsys, [*base, "-O", f"oracle={other}"], "job b differs from the simulated one",
                  unchanged=tmp_path)
    assert "submit time 6 s vs 5 s" in err and f"oracle={other}:" in err
    short = tmp_path / "w3.json"
    short.write_text(json.dumps(make_workload(SPECS[:2], nb_res=4).to_json()))
    refused(capsys, [*base, "-O", f"oracle={short}"], "job c of the simulated workload is not in this oracle",
            unchanged=tmp_path)
    assert main([*base, "-O", f"oracle={workload}", "-q"]) == 0


def test_an_oracle_in_a_campaign_is_checked_before_any_run(tmp_path, capsys):
    path = _campaign(tmp_path, schedulers=())
    path.write_text(path.read_text() + '\n[[schedulers]]\nname = "fcfs-bf1"\noptions = { runtime = "exact", '
                    'oracle = "@workload" }\n\n[perturb]\nsubmit_jitter_s = 30\nrepetitions = 2\n')
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1", "-q"]) == 0
    _, workload = inputs(tmp_path)  # another workload as the oracle: refused before results are written
    path.write_text(path.read_text().replace('"@workload"', f'"{workload}"'))
    err = refused(capsys, ["experiment", "run", str(path), "-o", str(tmp_path / "o2"), "--workers", "1"],
                  "is not in this oracle", unchanged=tmp_path)
    assert err.count("run '") == 1


def test_a_model_must_have_been_trained_before_the_simulated_workload(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    early, late, whole, first = (str(tmp_path / n) for n in ("early.json", "late.json", "whole.json", "first.json"))
    # jobs 1-16 are submitted before 1000 s; those submitted after 500 s end after it (waits of 400 s);
    # the first 14 seem to end by 940 s (submit + run), yet really end by 1340 s
    for out, flags in ((early, ["--completed-before", "1000"]), (late, ["--start", "1000"]), (whole, []),
                       (first, ["--first", "14"])):
        assert main(["workload", "from-swf", str(trace), "-o", out, *flags]) == 0
    platform = tmp_path / "p.xml"
    platform.write_text(cluster_xml(8))
    capsys.readouterr()
    base = ["simulate", "-p", str(platform), "-s", "diws", "-o", str(tmp_path / "o"), "-q"]
    # trained on the simulated file itself, or on jobs ending after its first submission: refused
    refused(capsys, [*base, "-w", whole, "-O", f"model={_model(tmp_path, whole, 'w.skops')}"],
            "trained on the simulated workload itself", unchanged=tmp_path)
    late_model = _model(tmp_path, late, "late.skops")
    refused(capsys, [*base, "-w", early, "-O", f"model={late_model}"], "its training data end at trace time",
            unchanged=tmp_path)
    # the first 14 jobs were all submitted before the window, but some ended in it (their waits are not
    # in the file, so submit + run would say they had ended): refused, as the same file as a history is
    first_model = _model(tmp_path, first, "first.skops")
    refused(capsys, [*base, "-w", late, "-O", f"model={first_model}"], "converted without completed_before",
            unchanged=tmp_path)
    refused(capsys, [*base, "-w", late, "-O", f"history={first}"], "converted without completed_before",
            unchanged=tmp_path)
    # the jobs completed before the window: accepted; the deliberate oracle arm too
    early_model = _model(tmp_path, early, "early.skops")
    assert json.loads(Path(late).read_text())["conversion"]["submit_shift_s"] >= 1000
    assert main([*base, "-w", late, "-O", f"model={early_model}"]) == 0
    assert main([*base, "-w", early, "-O", f"model={late_model}", "--allow-overlap"]) == 0
    # without its card, what it learned from is unknown
    Path(f"{early_model}.card.json").unlink()
    refused(capsys, [*base, "-w", late, "-O", f"model={early_model}"], "card", unchanged=tmp_path)


def test_options_without_annotations_take_their_defaults_type(tmp_path, capsys):
    (tmp_path / "plain.py").write_text('''from schedlab.schedulers.easy import EasyBackfilling


class Plain(EasyBackfilling):
    def __init__(self, *, k=3, share=0.5, verbose=False, label="x", extra=None):
        super().__init__()
        self.k, self.share, self.verbose, self.label, self.extra = k, share, verbose, label, extra
''')
    spec = f"{tmp_path / 'plain.py'}:Plain"
    made = create_scheduler(spec, {"k": "5", "share": "0.25", "verbose": "true", "label": "7", "extra": "none"})
    assert (made.k, made.share, made.verbose, made.label, made.extra) == (5, 0.25, True, "7", None)
    assert create_scheduler(spec, {"extra": "text"}).extra == "text"
    platform, workload = inputs(tmp_path)
    for option, fragment in (("k=abc", "bad value for option 'k'"), ("share=x", "option 'share'"),
                             ("verbose=maybe", "expected true/false")):
        refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", spec, "-O", option, "-o",
                         str(tmp_path / "o")], fragment, unchanged=tmp_path)


# ------------------------------------------------------------------ 4. errors say whose they are


@pytest.mark.parametrize(("mode", "smallest"), [("typed", 13), ("typeless", 10)])
def test_lublin_refuses_machines_the_model_cannot_describe(tmp_path, capsys, mode, smallest):
    base = ["workload", "lublin", "--mode", mode, "--jobs", "50", "--seed", "1"]
    for nodes in (2, smallest - 1):
        refused(capsys, [*base, "--nodes", str(nodes), "-o", str(tmp_path / "w.json")],
                f"at least {smallest} nodes", unchanged=tmp_path)
    assert main([*base, "--nodes", str(smallest), "-o", str(tmp_path / "w.json")]) == 0


def test_a_user_scheduler_raising_in_init_is_its_failure(tmp_path, capsys):
    (tmp_path / "bad.py").write_text('''from schedlab.schedulers.easy import EasyBackfilling


class Bad(EasyBackfilling):
    def __init__(self, *, k: int = 1):
        super().__init__()
        if k == 2:
            raise ValueError("k=2 is not for me")
        raise RuntimeError("no model here")
''')
    platform, workload = inputs(tmp_path)
    spec = f"{tmp_path / 'bad.py'}:Bad"
    base = ["simulate", "-p", platform, "-w", workload, "-s", spec, "-o", str(tmp_path / "o")]
    assert main(base) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"scheduler '{spec}' raised RuntimeError: no model here in __init__" in err
    assert "internal error" not in err and "traceback in" in err
    refused(capsys, [*base, "-O", "k=2"], "bad options", unchanged=tmp_path)  # ValueError: bad options, exit 2
    path = _campaign(tmp_path, schedulers=())
    path.write_text(path.read_text() + f'\n[[schedulers]]\nname = "{spec}"\nlabel = "bad"\n')
    # the campaign loader makes each scheduler: its failure is said at load, as the scheduler's
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "c"), "-q"]) == 1
    assert "raised RuntimeError: no model here in __init__" in capsys.readouterr().err


def test_simulate_and_workload_check_share_batsims_rules(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    doc = json.loads(Path(workload).read_text())
    del doc["nb_res"]
    Path(workload).write_text(json.dumps(doc))
    campaign = _campaign(tmp_path)
    campaign.write_text(campaign.read_text().replace("synthetic = { jobs = 30, resources = 8 }", 'file = "w.json"'))
    for argv in (["workload", "check", workload], ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o",
                                                   str(tmp_path / "o")],
                 ["experiment", "run", str(campaign), "-o", str(tmp_path / "c")]):
        refused(capsys, argv, "field 'nb_res': missing (Batsim 4.2.1 requires it)", unchanged=tmp_path)


def test_a_user_schedulers_prepare_or_check_raising_is_its_failure(tmp_path, capsys):
    (tmp_path / "pk.py").write_text('''from schedlab.schedulers.easy import EasyBackfilling


class Prep(EasyBackfilling):
    def prepare(self):
        raise RuntimeError("no model file")


class Check(EasyBackfilling):
    def check_inputs(self, workload):
        raise KeyError("user")
''')
    platform, workload = inputs(tmp_path)
    for name, where in (("Prep", "prepare"), ("Check", "check_inputs")):
        spec = f"{tmp_path / 'pk.py'}:{name}"
        assert main(["simulate", "-p", platform, "-w", workload, "-s", spec, "-o", str(tmp_path / "o")]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"scheduler '{spec}' raised" in err and f"in {where}" in err
        assert "internal error" not in err


def test_flags_are_named_as_typed(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    err = refused(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "--allow-overlap"],
                  "--allow-overlap", unchanged=tmp_path)
    assert "allow_overlap" not in err
    err = refused(capsys, ["simulate", "-p", platform, "-w", workload, "--bogus"], "unrecognized arguments: --bogus",
                  unchanged=tmp_path)
    assert "usage:" not in err
    refused(capsys, ["workload"], "required", unchanged=tmp_path)


def test_rejected_jobs_are_counted_and_explained(tmp_path, capsys):
    platform, _ = inputs(tmp_path)
    workload = tmp_path / "nowall.json"
    workload.write_text(json.dumps(make_workload([("a", 0, 1, 2, None), ("b", 1, 1, 2, None)], nb_res=4).to_json()))
    assert main(["simulate", "-p", platform, "-w", str(workload), "-s", "easy", "-O", "reservation=machines",
                 "-o", str(tmp_path / "o"), "-q"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2 of 2 jobs were rejected by the scheduler (2 no walltime" in err


def test_a_hybrid_that_plans_nothing_says_so(tmp_path, capsys):
    platform, _ = inputs(tmp_path, nb_res=8)
    specs = [(f"j{i}", 30 * i, 1 + i % 4, 50 + 7 * (i % 5), None) for i in range(60)]
    workload = tmp_path / "nowall.json"
    workload.write_text(json.dumps(make_workload(specs, nb_res=8).to_json()))
    assert main(["simulate", "-p", platform, "-w", str(workload), "-s", "hybrid", "-O", "retrain=300",
                 "-o", str(tmp_path / "o"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "hybrid: no job was planned as predictable" in err and "no job has a requested time" in err
    report = json.loads((tmp_path / "o" / "summary.json").read_text())["scheduler_report"]
    assert report["nb_jobs_planned_as_predictable"] == 0 and report["nb_jobs_classified"] == 60


def test_a_long_option_value_is_no_file_name(tmp_path, capsys):
    (tmp_path / "plain.py").write_text("from schedlab.schedulers.easy import EasyBackfilling\n\n\n"
                                       "class Plain(EasyBackfilling):\n    def __init__(self, *, s='x'):\n"
                                       "        super().__init__()\n")
    platform, workload = inputs(tmp_path)
    assert main(["simulate", "-p", platform, "-w", workload, "-s", f"{tmp_path / 'plain.py'}:Plain", "-O",
                 "s=" + "a" * 300, "-o", str(tmp_path / "o"), "-q"]) == 0


def test_a_number_of_resources_is_a_platform_in_the_cli_too(tmp_path, capsys):
    import schedlab

    _, workload = inputs(tmp_path, nb_res=256)
    assert main(["simulate", "-p", "256", "-w", workload, "-s", "easy", "-o", str(tmp_path / "o"), "-q"]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["platform"]["nb_resources"] == 256
    assert summary["metrics"] == schedlab.simulate(256, workload, "easy").metrics
    refused(capsys, ["simulate", "-p", "256", "-w", workload, "-s", "easy", "--timing", "batsim"],
            "platform file", unchanged=tmp_path)
    refused(capsys, ["simulate", "-p", "0", "-w", workload, "-s", "easy"], "at least 1", unchanged=tmp_path)


def test_a_recording_cut_short_never_takes_the_records_name(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    record = tmp_path / "r.jsonl"
    record.write_text("an earlier, complete record\n")
    command = f"{sys.executable} -c 'import time; time.sleep(30)' {{socket}}"  # never answers
    assert main(["simulate", "-p", platform, "-w", workload, "--external", command, "--timeout", "1", "--record",
                 str(record), "-o", str(tmp_path / "o"), "-q"]) == 1
    assert record.read_text() == "an earlier, complete record\n"
    assert (tmp_path / "r.incomplete.jsonl").read_text().count("\n") == 1  # SIMULATION_BEGINS went out
    capsys.readouterr()

