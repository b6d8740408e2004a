"""A SimGrid 3.32 platform file read into its zone tree, as SimGrid's parser (sg_platf.cpp,
surfxml_sax_cb.cpp) builds it, for the routes of Batsim's messages (simgrid_routing.py).

Each netpoint (host, router, peer, sub-zone) belongs to one zone, in declaration order; routes and
bypass routes are kept per zone as declared (routes reversed when symmetrical). Star zones built by
the parser (<cluster>, routing="Cluster" with cabinets) are in simgrid_clusters.py, TORUS, FAT_TREE
and DRAGONFLY clusters in simgrid_topologies.py, link profiles in simgrid_profiles.py. What SimGrid
refuses, or what this model does not cover, raises `Unmodelled` with the line of the element at fault.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from xml.parsers import expat

from schedlab.engine.simgrid_clusters import ClusterParts, flat_cluster, new_link, populate_cluster_zone
from schedlab.engine.simgrid_links import LOOPBACK, Link, Unmodelled, Zone, ZoneRoute, bandwidth, latency
from schedlab.engine.simgrid_profiles import ProfileError, constant_value, find_file
from schedlab.engine.simgrid_topologies import topology_cluster
from schedlab.platform import TOPOLOGIES

__all__ = ["LOOPBACK", "Link", "Unmodelled", "Zone", "ZoneRoute", "Zones", "bandwidth", "latency", "parse_xml"]

ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi", "Cluster")  # SimGrid matches them in any case
#: attributes that make SimGrid change a resource over time
_TRACES = ("bandwidth_file", "latency_file", "state_file", "availability_file", "speed_file")
_ROLES = ("", "master", "compute_node", "storage")  # Batsim 4.2.1's permissions.cpp: one role a host


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

    def __init__(self, root: ET.Element, lines: dict[ET.Element, int], directory: Path | None = None) -> None:
        self._lines = lines
        self.directory = directory  # the platform file's, where SimGrid also looks for profiles
        self.profiles: set[str] = set()  # SimGrid's profile names (file names as written, <trace> ids)
        self.parts = ClusterParts()  # of the routing="Cluster" zone being read
        self.links: dict[str, Link | tuple[Link, Link]] = {}  # a split-duplex link: (up, down)
        self.link_lines: dict[str, int | None] = {}
        self.owner: dict[str, Zone] = {}  # netpoint -> the zone it belongs to
        self.zones: dict[str, Zone] = {}
        self.host_roles: dict[str, str | None] = {}  # None: no role prop
        self.host_lines: dict[str, int | None] = {}
        self.statics: dict[str, int] = {}  # SimGrid's function-local statics (simgrid_topologies.py)
        tops = [child for child in root if child.tag in ("zone", "AS")]
        for child in root:
            if child.tag not in ("zone", "AS", "config", "prop", "trace", "trace_connect"):
                raise Unmodelled(f"<{child.tag}> at the platform's top level is not modelled by --timing batsim",
                                 lines.get(child))
        if len(tops) != 1:
            raise Unmodelled("--timing batsim models platforms with one top-level <zone>",
                             lines.get(tops[1] if len(tops) > 1 else root))
        for child in root:  # in the file's order: a <trace> must come before what names it
            try:
                if child.tag in ("trace", "trace_connect"):
                    self._trace(child)
                elif child is tops[0]:
                    self.root = self._zone(child, None)
            except Unmodelled as exc:
                exc.line = exc.line or self.line(child)
                raise

    def line(self, element: ET.Element) -> int | None:
        return self._lines.get(element)

    # ------------------------------------------------------------------ elements
    def _zone(self, element: ET.Element, parent: Zone | None) -> Zone:
        zone_id, routing = element.get("id", ""), element.get("routing", "")
        routing = next((known for known in ROUTINGS if known.lower() == routing.lower()), routing)
        if routing not in ROUTINGS:
            raise Unmodelled(f"zone {zone_id!r}: routing {routing!r} is not modelled by --timing batsim "
                             f"(modelled: {', '.join(ROUTINGS)})", self.line(element))
        zone = self.new_zone(zone_id, routing, parent, element)
        for child in element:
            try:
                self._child(child, zone)
            except Unmodelled as exc:
                exc.line = exc.line or self.line(child)
                raise
        if zone.children and (zone.points != [child.id for child in zone.children] or zone.routing == "Vivaldi"):
            raise Unmodelled(f"zone {zone_id!r} holds both sub-zones and hosts or routers (or is a Vivaldi zone "
                             "with sub-zones): not modelled by --timing batsim", self.line(element))
        if zone.routing == "Cluster":  # sg_platf_new_zone_seal
            if zone.children:
                raise Unmodelled(f"zone {zone_id!r}: a routing=\"Cluster\" zone with sub-zones is not modelled by "
                                 "--timing batsim", self.line(element))
            populate_cluster_zone(self, zone, self.parts)
            self.parts = ClusterParts()
        return zone

    def _child(self, child: ET.Element, zone: Zone) -> None:
        tag = child.tag
        if (tag == "peer" and len(zone.peers) < len(zone.points)) or (tag in ("host", "router") and zone.peers):
            raise Unmodelled(f"zone {zone.id!r} holds both peers and hosts or routers: SimGrid's parser refuses "
                             f"<{tag}> there (the DTD puts <peer> with sub-zones, <host> and <router> without)")
        if tag in ("zone", "AS"):
            self._zone(child, zone)
        elif tag == "cluster" and child.get("topology") in TOPOLOGIES:
            topology_cluster(self, child, zone)
        elif tag == "cluster":
            if child.get("topology") not in (None, "FLAT"):  # the DTD's choices
                raise Unmodelled(f"cluster {child.get('id', '')!r}: topology {child.get('topology')!r} is none of "
                                 f"FLAT, {', '.join(TOPOLOGIES)} (SimGrid's parser refuses it)")
            flat_cluster(self, child, zone)
        elif tag == "host":
            self._host(child, zone)
        elif tag == "peer":
            self._peer(child, zone)
        elif tag == "router":
            self.add_point(child.get("id", ""), zone)
            if zone.routing == "Vivaldi":
                zone.coordinates[child.get("id", "")] = self._coordinates(child)
        elif tag == "link":
            self._link(child)
        elif tag in ("bypassRoute", "bypassZoneRoute", "bypassASroute"):
            self._bypass(child, zone)
        elif tag in ("route", "zoneRoute", "ASroute"):
            self._route(child, zone)
        elif tag in ("trace", "trace_connect"):
            self._trace(child)
        elif tag == "host_link":  # wherever it is, SimGrid keeps it for the next routing="Cluster" zone it seals
            self.parts.host_links.append(child)
        elif tag in ("cabinet", "backbone") and zone.routing == "Cluster":
            if tag == "backbone":
                self.parts.backbone = child
            else:
                self.parts.cabinets.append(child)
        elif tag in ("cabinet", "backbone"):
            raise Unmodelled(f"<{tag}> outside a routing=\"Cluster\" zone: SimGrid keeps it for the next such zone "
                             "it seals, or drops it; not modelled by --timing batsim")
        elif tag in ("prop", "config"):
            pass  # a zone's props change no route; <config> is checked before (batsim_network)
        else:
            raise Unmodelled(f"<{tag}> is not modelled by --timing batsim")

    def new_zone(self, zone_id: str, routing: str, parent: Zone | None, element: ET.Element) -> Zone:
        if zone_id in self.zones or zone_id in self.owner:
            raise Unmodelled(f"two netpoints named {zone_id!r}", self.line(element))
        zone = Zone(zone_id, routing, parent, self.line(element))
        self.zones[zone_id] = zone
        if parent is not None:
            parent.children.append(zone)
            self.add_point(zone_id, parent)
        return zone

    def add_point(self, name: str, zone: Zone) -> None:
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
        self.add_point(name, zone)
        self.host_roles[name] = self.role(element, name)
        self.host_lines[name] = self.line(element)
        if zone.routing == "Vivaldi":
            zone.coordinates[name] = self._coordinates(element)

    def _peer(self, element: ET.Element, zone: Zone) -> None:
        """sg_platf_new_peer: a host with coordinates and its own links, link_ID_UP (bw_out) on its
        way out and link_ID_DOWN (bw_in) on its way in; shared, no latency (`lat` is ignored)."""
        name = element.get("id", "")
        if zone.routing != "Vivaldi":  # SimGrid's assertion
            raise Unmodelled(f"peer {name!r}: <peer> can only be used in Vivaldi zones (SimGrid)")
        for attribute in _TRACES:
            if element.get(attribute):
                raise Unmodelled(f"peer {name!r}: {attribute} is not modelled by --timing batsim")
        up = Link(f"link_{name}_UP", bandwidth(element.get("bw_out", "")), 0.0)
        down = Link(f"link_{name}_DOWN", bandwidth(element.get("bw_in", "")), 0.0)
        for link in (up, down):
            new_link(self, link, element)
        self.add_point(name, zone)
        zone.peers.add(name)
        zone.coordinates[name] = self._coordinates(element)
        zone.up[name], zone.down[name] = [up], [down]
        self.host_roles[name] = None  # a <peer> has no props: Batsim makes it a compute node
        self.host_lines[name] = self.line(element)

    @staticmethod
    def role(element: ET.Element, name: str) -> str | None:
        roles = [prop.get("value") or "" for prop in element.findall("prop") if prop.get("id") == "role"]
        role = roles[-1] if roles else None
        if role is not None and role not in _ROLES:
            raise Unmodelled(f"{name!r}: role {role!r}: Batsim 4.2.1 takes one of master, compute_node, storage")
        return role

    def _trace(self, element: ET.Element) -> None:
        """A <trace> only defines a profile; <trace_connect> gives it to a resource after the whole
        file is read, which SimGrid 3.32 refuses for links (sealed by then) and we do not model for hosts."""
        if element.tag == "trace_connect":
            kind = element.get("kind", "HOST_AVAIL")
            reason = (f"SimGrid 3.32 aborts: 'Cannot set a {kind.lower()} profile once the Link is sealed'"
                      if kind in ("LATENCY", "BANDWIDTH") else "not modelled by --timing batsim")
            raise Unmodelled(f"<trace_connect kind={kind!r}>: {reason}")
        self._profile_name(element.get("file") or element.get("id") or "")

    def _profile_name(self, name: str) -> None:
        if name in self.profiles:  # Profile's constructor asserts
            raise Unmodelled(f"SimGrid 3.32 aborts on a second profile named {name!r} ('Refusing to define trace "
                             f"{name} twice'): one file for two links, or a <trace> id equal to a file name")
        self.profiles.add(name)

    def _traced(self, element: ET.Element, attribute: str, own: float) -> float:
        """The link's `attribute` (bandwidth or latency) for the whole run, given its profile file."""
        name = element.get(f"{attribute}_file") or ""
        if not name:
            return own
        self._profile_name(name)
        try:
            path = find_file(name, self.directory)
            return constant_value(path.read_text(encoding="utf-8", errors="replace"), own, attribute)
        except ProfileError as exc:
            raise Unmodelled(f"link {element.get('id', '')!r}: {attribute}_file {name!r}: {exc}") from None

    def _link(self, element: ET.Element) -> None:
        name = element.get("id", "")
        for attribute in ("state_file", "availability_file", "speed_file"):
            if element.get(attribute):
                raise Unmodelled(f"link {name!r}: {attribute} is not modelled by --timing batsim")
        policy = element.get("sharing_policy", "SHARED")
        if policy not in ("SHARED", "FATPIPE", "SPLITDUPLEX", "FULLDUPLEX"):  # FULLDUPLEX: SPLITDUPLEX
            raise Unmodelled(f"link {name!r}: sharing_policy {policy!r} is not modelled by --timing batsim")
        bw = self._traced(element, "bandwidth", bandwidth(element.get("bandwidth", "0")))
        if element.get("latency") is None:  # the DTD's default "0" does not reach SimGrid 3.32's parser
            raise Unmodelled(f"link {name!r} has no latency: SimGrid 3.32 cannot parse it ('cannot parse number')")
        lat = self._traced(element, "latency", latency(element.get("latency", "")))
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
        if zone.routing == "Cluster":  # StarZone takes a netpoint's route to itself, nothing else between two
            raise Unmodelled(f"{where}: a <route> in a routing=\"Cluster\" zone is not modelled by --timing batsim")
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

    def _bypass(self, element: ET.Element, zone: Zone) -> None:
        """NetZoneImpl::add_bypass_route, which every kind of zone inherits: kept in the zone that
        declares it, one way, between any two netpoints (SimGrid matches it only between netpoints of
        that zone, or between zones below it: simgrid_routing.py); not empty, one per pair."""
        src, dst = element.get("src", ""), element.get("dst", "")
        where = f"{element.tag} {src} -> {dst}"
        if any(c.tag != "link_ctn" for c in element):
            raise Unmodelled(f"{where}: only <link_ctn> is modelled inside a route")
        if (element.tag == "bypassRoute") == bool(zone.children):  # the DTD's two kinds of zones
            raise Unmodelled(f"{where}: SimGrid's parser takes <bypassRoute> in zones of hosts, <bypassZoneRoute> "
                             "in zones of zones")
        gateways = (element.get("gw_src"), element.get("gw_dst")) if element.tag != "bypassRoute" else (None, None)
        for end in (src, dst, *(gateway for gateway in gateways if element.tag != "bypassRoute")):
            if end not in self.owner:  # the parser's check, when it reads the start tag
                raise Unmodelled(f"{where}: {end!r} does not name a netpoint declared before (SimGrid)")
        if element.tag != "bypassRoute":
            for gateway, side in zip(gateways, (src, dst), strict=True):
                if gateway in self.zones or side not in self._chain_ids(gateway or ""):
                    raise Unmodelled(f"{where}: gateway {gateway!r} is no host or router of {side!r}: not modelled "
                                     "by --timing batsim")
        if not len(element):
            raise Unmodelled(f"{where}: an empty bypass route is forbidden (SimGrid)")
        if (src, dst) in zone.bypass:
            raise Unmodelled(f"{where}: a second bypass route between them (SimGrid refuses it)")
        links = [self._directed(c.get("id", ""), c.get("direction"), where) for c in element]
        zone.bypass[(src, dst)] = ZoneRoute(links, *gateways)

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
