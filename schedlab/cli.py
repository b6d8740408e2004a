"""The `schedlab` command. Errors are one line on stderr and a non-zero exit, never a traceback:
exit 2 for bad input or options, 1 for a simulation/protocol failure (partial outputs kept)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from schedlab.errors import InputError, SchedlabError


def _progress_bar(total: int, enabled: bool, desc: str) -> tuple[Any, Any]:
    """A tqdm bar on stderr (only on a terminal) and a throttled callback for the engine."""
    if not enabled or total < 2000 or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="job", desc=desc, file=sys.stderr, leave=False, mininterval=0.5)
    state = {"last": 0}

    def update(nb_finished: int) -> None:
        if nb_finished - state["last"] >= 500 or nb_finished == total:
            bar.update(nb_finished - state["last"])
            state["last"] = nb_finished

    return bar, update


def _scheduler_from_args(args: argparse.Namespace) -> Any:
    from schedlab.schedulers.base import create_scheduler, parse_options

    return create_scheduler(args.scheduler, parse_options(args.option or []))


def cmd_simulate(args: argparse.Namespace) -> int:
    from schedlab.metrics import format_table
    from schedlab.platform import load_platform
    from schedlab.run import simulate
    from schedlab.schedulers.base import parse_options
    from schedlab.workload import load_workload

    platform = load_platform(args.platform)
    workload = load_workload(args.workload)
    options = parse_options(args.option or [])
    if args.external:
        if args.scheduler:
            raise InputError("give either --scheduler or --external, not both")
        from schedlab.protocol.client import ExternalDecisionProcess

        Path(args.out).mkdir(parents=True, exist_ok=True)
        scheduler: Any = ExternalDecisionProcess(args.external, workload=workload, timeout_s=args.timeout,
                                                 record_path=args.record,
                                                 log_path=str(Path(args.out) / "external.log"))
        name = f"external: {args.external}"
    else:
        if not args.scheduler:
            raise InputError("--scheduler NAME (or --external CMD) is required")
        from schedlab.schedulers.base import create_scheduler

        scheduler = create_scheduler(args.scheduler, options)
        name = args.scheduler
    bar, update = _progress_bar(len(workload.jobs), not args.quiet, name)
    info = {"scheduler": name, "options": scheduler.options(),
            "platform": {"path": str(args.platform), "nb_resources": platform.nb_resources},
            "workload": {"path": str(args.workload), "nb_jobs": len(workload.jobs),
                         **({"generator": workload.extra["generator"]} if "generator" in workload.extra else {})},
            "cli_options": options}
    try:
        result = simulate(platform, workload, scheduler, args.out, run_info=info, progress=update)
    finally:
        if bar is not None:
            bar.close()
        closer = getattr(scheduler, "close", None)
        if closer is not None:
            closer()
    if not args.quiet:
        print(f"{name} on {platform.nb_resources} resources, {len(workload.jobs)} jobs -> {args.out}")
        metrics = dict(result.summary["metrics"], scheduling_time_s=result.summary["timing"]["scheduling_time_s"])
        print(format_table(metrics))
    if result.error is not None:
        print(f"schedlab: error: {result.error} (partial results in {args.out}, marked incomplete)",
              file=sys.stderr)
        return 1
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from schedlab.protocol.server import serve

    scheduler = _scheduler_from_args(args)
    serve(scheduler, args.socket, timeout_s=args.timeout, record_path=args.record)
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    from schedlab.protocol.recorder import record

    count = record(args.listen, args.forward, args.output, timeout_s=args.timeout)
    print(f"{count} messages recorded -> {args.output}", file=sys.stderr)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from schedlab.metrics import compute_metrics, format_table, nb_resources_from_schedule_csv, read_jobs_csv

    path = Path(args.jobs_csv)
    nb_res = args.nb_resources
    if nb_res is None:
        sibling = path.with_name(path.name.replace("jobs.csv", "schedule.csv"))
        nb_res = nb_resources_from_schedule_csv(sibling) if sibling != path else None
    metrics = compute_metrics(read_jobs_csv(path), nb_res)
    print(json.dumps(metrics, indent=2) if args.json else format_table(metrics))
    return 0


def cmd_schedulers(args: argparse.Namespace) -> int:
    import schedlab.schedulers  # noqa: F401
    from schedlab.schedulers.base import SCHEDULERS, scheduler_option_types
    from schedlab.schedulers.policies import POLICIES

    for name, cls in sorted(SCHEDULERS.items()):
        options = ", ".join(f"{k}" for k in scheduler_option_types(cls))
        print(f"{name:<12} {(cls.__doc__ or '').strip().splitlines()[0]}  [options: {options or '-'}]")
    print("\nqueue_order policies: " + ", ".join(sorted(POLICIES)))
    return 0


def cmd_workload_generate(args: argparse.Namespace) -> int:
    from schedlab.workloads.synthetic import generate

    workload = generate(nb_jobs=args.jobs, nb_resources=args.resources, seed=args.seed, load=args.load)
    _write_json(args.output, workload.to_json())
    print(f"{len(workload.jobs)} jobs on {args.resources} resources (seed {args.seed}) -> {args.output}")
    return 0


def _conversion_options(args: argparse.Namespace):
    from schedlab.workloads.convert import ConversionOptions

    return ConversionOptions(
        res_from=args.res_from, missing_walltime=args.missing_walltime, start=args.start, days=args.days,
        last_hours=args.last_hours, first=args.first, keep_zero_runtime=args.keep_zero_runtime,
        max_runtime_s=args.max_runtime, platform_size=args.platform_size, too_large=args.too_large,
        nodes_to_cores=args.nodes_to_cores, cores_to_nodes=args.cores_to_nodes, only_completed=args.only_completed)


def _write_conversion(trace: Any, args: argparse.Namespace, *, description: str = "",
                      generator: dict[str, Any] | None = None, note: str = "") -> int:
    from schedlab.workloads.convert import convert_columns, format_summary

    workload, summary = convert_columns(trace, _conversion_options(args), description=description)
    if generator is not None:
        workload.tail["generator"] = generator
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    workload.write(args.output)
    print(format_summary(summary))
    print(f"-> {args.output} (nb_res {workload.head['nb_res']}){note}")
    return 0


def cmd_workload_from_swf(args: argparse.Namespace) -> int:
    from schedlab.workloads.swf import read_swf, to_trace_jobs

    trace = to_trace_jobs(read_swf(args.trace))
    if args.platform_size is None and trace.max_procs:
        args.platform_size = trace.max_procs
    return _write_conversion(trace, args)


def cmd_workload_from_table(args: argparse.Namespace) -> int:
    from schedlab.workloads.slurm import to_trace_jobs

    return _write_conversion(to_trace_jobs(args.table, unit=args.unit), args)


def cmd_workload_lublin(args: argparse.Namespace) -> int:
    import numpy as np

    from schedlab.workloads.convert import TraceJobs
    from schedlab.workloads.lublin import generate, to_swf_columns
    from schedlab.workloads.swf import write_swf

    jobs = generate(nodes=args.nodes, nb_jobs=args.jobs, seed=args.seed, typed=args.mode == "typed",
                    start_hour=args.start_hour, exact_clock=args.exact_clock)
    columns = to_swf_columns(jobs)
    swf_path = args.swf or (args.output if args.output.endswith(".swf") else None)
    if swf_path:
        Path(swf_path).parent.mkdir(parents=True, exist_ok=True)
        with Path(swf_path).open("w", encoding="utf-8") as handle:
            write_swf(handle, columns, jobs.header)
        print(f"{args.jobs} jobs (SWF) -> {swf_path}")
    if not args.output.endswith(".swf"):
        trace = TraceJobs(source=f"lublin(nodes={args.nodes}, seed={args.seed}, mode={args.mode})",
                          job_ids=np.arange(len(jobs.nodes)), submit_s=jobs.submit_s, run_s=jobs.run_s,
                          requested_procs=jobs.nodes.astype(float), allocated_procs=jobs.nodes.astype(float),
                          requested_time_s=np.full(len(jobs.nodes), -1.0), extras={"queue": jobs.job_type})
        generator = {"name": "lublin", "nodes": args.nodes, "nb_jobs": args.jobs, "seed": args.seed,
                     "mode": args.mode, "start_hour": args.start_hour, "exact_clock": args.exact_clock}
        return _write_conversion(trace, args, description=jobs.header["Note"], generator=generator,
                                 note=f"; the model has no user estimate: walltime policy '{args.missing_walltime}'")
    return 0


def cmd_workload_check(args: argparse.Namespace) -> int:
    from schedlab.workload import load_workload

    workload = load_workload(args.workload)
    types = sorted({workload.profiles[j.profile].type for j in workload.jobs})
    largest = max((j.res for j in workload.jobs), default=0)
    span = (workload.jobs[-1].submit_time_s - workload.jobs[0].submit_time_s) if workload.jobs else 0.0
    print(f"{args.workload}: OK: {len(workload.jobs)} jobs, {len(workload.profiles)} profiles "
          f"({', '.join(types) or '-'}), nb_res {workload.nb_res}, largest job {largest}, "
          f"submissions over {span / 86400:.2f} days")
    if workload.nb_res is not None and largest > workload.nb_res:
        print(f"note: {sum(j.res > workload.nb_res for j in workload.jobs)} jobs request more than nb_res")
    return 0


def _add_conversion_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", required=True, help="Batsim JSON workload to write")
    parser.add_argument("--res-from", choices=("requested", "allocated"), default="requested",
                        help="processor field for res (the other is the fallback when unknown)")
    parser.add_argument("--missing-walltime", default="none",
                        help="when the requested time is unknown: none (walltime -1, default), drop, runtime, "
                             "factor:F (F x run time) or max:SECONDS")
    parser.add_argument("--start", help="window start: seconds from the trace start, or a UTC date")
    parser.add_argument("--days", type=float, help="window length in days (e.g. 15)")
    parser.add_argument("--last-hours", type=float, help="keep the last H hours of submissions (e.g. 24)")
    parser.add_argument("--first", type=int, help="keep the first N jobs that pass the filters")
    parser.add_argument("--keep-zero-runtime", action="store_true", help="replay run time 0 as 1 s instead of dropping")
    parser.add_argument("--max-runtime", type=float, help="drop jobs running longer (seconds, e.g. 604800)")
    parser.add_argument("--platform-size", type=int, help="resources of the target platform (SWF: MaxProcs)")
    parser.add_argument("--too-large", choices=("drop", "reject"), default="drop",
                        help="jobs larger than the platform: drop them, or keep them for the scheduler to reject")
    parser.add_argument("--nodes-to-cores", type=int, default=1, help="multiply res (trace counts nodes)")
    parser.add_argument("--cores-to-nodes", type=int, default=1, help="divide res, rounding up (cores -> nodes)")
    parser.add_argument("--only-completed", action="store_true", help="keep only jobs whose status is completed")


def cmd_platform_generate(args: argparse.Namespace) -> int:
    from schedlab.platforms.generate import machine_xml

    text = machine_xml(args.hosts, args.cores_per_host, resource_per=args.resource_per)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(text, encoding="utf-8")
    count = args.hosts * (args.cores_per_host if args.resource_per == "core" else 1)
    print(f"{count} compute resources (one per {args.resource_per}) + master_host0 -> {args.output}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from schedlab.experiments.demo import run_demo

    run_demo(Path(args.out), nb_jobs=args.jobs, nb_resources=args.resources, seed=args.seed,
             show_progress=not args.quiet)
    return 0


def _write_json(path: str, obj: Any) -> None:
    """Workloads: one job per line (readable, diffable, and json's C encoder stays in use)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    compact = {"separators": (",", ":")}
    with Path(path).open("w", encoding="utf-8") as handle:
        handle.write("{\n")
        items = list(obj.items())
        for number, (key, value) in enumerate(items):
            end = ",\n" if number < len(items) - 1 else "\n"
            if key == "jobs" and isinstance(value, list):
                handle.write('"jobs": [\n')
                handle.write(",\n".join(json.dumps(job, **compact) for job in value))
                handle.write("\n]" + end)
            else:
                handle.write(f"{json.dumps(key)}: {json.dumps(value, **compact)}{end}")
        handle.write("}\n")


def _add_scheduler_args(parser: argparse.ArgumentParser, positional: bool) -> None:
    if positional:
        parser.add_argument("scheduler", help="scheduler name (see `schedlab schedulers`)")
    else:
        parser.add_argument("--scheduler", "-s", help="scheduler name (see `schedlab schedulers`)")
    parser.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                        help="scheduler option, repeatable (e.g. queue_order=spt)")


def build_parser() -> argparse.ArgumentParser:
    from schedlab import __version__

    parser = argparse.ArgumentParser(prog="schedlab", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"schedlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="run a workload on the embedded engine")
    p.add_argument("--platform", "-p", required=True, help="SimGrid platform XML")
    p.add_argument("--workload", "-w", required=True, help="Batsim JSON workload")
    _add_scheduler_args(p, positional=False)
    p.add_argument("--external", metavar="CMD",
                   help="drive an external Batsim 4 decision process instead; {socket} in CMD becomes "
                        "its bind endpoint (tcp://127.0.0.1:PORT); its output goes to OUT/external.log")
    p.add_argument("--out", default="out", help="output directory (default: out)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for each external reply (default 60)")
    p.add_argument("--record", help="with --external: write every message to this JSON-lines file")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("serve", help="be the decision process of a real batsim (ZeroMQ REP)")
    _add_scheduler_args(p, positional=True)
    p.add_argument("--socket", default="tcp://127.0.0.1:28000",
                   help="endpoint to bind (default tcp://127.0.0.1:28000; tcp://*:PORT for all interfaces)")
    p.add_argument("--timeout", type=float, default=None,
                   help="give up when batsim sends nothing for this many seconds (default: wait forever)")
    p.add_argument("--record", help="write every message to this JSON-lines file")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("record", help="relay Batsim <-> a decision process, writing every message")
    p.add_argument("--listen", required=True, help="endpoint batsim connects to (bound here), e.g. tcp://127.0.0.1:28000")
    p.add_argument("--forward", required=True, help="endpoint the decision process binds, e.g. tcp://127.0.0.1:28001")
    p.add_argument("--output", "-o", required=True, help="JSON-lines file")
    p.add_argument("--timeout", type=float, default=None, help="give up after this many silent seconds")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("metrics", help="metrics of a jobs.csv (ours or Batsim's)")
    p.add_argument("jobs_csv")
    p.add_argument("--nb-resources", type=int, help="platform size (default: from the sibling schedule.csv)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_metrics)

    p = sub.add_parser("schedulers", help="list schedulers, their options and queue policies")
    p.set_defaults(func=cmd_schedulers)

    p = sub.add_parser("demo", help="generate a workload and compare fcfs, easy, easy-sjbf")
    p.add_argument("--out", default="out/demo")
    p.add_argument("--jobs", type=int, default=2000)
    p.add_argument("--resources", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("workload", help="workload tools")
    wsub = p.add_subparsers(dest="workload_command", required=True)
    g = wsub.add_parser("generate", help="seeded synthetic workload (Batsim JSON)")
    g.add_argument("--jobs", type=int, required=True)
    g.add_argument("--resources", type=int, required=True)
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--load", type=float, default=0.9)
    g.add_argument("--output", "-o", required=True)
    g.set_defaults(func=cmd_workload_generate)

    g = wsub.add_parser("from-swf", help="SWF trace (gzip ok) -> Batsim JSON")
    g.add_argument("trace")
    _add_conversion_args(g)
    g.set_defaults(func=cmd_workload_from_swf)
    g = wsub.add_parser("from-table", help="Slurm sacct / PM100 table (CSV or Parquet) -> Batsim JSON")
    g.add_argument("table")
    g.add_argument("--unit", choices=("cores", "nodes"), default="cores", help="what res counts")
    _add_conversion_args(g)
    g.set_defaults(func=cmd_workload_from_table)
    g = wsub.add_parser("lublin", help="Lublin-Feitelson model workload (Batsim JSON, or SWF with -o X.swf / --swf)")
    g.add_argument("--nodes", type=int, required=True)
    g.add_argument("--jobs", type=int, required=True)
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--mode", choices=("typed", "typeless"), default="typed",
                   help="typed: batch + interactive parameter sets (the program's default); typeless: one set")
    g.add_argument("--start-hour", type=float, default=0.0, help="hour of day at t=0 (the program: 0)")
    g.add_argument("--exact-clock", action="store_true",
                   help="keep fractional arrival times (the program truncates each step, drifting the daily cycle)")
    g.add_argument("--swf", help="also write the SWF trace here")
    _add_conversion_args(g)
    g.set_defaults(func=cmd_workload_lublin)
    g = wsub.add_parser("check", help="validate a Batsim JSON workload")
    g.add_argument("workload")
    g.set_defaults(func=cmd_workload_check)

    p = sub.add_parser("platform", help="platform tools")
    psub = p.add_subparsers(dest="platform_command", required=True)
    g = psub.add_parser("generate", help="SimGrid platform XML loadable by Batsim 4.2.1")
    g.add_argument("--hosts", type=int, required=True)
    g.add_argument("--cores-per-host", type=int, default=1)
    g.add_argument("--resource-per", choices=("core", "host"), default="core",
                   help="one Batsim compute resource per core (default) or per host")
    g.add_argument("--output", "-o", required=True)
    g.set_defaults(func=cmd_platform_generate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return 2
    except SchedlabError as exc:
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # option values checked by generators
        print(f"schedlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
