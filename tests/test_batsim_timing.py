"""`--timing batsim`: Batsim 4.2.1's message timing in the embedded engine.

The unit tests below need no Batsim; tests/test_batsim_timing_real.py compares jobs.csv with real
batsim's, byte for byte (marker `batsim`).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedlab.batsim_network import message_routes
from schedlab.engine_batsim import BatsimTimedEngine, batsim_now
from schedlab.errors import InputError, SimulationError
from schedlab.model import CallMeLater, Execute, JobState, Kill
from schedlab.outputs import job_row
from schedlab.platform import load_platform
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import all_schedulers, create_scheduler
from schedlab.schedulers.fcfs import FCFS
from tests.conftest import BATSIM_DATA, make_workload

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [ROOT / "platforms" / f"{name}.xml" for name in ("lublin256", "marconi100", "constrained512")]
LM = 0.0006000000000000001  # master -> master: 50 us up + 500 us backbone + 50 us down
LC = 0.0016  # compute -> master: 50 + 500 + 500 (zone backbone) + 500 + 50 us


def platform_file(tmp_path: Path, nb_res: int) -> Path:
    path = tmp_path / f"c{nb_res}.xml"
    path.write_text(cluster_xml(nb_res))
    return path


def run(path: Path, specs, scheduler) -> BatsimTimedEngine:
    engine = BatsimTimedEngine(load_platform(path), make_workload(specs), scheduler, routes=message_routes(path))
    engine.run()
    return engine


@pytest.mark.parametrize("path", [*SHIPPED, BATSIM_DATA / "cluster512.xml"], ids=lambda p: p.stem)
def test_routes_of_the_platforms_are_batsims(path):
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    routes = message_routes(path)
    assert routes.master.latency_s == LM and routes.master.rate_bytes_per_s == 125e6
    assert {r.latency_s for r in routes.resources} == {LC}
    assert len(routes.resources) == load_platform(path).nb_resources


@pytest.mark.parametrize(("xml", "words"), [
    ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>', "<host>"),
    ('<zone id="z" routing="Floyd"><cluster id="c" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="1GBps" '
     'lat="1us"/></zone>', "routing 'Floyd'"),
    ('<zone id="z" routing="Full"><cluster id="c" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="1GBps" '
     'lat="1us" topology="TORUS" topo_parameters="2,1"/></zone>', "topology"),
])
def test_what_is_not_modelled_is_refused_with_its_line(tmp_path, xml, words):
    path = tmp_path / "p.xml"
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n  {xml}\n</platform>\n")
    with pytest.raises(InputError) as caught:
        message_routes(path)
    assert words in str(caught.value) and "p.xml" in str(caught.value)
    assert ":3" in str(caught.value) or "line 3" in str(caught.value)


def test_the_cli_refuses_before_any_work(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                    "<host id=\"a\" speed=\"1Gf\"/>\n</zone>\n</platform>\n")
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res":1,"jobs":[{"id":1,"subtime":0,"res":1,"profile":"p"}],'
                        '"profiles":{"p":{"type":"delay","delay":5}}}')
    done = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-p", str(path), "-w", str(workload),
                           "-s", "fcfs", "--timing", "batsim", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "<host>" in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_hand_computed_schedule(tmp_path):
    """Two jobs, FCFS. SIMULATION_BEGINS is answered empty; the submitter's HELLO (Lm), the reply's
    SCHED_READY (2 Lm) and the first JOB_SUBMITTED (3 Lm) reach the server one after the other; the
    EXECUTE_JOB answering it takes one more Lm: a starts at 4 Lm + 4 x 8 ns. The submitter took
    its clock (Lm) before that 2 Lm put, so it wakes for b at 5 + 2 Lm; b's group reaches the server
    at 5 + 3 Lm, but the submitter's BYE is already queued behind it, so the server waits for it
    (5 + 4 Lm) before calling the scheduler: b starts at 5 + 5 Lm. Each job ends `delay` after its
    start."""
    engine = run(platform_file(tmp_path, 2), [("a", 0, 1, 10, None), ("b", 5, 1, 3, None)], FCFS())
    rows = {engine.records[j].job.name: job_row(engine.records[j]).split(",") for j in engine.finished}
    assert engine.finished == ["w0!b", "w0!a"]
    assert rows["a"][8:11] == ["0.002400", "10.000000", "10.002400"]
    assert rows["b"][8:11] == ["5.003000", "3.000000", "8.003000"]
    assert engine.records["w0!a"].start_s == pytest.approx(4 * (LM + 8e-9), abs=1e-15)


def test_the_scheduler_reads_times_as_batsim_prints_them(tmp_path):
    seen = []

    class Spy(FCFS):
        def decide(self, now):
            seen.append(now)
            return super().decide(now)

    run(platform_file(tmp_path, 4), [(str(i), i * 7, 1 + i % 3, 5 + i, None) for i in range(6)], Spy())
    assert seen and all(now == batsim_now(now) for now in seen)
    assert seen == sorted(seen) and len(set(seen)) == len(seen)


class Scripted(FCFS):
    """FCFS that asks for a call 50 s after `victim` starts, and kills it at that call."""

    def __init__(self, victim: str) -> None:
        super().__init__()
        self.victim, self.call_at, self.called, self.killed = victim, None, False, []

    def decide(self, now):
        decisions = super().decide(now)
        if any(type(d) is Execute and d.job_id == self.victim for d in decisions):
            self.call_at = now + 50.0
            decisions.append(CallMeLater(self.call_at))
        if self.called:
            self.called = False
            decisions.append(Kill((self.victim,)))
        return decisions

    def on_requested_call(self, now):
        super().on_requested_call(now)
        self.called = True

    def on_jobs_killed(self, job_ids, now):
        self.killed.extend(job_ids)


def test_calls_and_kills_take_batsims_message_times(tmp_path):
    scheduler = Scripted("w0!a")
    engine = run(platform_file(tmp_path, 2), [("a", 0, 1, 500, None), ("b", 0, 1, 20, None)], scheduler)
    a = engine.records["w0!a"]
    assert a.state is JobState.COMPLETED_KILLED and scheduler.killed == ["w0!a"]
    # the waiter's message reaches the server Lm after the call time, the kill Lm after the answer
    assert a.finish_s == pytest.approx(scheduler.call_at + 2 * (LM + 8e-9), abs=1e-6)
    row = job_row(a).split(",")
    assert row[7] == "COMPLETED_KILLED" and engine.finished[-1] == "w0!a"


def test_a_call_in_the_past_of_batsims_clock_is_refused(tmp_path):
    class Early(FCFS):
        asked = False

        def decide(self, now):
            decisions = super().decide(now)
            if not self.asked and decisions:
                self.asked = True
                decisions.append(CallMeLater(now + 1e-4))  # after `now`, before the message is received
            return decisions

    with pytest.raises(SimulationError, match="awaken in the past"):
        run(platform_file(tmp_path, 2), [("a", 0, 1, 10, None)], Early())


@st.composite
def loaded(draw):
    nb_res = draw(st.integers(1, 6))
    specs, submit = [], 0
    for i in range(draw(st.integers(1, 30))):
        submit += draw(st.sampled_from([0, 0, 1, 3]))
        delay = draw(st.integers(1, 30))
        specs.append((str(i), submit, draw(st.integers(1, nb_res + 1)), delay,
                      draw(st.sampled_from([None, delay, delay + 5, max(delay - 4, 1)]))))
    return nb_res, specs


NAMES = sorted(name for name in all_schedulers() if name not in ("diws",))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=loaded())
def test_schedule_invariants_under_batsim_timing(name, case, tmp_path):
    nb_res, specs = case
    path = platform_file(tmp_path, nb_res)
    first = run(path, specs, create_scheduler(name))
    assert sorted(first.finished) == sorted(first.records)  # each job decided once, one row
    delays = {s[0]: (s[3], s[4]) for s in specs}
    spans = {r: [] for r in range(nb_res)}
    for record in first.records.values():
        job = record.job
        if record.state is JobState.REJECTED:
            assert job.res > nb_res
            continue
        assert record.start_s > job.submit_time_s  # messages take time: never at the submit instant
        delay, walltime = delays[job.name]
        ran = record.finish_s - record.start_s
        if walltime is not None and delay >= walltime:  # killed at the walltime, from the start
            assert record.state is JobState.COMPLETED_WALLTIME_REACHED and ran == pytest.approx(walltime, abs=1e-6)
        else:
            assert record.state is JobState.COMPLETED_SUCCESSFULLY and ran == pytest.approx(delay, abs=1e-6)
        for resource in record.alloc:
            spans[resource].append((record.start_s, record.finish_s))
    for intervals in spans.values():  # no resource double-booked
        intervals.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(intervals))
    again = run(path, specs, create_scheduler(name))  # deterministic: the same rows, in the same order
    assert [job_row(again.records[j]) for j in again.finished] == [job_row(first.records[j]) for j in first.finished]
