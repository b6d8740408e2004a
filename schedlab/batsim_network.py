"""How long Batsim 4.2.1's internal messages take on a platform: routes to the master host.

Batsim runs SimGrid 3.32 with the `ptask_L07` host model (batsim.cpp): a message is a 1-byte
communication whose duration is the route's latency (the sum of its links' latencies, no latency
factor) followed by a transfer at `min(least link bandwidth, TCP_gamma / (2 latency))` bytes/s.
Every internal message goes to the server's mailbox on the master host, so only the routes from each
host to the master matter. A flat `<cluster>` is a star zone: a host's route up is its private link
(split-duplex by default: `_UP` and `_DOWN` are distinct links) then the cluster backbone; between
clusters, the top zone's `zoneRoute` links come first (NetZoneImpl::get_global_route_with_netzones).

Only platforms made of flat clusters under one Full zone are modelled; anything else is refused with
one line naming the element (docs/design.md, "Batsim timing").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from schedlab.errors import InputError
from schedlab.platform import host_roles

TCP_GAMMA = 4194304.0  # SimGrid's network/TCP-gamma default (bytes), bounding a flow's rate
DEFAULT_MASTER_HOST = "master_host"

_BANDWIDTH_UNITS = {
    "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
    "Bps": 1.0, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
    "Kibps": 1024 / 8, "Mibps": 1024 ** 2 / 8, "Gibps": 1024 ** 3 / 8, "Tibps": 1024 ** 4 / 8,
    "KiBps": 1024.0, "MiBps": 1024.0 ** 2, "GiBps": 1024.0 ** 3, "TiBps": 1024.0 ** 4,
}
_LATENCY_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "m": 60.0, "h": 3600.0,
                  "d": 86400.0, "w": 604800.0}
#: cluster attributes that change routes or timings in ways not modelled here
_REFUSED_CLUSTER_ATTRIBUTES = ("topology", "topo_parameters", "limiter_link", "availability_file",
                               "state_file", "speed_file", "loopback_bw", "loopback_lat")


@dataclass(frozen=True, slots=True)
class Route:
    """A 1-byte message's route to the master: latency phase, then a transfer at `rate_bytes_per_s`."""

    latency_s: float
    rate_bytes_per_s: float


@dataclass(frozen=True)
class MessageRoutes:
    """Routes of Batsim's internal messages: from the master itself, and from each compute
    resource (by resource id: compute hosts sorted by name, as Batsim numbers them)."""

    master: Route
    resources: tuple[Route, ...]


@dataclass(frozen=True)
class _Link:
    name: str
    bandwidth_bytes_per_s: float
    latency_s: float


class _Refused(Exception):
    def __init__(self, message: str, needle: str = "") -> None:
        super().__init__(message)
        self.needle = needle


def _value(text: str, units: dict[str, float], default_unit: str, what: str) -> float:
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    if not match or (match.group(2) or default_unit) not in units:
        raise _Refused(f"cannot read {what} {text!r}", text)
    return float(match.group(1)) * units[match.group(2) or default_unit]


class _Cluster:
    def __init__(self, element: ET.Element) -> None:
        self.id = element.get("id", "")
        for attribute in _REFUSED_CLUSTER_ATTRIBUTES:
            if element.get(attribute) not in (None, "", "FLAT"):
                raise _Refused(f"cluster {self.id!r}: {attribute}={element.get(attribute)!r} is not modelled "
                               "by --timing batsim", f'{attribute}="')
        self.split_duplex = element.get("sharing_policy", "SPLITDUPLEX") == "SPLITDUPLEX"
        self.bandwidth = _value(element.get("bw", "0"), _BANDWIDTH_UNITS, "Bps", "bandwidth")
        self.latency = _value(element.get("lat", "0"), _LATENCY_UNITS, "s", "latency")
        bb_bw, bb_lat = element.get("bb_bw"), element.get("bb_lat")
        self.backbone: _Link | None = None
        if bb_bw is not None or bb_lat is not None:
            backbone = _Link(f"{self.id}_backbone", _value(bb_bw or "0", _BANDWIDTH_UNITS, "Bps", "bandwidth"),
                             _value(bb_lat or "0", _LATENCY_UNITS, "s", "latency"))
            if backbone.bandwidth_bytes_per_s > 0 or backbone.latency_s > 0:
                self.backbone = backbone
        prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
        self.hosts: list[str] = []
        for part in element.get("radical", "").split(","):
            first, _, last = part.partition("-")
            self.hosts.extend(f"{prefix}{i}{suffix}" for i in range(int(first), int(last or first) + 1))
        self.roles = host_roles(element)

    def up(self, host: str) -> list[_Link]:
        own = _Link(f"{self.id}_{host}" + ("_UP" if self.split_duplex else ""), self.bandwidth, self.latency)
        return [own] + ([self.backbone] if self.backbone else [])

    def down(self, host: str) -> list[_Link]:
        own = _Link(f"{self.id}_{host}" + ("_DOWN" if self.split_duplex else ""), self.bandwidth, self.latency)
        return ([self.backbone] if self.backbone else []) + [own]


def _route(hops: list[list[_Link]], latency_s: float = 0.0, between: list[_Link] | None = None) -> Route:
    """Latencies summed in route order (after those of the zone route `between`, already in
    `latency_s`), each link once (StarZone skips duplicates)."""
    seen: set[str] = set()
    links: list[_Link] = list(between or ())
    for hop in hops:
        for link in hop:
            if link.name not in seen:
                seen.add(link.name)
                links.append(link)
                latency_s += link.latency_s
    rate = min(link.bandwidth_bytes_per_s for link in links)
    if latency_s > 0:
        rate = min(rate, TCP_GAMMA / (2.0 * latency_s))
    return Route(latency_s, rate)


#: SimGrid configuration a platform may set that does not change simulated times (stack sizes,
#: debugging, tracing); any other (network/TCP-gamma, latency factors, models) is refused
_CONFIG_WITHOUT_TIMING = ("contexts/", "debug/", "exception/", "tracing", "path")


def _parse(root: ET.Element, master_host: str) -> MessageRoutes:
    zones = [child for child in root if child.tag in ("zone", "AS")]
    if len(zones) != 1 or any(child.tag not in ("zone", "AS", "config", "prop") for child in root):
        raise _Refused("--timing batsim models one top-level <zone> of clusters", "<zone")
    for config in root.iter("config"):
        for prop in config.iter("prop"):
            name = prop.get("id", "")
            if not name.startswith(_CONFIG_WITHOUT_TIMING):
                raise _Refused(f"<config> prop {name!r} may change SimGrid's timing and is not modelled by "
                               "--timing batsim", f'id="{name}"')
    top = zones[0]
    if top.get("routing") != "Full":
        raise _Refused(f"zone routing {top.get('routing')!r} is not modelled by --timing batsim (Full only)",
                       "routing=")
    clusters: dict[str, _Cluster] = {}
    links: dict[str, _Link] = {}
    zone_routes: dict[tuple[str, str], list[_Link]] = {}
    for element in top:
        if element.tag == "cluster":
            cluster = _Cluster(element)
            clusters[cluster.id] = cluster
        elif element.tag == "link":
            name = element.get("id", "")
            if element.get("sharing_policy", "SHARED") == "SPLITDUPLEX" or any(
                    element.get(a) for a in ("bandwidth_file", "latency_file", "state_file")):
                raise _Refused(f"link {name!r}: split-duplex links and traces are not modelled by --timing batsim",
                               f'id="{name}"')
            links[name] = _Link(name, _value(element.get("bandwidth", "0"), _BANDWIDTH_UNITS, "Bps", "bandwidth"),
                                _value(element.get("latency", "0"), _LATENCY_UNITS, "s", "latency"))
        elif element.tag in ("zoneRoute", "ASroute"):
            contents = element.findall("link_ctn")
            if any(c.get("direction") for c in contents) or any(c.get("id") not in links for c in contents):
                raise _Refused("zoneRoute: link_ctn with a direction or an unknown link is not modelled",
                               "<zoneRoute")
            route = [links[c.get("id", "")] for c in contents]
            src, dst = element.get("src", ""), element.get("dst", "")
            zone_routes[(src, dst)] = route
            if element.get("symmetrical", "YES").upper() in ("YES", "TRUE"):
                zone_routes.setdefault((dst, src), list(reversed(route)))
        elif element.tag != "prop":
            raise _Refused(f"<{element.tag}> is not modelled by --timing batsim (flat <cluster>s only)",
                           f"<{element.tag}")
    host_cluster = {host: cluster for cluster in clusters.values() for host in cluster.hosts}
    masters = [h for h, c in host_cluster.items() if "master" in c.roles or h == master_host]
    if len(masters) != 1:
        raise _Refused(f"--timing batsim needs exactly one master host, found {len(masters)}", "master")
    master = masters[0]
    home = host_cluster[master]

    def to_master(host: str) -> Route:
        cluster = host_cluster[host]
        if cluster is home:
            return _route([cluster.up(host), home.down(master)])
        between = zone_routes.get((cluster.id, home.id))
        if between is None:
            raise _Refused(f"no zoneRoute from {cluster.id!r} to the master's {home.id!r}", "<zoneRoute")
        return _route([cluster.up(host), home.down(master)],
                      latency_s=sum(link.latency_s for link in between), between=between)

    compute = sorted(h for h, c in host_cluster.items() if h != master and "storage" not in c.roles)
    by_cluster: dict[str, Route] = {}  # hosts of one cluster share their route's timing
    resources = []
    for host in compute:
        cluster = host_cluster[host]
        if cluster.id not in by_cluster:
            by_cluster[cluster.id] = to_master(host)
        resources.append(by_cluster[cluster.id])
    return MessageRoutes(to_master(master), tuple(resources))


def message_routes(path: str | Path, *, master_host: str = DEFAULT_MASTER_HOST) -> MessageRoutes:
    """The routes of `path`'s platform, or InputError (file, line) for what is not modelled."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        return _parse(ET.fromstring(text.lstrip()), master_host)
    except _Refused as exc:
        index = text.find(exc.needle) if exc.needle else -1
        line = text.count("\n", 0, index) + 1 if index >= 0 else None
        raise InputError(str(exc), path=str(path), line=line) from None
    except (ET.ParseError, ValueError) as exc:
        raise InputError(f"cannot read the platform for --timing batsim: {exc}", path=str(path)) from None
