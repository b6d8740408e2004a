"""Running the command line in-process and reading its one-line errors."""

from __future__ import annotations

from pathlib import Path

from schedlab.cli import main
from tests.helpers.data import TRACES

CAMPAIGN = """name = "t"
seeds = [1, 2]

[[workloads]]
name = "synthetic"
synthetic = {{ jobs = {jobs}, resources = 32, load = 1.0 }}

[[workloads]]
name = "trace"
swf = "{trace}"
convert = {{ start = 518400, days = 1.5 }}
windows = 2

[[platforms]]
resources = 32
name = "c32"

[[schedulers]]
name = "easy"
options = {{ queue_order = ["fcfs", "spt"] }}

[[schedulers]]
name = "fcfs"
{extra}"""


def campaign_file(tmp_path: Path, jobs: int = 200, extra: str = "", name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(CAMPAIGN.format(jobs=jobs, trace=TRACES / "kth-sp2-excerpt.swf.gz", extra=extra))
    return path


SMALL_CAMPAIGN = """name = "{name}"
seeds = [1]

[[workloads]]
name = "synthetic"
synthetic = {{ jobs = 30, resources = 8 }}

[[platforms]]
resources = 8
{schedulers}"""


def small_campaign(tmp_path: Path, name: str = "c", schedulers: tuple[str, ...] = ("fcfs", "easy"),
                   file: str = "c.toml") -> Path:
    """A one-seed campaign of 30 synthetic jobs on 8 resources, one run per scheduler."""
    path = tmp_path / file
    path.write_text(SMALL_CAMPAIGN.format(name=name, schedulers="".join(f'\n[[schedulers]]\nname = "{s}"\n'
                                                                        for s in schedulers)))
    return path


def one_line_error(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err, err
    return err
