"""Benchmark against real Batsim 4.2.1: the same generated workloads (512 cores) run side by side by
  real batsim + batsched easy_bf | real batsim + pybatsim 3.2.1 easyBackfill | real batsim +
  `schedlab serve easy` | our engine + `--external batsched easy_bf` | our engine in-process.
Wall seconds (whole commands: start-up, JSON loading and outputs included) and peak memory (max RSS
of each process, via /usr/bin/time), ratios.

    .venv/bin/python benchmarks/bench_batsim.py [--sizes 1000 5000 10000] [--prefix BATSIM_PREFIX]
batsched runs only at 1,000 and 5,000 jobs (it re-scans its queue on every completion).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from schedlab.platforms import platform_path
from schedlab.protocol.client import free_loopback_port
from schedlab.workloads.synthetic import generate

TIME = "/usr/bin/time"


def timed(argv: list[str], tag: Path, env: dict | None = None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([TIME, "-f", "%M", "-o", str(tag), *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, **kwargs)


def rss_mb(tag: Path) -> float:
    lines = [x for x in tag.read_text().split() if x.strip().isdigit()]
    return int(lines[-1]) / 1024 if lines else float("nan")


def pair(prefix: Path, workload: Path, out: Path, scheduler: list[str], timeout: float) -> tuple[float, str]:
    port = free_loopback_port()
    argv = [a.replace("{bind}", f"tcp://127.0.0.1:{port}") for a in scheduler]
    t0 = time.perf_counter()
    sched = timed(argv, out.with_suffix(".sched.rss"))
    batsim = timed([str(prefix / "bin" / "batsim"), "-p", str(platform_path("constrained512")), "-w", str(workload),
                    "-e", str(out), "-s", f"tcp://localhost:{port}"], out.with_suffix(".batsim.rss"))
    try:
        batsim.wait(timeout=timeout)
        sched.wait(timeout=30)
    except subprocess.TimeoutExpired:
        for p in (batsim, sched):
            p.kill()
        return float("nan"), "timeout"
    wall = time.perf_counter() - t0
    return wall, (f"scheduler {rss_mb(out.with_suffix('.sched.rss')):6.1f} MB, "
                  f"batsim {rss_mb(out.with_suffix('.batsim.rss')):6.1f} MB")


def single(argv: list[str], out: Path, timeout: float) -> tuple[float, str]:
    t0 = time.perf_counter()
    process = timed(argv, out.with_suffix(".rss"))
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return float("nan"), "timeout"
    return time.perf_counter() - t0, f"process   {rss_mb(out.with_suffix('.rss')):6.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 10000])
    parser.add_argument("--prefix", default=os.environ.get("SCHEDLAB_BATSIM_PREFIX",
                                                           str(Path.home() / ".cache/schedlab/batsim-4.2.1")))
    parser.add_argument("--load", type=float, default=1.2, help="offered load of the generated workloads")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    prefix = Path(args.prefix)
    schedlab = [sys.executable, "-m", "schedlab"]
    # pybatsim as scripts/install-pybatsim.sh installs it (beside this Python), or in an older prefix's venv
    candidates = [Path(sys.executable).parent / "pybatsim", prefix / "venv" / "bin" / "pybatsim"]
    pybatsim = next((str(c) for c in candidates if c.is_file()), None)
    if pybatsim is None:
        print("pybatsim not installed (bash scripts/install-pybatsim.sh): its arm is skipped")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        for size in args.sizes:
            workload = tmpdir / f"w{size}.json"
            workload.write_text(json.dumps(generate(nb_jobs=size, nb_resources=512, seed=1, load=args.load).to_json()))
            out = tmpdir / f"o{size}"
            out.mkdir()
            results = {}
            batsched = [str(prefix / "bin" / "batsched"), "-v", "easy_bf", "-s", "{bind}"]
            if size <= 5000:
                results["batsim+batsched easy_bf"] = pair(prefix, workload, out / "bs", batsched, args.timeout)
            if pybatsim is not None:
                results["batsim+pybatsim easyBackfill"] = pair(
                    prefix, workload, out / "pb", [pybatsim, "easyBackfill", "-t", "0", "-s", "{bind}"], args.timeout)
            results["batsim+schedlab serve easy"] = pair(
                prefix, workload, out / "sv", [*schedlab, "serve", "easy", "--socket", "{bind}"], args.timeout)
            if size <= 5000:
                results["engine+--external batsched"] = single(
                    [*schedlab, "simulate", "-p", str(platform_path("constrained512")), "-w", str(workload), "-q",
                     "--out", str(out / "ext"), "--timeout", "600", "--external",
                     f"{prefix / 'bin' / 'batsched'} -v easy_bf -s {{socket}}"], out / "ext", args.timeout)
            results["engine in-process easy"] = single(
                [*schedlab, "simulate", "-p", str(platform_path("constrained512")), "-w", str(workload), "-q",
                 "-s", "easy", "--out", str(out / "in")], out / "in", args.timeout)
            for name, (wall, rss) in results.items():
                rows.append((size, name, wall, rss))
                print(f"{size:>6} jobs  {name:<30} {wall:8.2f} s  peak RSS: {rss}", flush=True)
            base = results["engine in-process easy"][0]
            pyb = results.get("batsim+pybatsim easyBackfill", (float("nan"),))[0]
            srv = results["batsim+schedlab serve easy"][0]
            print(f"{size:>6} jobs  ratios: batsim+pybatsim / in-process = {pyb / base:.1f}x; "
                  f"batsim+serve / batsim+pybatsim = {srv / pyb:.2f}", flush=True)


if __name__ == "__main__":
    main()
