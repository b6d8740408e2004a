"""Benchmark: a 64-run campaign (EASY, 2,000-job synthetic workloads) with 1 worker, 2 workers (process
pool) and a Dask LocalCluster of 2 workers, measured side by side in one run; and the runner's
overhead per run against calling the engine directly on the same inputs.
Goals: >= 1.8x speed-up on 2 cores; runner overhead < 5% per run.

    .venv/bin/python benchmarks/bench_campaign.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from schedlab.engine import Engine
from schedlab.experiments.campaigns.campaign import load_campaign
from schedlab.experiments.campaigns.plan import expand
from schedlab.experiments.campaigns.runner import run_campaign
from schedlab.platform import load_platform
from schedlab.runs import simulate
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload

CAMPAIGN = """name = "bench"
seeds = [{seeds}]

[[workloads]]
name = "synthetic"
synthetic = {{ jobs = 2000, resources = 256, load = 0.9 }}

[[platforms]]
resources = 256
name = "c256"

[[schedulers]]
name = "easy"
options = {{ queue_order = ["fcfs", "spt", "saf", "wfp3"] }}
"""


def timed_campaign(folder: Path, runs, **kwargs) -> float:
    t0 = time.perf_counter()
    rows = run_campaign(runs, folder, **kwargs)
    elapsed = time.perf_counter() - t0
    assert len(rows) == len(runs) and all(r["complete"] for r in rows)
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bench.toml").write_text(CAMPAIGN.format(seeds=", ".join(str(s) for s in range(1, 17))))
        campaign = load_campaign(root / "bench.toml")
        inputs = root / "inputs"
        t0 = time.perf_counter()
        runs = expand(campaign, inputs)
        prepare = time.perf_counter() - t0
        print(f"campaign: {len(runs)} runs (16 seeds x 4 queue orders, EASY, 2,000 jobs, 256 resources; median of 3); "
              f"inputs made in {prepare:.2f} s")
        results = {}
        for label, kwargs in (("1 worker", {"workers": 1}), ("2 workers (process pool)", {"workers": 2}),
                              ("Dask LocalCluster, 2 workers", {"workers": 2, "dask": "local"})):
            times = []
            for repeat in range(3):  # this VM's speed varies between runs: median of 3
                # the same inputs for every mode (made once above); results in a fresh directory each
                folder = root / f"{label.split()[0].lower()}{repeat}"
                folder.mkdir()
                for entry in ("workloads", "platforms"):
                    (folder / entry).symlink_to(inputs / entry)
                times.append(timed_campaign(folder, runs, **kwargs))
            results[label] = statistics.median(times)
        from distributed import LocalCluster

        t0 = time.perf_counter()
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None).close()
        dask_start = time.perf_counter() - t0
        base = results["1 worker"]
        for label, elapsed in results.items():
            print(f"  {label:<30} {elapsed:7.2f} s   {len(runs) / elapsed:6.1f} runs/s   "
                  f"speed-up x{base / elapsed:.2f}")
        # overhead per run: the runner (1 worker, in process) against, on the same 64 runs, (a) the
        # engine alone on loaded inputs and (b) loading (once per workload) + simulate() writing the same
        # Batsim outputs
        engine_only, with_outputs = 0.0, 0.0
        loaded: dict[str, object] = {}  # each workload loaded once, as the runner does
        for number, run in enumerate(runs):
            t0 = time.perf_counter()
            platform = load_platform(run.platform_path)
            if run.workload_path not in loaded:
                loaded[run.workload_path] = load_workload(run.workload_path)
            workload = loaded[run.workload_path]
            t1 = time.perf_counter()
            Engine(platform, workload, create_scheduler(run.scheduler_name, dict(run.options))).run()
            t2 = time.perf_counter()
            simulate(platform, workload, create_scheduler(run.scheduler_name, dict(run.options)), root / f"d{number}")
            t3 = time.perf_counter()
            engine_only += t2 - t1
            with_outputs += (t1 - t0) + (t3 - t2)
        per_run, engine, direct = base / len(runs), engine_only / len(runs), with_outputs / len(runs)
        print(f"per run: runner {per_run * 1000:.1f} ms; engine alone {engine * 1000:.1f} ms (runner +"
              f"{100 * (per_run - engine) / engine:.0f}%: loading + Batsim outputs + summary + row); load + "
              f"simulate() with the same outputs {direct * 1000:.1f} ms (runner "
              f"{100 * (per_run - direct) / direct:+.1f}%, goal < +5%)")
        pool, dask = base / results["2 workers (process pool)"], base / results["Dask LocalCluster, 2 workers"]
        print(f"goal >= 1.8x on 2 cores: process pool x{pool:.2f}, Dask x{dask:.2f} (of which starting and "
              f"stopping the LocalCluster: {dask_start:.2f} s)")


if __name__ == "__main__":
    main()
