"""Benchmark (predictions issue §5): each predictor's training and inference time per 10,000 jobs,
and each prediction-driven scheduler's all-in time (training included) against EASY's on the
same 10,000 jobs, measured side by side in one run (the refits' share of the scheduling time beside).

    .venv/bin/python benchmarks/bench_predictions.py [--trace SWF] [--jobs 10000] [--platform-size 100]

Defaults: KTH-SP2 from ../shared/data: the first 10,000 jobs (those completed before the 10,001st
submission) train the predictors and are the schedulers' history; the next 10,000 are predicted
and scheduled on 100 cores. An online learner's default period here is one simulated day
(`refit_s=86400`, easy-pp's own default), weekly beside it for the xgboost learners. Goal: no
scheduler over 10x EASY's all-in time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from schedlab.api import simulate
from schedlab.predictors.training import ALL_MODELS, load_training_data, new_predictor
from schedlab.workloads.convert import ConversionOptions, convert_columns
from schedlab.workloads.swf import read_swf, to_trace_jobs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO.parent / "shared" / "data" / "swf" / "KTH-SP2-1996-2_predictsim-unfiltered.swf.gz"
GOAL = 10.0
DAY_S = "86400"
WEEK_S = "604800"


def schedulers(history: str) -> list[tuple[str, str, dict[str, str]]]:
    """(label, scheduler, options): every scheduler that consumes predictions, with its default period."""
    return [
        ("easy", "easy", {}),
        ("easy-pp user-last2", "easy-pp", {}),
        ("easy-pp adaboost (daily)", "easy-pp", {"predictor": "adaboost"}),
        ("diws dt (history)", "diws", {"history": history}),
        ("diws user-last2", "diws", {"learner": "user-last2"}),
        ("easy-predicted dt (daily)", "easy-predicted", {"learner": "dt", "refit_s": DAY_S}),
        ("easy-predicted quantile-xgb q0.9 (daily)", "easy-predicted",
         {"learner": "quantile-xgb", "refit_s": DAY_S, "quantile": "0.9"}),
        ("easy-predicted quantile-xgb q0.9 (weekly)", "easy-predicted",
         {"learner": "quantile-xgb", "refit_s": WEEK_S, "quantile": "0.9"}),
        ("easy-prob aft (history)", "easy-prob", {"history": history}),
        ("easy-prob aft (daily)", "easy-prob", {"refit_s": DAY_S}),
        ("easy-prob aft (weekly)", "easy-prob", {"refit_s": WEEK_S}),
        ("easy-prob aft (history + daily)", "easy-prob", {"history": history, "refit_s": DAY_S}),
        ("hybrid (online NAG)", "hybrid", {}),
    ]


def predictors_bench(history: Path, window: Path) -> None:
    _, train_table, train_runtimes = load_training_data(history)
    _, test_table, _ = load_training_data(window)
    per = 10_000
    print(f"\n== predictors: fit on {len(train_table):,} jobs, predict {len(test_table):,} (seconds per "
          f"{per:,} jobs) ==")
    print(f"{'model':<14}{'fit (s/10k)':>13}{'predict (s/10k)':>17}")
    for model in ALL_MODELS:
        predictor = new_predictor(model=model, seed=0)
        began = time.perf_counter()
        predictor.fit(train_table, train_runtimes)
        fit_s = (time.perf_counter() - began) * per / len(train_table)
        began = time.perf_counter()
        predictor.predict(test_table)
        predict_s = (time.perf_counter() - began) * per / len(test_table)
        print(f"{model:<14}{fit_s:>13.3f}{predict_s:>17.3f}", flush=True)


def schedulers_bench(history: Path, window: Path, size: int) -> None:
    print(f"\n== schedulers: all-in wall time (model training and loading included) on {size} cores ==")
    print(f"{'scheduler':<43}{'all-in (s)':>11}{'scheduling (s)':>16}{'of it refits (s)':>18}{'x EASY':>8}  "
          f"goal <= {GOAL:g}x")
    easy_s = None
    over = []
    for label, name, options in schedulers(str(history)):
        began = time.perf_counter()
        result = simulate(size, window, name, options=options)
        all_in_s = time.perf_counter() - began
        if not result.complete:
            sys.exit(f"{label}: {result.error}")
        easy_s = all_in_s if easy_s is None else easy_s
        ratio = all_in_s / easy_s
        if ratio > GOAL:
            over.append(label)
        timing = result.summary.get("timing", {})
        scheduling_s = timing.get("scheduling_time_s", float("nan"))
        print(f"{label:<43}{all_in_s:>11.2f}{scheduling_s:>16.2f}{timing.get('training_time_s') or 0.0:>18.2f}"
              f"{ratio:>8.1f}  {'met' if ratio <= GOAL else 'OVER'}", flush=True)
    print(f"over {GOAL:g}x EASY: {', '.join(over) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the history and in the scheduled window")
    parser.add_argument("--platform-size", type=int, default=100)
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"no trace at {args.trace} (give --trace)")
    trace = to_trace_jobs(read_swf(args.trace))
    submits = sorted(s for s in trace.submit_s.tolist() if s == s)
    if len(submits) <= 2 * args.jobs:
        sys.exit(f"{args.trace.name} has {len(submits):,} jobs: fewer than 2 x --jobs")
    cut = submits[args.jobs]
    with tempfile.TemporaryDirectory(prefix="schedlab-bench-") as scratch:
        directory = Path(scratch)
        os.environ.setdefault("SCHEDLAB_CACHE", str(directory / "cache"))  # fresh models: training is timed
        history, window = directory / "history.json", directory / "window.json"
        common = {"platform_size": args.platform_size}
        convert_columns(trace, ConversionOptions(completed_before=cut, **common))[0].write(str(history))
        convert_columns(trace, ConversionOptions(start=str(cut), first=args.jobs, **common))[0].write(str(window))
        print(f"{args.trace.name}: history = the jobs completed before trace time {cut:g} s, window = the "
              f"{args.jobs:,} jobs from then")
        predictors_bench(history, window)
        schedulers_bench(history, window, args.platform_size)


if __name__ == "__main__":
    main()
