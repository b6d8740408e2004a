"""scripts/docker-local.sh and scripts/slurm-local.sh where they cannot run (the default suite; the
services themselves are run by the `docker` and `slurm` tests): one line saying why, exit 3, which
the tests of those groups turn into a skip with that line; nothing is started or written."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.helpers.services import CANNOT, REPO


def as_a_user(argv: list[str], home) -> subprocess.CompletedProcess:
    """argv run as an unprivileged user (nobody, through setpriv, when the tests run as root)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: cannot drop to an unprivileged user")
        home.chmod(0o777)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
                          cwd=home)


@pytest.mark.parametrize(("script", "up_args"), [("docker-local.sh", []), ("slurm-local.sh", ["--cpus", "4"])])
def test_without_root_up_says_why_in_one_line_and_exits_3(script, up_args, tmp_path):
    done = as_a_user(["bash", str(REPO / "scripts" / script), "up", *up_args], tmp_path)
    assert done.returncode == CANNOT
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{script.removesuffix('.sh')}: cannot here: needs root")
    assert done.stdout == ""
    assert not (tmp_path / "cache").exists()  # no work folder made


@pytest.mark.parametrize("script", ["docker-local.sh", "slurm-local.sh"])
def test_an_unknown_action_prints_the_usage_and_exits_2(script):
    done = subprocess.run(["bash", str(REPO / "scripts" / script), "sideways"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "usage: scripts/" in done.stderr
