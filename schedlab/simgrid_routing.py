"""SimGrid 3.32's routing, read from a platform file: the links (and the latency) of the route
between two hosts, as `Host::route_to` gives them to the ptask_L07 model Batsim forces.

Zones nest; each netpoint (host, router, sub-zone) belongs to one zone and has an id there in
declaration order. A route between netpoints of one zone is that zone's local route (Full: the
declared table, empty when none was declared; Floyd and Dijkstra: shortest paths counted in links;
`<cluster>`: a star of private links and a backbone; Vivaldi: private links plus the coordinates'
distance). Between zones, NetZoneImpl::get_global_route_with_netzones: the common ancestor's route
between the two sub-zones (a `zoneRoute` with gateways), then the route from the source to the
first gateway, then from the second gateway to the destination; latencies are summed in that order.
A zone of hosts adds SimGrid's loopback link (`__loopback__`, 10 GBps, no latency) for a host
talking to itself when no route says otherwise.

What is outside this model raises `Unmodelled` with a needle to find the element's line.
"""

from __future__ import annotations

import heapq
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

LOOPBACK_BANDWIDTH = 10e9  # network/loopback-bw default (bytes/s)
LOOPBACK_LATENCY = 0.0  # network/loopback-lat default (s)
ROUTINGS = ("Full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi")  # SimGrid matches them in any case

_BANDWIDTH_UNITS = {
    "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
    "Bps": 1.0, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
    "Kibps": 1024 / 8, "Mibps": 1024 ** 2 / 8, "Gibps": 1024 ** 3 / 8, "Tibps": 1024 ** 4 / 8,
    "KiBps": 1024.0, "MiBps": 1024.0 ** 2, "GiBps": 1024.0 ** 3, "TiBps": 1024.0 ** 4,
}
_LATENCY_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "m": 60.0, "h": 3600.0,
                  "d": 86400.0, "w": 604800.0}
#: attributes that make SimGrid change a resource over time, or routes this model does not build
_TRACES = ("bandwidth_file", "latency_file", "state_file", "availability_file", "speed_file")
_REFUSED_CLUSTER_ATTRIBUTES = ("topology", "topo_parameters", *_TRACES)


class Unmodelled(Exception):
    """Something the model does not cover; `needle` finds its line in the file."""

    def __init__(self, message: str, needle: str = "") -> None:
        super().__init__(message)
        self.needle = needle


@dataclass(frozen=True, slots=True)
class Link:
    name: str
    bandwidth_bytes_per_s: float
    latency_s: float
    fatpipe: bool = False  # a FATPIPE link bounds a flow once however often the route crosses it


LOOPBACK = Link("__loopback__", LOOPBACK_BANDWIDTH, LOOPBACK_LATENCY, fatpipe=True)


def value(text: str, units: dict[str, float], default_unit: str, what: str) -> float:
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text)
    if not match or (match.group(2) or default_unit) not in units:
        raise Unmodelled(f"cannot read {what} {text!r}", text)
    return float(match.group(1)) * units[match.group(2) or default_unit]


def bandwidth(text: str) -> float:
    return value(text, _BANDWIDTH_UNITS, "Bps", "bandwidth")


def latency(text: str) -> float:
    return value(text, _LATENCY_UNITS, "s", "latency")


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
    routing: str
    parent: Zone | None
    points: list[str] = field(default_factory=list)  # netpoints in declaration order: their ids
    hosts: list[str] = field(default_factory=list)
    children: list[Zone] = field(default_factory=list)
    table: dict[tuple[str, str], ZoneRoute] = field(default_factory=dict)  # declared (and symmetric) routes
    edges: list[tuple[str, str]] = field(default_factory=list)  # Dijkstra: in the order they were added
    # stars (<cluster>, Vivaldi): per netpoint, its links up and down, and a loopback
    up: dict[str, list[Link]] = field(default_factory=dict)
    down: dict[str, list[Link]] = field(default_factory=dict)
    loopback: dict[str, list[Link]] = field(default_factory=dict)
    gateway: str | None = None
    coordinates: dict[str, tuple[float, float, float]] = field(default_factory=dict)

    @property
    def base(self) -> bool:
        """Hosts and routers, no sub-zone: SimGrid's RoutingMode::base, the only level with loopbacks."""
        return not self.children

    def add_point(self, name: str) -> None:
        self.points.append(name)


class Routing:
    """The zone tree of one platform file and the routes between its hosts."""

    def __init__(self, root: ET.Element) -> None:
        self.links: dict[str, Link | tuple[Link, Link]] = {}  # a split-duplex link: (up, down)
        self.owner: dict[str, Zone] = {}  # netpoint -> the zone it belongs to
        self.zones: dict[str, Zone] = {}
        self.host_roles: dict[str, set[str]] = {}
        tops = [child for child in root if child.tag in ("zone", "AS")]
        for child in root:
            if child.tag not in ("zone", "AS", "config", "prop"):
                raise Unmodelled(f"<{child.tag}> at the platform's top level is not modelled by --timing batsim",
                                 f"<{child.tag}")
        if len(tops) != 1:
            raise Unmodelled("--timing batsim models platforms with one top-level <zone>", "<zone")
        self.root = self._zone(tops[0], None)

    # ------------------------------------------------------------------ reading
    def _zone(self, element: ET.Element, parent: Zone | None) -> Zone:
        zone_id, routing = element.get("id", ""), element.get("routing", "")
        routing = next((known for known in ROUTINGS if known.lower() == routing.lower()), routing)
        if routing not in ROUTINGS:
            raise Unmodelled(f"zone {zone_id!r}: routing {routing!r} is not modelled by --timing batsim "
                             f"(modelled: {', '.join(ROUTINGS)})", f'routing="{routing}"')
        zone = self._new_zone(zone_id, routing, parent)
        for child in element:
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
                continue  # SimGrid reads host_links in Cluster zones only
            else:
                raise Unmodelled(f"<{tag}> is not modelled by --timing batsim", f"<{tag}")
        if zone.children and zone.routing == "Vivaldi":
            raise Unmodelled(f"Vivaldi zone {zone_id!r} with sub-zones is not modelled by --timing batsim",
                             f'id="{zone_id}"')
        if zone.children and zone.hosts:
            raise Unmodelled(f"zone {zone_id!r} holds both hosts and sub-zones: not modelled by --timing batsim",
                             f'id="{zone_id}"')
        return zone

    def _new_zone(self, zone_id: str, routing: str, parent: Zone | None) -> Zone:
        if zone_id in self.zones or zone_id in self.owner:
            raise Unmodelled(f"two netpoints named {zone_id!r}", f'id="{zone_id}"')
        zone = Zone(zone_id, routing, parent)
        self.zones[zone_id] = zone
        if parent is not None:
            parent.children.append(zone)
            self._point(zone_id, parent)
        return zone

    def _point(self, name: str, zone: Zone) -> None:
        if name in self.owner:
            raise Unmodelled(f"two netpoints named {name!r}", f'id="{name}"')
        self.owner[name] = zone
        zone.add_point(name)

    @staticmethod
    def _coordinates(element: ET.Element) -> tuple[float, float, float]:
        text = element.get("coordinates")
        parts = (text or "").split()
        if len(parts) != 3:
            raise Unmodelled(f"{element.get('id')!r} in a Vivaldi zone needs coordinates=\"x y height\"",
                             f'id="{element.get("id")}"')
        return float(parts[0]), float(parts[1]), float(parts[2])

    def _host(self, element: ET.Element, zone: Zone) -> None:
        from schedlab.platform import host_roles

        name = element.get("id", "")
        for attribute in _TRACES:
            if element.get(attribute):
                raise Unmodelled(f"host {name!r}: {attribute} is not modelled by --timing batsim", f"{attribute}=")
        self._point(name, zone)
        zone.hosts.append(name)
        self.host_roles[name] = host_roles(element)
        if zone.routing == "Vivaldi":
            zone.coordinates[name] = self._coordinates(element)

    def _link(self, element: ET.Element) -> None:
        name = element.get("id", "")
        for attribute in _TRACES:
            if element.get(attribute):
                raise Unmodelled(f"link {name!r}: {attribute} is not modelled by --timing batsim", f"{attribute}=")
        policy = element.get("sharing_policy", "SHARED")
        if policy not in ("SHARED", "FATPIPE", "SPLITDUPLEX"):
            raise Unmodelled(f"link {name!r}: sharing_policy {policy!r} is not modelled by --timing batsim",
                             f'id="{name}"')
        bw, lat = bandwidth(element.get("bandwidth", "0")), latency(element.get("latency", "0"))
        if name in self.links:
            raise Unmodelled(f"two links named {name!r}", f'id="{name}"')
        if policy == "SPLITDUPLEX":
            up, down = Link(f"{name}_UP", bw, lat), Link(f"{name}_DOWN", bw, lat)
            self.links[name] = (up, down)
            self.links[up.name], self.links[down.name] = up, down  # each may also be named on its own
        else:
            self.links[name] = Link(name, bw, lat, fatpipe=policy == "FATPIPE")

    def _directed(self, name: str, direction: str | None, where: str) -> Link:
        link = self.links.get(name)
        if link is None:
            raise Unmodelled(f"{where}: unknown link {name!r}", f'id="{name}"')
        if isinstance(link, tuple):
            if direction not in ("UP", "DOWN"):
                raise Unmodelled(f"{where}: split-duplex link {name!r} needs direction=\"UP\" or \"DOWN\"",
                                 f'id="{name}"')
            return link[0] if direction == "UP" else link[1]
        return link

    def _route(self, element: ET.Element, zone: Zone) -> None:
        src, dst = element.get("src", ""), element.get("dst", "")
        where = f"route {src} -> {dst}"
        contents = [(c.get("id", ""), c.get("direction")) for c in element if c.tag == "link_ctn"]
        if any(c.tag != "link_ctn" for c in element):
            raise Unmodelled(f"{where}: only <link_ctn> is modelled inside a route", f'src="{src}"')
        forward = [self._directed(name, direction, where) for name, direction in contents]
        gw_src, gw_dst = element.get("gw_src"), element.get("gw_dst")
        if element.tag == "route" and (gw_src or gw_dst):
            raise Unmodelled(f"{where}: a <route> with gateways is not modelled", f'src="{src}"')
        if element.tag != "route" and not (gw_src and gw_dst):
            raise Unmodelled(f"{where}: a zoneRoute needs gw_src and gw_dst", f'src="{src}"')
        if zone.routing == "Vivaldi":
            raise Unmodelled(f"{where}: routes in a Vivaldi zone are not modelled", f'src="{src}"')
        for end in (src, dst):  # SimGrid's add_route_check_params: the ends are this zone's
            if self.owner.get(end) is not zone:
                raise Unmodelled(f"{where}: {end!r} is not a netpoint of zone {zone.id!r}", f'src="{src}"')
        for gateway in (gw_src, gw_dst):
            if gateway is not None and gateway not in self.owner:
                raise Unmodelled(f"{where}: unknown gateway {gateway!r}", f'"{gateway}"')
        self._add(zone, src, dst, ZoneRoute(forward, gw_src, gw_dst))
        symmetrical = element.get("symmetrical", "YES").upper() in ("YES", "TRUE")
        if symmetrical and src == dst:
            if zone.routing != "Full":  # SimGrid asserts (Floyd) or crashes (Dijkstra)
                raise Unmodelled(f"{where}: a route to itself needs symmetrical=\"NO\" in a {zone.routing} zone",
                                 f'src="{src}"')
            symmetrical = False  # FullZone adds no reverse of a route to itself
        if symmetrical:
            flipped = {"UP": "DOWN", "DOWN": "UP"}
            backward = [self._directed(name, flipped.get(direction or "", direction), where)
                        for name, direction in reversed(contents)]
            self._add(zone, dst, src, ZoneRoute(backward, gw_dst, gw_src), symmetric=True)

    @staticmethod
    def _add(zone: Zone, src: str, dst: str, route: ZoneRoute, symmetric: bool = False) -> None:
        if (src, dst) in zone.table:  # SimGrid's assertion: declare one of them symmetrical="NO"
            raise Unmodelled(f"zone {zone.id!r}: two routes from {src} to {dst}" +
                             (" (the other one is symmetrical)" if symmetric else ""), f'src="{dst}"')
        zone.table[(src, dst)] = route
        zone.edges.append((src, dst))

    def _cluster(self, element: ET.Element, parent: Zone) -> None:
        """A flat <cluster>: SimGrid builds a star zone (private links, backbone, router)."""
        from schedlab.platform import host_roles

        cluster_id = element.get("id", "")
        for attribute in _REFUSED_CLUSTER_ATTRIBUTES:
            if element.get(attribute) not in (None, "", "FLAT"):
                raise Unmodelled(f"cluster {cluster_id!r}: {attribute}={element.get(attribute)!r} is not modelled "
                                 "by --timing batsim", f'{attribute}="')
        zone = self._new_zone(cluster_id, "Cluster", parent)
        policy = element.get("sharing_policy", "SPLITDUPLEX")
        bw, lat = bandwidth(element.get("bw", "0")), latency(element.get("lat", "0"))
        backbone: list[Link] = []
        if element.get("bb_bw") is not None or element.get("bb_lat") is not None:
            link = Link(f"{cluster_id}_backbone", bandwidth(element.get("bb_bw") or "0"),
                        latency(element.get("bb_lat") or "0"),
                        fatpipe=element.get("bb_sharing_policy", "SHARED") == "FATPIPE")
            if link.bandwidth_bytes_per_s > 0 or link.latency_s > 0:
                backbone = [link]
        limiter = element.get("limiter_link")
        loopback_bw, loopback_lat = element.get("loopback_bw"), element.get("loopback_lat")
        prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
        roles = host_roles(element)
        for part in element.get("radical", "").split(","):
            first, _, last = part.partition("-")
            for number in range(int(first), int(last or first) + 1):
                host = f"{prefix}{number}{suffix}"
                self._point(host, zone)
                zone.hosts.append(host)
                self.host_roles[host] = roles
                own = f"{cluster_id}_link_{number}"  # sg_platf_new_cluster_flat's names
                if policy == "SPLITDUPLEX":
                    up, down = Link(f"{own}_UP", bw, lat), Link(f"{own}_DOWN", bw, lat)
                else:
                    up = down = Link(own, bw, lat, fatpipe=policy == "FATPIPE")
                limiters = [Link(f"{own}_limiter", bandwidth(limiter), 0.0)] if limiter else []
                zone.up[host], zone.down[host] = [*limiters, up, *backbone], [*backbone, down, *limiters]
                if loopback_bw is not None or loopback_lat is not None:
                    zone.loopback[host] = [Link(f"{own}_loopback", bandwidth(loopback_bw or "0"),
                                                latency(loopback_lat or "0"), fatpipe=True)]
        router = element.get("router_id") or f"{prefix}{cluster_id}_router{suffix}"
        self._point(router, zone)  # no links of its own: host -> router is the host's way up
        zone.gateway = router

    # ------------------------------------------------------------------ routes
    def route(self, src: str, dst: str) -> tuple[list[Link], float]:
        """The links from host `src` to host `dst` and their latency, summed as SimGrid sums it."""
        links: list[Link] = []
        total = [0.0]
        self._global(src, dst, links, total)
        return links, total[0]

    def _chain(self, name: str) -> list[Zone]:
        chain: list[Zone] = []
        zone: Zone | None = self.owner[name]
        while zone is not None:
            chain.append(zone)
            zone = zone.parent
        return chain  # from the netpoint's zone up to the root

    def _global(self, src: str, dst: str, links: list[Link], total: list[float]) -> None:
        path_src, path_dst = self._chain(src), self._chain(dst)
        father: Zone | None = None
        while len(path_src) > 1 and len(path_dst) > 1 and path_src[-1] is path_dst[-1]:
            father = path_src.pop()
            path_dst.pop()
        src_ancestor, dst_ancestor = path_src[-1], path_dst[-1]
        if src_ancestor is dst_ancestor:
            links.extend(self._local(src_ancestor, src, dst, total).links)
            return
        assert father is not None
        between = self._local(father, src_ancestor.id, dst_ancestor.id, total)
        if between.gw_src is None or between.gw_dst is None:
            raise Unmodelled(f"no zoneRoute from {src_ancestor.id!r} to {dst_ancestor.id!r} (for {src} -> {dst})",
                             "<zone")
        if src != between.gw_src:
            self._global(src, between.gw_src, links, total)
        links.extend(between.links)
        if between.gw_dst != dst:
            self._global(between.gw_dst, dst, links, total)

    def _local(self, zone: Zone, src: str, dst: str, total: list[float]) -> ZoneRoute:
        if zone.routing in ("Cluster", "Vivaldi"):
            route = self._star(zone, src, dst)
        elif zone.routing == "Full":
            route = zone.table.get((src, dst))
            if route is None:
                route = ZoneRoute([LOOPBACK] if src == dst and zone.base else [])
        elif zone.routing == "Floyd":
            route = self._floyd(zone, src, dst)
        else:
            route = self._dijkstra(zone, src, dst)
        for link in route.summed if route.summed is not None else route.links:
            total[0] += link.latency_s
        if zone.routing == "Vivaldi":
            (x1, y1, h1), (x2, y2, h2) = zone.coordinates[src], zone.coordinates[dst]
            total[0] += (math.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2) + abs(h1) + abs(h2)) / 1000.0  # ms
        return route

    @staticmethod
    def _star(zone: Zone, src: str, dst: str) -> ZoneRoute:
        if src == dst and src in zone.loopback:
            return ZoneRoute(list(zone.loopback[src]))
        seen: set[str] = set()
        links = []
        for link in zone.up.get(src, []) + zone.down.get(dst, []):
            if link.name not in seen:  # StarZone adds each link once (the backbone)
                seen.add(link.name)
                links.append(link)
        return ZoneRoute(links, zone.gateway, zone.gateway)

    def _floyd(self, zone: Zone, src: str, dst: str) -> ZoneRoute:
        tables = getattr(zone, "_floyd", None)
        if tables is None:
            tables = zone._floyd = _floyd_tables(zone)  # type: ignore[attr-defined]
        index = {name: i for i, name in enumerate(zone.points)}
        predecessor, routes = tables
        stack = []
        current, start = index[dst], index[src]
        while True:
            previous = predecessor[start][current]
            if previous < 0:
                raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", f'id="{zone.id}"')
            stack.append(routes[(previous, current)])
            current = previous
            if current == start:
                break
        if not zone.base and len(stack) > 1:
            raise Unmodelled(f"zone {zone.id!r}: multi-hop Floyd routes between sub-zones are not modelled",
                             f'id="{zone.id}"')
        links = [link for route in reversed(stack) for link in route.links]
        return ZoneRoute(links, stack[-1].gw_src, stack[0].gw_dst)

    def _dijkstra(self, zone: Zone, src: str, dst: str) -> ZoneRoute:
        graph = getattr(zone, "_graph", None)
        if graph is None:
            graph = zone._graph = _dijkstra_graph(zone)  # type: ignore[attr-defined]
        nodes, out_edges, routes = graph
        if src not in nodes or dst not in nodes:
            raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", f'id="{zone.id}"')
        source, target = nodes[src], nodes[dst]
        links: list[Link] = []
        summed: list[Link] = []
        if source == target:
            links = list(reversed(routes[(source, source)].links))
            summed = list(routes[(source, source)].links)
        predecessor = _dijkstra_predecessors(out_edges, routes, source)
        gw_src = first_gw = None
        v = target
        hops = 0
        while v != source:
            u = predecessor[v]
            if u is None:
                raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", f'id="{zone.id}"')
            route = routes[(u, v)]
            gw_src = route.gw_src
            if v == target:
                first_gw = route.gw_dst
            links = list(reversed(route.links)) + links  # each link inserted at the front
            summed += route.links
            hops += 1
            v = u
        if not zone.base and hops > 1:
            raise Unmodelled(f"zone {zone.id!r}: multi-hop Dijkstra routes between sub-zones are not modelled",
                             f'id="{zone.id}"')
        return ZoneRoute(links, gw_src, first_gw, summed)


def _floyd_tables(zone: Zone) -> tuple[list[list[int]], dict[tuple[int, int], ZoneRoute]]:
    """FloydZone::do_seal: integer costs in links, predecessors; the loopback on the diagonal of a
    zone of hosts. SimGrid's triple loop (intermediate outermost, strict improvements) done a row
    of intermediates at a time: row and column c do not change while c is the intermediate."""
    import numpy as np

    size = len(zone.points)
    index = {name: i for i, name in enumerate(zone.points)}
    never = np.iinfo(np.int64).max // 4  # SimGrid's ULONG_MAX: no route yet
    cost = np.full((size, size), never, dtype=np.int64)
    predecessor = np.full((size, size), -1, dtype=np.int64)
    routes: dict[tuple[int, int], ZoneRoute] = {}
    for (src, dst), route in zone.table.items():
        a, b = index[src], index[dst]
        routes[(a, b)] = route
        predecessor[a, b] = a
        cost[a, b] = len(route.links)
    if zone.base:
        for i in range(size):
            if (i, i) not in routes:
                routes[(i, i)] = ZoneRoute([LOOPBACK])
                predecessor[i, i] = i
                cost[i, i] = 1
    for c in range(size):
        through = cost[:, c, None] + cost[None, c, :]
        better = ((cost[:, c, None] < never) & (cost[None, c, :] < never)
                  & ((cost == never) | (through < cost)))
        cost = np.where(better, through, cost)
        predecessor = np.where(better, predecessor[None, c, :], predecessor)
    return predecessor.tolist(), routes


def _dijkstra_graph(zone: Zone) -> tuple[dict[str, int], list[list[int]], dict[tuple[int, int], ZoneRoute]]:
    """DijkstraZone's graph: nodes in the order routes first name them, out-edges in insertion
    order, a loopback self-edge on each node of a zone of hosts that has none."""
    nodes: dict[str, int] = {}
    out_edges: list[list[int]] = []
    routes: dict[tuple[int, int], ZoneRoute] = {}
    for src, dst in zone.edges:
        for name in (src, dst):
            if name not in nodes:
                nodes[name] = len(nodes)
                out_edges.append([])
        a, b = nodes[src], nodes[dst]
        out_edges[a].append(b)
        routes[(a, b)] = zone.table[(src, dst)]
    if zone.base:
        for a in range(len(out_edges)):
            if a not in out_edges[a]:
                out_edges[a].append(a)
                routes[(a, a)] = ZoneRoute([LOOPBACK])
    return nodes, out_edges, routes


def _dijkstra_predecessors(out_edges: list[list[int]], routes: dict[tuple[int, int], ZoneRoute],
                           source: int) -> list[int | None]:
    """Costs in links; a (cost, node) heap, and a node relaxed only by a strictly cheaper path."""
    size = len(out_edges)
    cost = [math.inf] * size
    cost[source] = 0.0
    predecessor: list[int | None] = [None] * size
    queue = [(cost[i], i) for i in range(size)]
    heapq.heapify(queue)
    while queue:
        _, v = heapq.heappop(queue)
        for u in out_edges[v]:
            step = float(len(routes[(v, u)].links))
            if step + cost[v] < cost[u]:
                predecessor[u] = v
                cost[u] = step + cost[v]
                heapq.heappush(queue, (cost[u], u))
    return predecessor
