"""Benchmark: convert the 447,794-job RICC trace (../shared/data/swf/RICC-2010-2.swf.gz) to Batsim
JSON through the CLI, and generate Lublin-Feitelson workloads. Goal for RICC: < 10 s, < 1 GiB.

    .venv/bin/python benchmarks/bench_convert.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RICC = REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"


def measured(argv: list[str]) -> tuple[float, float]:
    with tempfile.NamedTemporaryFile() as tag:
        t0 = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tag.name, *argv], check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        rss_kb = int(Path(tag.name).read_text().split()[-1])
    return wall, rss_kb / 1024


def main() -> None:
    schedlab = [sys.executable, "-m", "schedlab"]
    with tempfile.TemporaryDirectory() as tmp:
        if RICC.exists():
            wall, rss = measured([*schedlab, "workload", "from-swf", str(RICC), "-o", f"{tmp}/ricc.json"])
            print(f"RICC-2010-2 (447,794 jobs) -> Batsim JSON: {wall:6.2f} s, peak RSS {rss:7.1f} MB "
                  f"(goal < 10 s: {wall / 10:.2f} of budget; < 1024 MB: {rss / 1024:.2f} of budget)")
            from schedlab.workloads.swf import read_swf

            t0 = time.perf_counter()
            read_swf(RICC)
            print(f"  of which reading the SWF in-process: {time.perf_counter() - t0:.2f} s")
        else:
            print(f"RICC trace not present at {RICC}: skipped")
        for jobs in (10_000, 100_000):
            wall, rss = measured([*schedlab, "workload", "lublin", "--nodes", "256", "--jobs", str(jobs), "--seed",
                                  "1", "-o", f"{tmp}/l.json"])
            print(f"Lublin {jobs:>7,} jobs (256 nodes) -> Batsim JSON: {wall:6.2f} s, peak RSS {rss:7.1f} MB")


if __name__ == "__main__":
    main()
