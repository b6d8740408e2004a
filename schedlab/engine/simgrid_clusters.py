"""SimGrid 3.32's star zones that the parser builds itself (sg_platf.cpp): a flat `<cluster>`, and a
`routing="Cluster"` zone populated from its `<host_link>`s, `<cabinet>`s and `<backbone>` when the
zone is sealed. Both route as StarZone: the source's links up, then the destination's links down,
each link once. simgrid_zones.py calls these while it reads the file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Protocol

from schedlab.engine.simgrid_links import Link, Unmodelled, Zone, bandwidth, latency
from schedlab.platform import radical_numbers


class Builder(Protocol):
    """What these builders need of simgrid_zones.Zones."""

    links: dict[str, Link | tuple[Link, Link]]
    link_lines: dict[str, int | None]
    owner: dict[str, Zone]
    host_roles: dict[str, str | None]
    host_lines: dict[str, int | None]

    def line(self, element: ET.Element) -> int | None: ...

    def new_zone(self, zone_id: str, routing: str, parent: Zone | None, element: ET.Element) -> Zone: ...

    def add_point(self, name: str, zone: Zone) -> None: ...

    def role(self, element: ET.Element, name: str) -> str | None: ...


def _numbers(element: ET.Element) -> list[int]:
    numbers = radical_numbers(element.get("radical", ""))
    if numbers is None:
        raise Unmodelled(f"{element.tag} {element.get('id', '')!r}: bad radical {element.get('radical')!r}")
    return numbers


def new_link(builder: Builder, link: Link, element: ET.Element, *, line: int | None = None) -> Link:
    """A link the parser creates itself (a cluster's, a cabinet's, a peer's), declared by `element`:
    its name must be free. `line`: the line to blame, when not the enclosing element's."""
    if link.name in builder.links:
        raise Unmodelled(f"two links named {link.name!r} (SimGrid 3.32 aborts: 'declared several times in the "
                         "platform')", line)
    builder.links[link.name] = link
    builder.link_lines[link.name] = builder.line(element)
    return link


def flat_cluster(builder: Builder, element: ET.Element, parent: Zone) -> None:
    """A flat <cluster>: sg_platf_new_cluster_flat's star zone (private links, backbone, router)."""
    cluster_id = element.get("id", "")  # topo_parameters is ignored
    zone = builder.new_zone(cluster_id, "Cluster", parent, element)
    # SHARED and FATPIPE private links are both made SHARED; FULLDUPLEX is SPLITDUPLEX
    split = element.get("sharing_policy", "SPLITDUPLEX") in ("SPLITDUPLEX", "FULLDUPLEX")
    bw, lat = bandwidth(element.get("bw", "0")), latency(element.get("lat", "0"))
    backbone: list[Link] = []
    bb_bw, bb_lat = bandwidth(element.get("bb_bw") or "0"), latency(element.get("bb_lat") or "0")
    if bb_bw > 0 or bb_lat > 0:
        backbone = [Link(f"{cluster_id}_backbone", bb_bw, bb_lat,
                         fatpipe=element.get("bb_sharing_policy", "SHARED") == "FATPIPE")]
    limiter = bandwidth(element.get("limiter_link") or "0")
    loopback_bw = bandwidth(element.get("loopback_bw") or "0")
    loopback_lat = latency(element.get("loopback_lat") or "0")
    prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
    role = builder.role(element, cluster_id)
    for number in _numbers(element):
        host = f"{prefix}{number}{suffix}"
        builder.add_point(host, zone)
        builder.host_roles[host] = role
        builder.host_lines[host] = builder.line(element)
        own = f"{cluster_id}_link_{number}"  # sg_platf_new_cluster_flat's names
        up, down = ((Link(f"{own}_UP", bw, lat), Link(f"{own}_DOWN", bw, lat)) if split
                    else (Link(own, bw, lat),) * 2)
        limiters = [Link(f"{own}_limiter", limiter, 0.0)] if limiter > 0 else []
        zone.up[host], zone.down[host] = [*limiters, up, *backbone], [*backbone, down, *limiters]
        if loopback_bw > 0 or loopback_lat > 0:
            zone.loopback[host] = [Link(f"{own}_loopback", loopback_bw, loopback_lat, fatpipe=True)]
        for link in (up, down, *limiters, *backbone, *zone.loopback.get(host, [])):
            builder.link_lines[link.name] = builder.line(element)
    router = element.get("router_id") or f"{prefix}{cluster_id}_router{suffix}"
    builder.add_point(router, zone)  # no links of its own: host -> router is the host's way up
    zone.gateway = router


@dataclass
class ClusterParts:
    """sg_platf.cpp's `zone_cluster`: what a routing="Cluster" zone gets when it is sealed."""

    host_links: list[ET.Element] = field(default_factory=list)
    cabinets: list[ET.Element] = field(default_factory=list)
    backbone: ET.Element | None = None  # the last <backbone> read wins


def _plain(builder: Builder, name: str, where: str) -> Link:
    link = builder.links.get(name)
    if not isinstance(link, Link):  # a split-duplex link needs a direction, which <host_link> cannot give
        raise Unmodelled(f"{where}: {'unknown link' if link is None else 'split-duplex link (name its _UP or _DOWN)'} "
                         f"{name!r}")
    return link


def populate_cluster_zone(builder: Builder, zone: Zone, parts: ClusterParts) -> None:
    """sg_platf_zone_cluster_populate: the backbone (a shared link), then each <host_link>'s host
    gets [up, backbone] and [backbone, down], then each <cabinet> makes its hosts, named
    prefix+N+suffix, with their own links link_HOST_UP and link_HOST_DOWN (shared, the cabinet's
    bw and lat) and the backbone in the same places."""
    backbone: list[Link] = []
    if parts.backbone is not None:
        element = parts.backbone
        backbone = [new_link(builder, Link(element.get("id", ""), bandwidth(element.get("bandwidth", "")),
                                            latency(element.get("latency", ""))), element)]
    for element in parts.host_links:
        host, where = element.get("id", ""), f"host_link {element.get('id', '')!r}"
        try:
            if host not in builder.host_roles:  # Engine::host_by_name throws
                raise Unmodelled(f"{where}: no host is named so (SimGrid aborts)")
            up, down = _plain(builder, element.get("up", ""), where), _plain(builder, element.get("down", ""), where)
        except Unmodelled as exc:
            exc.line = exc.line or builder.line(element)
            raise
        # StarZone keeps routes by the netpoint's rank in its own zone: a <host_link> read in another
        # zone (SimGrid keeps them all for the next routing="Cluster" zone) gives its links to the
        # netpoint of the same rank here, if any yet (a cabinet's host of that rank overwrites them)
        rank = builder.owner[host].points.index(host)
        if rank < len(zone.points):
            point = zone.points[rank]
            zone.up[point], zone.down[point] = [up, *backbone], [*backbone, down]
    for element in parts.cabinets:
        bw, lat = bandwidth(element.get("bw", "")), latency(element.get("lat", ""))
        for number in _numbers(element):
            host = f"{element.get('prefix', '')}{number}{element.get('suffix', '')}"
            try:
                builder.add_point(host, zone)
            except Unmodelled as exc:
                exc.line = builder.line(element)
                raise
            builder.host_roles[host] = None  # a <cabinet> has no props
            builder.host_lines[host] = builder.line(element)
            up = new_link(builder, Link(f"link_{host}_UP", bw, lat), element)
            down = new_link(builder, Link(f"link_{host}_DOWN", bw, lat), element)
            zone.up[host], zone.down[host] = [up, *backbone], [*backbone, down]
