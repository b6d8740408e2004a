"""Jobs never reveal their run time: nothing a scheduler sees (job fields, extras, profile names) is a
function of it. Shuffling run times (and every other outcome field of the trace) among jobs with the
same requests must leave every scheduler-visible job unchanged."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.workload import parse_workload
from schedlab.workloads.convert import convert
from schedlab.workloads.slurm import to_trace_jobs as table_trace
from schedlab.workloads.swf import read_swf
from schedlab.workloads.swf import to_trace_jobs as swf_trace
from schedlab.workloads.synthetic import generate
from tests.helpers.data import examples


def visible(workload_dict: dict) -> list[tuple]:
    """What JOB_SUBMITTED tells a scheduler about each job."""
    workload = parse_workload(json.dumps(workload_dict))
    return [(j.id, j.submit_time_s, j.res, j.walltime_s, j.profile, tuple(sorted(j.extra.items())))
            for j in workload.jobs]


@st.composite
def traces(draw):
    """Jobs as (requested procs, requested time, user) with outcome (run, cpu, mem, wait, status) rows."""
    n = draw(st.integers(2, 30))
    jobs = []
    for i in range(n):
        request = (draw(st.sampled_from([1, 4, 16])), draw(st.sampled_from([-1, 600, 3600])),
                   draw(st.integers(1, 3)))
        run = draw(st.integers(1, 5000))
        outcome = (run, run * 0.9, run // 3 + 1, draw(st.integers(0, 100)), draw(st.sampled_from([0, 1, 5])))
        jobs.append((i + 1, 10 * i, request, outcome))
    return jobs, draw(st.randoms(use_true_random=False))


def shuffled(jobs, rng):
    """Outcomes permuted among jobs with identical requests."""
    groups = defaultdict(list)
    for index, (_, _, request, _) in enumerate(jobs):
        groups[request].append(index)
    result = list(jobs)
    for members in groups.values():
        outcomes = [jobs[i][3] for i in members]
        rng.shuffle(outcomes)
        for i, outcome in zip(members, outcomes, strict=True):
            number, submit, request, _ = jobs[i]
            result[i] = (number, submit, request, outcome)
    return result


def swf_text(jobs) -> str:
    lines = ["; MaxProcs: 16"]
    for number, submit, (procs, req_time, user), (run, cpu, mem, wait, status) in jobs:
        lines.append(f"{number} {submit} {wait} {run} {procs} {cpu:.2f} {mem} {procs} {req_time} -1 {status} {user} "
                     f"1 3 1 0 -1 -1")
    return "\n".join(lines) + "\n"


def table_text(jobs) -> str:
    lines = ["job_id,user_id,qos,submit_time,start_time,end_time,run_time,time_limit,num_cores_req,job_state"]
    for number, submit, (procs, req_time, user), (run, _, _, wait, status) in jobs:
        limit = "INFINITE" if req_time < 0 else req_time // 60
        state = "COMPLETED" if status == 1 else "FAILED"
        lines.append(f"{number},u{user},normal,{submit},{submit + wait},{submit + wait + run},{run},{limit},{procs},"
                     f"{state}")
    return "\n".join(lines) + "\n"


FORMATS = {  # file suffix, writer, reader -> TraceJobs
    "swf": (".swf", swf_text, lambda path: swf_trace(read_swf(path))),
    "table": (".csv", table_text, table_trace),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@settings(max_examples=examples(60), deadline=None)
@given(trace=traces())
def test_converted_jobs_do_not_depend_on_run_times(tmp_path_factory, fmt, trace):
    suffix, text, read = FORMATS[fmt]
    jobs, rng = trace
    folder = tmp_path_factory.mktemp(fmt)
    views = []
    for variant in (jobs, shuffled(jobs, rng)):
        path = folder / f"t{len(views)}{suffix}"
        path.write_text(text(variant))
        workload, _ = convert(read(path))
        views.append(visible(workload))
    assert views[0] == views[1]


def test_generated_jobs_show_only_their_request():
    """In the synthetic generator every feature is a function of the request (walltime, size, user):
    jobs with the same request look the same, however long they run; profile names are the jobs'
    own and never contain the delay."""
    workload = generate(nb_jobs=5000, nb_resources=64, seed=7)
    by_request = defaultdict(set)
    runtimes = defaultdict(set)
    for job in workload.jobs:
        request = (job.walltime_s, job.res, job.extra["user"])
        by_request[request].add(tuple(sorted(job.extra.items())))
        runtimes[request].add(workload.profiles[job.profile].delay_s)
        assert job.profile == job.name
    assert all(len(features) == 1 for features in by_request.values())
    # walltimes are whole minutes, under-estimates included: the walltime cannot single out the jobs
    # that will be killed at it (an odd walltime used to)
    killed = [j for j in workload.jobs if workload.profiles[j.profile].delay_s >= j.walltime_s]
    assert len(killed) > 100 and all(j.walltime_s % 60 == 0 for j in workload.jobs)
    # the check has teeth: many requests are shared by jobs whose run times straddle the old 1-h "queue" rule
    straddling = [r for r, values in runtimes.items() if min(values) <= 3600 < max(values)]
    assert len(straddling) >= 5
    delays = {name: profile.delay_s for name, profile in workload.profiles.items()}
    assert len(delays) == len(workload.jobs)
    assert not any(re.search(rf"(?<!\d){int(d)}(?!\d)", name) for name, d in delays.items() if d >= 100
                   and int(name) != int(d))


def test_converted_profiles_are_one_per_job_named_after_it(tmp_path):
    rows = [(i + 1, 10 * i, (4, 600, 1), (120, 100.0, 5, 0, 1)) for i in range(5)]  # equal run times
    path = tmp_path / "t.swf"
    path.write_text(swf_text(rows))
    workload, _ = convert(swf_trace(read_swf(path)))
    assert [job["profile"] for job in workload["jobs"]] == ["1", "2", "3", "4", "5"]
    assert set(workload["profiles"]) == {"1", "2", "3", "4", "5"}
    assert all(p == {"type": "delay", "delay": 120} for p in workload["profiles"].values())
    assert np.all([job["profile"] == str(job["id"]) for job in workload["jobs"]])


def test_lublin_workloads_have_per_job_profiles_and_submission_features(tmp_path):
    from schedlab.cli import main
    from schedlab.workload import load_workload

    path = tmp_path / "l.json"
    assert main(["workload", "lublin", "--nodes", "64", "--jobs", "300", "--seed", "2", "-o", str(path)]) == 0
    workload = load_workload(path)
    assert all(job.profile == job.name for job in workload.jobs) and len(workload.profiles) == 300
    # the job type (batch or interactive) is chosen by the user at submission
    assert {key for job in workload.jobs for key in job.extra} == {"queue"}


def test_our_schedulers_never_receive_profiles_through_the_protocol():
    """Real Batsim sends every profile, delay included, in SIMULATION_BEGINS: an external decision
    process can read run times there (the protocol gives them; docs/design.md). Ours cannot: `serve`
    hands the hooks only the platform's resource names and JOB_SUBMITTED's job objects."""
    from schedlab.model import Job, JobState, Platform
    from schedlab.protocol.server import DecisionServer
    from schedlab.schedulers.easy import EasyBackfilling
    from tests.helpers.data import BATSIM_DATA

    lines = [json.loads(line) for line in
             (BATSIM_DATA / "pybatsim-easyBackfill_small_platform_test_delays.jsonl").read_text().splitlines()]
    inbound = [line["raw"] for line in lines if line["dir"] == "batsim->sched"]
    begins = json.loads(inbound[0])["events"][0]["data"]
    assert any("delay" in p for profiles in begins["profiles"].values() for p in profiles.values())
    seen = []

    class Spy(EasyBackfilling):
        def __getattribute__(self, name):
            attribute = super().__getattribute__(name)
            if name.startswith("on_"):
                def hook(*args, **kwargs):
                    seen.extend(args)
                    return attribute(*args, **kwargs)
                return hook
            return attribute

    server = DecisionServer(Spy())
    for raw in inbound:
        server.handle(raw)
    assert seen and {type(arg) for arg in seen} <= {Platform, Job, str, JobState, float, tuple, list}
    for arg in seen:
        if isinstance(arg, Platform):
            assert set(arg.__slots__) == {"resource_names", "source", "message_time_s"}  # never a job's
        if isinstance(arg, Job):
            assert not set(arg.extra) & {"delay", "profiles", "runtime", "run_time"}
