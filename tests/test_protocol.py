"""The protocol layer against real Batsim 4.2.1 captures, and both sides over loopback ZeroMQ."""

from __future__ import annotations

import json
import sys

import pytest
from procset import ProcSet

from schedlab.engine import Engine
from schedlab.errors import ProtocolError, SchedulerFailure
from schedlab.model import Platform
from schedlab.outputs import job_row
from schedlab.protocol.client import ExternalDecisionProcess
from schedlab.protocol.messages import (
    JobCompleted,
    JobSubmitted,
    SimulationBegins,
    SimulationEnds,
    parse_message,
    parse_reply,
)
from schedlab.protocol.server import DecisionServer
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate
from tests.helpers.data import BATSIM_DATA

CAPTURES = ["batsched-easy_bf_small_platform_test_various_profile_types.jsonl",
            "pybatsim-easyBackfill_small_platform_test_delays.jsonl"]


def load_capture(name):
    path = BATSIM_DATA / name
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("name", CAPTURES)
def test_every_captured_message_parses(name):
    lines = load_capture(name)
    kinds = set()
    for line in lines:
        if line["dir"] == "batsim->sched":
            message = parse_message(line["raw"])
            kinds.update(type(e).__name__ for e in message.events)
            for event in message.events:
                assert event.timestamp <= message.now
        else:
            now, decisions = parse_reply(line["raw"])
            assert all(ts == now for ts, _ in decisions)
    assert {"SimulationBegins", "JobSubmitted", "JobCompleted", "SimulationEnds", "Notify"} <= kinds
    first = parse_message(lines[0]["raw"]).events[0]
    assert isinstance(first, SimulationBegins) and first.platform.resource_names[0] == "Bourassa"


@pytest.mark.parametrize("name", CAPTURES)
def test_replaying_captured_batsim_messages_into_serve_gives_legal_replies(name):
    """Drive our REP side with what real Batsim sent; every reply must be well-formed and legal,
    and on these captures our EASY makes the very decisions the reference scheduler made."""
    lines = load_capture(name)
    server = DecisionServer(create_scheduler("easy"))
    res = {}
    for index, line in enumerate(lines):
        if line["dir"] != "batsim->sched":
            continue
        message = parse_message(line["raw"])
        for event in message.events:
            if isinstance(event, JobSubmitted):
                res[event.job.id] = event.job.res
        reply = server.handle(line["raw"])
        now, decisions = parse_reply(reply)
        assert now >= message.now
        for ts, decision in decisions:
            assert ts == now
            if hasattr(decision, "alloc"):
                assert len(decision.alloc) == res[decision.job_id]
                assert decision.alloc.max < server.platform.nb_resources
            if hasattr(decision, "at_s"):
                assert decision.at_s > now
        _, expected = parse_reply(lines[index + 1]["raw"])
        assert [d for _, d in decisions] == [d for _, d in expected], f"message seq {line['seq']}"
    assert server.finished


def test_malformed_and_out_of_order_messages_are_one_line_errors():
    server = DecisionServer(create_scheduler("fcfs"))
    with pytest.raises(ProtocolError, match="malformed JSON"):
        server.handle(b"{not json")
    with pytest.raises(ProtocolError, match="first message must carry SIMULATION_BEGINS"):
        server.handle(json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, "type": "REQUESTED_CALL", "data": {}}]}))
    with pytest.raises(ProtocolError, match="earlier than the previous"):
        parse_message(json.dumps({"now": 5, "events": [
            {"timestamp": 3, "type": "REQUESTED_CALL", "data": {}},
            {"timestamp": 2, "type": "REQUESTED_CALL", "data": {}}]}))
    with pytest.raises(ProtocolError, match="after the message's now"):
        parse_message(json.dumps({"now": 1, "events": [{"timestamp": 2, "type": "REQUESTED_CALL", "data": {}}]}))
    with pytest.raises(ProtocolError, match="unknown type"):
        parse_message(json.dumps({"now": 1, "events": [{"timestamp": 1, "type": "BOGUS", "data": {}}]}))


def test_scheduler_exception_names_event_job_and_time():
    class Exploding:
        name = "exploding"

        def on_simulation_begins(self, platform, now):
            pass

        def on_job_submitted(self, job, now):
            raise KeyError("boom")

        def decide(self, now):
            return []

    begins = load_capture(CAPTURES[1])[0]["raw"]
    server = DecisionServer(Exploding())
    server.handle(begins)
    submit = {"now": 3.0, "events": [{"timestamp": 3.0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "w0!7", "job": {"id": "w0!7", "subtime": 3, "walltime": 10, "res": 1, "profile": "p"}}}]}
    with pytest.raises(SchedulerFailure, match=r"'exploding' failed on JobSubmitted for job 'w0!7' at t=3\.0"):
        server.handle(json.dumps(submit))


def test_engine_drives_our_own_serve_process_over_zeromq_identically(tmp_path):
    """REQ side (embedded engine) <-> REP side (`schedlab serve` in another process)."""
    workload = generate(nb_jobs=400, nb_resources=32, seed=7)
    platform = Platform.homogeneous(32)
    local = Engine(platform, workload, create_scheduler("easy"))
    local.run()
    record = tmp_path / "run.jsonl"
    external = ExternalDecisionProcess(f"{sys.executable} -m schedlab serve easy --socket {{socket}}",
                                       workload=workload, timeout_s=30, record_path=str(record))
    try:
        remote = Engine(platform, workload, external)
        remote.run()
    finally:
        external.close()
    rows = lambda e: [job_row(e.records[j]) for j in e.finished]  # noqa: E731
    assert rows(remote) == rows(local)
    assert external.process.returncode == 0
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    assert lines[0]["dir"] == "batsim->sched" and lines[1]["dir"] == "sched->batsim"
    kinds = [type(e) for line in lines if line["dir"] == "batsim->sched" for e in parse_message(line["raw"]).events]
    assert kinds.count(JobSubmitted) == 400 and kinds.count(JobCompleted) == 400 and kinds[-1] is SimulationEnds


def test_external_process_that_dies_is_a_clear_error():
    workload = generate(nb_jobs=5, nb_resources=4, seed=1)
    external = ExternalDecisionProcess(f"{sys.executable} -c 'import sys; sys.exit(3)' {{socket}}",
                                       workload=workload, timeout_s=10)
    try:
        with pytest.raises(ProtocolError, match="exited with code 3"):
            Engine(Platform.homogeneous(4), workload, external).run()
    finally:
        external.close()


def test_execute_alloc_roundtrip():
    _, decisions = parse_reply(json.dumps({"now": 1.5, "events": [
        {"timestamp": 1.5, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-3 7"}}]}))
    assert decisions[0][1].alloc == ProcSet((0, 3), 7)
