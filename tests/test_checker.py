"""`schedlab scheduler check` catches what researchers really get wrong (issue 40): for each class of
fault, schedulers of tests/data/user_schedulers/faulty.py caught by default with the right cause;
correct but unusual ones (correct.py) pass; the pieces (perturbations, the sandbox's copies,
budgets) tested on their own."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from schedlab.checker import Budgets, build_workload, run_once
from schedlab.checker.perturb import Changes, _renamed, apply_changes, arrival_changes, job_key, runtime_changes
from schedlab.checker.sandbox import Sandbox, given_files
from schedlab.outputs import JOBS_COLUMNS
from schedlab.workloads.synthetic import generate

DATA = Path(__file__).resolve().parent / "data" / "user_schedulers"
FAULTY, CORRECT = DATA / "faulty.py", DATA / "correct.py"


def check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command line; smaller speed runs than the default unless the test asks (CI's time)."""
    speed = [] if "--speed-jobs" in args else ["--speed-jobs", "300,600"]
    return subprocess.run([sys.executable, "-m", "schedlab", "scheduler", "check", *args, *speed, "-q"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})},
                          cwd=Path(__file__).parent)


@pytest.fixture(scope="module")
def own_workload(tmp_path_factory) -> Path:
    """The user's own workload (what `-w` gives anyway): 300 jobs with users, on 16 resources."""
    path = tmp_path_factory.mktemp("own") / "mine.json"
    path.write_text(json.dumps(generate(nb_jobs=300, nb_resources=16, seed=7, load=1.1, max_runtime_s=7200.0)
                               .to_json()))
    return path


def failures(done: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    """(check, cause) of each FAIL line."""
    lines = done.stdout.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("FAIL  "):
            cause = lines[i + 1].strip().removeprefix("cause: ") if i + 1 < len(lines) else ""
            found.append((line[6:].split(":")[0], cause))
    return found


# ---------------------------------------------------------------------------------------------- the pieces


def test_profile_names_keep_the_users_form_with_the_new_delay():
    assert _renamed("delay_3600", 3600.0, 5116.2) == ("delay_5117", 5117.0)
    assert _renamed("job-39.999s", 39.999, 12.34567) == ("job-12.346s", 12.346)
    assert _renamed("delay_0.001", 0.001, 0.00249) == ("delay_0.003", 0.003)  # rounded up, never to 0
    assert _renamed("p100.5", 100.5, 100.449) is None  # rounded up it is the old delay: the name cannot say it
    assert _renamed("p17", 3600.0, 10.0) is None  # a name that does not say the delay


def test_a_run_time_change_renames_only_the_changed_jobs_profile_and_matches_option_files():
    doc = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "walltime": 9000, "profile": "delay_3600"},
                                 {"id": 2, "subtime": 5, "res": 2, "walltime": 9000, "profile": "delay_3600"}],
           "profiles": {"delay_3600": {"type": "delay", "delay": 3600}}}
    change = runtime_changes(doc, {"1": (0.0, 3600.0), "2": (5.0, 3605.0)}, cut_s=3602.0, seed=0)
    assert list(change.runtimes_s) == [("2", 5.0, 2)]  # job 1 ended before the cut
    out = apply_changes(doc, change, simulated=True)
    new_name = out["jobs"][1]["profile"]
    assert out["jobs"][0]["profile"] == "delay_3600" and new_name == f"delay_{out['profiles'][new_name]['delay']}"
    assert out["profiles"][new_name]["delay"] == change.runtimes_s[("2", 5.0, 2)] > 3602.0 - 5.0
    # an option file holding the same jobs changes alike; a history of other jobs stays as it is
    assert apply_changes(doc, change, simulated=False) == out
    history = {**doc, "jobs": [{**job, "subtime": job["subtime"] - 10**6} for job in doc["jobs"]]}
    assert apply_changes(history, change, simulated=False) == history
    assert doc["jobs"][1]["profile"] == "delay_3600"  # the original is untouched


def test_arrival_changes_touch_only_jobs_submitted_after_the_cut():
    workload = generate(nb_jobs=200, nb_resources=16, seed=2)
    doc = workload.to_json()
    cut_s = sorted(float(job["subtime"]) for job in doc["jobs"])[100]
    change = arrival_changes(doc, cut_s, seed=1, nb_res=16)
    assert change.removed and change.shifted_s and change.added
    assert all(key[1] > cut_s for key in [*change.removed, *change.shifted_s])
    assert all(new > cut_s for new in change.shifted_s.values())
    assert all(added["job"]["subtime"] > cut_s for added in change.added)
    out = apply_changes(doc, change, simulated=True)
    before = [job for job in doc["jobs"] if float(job["subtime"]) <= cut_s]
    assert [job for job in out["jobs"] if float(job["subtime"]) <= cut_s and job_key(job) in
            {job_key(b) for b in before}] == before
    assert len(out["jobs"]) == len(doc["jobs"]) - len(change.removed) + len(change.added)
    assert Changes("arrivals", cut_s).empty


def test_the_child_sees_copies_under_neutral_names_in_argv_environment_and_its_parents(tmp_path):
    """A spy rejects every job, its reason the paths it could find: argv, /proc/self and parent's
    cmdline, the environment, the option's file. None is the original; the copy holds the simulated
    workload."""
    secret_dir = tmp_path / "secret-runtimes"
    secret_dir.mkdir()
    original = secret_dir / "truth.json"
    original.write_text(json.dumps(build_workload([("a", 0, 1, 30, 60)], nb_res=2).to_json()))
    spy = tmp_path / "spy.py"
    spy.write_text('''import json, os, sys
from schedlab import Reject, Scheduler
class Spy(Scheduler):
    def __init__(self, *, history: str = ""):
        super().__init__()
        self.history, self.waiting = history, []
    def on_job_submitted(self, job, now):
        self.waiting.append(job.id)
    def on_job_completed(self, job_id, state, now):
        pass
    def decide(self, now):
        seen = {"argv": sys.argv, "env": os.environ.get("MY_W", ""), "history": self.history,
                "self": open("/proc/self/cmdline", "rb").read().decode().split(chr(0)),
                "parent": open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode().split(chr(0)),
                "cwd": os.getcwd(), "read": json.load(open(self.history))["jobs"][0]["id"]}
        done, self.waiting = self.waiting, []
        return [Reject(job_id, json.dumps(seen)) for job_id in done]
''')
    argv = ["schedlab", "scheduler", "check", f"{spy}:Spy", "-w", str(original), "-O", f"history={original}"]
    sandbox = Sandbox(f"{spy}:Spy", {"history": str(original)}, workload_path=str(original), argv=argv,
                      env={**os.environ, "MY_W": str(original)})
    (given,) = given_files(str(original), {"history": str(original)})  # one file, the workload: one copy
    assert given.copy_name == "workload.json" and given.is_workload
    doc = build_workload([("z", 0, 1, 5, 10)], nb_res=2).to_json()
    (result,) = sandbox.run([{"label": "l", "nb_res": 2, "doc": doc, "files": {}}], hash_seed=1, budgets=Budgets())
    row = dict(zip(JOBS_COLUMNS, next(csv.reader([result.rows[0]])), strict=True))
    seen = json.loads(row["metadata"])
    text = json.dumps(seen)
    assert "secret-runtimes" not in text and "truth.json" not in text
    copy = seen["history"]
    assert copy.endswith("workload.json") and seen["env"] == copy and copy in seen["argv"]
    assert copy in seen["self"] and copy in seen["parent"] and seen["cwd"] == str(Path(copy).parent)
    assert seen["read"] == "z"  # the copy holds the workload being simulated, not the original's job "a"


def test_copies_lead_nowhere_the_trace_and_training_paths_cut_to_their_names():
    from schedlab.checker.sandbox import _neutral_card, neutral_doc

    doc = {"jobs": [], "conversion": {"source": "/secret/runtimes/kth.swf", "submit_shift_s": 5.0}}
    assert neutral_doc(doc)["conversion"] == {"source": "kth.swf", "submit_shift_s": 5.0}
    card = {"training_data": {"path": "/secret/train.json", "sha256": "ab", "conversion": {"source": "/s/kth.swf"}}}
    assert json.loads(_neutral_card(json.dumps(card)))["training_data"] == {
        "path": "train.json", "sha256": "ab", "conversion": {"source": "kth.swf"}}


def test_a_models_card_is_copied_beside_the_models_copy(tmp_path):
    model = tmp_path / "trained" / "m.skops"
    model.parent.mkdir()
    model.write_bytes(b"model")
    (tmp_path / "trained" / "m.skops.card.json").write_text("{}")
    names = [f.copy_name for f in given_files(None, {"predictor": f"model:{model}"})]
    assert names == ["predictor.skops", "predictor.skops.card.json"]


def test_every_spelling_of_a_file_is_rewritten_whole_and_once(tmp_path, monkeypatch):
    from schedlab.checker.sandbox import rewritten

    monkeypatch.chdir(tmp_path)
    (tmp_path / "h.json").write_text("{}")
    (tmp_path / "a.json").write_text("{}")
    files = given_files("a.json", {"history": "./h.json", "data": "h.json"})
    assert [(f.copy_name, f.spellings) for f in files] == [("workload.json", ("a.json",)),
                                                           ("history.json", ("./h.json", "h.json"))]
    paths = {spelled: f"/copies/{f.copy_name}" for f in files for spelled in f.spellings}
    assert rewritten("-O history=./h.json -O data=h.json -w a.json -O x=data.json", paths) == (
        "-O history=/copies/history.json -O data=/copies/history.json -w /copies/workload.json -O x=data.json")


def test_a_model_without_its_card_is_copied_alone(tmp_path):
    model = tmp_path / "m.skops"
    model.write_bytes(b"model")
    assert [f.copy_name for f in given_files(None, {"predictor": f"model:{model}"})] == ["predictor.skops"]


def test_a_perturbed_run_a_budget_stopped_is_not_judged_look_ahead():
    """A correct scheduler whose perturbed run was stopped (a slow machine) or died before deciding
    gets no look-ahead finding: the run is counted as not judged."""
    from schedlab.checker.check import CheckReport, RunResult, _judge

    log = [[0.0, ["Execute(a)"]], [10.0, ["Execute(b)"]]]
    base = {"w": RunResult("w", log=log, rows=["r"])}
    change = Changes("run times", 20.0, runtimes_s={("b", 0.0, 1): 5.0})
    stopped = RunResult("w", failure="no progress: the run did not end within 90 s", kind="progress")
    failed_late = RunResult("w", failure="rule broken: x", kind="rules", log=log[:1])
    outcomes = {"hash": base, "look-ahead 0": {"w": stopped}, "look-ahead 1": {"w": failed_late}}
    variants = {"hash": (None, 2), "look-ahead 0": ({"w": change}, 1),
                "look-ahead 1": ({"w": Changes("arrivals", 20.0, removed={("c", 30.0, 1)})}, 1)}
    report = CheckReport()
    _judge(report, base, outcomes, variants, {}, ["w"], runner=SimpleNamespace(sandbox=object()), runs_of=None)
    assert [f.check for f in report.findings] == ["rules"]  # the failure of the perturbed run, not look-ahead
    assert "1 not judged, first w: no progress" in report.lines[-1]


def test_a_scheduler_that_never_decides_a_job_is_ended_as_no_progress():
    spec = f"{FAULTY}:PollsForever"
    from schedlab.schedulers.base import create_scheduler

    workload = build_workload([("wide", 0, 4, 10, 20), ("small", 1, 1, 10, 20)], nb_res=4)
    result = run_once(lambda: create_scheduler(spec), "w", workload, 4, Budgets(idle_decisions=500))
    assert result.kind == "progress"
    assert result.failure.startswith("no progress: 1 jobs never decided (decide was called 500 times in a row")


def test_check_inputs_refusing_the_users_workload_is_bad_input_as_under_simulate(own_workload):
    done = check("diws", "-w", str(own_workload), "-O", f"history={own_workload}")
    assert done.returncode == 2 and "overlaps the simulated workload" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


def test_a_default_check_of_easy_passes_every_workload():
    done = check("easy", "--speed-jobs", "1000,2000,4000")
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["ok    rules", "ok    slow master", "ok    determinism",
                                                      "ok    look-ahead", "ok    speed"]
    for label in ("sizes-100 on 100", "wide-1000 on 1000", "epoch", "no-walltime", "long-queue"):
        assert label in lines[0]
    assert "under --timing batsim" in lines[1] and "no wake-up" in lines[1]  # EASY asks for none
    assert "grows as jobs^" in lines[4]


def test_a_profile_name_reader_is_caught_by_default_in_python():
    """The Python API runs the same checks (a small speed size keeps this quick)."""
    from schedlab.checker import check_scheduler
    from schedlab.schedulers.base import create_scheduler

    spec = f"{FAULTY}:ProfileNameParser"
    report = check_scheduler(lambda: create_scheduler(spec), spec, speed_sizes=(300,))
    assert [(f.check, f.cause.split(" (")[0]) for f in report.findings] == [("look-ahead", "reads run times")]
    assert "when only the run times of jobs ending after" in report.findings[0].message


# ---------------------------------------------------------------------------------------------- by class


@pytest.mark.slow
@pytest.mark.parametrize(("name", "extra", "causes"), [
    ("ArgvReader", [], {("look-ahead", "reads run times")}),
    ("ProcCmdlineReader", [], {("look-ahead", "reads run times")}),
    ("EnvReader", [], {("look-ahead", "reads run times")}),
    ("UserModelOnWholeWorkload", ["-O", "history=@"], {("look-ahead", "reads run times"),
                                                     ("look-ahead", "sees future arrivals")}),
    ("ProfileNameParser", [], {("look-ahead", "reads run times")}),
])
def test_information_from_outside_the_engine_is_caught(own_workload, tmp_path, name, extra, causes):
    """`@`: another file holding the whole workload (its copy is perturbed as the simulated one)."""
    whole = tmp_path / "all-jobs.json"
    whole.write_bytes(own_workload.read_bytes())
    extra = [arg.replace("@", str(whole)) for arg in extra]
    done = check(f"{FAULTY}:{name}", "-w", str(own_workload), *extra, env={"MY_WORKLOAD": str(own_workload)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert {(c, cause.split(" (")[0]) for c, cause in failures(done)} == causes, done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["GcFutureReserver", "FrameFutureReader"])
def test_future_arrivals_are_caught(own_workload, name):
    done = check(f"{FAULTY}:{name}", "-w", str(own_workload))
    assert done.returncode == 1
    found = failures(done)
    assert found[0][0] == "look-ahead" and found[0][1].startswith("sees future arrivals"), done.stdout
    assert not any(cause.startswith("reads run times") for _, cause in found)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "where", "cause"), [
    ("ForgetsAfter400", "long-queue", "breaks Batsim's rules"),
    ("OffByOneOnWideJobs", "machine-wide", "breaks Batsim's rules"),
    ("AssumesWalltime", "sub-second", "raises"),
])
def test_conditions_small_workloads_never_reach_are_reached(name, where, cause):
    done = check(f"{FAULTY}:{name}")
    assert done.returncode == 1
    first = next(line for line in done.stdout.splitlines() if line.startswith("FAIL  rules"))
    assert first.startswith(f"FAIL  rules: {where} (") and failures(done)[0][1] == cause, done.stdout
    if name == "ForgetsAfter400":
        assert "trace (" not in done.stdout.split("FAIL")[1]  # 300 jobs never reach the 400th start


@pytest.mark.slow
@pytest.mark.parametrize("name", ["PollsForever", "StallsAfterAKill"])
def test_no_progress_is_caught_and_named(name):
    done = check(f"{FAULTY}:{name}")
    assert done.returncode == 1
    assert failures(done)[0] == ("progress", "no progress"), done.stdout
    assert "jobs never decided" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("name", "warning"), [("KillsLongJobs", "killed before their walltime"),
                                               ("RejectsWideJobs", "rejected though they fit the machine")])
def test_legal_but_suspicious_draws_a_warning_with_counts(name, warning):
    done = check(f"{FAULTY}:{name}")
    assert done.returncode == 0, done.stdout
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("warn  ")]
    count = int(line.split()[1])
    per_workload = [int(part.split()[0]) for part in line.split("?): ")[1].split("; first")[0].split(", ")]
    assert warning in line and count == sum(per_workload) > 0


@pytest.mark.slow
def test_a_slow_scheduler_has_its_exponent_reported_and_fails_with_max_times_easy():
    done = check(f"{FAULTY}:QuadraticGreedy", "--speed-jobs", "1000,2000,4000")
    assert done.returncode == 0
    speed = next(line for line in done.stdout.splitlines() if line.startswith("ok    speed"))
    exponent = float(speed.split("grows as jobs^")[1].split()[0])
    assert exponent > 1.4, speed
    done = check(f"{FAULTY}:QuadraticGreedy", "--max-times-easy", "3", "--speed-jobs", "1000,2000,4000")
    assert done.returncode == 1 and failures(done) == [("speed", "too slow")], done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ConservativeBackfilling", "PeriodicBatchLearner", "PrintsProgress"])
def test_correct_but_unusual_schedulers_pass(own_workload, name):
    done = check(f"{CORRECT}:{name}", "-w", str(own_workload))
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line[:12] for line in done.stdout.splitlines() if line[:4] in ("ok  ", "FAIL")] == [
        "ok    rules:", "ok    slow m", "ok    determ", "ok    look-a", "ok    speed:"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["UnseededTieBreak", "WallClockBudget"])
def test_runs_that_change_by_themselves_are_named_so_not_look_ahead(name):
    done = check(f"{FAULTY}:{name}")
    assert done.returncode == 1
    assert failures(done) == [("determinism", "changes from run to run")], done.stdout


def test_a_wakeup_closer_than_a_message_time_is_flagged_on_a_slow_master():
    from schedlab.checker import run_once
    from schedlab.checker.check import SLOW_MASTER_S
    from schedlab.checker.workloads import trace_like_workload
    from schedlab.schedulers.base import create_scheduler

    workload = trace_like_workload(16, nb_jobs=40)
    factory = lambda: create_scheduler(f"{FAULTY}:WakesTooSoon")  # noqa: E731
    assert run_once(factory, "trace", workload, 16).failure is None  # the ideal engine has no message time
    slow = run_once(factory, "trace", workload, 16, slow_master_s=SLOW_MASTER_S)
    assert slow.kind == "rules" and "0.01 s ahead" in slow.failure and "awaken in the past" in slow.failure
    easy_pp = run_once(lambda: create_scheduler("easy-pp", {"correction": "power"}), "trace", workload, 16,
                       slow_master_s=SLOW_MASTER_S)
    assert easy_pp.failure is None and any("CallMeLater" in text for _, texts in easy_pp.log for text in texts)


@pytest.mark.slow
def test_a_slow_master_violation_replays_under_batsim_timing(tmp_path):
    done = check(f"{FAULTY}:WakesTooSoon", "--out", str(tmp_path / "found"))
    assert done.returncode == 1, done.stdout
    assert failures(done) == [("rules", "breaks Batsim's rules on a slow platform")], done.stdout
    assert "FAIL  rules: slow-master (" in done.stdout
    text = (tmp_path / "found" / "violation-slow-master.txt").read_text()
    failure, replay = text.split("\n\nreplay: ")
    assert "awaken in the past" in failure
    assert "--timing batsim" in replay and len(json.loads((tmp_path / "found" / "violation-slow-master.json")
                                                          .read_text())["jobs"]) == 1
    again = subprocess.run(replay.strip().replace("schedlab", f"{sys.executable} -m schedlab", 1), shell=True,
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 1 and "awaken in the past" in again.stderr, again.stderr


@pytest.mark.slow
def test_a_violation_replays_from_any_directory_with_the_shrunk_workloads_own_failure(tmp_path):
    done = check(f"{FAULTY}:OffByOneOnWideJobs", "--out", str(tmp_path / "found"))
    assert done.returncode == 1
    text = (tmp_path / "found" / "violation-machine-wide.txt").read_text()
    failure, replay = text.split("\n\nreplay: ")
    body = json.loads((tmp_path / "found" / "violation-machine-wide.json").read_text())
    assert len(body["jobs"]) == 1 and failure in body["description"]
    assert str(FAULTY) in replay and str(tmp_path / "found") in replay
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = subprocess.run(replay.strip().replace("schedlab", f"{sys.executable} -m schedlab", 1), shell=True,
                           capture_output=True, text=True, cwd=elsewhere)
    assert again.returncode == 1 and failure.split(" at t=")[1] in again.stderr  # job ids carry the file's name
