"""`schedlab policy fit`: regression-obtained queue policies from a score table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from schedlab.paths import FileUse, check_output_file, sha256_file


def cmd_fit(args: argparse.Namespace) -> int:
    from schedlab.errors import InputError
    from schedlab.experiments.studies.policy_fitting import fit, read_scores, save_fitted, vif
    from schedlab.schedulers.fitted_policies import FUNCTIONS, PUBLISHED, WORKLOADS

    functions = [f.strip() for f in args.functions.split(",") if f.strip()]
    unknown = [f for f in functions if f not in FUNCTIONS]
    if unknown or not functions:
        raise InputError(f"--functions: unknown {', '.join(unknown) or '(none given)'} (known: {', '.join(FUNCTIONS)})")
    if args.compare and args.compare not in WORKLOADS:
        raise InputError(f"--compare: one of {', '.join(WORKLOADS)}")
    check_output_file(args.output)
    path = Path(args.scores)
    p, q, r, score = read_scores(path)
    digest = sha256_file(path)
    fits = []
    for function in functions:
        fitted = fit(p, q, r, score, function, source=f"{path.name} sha256:{digest[:16]}")
        fits.append(fitted)
        factors = vif(p, q, r, function)
        print(f"{function}: MAE {fitted.mae * 1e3:.2f}e-3, max VIF {max(factors.values()):,.1f}")
        paper = PUBLISHED.get((function, args.compare)) if args.compare else None
        print(f"  {'term':<6}{'coefficient':>16}{'paper (' + args.compare + ')' if paper else '':>20}{'VIF':>12}")
        for index, term in enumerate(fitted.terms):
            published = f"{paper[index]:>20.6e}" if paper else ""
            factor = f"{factors[term]:>12,.1f}" if term in factors else f"{'-':>12}"
            print(f"  {term:<6}{fitted.coefficients[index]:>16.6e}{published}{factor}")
    save_fitted(Path(args.output), fits, header=f"schedlab policy fit {path.name} ({len(p):,} rows, sha256 "
                                                f"{digest}); weight (p*q)^2; use queue_order={args.output}#NAME")
    print(f"-> {args.output} ({', '.join(functions)})")
    return 0


def cmd_scores(args: argparse.Namespace) -> int:
    import sys

    from schedlab.experiments.studies.policy_scores import score_trace, write_scores

    check_output_file(args.output)
    bar = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=args.tuples, unit="tuple", desc="scores", file=sys.stderr)
    try:
        tuples, scores, metadata = score_trace(args.trace, args.tuples, args.trials, args.seed, args.processors,
                                               args.workers, progress=None if bar is None else bar.update,
                                               shuffle=args.shuffle)
    finally:
        if bar is not None:
            bar.close()
    write_scores(args.output, tuples, scores, metadata)
    m, dropped = metadata["processors"], metadata["jobs_dropped"]
    print(f"{len(tuples)} tuples x {args.trials:,} trials on {m} processors ({dropped} jobs dropped: run time or "
          f"processors <= 0) -> {args.output} (+ .json)")
    return 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("policy", help="regression-obtained queue policies")
    psub = p.add_subparsers(dest="policy_command", required=True)
    g = psub.add_parser("fit", help="fit Lin/Qdr/Cub/Qua on a score table (p,q,r,score CSV, may be gzipped)")
    g.add_argument("scores", help="score table: rows p,q,r,score")
    g.add_argument("--functions", default="lin,qdr,cub,qua", help="comma-separated (default lin,qdr,cub,qua)")
    g.add_argument("--compare", default="", help="print the study's coefficients beside ours: lublin256, ctc, sdsc")
    g.add_argument("--output", "-o", required=True, help="TOML file of fitted policies (queue_order=FILE#NAME)")
    g.set_defaults(func=cmd_fit, files=lambda args: FileUse().read("the score table", args.scores).write(
        "--output", args.output))
    g = psub.add_parser("scores", help="score tuples of a trace by permutation simulation (the proxy problem)")
    g.add_argument("trace", help="SWF trace (gzip or not)")
    g.add_argument("--tuples", type=int, default=440, help="windows of 16 + 32 jobs (default 440, the study's)")
    g.add_argument("--trials", type=int, default=256000, help="permutations per tuple (default 256,000)")
    g.add_argument("--seed", type=int, default=0, help="seed of the tuples drawn and of every trial's shuffle")
    g.add_argument("--processors", type=int, default=0, help="m (default: the MaxProcs or MaxNodes header)")
    g.add_argument("--workers", type=int, default=1, help="processes, one tuple each at a time")
    g.add_argument("--shuffle", choices=("uniform", "authors"), default="uniform",
                   help="how a trial orders the queue: uniform random permutations (default, what the papers "
                        "describe) or the authors' code's loop (swap position k with any position: biased toward "
                        "early submissions; see docs/design.md)")
    g.add_argument("--output", "-o", required=True, help="CSV p,q,r,score (+ FILE.json: metadata)")
    g.set_defaults(func=cmd_scores, files=lambda args: FileUse().read("the trace", args.trace).write(
        "--output", args.output).write("--output's metadata", f"{args.output}.json"))
