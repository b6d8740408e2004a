"""SimGrid 3.32's routing: the links (and the latency) of the route between two hosts, as
`Host::route_to` gives them to the ptask_L07 model Batsim forces, on the zone tree read by
simgrid_zones.py.

A route between netpoints of one zone is that zone's local route (Full: the declared table, empty
when none was declared; Floyd and Dijkstra: shortest paths counted in links; `<cluster>` and
routing="Cluster": a star of private links and a backbone; Vivaldi: a star too (a peer's own links),
the coordinates' distance as latency; TORUS, FAT_TREE and DRAGONFLY clusters: their own routing,
simgrid_topologies.py). Between
zones, NetZoneImpl::get_global_route_with_netzones: the common ancestor's route between the two
sub-zones (a `zoneRoute` with gateways), then the route from the source to the first gateway, then
from the second gateway to the destination; latencies are summed in that order. Before either, a
bypass route of the common ancestor takes precedence (NetZoneImpl::get_bypass_route). A zone of hosts
adds SimGrid's loopback link (`__loopback__`, 10 GBps, no latency) for a host talking to itself when
no route says otherwise.
"""

from __future__ import annotations

import heapq
import math

from schedlab.engine.simgrid_links import LOOPBACK, Link, Unmodelled, Zone, ZoneRoute
from schedlab.engine.simgrid_zones import Zones


class Routing:
    """Routes between the hosts of one platform's zone tree."""

    def __init__(self, zones: Zones) -> None:
        self.zones = zones

    # ------------------------------------------------------------------ routes
    def route(self, src: str, dst: str) -> tuple[list[Link], float]:
        """The links from host `src` to host `dst` and their latency, summed as SimGrid sums it."""
        links: list[Link] = []
        total = [0.0]
        self._global(src, dst, links, total)
        return links, total[0]

    def _chain(self, name: str) -> list[Zone]:
        chain: list[Zone] = []
        zone: Zone | None = self.zones.owner[name]
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
        common = src_ancestor if src_ancestor is dst_ancestor else father
        assert common is not None
        if common.bypass and self._bypass(common, src, dst, path_src, path_dst, links, total):
            return
        if src_ancestor is dst_ancestor:
            links.extend(self._local(src_ancestor, src, dst, total).links)
            return
        assert father is not None
        between = self._local(father, src_ancestor.id, dst_ancestor.id, total)
        if between.gw_src is None or between.gw_dst is None:
            raise Unmodelled(f"no zoneRoute from {src_ancestor.id!r} to {dst_ancestor.id!r} (for {src} -> {dst})",
                             father.line)
        if src != between.gw_src:
            self._global(src, between.gw_src, links, total)
        links.extend(between.links)
        if between.gw_dst != dst:
            self._global(between.gw_dst, dst, links, total)

    def _bypass(self, common: Zone, src: str, dst: str, path_src: list[Zone], path_dst: list[Zone],
                links: list[Link], total: list[float]) -> bool:
        """NetZoneImpl::get_bypass_route, in the common ancestor: a bypass between `src` and `dst`
        when both are its own netpoints; else the first bypass between zones on their ways up
        (`path_src`, `path_dst`: their zone chains as `_global` trimmed them; pairs tried by growing
        depth), completed by routes to its gateways. Its latency comes in route order."""
        owner = self.zones.owner
        if owner[src] is common and owner[dst] is common:
            found = common.bypass.get((src, dst))
            if found is None:
                return False
            key = (src, dst)
        else:
            pairs = []  # (depth on src's side, on dst's): (0, d), (d, 0), (1, d), (d, 1), ..., (d, d)
            for depth in range(max(len(path_src), len(path_dst))):
                for shallower in range(depth):
                    pairs += [(shallower, depth), (depth, shallower)]
                pairs.append((depth, depth))
            keys = [(path_src[i].id, path_dst[j].id) for i, j in pairs if i < len(path_src) and j < len(path_dst)]
            first = next((key for key in keys if key in common.bypass), None)
            if first is None:
                return False
            key, found = first, common.bypass[first]
            if found.gw_src is None or found.gw_dst is None:  # SimGrid would route to a null gateway
                raise Unmodelled(f"zone {common.id!r}: bypass route {key[0]} -> {key[1]} without gateways",
                                 common.line)
        if src != key[0]:
            self._global(src, found.gw_src or "", links, total)
        links.extend(found.links)
        for link in found.links:
            total[0] += link.latency_s
        if dst != key[1]:
            self._global(found.gw_dst or "", dst, links, total)
        return True

    def _local(self, zone: Zone, src: str, dst: str, total: list[float]) -> ZoneRoute:
        if zone.topology is not None:  # no gateways: such a zone holds hosts only
            route = ZoneRoute(zone.topology.route(src, dst))
        elif zone.routing in ("Cluster", "Vivaldi"):
            route = self._star(zone, src, dst)
        elif zone.routing == "Full":
            found = zone.table.get((src, dst))
            route = found if found is not None else ZoneRoute([LOOPBACK] if src == dst and zone.base else [])
        elif zone.routing == "Floyd":
            route = self._floyd(zone, src, dst)
        else:
            route = self._dijkstra(zone, src, dst)
        for link in route.summed if route.summed is not None else route.links:
            total[0] += link.latency_s
        if zone.routing == "Vivaldi":
            (x1, y1, h1), (x2, y2, h2) = zone.coordinates[src], zone.coordinates[dst]
            # VivaldiZone's (a - b) * (a - b): ** goes through pow, which may differ in the last bit
            total[0] += (math.sqrt((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2)) + abs(h1) + abs(h2)) / 1000.0
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
        tables = zone.cache.get("floyd")
        if tables is None:
            tables = zone.cache["floyd"] = (*_floyd_tables(zone), {name: i for i, name in enumerate(zone.points)})
        predecessor, routes, index = tables
        stack = []
        current, start = index[dst], index[src]
        while True:
            previous = predecessor[start][current]
            if previous < 0:
                raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", zone.line)
            stack.append(routes[(previous, current)])
            current = previous
            if current == start:
                break
        if not zone.base and len(stack) > 1:
            raise Unmodelled(f"zone {zone.id!r}: multi-hop Floyd routes between sub-zones are not modelled",
                             zone.line)
        links = [link for route in reversed(stack) for link in route.links]
        return ZoneRoute(links, stack[-1].gw_src, stack[0].gw_dst)

    def _dijkstra(self, zone: Zone, src: str, dst: str) -> ZoneRoute:
        graph = zone.cache.get("dijkstra")
        if graph is None:
            graph = zone.cache["dijkstra"] = _dijkstra_graph(zone)
        nodes, out_edges, routes = graph
        if src not in nodes or dst not in nodes:
            raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", zone.line)
        source, target = nodes[src], nodes[dst]
        links: list[Link] = []
        summed: list[Link] = []
        if source == target:
            links = list(reversed(routes[(source, source)].links))
            summed = list(routes[(source, source)].links)
        predecessor, cost = _dijkstra_predecessors(out_edges, routes, source)
        if any(cost[v] == math.inf and any(u != v for u in out_edges[v]) for v in range(len(cost))):
            # SimGrid's unsigned costs wrap around from an unreachable node's edges: it misroutes
            raise Unmodelled(f"zone {zone.id!r}: some netpoint cannot be reached from {src} (SimGrid 3.32's "
                             "Dijkstra misroutes then)", zone.line)
        gw_src = first_gw = None
        v = target
        hops = 0
        while v != source:
            u = predecessor[v]
            if u is None:
                raise Unmodelled(f"zone {zone.id!r}: no route from {src} to {dst}", zone.line)
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
                             zone.line)
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
                           source: int) -> tuple[list[int | None], list[float]]:
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
    return predecessor, cost
