"""Real Batsim 4.2.1's jobs.csv on every platform it loads, kept small in tests/data so that
`simulate --timing batsim` is compared with it without Batsim (tests/test_batsim_timing_platforms.py).

    .venv/bin/python -m tests.batsim_timing_cases [--platforms NAME ...]   # re-record (needs Batsim)

Each case is a platform x a generated workload (tie-heavy, or overloaded) x a scheduler served by
`schedlab serve` to real Batsim. The workloads are generated again by the test from their seeds; each
recorded run keeps the sha256 of the workload it was made with, so a changed generator fails loudly.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from schedlab.platform import load_platform
from schedlab.workloads.synthetic import generate, ties_and_kills

TESTS = Path(__file__).resolve().parent
RECORDS = TESTS / "data" / "batsim-timing" / "real"
SHIPPED = TESTS / "data" / "batsim"
HAND_MADE = TESTS / "data" / "batsim-timing" / "platforms"
SHARED_PLATFORMS = TESTS.parents[1] / "shared" / "data" / "batsim" / "v4.2.1" / "platforms"

#: name -> path: Batsim 4.2.1's example platforms that real Batsim loads (the small ones shipped in
#: tests/data, the three large Vivaldi ones read from ../shared), and sixteen hand-made ones
PLATFORMS = {
    **{name: SHIPPED / f"{name}.xml" for name in (
        "cluster512", "cluster512_pfs", "cluster_energy_128", "energy_platform", "energy_platform_homogeneous",
        "energy_platform_homogeneous_no_net_1", "properties_example", "simple_coalloc_platform",
        "small_platform", "small_platform_pfs0", "small_platform_usage_replay")},
    **{f"energy_platform_homogeneous_no_net_{n}": SHARED_PLATFORMS / f"energy_platform_homogeneous_no_net_{n}.xml"
       for n in (128, 256, 512)},
    **{name: HAND_MADE / f"{name}.xml" for name in ("star", "two_level_tree", "cores4", "mesh_floyd", "mesh_dijkstra",
                                                    "vivaldi", "clusters", "slow_master", "slow_master_2s",
                                                    "peers", "bypass", "cabinets", "traced_star", "torus",
                                                    "fat_tree", "dragonfly")},
}
#: Batsim 4.2.1's examples that real Batsim does not run (docs/design.md's table says why)
NOT_LOADED = ("cluster_locality_4x128", "cluster_locality_8x16", "cluster_locality_8x64", "cluster_locality_32x16",
              "energy_platform_homogeneous_no_net", "graphene", "heterogeneous/platform")
#: name -> (scheduler, options); easy-pp's corrections are CALL_ME_LATERs 60 s before each prediction
SCHEDULERS = {"fcfs": ("fcfs", {}), "easy": ("easy", {}), "easy-sjbf": ("easy-sjbf", {}),
              "easy-pp": ("easy-pp", {"predictor": "default:600", "correction": "power"})}


def serve_argv(scheduler: str) -> list[str]:
    name, options = SCHEDULERS[scheduler]
    return [name, *[arg for key, value in options.items() for arg in ("-O", f"{key}={value}")]]
NB_JOBS = 150


def workloads(nb_resources: int) -> dict[str, str]:
    """The two workloads of a platform, as Batsim JSON text."""
    overloaded = generate(nb_jobs=NB_JOBS, nb_resources=nb_resources, seed=12, load=1.6, max_runtime_s=3600.0)
    return {"ties": json.dumps(ties_and_kills(nb_jobs=NB_JOBS, nb_resources=nb_resources, seed=11)),
            "overloaded": json.dumps(overloaded.to_json())}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def load_record(name: str) -> dict:
    with gzip.open(RECORDS / f"{name}.json.gz", "rt") as handle:
        return json.load(handle)


def real_run(scratch: Path, platform: Path, workload: Path, scheduler: str) -> str:
    """Real Batsim's jobs.csv with `schedlab serve SCHEDULER --platform PLATFORM` deciding (the platform's
    message times set easy-pp's wake-up margin, as in `--timing batsim`)."""
    from tests.helpers.real_batsim import run_real_batsim

    run_real_batsim(scratch, platform, workload, [sys.executable, "-m", "schedlab", "serve", *serve_argv(scheduler),
                                                  "--platform", str(platform), "--socket", "{socket}"])
    return (scratch / "out_jobs.csv").read_text()


def record(name: str) -> None:
    platform = PLATFORMS[name]
    nb_resources = load_platform(platform).nb_resources
    runs = {}
    with tempfile.TemporaryDirectory(prefix="schedlab-record-") as scratch:
        for kind, text in workloads(nb_resources).items():
            workload = Path(scratch) / f"{kind}.json"
            workload.write_text(text)
            for scheduler in SCHEDULERS:
                runs[f"{kind}/{scheduler}"] = {"workload_sha256": sha256(text),
                                               "jobs_csv": real_run(Path(scratch), platform, workload, scheduler)}
    RECORDS.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"platform": name, "batsim": "4.2.1", "nb_resources": nb_resources, "runs": runs},
                      indent=0, sort_keys=True)
    with gzip.GzipFile(RECORDS / f"{name}.json.gz", "wb", mtime=0) as handle:
        handle.write(body.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platforms", nargs="+", default=list(PLATFORMS), choices=list(PLATFORMS))
    args = parser.parse_args()
    for name in args.platforms:
        record(name)
        print(f"{name}: recorded", flush=True)


if __name__ == "__main__":
    main()
