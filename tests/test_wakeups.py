"""Wake-ups Batsim never refuses (schedulers.wakeups): a CALL_ME_LATER is asked at least four message
times ahead, the message time coming from the platform or bounded from the gaps between replies and
requests. On masters whose messages take 0.5 s and 2 s, easy-pp with every correction runs where
the former 10 ms rule made Batsim abort; real Batsim agrees (marker `batsim`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from schedlab.engine.batsim_network import message_routes
from schedlab.engine.batsim_timed import BatsimTimedEngine, slowest_message_s
from schedlab.errors import SimulationError
from schedlab.model import CallMeLater, Platform
from schedlab.platform import load_platform
from schedlab.schedulers.base import create_scheduler
from schedlab.schedulers.easy_pp import EasyPlusPlus
from schedlab.schedulers.wakeups import CALL_MARGIN_MESSAGES, MIN_CALL_DELAY_S, WakeupMargin
from tests.helpers.data import make_workload

ROOT = Path(__file__).resolve().parents[1]
SLOW = {name: ROOT / "tests" / "data" / "batsim-timing" / "platforms" / f"{name}.xml"
        for name in ("slow_master", "slow_master_2s")}
CORRECTIONS = ("simple", "power", "tsafrir", "walltime")


def near_call_specs():
    """Two 60 s jobs of one user, then ten more and a wide one: user-last2 predicts 60 s plus the
    message times, so a correction falls due just after each start (tests/test_batsim_timing_real)."""
    from tests.test_batsim_timing_real import easy_pp_cases

    return easy_pp_cases()["near-call"][1]


class TenMilliseconds(EasyPlusPlus):
    """easy-pp with the former rule: calls at least 10 ms ahead, whatever the platform."""

    def on_simulation_begins(self, platform, now):
        super().on_simulation_begins(platform, now)
        self.wakeup_margin.platform_s = 0.0


class Observing(EasyPlusPlus):
    """easy-pp as `serve` without --platform runs it: the message time bounded from replies."""

    def on_simulation_begins(self, platform, now):
        super().on_simulation_begins(platform, now)
        self.wakeup_margin.platform_s = None


def run(platform: Path, scheduler, specs=None) -> tuple[BatsimTimedEngine, list[tuple[float, float]]]:
    calls: list[tuple[float, float]] = []
    decide = scheduler.decide

    def spy(now):
        decisions = decide(now)
        calls.extend((now, d.at_s) for d in decisions if type(d) is CallMeLater)
        return decisions

    scheduler.decide = spy
    engine = BatsimTimedEngine(load_platform(platform), make_workload(specs or near_call_specs(), nb_res=16),
                               scheduler, routes=message_routes(platform))
    engine.run()
    return engine, calls


def test_the_margin_is_the_platforms_or_the_bound_seen():
    margin = WakeupMargin()
    assert margin.margin_s == MIN_CALL_DELAY_S  # nothing known yet
    margin.replied(10.0, 3)
    margin.request(12.0)  # 3 decisions and SCHED_READY took at most 2 s: 0.5 s a message at most
    assert margin.observed_s == pytest.approx(0.5 + 1e-6 / 4)
    assert margin.margin_s == pytest.approx(CALL_MARGIN_MESSAGES * margin.observed_s)
    margin.replied(12.0, 0)
    margin.request(100.0)  # a longer gap proves less: the least bound stays
    assert margin.observed_s == pytest.approx(0.5 + 1e-6 / 4)
    margin.platform_s = 0.0  # the ideal engine: no message time
    assert margin.margin_s == MIN_CALL_DELAY_S
    margin.platform_s = 2.0
    assert margin.margin_s == CALL_MARGIN_MESSAGES * 2.0


@pytest.mark.parametrize("name", sorted(SLOW))
@pytest.mark.parametrize("correction", CORRECTIONS)
def test_easy_pp_wakeups_are_accepted_on_slow_masters(name, correction):
    message_s = slowest_message_s(message_routes(SLOW[name]))
    engine, calls = run(SLOW[name], create_scheduler("easy-pp", {"correction": correction}))
    assert calls and engine.complete
    assert all(at_s - now >= CALL_MARGIN_MESSAGES * message_s for now, at_s in calls)


def test_the_former_ten_millisecond_rule_makes_batsim_abort_on_a_2s_master():
    with pytest.raises(SimulationError, match="awaken in the past"):
        run(SLOW["slow_master_2s"], TenMilliseconds(correction="power"))


@pytest.mark.parametrize("name", sorted(SLOW))
def test_the_bound_seen_is_safe_without_the_platform(name):
    scheduler = Observing(correction="power")
    engine, calls = run(SLOW[name], scheduler)
    assert calls and engine.complete
    master_s = message_routes(SLOW[name]).master.latency_s
    assert scheduler.wakeup_margin.observed_s >= master_s  # an upper bound of the master's message time


def test_the_ideal_engine_needs_no_margin():
    from schedlab.engine.core import Engine

    platform = load_platform(SLOW["slow_master"])
    scheduler = create_scheduler("easy-pp", {"correction": "power"})
    Engine(platform, make_workload(near_call_specs(), nb_res=16), scheduler).run()
    assert scheduler.wakeup_margin.platform_s == 0.0 and scheduler.wakeup_margin.margin_s == MIN_CALL_DELAY_S


def test_serve_platform_tells_the_scheduler_its_message_time_and_refuses_another_platform():
    import dataclasses

    from schedlab.errors import ProtocolError
    from schedlab.protocol.messages import EventType, encode_message, event, simulation_begins_data
    from schedlab.protocol.server import DecisionServer

    known = dataclasses.replace(load_platform(SLOW["slow_master_2s"]), message_time_s=2.0)
    begins = encode_message(0.0, [event(0.0, EventType.SIMULATION_BEGINS, simulation_begins_data(known, {}, {}))])
    scheduler = create_scheduler("easy-pp")
    DecisionServer(scheduler, platform=known).handle(begins)
    assert scheduler.platform.message_time_s == 2.0 and scheduler.wakeup_margin.margin_s == 8.0
    other = Platform.homogeneous(16)
    begins = encode_message(0.0, [event(0.0, EventType.SIMULATION_BEGINS, simulation_begins_data(other, {}, {}))])
    with pytest.raises(ProtocolError, match="is not the platform batsim runs"):
        DecisionServer(create_scheduler("easy-pp"), platform=known).handle(begins)
    unknown = create_scheduler("easy-pp")
    DecisionServer(unknown).handle(begins)
    assert unknown.platform.message_time_s is None


def test_the_engines_hosted_processes_are_told_the_message_time(tmp_path):
    """An external `serve` hosted by the engine gets the engine's message time (a SIMULATION_BEGINS
    key real Batsim does not send), so it asks the calls the same scheduler asks in-process; with
    the bound from reply gaps, a first gap of 1,000 s made its margin 80 s."""
    from schedlab.cli import main
    from schedlab.engine.core import Engine

    specs = [(name, submit + 1000, *rest) for name, submit, *rest in near_call_specs()]
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload(specs, nb_res=16).to_json()))
    serve = f"{sys.executable} -m schedlab serve easy-pp -O correction=tsafrir --socket {{socket}}"
    assert main(["simulate", "-q", "-p", "16", "-w", str(workload), "--external", serve, "-o", str(tmp_path / "out"),
                 "--record", str(tmp_path / "rec.jsonl")]) == 0
    asked = [event["data"]["timestamp"] for line in (tmp_path / "rec.jsonl").read_text().splitlines()
             for event in json.loads(json.loads(line)["raw"])["events"] if event["type"] == "CALL_ME_LATER"]
    calls: list[float] = []
    scheduler = create_scheduler("easy-pp", {"correction": "tsafrir"})
    decide = scheduler.decide

    def spy(now):
        decisions = decide(now)
        calls.extend(d.at_s for d in decisions if type(d) is CallMeLater)
        return decisions

    scheduler.decide = spy
    Engine(Platform.homogeneous(16), make_workload(specs, nb_res=16), scheduler).run()
    assert asked and asked == calls


def test_serve_refuses_a_platform_it_cannot_time_before_listening(tmp_path, capsys):
    from schedlab.cli import main

    bad = tmp_path / "p.xml"
    bad.write_text(SLOW["slow_master"].read_text().replace('routing="Vivaldi"', 'routing="Wifi"'))
    assert main(["serve", "easy", "--platform", str(bad), "--socket", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "listening" not in err


# ------------------------------------------------------------------ real Batsim


SERVE = """import sys
sys.path.insert(0, {root!r})
from schedlab.protocol.server import serve
import tests.test_wakeups as t
serve(getattr(t, sys.argv[1])(correction="power"), sys.argv[2])
"""


@pytest.mark.batsim
@pytest.mark.slow  # CI's slow group; the default suite has the refusal of the former rule below
@pytest.mark.parametrize(("name", "correction"), [(name, correction) for name in sorted(SLOW)
                                                  for correction in CORRECTIONS])
def test_real_batsim_accepts_easy_pps_wakeups_on_slow_masters(tmp_path, name, correction):
    """`serve --platform` gives real Batsim what `--timing batsim` gives: the same rows."""
    from tests.test_batsim_timing_real import differing, real_rows, simulate_batsim_timing

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload(near_call_specs(), nb_res=16).to_json()))
    argv = ["easy-pp", "-O", f"correction={correction}"]
    real = real_rows(tmp_path, SLOW[name], workload, [sys.executable, "-m", "schedlab", "serve", *argv,
                                                       "--platform", str(SLOW[name]), "--socket", "{socket}"])
    ours = simulate_batsim_timing(tmp_path, SLOW[name], workload, ["-s", *argv])
    assert len(real) == len(near_call_specs()) + 1 and differing(real, ours) == []


@pytest.mark.batsim
def test_real_batsim_accepts_the_bound_seen_and_refuses_the_former_rule(tmp_path):
    from tests.helpers.real_batsim import run_real_batsim

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload(near_call_specs(), nb_res=16).to_json()))
    script = tmp_path / "serve_wakeups.py"
    script.write_text(SERVE.format(root=str(ROOT)))
    rows = run_real_batsim(tmp_path / "observing", SLOW["slow_master_2s"], workload,
                           [sys.executable, str(script), "Observing", "{socket}"])
    assert len(rows) == len(near_call_specs())
    with pytest.raises(AssertionError, match="awaken in the past"):
        run_real_batsim(tmp_path / "former", SLOW["slow_master_2s"], workload,
                        [sys.executable, str(script), "TenMilliseconds", "{socket}"])
