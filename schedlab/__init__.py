"""schedlab: Batsim-compatible HPC job schedulers and a Batsim-faithful embedded engine.

The stable Python API (semantic versioning, CHANGELOG.md), imported on first use so that
`import schedlab` and `schedlab --version` stay light:

- `simulate(platform, workload, scheduler, *, options, timing, out) -> Result` (schedlab.api);
- writing a scheduler: `Scheduler` (hooks + `decide(now)`), `QueueScheduler` (a sorted queue with
  extension points), `EasyBackfilling`, `register`; decisions `Execute`, `Reject`, `CallMeLater`,
  `Kill`, `SetMetadata`; what a scheduler sees: `Job`, `JobState`, `Platform`;
- inputs: `Workload`, `load_workload`, `load_platform`, `create_scheduler`.

docs/writing-a-scheduler.md is the tutorial.
"""

from __future__ import annotations

from typing import Any

#: The package version (pyproject.toml reads it from here; a constant keeps start-up free of
#: importlib.metadata, which `schedlab simulate` would otherwise load first).
__version__ = "0.1.0"

_EXPORTS = {
    "simulate": "schedlab.api", "Result": "schedlab.api",
    "Scheduler": "schedlab.schedulers.interface", "register": "schedlab.schedulers.interface",
    "create_scheduler": "schedlab.schedulers.base",
    "QueueScheduler": "schedlab.schedulers.queue", "EasyBackfilling": "schedlab.schedulers.easy",
    "Execute": "schedlab.model", "Reject": "schedlab.model", "CallMeLater": "schedlab.model",
    "Kill": "schedlab.model", "SetMetadata": "schedlab.model", "Decision": "schedlab.model",
    "Job": "schedlab.model", "JobState": "schedlab.model", "Platform": "schedlab.model",
    "Workload": "schedlab.workload", "load_workload": "schedlab.workload",
    "load_platform": "schedlab.platform",
}

__all__ = ["__version__", *_EXPORTS]


def _checkout_subpackages() -> None:
    """In a source checkout, the subpackages pyproject maps beside this folder (`schedulers/` is
    `schedlab.schedulers`, ...) are found there too: `python -m schedlab` started in the checkout's
    root imports this folder first, and without this its subpackages were missing (an installed
    copy of them is never mixed with the checkout's code). An install has no such folders beside it."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "schedulers" / "__init__.py").is_file():
        __path__.append(str(root))


_checkout_subpackages()


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'schedlab' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
