"""Benchmark: instructions executed by one engine run, this checkout against an earlier commit,
counted by valgrind's callgrind: a figure that a noisy machine cannot move (wall-clock ratios here
vary by 10-100 % between identical runs).

The measured run is bench_overload's part 4 (EASY, count mode, 10,000 jobs at load 1.5 on 15,680
cores), once alone and once with part 2's 100,000-job workload alive (the garbage collector then
walks ~0.5 million more objects). Each figure is the instructions of a script that builds the
workloads and runs the engine, minus those of the same script that only builds them.

    .venv/bin/python benchmarks/bench_instructions.py --against COMMIT [--cache]

`--cache` adds callgrind's cache simulation (last-level misses): slower, but it shows whether a
difference the instruction counts do not show comes from memory.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import sys
from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate
keep = generate(nb_jobs=100_000, nb_resources=512, seed=1, load=1.5) if sys.argv[2] == "alive" else None
big = generate(nb_jobs=10_000, nb_resources=15_680, seed=1, load=1.5)
if sys.argv[1] == "run":
    Engine(Platform.homogeneous(15_680), big, create_scheduler("easy")).run()
"""


def counts(python: str, workdir: Path, script: Path, mode: str, alive: str, cache: bool) -> dict[str, int]:
    """Instructions (and last-level cache misses with `cache`) of one script run under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                *(["--cache-sim=yes"] if cache else []), python, str(script), mode, alive]
        done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
    figures = {"instructions": int(re.search(r"Collected : (\d+)", done.stderr).group(1))}
    misses = re.search(r"LL misses:\s+([\d,]+)", done.stderr)
    if misses:
        figures["LL misses"] = int(misses.group(1).replace(",", ""))
    return figures


def checkout(commit: str, where: Path) -> str:
    """A worktree of `commit` installed in a venv that borrows this checkout's dependencies."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), commit], check=True,
                   capture_output=True)
    subprocess.run([sys.executable, "-m", "venv", str(where / ".venv")], check=True)
    site = next((where / ".venv" / "lib").glob("python3.*")) / "site-packages"
    borrowed = [entry for entry in sys.path if entry.endswith("site-packages")]
    (site / "borrowed-deps.pth").write_text("".join(f"{entry}\n" for entry in borrowed))
    python = str(where / ".venv" / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(where)],
                   check=True, capture_output=True)
    return python


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", required=True, help="the earlier commit")
    parser.add_argument("--cache", action="store_true", help="simulate the caches too (last-level misses)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "one_run.py"
        script.write_text(SCRIPT)
        old = Path(tmp) / "old"
        sides = {"this checkout": (sys.executable, ROOT), args.against[:10]: (checkout(args.against, old), old)}
        try:
            results = {}
            for alive in ("alone", "alive"):
                for side, (python, workdir) in sides.items():
                    run = counts(python, workdir, script, "run", alive, args.cache)
                    base = counts(python, workdir, script, "build", alive, args.cache)
                    results[side, alive] = {key: run[key] - base[key] for key in run}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], capture_output=True)
    new, earlier = sides
    print("part 4 run (EASY count mode, 10,000 jobs, 15,680 cores), under callgrind")
    for alive, label in (("alone", "alone"), ("alive", "with a 100,000-job workload alive")):
        for key in results[new, alive]:
            a, b = results[new, alive][key], results[earlier, alive][key]
            print(f"   {label:34s} {key:13s} {new} {a / 1e6:10.1f} M   {earlier} {b / 1e6:10.1f} M   "
                  f"ratio {a / b:.3f}")


if __name__ == "__main__":
    main()
