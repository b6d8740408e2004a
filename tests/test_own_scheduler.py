"""Bring your own scheduler: the Python API, plugins by entry point, MODULE:CLASS names, and
`schedlab scheduler check` (rules with shrunk reproductions, look-ahead, determinism)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from procset import ProcSet

import schedlab
from schedlab.checker import check_scheduler, edge_case_workloads
from schedlab.errors import InputError
from schedlab.outputs import JOBS_COLUMNS
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.plugins import class_from_spec
from schedlab.workloads.synthetic import generate
from tests.helpers.data import make_workload

DATA = Path(__file__).resolve().parent / "data"
CHEATER = f"{DATA / 'user_schedulers' / 'faulty.py'}:ProfileReader"
FirstFit = class_from_spec(f"{DATA / 'user_schedulers' / 'faulty.py'}:Greedy")  # the tests' minimal scheduler


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


# ---------------------------------------------------------------------------------------------- API


def test_simulate_from_python_takes_names_classes_instances_and_writes_batsim_files(tmp_path):
    workload = generate(nb_jobs=120, nb_resources=16, seed=3)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    by_name = schedlab.simulate(16, tmp_path / "w.json", "easy", options={"backfill_order": "sjbf"})
    by_class = schedlab.simulate(16, workload, schedlab.EasyBackfilling, options={"backfill_order": "sjbf"})
    by_instance = schedlab.simulate(schedlab.Platform.homogeneous(16), workload,
                                    create_scheduler("easy", {"backfill_order": "sjbf"}))
    assert by_name.complete and by_name.error is None
    assert list(by_name.jobs.columns) == list(JOBS_COLUMNS) and len(by_name.jobs) == 120
    assert by_name.metrics == by_class.metrics == by_instance.metrics
    assert by_name.jobs["job_id"].dtype != "int64"  # names stay text
    out = by_name.write(tmp_path / "api")
    done = cli("simulate", "-p", str(_platform_file(tmp_path, 16)), "-w", str(tmp_path / "w.json"), "-s", "easy",
               "-O", "backfill_order=sjbf", "-o", str(tmp_path / "cli"), "-q")
    assert done.returncode == 0, done.stderr
    assert (out / "jobs.csv").read_text() == (tmp_path / "cli" / "jobs.csv").read_text()
    with pytest.raises(InputError, match="instance"):
        schedlab.simulate(16, workload, create_scheduler("easy"), options={"queue_order": "spt"})
    with pytest.raises(InputError, match="unknown scheduler"):
        schedlab.simulate(16, workload, "no-such-scheduler")


def _platform_file(tmp_path: Path, nb_res: int) -> Path:
    from schedlab.platforms.generate import cluster_xml

    path = tmp_path / f"p{nb_res}.xml"
    path.write_text(cluster_xml(nb_res))
    return path


def test_top_level_exports_are_lazy_and_complete():
    done = subprocess.run([sys.executable, "-c", "import sys, schedlab; print('schedlab.engine' in sys.modules, "
                                                 "'pandas' in sys.modules)"], capture_output=True, text=True)
    assert done.stdout.split() == ["False", "False"]  # `import schedlab` stays light
    for name in schedlab.__all__:
        assert getattr(schedlab, name) is not None
    assert schedlab.Execute is __import__("schedlab.model", fromlist=["Execute"]).Execute


def test_a_scheduler_raising_in_python_raises_the_exception_itself():
    class Broken(schedlab.Scheduler):
        def on_job_submitted(self, job, now):
            raise RuntimeError("my bug")

        def decide(self, now):
            return []

    with pytest.raises(RuntimeError, match="my bug"):
        schedlab.simulate(4, make_workload([("a", 0, 1, 10, 20)]), Broken)
    with pytest.raises(NotImplementedError, match="Scheduler must implement decide"):
        schedlab.simulate(4, make_workload([("a", 0, 1, 10, 20)]), schedlab.Scheduler)


def test_experiments_run_from_a_dict_returns_the_results_table(tmp_path, monkeypatch):
    import schedlab.experiments

    monkeypatch.chdir(tmp_path)
    campaign = {"name": "api", "seeds": [1, 2],
                "workloads": [{"name": "g", "synthetic": {"jobs": 150, "resources": 16}}],
                "platforms": [{"name": "c16", "resources": 16}],
                "schedulers": [{"name": "fcfs"}, {"name": CHEATER, "label": "mine"}]}
    results = schedlab.experiments.run(campaign, tmp_path / "out")
    assert sorted(results["scheduler"]) == ["fcfs", "fcfs", "mine", "mine"] and results["complete"].all()
    assert (tmp_path / "out" / "results.parquet").exists()
    again = schedlab.experiments.run(campaign, tmp_path / "out")  # reused: same rows, same times
    assert again["wall_time_s"].tolist() == results["wall_time_s"].tolist()


# ---------------------------------------------------------------------------------------------- names


def test_module_class_names_work_in_the_cli_and_bad_ones_are_one_line(tmp_path):
    workload = generate(nb_jobs=60, nb_resources=8, seed=1)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    platform = _platform_file(tmp_path, 8)
    done = cli("simulate", "-p", str(platform), "-w", str(tmp_path / "w.json"), "-s", CHEATER, "-o",
               str(tmp_path / "o"), "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["scheduler"] == CHEATER
    for spec, said in ((f"{tmp_path}/none.py:X", "no such file"), (f"{DATA}/user_schedulers/faulty.py:Nope", "has no"),
                       ("json:JSONDecoder", "not a subclass of schedlab.Scheduler"),
                       ("no_such_module_xyz:X", "cannot import")):
        done = cli("simulate", "-p", str(platform), "-w", str(tmp_path / "w.json"), "-s", spec, "-o",
                   str(tmp_path / "bad"))
        assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (tmp_path / "bad").exists()


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """The example plugin package (tests/data/plugin-package), installed by pip into a directory
    of its own (the test venv stays as it is; PYTHONPATH adds it to subprocesses)."""
    root = tmp_path_factory.mktemp("plugin")
    source = root / "source"
    shutil.copytree(DATA / "plugin-package", source)
    target = root / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                          timeout=300)
    if done.returncode != 0 and "bdist_wheel" in done.stderr:
        pytest.skip("building the plugin needs wheel and setuptools >= 68 (pip install -e '.[test]')")
    assert done.returncode == 0, done.stderr[-2000:]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")]))}


def test_an_installed_plugin_is_listed_and_simulates(tmp_path, plugin_site):
    env = plugin_site
    listing = cli("schedulers", env=env)
    assert listing.returncode == 0
    assert "largest-first  [plugin: schedlab_example_plugin.sched]" in listing.stdout
    assert "EASY backfilling, the widest waiting job first" in listing.stdout
    warnings = [line for line in listing.stderr.splitlines() if line.startswith("schedlab: warning: plugin")]
    assert len(warnings) == 2  # the broken one and the one taking a shipped name: a line each
    assert any("'broken'" in w and "schedlab-example-plugin 1.0.0" in w and "cannot be loaded" in w for w in warnings)
    assert any("'easy'" in w and "shipped scheduler" in w for w in warnings)
    assert "easy\n    EASY" in listing.stdout  # the shipped easy is still itself

    workload = generate(nb_jobs=200, nb_resources=16, seed=2)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    platform = _platform_file(tmp_path, 16)
    done = cli("simulate", "-p", str(platform), "-w", str(tmp_path / "w.json"), "-s", "largest-first", "-o",
               str(tmp_path / "o"), "-q", env=env)
    assert done.returncode == 0, done.stderr
    broken = cli("simulate", "-p", str(platform), "-w", str(tmp_path / "w.json"), "-s", "broken", "-o",
                 str(tmp_path / "b"), env=env)
    assert broken.returncode == 2 and "schedlab-example-plugin" in broken.stderr
    assert len(broken.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # its listing and simulate: the test above, by default
def test_an_installed_plugin_is_a_scheduler_name_everywhere(tmp_path, plugin_site):
    env = plugin_site
    workload = generate(nb_jobs=200, nb_resources=16, seed=2)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    (tmp_path / "c.toml").write_text(
        'name = "plug"\nseeds = [1]\n[[workloads]]\nname = "w"\nfile = "w.json"\n[[platforms]]\nname = "p"\n'
        'resources = 16\n[[schedulers]]\nname = "largest-first"\n[[schedulers]]\nname = "easy"\n')
    done = cli("experiment", "run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "camp"), "--workers", "2", "-q",
               env=env)
    assert done.returncode == 0, done.stderr
    import pandas as pd

    results = pd.read_parquet(tmp_path / "camp" / "results.parquet")
    assert results.set_index("scheduler")["complete"].to_dict() == {"largest-first": True, "easy": True}
    done = cli("scheduler", "check", "largest-first", "-q", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = cli("pybatsim-entry", "largest-first", "-o", str(tmp_path / "schedlabLargest.py"), env=env)
    assert done.returncode == 0 and "SchedlabLargest = pybatsim_scheduler('largest-first', 'SchedlabLargest')" in (
        tmp_path / "schedlabLargest.py").read_text()


@pytest.mark.batsim
def test_a_plugin_served_to_real_batsim_equals_the_engine(tmp_path, plugin_site):
    from tests.helpers.real_batsim import run_real_batsim

    workload = generate(nb_jobs=150, nb_resources=16, seed=4)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    platform = _platform_file(tmp_path, 16)
    rows = run_real_batsim_with_env(tmp_path, platform, plugin_site, run_real_batsim)
    done = cli("simulate", "-p", str(platform), "-w", str(tmp_path / "w.json"), "-s", "largest-first", "-o",
               str(tmp_path / "engine"), "-q", env=plugin_site)
    assert done.returncode == 0
    import csv

    with (tmp_path / "engine" / "jobs.csv").open() as handle:
        ours = {r["job_id"]: r["allocated_resources"] for r in csv.DictReader(handle)}
    assert {r["job_id"]: r["allocated_resources"] for r in rows} == ours and len(ours) == 150


def run_real_batsim_with_env(tmp_path, platform, env, run_real_batsim):
    """run_real_batsim starts the decision process with this process's environment: give it the plugin's."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]
    try:
        return run_real_batsim(tmp_path / "batsim", platform, tmp_path / "w.json",
                               [sys.executable, "-m", "schedlab", "serve", "largest-first", "--socket", "{socket}"])
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def test_pybatsim_entry_refuses_names_pybatsim_cannot_load(tmp_path):
    done = cli("pybatsim-entry", "no-such", "-o", str(tmp_path / "x.py"))
    assert done.returncode == 2 and not (tmp_path / "x.py").exists()
    done = cli("pybatsim-entry", "easy", "-o", str(tmp_path / "my-entry.py"))
    assert done.returncode == 2 and "Python name" in done.stderr


# ---------------------------------------------------------------------------------------------- check


@pytest.mark.parametrize(("name", "options"), [
    # EASY's default check runs by default in tests/test_checker.py; these in CI's second pass
    pytest.param("easy", {}, marks=pytest.mark.slow), pytest.param("fcfs", {}, marks=pytest.mark.slow),
    pytest.param("easy-sjbf", {}, marks=pytest.mark.slow),
    # the learning ones read the jobs' extra fields (user, queue): the checker must keep them
    pytest.param("hybrid", {"retrain": "7200", "reliability": "dt"}, marks=pytest.mark.slow),
    pytest.param("online-sjf", {}, marks=pytest.mark.slow),
    pytest.param("easy-pp", {"predictor": "user-last2", "correction": "power"}, marks=pytest.mark.slow),
    # every other shipped scheduler, with the options it needs
    pytest.param("diws", {"learner": "user-last2"}, marks=pytest.mark.slow),
    # easy-prob with a distribution model: tests/test_probabilistic.py
    pytest.param("easy-predicted", {"learner": "user-last2", "quantile": "0.8", "overrun": "power"},
                 marks=pytest.mark.slow),
    pytest.param("fcfs-bf1", {}, marks=pytest.mark.slow), pytest.param("fcfs-bf2", {}, marks=pytest.mark.slow),
    pytest.param("online-svf", {}, marks=pytest.mark.slow),
])
def test_check_passes_the_shipped_schedulers(name, options):
    report = check_scheduler(lambda: create_scheduler(name, options), name, options=options, nb_res=8,
                             speed_sizes=(200, 400))
    assert report.ok, report.findings
    assert [line.split(":")[0] for line in report.lines] == ["rules", "slow master", "determinism", "look-ahead",
                                                              "speed"]
    assert "two processes with different hash seeds" in report.lines[2]


class SetOrdered(FirstFit):
    """Starts waiting jobs in the order of a set of their ids: an order that follows string hashing."""

    def order(self, now):
        return [self.waiting[job_id] for job_id in set(self.waiting)]


def test_check_catches_an_order_that_follows_string_hashing(monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # the child imports tests.test_own_scheduler
    spec = "tests.test_own_scheduler:SetOrdered"
    report = check_scheduler(SetOrdered, spec, nb_res=8, speed_sizes=(200, 400))
    assert [f.check for f in report.findings] == ["determinism"]
    assert "PYTHONHASHSEED" in report.findings[0].message


@pytest.mark.slow  # its speed runs walk the stack per comparison (test_checker covers look-ahead by default)
def test_check_catches_a_scheduler_that_reads_profile_delays(tmp_path):
    done = cli("scheduler", "check", CHEATER, "-q")
    assert done.returncode == 1
    assert "FAIL  look-ahead: the decisions at t=" in done.stdout and "ok    rules" in done.stdout


class OptionalDoubleBooker(FirstFit):
    """First fit, but with `bad=true` every job starts at once on resources 0..res-1: Batsim's rules
    break as soon as two overlap (the replay must carry the option)."""

    def __init__(self, *, bad: bool = False) -> None:
        super().__init__()
        self.bad = bad

    def on_job_completed(self, job_id, state, now):
        if not self.bad:
            super().on_job_completed(job_id, state, now)

    def decide(self, now):
        if not self.bad:
            return super().decide(now)
        started = [schedlab.Execute(job_id, ProcSet((0, job.res - 1))) for job_id, job in self.waiting.items()]
        self.waiting.clear()
        return started


def test_a_rule_violation_is_shrunk_to_a_small_workload_that_replays_it(tmp_path):
    spec = "tests.test_own_scheduler:OptionalDoubleBooker"
    fine = check_scheduler(OptionalDoubleBooker, spec, nb_res=8, speed_sizes=(200, 400))
    assert fine.findings == []  # fine without it
    report = check_scheduler(lambda: OptionalDoubleBooker(bad=True), spec, options={"bad": "true"}, nb_res=8,
                             out_dir=tmp_path)
    assert not report.ok
    finding = report.findings[0]
    assert finding.check == "rules" and "already in use" in finding.message
    assert "reproduced with 2 job(s)" in finding.message  # two overlapping jobs are the least that shows it
    workload_file = next(Path(f) for f in finding.files if f.endswith(".json"))
    assert len(json.loads(workload_file.read_text())["jobs"]) == 2
    replay = (tmp_path / f"{workload_file.stem}.txt").read_text().split("replay: ")[1].strip()
    assert replay.startswith("schedlab simulate") and "-O bad=true" in replay
    done = subprocess.run(replay.replace("schedlab", f"{sys.executable} -m schedlab", 1), shell=True,
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 1 and "already in use" in done.stderr  # the shrunk workload still breaks it


def test_a_user_scheduler_that_raises_is_said_as_its_failure_not_ours(tmp_path):
    (tmp_path / "raising.py").write_text("import schedlab\nclass Raising(schedlab.Scheduler):\n"
                                         "    def on_job_submitted(self, job, now):\n"
                                         "        raise KeyError('my mistake')\n"
                                         "    def decide(self, now):\n        return []\n")
    workload = generate(nb_jobs=5, nb_resources=4, seed=1)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    done = cli("simulate", "-p", str(_platform_file(tmp_path, 4)), "-w", str(tmp_path / "w.json"), "-s",
               f"{tmp_path / 'raising.py'}:Raising", "-o", str(tmp_path / "o"))
    assert done.returncode == 1, done.stderr
    assert "raising.py:Raising' raised KeyError: 'my mistake'" in done.stderr and "internal error" not in done.stderr
    exiting = tmp_path / "exiting.py"
    exiting.write_text("import sys\nsys.exit(0)\n")
    done = cli("simulate", "-p", str(_platform_file(tmp_path, 4)), "-w", str(tmp_path / "w.json"), "-s",
               f"{exiting}:X", "-o", str(tmp_path / "o2"))
    assert done.returncode == 2 and "SystemExit" in done.stderr


def test_the_edge_cases_hold_what_they_promise():
    cases = edge_case_workloads(8)
    assert set(cases) == {"simultaneous", "walltime-kills", "machine-wide", "sub-second"}
    submits = [job.submit_time_s for job in cases["simultaneous"].jobs]
    assert len(set(submits)) < len(submits) / 4
    kills = cases["walltime-kills"]
    assert any(kills.profiles[j.profile].delay_s > j.walltime_s for j in kills.jobs)
    assert any(kills.profiles[j.profile].delay_s == j.walltime_s for j in kills.jobs)
    assert any(job.res == 8 for job in cases["machine-wide"].jobs)
    wide = cases["sub-second"]
    assert all(wide.profiles[j.profile].delay_s < 1 for j in wide.jobs)
    assert any(j.walltime_s is None for j in wide.jobs)
