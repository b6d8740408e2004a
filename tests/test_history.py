"""No look-ahead: what is learned or read at time t never depends on the run times of jobs that
complete after t (the DIWS issue's §4 property, at three levels: the completion history, a
window's training set, and an online-learning scheduler in the engine)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.engine import Engine
from schedlab.errors import InputError
from schedlab.model import Platform
from schedlab.predictors.features import SOURCES, UserMeans, job_table
from schedlab.predictors.history import HISTORY_COLUMNS, CompletionHistory, replay
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import parse_workload
from schedlab.workloads.convert import ConversionOptions, convert_columns
from schedlab.workloads.swf import read_swf, to_trace_jobs
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import check_invariants

SETTINGS = settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_history_features_by_hand():
    history = CompletionHistory()
    history.record(user="a", runtime_s=100.0, cores=4, end_s=1000.0)
    history.record(user="a", runtime_s=300.0, cores=8, end_s=2000.0)
    row = history.features([("a", 86400.0 + 21600.0, 900.0, 2)], now_s=2500.0).iloc[0]
    assert [row.last, row.beflast, row.beflast2] == [300.0, 100.0, 900.0]  # the third: its request
    assert [row.lastcpu, row.maxrt, row.maxcpu, row.meanrt, row.meancpu] == [8.0, 300.0, 8.0, 200.0, 6.0]
    assert row.stdrt == 100.0 and row.stdcpu == 2.0 and row.prevuser == 2.0 and row.since_last_s == 500.0
    assert row.tod1 == pytest.approx(0.0, abs=1e-12) and row.tod2 == pytest.approx(1.0)  # 06:00
    new = history.features([("b", 0.0, 600.0, 16)], now_s=2500.0).iloc[0]
    assert [new.last, new.meanrt, new.maxcpu, new.prevuser] == [600.0, 600.0, 16.0, 0.0]
    assert math.isnan(new.since_last_s)
    assert history.user_runtimes_s("a") == [100.0, 300.0]
    with pytest.raises(ValueError, match="time order"):
        history.record(user="a", runtime_s=1.0, cores=1, end_s=1500.0)
    with pytest.raises(ValueError, match="holds a completion at 2000"):  # asking the past would see the future
        history.features([("a", 0.0, 900.0, 2)], now_s=1500.0)


@st.composite
def completions(draw):
    n = draw(st.integers(1, 40))
    rows = [{"user": draw(st.sampled_from("abc")), "submit_s": draw(st.integers(0, 500)),
             "wait_s": draw(st.integers(0, 200)), "runtime_s": draw(st.integers(1, 300)),
             "cores": draw(st.integers(1, 16))} for _ in range(n)]
    frame = pd.DataFrame(rows)
    frame["end_s"] = frame.submit_s + frame.wait_s + frame.runtime_s
    return frame, draw(st.integers(0, 1000)), draw(st.integers(1, 1000))


@SETTINGS
@given(case=completions())
def test_history_features_at_t_ignore_later_completions(case):
    frame, t, extra = case
    later = frame.end_s >= t
    other = frame.copy()
    other.loc[later, "runtime_s"] += extra  # still completing after t
    other["end_s"] = other.submit_s + other.wait_s + other.runtime_s
    queries = [(user, t, 600.0, 4) for user in "abcd"]
    first, second = (replay(f, t).features(queries, now_s=t) for f in (frame, other))
    pd.testing.assert_frame_equal(first, second)
    assert list(first.columns) == list(HISTORY_COLUMNS)


def swf(rows) -> str:
    """SWF lines: job, submit, wait, run, procs, user (requested procs and time filled in)."""
    lines = ["; MaxProcs: 64"]
    for job, (submit, wait, run, procs, user) in enumerate(rows, start=1):
        lines.append(f"{job} {submit} {wait} {run} {procs} -1 -1 {procs} 3600 -1 1 {user} 1 -1 1 -1 -1 -1")
    return "\n".join(lines) + "\n"


def history_of(tmp_path, rows, before, name):
    path = tmp_path / name
    path.write_text(swf(rows))
    converted, _ = convert_columns(to_trace_jobs(read_swf(path)), ConversionOptions(completed_before=before))
    written = converted.to_dict()
    del written["description"], written["conversion"]["source"]  # the file's own name
    return written


def test_a_job_that_waited_past_the_cut_is_not_in_the_history(tmp_path):
    # submitted at 0, ran 10 s, but waited 500 s: it ended at 510, after the cut at 100
    path = tmp_path / "w.swf"
    path.write_text(swf([(0, 0, 50, 1, 1), (0, 500, 10, 1, 2)]))
    converted, summary = convert_columns(to_trace_jobs(read_swf(path)), ConversionOptions(completed_before=100))
    assert len(converted.ids) == 1 and summary["dropped"] == {"not completed before 100 s": 1}
    assert summary["nb_completion_assumes_no_wait"] == 0


@SETTINGS
@given(rows=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 300), st.integers(1, 300), st.integers(1, 64),
                               st.integers(1, 4)), min_size=2, max_size=30),
       cut=st.integers(50, 800), extra=st.integers(1, 500))
def test_a_windows_training_set_and_user_means_ignore_later_run_times(tmp_path_factory, rows, cut, extra):
    tmp_path = tmp_path_factory.mktemp("h")
    changed = [(s, w, r + extra if s + w + r >= cut else r, p, u) for s, w, r, p, u in rows]
    try:
        first = history_of(tmp_path, rows, cut, "a.swf")
    except InputError:  # nothing completed before the cut: the same in both
        with pytest.raises(InputError, match="no job kept"):
            history_of(tmp_path, changed, cut, "b.swf")
        return
    second = history_of(tmp_path, changed, cut, "b.swf")
    assert first == second
    tables = [job_table(parse_workload(json.dumps(c)).jobs, SOURCES) for c in (first, second)]
    means = [UserMeans(columns=("cpu", "time_limit")).fit(t).means_ for t in tables]
    assert means[0] == means[1]


@st.composite
def user_scenarios(draw):
    nb_res = draw(st.integers(1, 6))
    specs = []
    for i in range(draw(st.integers(1, 20))):
        walltime = draw(st.one_of(st.none(), st.integers(5, 60)))
        specs.append((str(i), draw(st.integers(0, 60)), draw(st.integers(1, nb_res)), draw(st.integers(1, 40)),
                      walltime, {"user": draw(st.sampled_from("xyz")), "requested_time_s": walltime or -1}))
    return nb_res, specs, draw(st.integers(0, 80)), draw(st.integers(1, 50))


CONFIGS = [("fcfs", {}), ("easy", {}), ("easy-sjbf", {}), ("easy", {"reservation": "machines"}),
           ("diws", {"learner": "user-last2"}), ("diws", {"learner": "user-last2", "overrun": "tsafrir"}),
           ("diws", {"learner": "user-last2", "aging_s": "20"}),
           ("easy-pp", {"predictor": "user-last2", "correction": "power", "backfill": "sjbf"}),
           ("easy-pp", {"predictor": "adaboost", "refit_s": "30"}),
           ("hybrid", {"predictor": "user-last2", "step2_order": "sjbf", "retrain": "20", "reliability": "dt",
                       "threshold": "0.2"}),
           ("fcfs-bf1", {"predictor": "user-last"})]


@pytest.mark.parametrize(("name", "options"), [
    # easy-pp's online AdaBoost in CI's second pass (its user-last2 twin, and the DIWS family's refits
    # in test_probabilistic, by default)
    pytest.param(n, o, id=f"{n}-{o}", marks=pytest.mark.slow if o.get("predictor") == "adaboost" else ())
    for n, o in CONFIGS])
@SETTINGS
@given(scenario=user_scenarios())
def test_nothing_decided_by_t_depends_on_run_times_ending_after_t(name, options, scenario):
    """Jobs ending after t get longer run times: every start and allocation up to t, and every
    prediction made for a job submitted up to t, stays the same (online learners included)."""
    nb_res, specs, t, extra = scenario
    first = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler(name, options))
    first.run()
    check_invariants(first, nb_res)
    ends = {key.split("!")[1]: -math.inf if r.finish_s is None else r.finish_s  # rejected: never ran
            for key, r in first.records.items()}
    changed = [(n, s, r, d + extra if ends[n] > t else d, w, x) for n, s, r, d, w, x in specs]
    second = Engine(Platform.homogeneous(nb_res), make_workload(changed), create_scheduler(name, options))
    second.run()
    assert decided_by(first, t) == decided_by(second, t)


def decided_by(engine: Engine, t: float):
    """Starts and allocations up to t (rejections: start None), and predictions for jobs submitted
    up to t."""
    starts = {k: (r.start_s, str(r.alloc)) for k, r in engine.records.items()
              if (r.start_s if r.start_s is not None else r.job.submit_time_s) <= t}
    early = {job.id for job in engine.workload.jobs if job.submit_time_s <= t}
    estimate = getattr(engine.scheduler, "estimate", None)  # a prediction scheduler's composed estimate
    predicted = {k: v for k, v in getattr(estimate, "predicted_s", {}).items() if k in early}
    return starts, predicted


def test_the_check_catches_a_scheduler_that_reads_run_times():
    """The property above fails for a DIWS told the true run times (the test can fail)."""
    from tests.helpers.workloads import oracle

    specs = [("a", 0, 1, 10, 100), ("b", 0, 1, 20, 100), ("c", 5, 1, 30, 100)]
    changed = [("a", 0, 1, 10, 100), ("b", 0, 1, 20, 100), ("c", 5, 1, 60, 100)]  # c ends after t = 5
    runs = []
    for workload in (specs, changed):
        engine = Engine(Platform.homogeneous(1), make_workload(workload), oracle(workload))
        engine.run()
        runs.append(decided_by(engine, 5))
    assert runs[0] != runs[1]


def test_online_user_last2_learns_from_completions():
    """Two short jobs of user x complete; x's next job is predicted from them and jumps the queue."""
    specs = [("a", 0, 2, 10, 1000, {"user": "x"}), ("b", 0, 2, 20, 1000, {"user": "x"}),
             ("long", 5, 2, 500, 1000, {"user": "y"}), ("d", 33, 2, 10, 1000, {"user": "y"}),
             ("c", 35, 2, 10, 1000, {"user": "x"})]
    engine = Engine(Platform.homogeneous(2), make_workload(specs), create_scheduler("diws", {"learner": "user-last2"}))
    engine.run()
    predicted = engine.scheduler.estimate.predicted_s
    assert predicted["w0!a"] == 1000.0 and predicted["w0!c"] == 15.0 and predicted["w0!d"] == 1000.0
    # long (y) runs 30..530; d (1000 s) and c (15 s) wait; c goes first although submitted later
    assert engine.records["w0!c"].start_s == 530.0 and engine.records["w0!d"].start_s == 540.0
    assert np.isfinite(predicted["w0!long"])


def test_a_history_without_recorded_waits_is_said_by_plan(tmp_path, capsys):
    """SWF wait -1 (LLNL Atlas records none): completion is taken as submit + run, the earliest it can
    be, so the history may hold jobs that ended later: `experiment plan` says so."""
    from schedlab.cli import main

    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n" + "".join(
        f"{i} {100 * i} -1 50 1 -1 -1 1 600 -1 1 {i % 3} 1 -1 1 -1 -1 -1\n" for i in range(1, 41)))
    campaign = tmp_path / "c.toml"
    campaign.write_text(f'name = "n"\n[[workloads]]\nname = "t"\nswf = "{trace}"\n'
                        'convert = { start = 2000, days = 1 }\nhistory = "completed-before"\n'
                        '[[platforms]]\nresources = 8\n[[schedulers]]\nname = "easy"\n')
    assert main(["experiment", "plan", str(campaign), "-o", str(tmp_path / "o")]) == 0
    said = capsys.readouterr().out
    assert "note: history" in said and "19 of 19 jobs have no recorded wait" in said  # submit + 50 < 2000
    assert main(["experiment", "run", str(campaign), "-o", str(tmp_path / "o"), "--workers", "1"]) == 0
    assert "19 of 19 jobs have no recorded wait" in next((tmp_path / "o").rglob("*.note")).read_text()
