"""The `schedlab` command: `main(argv)` (the console script) and `build_parser()`. Each sub-command
lives in a module of its own (simulation, workloads, schedulers, experiments, predictors,
policies); what they share is in `common`, which imports none of them."""

from schedlab.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
