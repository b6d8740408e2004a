"""`schedlab scheduler check`: does a scheduler keep Batsim's rules, make progress, give the same
schedule twice, and never look ahead (at run times or future arrivals, through the engine or any
file it was given)? And how does its time grow, next to EASY's? docs/writing-a-scheduler.md says
what it proves and what it cannot.

Rooms: `workloads` (the built-in workloads), `runs` (one run under budgets, shrinking), `sandbox`
(child processes that see only copies of the user's files), `perturb` (what look-ahead runs
change), `invariants`, `speed`, `check` (the checks and the report)."""

from schedlab.checker.check import CheckReport, Finding, check_scheduler, reproduction_files
from schedlab.checker.invariants import invariant_failure, suspicious
from schedlab.checker.runs import Budgets, RunResult, run_once
from schedlab.checker.workloads import build_workload, builtin_workloads, edge_case_workloads, trace_like_workload

__all__ = ["Budgets", "CheckReport", "Finding", "RunResult", "build_workload", "builtin_workloads", "check_scheduler",
           "edge_case_workloads", "invariant_failure", "reproduction_files", "run_once", "suspicious",
           "trace_like_workload"]
