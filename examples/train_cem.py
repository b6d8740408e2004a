"""Train a learned scheduler in a few minutes on 2 cores, with numpy only, and export it.

The cross-entropy method (schedlab.rl.cem) searches the weights of a scoring policy linear in its
coefficients, as the regression-obtained queue policies are; each candidate is played through
schedlab's Gymnasium environment on Lublin-Feitelson workloads of 256 nodes. The model has no user
estimate: by default every walltime is twice the run time (`--missing-walltime factor:2`, the
setting of the regression-policy studies and of RLScheduler's Lublin-256, where the request tells
the run time, to every policy compared alike); `--missing-walltime max:162754` gives one walltime
to all (the requests then tell nothing). The learned policy is
then measured on workloads of seeds never used in training, beside FCFS, SJF (shortest requested
time first), F1 and Lin, each in the same mode (strict lists, or EASY with `--backfill`), and saved
as JSON, which every host runs:

    python examples/train_cem.py -o out/learned.json
    schedlab simulate -p lublin256 -w W.json -s policy -O policy=out/learned.json -o out/run
    schedlab serve policy -O policy=out/learned.json --socket tcp://127.0.0.1:28000   # real Batsim
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import schedlab
from schedlab.rl.cem import Setting, baseline_bsld, play_bsld, train
from schedlab.schedulers.linear_policy import BASIS

BASELINES = {"FCFS": "fcfs", "SJF": "spt", "F1": "f1", "Lin": "lin"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True, help="where the learned policy goes (JSON)")
    parser.add_argument("--generations", type=int, default=10)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--train-seeds", type=int, default=4, help="training workloads: seeds 0..N-1")
    parser.add_argument("--test-seeds", type=int, default=10, help="test workloads: seeds 1000..1000+N-1")
    parser.add_argument("--jobs", type=int, default=1024, help="jobs per workload")
    parser.add_argument("--backfill", action="store_true", help="the agent picks EASY's head (a queue policy)")
    parser.add_argument("--missing-walltime", default="factor:2",
                        help="the model has no user estimate: factor:2 (twice the run time, the policy studies' and "
                             "RLScheduler's clairvoyant setting) or max:162754 (one walltime: it tells nothing)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="the trainer's random draws")
    parser.add_argument("--report", help="also write the test table as JSON here")
    args = parser.parse_args(argv)
    if Path(args.output).exists() and Path(args.output).is_dir():
        parser.error(f"{args.output} is a directory")

    setting = Setting(jobs=args.jobs, backfill=args.backfill, missing_walltime=args.missing_walltime)
    t0 = time.perf_counter()
    policy, _history = train(setting, train_seeds=range(args.train_seeds), generations=args.generations,
                            population=args.population, seed=args.seed, workers=args.workers,
                            progress=lambda g, best: print(f"generation {g + 1}/{args.generations}: best fitness "
                                                           f"{best:+.3f} ({time.perf_counter() - t0:.0f} s)",
                                                           file=sys.stderr))
    trained_s = time.perf_counter() - t0
    test_seeds = range(1000, 1000 + args.test_seeds)
    scheduler = "easy" if args.backfill else "fcfs"
    table = {"learned": [play_bsld(policy.weights, setting, seed) for seed in test_seeds]}
    for label, order in BASELINES.items():
        table[label] = [baseline_bsld(setting, seed, scheduler, order) for seed in test_seeds]
    policy.card["training_time_s"] = round(trained_s, 1)
    policy.card["test"] = {"seeds": list(test_seeds), "mean_bounded_slowdown": table,
                           "mode": f"{scheduler} (queue order per column)"}
    policy.save(args.output)

    print(f"trained in {trained_s:.0f} s; weights: " + ", ".join(f"{b} {w:+.2f}" for b, w in
                                                                   zip(BASIS, policy.weights, strict=True)))
    print(f"mean bounded slowdown on {len(test_seeds)} unseen Lublin-256 workloads of {args.jobs} jobs, walltimes "
          f"{args.missing_walltime} ({'EASY' if args.backfill else 'strict lists'}; geometric mean, and wins of the "
          "learned policy):")
    learned = np.array(table["learned"])
    for label, values in table.items():
        values = np.array(values)
        wins = "" if label == "learned" else f"  learned better on {int((learned < values).sum())}/{len(values)}"
        print(f"  {label:8s} {float(np.exp(np.log(values).mean())):10.1f}{wins}")
    if args.report:
        Path(args.report).write_text(json.dumps({"schedlab": schedlab.__version__, "table": table,
                                                 "training_time_s": trained_s}, indent=1) + "\n")
    print(f"-> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
