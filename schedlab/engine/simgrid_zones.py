"""A SimGrid 3.32 platform file read into its zone tree, as SimGrid's parser (sg_platf.cpp,
surfxml_sax_cb.cpp) builds it, for the routes of Batsim's messages (simgrid_routing.py).

Each netpoint (host, router, sub-zone) belongs to one zone, in declaration order; routes are kept
per zone as declared (and reversed when symmetrical). What SimGrid refuses, or what this model does
not cover, raises `Unmodelled` with the line of the element at fault.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from schedlab.platform import radical_numbers

LOOPBACK_BANDWIDTH = 10e9  # network/loopback-bw default (bytes/s)
LOOPBACK_LATENCY = 0.0  # network/loopback-lat default (s)
ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi")  # SimGrid matches them in any case
#: attributes that make SimGrid change a resource over time
_TRACES = ("bandwidth_file", "latency_file", "state_file", "availability_file", "speed_file")
_REFUSED_CLUSTER_ATTRIBUTES = ("topology", "topo_parameters", *_TRACES)
_ROLES = ("", "master", "compute_node", "storage")  # Batsim 4.2.1's permissions.cpp: one role a host


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


@dataclass(eq=False)
class Zone:
    id: str
    routing: str  # one of ROUTINGS, or "Cluster" for a <cluster>
    parent: Zone | None
    line: int | None = None
    points: list[str] = field(default_factory=list)  # netpoints in declaration order: their ids
    children: list[Zone] = field(default_factory=list)
    table: dict[tuple[str, str], ZoneRoute] = field(default_factory=dict)  # declared (and symmetric) routes
    edges: list[tuple[str, str]] = field(default_factory=list)  # in the order they were added
    # stars (<cluster>, Vivaldi): per netpoint, its links up and down, and a loopback
    up: dict[str, list[Link]] = field(default_factory=dict)
    down: dict[str, list[Link]] = field(default_factory=dict)
    loopback: dict[str, list[Link]] = field(default_factory=dict)
    gateway: str | None = None
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)  # shortest-path tables, built on first use

    @property
    def base(self) -> bool:
        """Hosts and routers, no sub-zone: SimGrid's RoutingMode::base, the only level with loopbacks."""
        return not self.children


def parse_xml(text: str) -> tuple[ET.Element, dict[ET.Element, int]]:
    """The element tree of `text` and each element's line (expat's, as SimGrid reports lines)."""
    builder = ET.TreeBuilder()
    lines: dict[ET.Element, int] = {}
    parser = expat.ParserCreate()

    def start(tag: str, attributes: dict[str, str]) -> None:
        lines[builder.start(tag, attributes)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    stripped = text.lstrip()
    offset = text[:len(text) - len(stripped)].count("\n")  # lines before `<?xml`
    try:
        parser.Parse(stripped, True)
    except expat.ExpatError as exc:
        raise Unmodelled(f"malformed XML: {expat.errors.messages[exc.code]}", exc.lineno + offset) from None
    return builder.close(), {element: line + offset for element, line in lines.items()}


class Zones:
    """The zone tree of one platform file, its links and the roles Batsim gives its hosts."""

    def __init__(self, root: ET.Element, lines: dict[ET.Element, int]) -> None:
        self._lines = lines
        self.links: dict[str, Link | tuple[Link, Link]] = {}  # a split-duplex link: (up, down)
        self.link_lines: dict[str, int | None] = {}
        self.owner: dict[str, Zone] = {}  # netpoint -> the zone it belongs to
        self.zones: dict[str, Zone] = {}
        self.host_roles: dict[str, str | None] = {}  # None: no role prop
        self.host_lines: dict[str, int | None] = {}
        tops = [child for child in root if child.tag in ("zone", "AS")]
        for child in root:
            if child.tag not in ("zone", "AS", "config", "prop"):
                raise Unmodelled(f"<{child.tag}> at the platform's top level is not modelled by --timing batsim",
                                 lines.get(child))
        if len(tops) != 1:
            raise Unmodelled("--timing batsim models platforms with one top-level <zone>",
                             lines.get(tops[1] if len(tops) > 1 else root))
        self.root = self._zone(tops[0], None)

    def line(self, element: ET.Element) -> int | None:
        return self._lines.get(element)

    # ------------------------------------------------------------------ elements
    def _zone(self, element: ET.Element, parent: Zone | None) -> Zone:
        zone_id, routing = element.get("id", ""), element.get("routing", "")
        routing = next((known for known in ROUTINGS if known.lower() == routing.lower()), routing)
        if routing not in ROUTINGS:
            raise Unmodelled(f"zone {zone_id!r}: routing {routing!r} is not modelled by --timing batsim "
                             f"(modelled: {', '.join(ROUTINGS)})", self.line(element))
        zone = self._new_zone(zone_id, routing, parent, element)
        for child in element:
            try:
                self._child(child, zone)
            except Unmodelled as exc:
                exc.line = exc.line or self.line(child)
                raise
        if zone.children and (zone.points != [child.id for child in zone.children] or zone.routing == "Vivaldi"):
            raise Unmodelled(f"zone {zone_id!r} holds both sub-zones and hosts or routers (or is a Vivaldi zone "
                             "with sub-zones): not modelled by --timing batsim", self.line(element))
        return zone

    def _child(self, child: ET.Element, zone: Zone) -> None:
        tag = child.tag
        if tag in ("zone", "AS"):
            self._zone(child, zone)
        elif tag == "cluster":
            self._cluster(child, zone)
        elif tag == "host":
            self._host(child, zone)
        elif tag == "router":
            self._point(child.get("id", ""), zone)
            if zone.routing == "Vivaldi":
                zone.coordinates[child.get("id", "")] = self._coordinates(child)
        elif tag == "link":
            self._link(child)
        elif tag in ("route", "zoneRoute", "ASroute"):
            self._route(child, zone)
        elif tag in ("prop", "config") or (tag == "host_link" and zone.routing == "Vivaldi"):
            pass  # SimGrid reads host_links in Cluster zones only
        else:
            raise Unmodelled(f"<{tag}> is not modelled by --timing batsim")

    def _new_zone(self, zone_id: str, routing: str, parent: Zone | None, element: ET.Element) -> Zone:
        if zone_id in self.zones or zone_id in self.owner:
            raise Unmodelled(f"two netpoints named {zone_id!r}", self.line(element))
        zone = Zone(zone_id, routing, parent, self.line(element))
        self.zones[zone_id] = zone
        if parent is not None:
            parent.children.append(zone)
            self._point(zone_id, parent)
        return zone

    def _point(self, name: str, zone: Zone) -> None:
        if name in self.owner:
            raise Unmodelled(f"two netpoints named {name!r}")
        self.owner[name] = zone
        zone.points.append(name)

    @staticmethod
    def _coordinates(element: ET.Element) -> tuple[float, float, float]:
        parts = (element.get("coordinates") or "").split(" ")  # SimGrid splits on single spaces
        try:
            x, y, height = (float(part) for part in parts)
        except ValueError:
            raise Unmodelled(f"{element.get('id')!r} in a Vivaldi zone needs coordinates=\"x y height\"") from None
        return x, y, height

    def _host(self, element: ET.Element, zone: Zone) -> None:
        name = element.get("id", "")
        for attribute in _TRACES:
            if element.get(attribute):
                raise Unmodelled(f"host {name!r}: {attribute} is not modelled by --timing batsim")
        self._point(name, zone)
        self.host_roles[name] = self._role(element, name)
        self.host_lines[name] = self.line(element)
        if zone.routing == "Vivaldi":
            zone.coordinates[name] = self._coordinates(element)

    @staticmethod
    def _role(element: ET.Element, name: str) -> str | None:
        roles = [prop.get("value") or "" for prop in element.findall("prop") if prop.get("id") == "role"]
        role = roles[-1] if roles else None
        if role is not None and role not in _ROLES:
            raise Unmodelled(f"{name!r}: role {role!r}: Batsim 4.2.1 takes one of master, compute_node, storage")
        return role

    def _link(self, element: ET.Element) -> None:
        name = element.get("id", "")
        for attribute in _TRACES:
            if element.get(attribute):
                raise Unmodelled(f"link {name!r}: {attribute} is not modelled by --timing batsim")
        policy = element.get("sharing_policy", "SHARED")
        if policy not in ("SHARED", "FATPIPE", "SPLITDUPLEX", "FULLDUPLEX"):  # FULLDUPLEX: SPLITDUPLEX
            raise Unmodelled(f"link {name!r}: sharing_policy {policy!r} is not modelled by --timing batsim")
        bw, lat = bandwidth(element.get("bandwidth", "0")), latency(element.get("latency", "0"))
        names = [name] + ([f"{name}_UP", f"{name}_DOWN"] if policy in ("SPLITDUPLEX", "FULLDUPLEX") else [])
        if any(known in self.links for known in names):
            raise Unmodelled(f"two links named {name!r}")
        if len(names) == 3:
            up, down = Link(names[1], bw, lat), Link(names[2], bw, lat)
            self.links[name] = (up, down)
            self.links[up.name], self.links[down.name] = up, down  # each may also be named on its own
        else:
            self.links[name] = Link(name, bw, lat, fatpipe=policy == "FATPIPE")
        self.link_lines.update(dict.fromkeys(names, self.line(element)))

    def _directed(self, name: str, direction: str | None, where: str) -> Link:
        link = self.links.get(name)
        if link is None:
            raise Unmodelled(f"{where}: unknown link {name!r}")
        if isinstance(link, tuple):
            if direction not in ("UP", "DOWN"):
                raise Unmodelled(f"{where}: split-duplex link {name!r} needs direction=\"UP\" or \"DOWN\"")
            return link[0] if direction == "UP" else link[1]
        if direction not in (None, "NONE"):
            raise Unmodelled(f"{where}: direction={direction!r} on {name!r}, which is not split-duplex")
        return link

    def _route(self, element: ET.Element, zone: Zone) -> None:
        src, dst = element.get("src", ""), element.get("dst", "")
        where = f"route {src} -> {dst}"
        if any(c.tag != "link_ctn" for c in element):
            raise Unmodelled(f"{where}: only <link_ctn> is modelled inside a route")
        contents = [(c.get("id", ""), c.get("direction")) for c in element]
        if not contents:
            raise Unmodelled(f"{where}: an empty route is forbidden (SimGrid)")
        if zone.routing == "Vivaldi":
            raise Unmodelled(f"{where}: routes in a Vivaldi zone are not modelled")
        gw_src, gw_dst = element.get("gw_src"), element.get("gw_dst")
        between_zones = element.tag != "route"
        for end in (src, dst):  # RoutedZone::add_route_check_params
            if self.owner.get(end) is not zone or (end in self.zones) != between_zones:
                raise Unmodelled(f"{where}: {end!r} is not a {'sub-zone' if between_zones else 'netpoint'} of "
                                 f"zone {zone.id!r}")
        if between_zones:
            for gateway, side in ((gw_src, src), (gw_dst, dst)):
                if gateway is None or gateway in self.zones or side not in self._chain_ids(gateway):
                    raise Unmodelled(f"{where}: gateway {gateway!r} is no host or router of zone {side!r}")
            if gw_src == gw_dst:
                raise Unmodelled(f"{where}: a zoneRoute from {gw_src!r} to itself")
        elif gw_src or gw_dst:
            raise Unmodelled(f"{where}: a <route> with gateways is not modelled")
        forward = [self._directed(name, direction, where) for name, direction in contents]
        self._add(zone, src, dst, ZoneRoute(forward, gw_src, gw_dst))
        symmetrical = element.get("symmetrical", "YES") in ("YES", "yes")
        if element.get("symmetrical", "YES") not in ("YES", "yes", "NO", "no"):
            raise Unmodelled(f"{where}: symmetrical must be YES or NO")
        if symmetrical and src == dst:
            if zone.routing != "Full":  # SimGrid asserts (Floyd) or crashes (Dijkstra)
                raise Unmodelled(f"{where}: a route to itself needs symmetrical=\"NO\" in a {zone.routing} zone")
            symmetrical = False  # FullZone adds no reverse of a route to itself
        if symmetrical:
            flipped = {"UP": "DOWN", "DOWN": "UP"}
            backward = [self._directed(name, flipped.get(direction or "", direction), where)
                        for name, direction in reversed(contents)]
            self._add(zone, dst, src, ZoneRoute(backward, gw_dst, gw_src), symmetric=True)

    def _chain_ids(self, name: str) -> list[str]:
        """The zones holding netpoint `name`, from its own up to the root ([] if unknown)."""
        chain, zone = [], self.owner.get(name)
        while zone is not None:
            chain.append(zone.id)
            zone = zone.parent
        return chain

    @staticmethod
    def _add(zone: Zone, src: str, dst: str, route: ZoneRoute, symmetric: bool = False) -> None:
        if (src, dst) in zone.table:  # SimGrid's assertion: declare one of them symmetrical="NO"
            raise Unmodelled(f"zone {zone.id!r}: two routes from {src} to {dst}" +
                             (" (the other one is symmetrical)" if symmetric else ""))
        zone.table[(src, dst)] = route
        zone.edges.append((src, dst))

    def _cluster(self, element: ET.Element, parent: Zone) -> None:
        """A flat <cluster>: sg_platf_new_cluster_flat's star zone (private links, backbone, router)."""
        cluster_id = element.get("id", "")
        for attribute in _REFUSED_CLUSTER_ATTRIBUTES:
            if element.get(attribute) not in (None, "", "FLAT"):
                raise Unmodelled(f"cluster {cluster_id!r}: {attribute}={element.get(attribute)!r} is not modelled "
                                 "by --timing batsim")
        zone = self._new_zone(cluster_id, "Cluster", parent, element)
        # SHARED and FATPIPE private links are both made SHARED; FULLDUPLEX is SPLITDUPLEX
        split = element.get("sharing_policy", "SPLITDUPLEX") in ("SPLITDUPLEX", "FULLDUPLEX")
        bw, lat = bandwidth(element.get("bw", "0")), latency(element.get("lat", "0"))
        backbone: list[Link] = []
        bb_bw, bb_lat = bandwidth(element.get("bb_bw") or "0"), latency(element.get("bb_lat") or "0")
        if bb_bw > 0 or bb_lat > 0:
            backbone = [Link(f"{cluster_id}_backbone", bb_bw, bb_lat,
                             fatpipe=element.get("bb_sharing_policy", "SHARED") == "FATPIPE")]
        limiter = bandwidth(element.get("limiter_link") or "0")
        loopback_bw, loopback_lat = bandwidth(element.get("loopback_bw") or "0"), latency(element.get("loopback_lat")
                                                                                          or "0")
        prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
        role = self._role(element, cluster_id)
        numbers = radical_numbers(element.get("radical", ""))
        if numbers is None:
            raise Unmodelled(f"cluster {cluster_id!r}: bad radical {element.get('radical')!r}")
        for number in numbers:
            host = f"{prefix}{number}{suffix}"
            self._point(host, zone)
            self.host_roles[host] = role
            self.host_lines[host] = self.line(element)
            own = f"{cluster_id}_link_{number}"  # sg_platf_new_cluster_flat's names
            up, down = ((Link(f"{own}_UP", bw, lat), Link(f"{own}_DOWN", bw, lat)) if split
                        else (Link(own, bw, lat),) * 2)
            limiters = [Link(f"{own}_limiter", limiter, 0.0)] if limiter > 0 else []
            zone.up[host], zone.down[host] = [*limiters, up, *backbone], [*backbone, down, *limiters]
            if loopback_bw > 0 or loopback_lat > 0:
                zone.loopback[host] = [Link(f"{own}_loopback", loopback_bw, loopback_lat, fatpipe=True)]
            for link in (up, down, *limiters, *backbone, *zone.loopback.get(host, [])):
                self.link_lines[link.name] = self.line(element)
        router = element.get("router_id") or f"{prefix}{cluster_id}_router{suffix}"
        self._point(router, zone)  # no links of its own: host -> router is the host's way up
        zone.gateway = router
