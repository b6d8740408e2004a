"""Campaigns: validation, content-addressed runs, resume, process pool = Dask, jitter, reports."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from schedlab.cli import main
from schedlab.experiments.campaigns.campaign import load_campaign
from schedlab.experiments.campaigns.plan import expand
from schedlab.experiments.campaigns.runner import jittered
from tests.helpers.cli import campaign_file, one_line_error
from tests.helpers.data import REPO, TRACES


@pytest.mark.parametrize(("change", "fragment"), [
    (("seeds = [1, 2]", "seeds = [1, 2]\nspeed = 3"), "c.toml:3: field 'speed': unknown key"),
    (('name = "c32"', 'name = "c32"\ncores = 4'), "field 'platforms[0].cores': unknown key"),
    (('name = "fcfs"', 'name = "fcfss"'), "field 'schedulers[1].name': unknown scheduler 'fcfss'"),
    (('queue_order = ["fcfs", "spt"]', 'queue_order = ["fcfs", "zzz"]'), "unknown queue policy 'zzz'"),
    (('queue_order = ["fcfs", "spt"]', 'speed = 2'), "field 'schedulers[0].speed': unknown option 'speed'"),
    (("load = 1.0", "load = -1"), "field 'workloads[0].load': expected a number > 0"),
    (("kth-sp2-excerpt", "no-such-trace"), "field 'workloads[1].swf': no such file"),
    (("days = 1.5", "days = -1"), "--days must be a number > 0"),
    (("windows = 2", "windows = 0"), "field 'workloads[1].windows'"),
    (("seeds = [1, 2]", "seeds = [1, 2"), "malformed TOML"),
])
def test_campaign_errors_name_the_file_line_and_key(tmp_path, capsys, change, fragment):
    path = campaign_file(tmp_path)
    path.write_text(path.read_text().replace(*change))
    err = one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o")], fragment)
    assert f"{path}:" in err


def test_quiet_campaigns_say_nothing_but_errors(tmp_path, capsys):
    assert main(["experiment", "run", str(campaign_file(tmp_path)), "-o", str(tmp_path / "o"), "-q",
                 "--workers", "1"]) == 0
    said = capsys.readouterr()
    assert said.out == "" and said.err == ""
    assert main(["experiment", "run", str(campaign_file(tmp_path)), "-o", str(tmp_path / "o"), "--workers", "1"]) == 0
    assert "12 of 12 runs complete" in capsys.readouterr().out  # resumed: every run found, none repeated


def test_plan_lists_the_runs(tmp_path, capsys):
    assert main(["experiment", "plan", str(campaign_file(tmp_path)), "-o", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    # synthetic: 2 seeds x 3 configurations; trace: 2 windows x 3 configurations (seed-free)
    assert "12 runs" in out and "trace#1 | c32 | easy(queue_order=spt)" in out and "seed=2" in out
    assert not (tmp_path / "o").exists()  # plan only prints: no inputs made where the run would put them


def test_run_ids_are_stable_and_sensitive_to_every_input(tmp_path, monkeypatch):
    import schedlab.experiments.campaigns.plan as plan

    base = {r.key: r.id for r in expand(load_campaign(campaign_file(tmp_path)), tmp_path / "a")}
    again = {r.key: r.id for r in expand(load_campaign(campaign_file(tmp_path)), tmp_path / "b")}
    assert base == again and len(set(base.values())) == len(base) == 12
    changed = {
        "workload content": campaign_file(tmp_path, jobs=201, name="w.toml"),
        "option grid": campaign_file(tmp_path, name="o.toml").read_text().replace('"spt"]', '"saf"]'),
        "jitter": campaign_file(tmp_path, extra="\n[perturb]\nsubmit_jitter_s = 0.002\nrepetitions = 1\n",
                                name="j.toml"),
    }
    for what, source in changed.items():
        path = source if isinstance(source, Path) else tmp_path / "x.toml"
        if not isinstance(source, Path):
            path.write_text(source)
        ids = {r.key: r.id for r in expand(load_campaign(path), tmp_path / what.replace(" ", "_"))}
        moved = {key for key in base if key in ids and ids[key] != base[key]}
        if what == "workload content":
            assert moved == {k for k in base if k.startswith("synthetic")}, what
        elif what == "option grid":
            assert not moved and "trace#0 | c32 | easy(queue_order=saf)" in ids, what
        else:
            assert not moved and len(ids) == 12 + 12 * 1 + 6, what  # + jittered copies (2 seeds for traces)
    bigger = campaign_file(tmp_path, name="p.toml")
    bigger.write_text(bigger.read_text().replace("resources = 32\nname", "resources = 33\nname"))
    platform_moved = {r.key: r.id for r in expand(load_campaign(bigger), tmp_path / "p")}
    assert not set(platform_moved.values()) & set(base.values())  # every run uses the platform
    # a trace edited in place: same path, other content -> its runs move, the others do not
    trace = tmp_path / "t.swf"
    trace.write_bytes(gzip.decompress((TRACES / "kth-sp2-excerpt.swf.gz").read_bytes()))
    own = campaign_file(tmp_path, name="t.toml")
    own.write_text(own.read_text().replace(str(TRACES / "kth-sp2-excerpt.swf.gz"), str(trace)))
    before = {r.key: r.id for r in expand(load_campaign(own), tmp_path / "t")}
    lines = [line.split() if not line.startswith(";") else line for line in trace.read_text().splitlines()]
    trace.write_text("\n".join(line if isinstance(line, str) else " ".join([*line[:3], str(int(line[3]) + 1),
                                                                             *line[4:]]) for line in lines) + "\n")
    after = {r.key: r.id for r in expand(load_campaign(own), tmp_path / "t")}
    assert {k for k in before if before[k] != after[k]} == {k for k in before if k.startswith("trace")}
    monkeypatch.setattr(plan, "__version__", "9.9.9")
    versioned = {r.key: r.id for r in expand(load_campaign(campaign_file(tmp_path)), tmp_path / "v")}
    assert not set(versioned.values()) & set(base.values())


def test_jitter_is_seeded_and_small():
    from schedlab.workloads.synthetic import generate

    workload = generate(nb_jobs=100, nb_resources=8, seed=1)
    a, b = jittered(workload, 0.001, 3, 0), jittered(workload, 0.001, 3, 0)
    assert [j.submit_time_s for j in a.jobs] == [j.submit_time_s for j in b.jobs]
    c = jittered(workload, 0.001, 3, 1)
    assert [j.submit_time_s for j in a.jobs] != [j.submit_time_s for j in c.jobs]
    shifts = sorted(j.submit_time_s for j in a.jobs)
    assert all(0 <= s - o < 0.001 for s, o in zip(shifts, sorted(j.submit_time_s for j in workload.jobs),
                                                   strict=True))


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, timeout=timeout)


def test_a_killed_campaign_resumes_without_repeating_or_losing_runs(tmp_path):
    path = campaign_file(tmp_path, jobs=4000)
    out = tmp_path / "o"
    process = subprocess.Popen([sys.executable, "-m", "schedlab", "experiment", "run", str(path), "-o", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "runs").glob("[0-9a-f]*"))) < 2:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)  # no chance to clean up
    process.wait()
    done = {p.name: (p / "summary.json").stat().st_mtime_ns for p in (out / "runs").glob("[0-9a-f]*")}
    assert 2 <= len(done) < 12, "the campaign was not killed mid-way"
    assert all(json.loads((out / "runs" / run / "summary.json").read_text())["complete"] for run in done)
    resumed = run_cli("experiment", "run", str(path), "-o", str(out))
    assert resumed.returncode == 0, resumed.stderr
    after = {p.name: (p / "summary.json").stat().st_mtime_ns for p in (out / "runs").glob("[0-9a-f]*")}
    assert len(after) == 12 and all(after[run] == mtime for run, mtime in done.items())  # none repeated
    assert not list((out / "runs").glob(".*"))  # no half-written run left behind
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == 12 and results["complete"].all()


def test_dask_local_cluster_gives_the_process_pools_results(tmp_path):
    pytest.importorskip("distributed")
    path = campaign_file(tmp_path, extra="\n[perturb]\nsubmit_jitter_s = 0.001\nrepetitions = 1\n")
    results = {}
    for mode, extra in (("pool", ["--workers", "2"]), ("dask", ["--dask", "local", "--workers", "2"])):
        done = run_cli("experiment", "run", str(path), "-o", str(tmp_path / mode), *extra)
        assert done.returncode == 0, done.stderr
        frame = pd.read_parquet(tmp_path / mode / "results.parquet").set_index("run_id").sort_index()
        results[mode] = frame.drop(columns=["scheduling_time_s", "simulation_time_s", "wall_time_s",
                                            "workload_path", "platform_path"])  # where each was made
    assert len(results["pool"]) == 30
    pd.testing.assert_frame_equal(results["pool"], results["dask"])


def test_a_local_dask_clusters_workers_compute_without_dasks_profiler_and_with_one_thread():
    pytest.importorskip("distributed")
    import dask.config

    from schedlab.experiments.campaigns.cluster import dask_client

    client, closers = dask_client("local", 1)
    try:
        def seen() -> tuple[bool, str | None]:
            import os

            return dask.config.get("distributed.worker.profile.enabled"), os.environ.get("OMP_NUM_THREADS")

        assert list(client.run(seen).values()) == [(False, os.environ.get("OMP_NUM_THREADS", "1"))]
    finally:
        for close in closers:
            close()


def test_a_failing_run_is_recorded_and_the_others_go_on(tmp_path, monkeypatch):
    import schedlab.schedulers.base as base
    from schedlab.experiments.campaigns import runner

    runs = expand(load_campaign(campaign_file(tmp_path)), tmp_path / "o")
    # the runner looks the factory up when a run starts: break one configuration there

    original = base.create_scheduler

    def flaky(name, options=None):
        if name == "fcfs":
            raise RuntimeError("boom")
        return original(name, options)

    monkeypatch.setattr(base, "create_scheduler", flaky)
    seen = []  # what a progress bar is told: runs done, of, failed so far
    rows = runner.run_campaign(runs, tmp_path / "o", progress=lambda *counts: seen.append(counts))
    failed = [r for r in rows if not r["complete"]]
    # raised by schedlab's own code (the factory): a bug of ours, said so
    assert len(rows) == 12 and len(failed) == 4 and all(r["error"] == "internal error: RuntimeError: boom"
                                                         for r in failed)
    assert all(math.isnan(r["mean_waiting_time_s"]) for r in failed)  # no figure to rank a crash by
    assert seen[0] == (0, 12, 0) and seen[-1] == (12, 12, 4) and len(seen) == 13
    assert [f for _, _, f in seen] == sorted(f for _, _, f in seen)
    assert all(r["complete"] for r in rows if r["scheduler"] != "fcfs")


def test_check_compares_exactly_and_says_what_moved(tmp_path, capsys):
    path = campaign_file(tmp_path)
    expected = tmp_path / "expected.json"
    assert main(["experiment", "check", str(path), "--expected", str(expected), "--update"]) == 0
    assert main(["experiment", "check", str(path), "--expected", str(expected)]) == 0
    data = json.loads(expected.read_text())
    key = sorted(data["runs"])[0]
    data["runs"][key]["metrics"]["mean_waiting_time_s"] += 1e-9  # the smallest change still counts
    expected.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["experiment", "check", str(path), "--expected", str(expected)]) == 1
    err = capsys.readouterr().err
    assert f"{key}: metrics: mean_waiting_time_s" in err and "1 difference(s)" in err


def test_smoke_campaign_is_what_ci_checks():
    campaign = load_campaign(REPO / "experiments" / "smoke.toml")
    expected = json.loads((REPO / "experiments" / "expected" / "smoke.json").read_text())
    assert campaign.repetitions and len(campaign.workloads) == 3
    assert expected["campaign"] == "smoke" and len(expected["runs"]) == 176
    assert "experiment check experiments/smoke.toml" in (REPO / ".ci" / "run").read_text()


def test_a_newcomer_is_told_how_to_reach_the_command():
    """`schedlab` lives in .venv: the README's Usage and the demo's last line say how to reach it, and
    the README states the default suite's time and how CI runs the rest."""
    readme = (REPO / "README.md").read_text()
    usage = readme[readme.index("## Usage"):]
    assert usage.index("source .venv/bin/activate") < usage.index("schedlab simulate")
    assert "source .venv/bin/activate" in (REPO / "scripts" / "demo.sh").read_text().splitlines()[-1]
    assert re.search(r"The default suite takes about \d+ s", readme) and "SCHEDLAB_THOROUGH=1" in readme
    command = 'SCHEDLAB_THOROUGH=1 .venv/bin/python -m pytest -m "not benchmark" --second-pass'
    assert command in (REPO / ".ci" / "run").read_text() and command in " ".join(readme.split())


def png_is_drawn(path: Path) -> bool:
    import matplotlib.image

    pixels = matplotlib.image.imread(path)
    return path.stat().st_size > 10_000 and float(np.std(pixels)) > 0.05


def test_report_files_and_plots(tmp_path, monkeypatch):
    import schedlab.experiments.campaigns.report as report_module

    saved = report_module._save
    cut = []  # every text of every figure lies inside the figure as laid out (issue 28: labels cut at edges)

    def checked(fig, path, rect=(0, 0, 1, 1)):
        write = fig.savefig

        def write_then_check(*args, **kwargs):
            write(*args, **kwargs)
            renderer, box = fig.canvas.get_renderer(), fig.bbox
            texts = [*fig.texts, *(t for axis in fig.axes for t in (axis.title, axis.xaxis.label, axis.yaxis.label,
                                                                     *axis.texts))]
            texts += [t for legend in fig.legends for t in legend.get_texts()]
            for text in texts:  # titles, labels, numbers drawn on plots, legends (ticks: laid out by matplotlib)
                if text.get_visible() and text.get_text().strip():
                    extent = text.get_window_extent(renderer)
                    if min(extent.x0 - box.x0, box.x1 - extent.x1, extent.y0 - box.y0, box.y1 - extent.y1) < -1:
                        cut.append((Path(path).name, text.get_text()[:40]))

        fig.savefig = write_then_check
        return saved(fig, path, rect)

    monkeypatch.setattr(report_module, "_save", checked)
    path = campaign_file(tmp_path, extra="\n[perturb]\nsubmit_jitter_s = 0.001\nrepetitions = 2\n")
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o")]) == 0
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r")]) == 0
    assert cut == []
    report = (tmp_path / "r" / "report.md").read_text()
    # queue_order varies, and a scheduler without one runs too: boxes per policy and per configuration
    for section in ("## Summary", "## Perturbation arm", "## AVGbsld per queue policy", "## AVGbsld per configuration",
                    "## Waiting-time shares", "## Schedule of one run"):
        assert section in report
    for name in ("policy_boxes.png", "bsld_boxes.png", "wait_shares.png", "gantt.png"):
        assert png_is_drawn(tmp_path / "r" / name), name
    page = (tmp_path / "r" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4 and "<table>" in page
    # a study's table of record: the same Markdown, headed by the command and commit that made it
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r"), "--results-file",
                 str(tmp_path / "RESULTS.md")]) == 0
    results = (tmp_path / "RESULTS.md").read_text()
    assert results.startswith("<!-- written by `schedlab report --results-file`")
    assert f"`schedlab report {tmp_path / 'o'} -o {tmp_path / 'r'} --results-file" in results
    assert ", commit " in results and "](gantt.png)" not in results  # plots named, not linked from elsewhere
    plots = re.findall(r"!\[([^]]*)\]\(([^)]+)\)", report)
    assert len(plots) == 4 and all(f"(plot: {title}, `{png}` in the report directory)" in results
                                   for title, png in plots)
    assert results.endswith(re.sub(r"!\[([^]]*)\]\(([^)]+)\)", r"(plot: \1, `\2` in the report directory)", report))
    # a bad --gantt is refused before any file is made
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r2"), "--gantt", "nosuchrun",
                 "--results-file", str(tmp_path / "R2.md")]) == 2
    assert not (tmp_path / "r2").exists() and not (tmp_path / "R2.md").exists()
    made = json.loads((tmp_path / "o" / "made-by.json").read_text())["invocations"]
    assert len(made) == 1 and made[0]["command"][:3] == ["experiment", "run", str(path)] and made[0]["commit"]
    assert f"Results made by `schedlab experiment run {path} -o {tmp_path / 'o'}" in results


def test_metric_vs_option_curves_appear_for_numeric_sweeps(tmp_path):
    path = campaign_file(tmp_path).read_text().replace(
        'name = "fcfs"', 'name = "easy"\nlabel = "machines"\noptions = { reservation = "machines", '
        "rjms_delay_s = [0, 5, 30] }")
    (tmp_path / "sweep.toml").write_text(path)
    assert main(["experiment", "run", str(tmp_path / "sweep.toml"), "-o", str(tmp_path / "o")]) == 0
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r")]) == 0
    assert png_is_drawn(tmp_path / "r" / "option_curves.png")
    # configurations differ in more than queue_order: boxes per configuration as well
    assert png_is_drawn(tmp_path / "r" / "bsld_boxes.png") and png_is_drawn(tmp_path / "r" / "policy_boxes.png")


@pytest.mark.slow  # the report's files and plots: test_report_files_and_plots, by default
def test_html_report_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    path = campaign_file(tmp_path)
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o")]) == 0
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r")]) == 0
    shot = tmp_path / "shot.png"
    done = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                           "--window-size=1280,2400", (tmp_path / "r" / "report.html").as_uri()],
                          capture_output=True, timeout=120)
    assert shot.is_file(), done.stderr.decode()[-2000:]
    assert png_is_drawn(shot)


def test_jobqueue_example_makes_batch_job_scripts():
    pytest.importorskip("dask_jobqueue")
    import dask.config
    import yaml

    from schedlab.experiments.campaigns.cluster import jobqueue_cluster

    example = yaml.safe_load((REPO / "experiments" / "jobqueue.yaml").read_text())["jobqueue"]
    # the example's values over dask-jobqueue's defaults, as a user's jobqueue.yaml would be merged
    config = {f"jobqueue.{kind}.{key}": value for kind, values in example.items() for key, value in values.items()}
    config.update({f"jobqueue.{kind}.scheduler-options": {"host": "127.0.0.1"} for kind in example})  # loopback
    with dask.config.set(config):
        for kind, directive in (("slurm", "#SBATCH -p normal"), ("pbs", "#PBS -q batch")):
            cluster = jobqueue_cluster(kind)
            try:
                script = cluster.job_script()
            finally:
                cluster.close()
            assert directive in script and "source $HOME/schedlab/.venv/bin/activate" in script, script
            # the worker starts after the configuration's prologue, and never imports a checkout's
            # schedlab/ from the folder the job was submitted in (tests/test_slurm_cluster.py runs it)
            lines = script.splitlines()
            worker = next(i for i, line in enumerate(lines) if "distributed.cli.dask_worker" in line)
            assert (lines.index("source $HOME/schedlab/.venv/bin/activate") < lines.index("export PYTHONSAFEPATH=1")
                    < worker), script
            assert "export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}" in lines


def test_importing_dask_jobqueue_leaves_ctrl_c_alone():
    """dask_jobqueue's import sets a SIGINT handler that exits with status 0: Ctrl-C on a --dask slurm
    campaign ended it silently, nothing written (tests/test_slurm_cluster.py sends the real signal)."""
    pytest.importorskip("dask_jobqueue")
    code = ("import signal; from schedlab.experiments.campaigns.cluster import import_jobqueue; import_jobqueue(); "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True"], done.stderr[-2000:]


def test_equivalent_option_values_are_one_run(tmp_path, capsys):
    def ids(options: str, name: str) -> set[str]:
        path = campaign_file(tmp_path, name=name)
        path.write_text(path.read_text().replace('options = { queue_order = ["fcfs", "spt"] }', options))
        return {r.id for r in expand(load_campaign(path), tmp_path / "o") if r.scheduler == "easy"}

    plain = ids("", "a.toml")  # defaults
    assert plain == ids('options = { queue_order = "fcfs", reservation = "count" }', "b.toml")
    machines = ids('options = { reservation = "machines", rjms_delay_s = 5 }', "c.toml")
    assert machines == ids('options = { reservation = "machines", rjms_delay_s = 5.0 }', "d.toml")
    assert machines == ids('options = { reservation = "machines", rjms_delay_s = "5" }', "e.toml")
    assert machines != plain
    path = campaign_file(tmp_path, name="f.toml")
    path.write_text(path.read_text().replace('queue_order = ["fcfs", "spt"]', 'rjms_delay_s = [5, "5"], '
                                             'reservation = "machines"'))
    one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o")], "are the same run")


def test_jitter_size_and_seed_move_only_the_jittered_runs(tmp_path):
    def ids(jitter: float, seeds: str, name: str) -> dict[str, str]:
        path = campaign_file(tmp_path, extra=f"\n[perturb]\nsubmit_jitter_s = {jitter}\nrepetitions = 1\n", name=name)
        path.write_text(path.read_text().replace("seeds = [1, 2]", seeds))
        return {r.key.rsplit(" | jitter", 1)[0] + ("+j" if r.repetition is not None else ""): r.id
                for r in expand(load_campaign(path), tmp_path / "o")}

    small, large = ids(0.001, "seeds = [1, 2]", "s.toml"), ids(0.002, "seeds = [1, 2]", "l.toml")
    moved = {k for k in small if small[k] != large.get(k)}
    assert moved == {k for k in small if k.endswith("+j")} and moved
    other_seed = ids(0.001, "seeds = [1, 3]", "o.toml")
    assert {k for k in small if "seed=2" in k} and not {k for k in small if "seed=2" in k} & set(other_seed)


def test_a_relative_results_directory_gives_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = expand(load_campaign(campaign_file(tmp_path)), Path("relative"))
    assert all(Path(r.workload_path).is_absolute() and Path(r.platform_path).is_absolute() for r in runs)


def test_per_workload_seeds_and_validation_points_at_the_key(tmp_path, capsys):
    path = campaign_file(tmp_path)
    path.write_text(path.read_text().replace('name = "synthetic"', 'name = "synthetic"\nseeds = [7]'))
    runs = expand(load_campaign(path), tmp_path / "o")
    assert {r.seed for r in runs if r.workload == "synthetic"} == {7}
    cases = [
        (('name = "trace"', 'name = "synthetic"'),
         "c.toml:9: field 'workloads[1].name': name 'synthetic' is used twice"),
        (('queue_order = ["fcfs", "spt"]', 'rjms_delay_s = [5, -1], reservation = "machines"'),
         "field 'schedulers[0].rjms_delay_s'"),
        (('queue_order = ["fcfs", "spt"]', "queue_order = []"), "field 'schedulers[0].queue_order': an empty list"),
        (('options = { queue_order = ["fcfs", "spt"] }', "options = 5"), "field 'schedulers[0]': expected a table"),
        (("seeds = [1, 2]", "seeds = [1, 1]"), "field 'seeds': a seed is listed twice"),
        (("seeds = [1, 2]", 'seeds = [1, 2]\nmetrics = ["nope"]'), "unknown metric 'nope'"),
    ]
    for change, fragment in cases:
        bad = campaign_file(tmp_path)
        bad.write_text(bad.read_text().replace(*change))
        one_line_error(capsys, ["experiment", "plan", str(bad), "-o", str(tmp_path / "o")], fragment)


@pytest.mark.slow  # the same stop by SIGTERM: test_signals, by default
def test_ctrl_c_stops_a_campaign_and_its_workers(tmp_path):
    path = campaign_file(tmp_path, jobs=6000)
    out = tmp_path / "o"
    process = subprocess.Popen([sys.executable, "-m", "schedlab", "experiment", "run", str(path), "-o", str(out),
                                "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "runs").glob("[0-9a-f]*"))) < 1:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "interrupted" in err
    stopped = sorted(p.name for p in (out / "runs").glob("[0-9a-f]*"))
    time.sleep(1.5)  # no worker goes on writing runs after the campaign has stopped
    assert sorted(p.name for p in (out / "runs").glob("[0-9a-f]*")) == stopped and len(stopped) < 12
    assert all(json.loads((out / "runs" / run / "summary.json").read_text())["complete"] for run in stopped)
    # what finished is in results.parquet, and the message says so (a real SIGINT through the pool)
    assert f"interrupted: {len(stopped)} of 12 runs finished" in err and "the same command resumes" in err
    assert sorted(pd.read_parquet(out / "results.parquet")["run_id"]) == stopped


def test_perturbation_verdict_is_paired_by_instance():
    from schedlab.experiments.campaigns.report import perturbation_table

    rows = []
    # A beats B by far on window 0 and loses by far on window 1: their medians over windows are
    # equal, yet on every window they differ beyond the jitter noise (+-1)
    for config, values in (("A", (100.0, 300.0)), ("B", (310.0, 90.0))):
        for window, value in enumerate(values):
            for repetition, delta in ((None, 0.0), (0, -1.0), (1, 1.0)):
                rows.append({"workload": "w", "instance": f"w#{window}", "platform": "p", "configuration": config,
                             "repetition": repetition, "complete": True, "mean_bounded_slowdown": value + delta})
    table = perturbation_table(pd.DataFrame(rows)).set_index("configuration")
    verdicts = set(table["vs best"])
    assert verdicts == {"best", "beyond noise on 2 of 2 instances"}


def test_option_curves_keep_the_other_options_apart():
    from schedlab.experiments.campaigns.report import configuration

    frame = pd.DataFrame({"scheduler": ["easy"] * 4, "opt_queue_order": ["fcfs", "fcfs", "spt", "spt"],
                          "opt_rjms_delay_s": ["0", "5", "0", "5"]})
    assert list(configuration(frame, without="opt_rjms_delay_s")) == [
        "easy queue_order=fcfs", "easy queue_order=fcfs", "easy queue_order=spt", "easy queue_order=spt"]


def test_a_report_of_a_campaign_keeping_few_metrics(tmp_path):
    path = campaign_file(tmp_path)
    path.write_text(path.read_text().replace("seeds = [1, 2]", 'seeds = [1, 2]\nmetrics = ["mean_waiting_time_s"]'))
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o")]) == 0
    frame = pd.read_parquet(tmp_path / "o" / "results.parquet")
    assert "mean_waiting_time_s" in frame and "mean_bounded_slowdown" not in frame
    assert main(["report", str(tmp_path / "o"), "-o", str(tmp_path / "r")]) == 0
    assert "mean wait (s)" in (tmp_path / "r" / "report.md").read_text()


def test_windows_with_a_history_of_jobs_completed_before_each(tmp_path, capsys, monkeypatch):
    """The DIWS protocol: each window's predictor learns from the trace's jobs that completed
    before the window starts (`@history`), never from the window or later."""
    monkeypatch.setenv("SCHEDLAB_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "h.toml"
    path.write_text(f"""name = "h"
[[workloads]]
name = "kth"
swf = "{TRACES / 'kth-sp2-excerpt.swf.gz'}"
convert = {{ start = 648000, days = 0.5 }}
windows = 2
history = "completed-before"

[[platforms]]
resources = 100
name = "c100"

[[schedulers]]
name = "easy"

[[schedulers]]
name = "diws"
options = {{ history = "@history" }}
""")
    runs = expand(load_campaign(path), tmp_path / "o")
    assert len(runs) == 4 and "diws(history=@history)" in runs[1].key
    lines = [line.split() for line in gzip.decompress((TRACES / "kth-sp2-excerpt.swf.gz").read_bytes()).decode()
             .splitlines() if line.strip() and not line.startswith(";")]
    for window in (0, 1):
        start = 648000 + window * 43200
        run = next(r for r in runs if r.window == window)
        history = json.loads(Path(run.history_path).read_text())
        # completed = submit + wait + run before the window (fields 2, 3, 4 of SWF)
        expected = sum(float(f[1]) + float(f[2]) + float(f[3]) < start and float(f[3]) > 0 for f in lines)
        assert len(history["jobs"]) == expected > 0
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1"]) == 0
    frame = pd.read_parquet(tmp_path / "o" / "results.parquet")
    assert frame["complete"].all() and len(list((tmp_path / "cache" / "models").glob("*.skops"))) == 2
    bad = path.read_text().replace('history = "completed-before"\n', "")
    (tmp_path / "bad.toml").write_text(bad)
    one_line_error(capsys, ["experiment", "plan", str(tmp_path / "bad.toml"), "-o", str(tmp_path / "b")],
                   "workload 'kth' has none")


def test_a_warm_up_share_is_left_out_of_the_metrics(tmp_path):
    from schedlab.metrics import compute_metrics, read_jobs_csv

    plain = campaign_file(tmp_path, jobs=60, name="plain.toml")
    warm = campaign_file(tmp_path, jobs=60, name="warm.toml")
    warm.write_text(warm.read_text().replace("seeds = [1, 2]", "seeds = [1, 2]\nwarmup_share = 0.1"))
    assert main(["experiment", "run", str(plain), "-o", str(tmp_path / "p"), "--workers", "1"]) == 0
    assert main(["experiment", "run", str(warm), "-o", str(tmp_path / "w"), "--workers", "1"]) == 0
    plain_rows = pd.read_parquet(tmp_path / "p" / "results.parquet")
    rows = pd.read_parquet(tmp_path / "w" / "results.parquet")
    assert set(rows["run_id"]).isdisjoint(plain_rows["run_id"])  # another metric: other runs
    row = rows.iloc[0]
    run_dir = tmp_path / "w" / "runs" / row["run_id"]
    outcomes = sorted(read_jobs_csv(run_dir / "jobs.csv"), key=lambda o: (o.submit_s, int(o.job_id)))
    skipped = int(np.ceil(0.1 * len(outcomes)))
    expected = compute_metrics(outcomes[skipped:], int(row["nb_resources"]))
    assert row["nb_jobs"] == len(outcomes) - skipped
    assert row["mean_waiting_time_s"] == pytest.approx(expected["mean_waiting_time_s"])
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["warmup"] == {"share": 0.1, "nb_jobs_left_out": skipped}
    assert summary["metrics"]["nb_jobs"] == len(outcomes)  # the whole run stays recorded
    assert set(summary["versions"]) == {"python", "numpy", "pandas", "scikit-learn", "xgboost"}  # what made it
    # or a number of jobs (a tester's rule): 5 here, and not both
    counted = campaign_file(tmp_path, jobs=60, name="counted.toml")
    counted.write_text(counted.read_text().replace("seeds = [1, 2]", "seeds = [1, 2]\nwarmup_jobs = 5"))
    assert main(["experiment", "run", str(counted), "-o", str(tmp_path / "c"), "--workers", "1"]) == 0
    first = pd.read_parquet(tmp_path / "c" / "results.parquet").iloc[0]
    run_dir = tmp_path / "c" / "runs" / first["run_id"]
    summary = json.loads((run_dir / "summary.json").read_text())
    outcomes = list(read_jobs_csv(run_dir / "jobs.csv"))
    assert summary["warmup"] == {"share": 0.0, "jobs": 5, "nb_jobs_left_out": 5}
    assert first["nb_jobs"] == len(outcomes) - 5
    both = counted.read_text().replace("warmup_jobs = 5", "warmup_jobs = 5\nwarmup_share = 0.1")
    counted.write_text(both)
    assert main(["experiment", "plan", str(counted)]) == 2


def test_the_warm_up_leaves_out_the_same_jobs_whatever_order_they_ended_in(tmp_path):
    """jobs.csv lists jobs as they ended: with tied submissions at the cut, the jobs left out must
    not depend on the scheduler (ties go by job id)."""
    from schedlab.experiments.campaigns.runner import after_warmup

    head = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
            "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
            "allocated_resources,consumed_energy,metadata\n")

    def line(job, wait):
        return (f"{job},w0,{job},0.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,{wait}.000000,10.000000,"
                f"{wait + 10}.000000,{wait}.000000,{wait + 10}.000000,1.0,0,-1.000000,\"\"\n")

    summaries = []
    for name, order in (("a", [(1, 0), (2, 50), (10, 20)]), ("b", [(10, 20), (2, 50), (1, 0)])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "jobs.csv").write_text(head + "".join(line(j, w) for j, w in order))
        summaries.append(after_warmup(tmp_path / name, {"metrics": {"nb_resources": 4}}, 0.3))
    # one job of three is left out: job 1 (the lowest id), in both files
    assert summaries[0] == summaries[1]
    assert summaries[0]["metrics_after_warmup"]["mean_waiting_time_s"] == 35.0


def test_a_campaign_run_whose_history_is_the_simulated_workload_fails_with_the_reason(tmp_path):
    """history = "@workload" trains DIWS on the jobs it simulates: the run is recorded as failed,
    with the overlap as its error (the other runs go on)."""
    path = tmp_path / "c.toml"
    path.write_text('name = "h"\nseeds = [1]\n[[workloads]]\nname = "s"\nsynthetic = { jobs = 60, resources = 16 }\n'
                    '[[platforms]]\nname = "c16"\nresources = 16\n[[schedulers]]\nname = "easy"\n'
                    '[[schedulers]]\nname = "diws"\noptions = { history = "@workload" }\n')
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1"]) == 1
    frame = pd.read_parquet(tmp_path / "o" / "results.parquet")
    failed = frame[~frame["complete"]]
    assert list(failed["scheduler"]) == ["diws"] and "overlaps the simulated workload" in failed["error"].iloc[0]
    assert frame[frame["scheduler"] == "easy"]["complete"].all()


def test_a_grid_leaves_an_option_out_where_it_would_be_ignored(tmp_path, capsys):
    """`oracle` acts with runtime=exact only: a grid over runtime gives it to the exact runs and
    leaves it out of the predicted ones; given where it never acts, it is refused (one line)."""
    from schedlab.experiments.campaigns.campaign import SchedulerSpec

    spec = SchedulerSpec("online-sjf", "o", {"runtime": ["exact", "predicted"], "oracle": ["w.json"]}, str(tmp_path))
    assert spec.combinations() == [{"oracle": "w.json", "runtime": "exact"}, {"runtime": "predicted"}]
    grid = SchedulerSpec("easy-pp", "e", {"predictor": ["adaboost", "user-last2"], "refit_s": [600, 900]}, "")
    assert grid.combinations() == [{"predictor": "adaboost", "refit_s": 600}, {"predictor": "adaboost", "refit_s": 900},
                                   {"predictor": "user-last2"}]  # user-last2 once
    never = SchedulerSpec("online-sjf", "o", {"runtime": ["requested"], "oracle": ["w.json"]}, "")
    assert never.combinations() == [{"oracle": "w.json", "runtime": "requested"}]  # kept: refused when made
    path = campaign_file(tmp_path)
    text = path.read_text()
    path.write_text(text + '\n[[schedulers]]\nname = "online-sjf"\noptions = { runtime = "requested", '
                           'oracle = "w.json" }\n')
    one_line_error(capsys, ["experiment", "plan", str(path), "-o", str(tmp_path / "o")], "has no effect with runtime")


def test_the_small_variant_is_the_same_study_on_less_data(tmp_path, capsys):
    """`--small N`: the campaign's schedulers and options on each trace's first window cut to N jobs
    and N-job generated workloads of its first 3 seeds, named NAME-small; `check --small` compares with
    NAME-small.json."""
    path = campaign_file(tmp_path)
    assert main(["experiment", "run", str(path), "--small", "30", "-o", str(tmp_path / "s"), "-q",
                 "--workers", "1"]) == 0
    frame = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert set(frame["campaign"]) == {"t-small"} and (frame["nb_jobs"] == 30).all()
    assert sorted(frame["instance"].unique()) == ["synthetic@1", "synthetic@2", "trace#0"]  # one window
    assert len(frame) == 3 * 3  # 3 instances x (easy fcfs, easy spt, fcfs)
    assert "--small" in json.loads((tmp_path / "s" / "made-by.json").read_text())["invocations"][0]["command"]
    assert main(["experiment", "check", str(path), "--small", "30", "--update", "-q", "--workers", "1"]) == 0
    assert (tmp_path / "expected" / "c-small.json").is_file()
    assert main(["experiment", "check", str(path), "--small", "30", "--workers", "1"]) == 0
    assert "9 runs equal" in capsys.readouterr().out
    from dataclasses import replace

    from schedlab.experiments.campaigns.campaign import small_variant

    many = replace(load_campaign(path), seeds=(1, 2, 3, 4, 5))
    many = replace(many, workloads=tuple(replace(w, seeds=(7, 8, 9, 10)) for w in many.workloads))
    small = small_variant(many, 10)
    assert small.seeds == (1, 2, 3) and all(w.seeds == (7, 8, 9) for w in small.workloads)  # first seeds only
    factory = tmp_path / "sub" / "f.toml"
    factory.parent.mkdir()
    factory.write_text('kind = "policy-factory"\n')
    one_line_error(capsys, ["experiment", "run", str(factory), "--small", "5"], "--small shrinks a campaign")
    one_line_error(capsys, ["experiment", "check", str(factory), "--small", "5", "--update"],
                   "--small shrinks a campaign")
    other = campaign_file(tmp_path / "sub")
    one_line_error(capsys, ["experiment", "check", str(other), "--small", "0", "--update"], "--small needs")
    assert not (tmp_path / "sub" / "expected").exists()  # a refused check makes no folder


def test_every_study_of_record_has_its_small_variants_expected_results():
    """What .ci/run recomputes (scripts/reproduce.sh --ci): one expected file per study of record."""
    script = (REPO / "scripts" / "reproduce.sh").read_text()
    studies = re.search(r'^ALL="([^"]+)"', script, re.MULTILINE).group(1).split()
    assert "bash scripts/reproduce.sh --ci" in (REPO / ".ci" / "run").read_text()
    for study in studies:
        # factories and the model studies are no campaigns: the suite runs factory-ci.toml and small studies
        if not study.startswith("policies/factory-") and study not in ("diws/predictors", "hybrid/reliability"):
            folder, name = study.split("/")
            assert (REPO / "experiments" / folder / "expected" / f"{name}-small.json").is_file(), study


def test_results_are_the_same_whatever_the_number_of_workers(tmp_path):
    """The pool dispatches the runs expected longest first (hybrid before EASY): the rows, in plan
    order, are the same as one worker's."""
    from schedlab.experiments import run
    from schedlab.experiments.campaigns.campaign import campaign_from_doc
    from schedlab.experiments.campaigns.runner import batches

    campaign = {"name": "workers", "seeds": [1, 2],
                "workloads": [{"name": "lublin", "lublin": {"nodes": 32, "jobs": 300, "mode": "typed",
                                                              "missing_walltime": "factor:2"}}],
                "platforms": [{"name": "c32", "resources": 32}],
                "schedulers": [{"name": "easy", "options": {"queue_order": ["fcfs", "spt"]}}, {"name": "hybrid"}]}
    frames = {}
    for workers in (1, 2):
        frame = run(campaign, tmp_path / f"w{workers}", workers=workers)
        frames[workers] = frame.drop(columns=["scheduling_time_s", "simulation_time_s", "wall_time_s",
                                              "training_time_s", "workload_path", "platform_path"],
                                     errors="ignore")
    pd.testing.assert_frame_equal(frames[1], frames[2])
    assert list(frames[1]["scheduler"])[:3] == ["easy", "easy", "hybrid"]  # plan order, not dispatch order
    runs = expand(campaign_from_doc(campaign, tmp_path / "campaign.toml"), tmp_path / "plan")
    first = batches(runs, 2)[0]
    assert first[0].scheduler_name == "hybrid"  # dispatched first: the longest expected
