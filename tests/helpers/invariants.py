"""Schedule invariants and the strategies that draw scenarios for them (shared by the property tests)."""

from __future__ import annotations

import io

from hypothesis import strategies as st

from schedlab.checker import invariant_failure
from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.outputs import job_row
from schedlab.schedulers.base import create_scheduler
from tests.helpers.data import make_workload


@st.composite
def scenarios(draw):
    nb_res = draw(st.integers(1, 8))
    nb_jobs = draw(st.integers(0, 25))
    specs = []
    for i in range(nb_jobs):
        submit = draw(st.integers(0, 60))
        res = draw(st.integers(1, nb_res + 1))  # sometimes too large: must be rejected
        delay = draw(st.integers(1, 40))
        walltime = draw(st.one_of(st.none(), st.integers(1, 50)))
        specs.append((str(i), submit, res, delay, walltime))
    return nb_res, specs


def simulate(nb_res, specs, name, options):
    engine = Engine(Platform.homogeneous(nb_res), make_workload(specs), create_scheduler(name, options))
    engine.run()
    return engine


def check_invariants(engine: Engine, nb_res: int) -> None:
    """Every schedule invariant, exactly (`scheduler check`'s checks, with no time tolerance); only
    impossible jobs are rejected (and, as batsched does, jobs without walltime in machines mode)."""
    assert engine.platform.nb_resources == nb_res
    machines = getattr(engine.scheduler, "reservation", "") == "machines"
    failure = invariant_failure(engine, tolerance_s=0.0,
                                may_reject=lambda job: job.res > nb_res or (machines and job.walltime_s is None))
    assert failure is None, failure


def render(engine: Engine) -> str:
    out = io.StringIO()
    for job_id in engine.finished:
        out.write(job_row(engine.records[job_id]) + "\n")
    return out.getvalue()


#: the ways a count-based EASY may take its decisions, which must all give the same schedule:
#: as it does; every decision a full pass; a CALL_ME_LATER for every planned end
PLAN_MODES = ("as is", "full passes", "all calls")


def watch_plan(scheduler, mode: str = "as is"):
    """Check after every decision of a count-based EASY that the cached reservation is what a
    fresh computation gives (backfilling never pushed the head's shadow time or its extra
    resources: what the incremental pass relies on); `mode` is one of PLAN_MODES."""
    decide = scheduler.decide
    full_passes = mode == "full passes"
    scheduler.calls_for_plan_only = mode != "all calls"

    def checked(now):
        if full_passes:
            scheduler._released = True
        decisions = decide(now)
        cached, queue = scheduler._reservation, scheduler._queue
        if queue and cached is not None and cached[0] == queue[0][3].id:
            assert scheduler._shadow(queue[0][3], now) == cached[1:], now
        return decisions

    scheduler.decide = checked
    return scheduler
