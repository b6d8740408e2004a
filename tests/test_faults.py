"""Faults end cleanly: one line, non-zero exit, bounded time, nobody left waiting."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
import zmq

from schedlab.platforms.generate import cluster_xml
from schedlab.protocol.client import free_loopback_port
from schedlab.workloads.synthetic import generate
from tests.helpers.real_batsim import find_tool

BROKEN = """
import sys
from schedlab.cli import main
from schedlab.schedulers.base import SCHEDULERS
from schedlab.schedulers.easy import EasyBackfilling

class Broken(EasyBackfilling):
    def on_job_submitted(self, job, now):
        if job.name == "3":
            raise ZeroDivisionError("division by zero")
        super().on_job_submitted(job, now)

Broken.__module__ = sys.argv[2]  # schedlab's (a bug of ours) or a user's module (its failure)
SCHEDULERS["broken"] = Broken
sys.exit(main(["serve", "broken", "--socket", sys.argv[1]]))
"""

BEGINS = {"now": 0.0, "events": [{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
    "nb_resources": 2, "nb_compute_resources": 2, "compute_resources": [
        {"id": 0, "name": "a", "state": "idle", "properties": {}},
        {"id": 1, "name": "b", "state": "idle", "properties": {}}]}}]}


def batsim_inputs(tmp_path, nb_jobs: int, nb_resources: int) -> tuple[str, str]:
    workload = generate(nb_jobs=nb_jobs, nb_resources=nb_resources, seed=4)
    (tmp_path / "w.json").write_text(json.dumps(workload.to_json()))
    (tmp_path / "p.xml").write_text(cluster_xml(nb_resources))
    return str(tmp_path / "p.xml"), str(tmp_path / "w.json")


def serve(endpoint: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "schedlab", "serve", "easy", "--socket", endpoint, *extra],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE)


def talk(endpoint: str, messages: list[bytes]) -> list[bytes]:
    context = zmq.Context.instance()
    sock = context.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 10_000)
    sock.connect(endpoint)
    replies = []
    try:
        for message in messages:
            sock.send(message)
            replies.append(sock.recv())
    finally:
        sock.close()
    return replies


@pytest.mark.parametrize(("bad", "fragment"), [
    (b"{oops", "malformed JSON"),
    (json.dumps({"now": 5.0, "events": [{"timestamp": 4.0, "type": "REQUESTED_CALL", "data": {}},
                                         {"timestamp": 3.0, "type": "REQUESTED_CALL", "data": {}}]}).encode(),
     "earlier than the previous"),
])
def test_malformed_or_out_of_order_message_is_a_one_line_error(bad, fragment):
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    process = serve(endpoint)
    replies = talk(endpoint, [json.dumps(BEGINS).encode(), bad])
    assert json.loads(replies[0])["events"] == []
    assert replies[1] == b""  # not JSON: a real Batsim aborts instead of waiting forever
    _, err = process.communicate(timeout=10)
    lines = err.decode().strip().splitlines()
    assert process.returncode == 1 and len(lines) == 1 and fragment in lines[0] and "Traceback" not in lines[0]


def test_silent_batsim_hits_the_serve_timeout():
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    process = serve(endpoint, "--timeout", "1")
    start = time.monotonic()
    _, err = process.communicate(timeout=20)
    assert process.returncode == 1 and "no message from batsim for 1 s" in err.decode()
    assert time.monotonic() - start < 15


@pytest.mark.batsim
def test_batsim_killed_mid_run_makes_serve_exit_quickly(tmp_path):
    batsim = find_tool("batsim")
    platform, workload = batsim_inputs(tmp_path, 20_000, 16)  # long enough on any machine
    port = free_loopback_port()
    record = tmp_path / "run.jsonl"
    process = serve(f"tcp://127.0.0.1:{port}", "--record", str(record))
    peer = subprocess.Popen([batsim, "-p", platform, "-w", workload, "-e", str(tmp_path / "out"),
                             "-s", f"tcp://localhost:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60

    def recorded() -> int:  # the record grows under a temporary name until the exchange ends
        return sum(part.read_text().count("\n") for part in tmp_path.glob(".run.jsonl.*.part"))

    while time.monotonic() < deadline and recorded() < 20:
        time.sleep(0.05)  # wait until the two are really talking
    assert peer.poll() is None, "batsim finished before it could be killed; use a longer workload"
    peer.kill()
    peer.wait()
    killed_at = time.monotonic()
    _, err = process.communicate(timeout=30)
    assert process.returncode == 1 and "batsim disconnected" in err.decode()
    assert time.monotonic() - killed_at < 10
    assert err.decode().count("\n") == 1
    # an interrupted exchange never takes the record's name: it lies beside it, whole up to the kill
    assert not record.exists() and (tmp_path / "run.incomplete.jsonl").read_text().count("\n") >= 20


@pytest.mark.batsim
@pytest.mark.parametrize(("module", "code", "said"), [
    ("schedlab.schedulers.broken", 3, "internal error"), ("mine.broken", 1, "error: scheduler 'broken' raised")])
def test_scheduler_exception_names_job_and_event_and_batsim_does_not_hang(tmp_path, module, code, said):
    batsim = find_tool("batsim")
    platform, workload = batsim_inputs(tmp_path, 20, 4)
    port = free_loopback_port()
    process = subprocess.Popen([sys.executable, "-c", BROKEN, f"tcp://127.0.0.1:{port}", module],
                               stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    peer = subprocess.run([batsim, "-p", platform, "-w", workload, "-e", str(tmp_path / "out"),
                           "-s", f"tcp://localhost:{port}"],
                          capture_output=True, timeout=60)
    _, err = process.communicate(timeout=30)
    message = err.decode().strip()
    assert process.returncode == code and message.count("\n") == 0 and said in message
    assert "failed on JobSubmitted for job 'w0!3'" in message and "ZeroDivisionError" in message
    assert peer.returncode != 0  # batsim aborted on the non-JSON reply instead of waiting forever
