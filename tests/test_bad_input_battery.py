"""A battery of bad inputs across every command (issues 38 and 57), run in-process through `main(argv)`:
each is exit 2 with one line naming the file (line, field) where there is one, and leaves every
earlier file as it was and no new file behind. The cases are generated from tables: missing and
unreadable inputs per command, outputs that are inputs, workload, SWF, table and campaign
mutations, flag ranges, scheduler options and command lines argparse cannot read."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from schedlab.cli import main
from schedlab.platforms.generate import cluster_xml
from schedlab.workload import parse_workload
from tests.helpers.cli import small_campaign
from tests.helpers.data import TRACES, make_workload

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
    # beyond any machine: 100 PB, 2.5 PB (a refusal that depends on this machine's memory would not be a test)
    "resources-huge": (("[[platforms]]\nresources = 8", "[[platforms]]\nresources = 1000000000000000000"),
                       "field 'platforms[0].resources': a run on 1,000,000,000,000,000,000 resources needs about"),
    "jobs-huge": (("jobs = 20", "jobs = 1000000000000000"),
                  "field 'workloads[0].jobs': a workload of 1,000,000,000,000,000 jobs"),
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
        "simulate-platform-memory": (["simulate", "-p", "1000000000000000000", "-w", "{d}/w.json", "-s", "easy",
                                      "-o", "{d}/out"], "--platform 1000000000000000000 with --workload"),
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


# ---------------------------------------------------------------- round 2 (issue 57): not refusals, but said
# Inputs a run goes on with, or the machine's limits: each is said in one line (or written as far as it
# can be) and tested here with the refusals above; signals are in tests/test_signals.py.
_campaign = small_campaign


def test_run_times_lost_to_rounding_are_said_and_run_as_batsim_runs_them(tmp_path, capsys):
    """A subtime of 1e300 leaves a job's run time 0 in floating point (Batsim too): the run goes on,
    and simulate and `workload check` say which job, in one line."""
    doc = make_workload([("a", 0, 1, 10, 100), ("b", 1e300, 1, 10, 100), ("c", 1e300, 1, 20, 100)], nb_res=2).to_json()
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    assert main(["simulate", "-p", "2", "-w", str(path), "-s", "easy", "-o", str(tmp_path / "o"), "-q"]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "rounding" in line]
    assert said == [f"schedlab: warning: {path}: 4 run time(s) or walltime(s) are changed by rounding at their submit "
                    "time (first: job 'b' submitted at 1e+300 s: its run time of 10 s becomes 0 s, as in Batsim, "
                    "which computes in the same floating point)"]
    rows = pd.read_csv(tmp_path / "o" / "jobs.csv").set_index("job_id")
    assert rows.loc["b", "execution_time"] == 0 and rows.loc["a", "execution_time"] == 10
    assert main(["workload", "check", str(path)]) == 0
    assert "job 'b' submitted at 1e+300 s" in capsys.readouterr().out


def test_no_more_workers_than_runs_and_the_message_says_so(tmp_path, capsys):
    path = _campaign(tmp_path, schedulers=("easy",))
    started = time.monotonic()
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "1000"]) == 0
    assert time.monotonic() - started < 30  # not a thousand processes started for one run
    assert "note: --workers 1000: 1 run to do, so 1 worker" in capsys.readouterr().err


def test_more_workers_than_memory_holds_are_cut_and_said(tmp_path, capsys, monkeypatch):
    from schedlab import memory
    from schedlab.experiments.campaigns.campaign import load_campaign, run_memory_bytes

    path = _campaign(tmp_path, schedulers=("fcfs", "easy", "easy-sjbf"))
    each = run_memory_bytes(load_campaign(path))
    monkeypatch.setattr(memory, "available_bytes", lambda per_process=True: (2 * each + 1, "left for this test"))
    assert main(["experiment", "run", str(path), "-o", str(tmp_path / "o"), "--workers", "8"]) == 0
    err = capsys.readouterr().err
    assert (f"note: --workers 8: 2 runs of about {memory.size(each)} fit in the {memory.size(2 * each + 1)} left for "
            "this test, so 2 workers") in err


def test_windows_a_history_skips_are_said_at_plan_run_and_in_the_report(tmp_path, capsys):
    """windows = N with history = "completed-before" made fewer windows (the first have no history),
    and nothing said so; now plan, run and the report do. (The excerpt's first job ends after 7.3 days.)"""
    path = tmp_path / "w.toml"
    path.write_text(f"""name = "w"
[[workloads]]
name = "kth"
swf = "{TRACES / 'kth-sp2-excerpt.swf.gz'}"
convert = {{ days = 4 }}
windows = 3
history = "completed-before"
[[platforms]]
resources = 100
[[schedulers]]
name = "easy"
""")
    said = ("workload kth: windows = 3 made 1 window(s); skipped window(s) 0, 1: it holds no job, or no job of the "
            "trace completed before it (its history would be empty)")
    assert main(["experiment", "plan", str(path)]) == 0
    assert f"note: {said}" in capsys.readouterr().out
    out = tmp_path / "o"
    assert main(["experiment", "run", str(path), "-o", str(out), "--workers", "1"]) == 0
    assert f"note: {said}" in capsys.readouterr().err
    assert said in json.loads((out / "notes.json").read_text())
    assert main(["report", str(out), "-o", str(tmp_path / "r")]) == 0
    assert said in (tmp_path / "r" / "report.md").read_text()


def test_processor_counts_batsim_cannot_read_are_dropped_without_a_numpy_warning(tmp_path, capsys):
    """A requested processor count of 1e23 wrapped to a negative res in the int64 cast (nb_res
    -9223372036854775808, a RuntimeWarning with its source line on stderr); Batsim reads res as a
    32-bit integer, so such a job is dropped and counted."""
    import warnings

    path = tmp_path / "huge.swf"
    path.write_text("1 0 0 100 4 -1 -1 99999999999999999999999 200 -1 1 1 3 -1 1 0 -1 -1\n"
                    "2 10 0 100 4 -1 -1 4 200 -1 1 1 3 -1 1 0 -1 -1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["workload", "from-swf", str(path), "-o", str(tmp_path / "w.json")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"dropped +1  processor count over 2,147,483,647", out)
    workload = parse_workload((tmp_path / "w.json").read_text())
    assert workload.nb_res == 4 and [job.res for job in workload.jobs] == [4]


def test_a_machine_size_guessed_from_the_widest_job_is_said(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("job_id,submit_time,run_time,num_cores_req\n1,0,60,4\n2,30,90,432\n")
    assert main(["workload", "from-table", str(path), "-o", str(tmp_path / "w.json")]) == 0
    assert "nb_res 432: the widest job kept, as neither --platform-size nor the trace gave" in capsys.readouterr().out
    assert main(["workload", "from-table", str(path), "-o", str(tmp_path / "v.json"), "--platform-size", "10000"]) == 0
    assert "the widest job kept" not in capsys.readouterr().out


# ---------------------------------------------------------------- a full disk, for real
SCHEDLAB = [sys.executable, "-m", "schedlab"]
FULL_CAMPAIGN = """name = "full"
seeds = [1, 2, 3]
[[workloads]]
name = "s"
synthetic = { jobs = 3000, resources = 64 }
[[platforms]]
resources = 64
[[schedulers]]
name = "easy"
options = { queue_order = ["fcfs", "spt", "saf", "wfp3"] }
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB file system (a tmpfs), unmounted afterwards."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(disk)], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("w") / "w.json"  # its jobs.csv: 1.6 MB
    subprocess.run([*SCHEDLAB, "workload", "generate", "--jobs", "10000", "--resources", "64", "--seed", "1", "-o",
                    str(path)], check=True, capture_output=True)
    return path


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_simulate_on_a_full_disk_names_the_file_and_keeps_the_earlier_run(small_disk, workload):
    out = small_disk / "sim"
    first = subprocess.run([*SCHEDLAB, "simulate", "-p", "64", "-w", str(workload), "-s", "easy", "-o", str(out),
                            "-q"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = digest(out)
    second = subprocess.run([*SCHEDLAB, "simulate", "-p", "64", "-w", str(workload), "-s", "easy-sjbf", "-o",
                             str(out), "-q"], capture_output=True, text=True)
    assert second.returncode == 1
    assert second.stderr == (f"schedlab: error: cannot write {out}/jobs.csv: No space left on device (the earlier "
                             "complete run there is kept)\n")
    assert digest(out) == before  # no staging folder, no incomplete/, the earlier run as it was


def test_a_campaign_on_a_full_disk_names_the_file_and_leaves_no_partial_file(small_disk, tmp_path):
    campaign = tmp_path / "c.toml"
    campaign.write_text(FULL_CAMPAIGN)
    out = small_disk / "c"
    done = subprocess.run([*SCHEDLAB, "experiment", "run", str(campaign), "-o", str(out), "--workers", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schedlab: error: cannot write {out}/runs/"), done.stderr
    assert lines[0].endswith(": No space left on device (nothing was written)") and "Traceback" not in done.stderr
    leftovers = [p.name for p in out.rglob("*") if p.name.endswith(".part")]
    assert leftovers == []  # neither a run cut short nor results.parquet.part


def test_scheduler_check_says_how_much_of_a_workload_it_checks(tmp_path, capsys):
    """`scheduler check -w` runs the first 500 jobs; only --help said so."""
    path = tmp_path / "w.json"
    assert main(["workload", "generate", "--jobs", "700", "--resources", "16", "--seed", "1", "-o", str(path)]) == 0
    capsys.readouterr()
    main(["scheduler", "check", "fcfs", "-w", str(path), "--speed-jobs", "100,200"])
    assert f"note: {path}: the checks run its first 500 of 700 jobs (--jobs N for more)" in capsys.readouterr().err


def test_a_large_run_is_said_in_one_line_and_goes_on(tmp_path, capsys, monkeypatch):
    """simulate -p 100000000 ran 94 s unannounced (about 10 GB of 22): over a quarter of the memory
    there is, a run is said in one line (here the memory there is is made small)."""
    from schedlab import memory

    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(_workload_doc()))
    estimate = memory.estimate_run(4000, 100, workload_file=workload)
    monkeypatch.setattr(memory, "available_bytes", lambda per_process=True: (3 * estimate, "left for this test"))
    assert main(["simulate", "-p", "4000", "-w", str(workload), "-s", "easy", "-o", str(tmp_path / "o")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "memory" in line]
    assert said == [f"schedlab: note: --platform 4000 with --workload {workload} (easy) needs about "
                    f"{memory.size(estimate)} of memory, of the {memory.size(3 * estimate)} left for this test"]
