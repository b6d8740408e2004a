"""Fixtures and Hypothesis profiles. Helpers that test modules share are in tests/helpers/."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from tests.helpers.data import THOROUGH

# Property tests explore new examples on every local run; under CI (CI=true) they draw the same
# examples each time, so a run's verdict is reproducible and a failure names a replayable case.
settings.register_profile("ci", derandomize=True, print_blob=True, max_examples=100 if THOROUGH else 20)
settings.register_profile("dev", print_blob=True, max_examples=100 if THOROUGH else 20)
settings.load_profile(os.environ.get("SCHEDLAB_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser):
    parser.addoption("--second-pass", action="store_true",
                     help="CI's second pass, after the default suite: only the slow, docker and slurm groups and "
                          "the tests of modules whose size depends on SCHEDLAB_THOROUGH (theirs, or Hypothesis's "
                          "profile); the rest already ran as they would again")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--second-pass"):
        return
    kept, left = [], []
    for item in items:
        module = getattr(item, "module", None)
        sized = module is not None and any(hasattr(module, name) for name in ("THOROUGH", "examples", "given"))
        long = any(item.get_closest_marker(name) for name in ("slow", "docker", "slurm"))
        (kept if sized or long else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@pytest.fixture(autouse=True, scope="session")
def _scratch_tmpdir(tmp_path_factory):
    """Crash logs of the tests that provoke bugs on purpose, and other temporary files of the code
    under test (subprocesses included), go to the session's scratch directory, not the system's."""
    import tempfile

    scratch = tmp_path_factory.mktemp("tmpdir")
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(scratch), None
    yield scratch
    if saved[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[0]
    tempfile.tempdir = saved[1]
