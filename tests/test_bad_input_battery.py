"""A battery of bad inputs across every command (issue 38), run in-process through `main(argv)`:
each is exit 2 with one line naming the file (line, field) where there is one, and leaves every
earlier file as it was and no new file behind. The cases are generated from tables: missing and
unreadable inputs per command, outputs that are inputs, workload, SWF, table and campaign
mutations, flag ranges, scheduler options and command lines argparse cannot read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from schedlab.cli import main
from schedlab.platforms.generate import cluster_xml
from tests.helpers.data import make_workload

SWF_LINE = "{i} {t} 0 100 4 -1 -1 4 200 -1 1 {u} 3 -1 1 0 -1 -1\n"
SWF = "; MaxProcs: 8\n" + "".join(SWF_LINE.format(i=i, t=60 * i, u=i % 3) for i in range(1, 41))
TABLE = "job_id,submit_time,run_time,num_cores_req,time_limit\n1,0,60,4,10\n2,30,90,2,10\n"
CAMPAIGN = """name = "c"
seeds = [1]

[[workloads]]
name = "synthetic"
synthetic = { jobs = 20, resources = 8 }

[[platforms]]
resources = 8

[[schedulers]]
name = "easy"
"""
SCHEDULER = "from schedlab.schedulers.easy import EasyBackfilling\n\n\nclass Mine(EasyBackfilling):\n    pass\n"


def _workload_doc() -> dict:
    return make_workload([("a", 0, 1, 2, 5), ("b", 5, 1, 2, 5), ("c", 9, 2, 3, 5)], nb_res=4).to_json()


# ---------------------------------------------------------------- workload mutations: (name, change)


def _mutate(doc: dict, path: tuple, value) -> dict:
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_DELETE = object()
WORKLOAD_MUTATIONS = {  # name: ((path to a field), new value, what the message says)
    "nb_res-zero": (("nb_res",), 0, "field 'nb_res': expected an integer > 0"),
    "nb_res-negative": (("nb_res",), -4, "field 'nb_res'"),
    "nb_res-text": (("nb_res",), "4", "field 'nb_res'"),
    "nb_res-bool": (("nb_res",), True, "field 'nb_res'"),
    "nb_res-float": (("nb_res",), 4.5, "field 'nb_res'"),
    "nb_res-missing": (("nb_res",), _DELETE, "field 'nb_res': missing"),
    "jobs-missing": (("jobs",), _DELETE, "field 'jobs'"),
    "jobs-object": (("jobs",), {}, "field 'jobs'"),
    "profiles-list": (("profiles",), [], "field 'profiles'"),
    "id-missing": (("jobs", 0, "id"), _DELETE, "field 'id'"),
    "id-duplicate": (("jobs", 1, "id"), "a", "duplicate job id"),
    "subtime-negative": (("jobs", 0, "subtime"), -1, "field 'subtime'"),
    "subtime-text": (("jobs", 0, "subtime"), "zero", "field 'subtime'"),
    "subtime-null": (("jobs", 0, "subtime"), None, "field 'subtime'"),
    "subtime-missing": (("jobs", 0, "subtime"), _DELETE, "field 'subtime'"),
    "res-zero": (("jobs", 0, "res"), 0, "field 'res'"),
    "res-negative": (("jobs", 0, "res"), -2, "field 'res'"),
    "res-text": (("jobs", 0, "res"), "2", "field 'res'"),
    "res-float": (("jobs", 0, "res"), 1.5, "field 'res'"),
    "res-missing": (("jobs", 0, "res"), _DELETE, "field 'res'"),
    "walltime-text": (("jobs", 0, "walltime"), "long", "field 'walltime'"),
    "walltime-zero": (("jobs", 0, "walltime"), 0, "field 'walltime'"),
    "profile-undefined": (("jobs", 0, "profile"), "nowhere", "undefined profile 'nowhere'"),
    "profile-missing": (("jobs", 0, "profile"), _DELETE, "field 'profile'"),
    "profile-type-unknown": (("profiles", "pa", "type"), "sleep", "unknown to Batsim 4.2.1"),
    "delay-negative": (("profiles", "pa", "delay"), -3, "delay"),
    "delay-text": (("profiles", "pa", "delay"), "3s", "delay"),
    "delay-missing": (("profiles", "pa", "delay"), _DELETE, "delay"),
}
DEEP = 100_000  # brackets nested this deep: the standard parsers' RecursionError was exit 3 (issue 57)
NESTED = "nested more than 500 levels deep"
RAW_WORKLOADS = {  # name: (text, what the message says)
    "nested-deep": ("[" * DEEP + "]" * DEEP, f"w-nested-deep.json:1: malformed JSON: brackets {NESTED}"),
    "malformed": ('{"nb_res": 4,\n"jobs": [,]}\n', "malformed JSON"),
    "not-object": ("[1, 2]\n", "a Batsim workload is a JSON object"),
    "empty": ("", "malformed JSON"),
    "not-utf8": (b"\xff\xfe{}".decode("latin-1"), "malformed JSON"),
    "nan": ('{"nb_res": 4, "jobs": [{"id": 1, "subtime": NaN, "res": 1, "profile": "p"}], "profiles": '
            '{"p": {"type": "delay", "delay": 3}}}', "finite"),
}

# ---------------------------------------------------------------- SWF and table mutations

SWF_MUTATIONS = {  # name: (text, what the message says)
    "short-line": ("; MaxProcs: 8\n1 0 0 100 4\n", "t-short-line.swf:2"),
    "text-field": ("; MaxProcs: 8\n" + SWF_LINE.format(i=1, t="soon", u=1), "t-text-field.swf:2"),
    "no-jobs": ("; MaxProcs: 8\n;\n", "no job lines"),
    "empty": ("", "no job lines"),
    "binary": ("\x00\x01\x02 garbage\n", "t-binary.swf"),
}
TABLE_MUTATIONS = {
    "no-submit": ("job_id,run_time,num_cores_req\n1,60,4\n", "submit"),
    "text-submit": ("job_id,submit_time,run_time,num_cores_req\n1,soon,60,4\n", "1 submit time unknown"),
    "empty": ("", "t-empty.csv"),
    "header-only": ("job_id,submit_time,run_time,num_cores_req\n", "t-header-only.csv"),
}

# ---------------------------------------------------------------- campaign mutations: (old, new, message)

CAMPAIGN_MUTATIONS = {
    "name-escapes": (('name = "c"', 'name = "../../evil"'), "field 'name': '../../evil' would leave out/"),
    "name-empty": (('name = "c"', 'name = ""'), "field 'name': expected a non-empty name"),
    "name-dot": (('name = "c"', 'name = "."'), "field 'name': '.' would leave out/"),
    "label-empty": (('name = "easy"\n', 'name = "easy"\nlabel = ""\n'),
                    "field 'schedulers[0].label': expected a non-empty label"),
    "label-underscore": (('name = "easy"\n', 'name = "easy"\nlabel = "_mine"\n'),
                         "field 'schedulers[0].label': '_mine': a label may not start with _"),
    "jitter-huge": (('name = "easy"\n', 'name = "easy"\n\n[perturb]\nsubmit_jitter_s = 1e308\n'),
                    "field 'perturb[0].submit_jitter_s': expected at most"),
    "jitter-inf": (('name = "easy"\n', 'name = "easy"\n\n[perturb]\nsubmit_jitter_s = inf\n'),
                   "field 'perturb[0].submit_jitter_s': expected at most"),
    "resources-huge": (("[[platforms]]\nresources = 8", "[[platforms]]\nresources = 1000000000"),
                       "field 'platforms[0].resources': a run on 1,000,000,000 resources needs about"),
    "jobs-huge": (("jobs = 20", "jobs = 1000000000"), "field 'workloads[0].jobs': a workload of 1,000,000,000 jobs"),
    "nested-seeds": (("seeds = [1]", "seeds = " + "[" * DEEP + "]" * DEEP), "c-nested-seeds.toml:2: malformed TOML"),
    "unknown-key": (('name = "c"', 'name = "c"\nspeed = 3'), "c-unknown-key.toml:2: field 'speed': unknown key"),
    "bad-seeds": (("seeds = [1]", "seeds = [-1]"), "field 'seeds'"),
    "repeated-seed": (("seeds = [1]", "seeds = [1, 1]"), "a seed is listed twice"),
    "malformed": (("seeds = [1]", "seeds = [1"), "malformed TOML"),
    "jobs-zero": (("jobs = 20", "jobs = 0"), "field 'workloads[0].jobs'"),
    "load-negative": (("resources = 8 }", "resources = 8, load = -1 }"), "field 'workloads[0].load'"),
    "unknown-scheduler": (('name = "easy"', 'name = "easyy"'), "unknown scheduler 'easyy'"),
    "unknown-option": (('name = "easy"', 'name = "easy"\noptions = { speed = 1 }'), "unknown option 'speed'"),
    "bad-option-value": (('name = "easy"', 'name = "easy"\noptions = { queue_order = "zzz" }'),
                         "unknown queue policy"),
    "no-schedulers": (('[[schedulers]]\nname = "easy"\n', ""), "at least one [[schedulers]]"),
    "platform-zero": (("[[platforms]]\nresources = 8", "[[platforms]]\nresources = 0"),
                      "field 'platforms[0].resources'"),
    "platform-missing-file": (("[[platforms]]\nresources = 8", '[[platforms]]\nfile = "nowhere.xml"'),
                              "no such file"),
    "timing": (('name = "c"', 'name = "c"\ntiming = "real"'), "field 'timing'"),
    "warmup": (('name = "c"', 'name = "c"\nwarmup_share = 0.7'), "field 'warmup_share'"),
    "metrics": (('name = "c"', 'name = "c"\nmetrics = ["speed"]'), "unknown metric 'speed'"),
    "jitter": (('name = "c"', 'name = "c"\n[perturb]\nsubmit_jitter_s = 0'), "submit_jitter_s"),
    "lublin-small": (("synthetic = { jobs = 20, resources = 8 }", "lublin = { jobs = 20, nodes = 8 }"),
                     "at least 13 nodes"),
    "history-placeholder": (('name = "easy"', 'name = "diws"\noptions = { history = "@history" }'),
                            "has none"),
    "label-twice": (('[[schedulers]]\nname = "easy"\n', '[[schedulers]]\nname = "easy"\n[[schedulers]]\nname = '
                     '"easy"\n'), "used twice"),
}


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> Path:
    """Valid inputs of every kind, and one variant file per mutation."""
    d = tmp_path_factory.mktemp("battery")
    (d / "p.xml").write_text(cluster_xml(4))
    (d / "p8.xml").write_text(cluster_xml(8))
    doc = _workload_doc()
    (d / "w.json").write_text(json.dumps(doc, indent=1))
    for name, (path, value, _) in WORKLOAD_MUTATIONS.items():
        (d / f"w-{name}.json").write_text(json.dumps(_mutate(doc, path, value), indent=1))
    for name, (text, _) in RAW_WORKLOADS.items():
        (d / f"w-{name}.json").write_text(text)
    (d / "t.swf").write_text(SWF)
    for name, (text, _) in SWF_MUTATIONS.items():
        (d / f"t-{name}.swf").write_text(text)
    (d / "t.csv").write_text(TABLE)
    for name, (text, _) in TABLE_MUTATIONS.items():
        (d / f"t-{name}.csv").write_text(text)
    (d / "c.toml").write_text(CAMPAIGN)
    (d / "c-other.toml").write_text(CAMPAIGN.replace('name = "easy"', 'name = "fcfs"'))  # same name, other content
    for name, ((old, new), _) in CAMPAIGN_MUTATIONS.items():
        assert old in CAMPAIGN, name
        (d / f"c-{name}.toml").write_text(CAMPAIGN.replace(old, new))
    (d / "scores.csv").write_text("p,q,r,score\n" + "".join(f"{i},{i % 4 + 1},{i},{1 / 64}\n" for i in range(1, 65)))
    (d / "mine.py").write_text(SCHEDULER)
    (d / "adir").mkdir()
    (d / "fitted.toml").write_text('[lin]\nfunction = "lin"\nterms = ["1", "p", "q", "r"]\ncoefficients = [1, 2]\n')
    (d / "nested.toml").write_text("[lin]\ncoefficients = " + "[" * DEEP + "]" * DEEP + "\n")
    assert main(["predictor", "train", "-w", str(d / "w.json"), "--model", "user-last2", "--split", "none",
                 "-o", str(d / "m.skops")]) == 0
    assert main(["experiment", "run", str(d / "c.toml"), "-o", str(d / "results"), "--workers", "1", "-q"]) == 0
    (d / "results" / "runs" / "x").mkdir(exist_ok=True)
    return d


def _cases() -> list[tuple[str, list[str], str]]:
    """(id, argv with {d} for the workspace, fragment of the one line)."""
    sim = ["simulate", "-p", "{d}/p.xml", "-w", "{d}/w.json", "-o", "{d}/out"]
    cases: list[tuple[str, list[str], str]] = []

    def add(case_id: str, argv: list[str], fragment: str) -> None:
        cases.append((case_id, argv, fragment))

    # -------- missing inputs, per command
    missing = {
        "simulate-workload": ["simulate", "-p", "{d}/p.xml", "-w", "{d}/nope.json", "-s", "easy", "-o", "{d}/out"],
        "simulate-platform": ["simulate", "-p", "{d}/nope.xml", "-w", "{d}/w.json", "-s", "easy", "-o", "{d}/out"],
        "simulate-history": [*sim, "-s", "diws", "-O", "history={d}/nope.json"],
        "simulate-model": [*sim, "-s", "diws", "-O", "model={d}/nope.skops"],
        "simulate-oracle": [*sim, "-s", "fcfs-bf1", "-O", "runtime=exact", "-O", "oracle={d}/nope.json"],
        "simulate-policy-file": [*sim, "-s", "easy", "-O", "queue_order={d}/nope.toml#lin"],
        "simulate-scheduler-file": [*sim, "-s", "{d}/nope.py:Mine"],
        "from-swf": ["workload", "from-swf", "{d}/nope.swf", "-o", "{d}/out.json"],
        "from-table": ["workload", "from-table", "{d}/nope.csv", "-o", "{d}/out.json"],
        "check": ["workload", "check", "{d}/nope.json"],
        "train": ["predictor", "train", "-w", "{d}/nope.json", "-o", "{d}/out.skops"],
        "evaluate-model": ["predictor", "evaluate", "-m", "{d}/nope.skops", "-w", "{d}/w.json"],
        "evaluate-workload": ["predictor", "evaluate", "-m", "{d}/m.skops", "-w", "{d}/nope.json"],
        "fit": ["policy", "fit", "{d}/nope.csv", "-o", "{d}/out.toml"],
        "scores": ["policy", "scores", "{d}/nope.swf", "--tuples", "1", "--trials", "10", "-o", "{d}/out.csv"],
        "plan": ["experiment", "plan", "{d}/nope.toml"],
        "run": ["experiment", "run", "{d}/nope.toml", "-o", "{d}/out"],
        "experiment-check": ["experiment", "check", "{d}/nope.toml", "--update", "--expected", "{d}/out.json"],
        "report": ["report", "{d}/nope", "-o", "{d}/out"],
        "reproductions": ["reproductions", "{d}/nope", "-o", "{d}/out.md"],
        "metrics": ["metrics", "{d}/nope_jobs.csv"],
        "scheduler-check": ["scheduler", "check", "easy", "-w", "{d}/nope.json"],
        "scheduler-check-file": ["scheduler", "check", "{d}/nope.py:Mine"],
        "pybatsim-entry": ["pybatsim-entry", "{d}/nope.py:Mine", "-o", "{d}/out.py"],
    }
    for name, argv in missing.items():
        add(f"missing-{name}", argv, "nope")
    # -------- a directory where a file is read
    for name, argv in missing.items():
        if name in ("report", "reproductions", "simulate-scheduler-file", "scheduler-check-file", "pybatsim-entry",
                    "simulate-platform", "simulate-policy-file", "fit", "metrics", "run", "experiment-check"):
            continue
        add(f"directory-{name}", [a.replace("{d}/nope.json", "{d}/adir").replace("{d}/nope.swf", "{d}/adir")
                                  .replace("{d}/nope.csv", "{d}/adir").replace("{d}/nope.skops", "{d}/adir")
                                  .replace("{d}/nope.toml", "{d}/adir") for a in argv], "adir")
    # -------- an output that is an input (the file is left as it was)
    overwrite = {
        "from-swf": ["workload", "from-swf", "{d}/t.swf", "-o", "{d}/t.swf"],
        "from-table": ["workload", "from-table", "{d}/t.csv", "-o", "{d}/t.csv"],
        "train": ["predictor", "train", "-w", "{d}/w.json", "-o", "{d}/w.json"],
        "train-card": ["predictor", "train", "-w", "{d}/m.skops.card.json", "-o", "{d}/m.skops"],
        "evaluate-csv": ["predictor", "evaluate", "-m", "{d}/m.skops", "-w", "{d}/w.json", "--csv", "{d}/w.json"],
        "evaluate-csv-card": ["predictor", "evaluate", "-m", "{d}/m.skops", "-w", "{d}/w.json", "--csv",
                              "{d}/m.skops.card.json"],
        "fit": ["policy", "fit", "{d}/scores.csv", "-o", "{d}/scores.csv"],
        "scores": ["policy", "scores", "{d}/t.swf", "--tuples", "1", "--trials", "10", "-o", "{d}/t.swf"],
        "lublin-two-outputs": ["workload", "lublin", "--nodes", "16", "--jobs", "5", "--seed", "1", "--swf",
                               "{d}/out.json", "-o", "{d}/out.json"],
        "simulate-out-is-workload": ["simulate", "-p", "{d}/p.xml", "-w", "{d}/w.json", "-s", "easy", "-o",
                                     "{d}/w.json"],
        "simulate-record-is-workload": ["simulate", "-p", "{d}/p.xml", "-w", "{d}/w.json", "-o", "{d}/out",
                                        "--external", "x {socket}", "--record", "{d}/w.json"],
        "pybatsim-entry": ["pybatsim-entry", "{d}/mine.py:Mine", "-o", "{d}/mine.py"],
        "report-results-file": ["report", "{d}/results", "-o", "{d}/out", "--results-file",
                                "{d}/results/results.parquet"],
        "report-into-runs": ["report", "{d}/results", "-o", "{d}/results/runs/x", "--results-file",
                             "{d}/results/made-by.json"],
        "reproductions": ["reproductions", "{d}/results", "-o", "{d}/results/made-by.json"],
        "experiment-run-out-is-campaign": ["experiment", "run", "{d}/c.toml", "-o", "{d}/c.toml"],
        "experiment-check-expected": ["experiment", "check", "{d}/c.toml", "--update", "--expected", "{d}/c.toml"],
        "scheduler-check-out": ["scheduler", "check", "easy", "-w", "{d}/w.json", "-o", "{d}/w.json"],
        "experiment-run-other-campaign": ["experiment", "run", "{d}/c-other.toml", "-o", "{d}/results"],
    }
    for name, argv in overwrite.items():
        fragment = {"lublin-two-outputs": "one output would be lost",
                    "experiment-run-other-campaign": "--replace"}.get(name, "an input")
        add(f"overwrite-{name}", argv, fragment)
    # -------- workloads
    for name, (_, _, fragment) in WORKLOAD_MUTATIONS.items():
        add(f"workload-check-{name}", ["workload", "check", f"{{d}}/w-{name}.json"], fragment)
        add(f"simulate-{name}", ["simulate", "-p", "{d}/p.xml", "-w", f"{{d}}/w-{name}.json", "-s", "easy", "-o",
                                 "{d}/out"], fragment)
    for name, (_, fragment) in RAW_WORKLOADS.items():
        add(f"workload-check-{name}", ["workload", "check", f"{{d}}/w-{name}.json"], fragment)
    add("simulate-nested-deep", ["simulate", "-p", "{d}/p.xml", "-w", "{d}/w-nested-deep.json", "-s", "easy", "-o",
                                 "{d}/out"], RAW_WORKLOADS["nested-deep"][1])
    # -------- traces and tables
    for name, (_, fragment) in SWF_MUTATIONS.items():
        add(f"from-swf-{name}", ["workload", "from-swf", f"{{d}}/t-{name}.swf", "-o", "{d}/out.json"], fragment)
    for name, (_, fragment) in TABLE_MUTATIONS.items():
        add(f"from-table-{name}", ["workload", "from-table", f"{{d}}/t-{name}.csv", "-o", "{d}/out.json"], fragment)
    # -------- campaigns (plan and run say the same)
    for name, (_, fragment) in CAMPAIGN_MUTATIONS.items():
        add(f"campaign-plan-{name}", ["experiment", "plan", f"{{d}}/c-{name}.toml"], fragment)
        add(f"campaign-run-{name}", ["experiment", "run", f"{{d}}/c-{name}.toml", "-o", "{d}/out"], fragment)
    # -------- flag ranges
    flags = {
        "generate-jobs": (["workload", "generate", "--jobs", "-1", "--resources", "4", "--seed", "1", "-o",
                           "{d}/out.json"], "--jobs"),
        "generate-resources": (["workload", "generate", "--jobs", "5", "--resources", "0", "--seed", "1", "-o",
                                "{d}/out.json"], "--resources"),
        "generate-load-zero": (["workload", "generate", "--jobs", "5", "--resources", "4", "--seed", "1", "--load",
                                "0", "-o", "{d}/out.json"], "--load"),
        "generate-load-nan": (["workload", "generate", "--jobs", "5", "--resources", "4", "--seed", "1", "--load",
                               "nan", "-o", "{d}/out.json"], "--load"),
        "lublin-nodes": (["workload", "lublin", "--nodes", "5", "--jobs", "5", "--seed", "1", "-o", "{d}/out.json"],
                         "at least 13 nodes"),
        "lublin-jobs": (["workload", "lublin", "--nodes", "16", "--jobs", "-1", "--seed", "1", "-o",
                         "{d}/out.json"], "--jobs"),
        "lublin-start-hour": (["workload", "lublin", "--nodes", "16", "--jobs", "5", "--seed", "1", "--start-hour",
                               "25", "-o", "{d}/out.json"], "--start-hour"),
        "swf-days": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--days", "0"], "--days"),
        "swf-last-hours": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--last-hours", "-1"],
                           "--last-hours"),
        "swf-platform-size": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--platform-size", "0"],
                              "--platform-size"),
        "swf-missing-walltime": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--missing-walltime",
                                  "factor:x"], "missing"),
        "swf-missing-walltime-kind": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json",
                                       "--missing-walltime", "sometimes"], "missing"),
        "swf-start-and-last": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--start", "0",
                                "--last-hours", "2"], "--start and --last-hours"),
        "swf-empty-window": (["workload", "from-swf", "{d}/t.swf", "-o", "{d}/out.json", "--start", "99999999"],
                             "no job kept"),
        "train-test-share": (["predictor", "train", "-w", "{d}/w.json", "--test-share", "1.5", "-o",
                              "{d}/out.skops"], "--test-share"),
        "scores-tuples": (["policy", "scores", "{d}/t.swf", "--tuples", "0", "--trials", "10", "-o",
                           "{d}/out.csv"], "tuples"),
        "scores-trials": (["policy", "scores", "{d}/t.swf", "--tuples", "1", "--trials", "0", "-o",
                           "{d}/out.csv"], "trials"),
        "scores-workers": (["policy", "scores", "{d}/t.swf", "--tuples", "1", "--trials", "10", "--workers", "0",
                            "-o", "{d}/out.csv"], "workers"),
        "fit-functions": (["policy", "fit", "{d}/scores.csv", "--functions", "cubic", "-o", "{d}/out.toml"],
                          "--functions"),
        "fit-compare": (["policy", "fit", "{d}/scores.csv", "--compare", "kth", "-o", "{d}/out.toml"], "--compare"),
        "run-workers": (["experiment", "run", "{d}/c.toml", "-o", "{d}/out", "--workers", "0"], "--workers"),
        "run-small": (["experiment", "run", "{d}/c.toml", "-o", "{d}/out", "--small", "0"], "--small"),
        "check-workers": (["experiment", "check", "{d}/c.toml", "--update", "--expected", "{d}/out.json",
                           "--workers", "0"], "--workers"),
        "scheduler-check-resources": (["scheduler", "check", "easy", "--resources", "1"], "--resources"),
        "platform-hosts": (["platform", "generate", "--hosts", "0", "-o", "{d}/out.xml"], "hosts"),
        "platform-cores": (["platform", "generate", "--hosts", "2", "--cores-per-host", "0", "-o", "{d}/out.xml"],
                           "cores"),
        "simulate-platform-count": (["simulate", "-p", "0", "-w", "{d}/w.json", "-s", "easy", "-o", "{d}/out"],
                                    "at least 1"),
        "simulate-out-empty": (["simulate", "-p", "{d}/p.xml", "-w", "{d}/w.json", "-s", "easy", "-o", ""],
                               "--out is empty"),
        "generate-output-empty": (["workload", "generate", "--jobs", "5", "--resources", "4", "--seed", "1", "-o",
                                   ""], "--output is empty"),
        "run-output-empty": (["experiment", "run", "{d}/c.toml", "-o", ""], "--output is empty"),
        "simulate-platform-memory": (["simulate", "-p", "1000000000", "-w", "{d}/w.json", "-s", "easy", "-o",
                                      "{d}/out"], "--platform 1000000000 with --workload"),
        "simulate-count-batsim": (["simulate", "-p", "4", "-w", "{d}/w.json", "-s", "easy", "-o", "{d}/out",
                                   "--timing", "batsim"], "platform file"),
        "serve-socket": (["serve", "easy", "--socket", "127.0.0.1:28000"], "bad endpoint"),
        "record-socket": (["record", "--listen", "tcp://127.0.0.1:0", "--forward", "tcp://127.0.0.1:1", "-o",
                           "{d}/out.jsonl"], "bad endpoint"),
    }
    for name, (argv, fragment) in flags.items():
        add(f"flag-{name}", argv, fragment)
    # -------- schedulers and their options
    options = {
        "unknown-scheduler": (["-s", "easyy"], "unknown scheduler 'easyy'"),
        "unknown-option": (["-s", "easy", "-O", "speed=1"], "unknown option 'speed'"),
        "option-twice": (["-s", "easy", "-O", "queue_order=spt", "-O", "queue_order=saf"], "given twice"),
        "option-no-equals": (["-s", "easy", "-O", "queue_order"], "expected key=value"),
        "queue-order": (["-s", "easy", "-O", "queue_order=zzz"], "unknown queue policy"),
        "backfill-order": (["-s", "easy", "-O", "backfill_order=x"], "backfill_order"),
        "bool": (["-s", "hybrid", "-O", "protect_head=perhaps"], "expected true/false"),
        "float": (["-s", "hybrid", "-O", "alpha0=lots"], "alpha0"),
        "diws-nothing": (["-s", "diws"], "give model=PATH"),
        "diws-both": (["-s", "diws", "-O", "model={d}/m.skops", "-O", "history={d}/w.json"], "not both"),
        "diws-own-model": (["-s", "diws", "-O", "model={d}/m.skops"], "trained on the simulated workload itself"),
        "easy-pp-predictor": (["-s", "easy-pp", "-O", "predictor=magic"], "predictor"),
        "easy-pp-model-kind": (["-s", "easy-pp", "-O", "model={d}/m.skops"], "predictor=adaboost"),
        "runtime-perturbed": (["-s", "fcfs-bf1", "-O", "runtime=perturbed:2", "-O", "oracle={d}/w.json"],
                              "perturbed:A"),
        "runtime-exact-no-oracle": (["-s", "fcfs-bf1", "-O", "runtime=exact"], "needs oracle="),
        "inert-oracle": (["-s", "fcfs-bf1", "-O", "oracle={d}/w.json"], "has no effect"),
        "oracle-other": (["-s", "fcfs-bf1", "-O", "runtime=exact", "-O", "oracle={d}/w-delay-negative.json"],
                         "delay"),
        "policy-file": (["-s", "easy", "-O", "queue_order={d}/fitted.toml#lin"], "coefficients"),
        "policy-file-nested": (["-s", "easy", "-O", "queue_order={d}/nested.toml#lin"], NESTED),
        "history-nested": (["-s", "diws", "-O", "history={d}/w-nested-deep.json"], "w-nested-deep.json:1: malformed"),
        "policy-json-nested": (["-s", "policy", "-O", "policy={d}/w-nested-deep.json"], NESTED),
        "allow-overlap": (["-s", "easy", "--allow-overlap"], "--allow-overlap"),
        "external-and-scheduler": (["-s", "easy", "--external", "x {socket}"], "not both"),
        "external-options": (["--external", "x {socket}", "-O", "k=1"], "-O/--option configures our schedulers"),
        "external-no-socket": (["--external", "true"], "{socket}"),
        "record-without-external": (["-s", "easy", "--record", "{d}/out.jsonl"], "--record needs --external"),
        "out-like-option": (["-s", "easy", "-o", "queue_order=spt"], "looks like a scheduler option"),
        "out-is-a-file": (["-s", "easy", "-o", "{d}/t.swf"], "not a directory"),
    }
    for name, (extra, fragment) in options.items():
        base = ["simulate", "-p", "{d}/p.xml", "-w", "{d}/w.json"]
        if "-o" not in extra:
            base += ["-o", "{d}/out"]
        add(f"scheduler-{name}", [*base, *extra], fragment)
    # -------- command lines argparse cannot read: one line, no usage block
    argparse_cases = {
        "no-command": ([], "required"),
        "unknown-command": (["simulatte"], "invalid choice"),
        "simulate-unknown-flag": (["simulate", "-p", "x", "-w", "y", "--speed", "3"], "unrecognized arguments"),
        "simulate-missing-workload": (["simulate", "-p", "x", "-s", "easy"], "--workload"),
        "simulate-timing": (["simulate", "-p", "x", "-w", "y", "-s", "easy", "--timing", "real"], "invalid choice"),
        "simulate-timeout": (["simulate", "-p", "x", "-w", "y", "-s", "easy", "--timeout", "soon"], "invalid float"),
        "simulate-twice": (["simulate", "-p", "x", "-p", "y", "-w", "y", "-s", "easy"], "given twice"),
        "workload-no-subcommand": (["workload"], "required"),
        "generate-jobs-text": (["workload", "generate", "--jobs", "many", "--resources", "4", "--seed", "1", "-o",
                                "x"], "invalid int"),
        "generate-missing-seed": (["workload", "generate", "--jobs", "5", "--resources", "4", "-o", "x"], "--seed"),
        "lublin-mode": (["workload", "lublin", "--nodes", "16", "--jobs", "5", "--seed", "1", "--mode", "x", "-o",
                         "x"], "invalid choice"),
        "from-swf-no-output": (["workload", "from-swf", "t.swf"], "--output"),
        "predictor-model": (["predictor", "train", "-w", "x", "--model", "svm", "-o", "y"], "invalid choice"),
        "predictor-split": (["predictor", "train", "-w", "x", "--split", "k-fold", "-o", "y"], "invalid choice"),
        "policy-no-subcommand": (["policy"], "required"),
        "experiment-unknown": (["experiment", "go", "c.toml"], "invalid choice"),
        "report-no-output": (["report", "results"], "--output"),
        "metrics-nb-resources": (["metrics", "x.csv", "--nb-resources", "four"], "invalid int"),
        "platform-resource-per": (["platform", "generate", "--hosts", "2", "--resource-per", "rack", "-o", "x"],
                                  "invalid choice"),
        "scheduler-check-jobs": (["scheduler", "check", "easy", "--jobs", "lots"], "invalid int"),
        "serve-missing-scheduler": (["serve"], "scheduler"),
    }
    for name, (argv, fragment) in argparse_cases.items():
        add(f"argparse-{name}", argv, fragment)
    # -------- reading results
    add("metrics-empty", ["metrics", "{d}/t-empty.csv"], "empty file")
    add("metrics-other-csv", ["metrics", "{d}/t.csv"], "t.csv:1: field 'submission_time': missing column")
    add("report-no-results", ["report", "{d}/adir", "-o", "{d}/out"], "no results.parquet")
    add("report-unknown-gantt", ["report", "{d}/results", "-o", "{d}/out", "--gantt", "nope"], "nope")
    add("reproductions-no-results", ["reproductions", "{d}/adir", "-o", "{d}/out.md"], "adir")
    return cases


CASES = _cases()


def test_the_battery_is_large_enough():
    assert len(CASES) >= 150, len(CASES)
    assert len({case_id for case_id, _, _ in CASES}) == len(CASES)


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("case_id", "argv", "fragment"), CASES, ids=[case[0] for case in CASES])
def test_a_bad_input_is_one_line_and_touches_nothing(space, capsys, case_id, argv, fragment):
    argv = [a.replace("{d}", str(space)) for a in argv]
    fragment = fragment.replace("{d}", str(space))
    before = _tree(space)
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("schedlab: error: ") and "Traceback" not in err, err
    assert fragment in err, err
    assert "usage:" not in err
    assert _tree(space) == before, "a file changed or appeared"
    leftovers = [p for p in space.rglob("*") if p.name.startswith(".") and p.name != ".hypothesis"]
    assert not leftovers, leftovers  # no temporary file or staging directory left behind
