"""Trace formats: the files of real systems that become Batsim workloads (SWF, Slurm/PM100 tables).

A format registers itself in its reader's module (`@trace_format`): the key campaigns and studies
name its files by (`swf = "PATH"`), its `schedlab workload` subcommand, and how a file of it is read
into the converter's columns (convert.TraceJobs, whose `max_procs` is the machine size a trace
states, when it states one). Campaigns, predictor studies and the command line find formats here:
adding one touches its reader's module.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TraceFormat:
    key: str  # a campaign's or study's workload key (`swf = "PATH"`)
    command: str  # `schedlab workload COMMAND`
    help: str  # the subcommand's one-line help
    argument: str  # the subcommand's positional argument's name
    argument_help: str
    #: read(path, **options) -> convert.TraceJobs; options are the subcommand's own (campaigns give none)
    read: Callable[..., Any]
    #: the subcommand's own options: (flags, add_argument keywords)
    options: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = ()
    description: str | None = None  # the subcommand's longer text

    def read_options(self, args: argparse.Namespace) -> dict[str, Any]:
        """The subcommand's own options, as `read` takes them."""
        return {flags[-1].lstrip("-").replace("-", "_"): getattr(args, flags[-1].lstrip("-").replace("-", "_"))
                for flags, _ in self.options}


TRACE_FORMATS: dict[str, TraceFormat] = {}


def trace_format(fmt: TraceFormat) -> TraceFormat:
    """Register a format (in its reader's module)."""
    if fmt.key in TRACE_FORMATS and TRACE_FORMATS[fmt.key] != fmt:
        raise ValueError(f"trace format {fmt.key!r} is registered twice")
    TRACE_FORMATS[fmt.key] = fmt
    return fmt


def all_trace_formats() -> dict[str, TraceFormat]:
    """Every format by key, sorted, each module of `schedlab.workloads` imported (by name: the
    registry knows no reader)."""
    package = importlib.import_module("schedlab.workloads")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return dict(sorted(TRACE_FORMATS.items()))


def read_trace(key: str, path: str) -> Any:
    """A trace file of a registered format as the converter's columns (the format's defaults)."""
    return all_trace_formats()[key].read(path)
