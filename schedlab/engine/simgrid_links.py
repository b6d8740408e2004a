"""The pieces of a SimGrid 3.32 platform that simgrid_zones.py reads and simgrid_routing.py routes
on: links, zones and their declared routes, and SimGrid's units."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

LOOPBACK_BANDWIDTH = 10e9  # network/loopback-bw default (bytes/s)
LOOPBACK_LATENCY = 0.0  # network/loopback-lat default (s)


def _scale(*generators: tuple[str, float, int]) -> dict[str, float]:
    """xbt_parse_units' unit_scale: each prefix multiplies the previous value (so values are SimGrid's)."""
    units: dict[str, float] = {}
    for unit, value, base in generators:
        prefixes = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi") if base == 2 else ("k", "M", "G", "T", "P", "E",
                                                                                       "Z", "Y")
        units.setdefault(unit, value)
        for prefix in prefixes:
            value *= 1024.0 if base == 2 else 1000.0
            units.setdefault(prefix + unit, value)
    return units


_BANDWIDTH_UNITS = _scale(("bps", 0.125, 2), ("bps", 0.125, 10), ("Bps", 1.0, 2), ("Bps", 1.0, 10))
_TIME_UNITS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9,
               "ps": 1e-12}
_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")  # what strtod reads


class Unmodelled(Exception):
    """Something SimGrid refuses or this model does not cover, at `line` of the file."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def _value(text: str, units: dict[str, float], default_unit: str, what: str) -> float:
    """xbt_parse_get_value_with_unit: strtod, then the rest must be a unit (none: the default)."""
    match = _NUMBER.match(text)
    unit = text[match.end():] if match else ""
    if match is None or (unit or default_unit) not in units:
        raise Unmodelled(f"cannot read {what} {text!r}")
    return float(match.group(1)) * units[unit or default_unit]


def bandwidth(text: str) -> float:
    return _value(text, _BANDWIDTH_UNITS, "Bps", "bandwidth")


def latency(text: str) -> float:
    return _value(text, _TIME_UNITS, "s", "latency")


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    bandwidth_bytes_per_s: float
    latency_s: float
    fatpipe: bool = False  # a FATPIPE link bounds a flow once however often the route crosses it


LOOPBACK = Link("__loopback__", LOOPBACK_BANDWIDTH, LOOPBACK_LATENCY, fatpipe=True)


@dataclass(slots=True)
class ZoneRoute:
    """A declared route of a zone: its links, and the gateways of a route between sub-zones."""

    links: list[Link]
    gw_src: str | None = None
    gw_dst: str | None = None
    summed: list[Link] | None = None  # the order SimGrid adds their latencies in, when not `links`'


class LocalRoutes(Protocol):
    """A zone that routes between its hosts by its own rules (SimGrid's TorusZone, FatTreeZone and
    DragonflyZone: simgrid_topologies.py): the links from one host to another, latencies summed in
    their order."""

    def route(self, src: str, dst: str) -> list[Link]: ...


@dataclass(eq=False)
class Zone:
    id: str
    routing: str  # Full, Floyd, Dijkstra, DijkstraCache, Vivaldi, Cluster (routing="Cluster", <cluster>),
    # or a topology cluster's TORUS, FAT_TREE, DRAGONFLY
    parent: Zone | None
    line: int | None = None
    points: list[str] = field(default_factory=list)  # netpoints in declaration order: their ids
    children: list[Zone] = field(default_factory=list)
    table: dict[tuple[str, str], ZoneRoute] = field(default_factory=dict)  # declared (and symmetric) routes
    bypass: dict[tuple[str, str], ZoneRoute] = field(default_factory=dict)  # <bypassRoute>s, <bypassZoneRoute>s
    edges: list[tuple[str, str]] = field(default_factory=list)  # in the order they were added
    # stars (<cluster>, Vivaldi): per netpoint, its links up and down, and a loopback
    up: dict[str, list[Link]] = field(default_factory=dict)
    down: dict[str, list[Link]] = field(default_factory=dict)
    loopback: dict[str, list[Link]] = field(default_factory=dict)
    gateway: str | None = None
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    peers: set[str] = field(default_factory=set)  # the <peer>s of a Vivaldi zone
    cache: dict[str, Any] = field(default_factory=dict)  # shortest-path tables, built on first use
    topology: LocalRoutes | None = None  # a topology cluster's own routing

    @property
    def base(self) -> bool:
        """Hosts and routers, no sub-zone: SimGrid's RoutingMode::base, the only level with loopbacks."""
        return not self.children
