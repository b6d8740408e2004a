"""Benchmark: EASY on overloaded workloads (thousands waiting), measured side by side in one run.

1. A 10,000-job `--load 1.5` workload on 512 cores: the whole `schedlab simulate` process (start-up,
   JSON, outputs included) against real batsim + pybatsim easyBackfill on the same file, and where
   the process's time goes (interpreter + imports, simulation, input and output).
2. 100,000 overloaded jobs in the engine: jobs/s, with the candidate index, with the plain walk, and
   FCFS (trivial decisions: the engine's own floor).
3. Time per decision against queue length 10 .. 10,000 (index and plain walk): a table and a plot.
4. reservation=machines against count mode on marconi100 (15,680 cores).

    .venv/bin/python benchmarks/bench_overload.py [--out DIR] [--quick] [--prefix BATSIM_PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_engine import decision_times

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.platforms import resolve_platform
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload
from schedlab.workloads.synthetic import generate

NB_RES = 512
#: What `schedlab simulate -s easy` imports before it reads anything (its lazy imports included)
STARTUP_IMPORTS = ("import schedlab.cli, schedlab.runs, schedlab.engine, schedlab.outputs, schedlab.metrics, "
                   "schedlab.platform, schedlab.workload, schedlab.schedulers.easy")


def wall(argv: list[str], timeout: float = 1800) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    return time.perf_counter() - t0


def pybatsim_command(prefix: Path) -> str | None:
    for candidate in (Path(sys.executable).parent / "pybatsim", prefix / "venv" / "bin" / "pybatsim"):
        if candidate.exists():
            return str(candidate)
    return shutil.which("pybatsim")


def real_pair(prefix: Path, platform: Path, workload: Path, out: Path, scheduler: list[str]) -> float:
    """Seconds for batsim + a decision process, both started here, until both exit."""
    port = 29000 + os.getpid() % 1000
    t0 = time.perf_counter()
    sched = subprocess.Popen([a.replace("{bind}", f"tcp://127.0.0.1:{port}") for a in scheduler],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([str(prefix / "bin" / "batsim"), "-p", str(platform), "-w", str(workload), "-e", str(out),
                    "-s", f"tcp://localhost:{port}"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=1800)
    sched.wait(timeout=60)
    return time.perf_counter() - t0


def engine_run(nb_resources: int, workload, name: str = "easy", *, use_index: bool = True,
               **options: str) -> float:
    scheduler = create_scheduler(name, options)
    scheduler.use_index = use_index
    engine = Engine(Platform.homogeneous(nb_resources), workload, scheduler)
    t0 = time.perf_counter()
    engine.run()
    return time.perf_counter() - t0


def decision_cost(queue_length: int, use_index: bool, repeats: int = 30) -> float:
    """Median seconds per EASY decision after a completion with `queue_length` waiting jobs that
    cannot start (bench_engine's set-up): the plain walk examines every one of them."""
    return statistics.median(decision_times(queue_length, "easy", repeats, use_index=use_index))


def plot(costs: dict[bool, dict[int, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for use_index, label, marker in ((True, "candidate index", "o"), (False, "plain walk of the queue", "s")):
        lengths = sorted(costs[use_index])
        ax.plot(lengths, [costs[use_index][q] * 1e6 for q in lengths], marker=marker, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("waiting jobs (none can start)")
    ax.set_ylabel("time per EASY decision after a completion (µs)")
    ax.set_title("EASY decision cost against queue length (512 cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out/bench_overload", help="where the plot goes")
    parser.add_argument("--prefix", default=os.environ.get("SCHEDLAB_BATSIM_PREFIX",
                                                           str(Path.home() / ".cache/schedlab/batsim-4.2.1")))
    parser.add_argument("--quick", action="store_true", help="10,000 instead of 100,000 jobs in part 2")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prefix = Path(args.prefix)
    platform = resolve_platform("constrained512")
    schedlab = [sys.executable, "-m", "schedlab"]

    print("1. 10,000 jobs, load 1.5, 512 cores (constrained512.xml), EASY; whole processes")
    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(tmp) / "w10k.json"
        workload.write_text(json.dumps(generate(nb_jobs=10_000, nb_resources=NB_RES, seed=1, load=1.5).to_json()))
        simulate = [*schedlab, "simulate", "-q", "-p", str(platform), "-w", str(workload), "-s", "easy"]
        ours = statistics.median(wall([*simulate, "--out", f"{tmp}/o{i}"]) for i in range(5))
        timed = wall([*simulate, "--timing", "batsim", "--out", f"{tmp}/ob"])
        print(f"   schedlab simulate easy (median of 5)          {ours:8.2f} s")
        print(f"   schedlab simulate easy --timing batsim         {timed:8.2f} s")
        pybatsim = pybatsim_command(prefix)
        if (prefix / "bin" / "batsim").exists() and pybatsim:
            real = real_pair(prefix, platform, workload, Path(tmp) / "pb",
                             [pybatsim, "easyBackfill", "-t", "0", "-s", "{bind}"])
            print(f"   real batsim + pybatsim easyBackfill           {real:8.2f} s")
            print(f"   ratio: batsim+pybatsim / simulate = {real / ours:.0f}x (goal >= 100x); "
                  f"/ simulate --timing batsim = {real / timed:.0f}x")
            print(f"   100x needs the whole process under {real / 100:.3f} s")
        else:
            print(f"   real batsim or pybatsim not found under {prefix}: side-by-side ratio skipped")

        # Where the whole process's time goes: the floors no faster simulation can remove
        startup = statistics.median(wall([sys.executable, "-c", STARTUP_IMPORTS]) for _ in range(5))
        inside = min(engine_run(NB_RES, load_workload(workload)) for _ in range(3))
        print(f"   of which: interpreter + imports {startup:.3f} s, simulation {inside:.3f} s, reading the "
              f"workload and writing outputs {ours - startup - inside:.3f} s")

    size = 10_000 if args.quick else 100_000
    print(f"2. {size:,} jobs, load 1.5, 512 cores, EASY in the engine (in-process)")
    workload = generate(nb_jobs=size, nb_resources=NB_RES, seed=1, load=1.5)
    indexed = min(engine_run(NB_RES, workload) for _ in range(2))
    plain = engine_run(NB_RES, workload, use_index=False)
    floor = min(engine_run(NB_RES, workload, "fcfs") for _ in range(2))
    print(f"   candidate index {indexed:7.2f} s  {size / indexed:9.0f} jobs/s (goal >= 50,000; best of 2)")
    print(f"   plain walk      {plain:7.2f} s  {size / plain:9.0f} jobs/s; "
          f"index / plain speed-up {plain / indexed:.1f}x")
    print(f"   fcfs            {floor:7.2f} s  {size / floor:9.0f} jobs/s: the same engine and queue with "
          f"trivial decisions (EASY / FCFS time {indexed / floor:.1f}x)")

    print("3. time per EASY decision after a completion, nothing can start (median of 30)")
    lengths = (10, 30, 100, 300, 1_000, 3_000, 10_000)
    costs = {use: {q: decision_cost(q, use) for q in lengths} for use in (True, False)}
    print("   waiting jobs   index (µs)   plain walk (µs)")
    for q in lengths:
        print(f"   {q:>12,}   {costs[True][q] * 1e6:10.1f}   {costs[False][q] * 1e6:15.1f}")
    print(f"   growth 10 -> 10,000: index x{costs[True][10_000] / costs[True][10]:.1f}, "
          f"plain walk x{costs[False][10_000] / costs[False][10]:.0f}")
    plot(costs, out / "decision_cost.png")
    print(f"   plot: {out / 'decision_cost.png'}")

    print("4. marconi100 (15,680 cores), 10,000 jobs, load 1.5: reservation=machines against count mode")
    big = generate(nb_jobs=10_000, nb_resources=15_680, seed=1, load=1.5)
    count = min(engine_run(15_680, big) for _ in range(2))
    machines = min(engine_run(15_680, big, reservation="machines") for _ in range(2))
    print(f"   count {count:6.2f} s, machines {machines:6.2f} s: "
          f"machines / count = {machines / count:.1f}x (goal <= 3x)")


if __name__ == "__main__":
    main()
