"""Platform XML numbering, Batsim JSON workloads and their one-line errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedlab.errors import InputError
from schedlab.platform import load_platform, parse_platform_xml
from schedlab.platforms.generate import cluster_xml
from schedlab.protocol.jobs import job_from_json, job_to_json
from schedlab.workload import load_workload, parse_workload
from tests.helpers.data import BATSIM_DATA, BATSIM_V4, examples, need_shared


def test_cluster512_ids_are_alphabetical_and_master_excluded():
    platform = load_platform(BATSIM_DATA / "cluster512.xml")
    assert platform.nb_resources == 512
    assert platform.resource_names[:4] == ("a0", "a1", "a10", "a100")
    assert "master_host0" not in platform.resource_names


def test_small_platform_matches_captured_simulation_begins():
    platform = load_platform(BATSIM_DATA / "small_platform.xml")
    capture = BATSIM_DATA / "batsched-easy_bf_small_platform_test_various_profile_types.jsonl"
    first = json.loads(json.loads(capture.read_text().splitlines()[0])["raw"])
    names = [r["name"] for r in first["events"][0]["data"]["compute_resources"]]
    assert list(platform.resource_names) == names  # ids = positions, as Batsim numbered them


@pytest.mark.traces
def test_every_shared_platform_parses():
    folder = need_shared(BATSIM_V4 / "platforms")
    for path in folder.glob("*.xml"):
        assert load_platform(path).nb_resources > 0, path


def test_leading_whitespace_before_xml_declaration_is_accepted():
    text = "\n\n" + cluster_xml(4)
    assert parse_platform_xml(text).nb_resources == 4


@pytest.mark.parametrize("count", [1, 9, 12, 100, 1001])
def test_generated_platform_orders_ids_numerically(count):
    platform = parse_platform_xml(cluster_xml(count))
    width = len(str(count - 1))
    assert platform.resource_names == tuple(f"node{i:0{width}d}" for i in range(count))


def test_shipped_platforms():
    from schedlab.platforms import platform_path
    from schedlab.platforms.generate import machine_xml

    sizes = {"lublin256": 256, "marconi100": 15_680, "constrained512": 512}
    for name, size in sizes.items():
        assert load_platform(platform_path(name)).nb_resources == size
    assert parse_platform_xml(machine_xml(980, 16, resource_per="host")).nb_resources == 980


def test_malformed_xml_names_file_and_line(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<?xml version='1.0'?>\n<platform>\n<zone>\n</platform>\n")
    with pytest.raises(InputError, match=r"bad\.xml:4: malformed XML"):
        load_platform(path)


def test_bad_radical_is_reported_with_field(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text('<platform version="4.1">\n<zone id="z" routing="Full">\n'
                    '<cluster id="c" prefix="a" suffix="" radical="5-2" speed="1f" bw="1Bps" lat="0"/>\n'
                    '</zone></platform>\n')
    with pytest.raises(InputError, match=r"p\.xml:3: field 'radical'"):
        load_platform(path)


def test_workload_roundtrip_keeps_extra_fields_and_batsim_order():
    doc = {"nb_res": 4, "jobs": [
        {"id": 10, "subtime": 5, "res": 1, "walltime": 30, "profile": "p", "user": "alice", "mem": 2},
        {"id": 2, "subtime": 5, "res": 2, "walltime": -1, "profile": "p"},
        {"id": "x", "subtime": 0, "res": 4, "profile": "p"}],
        "profiles": {"p": {"type": "delay", "delay": 3}}}
    workload = parse_workload(json.dumps(doc))
    # Batsim: by submission time, then full id as a string ("w0!10" < "w0!2").
    assert [j.id for j in workload.jobs] == ["w0!x", "w0!10", "w0!2"]
    job = workload.jobs[1]
    assert job.extra == {"user": "alice", "mem": 2} and job.walltime_s == 30.0
    assert workload.jobs[2].walltime_s is None and workload.jobs[0].walltime_s is None
    again = parse_workload(json.dumps(workload.to_json()))
    assert again.jobs == workload.jobs
    assert [dict(j.extra) for j in again.jobs] == [dict(j.extra) for j in workload.jobs]


def test_job_json_roundtrip_through_message_form():
    job = job_from_json({"id": "w0!7", "subtime": 1.5, "res": 3, "walltime": 60, "profile": "p", "qos": "hi"})
    assert job_from_json(job_to_json(job)) == job
    assert job.name == "7" and job.workload == "w0"


@pytest.mark.parametrize(("job", "field"), [
    ({"id": 1, "subtime": 0, "res": 0, "walltime": 5, "profile": "p"}, "res"),
    ({"id": 1, "subtime": 0, "res": 1, "walltime": 0, "profile": "p"}, "walltime"),
    ({"id": 1, "subtime": "soon", "res": 1, "profile": "p"}, "subtime"),
    ({"id": 1, "subtime": 0, "res": 1, "profile": "missing"}, "profile"),
])
def test_bad_jobs_give_file_line_field(tmp_path, job, field):
    path = tmp_path / "w.json"
    doc = {"jobs": [{"id": 0, "subtime": 0, "res": 1, "profile": "p"}, job],
           "profiles": {"p": {"type": "delay", "delay": 1}}}
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(InputError) as info:
        load_workload(path)
    message = str(info.value)
    assert message.startswith(f"{path}:") and f"field '{field}'" in message and "\n" not in message
    assert info.value.line is not None and info.value.line > 2


def test_duplicate_ids_and_malformed_json(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"jobs": [\n{"id": 1, "subtime": 0, "res": 1, "profile": "p"},\n'
                    '{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],\n'
                    '"profiles": {"p": {"type": "delay", "delay": 1}}}')
    with pytest.raises(InputError, match=r"w\.json:3: field 'id': duplicate"):
        load_workload(path)
    path.write_text('{"jobs": [\n{"id": 1,, }]}')
    with pytest.raises(InputError, match=r"w\.json:2: malformed JSON"):
        load_workload(path)


@pytest.mark.traces
def test_every_shared_workload_loads():
    folder = need_shared(BATSIM_V4 / "workloads")
    for path in folder.glob("*.json"):
        assert load_workload(path).jobs, path


@settings(max_examples=examples(200), deadline=None)
@given(ids=st.sets(st.integers(0, 300), max_size=40))
def test_jobs_csv_allocation_text_equals_procsets_own(ids):
    from procset import ProcSet

    from schedlab.outputs import _alloc

    allocation = ProcSet(*ids)
    assert _alloc(allocation) == str(allocation)
