"""docker/compose.yaml run for real (marker `docker`, CI's second pass): a Docker engine and the
project's images from scripts/docker-local.sh (skipped with its line where it cannot run: no root,
no apt-get), then the four services on Compose v1 (`docker-compose`) and v2 (`docker compose`) where
installed. Batsim's jobs.csv from the compose run equals `schedlab simulate --timing batsim`; the
campaign equals experiments/expected/smoke.json; every container runs as a non-root user; the
scheduler's socket is reachable inside the compose network only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from schedlab.cli import main
from schedlab.cli.experiments import expected_entries
from schedlab.experiments.campaigns.campaign import load_campaign
from schedlab.experiments.campaigns.plan import expand
from tests.helpers.services import REPO, script, service

pytestmark = pytest.mark.docker
DOCKER = "/usr/bin/docker"  # another `docker` client may come first on PATH
PROJECT = "schedlab-test"  # its containers, network and volume, apart from a user's own `docker` project
SERVICES = ("experiment", "inputs", "scheduler", "batsim")


def compose_commands() -> list[list[str]]:
    """The Compose clients installed: v1's docker-compose, v2's `docker compose` plugin."""
    found = []
    if shutil.which("docker-compose"):
        found.append([shutil.which("docker-compose") or "docker-compose"])
    if subprocess.run([DOCKER, "compose", "version"], capture_output=True).returncode == 0:
        found.append([DOCKER, "compose"])
    return found


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    """The engine up and the images built from this tree; the environment docker-compose needs."""
    with service("docker-local.sh", "--no-images"):
        built = script("docker-local.sh", "images")
        assert built.returncode == 0, built.stderr[-3000:]
        up = script("docker-local.sh", "up", timeout=300)  # now only says what to export
        exports = dict(line.removeprefix("export ").split("=", 1) for line in up.stdout.splitlines())
        yield {**os.environ, "PATH": f"/usr/bin:{os.environ['PATH']}", **exports}


def inspect(container: str) -> dict:
    return json.loads(subprocess.run([DOCKER, "inspect", container], capture_output=True, text=True,
                                     check=True).stdout)[0]


@pytest.fixture(scope="module", params=range(2), ids=["compose-v1", "compose-v2"])
def compose_run(request, images, tmp_path_factory):
    """The four services run to their end on a fresh volume; /data copied out; their containers."""
    commands = compose_commands()
    if request.param >= len(commands):
        pytest.skip("only one Compose client is installed here (Debian 12 ships v1 alone; PyPI has no v2)")
    command = [*commands[request.param], "-p", PROJECT, "-f", str(REPO / "docker" / "compose.yaml")]

    def compose(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *args], capture_output=True, text=True, env=images, timeout=timeout,
                              cwd=REPO / "docker", stdin=subprocess.DEVNULL)

    compose("down", "-v", "--remove-orphans")
    try:
        up = compose("up", "--no-build")
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-3000:]
        containers = {name: compose("ps", "-a", "-q", name).stdout.strip() for name in SERVICES}
        data = tmp_path_factory.mktemp("compose") / "data"
        subprocess.run([DOCKER, "cp", f"{containers['batsim']}:/data", str(data)], check=True, capture_output=True)
        yield compose, containers, data
    finally:
        compose("down", "-v", "--remove-orphans")


def test_the_four_services_exit_0_as_non_root(compose_run):
    _, containers, data = compose_run
    for name, container in containers.items():
        state = inspect(container)
        assert state["State"]["ExitCode"] == 0, name
        assert state["Config"]["User"] == "schedlab", name  # the images' user, not root
    for image in ("schedlab", "schedlab-batsim"):
        uid = subprocess.run([DOCKER, "run", "--rm", image, "id", "-u"], capture_output=True, text=True, check=True)
        assert uid.stdout.strip() == "10001", image
    assert (data / "batsim" / "out_jobs.csv").is_file() and (data / "campaign" / "results.parquet").is_file()


def test_batsim_in_compose_equals_simulate_timing_batsim(compose_run, tmp_path):
    _, _, data = compose_run
    inputs = data / "batsim"
    assert main(["simulate", "-p", str(inputs / "platform.xml"), "-w", str(inputs / "workload.json"), "-s", "easy",
                 "--timing", "batsim", "-o", str(tmp_path / "ours"), "--quiet"]) == 0
    theirs = (inputs / "out_jobs.csv").read_text()
    assert theirs.count("\n") == 501  # the header and the 500 jobs
    assert (tmp_path / "ours" / "jobs.csv").read_text() == theirs


def test_campaign_in_compose_equals_the_expected_results(compose_run):
    _, _, data = compose_run
    campaign = REPO / "experiments" / "smoke.toml"
    expected = json.loads((REPO / "experiments" / "expected" / "smoke.json").read_text())["runs"]
    runs = expand(load_campaign(campaign), data / "campaign")  # the same run ids: content, not paths
    assert expected_entries(runs, data / "campaign") == expected


def test_the_scheduler_socket_is_reachable_inside_the_compose_network_only(compose_run, images):
    compose, containers, _ = compose_run
    scheduler = inspect(containers["scheduler"])
    assert not scheduler["HostConfig"]["PortBindings"]  # nothing published on the host
    networks = scheduler["NetworkSettings"]["Networks"]
    assert list(networks) == [f"{PROJECT}_internal"]
    network = json.loads(subprocess.run([DOCKER, "network", "inspect", f"{PROJECT}_internal"], capture_output=True,
                                        text=True, check=True).stdout)[0]
    assert network["Internal"] is True
    # a live scheduler: reached from a container on the compose network, not from the default bridge
    started = compose("run", "-d", "--no-deps", "scheduler")
    assert started.returncode == 0, started.stderr
    live = started.stdout.strip().splitlines()[-1]
    try:
        address = inspect(live)["NetworkSettings"]["Networks"][f"{PROJECT}_internal"]["IPAddress"]
        # tries for 10 s (the server may still be starting): reached at once, or never
        probe = ["python3", "-c", "import socket, sys, time\nfor _ in range(20):\n    try:\n"
                 "        socket.create_connection((sys.argv[1], 28000), timeout=0.5).close(); break\n"
                 "    except OSError:\n        time.sleep(0.5)\nelse:\n    sys.exit(1)", address]
        for network_name, reachable in ((f"{PROJECT}_internal", True), ("bridge", False)):
            run = subprocess.run([DOCKER, "run", "--rm", "--network", network_name, "schedlab", *probe],
                                 capture_output=True, text=True, timeout=60)
            assert (run.returncode == 0) is reachable, (network_name, run.stderr[-500:])
    finally:
        subprocess.run([DOCKER, "rm", "-f", live], capture_output=True)
