"""DIWS: EASY with the queue in predicted-run-time order and predictions in the plan."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from schedlab.cli import main
from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.schedulers.base import create_scheduler
from tests.helpers.data import examples, make_workload
from tests.helpers.invariants import check_invariants, scenarios
from tests.helpers.workloads import Oracle, actual, oracle


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_with_an_oracle_diws_is_easy_spt_on_exact_run_times(scenario):
    nb_res, specs = scenario
    diws = Engine(Platform.homogeneous(nb_res), make_workload(specs), oracle(specs))
    diws.run()
    clairvoyant = [(name, submit, res, actual(delay, walltime), actual(delay, walltime))
                   for name, submit, res, delay, walltime in specs]
    easy = Engine(Platform.homogeneous(nb_res), make_workload(clairvoyant),
                  create_scheduler("easy", {"queue_order": "spt"}))
    easy.run()
    assert {k: r.start_s for k, r in diws.records.items()} == {k: r.start_s for k, r in easy.records.items()}


@pytest.mark.parametrize(("scale", "overrun"), [(0.0001, "walltime"), (0.2, "walltime"), (0.7, "walltime"),
                                               (3.0, "walltime"), (1000.0, "walltime"), (0.0001, "simple"),
                                               (0.2, "power"), (0.7, "tsafrir"), (0.05, "simple")])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_invariants_hold_with_wrong_predictions(scale, overrun, scenario):
    nb_res, specs = scenario
    scheduler = oracle(specs, scale, overrun=overrun)
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler)
    engine.run()
    check_invariants(engine, nb_res)  # kills stay at the walltime, whatever the prediction
    for job in engine.workload.jobs:  # predictions clipped to [1 s, walltime]
        if job.id in scheduler.estimate.predicted_s:
            limit = job.walltime_s if job.walltime_s is not None else float("inf")
            assert 1.0 <= scheduler.estimate.predicted_s[job.id] <= limit


def history_and_window(tmp_path):
    """A history where short jobs come from user s and long ones from user l; a window where a long
    job and many short ones queue behind a blocker."""
    history = [(str(i), 10 * i, 1, 30 if i % 2 else 3000, 4000, {"user": "s" if i % 2 else "l"}) for i in range(200)]
    (tmp_path / "history.json").write_text(json.dumps(make_workload(history, nb_res=2).to_json()))
    window = [("block", 0, 2, 100, 4000, {"user": "l"}), ("long", 1, 2, 3000, 4000, {"user": "l"})] + [
        (f"short{i}", 2 + i, 2, 30, 4000, {"user": "s"}) for i in range(5)]
    (tmp_path / "window.json").write_text(json.dumps(make_workload(window, nb_res=2).to_json()))
    (tmp_path / "p.xml").write_text(__import__("schedlab.platforms.generate", fromlist=["x"]).cluster_xml(2))


def test_diws_trains_on_history_and_puts_predicted_short_jobs_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))  # the trained-model cache
    history_and_window(tmp_path)
    common = ["simulate", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "window.json"), "-q"]
    assert main([*common, "-s", "easy", "-o", str(tmp_path / "easy")]) == 0
    assert main([*common, "-s", "diws", "-O", f"history={tmp_path / 'history.json'}", "-o",
                 str(tmp_path / "diws")]) == 0
    waits = {}
    for name in ("easy", "diws"):
        waits[name] = json.loads((tmp_path / name / "summary.json").read_text())["metrics"]["mean_waiting_time_s"]
    assert waits["diws"] < waits["easy"] / 3  # the five short jobs no longer wait for the long one
    cached = list((tmp_path / "cache" / "models").glob("*.skops"))
    assert len(cached) == 1 and cached[0].with_name(cached[0].name + ".card.json").is_file()
    # a saved model gives the same schedule
    assert main(["predictor", "train", "-w", str(tmp_path / "history.json"), "--split", "none",
                 "-o", str(tmp_path / "m.skops")]) == 0
    assert main([*common, "-s", "diws", "-O", f"model={tmp_path / 'm.skops'}", "-o", str(tmp_path / "m")]) == 0
    assert (tmp_path / "m" / "jobs.csv").read_text() == (tmp_path / "diws" / "jobs.csv").read_text()


def test_diws_needs_a_predictor(capsys):
    assert main(["simulate", "-p", "lublin256", "-w", "nowhere.json", "-s", "diws"]) == 2
    # the workload is read first; with a real one the scheduler refuses:
    err = capsys.readouterr().err
    assert "nowhere.json" in err
    with pytest.raises(Exception, match="model=PATH"):
        create_scheduler("diws")


@pytest.mark.batsim
def test_diws_under_real_batsim_equals_the_engine(tmp_path, monkeypatch):
    """`schedlab serve diws` as real Batsim's decision process: the same starts as the embedded
    engine (within Batsim's message latencies) on the history/window case."""
    import sys

    from tests.helpers.real_batsim import run_real_batsim

    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    history_and_window(tmp_path)
    option = f"history={tmp_path / 'history.json'}"
    rows = run_real_batsim(tmp_path / "real", tmp_path / "p.xml", tmp_path / "window.json",
                           [sys.executable, "-m", "schedlab", "serve", "diws", "-O", option, "--socket", "{socket}"])
    assert main(["simulate", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "window.json"), "-s", "diws",
                 "-O", option, "-o", str(tmp_path / "engine"), "-q"]) == 0
    import csv

    with (tmp_path / "engine" / "jobs.csv").open() as handle:
        ours = {r["job_id"]: float(r["starting_time"]) for r in csv.DictReader(handle)}
    real = {r["job_id"]: float(r["starting_time"]) for r in rows}
    assert real.keys() == ours.keys() and all(abs(real[k] - ours[k]) < 0.1 for k in ours)


def test_a_margin_adds_minutes_before_clipping_to_the_walltime():
    specs = [("a", 0, 1, 30, 100), ("b", 0, 1, 30, 1000), ("c", 0, 1, 30, None)]
    scheduler = Oracle(margin_min=1.0)
    scheduler.runtimes = {f"w0!{name}": float(delay) for name, _, _, delay, _ in specs}
    engine = Engine(Platform.homogeneous(1), make_workload(specs), scheduler)
    engine.run()
    assert scheduler.estimate.predicted_s == {"w0!a": 90.0, "w0!b": 90.0, "w0!c": 90.0}
    scheduler = Oracle(margin_min=2.0)
    scheduler.runtimes = {f"w0!{name}": float(delay) for name, _, _, delay, _ in specs}
    Engine(Platform.homogeneous(1), make_workload(specs), scheduler).run()
    assert scheduler.estimate.predicted_s == {"w0!a": 100.0, "w0!b": 150.0, "w0!c": 150.0}  # a: its walltime


def test_overrun_corrections_fire_60_s_before_the_limit():
    """A job predicted 600 s that runs 5,000 s, a job waiting behind it: with overrun=simple, calls
    at 540 s and 4,140 s raise its planned end to 4,200 s then 7,800 s; the walltime (10,000 s)
    stays the kill time. With nothing waiting, no call is asked (no revision could matter), and the
    next decision finds the limit the calls would have made."""
    from schedlab.model import CallMeLater, Execute

    specs = [("a", 0, 1, 5000, 10000), ("b", 0, 1, 8000, 10000)]
    jobs = make_workload(specs).jobs
    scheduler = oracle([("a", 0, 1, 600, 10000), ("b", 0, 1, 8000, 10000)], overrun="simple")
    scheduler.on_simulation_begins(Platform.homogeneous(1), 0.0)
    for job in jobs:
        scheduler.on_job_submitted(job, 0.0)
    first = scheduler.decide(0.0)
    assert [type(d) for d in first] == [CallMeLater, Execute] and first[0].at_s == 540.0  # calls first
    assert scheduler.expected_end_s("w0!a") == 600.0
    scheduler.on_requested_call(540.0)
    assert scheduler.decide(540.0) == [CallMeLater(4140.0)] and scheduler.expected_end_s("w0!a") == 4200.0
    scheduler.on_requested_call(4140.0)
    assert scheduler.decide(4140.0) == [CallMeLater(7740.0)] and scheduler.expected_end_s("w0!a") == 7800.0
    assert scheduler.corrections_of("w0!a") == 2
    alone = oracle(specs, scale=600 / 5000, overrun="simple")
    alone.on_simulation_begins(Platform.homogeneous(2), 0.0)
    alone.on_job_submitted(jobs[0], 0.0)
    assert [type(d) for d in alone.decide(0.0)] == [Execute]
    alone.on_job_submitted(jobs[1], 5000.0)  # the next decision, past two limits: both firings
    alone.decide(5000.0)
    assert alone.expected_end_s("w0!a") == 7800.0 and alone.corrections_of("w0!a") == 2
    # overrun=walltime (the default): the planned end becomes the walltime end, at the planned end
    plain = oracle([("a", 0, 1, 600, 10000), ("b", 0, 1, 8000, 10000)])
    plain.on_simulation_begins(Platform.homogeneous(1), 0.0)
    for job in jobs:
        plain.on_job_submitted(job, 0.0)
    assert plain.decide(0.0)[0] == CallMeLater(600.0)  # calls first
    plain.on_requested_call(600.0)
    assert plain.decide(600.0) == [] and plain.expected_end_s("w0!a") == 10000.0


@pytest.mark.parametrize(("scale", "overrun"), [(0.05, "simple"), (0.3, "power"), (0.6, "tsafrir"), (0.5, "walltime")])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios())
def test_diws_needs_calls_only_for_ends_that_matter(scale, overrun, scenario):
    from tests.helpers.invariants import PLAN_MODES, render, watch_plan

    nb_res, specs = scenario
    engines = []
    for mode in PLAN_MODES:
        engine = Engine(Platform.homogeneous(nb_res), make_workload(specs),
                        watch_plan(oracle(specs, scale, overrun=overrun), mode))
        engine.run()
        engines.append(engine)
    assert render(engines[0]) == render(engines[1]) == render(engines[2])


def test_a_history_that_overlaps_the_simulated_workload_is_refused(tmp_path, capsys):
    """history= holding the simulated jobs themselves, or (same trace) jobs ending after the first
    simulated submission, is look-ahead by mistake: exit 2, one line, nothing written; allowed as a
    deliberate oracle arm."""
    history_and_window(tmp_path)
    common = ["simulate", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "window.json"), "-s", "diws"]
    out = tmp_path / "out"
    capsys.readouterr()
    assert main([*common, "-O", f"history={tmp_path / 'window.json'}", "-o", str(out), "-q"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "window.json" in error and "7 of its jobs are simulated jobs" in error
    assert not out.exists()
    assert main([*common, "-O", f"history={tmp_path / 'window.json'}", "--allow-overlap", "-o", str(out), "-q"]) == 0
    assert main([*common, "-O", f"history={tmp_path / 'history.json'}", "-o", str(out), "-q"]) == 0


def test_history_overlap_in_trace_time():
    """Two conversions of one trace: a history job ending after the first simulated submission (in
    trace time, the converters' shifts undone) overlaps; one ending before does not."""
    from schedlab.predictors.training import history_overlap

    def converted(specs, shift_s, ids="trace job numbers", completed_before=None):
        workload = make_workload(specs)
        extra = {"conversion": {"source": "/data/T.swf.gz", "submit_shift_s": shift_s, "ids": ids,
                                "options": {"completed_before": completed_before}}}
        return type(workload)(name=workload.name, jobs=workload.jobs, profiles=workload.profiles, extra=extra)

    window = converted([("50", 0, 1, 10, 20), ("51", 5, 1, 10, 20)], 1000.0)  # trace times 1000, 1005
    jobs = [("1", 0, 1, 400, 500), ("2", 100, 1, 899, 900)]  # end at 400 and 999 at the earliest
    assert history_overlap(converted(jobs, 0.0, completed_before=1000.0), window) is None
    assert "completed before trace time 1001 s, after the first simulated submission (1000 s)" in \
        history_overlap(converted(jobs, 0.0, completed_before=1001.0), window)
    # without completed_before the waits are unknown: job 2 may have waited and ended after 1000
    assert "converted without completed_before" in history_overlap(converted(jobs, 0.0), window)
    late = converted([("1", 0, 1, 400, 500), ("2", 100, 1, 901, 1000)], 0.0)  # ends at 1001 or later
    assert "job 2 ends at trace time 1001 s or later, after the first simulated submission (1000 s)" in \
        history_overlap(late, window)
    same = converted([("50", 0, 1, 10, 20)], 1000.0)
    assert "1 of its jobs are simulated jobs too" in history_overlap(same, window)


def test_the_aging_guard_ends_the_starvation_of_a_long_job():
    """1 core. B (50 s) runs; L (walltime 1000) waits behind a stream of 10-s jobs arriving every
    10 s until 1,992 s. Shortest-predicted-first (walltimes as predictions) starves L until the
    stream ends; with aging_s = 300, L goes first at the first decision after it waited 300 s
    (302 s, a submission) and starts when the running job ends, at 310 s."""
    from schedlab.errors import InputError

    specs = [("B", 0, 1, 50, 50), ("L", 1, 1, 100, 1000)] + [(f"S{k}", 2 + 10 * k, 1, 10, 10) for k in range(200)]
    starts = {}
    for aging in ("0", "300"):
        scheduler = create_scheduler("diws", {"learner": "walltime", "aging_s": aging})
        engine = Engine(Platform.homogeneous(1), make_workload(specs), scheduler)
        engine.run()
        check_invariants(engine, 1)
        starts[aging] = engine.records["w0!L"].start_s
    assert starts["0"] > 1990 and starts["300"] == 310.0
    assert create_scheduler("diws", {"learner": "walltime", "aging_s": "300"}).options()["aging_s"] == 300.0
    with pytest.raises(InputError):
        create_scheduler("diws", {"learner": "walltime", "aging_s": "-1"})


def test_bad_model_files_leave_an_earlier_run_byte_identical(tmp_path, capsys):
    """A missing or wrong-kind model= fails with one line (exit 2) before any output is touched: an
    earlier run's files keep their checksums."""
    import hashlib

    history_and_window(tmp_path)
    common = ["simulate", "-p", str(tmp_path / "p.xml"), "-w", str(tmp_path / "window.json"),
              "-o", str(tmp_path / "keep"), "-q"]
    assert main([*common, "-s", "easy"]) == 0
    sums = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "keep").iterdir()}
    (tmp_path / "not-a-model.skops").write_text("{}")
    history = tmp_path / "history.json"
    (tmp_path / "cut.json").write_text(history.read_text()[: len(history.read_text()) // 2])
    dt = tmp_path / "dt.skops"
    assert main(["predictor", "train", "-w", str(history), "--model", "dt", "-o", str(dt)]) == 0
    capsys.readouterr()
    cases = [  # (scheduler, options, what the line must say): files, wrong kinds, options that would be ignored
        ("diws", [f"model={tmp_path / 'missing.skops'}"], "-O model="),
        ("diws", [f"model={tmp_path / 'not-a-model.skops'}"], "-O model="),
        ("diws", [f"history={tmp_path / 'missing.json'}"], "-O history="),
        ("diws", [f"history={tmp_path / 'cut.json'}"], "-O history="),
        ("diws", [f"model={dt}", "learner=rf"], "option learner=rf has no effect with model="),
        ("easy-pp", ["predictor=adaboost", f"model={dt}"], "holds a dt model"),
        ("easy-pp", ["refit_s=100"], "option refit_s=100.0 has no effect with predictor=user-last2"),
        ("easy-pp", ["predictor=adaboost", f"model={dt}", "seed=3"], "acts only with predictor=adaboost fitted online"),
        ("online-sjf", ["runtime=exact", f"oracle={tmp_path / 'missing.json'}"], "-O oracle="),
        ("online-sjf", ["runtime=requested", f"oracle={history}"], "has no effect with runtime=requested"),
        ("hybrid", [f"predictor=model:{tmp_path / 'missing.skops'}"], "-O predictor=model:"),
        ("fcfs-bf1", ["predictor=user-last", "degree=3"], "acts only with runtime=predicted and predictor=online-nag"),
    ]
    for name, options, fragment in cases:
        argv = [*common, "-s", name, *[x for option in options for x in ("-O", option)]]
        assert main(argv) == 2, options
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "schedlab: error" in err and fragment in err, err
        assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "keep").iterdir()} == sums
    fresh = [*common[:-2], str(tmp_path / "fresh"), "-q"]
    assert main([*fresh, "-s", "diws", "-O", f"model={tmp_path / 'missing.skops'}"]) == 2
    assert not (tmp_path / "fresh").exists()  # a new results directory is not left behind either
