"""easy-pp: EASY with corrected predictions (EASY++ and the COARE walltime study's scenarios)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.engine import Engine
from schedlab.model import JobState, Platform
from schedlab.outputs import job_row
from schedlab.schedulers.base import create_scheduler
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import PLAN_MODES, check_invariants, watch_plan
from tests.helpers.workloads import users_workload

SCENARIOS = [("walltime", "none"), ("user-last2", "simple"), ("user-last2", "power"), ("adaboost", "simple"),
             ("adaboost", "power"), ("default:600", "simple"), ("default:600", "power")]


@st.composite
def user_scenarios(draw, max_jobs: int = 25):
    nb_res = draw(st.integers(1, 8))
    specs = []
    for i in range(draw(st.integers(0, max_jobs))):
        walltime = draw(st.one_of(st.none(), st.integers(1, 4000)))
        specs.append((str(i), draw(st.integers(0, 3000)), draw(st.integers(1, nb_res + 1)),
                      draw(st.integers(1, 3000)), walltime,
                      {"user": draw(st.sampled_from("xyz")), "requested_time_s": walltime or -1}))
    return nb_res, specs


def run(nb_res, specs, options):
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler("easy-pp", options))
    engine.run()
    return engine


OPTION_SETS = [{"predictor": p, "correction": c, "backfill": b, **({"refit_s": "600"} if p == "adaboost" else {})}
               for (p, c) in SCENARIOS for b in ("fcfs", "sjbf")] + [
    {"predictor": "user-last2", "correction": "tsafrir", "backfill": "sjbf"},
    {"predictor": "default:30", "correction": "walltime"}, {"predictor": "user-last2", "correction": "none"}]


@pytest.mark.parametrize("options", OPTION_SETS, ids=[",".join(f"{v}" for v in o.values()) for o in OPTION_SETS])
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=user_scenarios())
def test_invariants_hold_for_every_option(options, scenario):
    nb_res, specs = scenario
    engine = run(nb_res, specs, options)
    check_invariants(engine, nb_res)  # kills exactly at the walltime: no job is killed earlier
    scheduler = engine.scheduler
    for job in engine.workload.jobs:
        if job.id in scheduler.predictions_s:
            assert 1.0 <= scheduler.predictions_s[job.id] <= (job.walltime_s or float("inf"))


@pytest.mark.parametrize("options", OPTION_SETS, ids=[",".join(f"{v}" for v in o.values()) for o in OPTION_SETS])
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=user_scenarios())
def test_backfilling_never_delays_the_planned_head_and_needs_no_full_pass(options, scenario):
    """A backfilled job is tested with the duration the plan gives it once started (a prediction
    under 60 s is corrected at once): the head's shadow time never moves because of it; a
    decision without freed resources or plan-changing corrections may skip the full pass, and
    planned ends after the shadow time need no CALL_ME_LATER: neither changes the schedule."""
    nb_res, specs = scenario
    engines = [Engine(Platform.homogeneous(nb_res), make_workload(specs),
                      watch_plan(create_scheduler("easy-pp", options), mode)) for mode in PLAN_MODES]
    for engine in engines:
        engine.run()
    rows = [[job_row(r) for r in engine.records.values()] for engine in engines]
    assert rows[0] == rows[1] == rows[2]
    assert engines[0].nb_steps <= engines[2].nb_steps  # calls only for ends that can matter


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=user_scenarios())
def test_no_prediction_and_no_correction_is_plain_easy(scenario):
    nb_res, specs = scenario
    ours = run(nb_res, specs, {"predictor": "walltime", "correction": "none", "backfill": "fcfs"})
    easy = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler("easy"))
    easy.run()
    assert [job_row(r) for r in ours.records.values()] == [job_row(r) for r in easy.records.values()]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=user_scenarios())
def test_the_seven_scenarios_run_the_same_job_set(scenario):
    nb_res, specs = scenario
    outcomes = set()
    for predictor, correction in SCENARIOS:
        engine = run(nb_res, specs, {"predictor": predictor, "correction": correction,
                                     **({"refit_s": "600"} if predictor == "adaboost" else {})})
        states = {k: r.state for k, r in engine.records.items()}
        outcomes.add((frozenset(k for k, s in states.items() if s is JobState.REJECTED),
                      frozenset(k for k, s in states.items() if s is JobState.COMPLETED_WALLTIME_REACHED)))
    assert len(outcomes) == 1


def test_byte_for_byte_equal_to_easy_through_the_cli(tmp_path):
    specs = [(str(i), 7 * i, 1 + i % 5, 50 + 13 * i % 200, 100 + 17 * i % 300) for i in range(80)]
    (tmp_path / "w.json").write_text(json.dumps(make_workload(specs, nb_res=8).to_json()))
    common = ["simulate", "-p", "constrained512", "-w", str(tmp_path / "w.json"), "-q"]
    assert main([*common, "-s", "easy", "-o", str(tmp_path / "a")]) == 0
    assert main([*common, "-s", "easy-pp", "-O", "predictor=walltime", "-O", "correction=none",
                 "-o", str(tmp_path / "b")]) == 0
    # jobs.csv byte for byte (schedule.csv differs only in the measured scheduling and simulation times)
    assert (tmp_path / "a" / "jobs.csv").read_bytes() == (tmp_path / "b" / "jobs.csv").read_bytes()
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["timing"]["training_time_s"] == 0.0


def test_default_600_predicts_ten_minutes_and_corrects_upwards():
    """A 10-minute prediction for a 2-h job with a 4-h walltime: simple corrections at 540 s and
    4,140 s take its limit to 4,200 s then 7,800 s (> 2 h: it ends before the next firing)."""
    specs = [("a", 0, 1, 7200, 14400, {"user": "u"}), ("b", 10, 1, 60, 14400, {"user": "u"})]
    engine = run(1, specs, {"predictor": "default:600", "correction": "simple"})
    scheduler = engine.scheduler
    assert scheduler.predictions_s == {"w0!a": 600.0, "w0!b": 600.0}
    assert engine.records["w0!a"].finish_s == 7200.0 and engine.records["w0!b"].start_s == 7200.0
    power = run(1, specs, {"predictor": "default:600", "correction": "power"})
    assert power.records["w0!b"].start_s == 7200.0  # the plan moves, the schedule cannot here


def test_user_last2_is_easy_plus_plus():
    """User u's jobs run 100 s then 300 s; the third is predicted (100 + 300) / 2 = 200 s, capped by
    its walltime; user v has one run time only: its walltime."""
    specs = [("a", 0, 1, 100, 1000, {"user": "u"}), ("b", 0, 1, 300, 1000, {"user": "u"}),
             ("v1", 0, 1, 50, 1000, {"user": "v"}), ("c", 500, 1, 10, 1000, {"user": "u"}),
             ("d", 500, 1, 10, 150, {"user": "u"}), ("v2", 500, 1, 10, 1000, {"user": "v"})]
    engine = run(4, specs, {"predictor": "user-last2", "correction": "none"})
    predicted = engine.scheduler.predictions_s
    assert predicted["w0!c"] == 200.0 and predicted["w0!d"] == 150.0 and predicted["w0!v2"] == 1000.0


def test_adaboost_refits_on_completed_jobs_only():
    """Users with habits: before the first refit (at 10,000 s) predictions are walltimes; after
    it, a user's jobs are predicted near their habit, from completed jobs only."""
    specs = [(f"e{i}", 100 * i, 1, 60 if i % 2 else 600, 5000,
              {"user": "short" if i % 2 else "long", "requested_time_s": 5000}) for i in range(60)]
    specs += [("late-short", 12000, 1, 60, 5000, {"user": "short", "requested_time_s": 5000}),
              ("late-long", 12000, 1, 600, 5000, {"user": "long", "requested_time_s": 5000})]
    engine = run(64, specs, {"predictor": "adaboost", "correction": "simple", "refit_s": "10000"})
    scheduler = engine.scheduler
    assert scheduler.estimate.refits == 1 and 0 < scheduler.training_time_s < engine.scheduling_time_s
    assert scheduler.predictions_s["w0!e3"] == 5000.0  # before the first fit: the walltime
    assert abs(scheduler.predictions_s["w0!late-short"] - 60) < 10
    assert abs(scheduler.predictions_s["w0!late-long"] - 600) < 60


def test_an_adaboost_refit_learns_what_ended_by_its_time_whenever_the_decision_comes():
    """Refits belong to simulated times (every refit_s), not to decisions: the refit for 10,000 s
    learns the 60 jobs that ended before it, neither the one ending at 10,000 s itself (whether its
    completion comes before or after a call at that instant must not matter) nor the one ending at
    10,500 s (with a gap of 1,500 s between decisions, the refit would happen then)."""
    specs = [(f"e{i}", 100 * i, 1, 60 if i % 2 else 600, 5000,
              {"user": "short" if i % 2 else "long", "requested_time_s": 5000}) for i in range(60)]
    specs += [("edge", 9000, 1, 1000, 5000, {"user": "long", "requested_time_s": 5000}),
              ("mid", 9000, 1, 1500, 5000, {"user": "long", "requested_time_s": 5000})]
    scheduler = run(64, specs, {"predictor": "adaboost", "correction": "simple", "refit_s": "10000"}).scheduler
    assert scheduler.estimate.refits == 1 and len(scheduler.estimate._learned_runtimes_s) == 60
    assert [job.name for _, job, _ in scheduler.estimate._ended] == ["edge", "mid"]


@pytest.mark.parametrize(("option", "fragment"), [("predictor=oracle", "predictor must be one of"),
                                                  ("predictor=default:-5", "seconds > 0"),
                                                  ("correction=double", "correction"),
                                                  ("model=m.skops", "predictor=adaboost")])
def test_bad_options_are_one_line(tmp_path, capsys, option, fragment):
    (tmp_path / "w.json").write_text(json.dumps(make_workload([("a", 0, 1, 5, 10)], nb_res=512).to_json()))
    assert main(["simulate", "-p", "constrained512", "-w", str(tmp_path / "w.json"), "-s", "easy-pp",
                 "-O", option, "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err, err


@pytest.mark.batsim
def test_easy_pp_under_real_batsim_with_corrections(tmp_path):
    """`schedlab serve easy-pp` as real Batsim's decision process, corrections included: its
    CALL_ME_LATERs come back as REQUESTED_CALLs, and the schedule is the engine's (within Batsim's
    message latencies)."""
    import csv
    import sys

    from tests.helpers.real_batsim import run_real_batsim

    users_workload(tmp_path)
    options = ["-O", "predictor=user-last2", "-O", "correction=simple", "-O", "backfill=sjbf"]
    rows = run_real_batsim(tmp_path / "real", tmp_path / "p.xml", tmp_path / "w.json",
                           [sys.executable, "-m", "schedlab", "serve", "easy-pp", *options, "--socket", "{socket}",
                            "--record", str(tmp_path / "messages.jsonl")])
    assert main(["simulate", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "w.json"), "-s", "easy-pp",
                 *options, "-o", str(tmp_path / "engine"), "-q"]) == 0
    with (tmp_path / "engine" / "jobs.csv").open() as handle:
        ours = {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(handle)}
    real = {r["job_id"]: float(r["starting_time"]) for r in rows}
    assert real.keys() == ours.keys() and all(abs(real[k] - ours[k]) < 0.1 for k in ours)
    text = (tmp_path / "messages.jsonl").read_text()
    assert text.count("CALL_ME_LATER") > 10 and text.count("REQUESTED_CALL") > 10


@pytest.mark.batsim
def test_pybatsim_entry_file_for_easy_pp_under_real_batsim(tmp_path):
    import sys

    from tests.helpers.real_batsim import pybatsim_entry, run_real_batsim

    pybatsim, entry = pybatsim_entry("schedlabEasyPP.py")
    users_workload(tmp_path)
    options = {"predictor": "user-last2", "correction": "tsafrir", "backfill": "sjbf"}
    rows = run_real_batsim(tmp_path, tmp_path / "p.xml", tmp_path / "w.json",
                           [str(pybatsim), str(entry), "-t", "0", "-s", "{socket}", "-o", json.dumps(options)])
    served = run_real_batsim(tmp_path / "serve", tmp_path / "p.xml", tmp_path / "w.json",
                             [sys.executable, "-m", "schedlab", "serve", "easy-pp",
                              *[f"-O{k}={v}" for k, v in options.items()], "--socket", "{socket}"])
    # the same decisions; pybatsim's replies reach Batsim a few milliseconds apart from serve's
    ours = {r["job_id"]: float(r["starting_time"]) for r in served}
    theirs = {r["job_id"]: float(r["starting_time"]) for r in rows}
    assert ours.keys() == theirs.keys() and all(abs(ours[k] - theirs[k]) < 0.1 for k in ours)


def test_a_limit_at_the_seven_day_cap_gives_way_to_the_walltime_end():
    """A 1-CPU job with a 14-day walltime runs 8 days on 2 CPUs; its corrected limit stops at the
    7-day cap. From then on the plan holds its walltime end (never an end in the past), so a short
    job submitted on day 7.05 is backfilled at once in front of a 2-CPU head, as with no correction."""
    day = 86400.0
    specs = [("long", 0, 1, 8 * day, 14 * day, {"user": "u"}), ("head", 100, 2, 60, 3600, {"user": "u"}),
             ("short", 7.05 * day, 1, 60, 3600, {"user": "v"})]
    for correction in ("simple", "none"):
        engine = run(2, specs, {"predictor": "default:600", "correction": correction})
        assert engine.records["w0!short"].start_s == 7.05 * day, correction
    engine = Engine(Platform.homogeneous(2), make_workload(specs),
                    create_scheduler("easy-pp", {"predictor": "default:600", "correction": "simple"}))
    decide = engine.scheduler.decide

    def checked(now):
        decisions = decide(now)
        assert all(end >= now for end, _, _ in engine.scheduler._ends), now
        return decisions

    engine.scheduler.decide = checked
    engine.run()


def test_waiting_jobs_are_ordered_by_prediction_not_by_their_settled_limit():
    """Corrections settle a 30-s prediction to 3,630 s (simple) only when the job starts: in DIWS's
    queue (shortest predicted first) it stays ahead of a 600-s one; started, it plans 3,630 s."""
    from tests.helpers.workloads import oracle

    specs = [("block", 0, 1, 100, 1000), ("six", 1, 1, 600, 1000), ("thirty", 2, 1, 30, 1000)]
    for overrun in ("walltime", "simple", "power", "tsafrir"):
        scheduler = oracle(specs, overrun=overrun)
        scheduler.on_simulation_begins(Platform.homogeneous(1), 0.0)
        for job in make_workload(specs).jobs:
            scheduler.on_job_submitted(job, job.submit_time_s)
            scheduler.decide(job.submit_time_s)  # block starts at 0, the others wait
        assert [job.id for job in scheduler.queue] == ["w0!thirty", "w0!six"], overrun
    scheduler.on_job_completed("w0!block", JobState.COMPLETED_SUCCESSFULLY, 100.0)
    scheduler.decide(100.0)  # tsafrir: 30 + 1 min leaves 90 - 60 > 0: one firing
    assert scheduler.expected_end_s("w0!thirty") == 100.0 + 90.0


def test_a_call_delivered_a_hair_early_still_corrects():
    from schedlab.model import CallMeLater
    from tests.helpers.workloads import oracle

    scheduler = oracle([("a", 0, 1, 600, 10000)], overrun="simple")
    scheduler.calls_for_plan_only = False  # a call for every planned end, even with nothing waiting
    scheduler.on_simulation_begins(Platform.homogeneous(1), 0.0)
    scheduler.on_job_submitted(make_workload([("a", 0, 1, 5000, 10000)]).jobs[0], 0.0)
    scheduler.decide(0.0)
    early = 540.0 - 1e-9
    scheduler.on_requested_call(early)
    assert scheduler.decide(early) == [CallMeLater(4140.0)] and scheduler.expected_end_s("w0!a") == 4200.0
    assert scheduler._calls == {4140.0}  # the call that came is forgotten, the next one is asked once
