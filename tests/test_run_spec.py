"""One way to start a run (runs.RunSpec): the command line, the API and a campaign's worker
give one run the same description and results; campaigns offer Batsim's message timing."""

from __future__ import annotations

import json

import pandas as pd

from schedlab.api import simulate
from schedlab.cli import main
from schedlab.model import Platform
from schedlab.platforms.generate import cluster_xml
from schedlab.runs import RunSpec
from tests.helpers.cli import one_line_error
from tests.helpers.data import make_workload

SPECS = [(str(i), 7 * i, 1 + i % 4, 30 + 11 * i, 60 + 20 * i) for i in range(40)]

CAMPAIGN = """name = "timed"
timing = "{timing}"

[[workloads]]
name = "w"
file = "{workload}"

[[platforms]]
name = "p"
file = "{platform}"

[[schedulers]]
name = "easy"
"""


def inputs(tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload(SPECS, nb_res=8).to_json()))
    platform = tmp_path / "p.xml"
    platform.write_text(cluster_xml(8))
    return workload, platform


def test_the_command_line_and_the_api_describe_and_run_alike(tmp_path, capsys):
    workload, platform = inputs(tmp_path)
    assert main(["simulate", "-q", "-p", str(platform), "-w", str(workload), "-s", "easy", "-O",
                 "backfill_order=sjbf", "-o", str(tmp_path / "cli")]) == 0
    simulate(platform, workload, "easy", options={"backfill_order": "sjbf"}, out=tmp_path / "api")
    cli, api = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("cli", "api"))
    assert cli["scheduler"] == api["scheduler"] == "easy"
    assert cli["options"] == api["options"] == {"queue_order": "fcfs", "backfill_order": "sjbf",
                                                "reservation": "count"}
    assert cli["metrics"] == api["metrics"] and cli["complete"] and api["complete"]
    assert cli["cli_options"] == {"backfill_order": "sjbf"} and "cli_options" not in api
    assert (tmp_path / "cli" / "jobs.csv").read_bytes() == (tmp_path / "api" / "jobs.csv").read_bytes()


def test_a_spec_checks_before_any_output_and_prepares_once(tmp_path):
    from schedlab.schedulers.base import create_scheduler

    scheduler = create_scheduler("easy")
    calls = []
    scheduler.prepare = lambda: calls.append("prepare")
    spec = RunSpec(platform=Platform.homogeneous(8), workload=make_workload(SPECS), name="easy",
                   scheduler=scheduler, out=tmp_path / "out")
    prepared = spec.prepare()
    assert calls == ["prepare"] and not (tmp_path / "out" / "summary.json").exists()
    result = prepared.execute()
    assert result.summary["complete"] and result.written_to == tmp_path / "out"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["jobs.csv", "schedule.csv", "summary.json"]


def test_a_campaign_times_messages_as_simulate_does(tmp_path, capsys):
    workload, platform = inputs(tmp_path)
    campaign = tmp_path / "c.toml"
    campaign.write_text(CAMPAIGN.format(timing="batsim", workload=workload, platform=platform))
    assert main(["experiment", "run", str(campaign), "-o", str(tmp_path / "c"), "--workers", "1"]) == 0
    results = pd.read_parquet(tmp_path / "c" / "results.parquet")
    assert results["complete"].all() and set(results["timing"]) == {"batsim"}
    run_dir = tmp_path / "c" / "runs" / results["run_id"].iloc[0]
    assert main(["simulate", "-q", "-p", str(platform), "-w", str(workload), "-s", "easy", "--timing", "batsim",
                 "-o", str(tmp_path / "s")]) == 0
    assert (run_dir / "jobs.csv").read_bytes() == (tmp_path / "s" / "jobs.csv").read_bytes()
    ideal = tmp_path / "s-ideal"
    assert main(["simulate", "-q", "-p", str(platform), "-w", str(workload), "-s", "easy", "-o", str(ideal)]) == 0
    assert (run_dir / "jobs.csv").read_bytes() != (ideal / "jobs.csv").read_bytes()  # the timing made a difference


def test_a_campaign_refuses_batsim_timing_on_a_platform_it_does_not_model(tmp_path, capsys):
    workload, platform = inputs(tmp_path)
    text = platform.read_text()
    platform.write_text(text.replace("<zone ", '<config><prop id="network/TCP-gamma" value="1"/></config>\n<zone ',
                                     1))
    campaign = tmp_path / "c.toml"
    campaign.write_text(CAMPAIGN.format(timing="batsim", workload=workload, platform=platform))
    one_line_error(capsys, ["experiment", "run", str(campaign), "-o", str(tmp_path / "c")], "network/TCP-gamma")
    assert not (tmp_path / "c").exists()


def test_check_inputs_is_given_no_run_time_and_no_path(tmp_path):
    """Scheduler.check_inputs validates options against the workload: it gets sizes, submit times
    and walltimes (copies), profile types, the file's sha256, never a delay nor the file's path
    (a scheduler could fit on those and plan with the real run times)."""
    from schedlab.paths import sha256_file
    from schedlab.schedulers.fcfs import FCFS

    seen = []

    class Peeking(FCFS):
        def check_inputs(self, workload):
            seen.append(workload)

    workload_path, platform_path = inputs(tmp_path)
    simulate(platform_path, workload_path, Peeking(), out=tmp_path / "o")
    (view,) = seen
    assert len(view.jobs) == len(SPECS) and view.jobs[3].res == 1 + 3 % 4 and view.jobs[3].submit_time_s == 21
    assert {profile.delay_s for profile in view.profiles.values()} == {None}
    assert all(dict(profile.raw) == {"type": "delay"} for profile in view.profiles.values())
    assert view.source == "" and str(workload_path) not in repr(view)
    assert view.source_sha256 == sha256_file(workload_path)
