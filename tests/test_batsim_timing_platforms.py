"""`simulate --timing batsim` against real Batsim 4.2.1's jobs.csv on every platform Batsim's
examples hold that real Batsim loads, and hand-made ones (tests/batsim_timing_cases.py): recorded
outputs in tests/data/batsim-timing/real (that module re-records them), so the comparison needs no
Batsim."""

from __future__ import annotations

import pytest

from schedlab.engine.batsim_network import message_routes
from schedlab.errors import InputError
from schedlab.platform import load_platform
from schedlab.runs import simulate
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload
from tests.batsim_timing_cases import NOT_LOADED, PLATFORMS, RECORDS, SCHEDULERS, load_record, sha256, workloads


def _cases():
    for name, path in PLATFORMS.items():
        marks = [] if path.is_file() else [pytest.mark.skip(reason=f"{path} is absent (../shared/data)")]
        if not (RECORDS / f"{name}.json.gz").is_file():
            marks = [pytest.mark.skip(reason=f"no recorded real output for {name}")]
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_cases()))
def test_jobs_csv_equals_real_batsim(tmp_path, name):
    record = load_record(name)
    platform = load_platform(PLATFORMS[name])
    assert platform.nb_resources == record["nb_resources"]
    differing = {}
    for kind, text in workloads(platform.nb_resources).items():
        path = tmp_path / f"{kind}.json"
        path.write_text(text)
        workload = load_workload(path)
        for scheduler, (scheduler_name, options) in SCHEDULERS.items():
            real = record["runs"][f"{kind}/{scheduler}"]
            assert real["workload_sha256"] == sha256(text), "the generator changed: re-record"
            out = tmp_path / f"{kind}-{scheduler}"
            result = simulate(platform, workload, create_scheduler(scheduler_name, options), out, timing="batsim")
            assert result.error is None
            ours = (out / "jobs.csv").read_text().splitlines()
            rows = real["jobs_csv"].splitlines()
            assert len(rows) == len(ours)
            bad = [(a, b) for a, b in zip(rows, ours, strict=True) if a != b]
            if bad:
                differing[f"{kind}/{scheduler}"] = (len(bad), bad[0])
    assert differing == {}


@pytest.mark.parametrize("name", NOT_LOADED)
def test_platforms_real_batsim_refuses_are_refused_with_their_line(name):
    """Batsim 4.2.1's examples that real Batsim does not run are refused, each with a line."""
    from tests.helpers.data import BATSIM_V4

    path = BATSIM_V4 / "platforms" / f"{name}.xml"
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared/data)")
    why = {"graphene": "'host/model'", "energy_platform_homogeneous_no_net": "'network/coordinates'",
           "heterogeneous/platform": "routing 'None'"}.get(name, "exactly one master host")  # docs/design.md's table
    with pytest.raises(InputError, match=why) as error:
        message_routes(path)
    assert error.value.line is not None


@pytest.mark.batsim
@pytest.mark.parametrize("name", ["vivaldi", *(pytest.param(name, marks=pytest.mark.slow)
                                              for name in ("star", "properties_example", "mesh_dijkstra",
                                                           "slow_master_2s"))])
def test_the_records_are_what_real_batsim_prints(tmp_path, name):
    """The recorded outputs are real Batsim's: a rerun of one case per platform gives them again."""
    from tests.batsim_timing_cases import real_run

    record = load_record(name)
    text = workloads(record["nb_resources"])["ties"]
    workload = tmp_path / "w.json"
    workload.write_text(text)
    rerun = real_run(tmp_path, PLATFORMS[name], workload, "easy-pp")
    assert rerun == record["runs"]["ties/easy-pp"]["jobs_csv"]
