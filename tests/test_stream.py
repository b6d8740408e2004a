"""Streamed runs (engine/stream.py, workload_columns.py): a workload read as the run goes, rows
written as jobs end, give the files a whole-workload run gives, byte for byte; what they hold is
the live jobs, not the trace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import schedlab
from schedlab.errors import InputError
from schedlab.model import Job, Profile
from schedlab.workload import load_workload
from schedlab.workload_columns import batsim_order, read_columns, stream_of, write_columns
from schedlab.workloads.synthetic import SyntheticSpec, generate, stream
from tests.helpers.data import TEST_DATA, examples, make_workload
from tests.helpers.invariants import scenarios

#: columns of schedule.csv that are wall-clock times, not the schedule
CLOCKS = ("scheduling_time", "simulation_time")


def files(directory: Path) -> tuple[str, dict[str, str], dict, dict | None]:
    """jobs.csv, schedule.csv without its clocks, summary.json's metrics and scheduler report."""
    header, values = (directory / "schedule.csv").read_text().splitlines()
    schedule = {k: v for k, v in zip(header.split(","), values.split(","), strict=True) if k not in CLOCKS}
    summary = json.loads((directory / "summary.json").read_text())
    return (directory / "jobs.csv").read_text(), schedule, summary["metrics"], summary.get("scheduler_report")


@pytest.mark.parametrize(("name", "options"), [("easy", {}), ("fcfs", {}), ("easy-sjbf", {"queue_order": "spt"}),
                                               ("easy-pp", {"predictor": "user-last2", "correction": "tsafrir"}),
                                               ("fcfs-bf2", {}),
                                               pytest.param("hybrid", {}, marks=pytest.mark.slow),
                                               ("diws", {"learner": "user-last2"}),
                                               ("policy", {"policy": f"{TEST_DATA}/policies.py:shortest_requested",
                                                           "backfill": "true"})])
def test_a_streamed_generator_gives_the_whole_workloads_files(name, options, tmp_path):
    streamed_equals_whole(name, options, tmp_path, nb_jobs=3000)


def test_a_streamed_generator_gives_the_hybrids_whole_files_on_a_smaller_workload(tmp_path):
    """The hybrid's twin of the test above, by default (its 3,000 jobs: CI's second pass)."""
    streamed_equals_whole("hybrid", {}, tmp_path, nb_jobs=800)


def streamed_equals_whole(name: str, options: dict, tmp_path: Path, nb_jobs: int) -> None:
    spec = SyntheticSpec(nb_jobs=nb_jobs, nb_resources=64, seed=8)
    schedlab.simulate(64, generate(nb_jobs=nb_jobs, nb_resources=64, seed=8), name, options=dict(options),
                      out=tmp_path / "whole")
    streamed = schedlab.simulate(64, stream(spec), name, options=dict(options), out=tmp_path / "stream")
    assert streamed.complete
    assert files(tmp_path / "stream") == files(tmp_path / "whole")
    summary = json.loads((tmp_path / "stream" / "summary.json").read_text())
    assert summary["nb_jobs_in_workload"] == nb_jobs and summary["nb_jobs_unfinished"] == 0
    if name == "policy":  # its observation table reuses ended jobs' slots: as many as were live at once
        assert streamed.engine.scheduler._table.size <= summary["most_jobs_held"] < nb_jobs


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.function_scoped_fixture])
@given(scenario=scenarios())
def test_streamed_and_whole_runs_agree_on_any_workload(scenario, tmp_path_factory):
    """Ties, jobs without walltime, jobs too large (rejected), kills at the walltime."""
    nb_res, specs = scenario
    workload = make_workload(specs)
    out = tmp_path_factory.mktemp("run")
    for name in ("easy", "fcfs"):
        schedlab.simulate(nb_res, workload, name, out=out / f"{name}-whole")
        schedlab.simulate(nb_res, stream_of(workload), name, out=out / f"{name}-stream")
        assert files(out / f"{name}-stream") == files(out / f"{name}-whole")


def test_a_columnar_file_round_trips_a_batsim_workload(tmp_path):
    """Extra fields, a profile's return code, no walltime, ids that sort as text at equal times."""
    jobs = [{"id": i, "subtime": 5 if i in (9, 10, 11) else i, "res": 1 + i % 3, "walltime": -1 if i == 4 else 500,
             "profile": f"p{i}", "user": f"u{i % 2}", **({"qos": "high"} if i == 3 else {})} for i in range(14)]
    profiles = {f"p{i}": {"type": "delay", "delay": 30 + 7 * i, **({"ret": 1} if i == 2 else {})} for i in range(14)}
    jobs.sort(key=lambda j: (j["subtime"], str(j["id"])))
    (tmp_path / "w.json").write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    workload = load_workload(tmp_path / "w.json")
    write_columns(tmp_path / "w.parquet", stream_of(workload).stream(), name="w0", nb_res=4, nb_jobs=14)
    columns = read_columns(tmp_path / "w.parquet")
    assert [job for job, _ in columns.stream()] == list(workload.jobs)
    assert [job.extra for job, _ in columns.stream()] == [job.extra for job in workload.jobs]
    assert [p.return_code for _, p in columns.stream()] == [workload.profiles[j.profile].return_code
                                                              for j in workload.jobs]
    schedlab.simulate(4, workload, "easy", out=tmp_path / "json")
    schedlab.simulate(4, columns, "easy", out=tmp_path / "columns")
    assert files(tmp_path / "columns") == files(tmp_path / "json")
    assert "COMPLETED_FAILED" in (tmp_path / "columns" / "jobs.csv").read_text()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("delay", -1.0, "job '2': not a delay >= 0: -1.0"), ("delay", float("nan"), "job '2': not a delay >= 0: nan"),
    ("delay", None, "job '2': not a delay >= 0: None"), ("res", 0, "job '2': not a number of resources >= 1: 0")])
def test_a_columnar_files_bad_job_is_named_with_its_field(tmp_path, field, value, message):
    """The reader's checks (a delay >= 0, resources >= 1) name the file, the job and the field; the
    jobs before it were read as written (fields and profile)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    jobs = [(Job(f"w0!{i}", float(i), 1 + i % 2, 100.0, f"p{i}"), Profile(f"p{i}", "delay", 10.0 + i,
                                                                             {"type": "delay", "delay": 10.0 + i}))
            for i in range(4)]
    write_columns(tmp_path / "good.parquet", iter(jobs), name="w0", nb_res=4, nb_jobs=4)
    assert list(read_columns(tmp_path / "good.parquet").stream()) == jobs
    assert [dict(p.raw) for _, p in read_columns(tmp_path / "good.parquet").stream()] == [dict(p.raw) for _, p in jobs]
    table = pq.read_table(tmp_path / "good.parquet")
    values = table.column(field).to_pylist()
    values[2] = value
    column = pa.array(values, type=table.schema.field(field).type)
    pq.write_table(table.set_column(table.schema.get_field_index(field), field, column), tmp_path / "bad.parquet")
    with pytest.raises(InputError) as raised:  # within the head, read when the file is opened
        list(read_columns(tmp_path / "bad.parquet").stream())
    assert str(raised.value).endswith(message) and raised.value.field == field
    assert str(tmp_path / "bad.parquet") in str(raised.value)


def test_reading_a_columnar_file_holds_one_row_group_not_the_file(tmp_path, monkeypatch):
    """One pyarrow reader over the whole file kept every page it read (1.24 MB here, the file's
    size; 33 bytes a job, 330 MB over ten million): a reader per row group holds one group."""
    import pyarrow as pa

    import schedlab.workload_columns as columns_module

    monkeypatch.setattr(columns_module, "GROUP_JOBS", 500)
    workload = generate(nb_jobs=40_000, nb_resources=64, seed=3)
    write_columns(tmp_path / "w.parquet", stream_of(workload).stream(), name="w0", nb_res=64, nb_jobs=40_000)
    held = 0
    for index, _ in enumerate(read_columns(tmp_path / "w.parquet").stream()):
        if index % 5_000 == 0:
            held = max(held, pa.total_allocated_bytes())
    assert held < (tmp_path / "w.parquet").stat().st_size / 4


def test_batsim_order_sorts_equal_times_by_id_as_text():
    def item(name: str, at: float) -> tuple[Job, Profile]:
        return Job(f"w0!{name}", at, 1, None, name), Profile(name, "delay", 1.0)

    ordered = batsim_order([item("9", 0), item("10", 0), item("99999", 1), item("100000", 1), item("2", 2)])
    assert [job.name for job, _ in ordered] == ["10", "9", "100000", "99999", "2"]
    with pytest.raises(InputError, match="submitted before the job read before it"):
        list(batsim_order([item("1", 5), item("2", 3)]))


def test_a_stream_of_ties_across_the_generators_chunks_is_in_batsim_order():
    """The synthetic generator draws 65,536 jobs at a time: ties at a chunk's edge stay in order."""
    spec = SyntheticSpec(nb_jobs=70_000, nb_resources=4096, seed=2, load=40.0)  # many jobs per second
    assert [job for job, _ in stream(spec).stream()] == list(generate(nb_jobs=70_000, nb_resources=4096, seed=2,
                                                                      load=40.0).jobs)


def test_a_streamed_run_holds_the_live_jobs_only():
    """At every instant the records held are the waiting and running jobs' and the next one read."""
    import io

    from schedlab.engine.stream import StreamEngine
    from schedlab.model import Platform
    from schedlab.schedulers.base import create_scheduler

    rows = io.StringIO()
    engine = StreamEngine(Platform.homogeneous(256), stream(SyntheticSpec(nb_jobs=20_000, nb_resources=256, seed=5)),
                          create_scheduler("easy"), rows=rows)
    most = 0
    while engine.step():
        scheduler = engine.scheduler
        live = len(scheduler.queue) + len(scheduler._running)
        assert len(engine.records) <= live + 1
        most = max(most, len(engine.records))
    engine.end()
    assert not engine.records and len(engine.finished) == 20_000 == rows.getvalue().count("\n")
    assert most < 2_000  # a trace's worth of records is never held
    assert engine.most_jobs_held == most  # what summary.json says (most_jobs_held)


def test_the_command_line_generates_and_simulates_columns_and_refuses_what_it_cannot(tmp_path):
    def cli(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "schedlab", *argv], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)

    for output in ("w.parquet", "w.json"):
        assert cli("workload", "generate", "--jobs", "2000", "--resources", "64", "--seed", "1", "-o",
                   output).returncode == 0
    assert cli("workload", "columns", "w.json", "-o", "w2.parquet").returncode == 0
    for workload in ("w.parquet", "w2.parquet", "w.json"):
        done = cli("simulate", "-q", "-p", "64", "-w", workload, "-s", "easy", "-o", workload.replace(".", "-"))
        assert done.returncode == 0, done.stderr
    rows = {(tmp_path / run / "jobs.csv").read_bytes() for run in ("w-parquet", "w2-parquet", "w-json")}
    assert len(rows) == 1
    held = json.loads((tmp_path / "w-parquet" / "summary.json").read_text())["most_jobs_held"]
    assert 1 <= held < 2000 and "most_jobs_held" not in (tmp_path / "w-json" / "summary.json").read_text()
    batsim = cli("simulate", "-q", "-p", "lublin256", "-w", "w.parquet", "--timing", "batsim", "-s", "easy", "-o", "b")
    assert batsim.returncode == 2 and "--timing ideal" in batsim.stderr and not (tmp_path / "b").exists()
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    bad = cli("simulate", "-q", "-p", "64", "-w", "bad.parquet", "-s", "easy", "-o", "c")
    assert bad.returncode == 2 and bad.stderr.startswith("schedlab: error: bad.parquet: not a readable Parquet")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_the_hybrids_training_window_forgets_what_it_will_never_learn_again(monkeypatch):
    """With train_last=N the hybrid keeps about 2N completions, and schedules as if it kept all."""
    from schedlab.schedulers.hybrid import Hybrid

    workload = generate(nb_jobs=1500, nb_resources=64, seed=3)
    kept = schedlab.simulate(64, workload, Hybrid(train_last=30, retrain=14400.0))
    scheduler = kept.scheduler
    assert scheduler._dropped > 1000 and scheduler._completed_count < 4 * 30 + 400
    monkeypatch.setattr(Hybrid, "_drop_oldest", lambda self, count: None)
    every = schedlab.simulate(64, workload, Hybrid(train_last=30, retrain=14400.0))
    assert every.scheduler._dropped == 0
    assert kept.jobs.equals(every.jobs) and kept.metrics == every.metrics
    assert kept.summary["scheduler_report"] == every.summary["scheduler_report"]


def test_online_refits_keep_their_window_only():
    """train_last=N: each refit learns from the last N ended jobs; older ones are not held."""
    from schedlab.schedulers.base import create_scheduler

    workload = generate(nb_jobs=1500, nb_resources=64, seed=4)
    scheduler = create_scheduler("easy-predicted", {"learner": "dt", "refit_jobs": "100", "train_last": "250"})
    result = schedlab.simulate(64, workload, scheduler)
    assert result.complete and scheduler.estimate.refits > 10
    assert len(scheduler.estimate._learned_rows) == len(scheduler.estimate._learned_runtimes_s) == 250
    assert len(scheduler.estimate._killed) < 100  # learned kills are not held either
    with pytest.raises(InputError, match="train_last=100 has no effect"):
        create_scheduler("easy-predicted", {"learner": "dt", "train_last": "100"})


def test_easy_pp_adaboost_refits_keep_their_window_only():
    """easy-pp's online AdaBoost with train_last=N holds N ended jobs; a window longer than the
    trace schedules as no window."""
    from schedlab.schedulers.base import create_scheduler

    workload = generate(nb_jobs=300, nb_resources=64, seed=4)
    options = {"predictor": "adaboost", "correction": "power", "refit_s": "21600"}
    runs = {}
    for window in ("0", "60", "100000"):
        scheduler = create_scheduler("easy-pp", {**options, "train_last": window})
        runs[window] = schedlab.simulate(64, workload, scheduler)
        assert runs[window].complete and scheduler.estimate.refits > 5
        estimate = scheduler.estimate
        assert len(estimate._learned_rows) == len(estimate._learned_runtimes_s) <= int(window) or window == "0"
    jobs = {window: [(r.start_s, r.finish_s) for r in run.engine.records.values()] for window, run in runs.items()}
    assert jobs["100000"] == jobs["0"] != jobs["60"]
    with pytest.raises(InputError, match="train_last=100 has no effect"):
        create_scheduler("easy-pp", {"train_last": "100"})
