"""Workloads: SWF and Slurm/PM100 tables in, Batsim JSON out; the Lublin-Feitelson generator."""

from __future__ import annotations

import gzip
import io
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.cli import main
from schedlab.errors import InputError
from schedlab.workload import parse_workload
from schedlab.workloads.convert import ConversionOptions, TraceJobs, convert
from schedlab.workloads.lublin import (
    BATCH_PARAMETERS,
    TYPELESS_PARAMETERS,
    bucket_weights,
    generate,
    to_swf_columns,
)
from schedlab.workloads.slurm import to_trace_jobs as table_trace
from schedlab.workloads.swf import SWF_FIELDS, read_swf, to_trace_jobs, write_swf
from tests.helpers.data import SHARED_DATA, TRACES, examples, need_shared

SWF_TEXT = """; Version: 2.2
; UnixStartTime: 1583160579
; MaxNodes: 24
; MaxProcs: 64
; Note: first note
; Note: second note
1 0 5 100 4 -1 -1 4 200 -1 1 7 3 -1 1 0 -1 -1
2 10 5 50 8 -1 -1 -1 -1 -1 1 8 3 -1 0 0 -1 -1
3 20 5 0 2 -1 -1 2 60 -1 1 7 3 -1 1 0 -1 -1
4 86400 5 300 128 -1 -1 128 600 -1 1 9 3 -1 1 0 -1 -1
5 90000 5 70 2 -1 -1 2 30 -1 5 9 3 -1 1 0 -1 -1
"""


def write(tmp_path, text, name="t.swf", gz=False, crlf=False):
    path = tmp_path / name
    data = text.replace("\n", "\r\n") if crlf else text
    if gz:
        with gzip.open(path, "wt") as handle:
            handle.write(data)
    else:
        path.write_text(data)
    return path


@pytest.mark.parametrize(("gz", "crlf"), [(False, False), (True, False), (False, True)])
def test_swf_reader_header_fields_gzip_crlf(tmp_path, gz, crlf):
    trace = read_swf(write(tmp_path, SWF_TEXT, "t.swf.gz" if gz else "t.swf", gz, crlf))
    assert len(trace) == 5 and trace.header.max_procs == 64 and trace.header.unix_start_time == 1583160579
    assert trace.header.values["Note"] == ["first note", "second note"]
    assert trace.columns["run_time"].tolist() == [100, 50, 0, 300, 70]
    assert trace.columns["user_id"][3] == 9


def test_swf_extra_columns_are_ignored(tmp_path):
    text = "1 0 5 100 4 -1 -1 4 200 -1 1 7 3 -1 1 0 -1 -1 {1,2} batch 1:ppn=4\n"
    assert read_swf(write(tmp_path, text)).columns["requested_time"].tolist() == [200]


@pytest.mark.parametrize(("line", "fragment"), [
    ("1 0 5 100 4 -1 -1 4 200 -1 1 7 3 -1 1 0", "field 'preceding_job_number'"),
    ("1 0 5 abc 4 -1 -1 4 200 -1 1 7 3 -1 1 0 -1 -1", "field 'run_time': not a number: 'abc'"),
])
def test_swf_errors_name_file_line_field(tmp_path, line, fragment):
    path = write(tmp_path, SWF_TEXT + line + "\n")
    with pytest.raises(InputError) as info:
        read_swf(path)
    assert str(info.value).startswith(f"{path}:12: ") and fragment in str(info.value)


def test_swf_write_read_roundtrip(tmp_path):
    trace = read_swf(write(tmp_path, SWF_TEXT))
    out = io.StringIO()
    write_swf(out, trace.columns, {"MaxProcs": "64"})
    again = read_swf(write(tmp_path, out.getvalue(), "again.swf"))
    for name in SWF_FIELDS:
        assert again.columns[name].tolist() == trace.columns[name].tolist()


def test_conversion_defaults_are_explicit_and_lossless(tmp_path):
    workload, summary = convert(to_trace_jobs(read_swf(write(tmp_path, SWF_TEXT))))
    assert summary["dropped"] == {"run time 0 (--keep-zero-runtime replays it as 1 s)": 1}
    jobs = {job["id"]: job for job in workload["jobs"]}
    assert jobs[1] == {"id": 1, "subtime": 0, "walltime": 200, "res": 4, "profile": "1", "user": 7,
                       "group": 3, "queue": 1, "partition": 0, "requested_time_s": 200, "requested_procs": 4,
                       "swf_job": 1}
    assert jobs[2]["res"] == 8 and jobs[2]["walltime"] == -1  # fallback to allocated; no estimate invented
    assert jobs[5]["walltime"] == 30 and summary["nb_killed_at_walltime"] == 1  # under-estimate kept
    parsed = parse_workload(json.dumps(workload))  # a valid Batsim workload
    assert len(parsed.jobs) == 4 and parsed.profiles["1"].delay_s == 100


def test_conversion_options(tmp_path):
    trace = to_trace_jobs(read_swf(write(tmp_path, SWF_TEXT)))
    _, s = convert(trace, ConversionOptions(days=1, keep_zero_runtime=True))
    assert s["nb_kept"] == 3 and s["dropped"] == {"outside the time window": 2}
    w, s = convert(trace, ConversionOptions(start="2020-03-03T12:00:00"))  # after the first day (UTC)
    assert [j["id"] for j in w["jobs"]] == [4, 5] and w["jobs"][0]["subtime"] == 0
    _, s = convert(trace, ConversionOptions(last_hours=2))
    assert s["nb_kept"] == 2
    w, s = convert(trace, ConversionOptions(platform_size=64, too_large="reject"))
    assert s["nb_larger_than_platform_kept"] == 1 and w["nb_res"] == 64
    _, s = convert(trace, ConversionOptions(platform_size=64))
    assert s["dropped"]["larger than the platform (64)"] == 1
    w, _ = convert(trace, ConversionOptions(missing_walltime="factor:2"))
    assert {j["id"]: j["walltime"] for j in w["jobs"]}[2] == 100
    _, s = convert(trace, ConversionOptions(missing_walltime="drop", first=1))
    assert s["nb_kept"] == 1 and s["dropped"]["beyond the first 1 jobs"] == 2
    w, _ = convert(trace, ConversionOptions(nodes_to_cores=16, res_from="allocated"))
    assert w["jobs"][0]["res"] == 64
    _, s = convert(trace, ConversionOptions(only_completed=True))
    assert s["dropped"]["status not completed"] == 1
    with pytest.raises(InputError, match="missing_walltime"):
        convert(trace, ConversionOptions(missing_walltime="double"))
    w, s = convert(trace, ConversionOptions(walltime_from="runtime", keep_zero_runtime=True))
    runtimes = {key: p["delay"] for key, p in w["profiles"].items()}
    assert all(j["walltime"] == runtimes[j["profile"]] for j in w["jobs"])  # clairvoyant: walltime = run time
    assert s["options"]["walltime_from"] == "runtime" and s["nb_walltime_from_runtime"] == s["nb_kept"]
    with pytest.raises(InputError, match="walltime_from must be requested, runtime or none"):
        convert(trace, ConversionOptions(walltime_from="oracle"))


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_converter_never_loses_a_job(data):
    n = data.draw(st.integers(0, 40))
    ints = st.integers(-1, 500)
    col = lambda: np.array(data.draw(st.lists(ints, min_size=n, max_size=n)), dtype=float)  # noqa: E731
    trace = TraceJobs(source="<hyp>", job_ids=np.arange(n), submit_s=np.sort(np.abs(col())), run_s=col(),
                      requested_procs=col(), allocated_procs=col(), requested_time_s=col(), status=col() % 2,
                      extras={"user": col()})
    options = ConversionOptions(
        missing_walltime=data.draw(st.sampled_from(["none", "drop", "runtime", "factor:1.5", "max:3600"])),
        days=data.draw(st.one_of(st.none(), st.floats(0.001, 0.01))), first=data.draw(st.one_of(st.none(),
                                                                                            st.integers(0, 50))),
        keep_zero_runtime=data.draw(st.booleans()), platform_size=data.draw(st.one_of(st.none(), st.integers(1, 300))),
        too_large=data.draw(st.sampled_from(["drop", "reject"])), only_completed=data.draw(st.booleans()))
    try:
        workload, summary = convert(trace, options)
    except InputError as exc:  # an empty workload is refused, with every drop counted in the message
        assert str(exc).startswith(f"<hyp>: no job kept out of {n}")
        return
    assert summary["nb_kept"] + sum(summary["dropped"].values()) == n
    parsed = parse_workload(json.dumps(workload))
    assert len(parsed.jobs) == summary["nb_kept"]
    for job in parsed.jobs:
        assert job.res > 0 and job.submit_time_s >= 0 and (job.walltime_s is None or job.walltime_s > 0)
    if parsed.jobs:
        assert min(j.submit_time_s for j in parsed.jobs) == 0


PM100_CSV = """job_id,user_id,qos,partition,submit_time,start_time,end_time,run_time,time_limit,num_cores_req,\
num_nodes_req,job_state
11,u1,normal,p1,2020-05-05 10:00:00,2020-05-05 10:01:00,2020-05-05 11:01:00,3600,120,32,1,COMPLETED
12,u2,debug,p2,2020-05-05 10:30:00,2020-05-05 10:31:00,2020-05-05 10:32:00,60,INFINITE,64,2,FAILED
13,u1,normal,p1,2020-05-06 10:30:00,2020-05-06 10:31:00,2020-05-06 10:31:00,0,30,16,1,CANCELLED
"""


def test_pm100_style_table(tmp_path):
    path = tmp_path / "pm100.csv"
    path.write_text(PM100_CSV)
    workload, summary = convert(table_trace(path))
    assert summary["nb_kept"] == 2
    first, second = workload["jobs"]
    assert (first["id"], first["subtime"], first["walltime"], first["res"], first["profile"]) == (11, 0, 7200, 32, "11")
    assert workload["profiles"]["11"] == {"type": "delay", "delay": 3600}
    assert first["user"] == "u1" and first["qos"] == "normal" and first["partition"] == "p1"
    assert second["subtime"] == 1800 and second["walltime"] == -1  # INFINITE: no walltime
    nodes, _ = convert(table_trace(path, unit="nodes"))
    assert [j["res"] for j in nodes["jobs"]] == [1, 2]


def test_pm100_style_parquet_equals_csv(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow not installed (pip install 'schedlab[parquet]')")
    import pandas as pd

    path = tmp_path / "pm100.csv"
    path.write_text(PM100_CSV)
    frame = pd.read_csv(path)
    frame["submit_time"] = pd.to_datetime(frame["submit_time"])  # Parquet holds real timestamps
    frame.to_parquet(tmp_path / "pm100.parquet")
    assert convert(table_trace(tmp_path / "pm100.parquet"))[0]["jobs"] == convert(table_trace(path))[0]["jobs"]


def test_table_errors(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("job_id,run_time\n1,5\n")
    with pytest.raises(InputError, match=r"bad\.csv:1: field 'submit_time'"):
        table_trace(path)
    path.write_text(PM100_CSV.replace("120,32", "forever,32"))
    with pytest.raises(InputError, match=r"bad.csv:2: field 'time_limit': unreadable time limit 'forever'"):
        table_trace(path)


def test_real_coare_and_cirrus_excerpts(tmp_path, capsys):
    out = tmp_path / "coare.json"
    assert main(["workload", "from-swf", str(TRACES / "coare-excerpt.swf"), "-o", str(out), "--days", "2",
                 "--start", "2020-04-01"]) == 0
    workload = parse_workload(out.read_text())
    span = workload.jobs[-1].submit_time_s - workload.jobs[0].submit_time_s
    assert 10 < len(workload.jobs) < 167 and span <= 2 * 86400 and workload.nb_res == 1728
    assert "outside the time window" in capsys.readouterr().out
    out = tmp_path / "cirrus.json"
    assert main(["workload", "from-table", str(TRACES / "cirrus-sacct-excerpt.csv"), "-o", str(out),
                 "--last-hours", "24"]) == 0
    workload = parse_workload(out.read_text())
    assert workload.jobs and workload.jobs[-1].submit_time_s <= 24 * 3600
    assert all(j.walltime_s is None for j in workload.jobs)  # sacct extract has no time limit column


def test_sacct_job_steps_are_not_jobs(tmp_path, capsys):
    """`sacct --parsable2` without -X lists each job's steps on rows of their own ("5.batch"): they
    are counted as steps and dropped, so the workload has the jobs -X would list, with the same fields."""
    header = "JobID|Submit|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|ReqCPUS|State"
    job5 = "5|2026-11-28T10:00:00|2026-11-28T10:00:02|2026-11-28T10:00:32|30|2|2|2|COMPLETED"
    job6 = "6_1|2026-11-28T10:00:05|2026-11-28T10:00:06|2026-11-28T10:01:06|60|1|1|1|TIMEOUT"
    steps5 = ["5.batch|2026-11-28T10:00:02|2026-11-28T10:00:02|2026-11-28T10:00:32|30||2|2|COMPLETED",
              "5.extern|2026-11-28T10:00:02|2026-11-28T10:00:02|2026-11-28T10:00:32|30||2|2|COMPLETED"]
    step6 = "6_1.0|2026-11-28T10:00:06|2026-11-28T10:00:06|2026-11-28T10:01:06|60||1|1|CANCELLED"
    outputs = {}
    for name, lines in (("x.txt", [header, job5, job6]), ("steps.txt", [header, job5, *steps5, job6, step6])):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        assert main(["workload", "from-table", str(tmp_path / name), "-o", str(tmp_path / f"{name}.json")]) == 0
        outputs[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert re.search(r"dropped +3  job step, not a job", capsys.readouterr().out)
    plain, stepped = outputs["x.txt"], outputs["steps.txt"]
    assert stepped["jobs"] == plain["jobs"] and stepped["profiles"] == plain["profiles"]
    assert [(j["id"], j["subtime"], j["walltime"], j["res"]) for j in plain["jobs"]] == [("5", 0, 120, 2),
                                                                                          ("6_1", 5, 60, 1)]
    assert stepped["conversion"]["dropped"] == {"job step, not a job (sacct without -X lists each step)": 3}
    numeric = tmp_path / "numeric.csv"  # ids read as numbers ("7.0" once NaN is among them) are never steps
    numeric.write_text("job_id,submit_time,run_time,num_cores_req\n7,0,10,1\n,5,10,1\n")
    assert table_trace(numeric).steps is None


@pytest.mark.traces
def test_real_coare_and_cirrus_traces(tmp_path, capsys):
    coare = need_shared(SHARED_DATA / "swf" / "DOST-ASTI_COARE-Saliksik-2020-cln.swf")
    out = tmp_path / "coare.json"
    assert main(["workload", "from-swf", str(coare), "-o", str(out), "--days", "15", "--start", "2020-04-01"]) == 0
    workload = parse_workload(out.read_text())
    span = workload.jobs[-1].submit_time_s - workload.jobs[0].submit_time_s
    assert 100 < len(workload.jobs) < 19_760 and span <= 15 * 86400 and workload.nb_res == 1728
    cirrus = need_shared(SHARED_DATA / "slurm" / "EPCC-Cirrus-CPU-2024Q1-sacct-subset.csv")
    out = tmp_path / "cirrus.json"
    assert main(["workload", "from-table", str(cirrus), "-o", str(out), "--last-hours", "24"]) == 0
    assert parse_workload(out.read_text()).jobs


EXCERPTS = ["theta-2023-excerpt.swf", "wagap-2013-excerpt.swf.gz", "lublin_256-excerpt.swf", "hpc2n-excerpt.swf",
            "kth-sp2-excerpt.swf.gz"]


@pytest.mark.parametrize("name", EXCERPTS)
def test_real_swf_excerpts_parse(name):
    """CRLF (Theta), Alea's 21 fields (wagap), gzip, long PWA headers: 300 jobs of each real trace."""
    trace = read_swf(TRACES / name)
    _, summary = convert(to_trace_jobs(trace))
    assert len(trace) == 300 and summary["nb_kept"] + sum(summary["dropped"].values()) == 300


@pytest.mark.traces
@pytest.mark.parametrize("name", [
    "ALCF-Theta-2023-09_2024-01_cqsim.swf", "alea_wagap-2013.swf.gz", "lublin_256.swf", "alea_hpc2n_excerpt.swf",
    "KTH-SP2-1996-2_predictsim-unfiltered.swf.gz"])
def test_real_swf_files_parse(name):
    trace = read_swf(need_shared(SHARED_DATA / "swf" / name))
    _, summary = convert(to_trace_jobs(trace))
    assert len(trace) > 1000 and summary["nb_kept"] + sum(summary["dropped"].values()) == len(trace)


def test_cli_workload_check_errors(tmp_path, capsys):
    bad = tmp_path / "w.json"
    bad.write_text('{"jobs": [{"id": 1, "subtime": 0, "res": 0, "profile": "p"}], "profiles": {"p": '
                   '{"type": "delay", "delay": 1}}}')
    assert main(["workload", "check", str(bad)]) == 2
    assert "field 'res'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ Lublin


def test_daily_cycle_weights_match_the_fact_sheet():
    typeless = bucket_weights(TYPELESS_PARAMETERS.anum, TYPELESS_PARAMETERS.bnum)
    batch = bucket_weights(BATCH_PARAMETERS.anum, BATCH_PARAMETERS.bnum)
    assert np.round(typeless[[0, 10, 27, 47]], 4).tolist() == [0.5078, 0.1649, 1.8331, 0.5637]
    assert np.round(batch[[0, 9, 26]], 4).tolist() == [0.5462, 0.2354, 1.6659]
    assert abs(typeless.mean() - 1.0) < 1e-12


def _stats(nodes, run, submit):
    parallel = nodes[nodes > 1]
    return {"serial": np.mean(nodes == 1), "pow2": np.mean((nodes > 1) & ((nodes & (nodes - 1)) == 0)),
            "log2": np.log2(parallel).mean(), "run_p50": np.median(run), "ia_p50": np.median(np.diff(submit))}


@pytest.mark.traces
def test_lublin_statistics_match_the_sheet_and_the_reference_trace():
    jobs = generate(nodes=256, nb_jobs=40_000, seed=7, typed=False)
    ours = _stats(jobs.nodes, jobs.run_s, jobs.submit_s)
    # fact sheet, typeless UHI 8 / UMED 5.5, long run: 0.246, 0.616, 3.64, p50 141 s, ia p50 116 s
    assert abs(ours["serial"] - 0.246) < 0.01 and abs(ours["pow2"] - 0.616) < 0.01
    assert abs(ours["log2"] - 3.64) < 0.04 and 120 < ours["run_p50"] < 165 and 105 < ours["ia_p50"] < 128
    assert jobs.nodes.max() == 256 and jobs.run_s.max() <= 162_754 and (jobs.job_type == 0).all()
    trace = read_swf(need_shared(SHARED_DATA / "swf" / "lublin_256.swf")).columns
    theirs = _stats(trace["allocated_processors"].astype(int), trace["run_time"], trace["submit_time"])
    for key, tolerance in {"serial": 0.015, "pow2": 0.015, "log2": 0.08}.items():
        assert abs(ours[key] - theirs[key]) < tolerance, key
    assert abs(np.log(ours["run_p50"] / theirs["run_p50"])) < 0.25
    assert abs(np.log(ours["ia_p50"] / theirs["ia_p50"])) < 0.15


def test_lublin_typed_mode_and_daily_cycle():
    jobs = generate(nodes=256, nb_jobs=30_000, seed=3, typed=True, exact_clock=True)
    assert 0.12 < jobs.job_type.mean() < 0.18  # batch share 0.150 long-run
    hours = ((jobs.submit_s % 86400) // 3600).astype(int)
    per_hour = np.bincount(hours, minlength=24)
    assert per_hour[11:16].mean() > 4 * per_hour[2:5].mean()  # midday peak, night trough


def test_lublin_cli_is_deterministic(tmp_path):
    outputs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        assert main(["workload", "lublin", "--nodes", "128", "--jobs", "300", "--seed", "5", "-o", str(path),
                     "--swf", str(tmp_path / f"{name}.swf"), "--missing-walltime", "factor:2"]) == 0
        outputs.append((path.read_bytes(), (tmp_path / f"{name}.swf").read_bytes()))
    assert outputs[0] == outputs[1]
    workload = parse_workload(outputs[0][0].decode())
    assert len(workload.jobs) == 300 and all(j.walltime_s is not None for j in workload.jobs)
    columns = to_swf_columns(generate(nodes=128, nb_jobs=300, seed=5))
    assert read_swf(tmp_path / "a.swf").columns["run_time"].tolist() == columns["run_time"].tolist()


@pytest.mark.parametrize("chunk", [65_536, 2])
def test_streamed_json_equals_the_dict(tmp_path, monkeypatch, chunk):
    from schedlab.workloads.convert import ConvertedWorkload, convert_columns

    monkeypatch.setattr(ConvertedWorkload, "CHUNK_JOBS", chunk)  # 2: several chunks per file

    path = tmp_path / "pm100.csv"
    path.write_text(PM100_CSV)
    sacct = tmp_path / "sacct.csv"  # array-job ids are strings: "7_1"
    sacct.write_text('JobID,NCPUS,Submit,ElapsedRaw,State,User\n7_1,4,1700000000,30,COMPLETED,"a ""q"" b"\n'
                     "7_2,2,1700000100,40,TIMEOUT,bob\n")
    for trace in (table_trace(path), table_trace(sacct), to_trace_jobs(read_swf(write(tmp_path, SWF_TEXT)))):
        converted, _ = convert_columns(trace, ConversionOptions(keep_zero_runtime=True))
        converted.tail["generator"] = {"name": "x"}
        converted.write(str(tmp_path / "w.json"))
        written = json.loads((tmp_path / "w.json").read_text())
        assert written == json.loads(json.dumps(converted.to_dict()))
        assert len(written["jobs"]) == len(written["profiles"]) == converted.summary["nb_kept"]


def test_a_users_flurry_is_dropped_and_counted(tmp_path):
    """--max-user-share: a user holding more than the share of the jobs is removed (the COARE study
    removed such a flurry from HPC2N's log); others stay."""
    from schedlab.workloads.convert import ConversionOptions, convert_columns
    from schedlab.workloads.swf import read_swf, to_trace_jobs

    lines = ["; MaxProcs: 4"] + [f"{i} {10 * i} 0 5 1 -1 -1 1 60 -1 1 {1 if i <= 6 else i} 1 -1 1 -1 -1 -1"
                                 for i in range(1, 11)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    trace = to_trace_jobs(read_swf(tmp_path / "t.swf"))
    converted, summary = convert_columns(trace, ConversionOptions(max_user_share=0.55))
    assert len(converted.ids) == 4 and summary["dropped"] == {"user 1's flurry (> 55% of the jobs)": 6}
    _, kept = convert_columns(trace, ConversionOptions(max_user_share=0.6))  # 60% is not more than 60%
    assert kept["nb_kept"] == 10


def test_windows_counted_back_from_the_last_submission_hold_it(tmp_path):
    """last_hours = 48 and days = 1 as two windows: (last - 48 h, last - 24 h] and (last - 24 h, last];
    the last submission is in the last window (a left-closed window dropped it), every job of
    (last - 48 h, last] is in exactly one window, and a job at last - 48 h is in none."""
    import json
    from pathlib import Path

    from schedlab.experiments.campaigns.campaign import WorkloadSpec
    from schedlab.experiments.campaigns.plan import workload_inputs

    day = 86400
    submits = [0, 2 * day - 1, 2 * day, 2 * day + 10, 3 * day, 3 * day + 5, 4 * day]  # last: 4 days
    lines = ["; MaxProcs: 4"] + [f"{i + 1} {s} 0 60 1 -1 -1 1 600 -1 1 1 1 -1 1 -1 -1 -1"
                                 for i, s in enumerate(submits)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    spec = WorkloadSpec(name="t", kind="swf", source=str(tmp_path / "t.swf"), convert={"last_hours": 48, "days": 1},
                        windows=2)
    inputs = workload_inputs(spec, (), tmp_path / "cache")
    kept = [sorted(job["id"] for job in json.loads(Path(i.path).read_text())["jobs"]) for i in inputs]
    assert kept == [[4, 5], [6, 7]]  # ids: trace job numbers; job 3 (at last - 48 h) is before both


def test_a_requested_time_override_is_a_counterfactual_of_every_request(tmp_path):
    """requested_override_s: every job's requested time and walltime become it (the COARE study's
    7-day defaults), the run times untouched."""
    from schedlab.workloads.convert import ConversionOptions, convert
    from schedlab.workloads.swf import read_swf, to_trace_jobs

    lines = ["; MaxProcs: 4"] + [f"{i + 1} {60 * i} 0 {100 + i} 1 -1 -1 1 {3600 if i % 2 else -1} "
                                 "-1 1 1 1 -1 1 -1 -1 -1" for i in range(6)]
    (tmp_path / "t.swf").write_text("\n".join(lines) + "\n")
    document, _ = convert(to_trace_jobs(read_swf(tmp_path / "t.swf")), ConversionOptions(requested_override_s=604800.0))
    jobs = document["jobs"]
    assert {job["walltime"] for job in jobs} == {604800} and {job["requested_time_s"] for job in jobs} == {604800}
    assert [document["profiles"][job["profile"]]["delay"] for job in jobs] == [100 + i for i in range(6)]



def test_ids_with_a_dot_are_steps_only_after_their_job(tmp_path):
    """Only a row "J.STEP" whose job J has its own row is sacct's step; other ids with a dot are ids."""
    path = tmp_path / "t.csv"
    path.write_text("job_id,submit_time,run_time,num_cores_req\nrun.1,0,60,4\nrun.2,30,90,2\n7,40,10,1\n7.batch,40,10,1\n")
    assert list(table_trace(path).steps) == [False, False, False, True]
