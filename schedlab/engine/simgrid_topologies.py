"""SimGrid 3.32's clusters with a topology: `<cluster topology="TORUS|FAT_TREE|DRAGONFLY">`, which
sg_platf_new_cluster_hierarchical builds as a TorusZone, FatTreeZone or DragonflyZone (ClusterBase).

Such a cluster is a zone of hosts only, one per leaf of the topology, named from the first radicals
(more are ignored). It has no router (router_id, bb_bw and bb_lat are ignored): a zoneRoute reaches
it through one of its hosts. Its links are plain SHARED links (FATPIPE is not applied), split into
NAME_UP and NAME_DOWN when the cluster is SPLITDUPLEX (FULLDUPLEX too). Each host may have a
loopback (CLUSTER_link_RADICAL_loopback, FATPIPE, for a host talking to itself) and a limiter
(CLUSTER_link_RANK_limiter: the rank, not the radical; SHARED, no latency), which routes cross
without adding latency. FAT_TREE's node positions and link numbers, and DRAGONFLY's link numbers,
are function-local statics in SimGrid: they run on across the clusters of one file (`statics`).
What SimGrid refuses, or reads out of bounds, raises Unmodelled.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Protocol

from schedlab.engine.simgrid_clusters import Builder, new_link
from schedlab.engine.simgrid_links import Link, Unmodelled, Zone, bandwidth, latency
from schedlab.platform import radical_numbers, topology_host_count, topology_parameters


class TopologyBuilder(Builder, Protocol):
    statics: dict[str, int]  # SimGrid's function-local statics, which run on from cluster to cluster


@dataclass
class _Leaves:
    """ClusterBase's part: the hosts by rank (their netpoint id), their loopbacks and limiters."""

    rank: dict[str, int] = field(default_factory=dict)
    loopback: list[Link] = field(default_factory=list)
    limiter: list[Link] = field(default_factory=list)


class _Links:
    """The links a cluster creates, each name once (SimGrid aborts: 'declared several times')."""

    def __init__(self, builder: TopologyBuilder, element: ET.Element) -> None:
        self.builder, self.element = builder, element
        self.split = element.get("sharing_policy", "SPLITDUPLEX") in ("SPLITDUPLEX", "FULLDUPLEX")
        self.bandwidth_bytes_per_s = bandwidth(element.get("bw", "0"))
        self.latency_s = latency(element.get("lat", "0"))

    def new(self, link: Link) -> Link:
        return new_link(self.builder, link, self.element, line=self.builder.line(self.element))

    def pair(self, name: str, count: int = 1) -> tuple[Link, Link]:
        """A cable of the cluster (`count` of them in one): NAME_UP and NAME_DOWN, or one shared link."""
        bw = self.bandwidth_bytes_per_s * count
        if self.split:
            return (self.new(Link(f"{name}_UP", bw, self.latency_s)),
                    self.new(Link(f"{name}_DOWN", bw, self.latency_s)))
        link = self.new(Link(name, bw, self.latency_s))
        return link, link


def topology_cluster(builder: TopologyBuilder, element: ET.Element, parent: Zone) -> None:
    """A <cluster> with a topology: its hosts and links, and the zone's routing."""
    cluster_id, topology = element.get("id", ""), element.get("topology", "")
    try:
        parameters = topology_parameters(topology, element.get("topo_parameters", ""))
    except ValueError as exc:
        raise Unmodelled(f"cluster {cluster_id!r}: topo_parameters {element.get('topo_parameters')!r}: {exc} "
                         "(SimGrid 3.32 aborts on such parameters; negative ones are not modelled)") from None
    count = topology_host_count(topology, parameters)
    numbers = radical_numbers(element.get("radical", ""))
    if numbers is None:
        raise Unmodelled(f"cluster {cluster_id!r}: bad radical {element.get('radical')!r}")
    if len(numbers) < count:
        raise Unmodelled(f"cluster {cluster_id!r}: its {topology} has {count} hosts but the radical names "
                         f"{len(numbers)} (SimGrid 3.32 aborts: 'Insufficient number of radicals available')")
    links = _Links(builder, element)
    if links.bandwidth_bytes_per_s <= 0 or links.latency_s < 0:
        raise Unmodelled(f"cluster {cluster_id!r}: SimGrid 3.32 aborts on a {topology} cluster of bw <= 0 or lat < 0 "
                         "('incorrect bandwidth (latency) for internode communication')")
    zone = builder.new_zone(cluster_id, topology, parent, element)
    leaves = _Leaves()
    loopback_bw = bandwidth(element.get("loopback_bw") or "0")
    loopback_lat = latency(element.get("loopback_lat") or "0")
    limiter_bw = bandwidth(element.get("limiter_link") or "0")
    role = builder.role(element, cluster_id)
    torus = _Torus(parameters[0], leaves) if topology == "TORUS" else None
    for rank, number in enumerate(numbers[:count]):  # ClusterBase::fill_leaf_from_cb, leaf by leaf
        host = f"{element.get('prefix', '')}{number}{element.get('suffix', '')}"
        builder.add_point(host, zone)
        builder.host_roles[host] = role
        builder.host_lines[host] = builder.line(element)
        leaves.rank[host] = rank
        if loopback_bw > 0 or loopback_lat > 0:
            leaves.loopback.append(links.new(Link(f"{cluster_id}_link_{number}_loopback", loopback_bw, loopback_lat,
                                                  fatpipe=True)))
        if limiter_bw > 0:
            leaves.limiter.append(links.new(Link(f"{cluster_id}_link_{rank}_limiter", limiter_bw, 0.0)))
        if torus is not None:
            torus.add_links(rank, cluster_id, links)
    if topology == "FAT_TREE":
        zone.topology = _FatTree(parameters, leaves, links, cluster_id, limiter_bw)
    elif topology == "DRAGONFLY":
        zone.topology = _Dragonfly(parameters, leaves, links, cluster_id, limiter_bw)
    else:
        zone.topology = torus


class _Torus:
    """TorusZone: each host has one cable per dimension to its next neighbour (wrapping around),
    CLUSTER_link_from_RANK_to_NEIGHBOUR; routes go dimension by dimension, the way (right or left)
    chosen once from the source's coordinates."""

    def __init__(self, dimensions: list[int], leaves: _Leaves) -> None:
        self.dimensions, self.leaves = dimensions, leaves
        self.cables: list[list[tuple[Link, Link]]] = []  # by rank, by dimension

    def add_links(self, rank: int, cluster_id: str, links: _Links) -> None:
        """TorusZone::create_torus_links."""
        product, cables = 1, []
        for size in self.dimensions:
            neighbour = rank - (size - 1) * product if (rank // product) % size == size - 1 else rank + product
            cables.append(links.pair(f"{cluster_id}_link_from_{rank}_to_{neighbour}"))
            product *= size
        self.cables.append(cables)

    def route(self, src: str, dst: str) -> list[Link]:
        """TorusZone::get_local_route: a limiter before each hop and at the end."""
        source, target = self.leaves.rank[src], self.leaves.rank[dst]
        if source == target and self.leaves.loopback:
            return [self.leaves.loopback[source]]
        mine, theirs, product = [], [], 1
        for size in self.dimensions:
            mine.append((source // product) % size)
            theirs.append((target // product) % size)
            product *= size
        route, current, limiters = [], source, self.leaves.limiter
        while current != target:
            product = 1
            for j, size in enumerate(self.dimensions):
                if (current // product) % size != (target // product) % size:
                    if (mine[j] < theirs[j] <= mine[j] + size // 2
                            or (mine[j] > size // 2 and (mine[j] + size // 2) % size >= theirs[j])):
                        following = current + product - product * size if (current // product) % size == size - 1 \
                            else current + product
                        link = self.cables[current][j][0]  # the current host's cable, up
                    else:
                        following = current - product + product * size if (current // product) % size == 0 \
                            else current - product
                        link = self.cables[following][j][1]  # the next host's cable, down
                    break
                product *= size
            if limiters:
                route.append(limiters[current])
            route.append(link)
            current = following
        if limiters:
            route.append(limiters[target])
        return route


@dataclass(eq=False)
class _Node:
    """FatTreeNode: a host (level 0) or a switch."""

    id: int
    level: int
    position: int
    limiter: Link | None
    loopback: Link | None = None
    label: list[int] = field(default_factory=list)
    children: list[_Cable | None] = field(default_factory=list)
    parents: list[_Cable | None] = field(default_factory=list)


@dataclass(eq=False)
class _Cable:
    """FatTreeLink: between a node and its parent."""

    up_node: _Node
    down_node: _Node
    up_link: Link
    down_link: Link


class _FatTree:
    """FatTreeZone: "h;m;w;p", h levels of switches, m children per node, w parents per node and
    p parallel cables per level; routes go up by destination-mod-k to the first common ancestor,
    then down. Switches are numbered down from 2 x hosts; cables are link_from_CHILD_PARENT_NUMBER."""

    def __init__(self, parameters: list[list[int]], leaves: _Leaves, links: _Links, cluster_id: str,
                 limiter_bw: float) -> None:
        [levels], down, up, ports = parameters
        self.levels, self.down, self.up, self.ports, self.leaves = levels, down, up, ports, leaves
        statics = links.builder.statics
        first = statics.get("fat_tree_position", 0)  # FatTreeZone::add_processing_node's static
        count = len(leaves.rank)
        statics["fat_tree_position"] = first + count
        self.hosts = [_Node(rank, 0, first + rank, leaves.limiter[rank] if leaves.limiter else None,
                            leaves.loopback[rank] if leaves.loopback else None, parents=[None] * (up[0] * ports[0]))
                      for rank in range(count)]
        nodes = list(self.hosts)
        self.by_level = [count]  # FatTreeZone::generate_switches
        for i in range(levels):
            size = 1
            for j in range(i + 1):
                size *= up[j]
            for j in range(i + 1, levels):
                size *= down[j]
            self.by_level.append(size)
        number = 2 * count
        for i in range(levels):
            for j in range(self.by_level[i + 1]):
                number -= 1
                limiter = links.new(Link(f"{cluster_id}_link_{number}_limiter", limiter_bw, 0.0)) \
                    if limiter_bw > 0 else None
                nodes.append(_Node(number, i + 1, j, limiter, children=[None] * (down[i] * ports[i]),
                                   parents=[None] * (up[i + 1] * ports[i + 1]) if i != levels - 1 else []))
        self._labels(nodes)
        start = 0
        for level in range(levels):  # FatTreeZone::connect_node_to_parents, node by node
            candidates = nodes[start + self.by_level[level]:start + self.by_level[level] + self.by_level[level + 1]]
            for node in nodes[start:start + self.by_level[level]]:
                for parent in candidates:
                    if self._related(parent, node):
                        for j in range(ports[level]):
                            self._add_cable(links, parent, node.label[level] + j * down[level], node,
                                            parent.label[level] + j * up[level])
            start += self.by_level[level]

    def _labels(self, nodes: list[_Node]) -> None:
        """FatTreeZone::generate_labels: per level, a counter in mixed radix, first digit fastest."""
        k = 0
        for i in range(self.levels + 1):
            current = [0] * self.levels
            highest = [self.down[j] if j + 1 > i else self.up[j] for j in range(self.levels)]
            for _ in range(self.by_level[i]):
                nodes[k].label = list(current)
                position = 0
                while position < self.levels:
                    current[position] += 1
                    if current[position] < highest[position]:
                        break
                    current[position] = 0
                    position += 1
                k += 1

    def _related(self, parent: _Node, child: _Node) -> bool:
        return parent.level == child.level + 1 and all(
            parent.label[i] == child.label[i] or i + 1 == parent.level for i in range(self.levels))

    @staticmethod
    def _add_cable(links: _Links, parent: _Node, parent_port: int, child: _Node, child_port: int) -> None:
        statics = links.builder.statics
        number = statics.get("fat_tree_link", 0)  # FatTreeZone::add_link's static
        statics["fat_tree_link"] = number + 1
        up_link, down_link = links.pair(f"link_from_{child.id}_{parent.id}_{number}")
        cable = _Cable(parent, child, up_link, down_link)
        parent.children[parent_port] = cable
        child.parents[child_port] = cable

    def _in_sub_tree(self, root: _Node, node: _Node) -> bool:
        if root.level <= node.level:
            return False
        return all(root.label[i] == node.label[i] for i in range(node.level)) and all(
            root.label[i] == node.label[i] for i in range(root.level, self.levels))

    def route(self, src: str, dst: str) -> list[Link]:
        """FatTreeZone::get_local_route: the limiters of the nodes left, and the destination's."""
        source, destination = self.hosts[self.leaves.rank[src]], self.hosts[self.leaves.rank[dst]]
        if source is destination and source.loopback is not None:
            return [source.loopback]
        route, current = [], source
        while not self._in_sub_tree(current, destination):
            d = destination.position
            for i in range(current.level):
                d //= self.up[i]
            d %= self.up[current.level] * self.ports[current.level]
            cable = current.parents[d]
            if cable is None:
                raise Unmodelled(f"fat tree: {src} -> {dst} goes through a port without a cable (SimGrid 3.32 would "
                                 "follow a null pointer): not modelled by --timing batsim")
            if current.limiter is not None:
                route.append(current.limiter)
            route.append(cable.up_link)
            current = cable.up_node
        while current is not destination:
            before = current
            if current.level == 0:
                raise Unmodelled(f"fat tree: {src} -> {dst} comes down to another host: not modelled")
            i = (source.position % self.ports[current.level - 1]) * self.down[current.level - 1]
            while i < len(current.children):  # SimGrid's loop goes on below the switch it came down to
                if i % self.down[current.level - 1] == destination.label[current.level - 1]:
                    cable = current.children[i]
                    if cable is None:
                        raise Unmodelled(f"fat tree: {src} -> {dst} goes through a port without a cable: "
                                         "not modelled by --timing batsim")
                    route.append(cable.down_link)
                    if current.limiter is not None:
                        route.append(current.limiter)
                    current = cable.down_node
                i += 1
            if current is before:
                raise Unmodelled(f"fat tree: no way down from {src} to {dst} (SimGrid 3.32 would loop forever)")
        if current.limiter is not None:
            route.append(current.limiter)
        return route


@dataclass(eq=False)
class _Router:
    """DragonflyRouter: one per blade."""

    group: int
    chassis: int
    blade: int
    limiter: Link | None
    blue: Link | None = None
    black: list[Link | None] = field(default_factory=list)
    green: list[Link | None] = field(default_factory=list)
    hosts: list[Link] = field(default_factory=list)  # by host on the blade: up (and down, split-duplex)


class _Dragonfly:
    """DragonflyZone: "g,blue;c,black;b,green;n", g groups of c chassis of b blades (routers) of n
    hosts; routers of a chassis all-to-all (green), blade k of each chassis of a group all-to-all
    (black), router (group i, index j) joined to (group j, index i) (blue). Minimal routes, as
    DragonflyZone::get_local_route takes them."""

    def __init__(self, parameters: list[list[int]], leaves: _Leaves, links: _Links, cluster_id: str,
                 limiter_bw: float) -> None:
        [self.groups, blue], [self.chassis, black], [self.blades, green], [self.nodes] = parameters
        self.leaves, self.per_cable = leaves, 2 if links.split else 1
        groups, chassis, blades, nodes = self.groups, self.chassis, self.blades, self.nodes
        number = 2 * groups * chassis * blades * nodes
        self.routers = []
        for i in range(groups):  # DragonflyZone::generate_routers
            for j in range(chassis):
                for k in range(blades):
                    limiter = None
                    if limiter_bw > 0:
                        number -= 1
                        limiter = links.new(Link(f"{cluster_id}_link_{number}_limiter", limiter_bw, 0.0))
                    self.routers.append(_Router(i, j, k, limiter, black=[None] * chassis, green=[None] * blades))
        statics = links.builder.statics
        unique = statics.get("dragonfly_link", 0)  # DragonflyZone::generate_links's static
        for i, router in enumerate(self.routers):
            for j in range(nodes):
                router.hosts += links.pair(f"local_link_from_router_{i}_to_node_{j}_{unique}")[:self.per_cable]
                unique += 1
        for i in range(groups * chassis):
            for j in range(blades):
                for k in range(j + 1, blades):
                    up, down = links.pair(f"green_link_in_chassis_{i % chassis}_between_routers_{j}_and_{k}_{unique}",
                                          green)
                    self.routers[i * blades + j].green[k], self.routers[i * blades + k].green[j] = up, down
                    unique += 1
        for i in range(groups):
            for j in range(chassis):
                for k in range(j + 1, chassis):
                    for blade in range(blades):
                        up, down = links.pair(f"black_link_in_group_{i}_between_chassis_{j}_and_{k}_blade_{blade}_"
                                              f"{unique}", black)
                        self.routers[(i * chassis + j) * blades + blade].black[k] = up
                        self.routers[(i * chassis + k) * blades + blade].black[j] = down
                        unique += 1
        for i in range(groups):
            for j in range(i + 1, groups):
                first, second = i * blades * chassis + j, j * blades * chassis + i
                if max(first, second) >= len(self.routers):
                    raise Unmodelled(f"cluster {cluster_id!r}: {groups} groups of {chassis * blades} routers: SimGrid "
                                     f"3.32 writes a blue link past its routers (group {j}): not modelled")
                up, down = links.pair(f"blue_link_between_group_{i}_and_{j}_routers_{first}_and_{second}_{unique}",
                                      blue)
                self.routers[first].blue, self.routers[second].blue = up, down
                unique += 1
        statics["dragonfly_link"] = unique

    def _coordinates(self, rank: int) -> tuple[int, int, int, int]:
        per_group = self.chassis * self.blades * self.nodes
        per_chassis = self.blades * self.nodes
        return (rank // per_group, rank % per_group // per_chassis, rank % per_chassis // self.nodes,
                rank % self.nodes)

    def _router(self, group: int, index: int) -> _Router:
        number = group * self.chassis * self.blades + index
        if number >= len(self.routers):  # SimGrid would read past its routers
            raise Unmodelled(f"dragonfly: a route goes to router {number} of {len(self.routers)}: not modelled")
        return self.routers[number]

    def route(self, src: str, dst: str) -> list[Link]:
        """DragonflyZone::get_local_route: a router's limiter before each hop it sends on (after
        the blue hop), the destination router's before the last cable. Once it has gone to another
        group, it takes the next router by blade alone (chassis 0), as SimGrid does."""
        source, target = self.leaves.rank[src], self.leaves.rank[dst]
        if source == target and self.leaves.loopback:
            return [self.leaves.loopback[source]]
        (group, chassis, blade, node), (to_group, to_chassis, to_blade, to_node) = (
            self._coordinates(source), self._coordinates(target))
        mine, theirs = self._router(group, chassis * self.blades + blade), \
            self._router(to_group, to_chassis * self.blades + to_blade)
        route: list[Link] = []

        def hop(link: Link | None, before: Link | None = None, after: Link | None = None) -> None:
            """A cable, with the limiter of the router it leaves (before it, or after the blue one)."""
            if link is None:
                raise Unmodelled(f"dragonfly: {src} -> {dst} goes through a link SimGrid 3.32 never made: "
                                 "not modelled by --timing batsim")
            route.extend(item for item in (before, link, after) if item is not None)

        limiters = self.leaves.limiter
        if limiters:
            route.append(limiters[source])
        hop(mine.hosts[node * self.per_cable])
        current = mine
        if theirs is not mine:
            if theirs.group != current.group:
                if current.blade != to_group:
                    if to_group >= self.blades:  # seen: SimGrid 3.32 segfaults there
                        raise Unmodelled(f"dragonfly: {src} -> {dst} goes to group {to_group}, past the "
                                         f"{self.blades} blades of a chassis: SimGrid 3.32 reads past a router's "
                                         "green links (it crashes)")
                    hop(current.green[to_group], before=current.limiter)
                    current = self._router(group, chassis * self.blades + to_group)
                if current.chassis != 0:
                    hop(current.black[0], before=current.limiter)
                    current = self._router(group, to_group)
                hop(current.blue, after=current.limiter)
                current = self._router(to_group, group)
            if theirs.blade != current.blade:
                hop(current.green[to_blade], before=current.limiter)
                current = self._router(to_group, to_blade)
            if theirs.chassis != current.chassis:
                hop(current.black[to_chassis], before=current.limiter)
        hop(theirs.hosts[to_node * self.per_cable + self.per_cable - 1], before=theirs.limiter)
        if limiters:
            route.append(limiters[target])
        return route
