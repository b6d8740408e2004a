"""Platforms: SimGrid XMLs shipped with schedlab, and a generator (`generate.py`).

Shipped (all load in real Batsim 4.2.1; ids in numeric order):
- `lublin256.xml`: 256 nodes, the machine of the Lublin-Feitelson model's 256-node workloads.
- `marconi100.xml`: MARCONI100 as 15,680 cores = 980 nodes x 16 cores, as in the DIWS study (the
  real nodes have 2 x 16-core IBM POWER9 and 4 V100 GPUs; the study schedules 16 cores per node).
- `constrained512.xml`: 512 cores, the constrained platform of the hybrid plan/backfill study.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from schedlab.errors import InputError

SHIPPED = {
    "lublin256": "lublin256.xml",
    "marconi100": "marconi100.xml",
    "constrained512": "constrained512.xml",
}
DESCRIPTIONS = {
    "lublin256": "256 nodes, one resource each (Lublin-Feitelson 256-node workloads)",
    "marconi100": "15,680 cores = 980 nodes x 16 (MARCONI100, the DIWS study)",
    "constrained512": "512 cores (the hybrid plan/backfill study's constrained platform)",
}


def platform_path(name: str) -> Path:
    """Path of a shipped platform XML by name (see SHIPPED)."""
    try:
        filename = SHIPPED[name]
    except KeyError:
        raise InputError(f"unknown platform {name!r} (shipped: {', '.join(SHIPPED)})") from None
    return Path(str(resources.files(__package__).joinpath(filename)))


def resolve_platform(name_or_path: str | Path) -> Path:
    """An existing file wins; otherwise a shipped platform's name (`-p marconi100`)."""
    path = Path(name_or_path)
    if path.is_file() or str(name_or_path) not in SHIPPED:
        if not path.exists():
            raise InputError(f"no such file (shipped platforms by name: {', '.join(SHIPPED)})", path=str(path))
        return path
    return platform_path(str(name_or_path))
