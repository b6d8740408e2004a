"""A scheduler's options are derived from its `__init__` (scikit-learn's `get_params`): what a run's
summary.json records re-creates the scheduler, for every shipped scheduler, and the re-created one
makes the same schedule. Literal-typed options are checked in one place, whoever creates the class."""

from __future__ import annotations

import json
import random

import pytest

from schedlab.api import simulate
from schedlab.errors import InputError
from schedlab.schedulers.base import Scheduler, all_schedulers, create_scheduler
from schedlab.schedulers.easy import EasyBackfilling
from tests.helpers.data import TEST_DATA

ORACLE = "@oracle"  # replaced by the workload file's path
POLICY = str(TEST_DATA / "policies.py") + ":shortest_requested"

#: per shipped scheduler, option sets covering its modes (defaults first)
OPTION_SETS: dict[str, list[dict[str, str]]] = {
    "fcfs": [{}, {"queue_order": "spt", "sort_window": "3"}],
    "easy": [{}, {"queue_order": "saf", "backfill_order": "sjbf"},
             {"reservation": "machines", "rjms_delay_s": "2"}],
    "easy-sjbf": [{}, {"queue_order": "wfp3"}],
    "easy-pp": [{}, {"predictor": "adaboost", "correction": "power", "refit_s": "3600", "seed": "2"},
                {"predictor": "default:600", "backfill": "sjbf", "correction": "tsafrir"}],
    "diws": [{"learner": "user-last2"}, {"learner": "walltime", "overrun": "simple", "aging_s": "600",
                                          "margin_min": "5"}],
    "easy-predicted": [{"learner": "user-last2"}, {"learner": "walltime", "overrun": "power", "quantile": "0.8"},
                       {"learner": "aft", "refit_jobs": "10", "quantile": "0.8"}],
    "easy-prob": [{"learner": "walltime"}, {"learner": "user-last2", "p": "0.6", "overrun": "tsafrir",
                                            "quantile": "0.7"}, {"learner": "exact", "oracle": ORACLE}],
    "hybrid": [{}, {"runtime": "exact", "oracle": ORACLE, "alpha_rule": "fixed", "step2_order": "sjbf",
                    "protect_head": "false"}],
    "online-sjf": [{}, {"runtime": "perturbed:0.5", "oracle": ORACLE, "seed": "3"}],
    "online-svf": [{}, {"predictor": "user-last2"}],
    "fcfs-bf1": [{}, {"runtime": "requested"}],
    "fcfs-bf2": [{}, {"runtime": "exact", "oracle": ORACLE}],
    "policy": [{"policy": POLICY}, {"policy": POLICY, "backfill": "true", "max_queue": "4", "horizons_s": "60,600",
                                    "time_scale_s": "60", "day_start_s": "3600", "invalid_action": "wait"}],
}


@pytest.fixture(scope="module")
def workload_file(tmp_path_factory):
    """60 jobs of 4 users on 16 cores, with walltimes above their run times."""
    rng = random.Random(39)
    jobs, profiles, submit = [], {}, 0
    for number in range(60):
        submit += rng.randint(0, 400)
        delay = rng.randint(30, 3000)
        profiles[f"p{number}"] = {"type": "delay", "delay": delay}
        jobs.append({"id": number, "subtime": submit, "res": rng.choice([1, 2, 4, 8, 16]),
                     "walltime": delay * rng.choice([1, 2, 4]) + 60, "profile": f"p{number}",
                     "user": f"u{number % 4}"})
    path = tmp_path_factory.mktemp("options") / "w.json"
    path.write_text(json.dumps({"nb_res": 16, "jobs": jobs, "profiles": profiles}))
    return path


def test_every_shipped_scheduler_has_option_sets():
    assert set(OPTION_SETS) == set(all_schedulers(plugins=False))


@pytest.mark.parametrize(("name", "given"), [(name, given) for name, sets in OPTION_SETS.items() for given in sets],
                         ids=lambda value: value if isinstance(value, str) else ",".join(value) or "defaults")
def test_summary_options_recreate_the_scheduler(name, given, workload_file, tmp_path):
    given = {key: str(workload_file) if value == ORACLE else value for key, value in given.items()}
    first = simulate(16, workload_file, name, options=given, out=tmp_path / "first")
    assert first.complete, first.error
    recorded = json.loads((tmp_path / "first" / "summary.json").read_text())["options"]
    for key, value in given.items():  # what was asked for is what was recorded, in its declared type
        assert str(recorded[key]).lower() == value.lower() or recorded[key] == pytest.approx(float(value)), key
    again = create_scheduler(name, recorded)
    assert again.options() == recorded
    simulate(16, workload_file, again, out=tmp_path / "again")
    assert (tmp_path / "again" / "jobs.csv").read_bytes() == (tmp_path / "first" / "jobs.csv").read_bytes()


def test_literal_options_are_checked_whoever_creates_the_class():
    with pytest.raises(ValueError, match="backfill_order must be one of queue, sjbf, svf, got 'lifo'"):
        EasyBackfilling(backfill_order="lifo")  # a Python caller, no create_scheduler in between
    with pytest.raises(InputError, match="backfill_order"):
        create_scheduler("easy", {"backfill_order": "lifo"})
    assert EasyBackfilling(backfill_order="svf").options()["backfill_order"] == "svf"


def test_create_scheduler_takes_a_class():
    class Mine(EasyBackfilling):
        def __init__(self, *, margin_s: float = 0.0, backfill_order: str = "queue") -> None:
            super().__init__(backfill_order=backfill_order)
            self.margin_s = margin_s

    made = create_scheduler(Mine, {"margin_s": "2.5"})
    assert isinstance(made, Mine) and made.options() == {"margin_s": 2.5, "backfill_order": "queue"}
    with pytest.raises(InputError, match="unknown option 'queue_order' for scheduler 'Mine'"):
        create_scheduler(Mine, {"queue_order": "spt"})
    with pytest.raises(TypeError, match="not a schedlab Scheduler"):
        create_scheduler(dict)  # type: ignore[arg-type]
    assert issubclass(Mine, Scheduler)
