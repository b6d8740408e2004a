"""`schedlab predictor train|evaluate`: runtime predictors on workload files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from schedlab.paths import FileUse, check_output_file


def cmd_train(args: argparse.Namespace) -> int:
    from schedlab.predictors.evaluate import format_report
    from schedlab.predictors.runtime import save
    from schedlab.predictors.training import train

    check_output_file(args.output)
    predictor, card = train(args.workload, features=args.features, model=args.model, split=args.split,
                            test_share=args.test_share, seed=args.seed, margin_min=args.margin)
    save(predictor, args.output, card)
    print(f"{args.model} on {args.features} ({', '.join(card['features']['used'])}; dropped: "
          f"{', '.join(card['features']['dropped_not_in_data']) or '-'}), {card['training_data']['nb_jobs']} "
          f"training jobs -> {args.output} (+ .card.json)")
    if "metrics" in card:
        print(f"test set ({args.split} split):\n" + format_report(card["metrics"]))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    import numpy as np

    from schedlab.errors import InputError
    from schedlab.predictors.evaluate import format_report, prediction_report
    from schedlab.predictors.runtime import data_hash, load
    from schedlab.predictors.training import load_training_data, split_indices

    if args.csv:
        check_output_file(args.csv)
    predictor, card = load(args.model)
    jobs, table, runtimes = load_training_data(args.workload)
    cores = np.array([job.res for job in jobs], dtype=float)
    trained = card.get("training_data", {})
    if trained.get("sha256") == data_hash(args.workload):
        # the very file it learned from: score its held-out jobs only, never the training ones
        split = card.get("split", {})
        if split.get("kind", "none") == "none":
            raise InputError("this model was trained on all of this workload (--split none): evaluate it on another "
                             "one", path=args.workload)
        _, test = split_indices(jobs, split["kind"], split["test_share"], split["seed"])
        table, runtimes, cores = table.iloc[test].reset_index(drop=True), runtimes[test], cores[test]
        print(f"(the training workload: scoring its {len(test)} held-out jobs, {split['kind']} split)")
    report = prediction_report(runtimes, predictor.predict(table), table["time_limit"].to_numpy(dtype=float),
                               cores=cores)
    if hasattr(predictor, "predict_quantiles"):  # a distribution: its calibration
        from schedlab.predictors.evaluate import quantile_report
        from schedlab.predictors.training import REPORTED_LEVELS

        report["quantiles"] = quantile_report(runtimes, predictor.predict_quantiles(table, REPORTED_LEVELS),
                                              REPORTED_LEVELS)
    if args.csv:
        import csv

        from schedlab.paths import atomic_write
        from schedlab.predictors.evaluate import flat_report

        row = {"model": predictor.model, "features": predictor.features, **flat_report(report)}
        with atomic_write(args.csv) as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            writer.writeheader()
            writer.writerow(row)
    if args.json:
        print(json.dumps({"model": card.get("model"), "training_data": card.get("training_data"), **report}, indent=2))
    else:
        trained = card.get("training_data", {})
        print(f"{predictor.model} on {predictor.features}, trained on {trained.get('nb_jobs', '?')} jobs of "
              f"{trained.get('path', '?')}")
        print(format_report(report))
    return 0


def add_parsers(sub: Any, *, light: bool = False) -> None:
    """`light`: the command's name and help only (its option lists load scikit-learn)."""
    p = sub.add_parser("predictor", help="runtime predictors: train and evaluate")
    if light:
        return
    from schedlab.predictors.features import FEATURE_SETS
    from schedlab.predictors.training import ALL_MODELS as MODELS
    from schedlab.predictors.training import SPLITS

    psub = p.add_subparsers(dest="predictor_command", required=True)
    g = psub.add_parser("train", help="train a runtime predictor on a workload (run times = profile delays)")
    g.add_argument("--workload", "-w", required=True, help="Batsim JSON workload (e.g. converted from a trace)")
    g.add_argument("--features", choices=sorted(FEATURE_SETS), default="diws",
                   help="feature set: diws (the DIWS study's), diws-aug (with its augmented features), coare "
                        "(user, requested CPUs, memory and walltime, for adaboost)")
    g.add_argument("--model", choices=list(MODELS), default="dt",
                   help="learner: dt, rf, gb (scikit-learn), gb-xgb (xgboost), adaboost, nn, the baselines "
                        "user-last2 and walltime, or a distribution: quantile-xgb (quantiles), aft (killed jobs "
                        "censored at their limit), aft-naive (the limit taken as their run time)")
    g.add_argument("--split", choices=SPLITS, default="time",
                   help="time: the last jobs test (default); random: a seeded share; none: all train")
    g.add_argument("--test-share", type=float, default=0.3, help="share of jobs in the test set (default 0.3)")
    g.add_argument("--seed", type=int, default=0, help="seed of the learner and of a random split")
    g.add_argument("--margin", type=float, default=0.0, help="minutes added to every prediction (default 0)")
    g.add_argument("--output", "-o", required=True, help="model file to write (skops), card beside it")
    g.set_defaults(func=cmd_train, files=lambda args: FileUse().read("the workload (-w)", args.workload).write(
        "--output", args.output).write("--output's model card", f"{args.output}.card.json"))
    g = psub.add_parser("evaluate", help="prediction errors of a saved model on a workload")
    g.add_argument("--model", "-m", required=True, help="a model file written by `predictor train`")
    g.add_argument("--workload", "-w", required=True, help="Batsim JSON workload to score the model on")
    g.add_argument("--json", action="store_true", help="print the report as JSON")
    g.add_argument("--csv", metavar="FILE", help="also write the report as one CSV row (minutes; shares in %%)")
    g.set_defaults(func=cmd_evaluate, files=lambda args: FileUse().read("the model (-m)", args.model).read(
        "the model's card", f"{args.model}.card.json").read("the workload (-w)", args.workload).write(
        "--csv", args.csv))
