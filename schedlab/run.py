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
    #: What stopped the run: a SchedlabError (a rule was broken: exit 1), KeyboardInterrupt (exit 130)
    #: or any other exception (a bug: exit 3). None when the run is complete.
    exception: BaseException | None = None

    @property
    def is_bug(self) -> bool:
        return self.exception is not None and not isinstance(self.exception, SchedlabError | KeyboardInterrupt)


def simulate(platform: Platform, workload: Workload, scheduler: Any, out_dir: str | Path | None, *,
             run_info: Mapping[str, Any] | None = None,
             progress: Callable[[int], None] | None = None, timing: str = "ideal") -> RunResult:
    """Run to the end. Whatever stops it once the engine has started (a broken rule, a scheduler
    bug, Ctrl-C) still writes what finished, marked `"complete": false` with the error.
    `timing`: "ideal" (zero latency) or "batsim" (Batsim 4.2.1's message timing on the platform
    file `platform.source`; see engine_batsim.py)."""
    engine: Any
    if timing == "batsim":
        from schedlab.batsim_network import message_routes
        from schedlab.engine_batsim import BatsimTimedEngine

        if not platform.source or not Path(platform.source).is_file():
            raise ValueError(f"timing='batsim' derives message times from the platform file: platform "
                             f"{platform.source!r} was not read from one (load_platform(path) gives one that was)")
        engine = BatsimTimedEngine(platform, workload, scheduler, routes=message_routes(platform.source),
                                   progress=progress)
    elif timing == "ideal":
        engine = Engine(platform, workload, scheduler, progress=progress)
    else:
        raise ValueError(f"timing must be 'ideal' or 'batsim', got {timing!r}")
    exception: BaseException | None = None
    t0 = time.perf_counter()
    try:
        engine.run()
    except (Exception, KeyboardInterrupt) as exc:
        exception = exc
    elapsed = time.perf_counter() - t0
    error = None
    if isinstance(exception, KeyboardInterrupt):
        error = "interrupted"
    elif isinstance(exception, SchedlabError):
        error = str(exception)
    elif exception is not None:
        error = f"internal error: {type(exception).__name__}: {exception}"
    info = dict(run_info or {})
    if out_dir is not None:
        summary = write_outputs(engine, out_dir, run_info=info, simulation_time_s=elapsed, error=error)
    else:
        summary = build_summary(engine, run_info=info, simulation_time_s=elapsed, error=error)
    return RunResult(engine, summary, error, exception)
