"""Runs: one simulation from a `RunSpec` to its results directory (spec.py), written as a whole
(directory.py). The command line, the API, campaigns, the checker and the RL environment start
runs here; the engines (schedlab.engine) know nothing of directories or summaries."""

from schedlab.runs.directory import INCOMPLETE_DIR, STAGING_PREFIX, RunDirectory
from schedlab.runs.spec import PreparedRun, RunResult, RunSpec, failure_text, is_ours, simulate, write_run

__all__ = ["INCOMPLETE_DIR", "STAGING_PREFIX", "PreparedRun", "RunDirectory", "RunResult", "RunSpec", "failure_text",
           "is_ours", "simulate", "write_run"]
