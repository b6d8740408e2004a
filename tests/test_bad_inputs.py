"""Every bad input is one line naming the file (line, field), exit 2, before any long work; a bug is
exit 3 with its traceback in a log; a run stopped part-way keeps what finished."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from schedlab.cli import main
from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.base import SCHEDULERS
from schedlab.workload import load_workload
from schedlab.workloads.synthetic import SyntheticSpec, generate, write_generated
from tests.helpers.data import make_workload
from tests.helpers.schedulers import FailingEasy as _Failing

SPECS = [("a", 0, 1, 2, 5), ("b", 5, 1, 2, 5), ("c", 9, 2, 3, 5)]
SWF_LINE = "1 0 0 100 4 -1 -1 4 200 -1 1 7 3 -1 1 0 -1 -1\n"


def inputs(tmp_path: Path, specs=SPECS, nb_res: int = 4) -> tuple[str, str]:
    (tmp_path / "p.xml").write_text(cluster_xml(nb_res))
    (tmp_path / "w.json").write_text(json.dumps(make_workload(specs, nb_res=nb_res).to_json()))
    return str(tmp_path / "p.xml"), str(tmp_path / "w.json")


def one_line_error(capsys, argv, fragment: str, code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err, err
    return err


def test_non_finite_numbers_in_a_workload_name_file_line_and_field(tmp_path, capsys):
    platform, _ = inputs(tmp_path)
    for token in ("NaN", "Infinity"):
        path = tmp_path / f"{token}.json"
        path.write_text(f'{{"nb_res": 4,\n"jobs": [\n{{"id": 1, "subtime": 0, "res": 1, "walltime": {token}, '
                        '"profile": "1"}\n],\n"profiles": {"1": {"type": "delay", "delay": 3}}}\n')
        err = one_line_error(capsys, ["workload", "check", str(path)], "expected a finite number")
        assert f"{path}:3: field 'walltime'" in err
        one_line_error(capsys, ["simulate", "-p", platform, "-w", str(path), "-s", "easy",
                                "-o", str(tmp_path / "o")], "finite")


def test_metrics_refuses_empty_truncated_and_malformed_jobs_csv(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(tmp_path / "o"), "-q"]) == 0
    jobs = (tmp_path / "o" / "jobs.csv").read_text()
    empty = tmp_path / "empty_jobs.csv"
    empty.write_text("")
    one_line_error(capsys, ["metrics", str(empty)], "empty file")
    cut = tmp_path / "cut_jobs.csv"
    cut.write_text(jobs[:-30])  # cut while written: the last row is partial
    one_line_error(capsys, ["metrics", str(cut)], "looks truncated")
    short = tmp_path / "short_jobs.csv"
    lines = jobs.splitlines()
    short.write_text("\n".join([*lines[:2], ",".join(lines[2].split(",")[:9]), *lines[3:]]) + "\n")
    one_line_error(capsys, ["metrics", str(short)], f"{short}:3: 9 fields, the header has 17")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    one_line_error(capsys, ["metrics", str(other)], "field 'job_id': missing column")
    assert main(["metrics", str(tmp_path / "o" / "jobs.csv")]) == 0


def test_swf_traces_that_hold_no_job_or_bad_gzip(tmp_path, capsys):
    out = str(tmp_path / "w.json")
    empty = tmp_path / "empty.swf"
    empty.write_text("; MaxProcs: 4\n;\n")
    one_line_error(capsys, ["workload", "from-swf", str(empty), "-o", out], "no job lines")
    data = gzip.compress(("; MaxProcs: 4\n" + SWF_LINE * 2000).encode())
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(data[: len(data) // 2])
    one_line_error(capsys, ["workload", "from-swf", str(cut), "-o", out], "truncated")
    fake = tmp_path / "fake.swf.gz"
    fake.write_bytes(b"<html>not found</html>\n")
    one_line_error(capsys, ["workload", "from-swf", str(fake), "-o", out], "not gzip data")
    assert not Path(out).exists()


@pytest.mark.parametrize(("flags", "fragment"), [
    (["--days", "-3"], "--days must be a number > 0"),
    (["--last-hours", "0"], "--last-hours must be a number > 0"),
    (["--start", "10", "--last-hours", "24"], "--start and --last-hours"),
    (["--platform-size", "0"], "--platform-size must be >= 1"),
    (["--start", "100000"], "no job kept out of 3"),
])
def test_conversion_flags_that_cannot_give_a_workload(tmp_path, capsys, flags, fragment):
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 8\n" + SWF_LINE + SWF_LINE.replace("1 0 0", "2 60 0", 1)
                     + SWF_LINE.replace("1 0 0", "3 90 0", 1))
    out = tmp_path / "w.json"
    one_line_error(capsys, ["workload", "from-swf", str(trace), "-o", str(out), *flags], fragment)
    assert not out.exists()


def test_an_empty_window_says_where_the_trace_is(tmp_path, capsys):
    """The README's own example on a 1996 trace: the window holds nothing, and the message says why."""
    trace = tmp_path / "kth.swf"
    trace.write_text("; UnixStartTime: 843516000\n; MaxProcs: 100\n" + SWF_LINE)
    err = one_line_error(capsys, ["workload", "from-swf", str(trace), "-o", str(tmp_path / "w.json"),
                                  "--start", "2020-04-01", "--days", "15"], "no job kept out of 1")
    assert "holds no submission" in err and "1996-09-23" in err


def test_option_errors(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    base = ["simulate", "-p", platform, "-w", workload, "-o", str(tmp_path / "o")]
    one_line_error(capsys, [*base, "-s", "easy", "-O", "queue_order=spt", "-O", "queue_order=saf"],
                   "option 'queue_order' given twice")
    one_line_error(capsys, [*base, "-s", "easy", "--record", str(tmp_path / "r.jsonl")], "--record needs --external")
    one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", "queue_order=spt"],
                   "looks like a scheduler option")
    one_line_error(capsys, ["workload", "generate", "--jobs", "10", "--resources", "4", "--seed", "1",
                            "--load", "0", "-o", str(tmp_path / "g.json")], "--load must be")


@pytest.mark.parametrize("argv", [
    ["serve", "easy", "--socket", "tcp://127.0.0.1:99999"],
    ["serve", "easy", "--socket", "127.0.0.1:28000"],
    ["record", "--listen", "tcp://127.0.0.1:0", "--forward", "tcp://127.0.0.1:28001", "-o", "x.jsonl"],
])
def test_bad_endpoints_fail_at_once(capsys, argv):
    one_line_error(capsys, argv, "bad endpoint")


def test_serve_says_where_it_listens():
    done = subprocess.run([sys.executable, "-m", "schedlab", "serve", "easy", "--socket", "tcp://127.0.0.1:*",
                           "--timeout", "0.5"], capture_output=True, text=True, timeout=60)
    assert re.fullmatch(r"schedlab serve: listening on tcp://127\.0\.0\.1:\d+\n", done.stdout)
    assert done.returncode == 1 and "no message from batsim" in done.stderr


def test_workload_check_applies_batsims_rules(tmp_path, capsys):
    def workload(**changes):
        doc = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 2, "walltime": 10, "profile": "1"}],
               "profiles": {"1": {"type": "delay", "delay": 3}}}
        doc.update(changes)
        path = tmp_path / "w.json"
        path.write_text(json.dumps(doc, indent=1))
        return str(path)

    assert main(["workload", "check", workload()]) == 0
    assert ": OK:" in capsys.readouterr().out
    # Batsim loads jobs larger than nb_res (a scheduler must reject them; `--too-large reject` makes
    # them on purpose): a warning naming the line, an error with --strict
    assert main(["workload", "check", workload(nb_res=1)]) == 0
    out = capsys.readouterr().out
    assert "with 1 warning(s)" in out and "w.json:5: field 'res': 1 job(s) request more than nb_res 1" in out
    one_line_error(capsys, ["workload", "check", "--strict", workload(nb_res=1)],
                   "1 job(s) request more than nb_res 1")
    one_line_error(capsys, ["workload", "check", workload(profiles={"1": {"type": "sleep", "delay": 3}})],
                   "unknown to Batsim 4.2.1")
    doc = json.loads(Path(workload()).read_text())
    del doc["nb_res"]
    (tmp_path / "w.json").write_text(json.dumps(doc))
    one_line_error(capsys, ["workload", "check", str(tmp_path / "w.json")], "field 'nb_res': missing")


def test_workload_check_notes_profiles_that_tell_run_times(tmp_path, capsys):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": [
        {"id": i, "subtime": 0, "res": 1, "walltime": 900, "profile": "delay600"} for i in range(3)],
        "profiles": {"delay600": {"type": "delay", "delay": 600}}}))
    assert main(["workload", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 delay profile names contain their delay" in out and "3 jobs share a delay profile" in out
    # a profile named after its own job is no leak, even when job 30 happens to run 30 s
    path.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 30, "subtime": 0, "res": 1, "profile": "30"}],
                                "profiles": {"30": {"type": "delay", "delay": 30}}}))
    assert main(["workload", "check", str(path)]) == 0
    assert "note:" not in capsys.readouterr().out


def test_platform_size_mismatch_is_a_warning(tmp_path, capsys):
    _platform, workload = inputs(tmp_path, nb_res=4)
    (tmp_path / "p8.xml").write_text(cluster_xml(8))
    assert main(["simulate", "-p", str(tmp_path / "p8.xml"), "-w", workload, "-s", "easy",
                 "-o", str(tmp_path / "o"), "-q"]) == 0
    assert "nb_res 4 differs from the platform's 8 resources" in capsys.readouterr().err


def test_output_paths_are_checked_before_the_work(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(a_file)],
                   "is not a directory")
    one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(a_file / "sub")],
                   "cannot create the output directory: Not a directory")
    one_line_error(capsys, ["demo", "-o", str(a_file), "-q"], "is not a directory")
    one_line_error(capsys, ["workload", "generate", "--jobs", "5", "--resources", "4", "--seed", "1",
                            "-o", str(tmp_path)], "is a directory")
    one_line_error(capsys, ["platform", "generate", "--hosts", "4", "-o", "/proc/schedlab/p.xml"],
                   "cannot create the output directory")
    one_line_error(capsys, ["workload", "lublin", "--nodes", "16", "--jobs", "10", "--seed", "1",
                            "-o", str(tmp_path)], "is a directory")


def test_a_results_directory_never_mixes_two_runs(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    out.mkdir()
    (out / "external.log").write_text("from another run")
    (out / "notes.txt").write_text("mine")
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out)]) == 0
    assert not (out / "external.log").exists() and (out / "notes.txt").read_text() == "mine"
    assert "replaced external.log" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["jobs.csv", "notes.txt", "schedule.csv", "summary.json"]


@pytest.mark.parametrize(("error", "module", "code", "fragment"), [
    # one of ours raising is a bug of ours; a user's scheduler raising is that scheduler's failure
    (ValueError("bad state"), "schedlab.schedulers.failing", 3,
     "internal error (a bug, please report it): ValueError: bad state"),
    (ValueError("bad state"), __name__, 1, "error: scheduler 'failing' raised ValueError: bad state"),
    (KeyboardInterrupt(), __name__, 130, "interrupted"),
])
def test_a_run_stopped_part_way_keeps_what_finished(tmp_path, capsys, monkeypatch, error, module, code, fragment):
    platform, workload = inputs(tmp_path)
    monkeypatch.setattr(_Failing, "error", error)
    monkeypatch.setattr(_Failing, "__module__", module)
    monkeypatch.setitem(SCHEDULERS, "failing", _Failing)
    out = tmp_path / "o"
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "failing", "-o", str(out), "-q"]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err and "marked incomplete" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["nb_jobs_unfinished"] == 2
    assert (out / "jobs.csv").read_text().splitlines()[1].startswith("a,")
    if code == 3:
        log = Path(re.search(r"traceback in (\S+)", err).group(1))
        assert "ValueError: bad state" in log.read_text() and summary["error"].startswith("internal error")


def test_an_unexpected_exception_in_any_command_is_reported_as_a_bug(capsys, monkeypatch):
    import schedlab.workload

    def explode(path):
        raise ValueError("boom")

    monkeypatch.setattr(schedlab.workload, "check_workload_file", explode)
    assert main(["workload", "check", "w.json"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ValueError: boom" in err and "traceback in" in err


def test_schedulers_listing_shows_choices_defaults_and_whole_sentences(capsys):
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    assert "-O backfill_order=  queue | sjbf | svf (default: queue)" in out
    assert "-O model=           PATH.skops (default: none)" in out  # an empty default is said
    assert "-O protect_head=    true | false (default: true)" in out
    from schedlab.cli.simulation import _first_sentence
    from schedlab.schedulers.base import all_schedulers, scheduler_option_specs

    assert _first_sentence("EASY (Tsafrir et al. 2007) is good.\nMore. And more.") == \
        "EASY (Tsafrir et al. 2007) is good."  # not cut after "al."
    for name, cls in all_schedulers().items():  # every option has its sentence (issue 28)
        for spec in scheduler_option_specs(cls):
            assert len(spec.help.split()) >= 4, (name, spec.name)
    for line in out.splitlines():
        if line.startswith("    ") and not line.startswith("     "):  # a scheduler's first sentence
            assert line.rstrip().endswith((".", ")")), line


def test_shipped_platforms_resolve_by_name(tmp_path, capsys):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(make_workload([("a", 0, 16, 5, 10)], nb_res=256).to_json()))
    assert main(["simulate", "-p", "lublin256", "-w", str(workload), "-s", "easy", "-o", str(tmp_path / "o"),
                 "-q"]) == 0
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["platform"]["nb_resources"] == 256
    assert main(["platform", "list"]) == 0
    assert "marconi100" in capsys.readouterr().out
    one_line_error(capsys, ["simulate", "-p", "marconi", "-w", str(workload), "-s", "easy"], "shipped platforms")


def test_generated_workload_streams_to_the_file_and_equals_the_in_memory_one(tmp_path, monkeypatch):
    from schedlab.workloads import synthetic

    spec = SyntheticSpec(nb_jobs=500, nb_resources=64, seed=3)
    write_generated(tmp_path / "w.json", spec)
    streamed = load_workload(tmp_path / "w.json")
    built = generate(nb_jobs=500, nb_resources=64, seed=3)
    assert streamed.jobs == built.jobs and [j.extra for j in streamed.jobs] == [j.extra for j in built.jobs]
    assert {n: p.delay_s for n, p in streamed.profiles.items()} == {n: p.delay_s for n, p in built.profiles.items()}
    # memory stays bounded by one chunk: 20,000 jobs in chunks of 1,024 peak at about 1.5 MB traced,
    # where building them at once (generate) peaks at about 19 MB
    monkeypatch.setattr(synthetic, "CHUNK_JOBS", 1024)
    tracemalloc.start()
    write_generated(tmp_path / "big.json", SyntheticSpec(nb_jobs=20_000, nb_resources=512, seed=1))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 5e6, peak
    assert json.loads((tmp_path / "big.json").read_text())["jobs"][-1]["id"] == 19_999


def test_table_features_are_valid_json_whatever_their_type(tmp_path):
    from schedlab.workloads.convert import convert
    from schedlab.workloads.slurm import to_trace_jobs

    path = tmp_path / "t.csv"
    path.write_text("job_id,submit_time,run_time,num_cores_req,time_limit,shared,qos,user_id\n"
                    "1,0,60,4,10,True,normal,u1\n2,10,60,4,10,False,,u2\n3,20,60,4,10,,debug,\n")
    trace = to_trace_jobs(path)
    workload, _ = convert(trace)
    from schedlab.workloads.convert import convert_columns

    converted, _ = convert_columns(trace)
    converted.write(str(tmp_path / "w.json"))
    def refuse(token):
        raise AssertionError(f"not strict JSON: {token}")

    written = json.loads((tmp_path / "w.json").read_text(), parse_constant=refuse)  # no True, no NaN
    assert written["jobs"] == workload["jobs"]
    features = [{k: v for k, v in job.items() if k in ("shared", "qos", "user")} for job in written["jobs"]]
    assert features == [{"shared": True, "qos": "normal", "user": "u1"}, {"shared": False, "user": "u2"},
                        {"qos": "debug"}]


def test_an_external_command_that_cannot_start_leaves_the_earlier_run_alone(tmp_path, capsys):
    platform, workload = inputs(tmp_path)
    out = tmp_path / "o"
    assert main(["simulate", "-p", platform, "-w", workload, "-s", "easy", "-o", str(out), "-q"]) == 0
    before = (out / "jobs.csv").read_text()
    one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-o", str(out),
                            "--external", "no-such-scheduler-binary -s {socket}"], "cannot start external")
    assert (out / "jobs.csv").read_text() == before
    assert main(["simulate", "-p", platform, "-w", workload, "-o", str(out), "-q", "--external",
                 f"{sys.executable} -m schedlab serve easy --socket {{socket}}"]) == 0
    log = (out / "external.log").read_bytes()  # an earlier external run's log stays too
    one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-o", str(out),
                            "--external", "no-such-scheduler-binary -s {socket}"], "cannot start external")
    assert (out / "external.log").read_bytes() == log and sorted(p.name for p in out.iterdir()) == [
        "external.log", "jobs.csv", "schedule.csv", "summary.json"]
    for command, fragment in (("no-such-scheduler-binary -s {socket}", "cannot start external"),
                              ("no-such-scheduler-binary", "must contain {socket}")):
        one_line_error(capsys, ["simulate", "-p", platform, "-w", workload, "-o", str(tmp_path / "new"),
                                "--external", command], fragment)
        assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("argv", [
    ["-o", "a", "--out", "b"], ["-o", "queue_order=spt", "--out", "b"], ["-s", "fcfs", "-s", "easy"],
    ["-w", "w.json", "-w", "w.json"], ["-O", "queue_order=spt", "-O", "queue_order=fcfs"],
])
def test_a_single_valued_option_given_twice_is_refused(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    platform, workload = inputs(tmp_path)
    base = {"-p": platform, "-w": workload, "-s": "easy", "-o": "out"}
    for flag in argv[::2]:
        base.pop({"--out": "-o"}.get(flag, flag), None)
    full = ["simulate", *[x for pair in base.items() for x in pair], *argv]
    one_line_error(capsys, full, "given twice")  # argparse's errors too: one line, no usage block
    assert not any(tmp_path.glob("*/jobs.csv"))  # nothing ran


@pytest.mark.parametrize("argv", [["--version"], ["platform", "list"], ["--help"]])
def test_light_commands_start_without_the_learning_stack(argv):
    """Start-up (issue 28): only `predictor` loads scikit-learn; `--version` loads no pandas either."""
    code = ("import sys\nfrom schedlab.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('sklearn', 'pandas', 'scipy') if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    assert "sklearn" not in shown.stdout.splitlines()[-1]
    if argv == ["--version"]:
        assert shown.stdout.splitlines()[-1] == "[]"
    if argv == ["--help"]:
        assert "predictor" in shown.stdout  # still listed


def _parser_actions(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield " ".join(path), action
            for name, sub in action.choices.items():
                yield from _parser_actions(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction | argparse._VersionAction):
            yield " ".join(path), action


def test_every_option_and_argument_has_a_sentence_and_its_default(capsys):
    from schedlab.cli import build_parser
    from schedlab.workloads.slurm import ALIASES, FEATURES, FROM_TABLE_COLUMNS

    parser = build_parser()
    for command, action in _parser_actions(parser):
        if isinstance(action, argparse._SubParsersAction):
            assert all(sub.description for sub in action.choices.values()), command  # atop each --help
        else:
            assert action.help and len(action.help.split()) >= 3, (command, action.option_strings or action.dest)
    with pytest.raises(SystemExit):
        main(["predictor", "train", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "(default: dt)" in shown and "(default: diws)" in shown and "(default: 0)" in shown
    for aliases in (*ALIASES.values(), *FEATURES.values()):  # from-table says every column it reads
        assert all(re.search(rf"(^|[ (;]){re.escape(alias)}([ ,;.|)]|$)", " ".join(FROM_TABLE_COLUMNS.split()))
                   for alias in aliases), aliases
    lublin = {a for c, action in _parser_actions(parser) if c == "workload lublin" for a in action.option_strings}
    assert "--days" in lublin and not lublin & {"--only-completed", "--max-user-share", "--res-from"}
