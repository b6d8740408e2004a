"""Data paths, the number of examples a property test draws, and small workloads built in code (the
project ships its own test data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from schedlab.checker import build_workload
from schedlab.workload import Workload

REPO = Path(__file__).resolve().parent.parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
BATSIM_V4 = SHARED_DATA / "batsim" / "v4.2.1"
#: Shipped copies and excerpts (tests/data/README.md): the suite needs no ../shared for these.
TEST_DATA = REPO / "tests" / "data"
BATSIM_DATA = TEST_DATA / "batsim"
TRACES = TEST_DATA / "traces"

#: The default suite draws a fifth of each property test's examples (it stays under two minutes on 2
#: cores; locally, the examples that once failed are replayed first from .hypothesis/, which the
#: derandomized CI profile does not keep); SCHEDLAB_THOROUGH=1 draws them all (.ci/run's second
#: pass). Tests without their own count: 20, or Hypothesis's 100.
THOROUGH = os.environ.get("SCHEDLAB_THOROUGH") == "1"


def examples(count: int) -> int:
    """A property test's number of examples: `count` when thorough, a fifth (at least 5) otherwise."""
    return count if THOROUGH else max(5, count // 5)


def make_workload(specs, name: str = "w0", nb_res: int | None = None) -> Workload:
    """specs: iterable of (job_name, submit_s, res, delay_s, walltime_s or None[, extra dict]).
    Each job has its own profile, named after the job (profile names never tell run times):
    `scheduler check`'s builder, with the tests' source name."""
    return build_workload(specs, name=name, nb_res=nb_res, source="<test>")


def need_shared(path: Path) -> Path:
    """A whole trace or collection from ../shared/data (tests using it are marked `traces`)."""
    if not path.exists():
        pytest.skip(f"shared data not present: {path} (expected beside the repo in ../shared/data)")
    return path
