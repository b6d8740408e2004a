"""The engine refuses what Batsim aborts on, handles kills and calls, and writes Batsim's formats."""

from __future__ import annotations

import csv
import json

import pytest
from procset import ProcSet

from schedlab.cli import main
from schedlab.engine import Engine
from schedlab.errors import SimulationError
from schedlab.model import CallMeLater, Execute, JobState, Kill, Platform, Reject
from schedlab.outputs import JOBS_COLUMNS, SCHEDULE_COLUMNS
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import Scheduler
from tests.helpers.data import BATSIM_DATA, make_workload
from tests.helpers.workloads import RET_WORKLOAD


class Scripted(Scheduler):
    """Returns scripted decisions: {time: [decisions]}; records what it was told."""

    def __init__(self, script):
        super().__init__()
        self.script = script
        self.seen = []

    def on_job_submitted(self, job, now):
        self.seen.append(("submitted", job.id, now))

    def on_job_completed(self, job_id, state, now):
        self.seen.append(("completed", job_id, state, now))

    def on_jobs_killed(self, job_ids, now):
        self.seen.append(("killed", tuple(job_ids), now))

    def on_requested_call(self, now):
        self.seen.append(("call", now))

    def decide(self, now):
        if not self.seen:  # the SIMULATION_BEGINS round: nothing submitted yet
            return []
        return list(self.script.pop(now, []))


SPECS = [("a", 0, 2, 10, 20), ("b", 0, 2, 10, 20)]


def engine_with(script, specs=SPECS, nb_res=4):
    return Engine(Platform.homogeneous(nb_res), make_workload(specs), Scripted(script))


@pytest.mark.parametrize(("decisions", "message"), [
    ([Execute("w0!a", ProcSet((0, 2)))], "has 3 resources, the job requests 2"),
    ([Execute("w0!a", ProcSet((0, 1))), Execute("w0!b", ProcSet((1, 2)))], "already in use"),
    ([Execute("w0!a", ProcSet((3, 4)))], "outside resources 0-3"),
    ([Execute("w0!a", ProcSet(1, 4))], "outside resources 0-3"),  # intervals apart: the last one is out
    ([Execute("w0!a", ProcSet(0, 2, 3))], "has 3 resources, the job requests 2"),
    ([Execute("w0!a", ProcSet())], "has 0 resources, the job requests 2"),
    ([Execute("w0!a", ProcSet(0, 2)), Execute("w0!b", ProcSet(1, 2))], "resources '2' are already in use"),
    ([Execute("w0!zz", ProcSet((0, 1)))], "unknown job 'w0!zz'"),
    ([Execute("w0!a", ProcSet((0, 1))), Reject("w0!a")], "each job is decided exactly once"),
    ([CallMeLater(0.0)], "awaken in the past"),
])
def test_illegal_decisions_abort_like_batsim(decisions, message):
    engine = engine_with({0.0: decisions})
    with pytest.raises(SimulationError, match=message):
        engine.run()


def test_undecided_jobs_are_an_error():
    engine = engine_with({0.0: [Execute("w0!a", ProcSet((0, 1)))]})
    with pytest.raises(SimulationError, match="left 1 job"):
        engine.run()


def test_kill_call_me_later_and_same_instant_delivery():
    script = {
        0.0: [Execute("w0!a", ProcSet((0, 1))), Execute("w0!b", ProcSet((2, 3))), CallMeLater(4.0)],
        4.0: [Kill(("w0!a",))],
    }
    engine = engine_with(script)
    engine.run()
    seen = engine.scheduler.seen
    assert seen[:2] == [("submitted", "w0!a", 0.0), ("submitted", "w0!b", 0.0)]  # one instant, one batch
    assert ("call", 4.0) in seen
    assert seen.index(("completed", "w0!a", JobState.COMPLETED_KILLED, 4.0)) < seen.index(("killed", ("w0!a",), 4.0))
    assert engine.records["w0!a"].state is JobState.COMPLETED_KILLED and engine.records["w0!a"].finish_s == 4.0
    assert engine.records["w0!b"].finish_s == 10.0
    # the killed job's original end event (t=10) must not be reported again
    assert [s for s in seen if s[0] == "completed" and s[1] == "w0!a"] == [
        ("completed", "w0!a", JobState.COMPLETED_KILLED, 4.0)]


def test_unsupported_profiles_are_refused_with_a_clear_message(tmp_path, capsys):
    workload = BATSIM_DATA / "test_various_profile_types.json"
    platform = tmp_path / "p.xml"
    platform.write_text(cluster_xml(4))
    code = main(["simulate", "-p", str(platform), "-w", str(workload), "-s", "easy", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "parallel_homogeneous" in err and "real Batsim" in err and err.count("\n") == 1


def _write_inputs(tmp_path, specs=SPECS, nb_res=4):
    platform = tmp_path / "p.xml"
    platform.write_text(cluster_xml(nb_res))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload(specs, nb_res=nb_res).to_json()))
    return platform, workload


def test_cli_simulate_writes_batsim_columns_and_summary(tmp_path, capsys):
    platform, workload = _write_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["simulate", "-p", str(platform), "-w", str(workload), "-s", "easy", "--out", str(out)]) == 0
    assert "mean_waiting_time_s" in capsys.readouterr().out
    with (out / "jobs.csv").open() as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == JOBS_COLUMNS and len(rows) == 3
    schedule = list(csv.reader((out / "schedule.csv").open()))
    assert tuple(schedule[0]) == SCHEDULE_COLUMNS
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["metrics"]["nb_jobs"] == 2
    assert summary["metrics"]["makespan_s"] == 10.0 and summary["metrics"]["utilisation"] == 1.0


def test_output_headers_equal_real_batsim_outputs(tmp_path):
    real = BATSIM_DATA / "cluster512_paper32_easy_bf_jobs.csv"
    assert real.read_text().splitlines()[0] == ",".join(JOBS_COLUMNS)
    real_schedule = real.with_name("cluster512_paper32_easy_bf_schedule.csv")
    assert real_schedule.read_text().splitlines()[0] == ",".join(SCHEDULE_COLUMNS)


@pytest.mark.parametrize(("argv", "fragment"), [
    (["simulate", "-p", "nope.xml", "-w", "w.json", "-s", "easy"], "nope.xml: no such file"),
    (["simulate", "-p", "{p}", "-w", "{w}", "-s", "bogus"], "unknown scheduler 'bogus'"),
    (["simulate", "-p", "{p}", "-w", "{w}", "-s", "easy", "-O", "speed=3"], "unknown option 'speed'"),
    (["simulate", "-p", "{p}", "-w", "{w}", "-s", "easy", "-O", "queue_order=zzz"], "unknown queue policy"),
    (["simulate", "-p", "{p}", "-w", "{w}", "-s", "easy", "-O", "novalue"], "expected key=value"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, fragment):
    platform, workload = _write_inputs(tmp_path)
    argv = [a.format(p=platform, w=workload) for a in argv] + ["--out", str(tmp_path / "o")]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and err.count("\n") == 1 and "Traceback" not in err


def test_failure_mid_run_keeps_partial_results_marked_incomplete(tmp_path, capsys, monkeypatch):
    """A scheduler that breaks a rule at t=5: what finished before is written, summary says so."""
    specs = [("a", 0, 1, 2, 5), ("b", 5, 1, 2, 5)]
    platform, workload = _write_inputs(tmp_path, specs)
    import schedlab.schedulers.base as base

    class Broken(Scheduler):
        def __init__(self):
            super().__init__()
            self.queue = []

        def on_job_submitted(self, job, now):
            self.queue.append(job)

        def on_job_completed(self, job_id, state, now):
            pass

        def decide(self, now):
            decisions = [Execute(j.id, ProcSet(0)) for j in self.queue]
            self.queue.clear()
            return decisions + ([CallMeLater(now)] if now == 5.0 else [])

    monkeypatch.setitem(base.SCHEDULERS, "broken", Broken)
    out = tmp_path / "o"
    code = main(["simulate", "-p", str(platform), "-w", str(workload), "-s", "broken", "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "awaken in the past" in err and "incomplete" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and "awaken" in summary["error"]
    rows = (out / "jobs.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("a,")


def test_fast_procset_construction_equals_procset_union():
    from schedlab.resources import ResourceMask, procset_from_sorted

    intervals = [(0, 3), (5, 5), (7, 12)]
    assert procset_from_sorted(intervals) == ProcSet(*intervals)
    assert str(procset_from_sorted(intervals)) == "0-3 5 7-12"
    mask = ResourceMask(16)
    mask.take(ProcSet((2, 4), 9), 4)
    got = mask.take_lowest(6)
    assert got == ProcSet((0, 1), (5, 8)) and mask.nb_free == 6
    assert mask.busy_part(ProcSet((8, 10))) == ProcSet((8, 9))
    mask.release(got, 6)
    assert mask.free_set() == ProcSet((0, 1), (5, 8), (10, 15))


@pytest.mark.parametrize("timing", ["ideal", "batsim"])
def test_a_profiles_ret_fails_a_job_that_ends_in_time(tmp_path, timing):
    """Batsim's `ret` (profiles.cpp): a delay job ending before its walltime is COMPLETED_FAILED
    when ret > 0, success 0 in jobs.csv; one killed at its walltime stays WALLTIME_REACHED."""
    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(cluster_xml(2))
    workload.write_text(json.dumps(RET_WORKLOAD))
    out = tmp_path / "o"
    assert main(["simulate", "-q", "-p", str(platform), "-w", str(workload), "-s", "fcfs", "--timing", timing,
                 "--out", str(out)]) == 0
    with (out / "jobs.csv").open() as handle:
        rows = {row["job_id"]: row for row in csv.DictReader(handle)}
    assert {j: (r["final_state"], r["success"]) for j, r in rows.items()} == {
        "ok": ("COMPLETED_SUCCESSFULLY", "1"), "fails": ("COMPLETED_FAILED", "0"),
        "late": ("COMPLETED_WALLTIME_REACHED", "0")}


@pytest.mark.parametrize("ret", [-1, 1.5, "2"])
def test_a_ret_batsim_would_misread_is_refused(tmp_path, capsys, ret):
    platform, workload = tmp_path / "p.xml", tmp_path / "w.json"
    platform.write_text(cluster_xml(2))
    bad = json.loads(json.dumps(RET_WORKLOAD))
    bad["profiles"]["p_fails"]["ret"] = ret
    workload.write_text(json.dumps(bad))
    assert main(["simulate", "-p", str(platform), "-w", str(workload), "-s", "fcfs", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "ret" in err and "w.json" in err and err.count("\n") == 1


# ------------------------------------------------------------ one rule in both engines (issue 40)


def both_engines(tmp_path, specs, scheduler, nb_res=4):
    """The ideal engine's and the Batsim-timed engine's runs of fresh `scheduler()` instances."""
    from schedlab.engine.batsim_network import message_routes
    from schedlab.engine.batsim_timed import BatsimTimedEngine
    from schedlab.platform import load_platform

    path = tmp_path / f"c{nb_res}.xml"
    path.write_text(cluster_xml(nb_res))
    ideal = Engine(Platform.homogeneous(nb_res), make_workload(specs), scheduler())
    timed = BatsimTimedEngine(load_platform(path), make_workload(specs), scheduler(), routes=message_routes(path))
    return {"ideal": ideal, "batsim": timed}


class KillAfterItsEnd(Scheduler):
    """FCFS one job at a time on resource 0; kills `a` once its end has been reported."""

    def __init__(self, victim_state="ended"):
        super().__init__()
        self.waiting, self.ended, self.victim_state = [], [], victim_state

    def on_job_submitted(self, job, now):
        self.waiting.append(job.id)

    def on_job_completed(self, job_id, state, now):
        self.ended.append(job_id)

    def decide(self, now):
        decisions = []
        running = len(self.ended) < 2 - len(self.waiting)  # started and not yet ended
        if self.waiting and not running:
            decisions.append(Execute(self.waiting.pop(0), ProcSet(0)))
        if self.victim_state == "waiting" and self.waiting:
            self.victim_state = "done"
            decisions.append(Kill((self.waiting[0],)))
        if "w0!a" in self.ended and self.victim_state == "ended":
            self.victim_state = "done"
            decisions.append(Kill(("w0!a",)))
        return decisions


@pytest.mark.parametrize("engine_kind", ["ideal", "batsim"])
@pytest.mark.parametrize(("victim", "message"), [("ended", "already sent and forgotten"),
                                                  ("waiting", "not being executed nor completed")])
def test_a_kill_batsim_aborts_on_aborts_both_engines(tmp_path, engine_kind, victim, message):
    """KILL_JOB of a job whose end was reported, or of one still waiting: real Batsim 4.2.1
    aborts; both engines say so (the ideal engine used to ignore it)."""
    engines = both_engines(tmp_path, [("a", 0, 1, 10, None), ("b", 0, 1, 10, None)],
                           lambda: KillAfterItsEnd(victim))
    with pytest.raises(SimulationError, match=message):
        engines[engine_kind].run()


class KillTwiceOnCall(Scheduler):
    """Starts every job at once with a call 4 s later, where it kills `a` twice in one reply."""

    def __init__(self):
        super().__init__()
        self.waiting, self.called, self.next_free = [], False, 0

    def on_job_submitted(self, job, now):
        self.waiting.append(job)

    def on_job_completed(self, job_id, state, now):
        pass

    def on_requested_call(self, now):
        self.called = True

    def decide(self, now):
        decisions = []
        for job in self.waiting:
            alloc = ProcSet((self.next_free, self.next_free + job.res - 1))
            decisions += [Execute(job.id, alloc), CallMeLater(now + 4)]
            self.next_free += job.res
        self.waiting = []
        if self.called:
            self.called = False
            decisions.append(Kill(("w0!a", "w0!a")))
            decisions.append(Kill(("w0!a",)))
        return decisions


@pytest.mark.parametrize("engine_kind", ["ideal", "batsim"])
def test_a_repeated_kill_in_one_reply_is_ignored_by_both_engines(tmp_path, engine_kind):
    engine = both_engines(tmp_path, SPECS, KillTwiceOnCall)[engine_kind]
    engine.run()
    assert engine.records["w0!a"].state is JobState.COMPLETED_KILLED
    assert engine.records["w0!b"].state is JobState.COMPLETED_SUCCESSFULLY


class WalltimeRewriter(Scheduler):
    """Starts each job at once on its own resources and rewrites the walltime (and size) of the
    Job object it was handed: the engine must go on with its own."""

    def __init__(self):
        super().__init__()
        self.waiting, self.next_free = [], 0

    def on_job_submitted(self, job, now):
        object.__setattr__(job, "walltime_s", 1.0)
        object.__setattr__(job, "res", 1)
        self.waiting.append(job)

    def on_job_completed(self, job_id, state, now):
        pass

    def decide(self, now):
        decisions = []
        for job in self.waiting:
            decisions.append(Execute(job.id, ProcSet((self.next_free, self.next_free + 1))))
            self.next_free += 2
        self.waiting = []
        return decisions


@pytest.mark.parametrize("engine_kind", ["ideal", "batsim"])
def test_a_scheduler_rewriting_its_job_objects_changes_nothing_the_engine_does(tmp_path, engine_kind):
    engine = both_engines(tmp_path, SPECS, WalltimeRewriter)[engine_kind]
    engine.run()
    for job_id in ("w0!a", "w0!b"):
        record = engine.records[job_id]
        assert record.state is JobState.COMPLETED_SUCCESSFULLY  # ran its 10 s: not killed at the "1 s"
        assert record.finish_s - record.start_s == pytest.approx(10.0, abs=1e-3)
        assert record.job.walltime_s == 20.0 and record.job.res == 2
