"""One simulation on the embedded engine, with outputs written even when it fails part-way."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.engine import Engine
from schedlab.errors import SchedlabError
from schedlab.model import Platform
from schedlab.outputs import build_summary, write_outputs
from schedlab.workload import Workload


@dataclass
class RunResult:
    engine: Engine
    summary: dict[str, Any]
    error: str | None


def simulate(platform: Platform, workload: Workload, scheduler: Any, out_dir: str | Path | None, *,
             run_info: Mapping[str, Any] | None = None,
             progress: Callable[[int], None] | None = None) -> RunResult:
    """Run to the end; on a SchedlabError or Ctrl-C, flush what finished and mark it incomplete."""
    engine = Engine(platform, workload, scheduler, progress=progress)
    error: str | None = None
    t0 = time.perf_counter()
    try:
        engine.run()
    except SchedlabError as exc:
        error = str(exc)
    except KeyboardInterrupt:
        error = "interrupted"
    elapsed = time.perf_counter() - t0
    info = dict(run_info or {})
    if out_dir is not None:
        summary = write_outputs(engine, out_dir, run_info=info, simulation_time_s=elapsed, error=error)
    else:
        summary = build_summary(engine, run_info=info, simulation_time_s=elapsed, error=error)
    return RunResult(engine, summary, error)
