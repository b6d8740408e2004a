"""Workloads and files shared by several test modules."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import strategies as st

from schedlab.platforms.generate import cluster_xml
from schedlab.schedulers.diws import DIWS
from tests.helpers.data import make_workload


class Oracle(DIWS):
    """DIWS told the true run times (a test device: schedulers never see them otherwise)."""

    runtimes: dict[str, float] = {}
    scale = 1.0

    def predict_runtimes_s(self, jobs):
        return np.array([self.runtimes[job.id] * self.scale for job in jobs])


def actual(delay, walltime):
    """What a job really runs: its delay, or its walltime when Batsim kills it there."""
    return float(delay if walltime is None else min(delay, walltime))


def oracle(specs, scale=1.0, **options):
    scheduler = Oracle(**options)
    scheduler.runtimes = {f"w0!{name}": actual(delay, walltime) for name, _, _, delay, walltime, *_ in specs}
    scheduler.scale = scale
    return scheduler


def users_workload(tmp_path, nb_jobs: int = 120, nb_res: int = 16):
    """Users whose jobs run a few minutes under hour-long walltimes: user-last2 under-predicts
    often, so corrections (CALL_ME_LATER round trips) happen. Run times have odd fractions, so a
    completion never coincides with a submission: under real Batsim such events reach the
    scheduler in separate messages (the engine issue's Batsim timing), which would change what
    user-last2 knows when it predicts."""
    import random


    rng = random.Random(4)
    specs = []
    for i in range(nb_jobs):
        user = rng.choice("abcd")
        runtime = rng.choice([30, 120, 600, 1500]) * (1 + "abcd".index(user)) + rng.randint(1, 999) / 137.0
        specs.append((str(i), 40 * i, rng.randint(1, 8), runtime, 3600 * 3,
                      {"user": user, "requested_time_s": 3600 * 3}))
    (tmp_path / "w.json").write_text(json.dumps(make_workload(specs, nb_res=nb_res).to_json()))
    (tmp_path / "p.xml").write_text(cluster_xml(nb_res))


def workload_file(tmp_path, runtimes=None, name="w.json", n=120):
    """Users 0-3 with habits: user u requests 4u+1 cores and runs about 100(u+1) s."""
    rng = np.random.default_rng(3)
    specs = []
    for i in range(n):
        user = i % 4
        runtime = runtimes[i] if runtimes is not None else float(100 * (user + 1) + rng.integers(0, 20))
        specs.append((str(i), 10 * i, 4 * user + 1, runtime, 1000, {"user": f"u{user}", "requested_time_s": 1000,
                                                                     "queue": user % 2}))
    path = tmp_path / name
    path.write_text(json.dumps(make_workload(specs, nb_res=64).to_json()))
    return path


@st.composite
def loaded(draw):
    """Overloaded workloads with many ties: few distinct submit times, sizes and durations."""
    nb_res = draw(st.integers(2, 12))
    nb_jobs = draw(st.integers(1, 120))
    specs = []
    for i in range(nb_jobs):
        submit = draw(st.integers(0, 30)) * 5
        res = draw(st.sampled_from([1, 1, 2, 3, nb_res // 2 or 1, nb_res]))
        delay = draw(st.sampled_from([1, 5, 10, 20, 60, 100]))
        walltime = draw(st.sampled_from([None, 5, 10, 60, 100, 200]))
        specs.append((str(i), submit, res, delay, walltime))
    return nb_res, specs


RET_WORKLOAD = {
    "nb_res": 2,
    "jobs": [{"id": "ok", "subtime": 0, "res": 1, "walltime": 100, "profile": "p_ok"},
             {"id": "fails", "subtime": 0, "res": 1, "walltime": 100, "profile": "p_fails"},
             {"id": "late", "subtime": 1, "res": 1, "walltime": 5, "profile": "p_late"}],
    "profiles": {"p_ok": {"type": "delay", "delay": 10}, "p_fails": {"type": "delay", "delay": 20, "ret": 3},
                 "p_late": {"type": "delay", "delay": 50, "ret": 1}},
}


# name, submit, res, delay, walltime
SPECS = [
    ("A", 0, 3, 10, 12),   # runs [0,10] on 0-2
    ("B", 1, 4, 5, 6),     # blocked head: shadow = 12 (A's walltime end), extra = 0
    ("C", 2, 1, 8, 9),     # 2+9 = 11 <= 12: backfillable
    ("D", 2, 1, 4, 5),     # 2+5 = 7 <= 12: backfillable, shorter than C
    ("E", 20, 2, 10, 5),   # killed at its walltime: delay 10 >= walltime 5
    ("F", 21, 5, 1, 2),    # larger than the platform: rejected
]


def kth_excerpt_campaign(arms, *, days: float, windows: int | None = None, head: str = "", tail: str = "") -> str:
    """A campaign's text on the shipped KTH excerpt (from t = 648000 s, a history of the jobs completed
    before each window), on 100 cores; `arms`: (scheduler, label or None, options as TOML or None)."""
    from tests.helpers.data import TRACES

    lines = ['name = "p"', head, "[[workloads]]", 'name = "kth"', f'swf = "{TRACES / "kth-sp2-excerpt.swf.gz"}"',
             f"convert = {{ start = 648000, days = {days} }}", *([f"windows = {windows}"] if windows else []),
             'history = "completed-before"', "", "[[platforms]]", "resources = 100", 'name = "c100"']
    for name, label, options in arms:
        lines += ["", "[[schedulers]]", f'name = "{name}"', *([f'label = "{label}"'] if label else []),
                  *([f"options = {options}"] if options else [])]
    return "\n".join([*lines, "", tail]) + "\n"
