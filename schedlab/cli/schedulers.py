"""`schedlab scheduler check` and `schedlab pybatsim-entry`: for schedulers written by users."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from schedlab.cli.common import EXIT_FAILURE
from schedlab.errors import InputError

ENTRY_TEMPLATE = '''"""pybatsim entry file for the schedlab scheduler {name!r} (made by `schedlab pybatsim-entry`).

    pybatsim {filename} -s tcp://*:28000 -t 0 [-o '{{"OPTION": "VALUE"}}']
"""

from schedlab.pybatsim_entry.adapter import pybatsim_scheduler

{class_name} = pybatsim_scheduler({name!r}, {class_name!r})
'''


def cmd_check(args: argparse.Namespace) -> int:
    from schedlab.checker import check_scheduler
    from schedlab.schedulers.base import create_scheduler, option_named, parse_options

    options = parse_options(args.option or [])
    try:  # a bad name or option is said before any work
        scheduler = create_scheduler(args.scheduler, options)
    except InputError as exc:
        raise option_named(exc, options) from None
    if args.resources is not None and args.resources < 2:
        raise InputError(f"--resources must be at least 2, got {args.resources}")
    try:
        speed_sizes = tuple(int(size) for size in args.speed_jobs.split(","))
    except ValueError:
        speed_sizes = ()
    if not speed_sizes or min(speed_sizes) < 10:
        raise InputError(f"--speed-jobs takes sizes of at least 10 jobs, comma-separated; got {args.speed_jobs!r}")
    if args.max_times_easy is not None and not args.max_times_easy > 0:
        raise InputError(f"--max-times-easy must be > 0, got {args.max_times_easy}")
    extra, extra_nb_res = None, None
    if args.workload:
        from dataclasses import replace

        from schedlab.engine import Engine
        from schedlab.schedulers.base import raised_by
        from schedlab.workload import inputs_view, load_workload

        full = load_workload(args.workload, name="yours")
        Engine.check_workload(full)
        extra_nb_res = args.resources or full.nb_res or 16
        fitting = tuple(job for job in full.jobs if job.res <= extra_nb_res)
        jobs = fitting[:args.jobs]
        if not jobs:
            raise InputError(f"no job of at most {extra_nb_res} resources (--resources)", path=args.workload)
        if len(jobs) < len(full.jobs) and not args.quiet:
            print(f"note: {args.workload}: the checks run its first {len(jobs):,} of {len(full.jobs):,} jobs"
                  + (f" ({len(full.jobs) - len(fitting):,} wider than {extra_nb_res} resources left out)"
                     if len(fitting) < len(full.jobs) else "") + " (--jobs N for more)", file=sys.stderr)
        extra = replace(full, jobs=jobs)
        with raised_by(type(scheduler), args.scheduler, "check_inputs", bad_options=False):
            scheduler.check_inputs(inputs_view(full))  # as simulate checks it, before prepare: bad input
    try:  # a file an option names, refused by prepare (a model, a history), is said before any work
        scheduler.prepare()
    except InputError as exc:
        raise option_named(exc, options) from None
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory (expected an output directory)", path=str(out))

    def factory() -> Any:
        return create_scheduler(args.scheduler, options)

    say = (lambda text: None) if args.quiet else (lambda text: print(f"  ... {text}", file=sys.stderr, flush=True))
    report = check_scheduler(factory, args.scheduler, options=options, nb_res=args.resources or 16, extra=extra,
                             extra_nb_res=extra_nb_res, workload_path=args.workload, out_dir=out, progress=say,
                             speed_sizes=speed_sizes, max_times_easy=args.max_times_easy, argv=sys.argv)
    for line in report.lines:
        print(f"ok    {line}")
    for warning in report.warnings:
        print(f"warn  {warning}")
    for finding in report.findings:
        print(f"FAIL  {finding.check}: {finding.message}")
        if finding.cause:
            print(f"      cause: {finding.cause}")
        for path in finding.files:
            print(f"      wrote {path}")
    if report.findings and out is None and any(f.check == "rules" for f in report.findings):
        print("      (--out DIR writes the smallest workload found, with a platform and a replay command)")
    return 0 if report.ok else EXIT_FAILURE


def cmd_reference(args: argparse.Namespace) -> int:
    from schedlab.schedulers.reference import reference

    print(reference(), end="")
    return 0


def cmd_pybatsim_entry(args: argparse.Namespace) -> int:
    from schedlab.paths import check_output_file, write_text_atomic
    from schedlab.schedulers.base import scheduler_class

    scheduler_class(args.scheduler)  # a name pybatsim could not load is said now, not under batsim
    name = args.scheduler
    module, colon, class_name = name.rpartition(":")
    if colon and module.endswith(".py"):
        name = f"{Path(module).resolve()}:{class_name}"  # pybatsim may run from anywhere
    path = Path(args.output)
    class_name = path.stem[:1].upper() + path.stem[1:]
    if path.suffix != ".py" or not class_name.isidentifier():
        raise InputError(f"{path}: pybatsim loads a FILE.py whose stem is a Python name (it instantiates the "
                         "class named after the file, capitalised)")
    check_output_file(path)
    write_text_atomic(path, ENTRY_TEMPLATE.format(name=name, filename=path.name, class_name=class_name))
    print(f"{path}: pybatsim entry for {args.scheduler!r} (class {class_name})")
    return 0


def _check_use(args: argparse.Namespace):
    from schedlab.checker import reproduction_files
    from schedlab.cli.common import scheduler_files
    from schedlab.paths import FileUse

    use = FileUse().read("the workload (-w)", args.workload)
    scheduler_files(use, args.scheduler, args.option)
    return use.into("--out", args.out, reproduction_files(args.resources or 16))


def _entry_use(args: argparse.Namespace):
    from schedlab.cli.common import scheduler_files
    from schedlab.paths import FileUse

    use = FileUse()
    scheduler_files(use, args.scheduler, [])
    return use.write("--output", args.output)


def add_parsers(sub: Any, add_scheduler_args: Any) -> None:
    p = sub.add_parser("scheduler", help="check a scheduler: Batsim's rules, look-ahead, determinism, speed")
    actions = p.add_subparsers(dest="action", required=True)
    c = actions.add_parser(
        "check", help="run a scheduler on edge-case workloads and check that it keeps Batsim's rules, "
                      "never looks ahead and is deterministic; exit 0 when all hold, 1 otherwise",
        description="Run a scheduler (a name, an installed plugin's name, MODULE:CLASS or FILE.py:CLASS) on "
                    "built-in workloads (simultaneous submissions and ends, walltime kills, jobs as wide as the "
                    "machine, sub-second jobs, a trace-like one; all sizes on 100 resources, 1,000 resources, "
                    "epoch-scale clocks, no walltimes, a long queue) and on --workload. Checks Batsim's rules (the "
                    "first violation is shrunk to a small workload), progress (budgets of simulated time, idle "
                    "decisions, wall clock, memory), determinism, and look-ahead: in child processes that see only "
                    "copies of your files, decisions at or before t must not change when the run times of jobs ending "
                    "after t, or the jobs submitted after t, change. Warns of kills and rejections Batsim allows, "
                    "and measures how scheduling time grows with the workload, next to EASY's. Exit 0 when every "
                    "check holds, 1 otherwise (docs/writing-a-scheduler.md: what it proves and what it cannot).")
    add_scheduler_args(c, positional=True)
    c.add_argument("--resources", type=int, help="resources of the platform of the edge-case and trace-like "
                                                "workloads (default 16) and of --workload's (default its nb_res)")
    c.add_argument("--workload", "-w", help="also check on this Batsim JSON workload (its first --jobs jobs "
                                            "that fit --resources)")
    c.add_argument("--jobs", type=int, default=500, help="jobs taken from --workload")
    c.add_argument("--out", "-o", help="directory for the smallest workload that shows a violation, with a "
                                       "platform and a replay command (written only on a violation)")
    c.add_argument("--speed-jobs", default="1000,2000,4000", metavar="N,N,...",
                   help="workload sizes of the speed runs (default 1000,2000,4000; two or more give the exponent)")
    c.add_argument("--max-times-easy", type=float, metavar="X",
                   help="fail when the scheduling time per job at the largest speed size exceeds X times EASY's")
    c.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    c.set_defaults(func=cmd_check, files=_check_use)
    r = actions.add_parser("reference", help="print what a scheduler can rely on (hooks, job states, Job fields, "
                                             "decisions, options, extension points), read from the code")
    r.set_defaults(func=cmd_reference)

    p = sub.add_parser("pybatsim-entry", help="write a pybatsim entry file that runs a schedlab scheduler",
                       description="Write FILE.py that pybatsim loads (`pybatsim FILE.py`) to run a schedlab "
                                   "scheduler (shipped, plugin or MODULE:CLASS) as Batsim's decision process; "
                                   "options come from pybatsim's -o JSON.")
    p.add_argument("scheduler", help="scheduler name (see `schedlab schedulers`) or MODULE:CLASS")
    p.add_argument("--output", "-o", required=True, help="the entry file to write (e.g. schedlabMine.py)")
    p.set_defaults(func=cmd_pybatsim_entry, files=_entry_use)
