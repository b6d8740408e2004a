"""Benchmark (DIWS issue §5): training and inference time of each runtime model on a whole trace,
and the scheduler time of DIWS vs EASY on one busy 24-h window, beside the study's figures.

    .venv/bin/python benchmarks/bench_predictors.py [--trace SWF] [--models dt rf gb gb-xgb nn] [--jobs N]

Defaults: RICC-2010-2 from ../shared/data (447,794 jobs), every model. Goal (the issue): a window of
at least 4,000 jobs scheduled by DIWS in under 1 s of scheduler time on 15,680 cores (the study
spent 37.8 s) and under 5 s on 512 cores (study: 210.3 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from schedlab.engine import Engine
from schedlab.model import Platform
from schedlab.predictors.runtime import RuntimePredictor
from schedlab.predictors.training import load_training_data
from schedlab.schedulers.base import create_scheduler
from schedlab.workload import load_workload
from schedlab.workloads.convert import ConversionOptions, convert_columns
from schedlab.workloads.swf import read_swf, to_trace_jobs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO.parent / "shared" / "data" / "swf" / "RICC-2010-2.swf.gz"
STUDY_SCHEDULER_S = {15680: (37.8449, 240.7396), 512: (210.3460, 194.5042)}  # (DIWS, EasyBF), Tab. 6/7


def models_bench(workload: Path, models: list[str]) -> None:
    jobs, table, runtimes = load_training_data(workload)
    print(f"\n== training on all {len(jobs):,} jobs, then predicting them (features: diws) ==")
    print(f"{'model':<9}{'fit (s)':>10}{'batch predict (us/job)':>25}{'one-job call (ms)':>20}")
    single = table.iloc[:200]
    for model in models:
        predictor = RuntimePredictor(model=model, seed=0)
        began = time.perf_counter()
        predictor.fit(table, runtimes)
        fit_s = time.perf_counter() - began
        began = time.perf_counter()
        predictor.predict(table)
        batch_us = 1e6 * (time.perf_counter() - began) / len(table)
        began = time.perf_counter()
        for i in range(len(single)):
            predictor.predict(single.iloc[i:i + 1])
        call_ms = 1e3 * (time.perf_counter() - began) / len(single)
        print(f"{model:<9}{fit_s:>10.1f}{batch_us:>25.2f}{call_ms:>20.2f}", flush=True)


def busy_day(trace, minimum: int) -> float:
    """Start of the last 24-h window (aligned on the trace's days) holding at least `minimum` jobs."""
    submit = trace.submit_s[np.isfinite(trace.submit_s)]
    days = np.floor(submit / 86400.0).astype(int)
    counts = np.bincount(days)
    busy = np.flatnonzero(counts >= minimum)
    if not len(busy):
        sys.exit(f"no 24-h window with {minimum} jobs in the trace")
    return float(busy[-1] * 86400)


def scheduler_bench(trace_path: Path, directory: Path, minimum: int) -> None:
    trace = to_trace_jobs(read_swf(trace_path))
    start = busy_day(trace, minimum)
    window, history = directory / "window.json", directory / "history.json"
    convert_columns(trace, ConversionOptions(start=str(start), days=1))[0].write(str(window))
    convert_columns(trace, ConversionOptions(completed_before=start))[0].write(str(history))
    workload = load_workload(window)
    print(f"\n== scheduler time, one 24-h window: {len(workload.jobs):,} jobs from t = {start:.0f} s; "
          f"DIWS trained on the {len(load_workload(history).jobs):,} jobs completed before it ==")
    diws = create_scheduler("diws", {"history": str(history)})
    began = time.perf_counter()
    diws.prepare()  # training (or the cache): before the simulation, as the study's step 1
    print(f"DIWS model ready in {time.perf_counter() - began:.1f} s (decision tree; cached by content hash)")
    print(f"{'cores':>7}{'EASY (s)':>10}{'DIWS (s)':>10}{'DIWS/EASY':>11}{'study DIWS':>12}{'study EASY':>12}"
          f"{'study/ours (DIWS)':>19}  goal")
    for cores, goal in ((15680, 1.0), (512, 5.0)):
        times = {}
        for name in ("easy", "diws"):
            scheduler = create_scheduler(name, {"history": str(history)} if name == "diws" else {})
            scheduler.prepare()  # DIWS: the cached model, outside scheduling time
            engine = Engine(Platform.homogeneous(cores), workload, scheduler)
            engine.run()
            times[name] = engine.scheduling_time_s
        study_diws, study_easy = STUDY_SCHEDULER_S[cores]
        verdict = "met" if times["diws"] < goal else "MISSED"
        print(f"{cores:>7}{times['easy']:>10.2f}{times['diws']:>10.2f}{times['diws'] / times['easy']:>11.2f}"
              f"{study_diws:>12.1f}{study_easy:>12.1f}{study_diws / times['diws']:>19.0f}  < {goal:g} s: {verdict}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--models", nargs="+", default=["dt", "rf", "gb", "gb-xgb", "nn"])
    parser.add_argument("--jobs", type=int, help="train on the first N jobs only (a quick run; the scheduled day "
                                                 "and its history still come from the whole trace)")
    parser.add_argument("--window-jobs", type=int, default=4000, help="least jobs in the scheduled window")
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"no trace at {args.trace} (give --trace)")
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        directory = Path(scratch)
        os.environ.setdefault("SCHEDLAB_CACHE", str(directory / "cache"))  # a fresh model: training is timed
        whole = directory / "whole.json"
        began = time.perf_counter()
        converted, summary = convert_columns(to_trace_jobs(read_swf(args.trace)), ConversionOptions(first=args.jobs))
        converted.write(str(whole))
        print(f"{args.trace.name}: {summary['nb_kept']:,} of {summary['nb_trace_jobs']:,} jobs converted in "
              f"{time.perf_counter() - began:.1f} s")
        models_bench(whole, args.models)
        scheduler_bench(args.trace, directory, args.window_jobs)


if __name__ == "__main__":
    main()
