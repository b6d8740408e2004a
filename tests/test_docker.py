"""docker/: the compose file parses and every command in it is a real command line (no engine
needed; tests/test_docker_compose.py builds the images and runs the services, marker `docker`)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from schedlab.cli import build_parser

DOCKER = Path(__file__).resolve().parent.parent / "docker"
BATSIM_FLAGS = {"-p", "-w", "-e", "-s", "--mmax-workload", "-m"}  # Batsim 4.2.1 options used here


def compose() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def commands(service: dict) -> list[list[str]]:
    """The command lines of a service (`sh -c "a && b"` holds two)."""
    command = service["command"]
    if command[:2] == ["sh", "-c"]:
        return [shlex.split(part) for part in command[2].split("&&")]
    return [command]


def test_compose_services_are_wired_together():
    services = compose()["services"]
    assert set(services) == {"batsim", "scheduler", "experiment", "inputs"}
    batsim = services["batsim"]["command"]
    assert batsim[batsim.index("-s") + 1] == "tcp://scheduler:28000"
    serve = services["scheduler"]["command"]
    assert serve[serve.index("--socket") + 1] == "tcp://*:28000"  # bound inside the compose network
    # batsim reads what `inputs` writes
    written = {c[c.index("-o") + 1] for c in commands(services["inputs"])}
    assert {batsim[batsim.index("-w") + 1], batsim[batsim.index("-p") + 1]} == written
    # the experiment runs the smoke campaign by default, a file the image holds
    experiment = services["experiment"]["command"]
    default = experiment[3].removeprefix("${CAMPAIGN:-").removesuffix("}")
    assert default == "experiments/smoke.toml" and (DOCKER.parent / default).is_file()
    assert services["experiment"]["working_dir"] == "/src"


def test_every_schedlab_command_parses():
    parser = build_parser()
    for name, service in compose()["services"].items():
        for command in commands(service):
            command = [a.replace("${CAMPAIGN:-experiments/smoke.toml}", "experiments/smoke.toml") for a in command]
            if command[0] == "schedlab":
                args = parser.parse_args(command[1:])  # SystemExit (a failure) if not a real command line
                assert callable(args.func), name
            else:
                assert command[0] == "batsim"
                flags = {a for a in command[1:] if a.startswith("-")}
                assert flags <= BATSIM_FLAGS, name


def test_dockerfiles_name_real_files_and_refs():
    app = (DOCKER / "Dockerfile").read_text()
    for line in app.splitlines():
        if line.startswith("COPY ") and not line.startswith("COPY --"):
            for source in line.split()[1:-1]:
                assert (DOCKER.parent / source).exists(), source
    batsim = (DOCKER / "batsim.Dockerfile").read_text()
    copied = [line.split()[1] for line in batsim.splitlines() if line.startswith("COPY ")]
    assert copied == ["scripts/install-batsim.sh", "docker/batsim-inputs"]
    assert all((DOCKER.parent / path).exists() for path in copied)
    assert "install-batsim.sh /opt/batsim --git" in batsim  # upstream git by default, pinned in the script
    assert "install-batsim.sh /opt/batsim --src /build/inputs/src" in batsim  # the offline archives
    assert "/build/inputs/prefix/RUNTIME_PACKAGES" in batsim  # a prefix built already: no second compile
    # only the inputs folder's README and ignore file are committed (the prefix or sources are local)
    ignored = (DOCKER / "batsim-inputs" / ".gitignore").read_text().split()
    assert ignored == ["*", "!.gitignore", "!README.md"]
    script = (DOCKER.parent / "scripts" / "install-batsim.sh").read_text()
    assert "BATSIM_REV:-v4.2.1}" in script and "17072778995100fc90214ea4910bf5b171adfd0d" in script
