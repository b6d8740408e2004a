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
from procset import ProcSet

from schedlab.engine.batsim_network import Route, message_routes
from schedlab.engine.batsim_timed import BatsimTimedEngine, batsim_now
from schedlab.errors import InputError, SimulationError
from schedlab.model import CallMeLater, Execute, JobState, Kill, Reject
from schedlab.outputs import job_row
from schedlab.platform import load_platform
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import Scheduler, all_schedulers, create_scheduler
from schedlab.schedulers.fcfs import FCFS
from schedlab.schedulers.wakeups import MIN_CALL_DELAY_S
from tests.helpers.data import BATSIM_DATA, examples, make_workload

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


TWO_HOSTS = ('<host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" '
             'latency="1us"/>')


@pytest.mark.parametrize(("xml", "words"), [
    ('<zone id="z" routing="Cluster"><zone id="y" routing="Full"><host id="master_host" speed="1Gf"/></zone>'
     '</zone>', "routing=\"Cluster\" zone with sub-zones"),
    ('<zone id="z" routing="Full"><cluster id="c" prefix="a" suffix="" radical="0-2" speed="1Gf" bw="1GBps" '
     'lat="1us" topology="TORUS" topo_parameters="2,2"/></zone>', "Insufficient number of radicals"),
    ('<config id="General"><prop id="network/TCP-gamma" value="1000"/></config>\n  <zone id="z" routing="Full">'
     '<cluster id="c" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/></zone>', "TCP-gamma"),
    ('<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>\n'
     '<link id="l" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/><route src="a" dst="master_host">'
     '<link_ctn id="l"/></route></zone>', "needs direction:4"),
    ('<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>\n'
     '<link id="l" bandwidth="1GBps" latency="1us" bandwidth_file="bw.txt"/></zone>', "bandwidth_file:4"),
    ('<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/><zone id="y" routing="Full">'
     '<host id="a" speed="1Gf"/></zone></zone>', "both sub-zones and hosts"),
    ('<zone id="z" routing="Full"><zone id="x" routing="Full"><host id="master_host" speed="1Gf"/></zone>\n'
     '<zone id="y" routing="Full"><host id="a" speed="1Gf"/></zone></zone>', "no zoneRoute:3"),
    ('<zone id="z" routing="None"><host id="master_host" speed="1Gf"/></zone>', "routing 'None'"),
    ('<zone id="z" routing="Floyd"><host id="master_host" speed="1Gf"/><link id="l" bandwidth="1GBps" '
     'latency="1us"/>\n<route src="master_host" dst="nowhere"><link_ctn id="l"/></route></zone>',
     "'nowhere' is not a netpoint of zone 'z':4"),
    ('<zone id="z" routing="Wifi"><host id="master_host" speed="1Gf"/></zone>', "routing 'Wifi'"),
    (f'<zone id="z" routing="Full">{TWO_HOSTS}\n<bypassRoute src="a" dst="master_host"></bypassRoute></zone>',
     "empty bypass:4"),
    ('<zone id="z" routing="Full">\n<include file="other.xml"/></zone>', "<include>:4"),
    ('<zone id="z" routing="Vivaldi"><host id="master_host" speed="1Gf" coordinates="0 0 0"/>\n'
     '<peer id="p" coordinates="1 1 1" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>', "<peer>:4"),
    (f'<zone id="z" routing="Full">{TWO_HOSTS}<route src="a" dst="master_host"><link_ctn id="l"/></route>\n'
     '<route src="master_host" dst="a"><link_ctn id="l"/></route></zone>', "two routes:4"),
    (f'<zone id="z" routing="Full">{TWO_HOSTS}\n<route src="a" dst="master_host"></route></zone>', "empty route:4"),
    (f'<zone id="z" routing="Full">{TWO_HOSTS}\n<route src="a" dst="master_host"><link_ctn id="l" '
     'direction="UP"/></route></zone>', "not split-duplex:4"),
    ('<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>\n'
     '<link id="l" bandwidth="0" latency="1us"/><route src="a" dst="master_host"><link_ctn id="l"/></route>'
     '</zone>', "no bandwidth:4"),
    ('<zone id="z" routing="Full"><host id="master_host" speed="1Gf"/>\n<host id="b" speed="1Gf">'
     '<prop id="role" value="master"/></host></zone>', "exactly one master host:4"),
    (f'<zone id="z" routing="Full"><zone id="x" routing="Full">{TWO_HOSTS}</zone>'
     '<zone id="y" routing="Full"><host id="b" speed="1Gf"/></zone>\n'
     '<zoneRoute src="x" dst="y" gw_src="b" gw_dst="a"><link_ctn id="l"/></zoneRoute></zone>',
     "gateway 'b' is no host or router of zone 'x':4"),
    (f'<zone id="z" routing="Full"><zone id="x" routing="Full">{TWO_HOSTS}</zone>'
     '<zone id="y" routing="Full"><host id="b" speed="1Gf"/></zone>\n'
     '<zoneRoute src="x" dst="y" gw_src="a" gw_dst="a"><link_ctn id="l"/></zoneRoute></zone>',
     "gateway 'a' is no host or router of zone 'y':4"),
])
def test_what_is_not_modelled_is_refused_with_its_line(tmp_path, xml, words):
    path = tmp_path / "p.xml"
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n  {xml}\n</platform>\n")
    with pytest.raises(InputError) as caught:
        message_routes(path)
    words, _, line = words.partition(":")
    assert words in str(caught.value) and f"p.xml:{line or 3}:" in str(caught.value)


def platform_with_master_role(tmp_path, role: str) -> Path:
    path = tmp_path / "p.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
                    '  <config id="General"><prop id="contexts/stack-size" value="16"/></config>\n'
                    '  <zone id="z" routing="Full">\n'
                    f'    <cluster id="m" prefix="m" suffix="" radical="0" speed="1Gf" bw="1GBps" lat="1us">'
                    f'<prop id="role" value="{role}"/></cluster>\n'
                    '    <cluster id="c" prefix="h" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"/>\n'
                    '    <link id="l" bandwidth="1GBps" latency="1us"/>\n'
                    '    <zoneRoute src="c" dst="m" gw_src="hc_router" gw_dst="mm_router">'
                    '<link_ctn id="l"/></zoneRoute>\n'
                    "  </zone>\n</platform>\n")
    return path


def test_roles_are_read_as_batsim_does(tmp_path):
    """A stack-size <config> changes no time; a `role` prop holds one role (Batsim 4.2.1's
    permissions.cpp aborts on a list), and Batsim adds `master` itself to the host named
    master_host, so a role prop there makes it abort too."""
    path = platform_with_master_role(tmp_path, "master")
    routes = message_routes(path)
    assert len(routes.resources) == load_platform(path).nb_resources == 4
    with pytest.raises(InputError, match="takes one of") as caught:
        message_routes(platform_with_master_role(tmp_path, "storage, master"))
    assert "p.xml:5:" in str(caught.value)
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
                    '<host id="a" speed="1Gf"/>\n<host id="master_host" speed="1Gf"><prop id="role" value="master"/>'
                    "</host>\n</zone></platform>\n")
    with pytest.raises(InputError, match="role prop") as caught:
        message_routes(path)
    assert "p.xml:4:" in str(caught.value)


def test_the_python_api_needs_a_platform_file():
    from schedlab.model import Platform
    from schedlab.runs import simulate

    with pytest.raises(ValueError, match="platform file"):
        simulate(Platform.homogeneous(2), make_workload([("a", 0, 1, 5, None)]), create_scheduler("fcfs"), None,
                 timing="batsim")


def test_the_cli_refuses_before_any_work(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
                    "<host id=\"a\" speed=\"1Gf\" state_file=\"s.txt\"/>\n</zone>\n</platform>\n")
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res":1,"jobs":[{"id":1,"subtime":0,"res":1,"profile":"p"}],'
                        '"profiles":{"p":{"type":"delay","delay":5}}}')
    done = subprocess.run([sys.executable, "-m", "schedlab", "simulate", "-p", str(path), "-w", str(workload),
                           "-s", "fcfs", "--timing", "batsim", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "state_file" in done.stderr
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


class CallAtSeventeenDigits(FCFS):
    """FCFS that starts nothing before its call at 26462.444038499998 s: 17 significant digits, which
    Batsim reads one ulp high (RapidJSON's default mode, schedlab.protocol.batsim_numbers), and on
    a master whose messages take exactly 0.5 s the ulp moves the start printed at 6 decimals."""

    CALL_S = 26462.444038499998

    def __init__(self) -> None:
        super().__init__()
        self.asked = self.called = False

    def decide(self, now):
        if not self.asked:
            self.asked = True
            return [CallMeLater(self.CALL_S)]
        return super().decide(now) if self.called else []

    def on_requested_call(self, now):
        super().on_requested_call(now)
        self.called = True


#: real Batsim 4.2.1's row for CallAtSeventeenDigits on slow_master.xml (test_batsim_timing_real
#: checks it against Batsim itself)
SEVENTEEN_DIGITS_ROW = ("a,w0,pa,0.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,26463.444039,100.000000,26563.444039,"
                        '26463.444039,26563.444039,265.634440,0,-1.000000,""')


def test_a_call_time_is_read_as_batsim_reads_it(tmp_path, monkeypatch):
    import schedlab.engine.batsim_timed as timed

    platform = HAND_MADE / "slow_master.xml"
    specs = [("a", 0, 1, 100, None)]
    row = job_row(run(platform, specs, CallAtSeventeenDigits()).records["w0!a"])
    assert row == SEVENTEEN_DIGITS_ROW
    monkeypatch.setattr(timed, "reads_as", lambda value: value)  # Python's correctly rounded reading
    assert job_row(run(platform, specs, CallAtSeventeenDigits()).records["w0!a"]) != row


class EchoSeen(Scheduler):
    """Rejects every job with a reason that tells what it saw of it (jobs.csv's metadata column)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def on_job_submitted(self, job, now):
        self.seen.append(Reject(job.id, repr((job.submit_time_s, job.walltime_s, job.extra.get("x")))))

    def decide(self, now):
        decisions, self.seen = self.seen, []
        return decisions


#: times and a float field with more than six decimals (17 digits for b): real Batsim sends "%f"
SEEN_SPECS = [("a", 1.123456789, 1, 10, 100.12345678901234, {"x": 0.1234567890123}),
              ("b", 2.000000499999999, 1, 10, 26462.444038499998, {"x": 7.0})]
#: the metadata column of real Batsim's jobs.csv for EchoSeen on SEEN_SPECS (test_batsim_timing_real)
SEEN_REAL = ["(1.123457, 100.123457, 0.123457)", "(2.0, 26462.444039, 7.0)"]


def test_a_job_is_seen_as_batsim_sends_it(tmp_path, monkeypatch):
    import schedlab.engine.batsim_timed as timed

    engine = run(platform_file(tmp_path, 2), SEEN_SPECS, EchoSeen())
    assert [engine.records[f"w0!{name}"].metadata for name, *_ in SEEN_SPECS] == SEEN_REAL
    monkeypatch.setattr(timed, "as_sent", lambda job: job.view())  # the workload's own values
    engine = run(platform_file(tmp_path, 2), SEEN_SPECS, EchoSeen())
    assert [engine.records[f"w0!{name}"].metadata for name, *_ in SEEN_SPECS] != SEEN_REAL


class KillIfStillRunning(FCFS):
    """Kills job a at a call 50 s after its start unless a's completion has reached it; two
    calls first make the kill reach Batsim a few messages later."""

    def __init__(self) -> None:
        super().__init__()
        self.called, self.seen_done, self.kill_sent = False, set(), False

    def on_job_completed(self, job_id, state, now):
        super().on_job_completed(job_id, state, now)
        self.seen_done.add(job_id)

    def on_requested_call(self, now):
        super().on_requested_call(now)
        self.called = True

    def decide(self, now):
        decisions = super().decide(now)
        if any(type(d) is Execute and d.job_id == "w0!a" for d in decisions):
            decisions.append(CallMeLater(now + 50.0))
        if self.called:
            self.called = False
            if "w0!a" not in self.seen_done:
                self.kill_sent = True
                decisions += [CallMeLater(now + 100), CallMeLater(now + 200), Kill(("w0!a",))]
        return decisions


def test_a_kill_of_a_job_ended_but_not_yet_reported_is_accepted(tmp_path):
    """Batsim accepts KILL_JOB for a completed job until the message reporting its end is sent
    (server.cpp: RUNNING or complete; deleted only after the next send); the killer then has
    nothing to kill and the job keeps its own end."""
    path = platform_file(tmp_path, 2)
    outcomes = set()
    for delay in (49.9990 + k * 1e-4 for k in range(40)):
        scheduler = KillIfStillRunning()
        engine = run(path, [("a", 0, 1, round(delay, 5), None), ("b", 0, 1, 20, None)], scheduler)
        outcomes.add((scheduler.kill_sent, engine.records["w0!a"].state))
    assert (True, JobState.COMPLETED_SUCCESSFULLY) in outcomes  # ended while the kill was on its way
    assert (True, JobState.COMPLETED_KILLED) in outcomes and (False, JobState.COMPLETED_SUCCESSFULLY) in outcomes


class Preempt(Scheduler):
    """Starts a on resource 0 with a call 10 s later, where it kills a and starts b on resource 0
    in the same reply."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting, self.called = [], False

    def on_job_submitted(self, job, now):
        self.waiting.append(job.id)

    def on_job_completed(self, job_id, state, now):
        pass

    def on_requested_call(self, now):
        self.called = True

    def decide(self, now):
        decisions = []
        if "w0!a" in self.waiting:
            self.waiting.remove("w0!a")
            decisions += [CallMeLater(now + 10.0), Execute("w0!a", ProcSet(0))]
        if self.called:
            self.called = False
            self.waiting.remove("w0!b")
            decisions += [Kill(("w0!a",)), Execute("w0!b", ProcSet(0))]
        return decisions


def test_a_killed_jobs_machines_are_free_at_the_kill(tmp_path):
    """Batsim's killer frees the machines when it kills (update_machines_on_job_end), before
    KILLING_DONE reaches the server: an EXECUTE_JOB right behind the kill may use them."""
    engine = run(platform_file(tmp_path, 1), [("a", 0, 1, 100, None), ("b", 0, 1, 5, None)], Preempt())
    a, b = engine.records["w0!a"], engine.records["w0!b"]
    assert a.state is JobState.COMPLETED_KILLED and b.state is JobState.COMPLETED_SUCCESSFULLY
    assert a.finish_s < b.start_s == pytest.approx(a.finish_s + LM, abs=1e-6)


def test_kills_batsim_aborts_on_are_refused(tmp_path):
    class KillWaiting(FCFS):
        def decide(self, now):
            decisions = super().decide(now)
            waiting = [job.id for job in self.queue]
            return [*decisions, Kill(tuple(waiting))] if waiting else decisions

    with pytest.raises(SimulationError, match="SUBMITTED: not being executed nor completed"):
        run(platform_file(tmp_path, 1), [("a", 0, 1, 10, None), ("b", 0, 1, 10, None)], KillWaiting())

    class KillForgotten(FCFS):
        def __init__(self):
            super().__init__()
            self.ended = []

        def on_job_completed(self, job_id, state, now):
            super().on_job_completed(job_id, state, now)
            self.ended.append(job_id)

        def decide(self, now):
            decisions = super().decide(now)
            return [*decisions, Kill(("w0!a",))] if "w0!a" in self.ended else decisions

    with pytest.raises(SimulationError, match="forgotten"):
        run(platform_file(tmp_path, 1), [("a", 0, 1, 10, None), ("b", 0, 1, 10, None)], KillForgotten())


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


def test_calls_come_first_and_early_enough_for_batsim(tmp_path):
    """easy-pp's corrections fire LEAD_S before a prediction that includes Batsim's message
    latencies: a call milliseconds after `now` behind ten EXECUTE_JOBs reached Batsim too late (it
    aborts: 'awaken in the past'). Calls now come first in a reply and at least 10 ms ahead
    (schedulers.wakeups; the cluster's messages take 1.6 ms at most)."""
    user = {"user": "u1"}
    specs = ([("1", 0, 1, 60, 1000, user), ("2", 0, 1, 60, 1000, user)]
             + [(f"x{i}", 100, 1, 60, 1000, user) for i in range(10)] + [("z", 100, 12, 10, 1000, user)])
    replies = []

    class Spy(type(create_scheduler("easy-pp"))):
        def decide(self, now):
            decisions = super().decide(now)
            replies.append((now, decisions))
            return decisions

    engine = run(platform_file(tmp_path, 12), specs, Spy())
    assert all(r.state is JobState.COMPLETED_SUCCESSFULLY for r in engine.records.values())
    calls = [(now, d) for now, ds in replies for d in ds if isinstance(d, CallMeLater)]
    assert calls, "the scenario asks for calls"
    for _now, decisions in replies:
        kinds = [isinstance(d, CallMeLater) for d in decisions]
        assert kinds == sorted(kinds, reverse=True)  # calls first
    assert all(d.at_s >= now + MIN_CALL_DELAY_S for now, d in calls)


@st.composite
def loaded(draw):
    nb_res = draw(st.integers(1, 6))
    specs, submit = [], 0
    for i in range(draw(st.integers(1, 30))):
        submit += draw(st.sampled_from([0, 0, 1, 3]))
        delay = draw(st.integers(1, 30))
        specs.append((str(i), submit, draw(st.integers(1, nb_res + 1)), delay,
                      draw(st.sampled_from([None, delay, delay + 5, max(delay - 4, 1)])),
                      {"user": draw(st.sampled_from(["u1", "u2"]))}))  # histories: predictions, calls
    return nb_res, specs


NAMES = sorted(name for name in all_schedulers() if name not in ("diws", "easy-predicted", "easy-prob"))
#: options a scheduler cannot run without (the `policy` scheduler's policy: tests/data/policies.py)
NEEDED = {"policy": {"policy": str(Path(__file__).resolve().parent / "data" / "policies.py") + ":shortest_requested"}}


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=loaded())
def test_schedule_invariants_under_batsim_timing(name, case, tmp_path):
    nb_res, specs = case
    path = platform_file(tmp_path, nb_res)
    first = run(path, specs, create_scheduler(name, NEEDED.get(name)))
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
    again = run(path, specs, create_scheduler(name, NEEDED.get(name)))  # deterministic: the same rows, in order
    assert [job_row(again.records[j]) for j in again.finished] == [job_row(first.records[j]) for j in first.finished]


HAND_MADE = Path(__file__).resolve().parent / "data" / "batsim-timing" / "platforms"


def test_routes_of_the_hand_made_platforms_by_hand():
    """star (Floyd): a host's link then the master's, 20 us; two-level tree: the root's zoneRoute
    (uplink, core) is summed first, then the rack's Dijkstra route, then the master's zone; 4-core
    hosts: a split-duplex link taken UP then a shared one. A host talking to itself in a zone of
    hosts without a route to itself uses SimGrid's loopback (10 GBps, no latency)."""
    star = message_routes(HAND_MADE / "star.xml")
    assert star.master == Route(0.0, 10e9)
    lat = [50, 75, 20, 130, 60, 95, 40, 110]  # n0..n7, numbered by name
    assert [r.latency_s for r in star.resources] == pytest.approx([(x + 20) * 1e-6 for x in lat], abs=1e-18)
    assert [r.rate_bytes_per_s for r in star.resources] == [(1 + i % 3) * 1e9 / 8 for i in range(8)]
    tree = message_routes(HAND_MADE / "two_level_tree.xml")
    assert tree.master == Route(0.0, 10e9)
    us = 1e-6  # SimGrid reads "100us" as 100 * 1e-6
    r0n0 = 100 * us + 5 * us + 30 * us + 15 * us
    r1n5 = 250 * us + 5 * us + (30 + 35 + 50) * us + 15 * us
    assert tree.resources[0] == Route(r0n0, 125e6)  # r0n0: through the 1 Gbps host link
    assert tree.resources[11] == Route(r1n5, 125e6)
    cores = message_routes(HAND_MADE / "cores4.xml")
    assert cores.master == Route(0.0, 10e9)
    assert cores.resources[2] == Route(45 * us + 8 * us, 4e9 / 8)  # c2: sd2 (4 Gbps, 45 us) then shared


@pytest.mark.parametrize("routing", ["Floyd", "Dijkstra"])
def test_shortest_routes_count_links_not_hops(tmp_path, routing):
    """Floyd and Dijkstra zones weigh a route by its number of links: two one-link hops (through the
    router) beat one declared three-link route, whatever the latencies."""
    path = tmp_path / "p.xml"
    path.write_text(f"""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="{routing}">
  <host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><router id="r"/>
  <link id="slow" bandwidth="1GBps" latency="1ms"/><link id="fast" bandwidth="1GBps" latency="1us"/>
  <route src="a" dst="master_host"><link_ctn id="fast"/><link_ctn id="fast"/><link_ctn id="fast"/></route>
  <route src="a" dst="r"><link_ctn id="slow"/></route><route src="r" dst="master_host"><link_ctn id="slow"/></route>
</zone></platform>
""")
    assert message_routes(path).resources[0].latency_s == pytest.approx(2e-3, abs=1e-15)


def test_a_shared_link_crossed_twice_halves_the_rate_and_a_fatpipe_does_not(tmp_path):
    """L07 expands a flow's variable once per crossing: a SHARED link crossed twice bounds it at half
    its bandwidth, a FATPIPE link at its bandwidth (checked on SimGrid 3.32 itself; real Batsim's
    jobs.csv on mesh_*.xml cannot see a 8 ns difference)."""
    mesh = message_routes(HAND_MADE / "mesh_floyd.xml")
    assert mesh.resources[6].rate_bytes_per_s == 1e9 / 8 / 2  # h6: "twice" (1 Gbps) twice
    path = tmp_path / "p.xml"
    path.write_text("""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
  <host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>
  <link id="f" bandwidth="1GBps" latency="1us" sharing_policy="FATPIPE"/>
  <route src="a" dst="master_host"><link_ctn id="f"/><link_ctn id="f"/></route>
</zone></platform>
""")
    assert message_routes(path).resources[0] == Route(2e-6, 1e9)


def test_the_line_named_is_the_element_at_fault(tmp_path):
    """Lines come from the parser, not from searching the text: a second link of the same name is
    reported at its own line, and an attribute's name inside an earlier comment misleads nothing."""
    path = tmp_path / "p.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
                    "<!-- state_file=\"x\" -->\n"
                    '<host id="master_host" speed="1Gf"/>\n<link id="l" bandwidth="1GBps" latency="1us"/>\n'
                    '<link id="l" bandwidth="2GBps" latency="1us"/>\n</zone></platform>\n')
    with pytest.raises(InputError, match="two links named 'l'") as caught:
        message_routes(path)
    assert caught.value.line == 6


def test_what_simgrid_reads_differently_from_the_words(tmp_path):
    """A FULLDUPLEX cluster is split-duplex (master to itself: up, backbone, down), routing names
    are matched in any case (DijkstraCache, full), and a host_link in a Vivaldi zone is ignored."""
    path = tmp_path / "p.xml"
    cluster = ('<cluster id="c" prefix="h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="10us" '
               'bb_bw="1GBps" bb_lat="100us" sharing_policy="{}"/>')
    for policy, master in (("FULLDUPLEX", 120e-6), ("SHARED", 110e-6)):
        path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"full\">"
                        + cluster.format(policy).replace('radical="0-1"', 'radical="0-1" ') +
                        "</zone></platform>\n")
        routes = message_routes(path, master_host="h0")
        assert routes.master.latency_s == pytest.approx(master, abs=1e-18)
    path.write_text("""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="DijkstraCache">
  <host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="7us"/>
  <route src="a" dst="master_host"><link_ctn id="l"/></route>
</zone></platform>
""")
    assert message_routes(path).resources[0].latency_s == 7e-6
    path.write_text("""<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Vivaldi">
  <host id="master_host" speed="1Gf" coordinates="0 0 0"/><host id="a" speed="1Gf" coordinates="3 4 0"/>
  <link id="up" bandwidth="1GBps" latency="1ms"/><link id="down" bandwidth="1GBps" latency="1ms"/>
  <host_link id="a" up="up" down="down"/>
</zone></platform>
""")
    assert message_routes(path).resources[0] == Route(0.005, float("inf"))  # 5 ms of distance, no link
