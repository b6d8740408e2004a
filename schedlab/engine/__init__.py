"""The embedded engine: Batsim 4.2.1's semantics replayed by a discrete-event loop.

- `core.py`: `Engine`, a heap of events; `step()` handles one instant, tells the scheduler, calls
  `decide(now)` once and applies the decisions where Batsim would (zero message latency: the
  `ideal` timing). `ledger.py`: the job records and busy resources both engines keep.
- `batsim_timed.py`, `batsim_kernel.py`, `batsim_network.py`: the same with Batsim's message timing
  on the platform (`--timing batsim`): the actors, the kernel's sleeps, the routes' latencies.
  `simgrid_links.py`, `simgrid_profiles.py`, `simgrid_clusters.py`, `simgrid_zones.py`,
  `simgrid_routing.py`: SimGrid 3.32's links, link profiles, star zones, zone tree and routes.
- `run.py`: one simulation with its results directory written as a whole: `RunSpec` ->
  `prepare()` -> `execute()` (`RunDirectory`, `simulate`).
"""

from schedlab.engine.core import Engine, EventKind
from schedlab.engine.ledger import JobRecord

__all__ = ["Engine", "EventKind", "JobRecord"]
