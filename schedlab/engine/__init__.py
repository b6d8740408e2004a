"""The embedded engine: Batsim 4.2.1's semantics replayed by a discrete-event loop.

- `core.py`: `Engine`, a heap of events; `step()` handles one instant, tells the scheduler, calls
  `decide(now)` once and applies the decisions where Batsim would (zero message latency: the
  `ideal` timing). `ledger.py`: the job records and busy resources both engines keep.
- `batsim_timed.py`, `batsim_kernel.py`, `batsim_network.py`: the same with Batsim's message timing
  on the platform (`--timing batsim`): the actors, the kernel's sleeps, the routes' latencies.
  `simgrid_links.py`, `simgrid_profiles.py`, `simgrid_clusters.py`, `simgrid_zones.py`,
  `simgrid_routing.py`: SimGrid 3.32's links, link profiles, star zones, zone tree and routes.
- `make_engine`: the engine a timing names. Runs (their directories and summaries) are
  schedlab.runs', a floor above.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedlab.engine.core import Engine, EventKind
from schedlab.engine.ledger import JobRecord
from schedlab.host import SchedulerHooks
from schedlab.model import Platform
from schedlab.workload import Workload

__all__ = ["Engine", "EventKind", "JobRecord", "make_engine"]


def make_engine(platform: Platform, workload: Workload, scheduler: SchedulerHooks, timing: str,
                progress: Callable[[int], None] | None = None) -> Any:
    """The engine for `timing`: "ideal" (zero message latency) or "batsim" (Batsim 4.2.1's)."""
    if timing == "batsim":
        from schedlab.engine.batsim_network import message_routes
        from schedlab.engine.batsim_timed import BatsimTimedEngine

        if not platform.source or not Path(platform.source).is_file():
            raise ValueError(f"timing='batsim' derives message times from the platform file: platform "
                             f"{platform.source!r} was not read from one (load_platform(path) gives one that was)")
        return BatsimTimedEngine(platform, workload, scheduler, routes=message_routes(platform.source),
                                 progress=progress)
    if timing == "ideal":
        return Engine(platform, workload, scheduler, progress=progress)
    raise ValueError(f"timing must be 'ideal' or 'batsim', got {timing!r}")
