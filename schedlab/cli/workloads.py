"""`schedlab workload ...` and `schedlab platform ...`: generators, converters, checks.

Every output path is checked before the work starts (schedlab.paths); `-o/--output` is always the
file written.
"""

from __future__ import annotations

import argparse
from typing import Any

from schedlab.cli.common import progress_bar
from schedlab.errors import InputError
from schedlab.paths import FileUse, atomic_write, check_output_file


def cmd_workload_generate(args: argparse.Namespace) -> int:
    from schedlab.workloads.synthetic import SyntheticSpec, stream, write_generated

    spec = SyntheticSpec(nb_jobs=args.jobs, nb_resources=args.resources, seed=args.seed, load=args.load)
    spec.validate()
    check_output_file(args.output)
    bar, update = progress_bar(args.jobs, True, "generate")
    try:
        if str(args.output).endswith(".parquet"):  # columnar: the same jobs, read back as a stream
            from schedlab.workload_columns import write_columns

            streamed = stream(spec)
            write_columns(args.output, streamed.stream(), name=streamed.name, nb_res=spec.nb_resources,
                          nb_jobs=spec.nb_jobs, extra=dict(streamed.extra), progress=update)
        else:
            write_generated(args.output, spec, progress=update)
    finally:
        if bar is not None:
            bar.close()
    print(f"{args.jobs} jobs on {args.resources} resources (seed {args.seed}, load {args.load:g}) -> {args.output}")
    return 0


def _conversion_options(args: argparse.Namespace):
    from schedlab.workloads.convert import ConversionOptions

    options = ConversionOptions(
        res_from=getattr(args, "res_from", "requested"), missing_walltime=args.missing_walltime,
        walltime_from=args.walltime_from, start=args.start, days=args.days,
        last_hours=args.last_hours, first=args.first, keep_zero_runtime=args.keep_zero_runtime,
        max_runtime_s=args.max_runtime, platform_size=args.platform_size, too_large=args.too_large,
        nodes_to_cores=args.nodes_to_cores, cores_to_nodes=args.cores_to_nodes,
        only_completed=getattr(args, "only_completed", False), completed_before=args.completed_before,
        max_user_share=getattr(args, "max_user_share", None))  # the last three: traces only (not lublin)
    options.validate()
    return options


def _write_conversion(trace: Any, args: argparse.Namespace, options: Any, *, description: str = "",
                      generator: dict[str, Any] | None = None, note: str = "") -> int:
    from schedlab.workloads.convert import convert_columns, format_summary

    workload, summary = convert_columns(trace, options, description=description)
    if generator is not None:
        workload.tail["generator"] = generator
    workload.write(args.output)
    print(format_summary(summary))
    if options.platform_size is None and generator is None:  # a trace's machine, guessed: said
        print(f"  nb_res {workload.head['nb_res']}: the widest job kept, as neither --platform-size nor the trace "
              "gave the machine's size (it was probably larger, and its size changes every waiting time)")
    print(f"-> {args.output} (nb_res {workload.head['nb_res']}){note}")
    return 0


def cmd_workload_from_trace(args: argparse.Namespace) -> int:
    """`workload from-swf`, `from-table`, ...: a trace of a registered format (workloads/formats.py)."""
    from dataclasses import replace

    trace_format = args.trace_format
    options = _conversion_options(args)
    check_output_file(args.output)
    trace = trace_format.read(getattr(args, trace_format.argument), **trace_format.read_options(args))
    if options.platform_size is None and trace.max_procs:  # the machine the trace states (SWF's MaxProcs)
        options = replace(options, platform_size=trace.max_procs)
    return _write_conversion(trace, args, options)


def cmd_workload_lublin(args: argparse.Namespace) -> int:
    from schedlab.workloads.lublin import check_machine, generate, to_swf_columns, to_trace_jobs
    from schedlab.workloads.swf import write_swf

    check_machine(args.nodes, args.mode == "typed")
    to_swf = args.output.endswith(".swf")
    options = None if to_swf else _conversion_options(args)
    swf_paths = [path for path in ((args.output if to_swf else None), args.swf) if path]
    for path in {args.output, *swf_paths}:
        check_output_file(path)
    jobs = generate(nodes=args.nodes, nb_jobs=args.jobs, seed=args.seed, typed=args.mode == "typed",
                    start_hour=args.start_hour, exact_clock=args.exact_clock)
    for swf_path in swf_paths:  # -o X.swf and --swf Y: both written
        with atomic_write(swf_path) as handle:
            write_swf(handle, to_swf_columns(jobs), jobs.header)
        print(f"{args.jobs} jobs (SWF) -> {swf_path}")
    if to_swf:
        return 0
    trace = to_trace_jobs(jobs, nodes=args.nodes, seed=args.seed, mode=args.mode)
    generator = {"name": "lublin", "nodes": args.nodes, "nb_jobs": args.jobs, "seed": args.seed,
                 "mode": args.mode, "start_hour": args.start_hour, "exact_clock": args.exact_clock}
    return _write_conversion(trace, args, options, description=jobs.header["Note"], generator=generator,
                             note=f"; the model has no user estimate: walltime policy '{args.missing_walltime}'")


def cmd_workload_columns(args: argparse.Namespace) -> int:
    from schedlab.workload import load_workload, require_batsim_fields
    from schedlab.workload_columns import stream_of, write_columns

    if not str(args.output).endswith(".parquet"):
        raise InputError(f"--output {args.output}: a columnar workload is written as .parquet")
    workload = load_workload(args.workload)
    require_batsim_fields(workload)
    check_output_file(args.output)
    written = write_columns(args.output, stream_of(workload).stream(), name=workload.name, nb_res=workload.nb_res,
                            nb_jobs=len(workload.jobs), extra={k: v for k, v in workload.extra.items()
                                                               if k not in ("jobs", "profiles", "nb_res")})
    print(f"{written} jobs -> {args.output}")
    return 0


def cmd_workload_check(args: argparse.Namespace) -> int:
    from schedlab.workload import check_workload_file

    workload, warnings, notes = check_workload_file(args.workload)
    if warnings and args.strict:
        raise InputError(warnings[0])
    types = sorted({workload.profiles[j.profile].type for j in workload.jobs})
    largest = max((j.res for j in workload.jobs), default=0)
    span = (workload.jobs[-1].submit_time_s - workload.jobs[0].submit_time_s) if workload.jobs else 0.0
    verdict = f"valid for Batsim 4.2.1 with {len(warnings)} warning(s)" if warnings else "OK"
    print(f"{args.workload}: {verdict}: {len(workload.jobs)} jobs, {len(workload.profiles)} profiles "
          f"({', '.join(types) or '-'}), nb_res {workload.nb_res}, largest job {largest}, "
          + (f"submissions over {span / 86400:.2f} days" if span < 86400e6 else f"submissions over {span:.3g} s"))
    for warning in warnings:
        print(f"warning: {warning}")
    for note in notes:
        print(f"note: {note}")
    return 0


def cmd_platform_generate(args: argparse.Namespace) -> int:
    from schedlab.platforms.generate import machine_xml

    text = machine_xml(args.hosts, args.cores_per_host, resource_per=args.resource_per)
    with atomic_write(check_output_file(args.output)) as handle:
        handle.write(text)
    count = args.hosts * (args.cores_per_host if args.resource_per == "core" else 1)
    print(f"{count} compute resources (one per {args.resource_per}) + master_host0 -> {args.output}")
    return 0


def cmd_platform_list(args: argparse.Namespace) -> int:
    from schedlab.platforms import DESCRIPTIONS, SHIPPED, platform_path

    for name in SHIPPED:
        print(f"{name:<16} {DESCRIPTIONS[name]}\n{'':<16} {platform_path(name)}")
    return 0


#: `from-table --help`: the columns read, by name (case-insensitive; a test keeps it equal to
#: workloads/slurm.py's aliases, which are not imported here: they would load numpy at start-up)
def _add_conversion_args(parser: argparse.ArgumentParser, *, trace: bool = True) -> None:
    """The converter's options; `trace=False` (a model's output): without the filters on what only
    real traces hold (allocated processors, statuses, users)."""
    parser.add_argument("--output", "-o", required=True, help="Batsim JSON workload to write")
    if trace:
        parser.add_argument("--res-from", choices=("requested", "allocated"), default="requested",
                            help="processor field for res (the other is the fallback when unknown)")
    parser.add_argument("--missing-walltime", default="none",
                        help="when the requested time is unknown: none (walltime -1, default), drop, runtime, "
                             "factor:F (F x run time) or max:SECONDS")
    parser.add_argument("--walltime-from", choices=("requested", "runtime", "none"), default="requested",
                        help="runtime: every walltime is the job's run time (a clairvoyant workload); none: no "
                             "walltime, nobody is killed (Alea), the requested time kept as requested_time_s")
    parser.add_argument("--start", help="window start: seconds from the trace start, or a UTC date")
    parser.add_argument("--days", type=float, help="window length in days (e.g. 15)")
    parser.add_argument("--last-hours", type=float,
                        help="keep the last H hours of submissions (e.g. 24); not with --start")
    parser.add_argument("--first", type=int, help="keep the first N jobs that pass the filters")
    parser.add_argument("--keep-zero-runtime", action="store_true", help="replay run time 0 as 1 s instead of dropping")
    parser.add_argument("--max-runtime", type=float, help="drop jobs running longer (seconds, e.g. 604800)")
    parser.add_argument("--platform-size", type=int, help="resources of the target platform (SWF: MaxProcs)")
    parser.add_argument("--too-large", choices=("drop", "reject"), default="drop",
                        help="jobs larger than the platform: drop them, or keep them for the scheduler to reject")
    parser.add_argument("--nodes-to-cores", type=int, default=1, help="multiply res (trace counts nodes)")
    parser.add_argument("--cores-to-nodes", type=int, default=1, help="divide res, rounding up (cores -> nodes)")
    if trace:
        parser.add_argument("--only-completed", action="store_true", help="keep only jobs whose status is completed")
    parser.add_argument("--completed-before", type=float, metavar="SECONDS",
                        help="keep only jobs completed before this trace time (a training history for a window "
                             "starting then)")
    if trace:
        parser.add_argument("--max-user-share", type=float, metavar="SHARE",
                            help="drop every job of a user holding more than this share of the jobs (a flurry, "
                                 "e.g. 0.55)")


def _trace_use(trace_format: Any) -> Any:
    name = trace_format.argument
    return lambda args: FileUse().read(f"the {name}", getattr(args, name)).write("--output", args.output)


def add_parsers(sub: Any, *, traces: bool = True) -> None:
    """`workload` and `platform`; `traces`: `workload`'s converters too (one per registered trace format)."""
    p = sub.add_parser("workload", help="workload tools")
    wsub = p.add_subparsers(dest="workload_command", required=True)
    g = wsub.add_parser("generate", help="seeded synthetic workload (Batsim JSON, streamed to the file)")
    g.add_argument("--jobs", type=int, required=True, help="number of jobs")
    g.add_argument("--resources", type=int, required=True, help="resources of the target platform (nb_res)")
    g.add_argument("--seed", type=int, required=True, help="random seed: the same seed gives the same bytes")
    g.add_argument("--load", type=float, default=0.9, help="offered load, > 0 (default 0.9)")
    g.add_argument("--output", "-o", required=True,
                   help="Batsim JSON workload to write, or W.parquet: columns read as a stream by `simulate`")
    g.set_defaults(func=cmd_workload_generate, files=lambda args: FileUse().write("--output", args.output))
    g = wsub.add_parser("columns", help="Batsim JSON workload -> W.parquet (columns `simulate` reads as a stream)")
    g.add_argument("workload", help="a Batsim JSON workload (delay profiles)")
    g.add_argument("--output", "-o", required=True, help="the columnar workload to write (.parquet)")
    g.set_defaults(func=cmd_workload_columns,
                   files=lambda args: FileUse().read("the workload", args.workload).write("--output", args.output))

    from schedlab.workloads.formats import all_trace_formats

    for trace_format in all_trace_formats().values() if traces else ():
        g = wsub.add_parser(trace_format.command, help=trace_format.help, description=trace_format.description)
        g.add_argument(trace_format.argument, help=trace_format.argument_help)
        for flags, keywords in trace_format.options:
            g.add_argument(*flags, **keywords)
        _add_conversion_args(g)
        g.set_defaults(func=cmd_workload_from_trace, trace_format=trace_format, files=_trace_use(trace_format))
    g = wsub.add_parser("lublin", help="Lublin-Feitelson model workload (Batsim JSON, or SWF with -o X.swf / --swf)")
    g.add_argument("--nodes", type=int, required=True, help="nodes of the modelled machine (the largest job)")
    g.add_argument("--jobs", type=int, required=True, help="number of jobs")
    g.add_argument("--seed", type=int, required=True, help="random seed: the same seed gives the same bytes")
    g.add_argument("--mode", choices=("typed", "typeless"), default="typed",
                   help="typed: batch + interactive parameter sets (default, as the program); typeless: one set")
    g.add_argument("--start-hour", type=float, default=0.0, help="hour of day at t=0 (the program: 0)")
    g.add_argument("--exact-clock", action="store_true",
                   help="keep fractional arrival times (the program truncates each step, drifting the daily cycle)")
    g.add_argument("--swf", help="also write the SWF trace here")
    _add_conversion_args(g, trace=False)
    g.set_defaults(func=cmd_workload_lublin,
                   files=lambda args: FileUse().write("--output", args.output).write("--swf", args.swf))
    g = wsub.add_parser("check", help="validate a Batsim JSON workload as Batsim 4.2.1 would")
    g.add_argument("workload", help="a Batsim JSON workload")
    g.add_argument("--strict", action="store_true", help="warnings (jobs larger than nb_res) are errors")
    g.set_defaults(func=cmd_workload_check)

    p = sub.add_parser("platform", help="platform tools")
    psub = p.add_subparsers(dest="platform_command", required=True)
    g = psub.add_parser("generate", help="SimGrid platform XML loadable by Batsim 4.2.1")
    g.add_argument("--hosts", type=int, required=True, help="number of hosts of the flat cluster")
    g.add_argument("--cores-per-host", type=int, default=1, help="cores of each host")
    g.add_argument("--resource-per", choices=("core", "host"), default="core",
                   help="one Batsim compute resource per core (default) or per host")
    g.add_argument("--output", "-o", required=True, help="SimGrid platform XML to write")
    g.set_defaults(func=cmd_platform_generate, files=lambda args: FileUse().write("--output", args.output))
    g = psub.add_parser("list", help="platforms shipped with schedlab (usable by name: -p marconi100)")
    g.set_defaults(func=cmd_platform_list)

