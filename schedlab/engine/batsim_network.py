"""How long Batsim 4.2.1's internal messages take on a platform: routes to the master host.

Batsim runs SimGrid 3.32 with the `ptask_L07` host model (batsim.cpp): a message is a 1-byte
communication whose duration is the route's latency (the sum of its links' latencies, no latency
factor) followed by a transfer at `min(least link bandwidth, TCP_gamma / (2 latency))` bytes/s; a
route without links takes no time. Every internal message goes to the server's mailbox on the
master host, so only the routes from each host to the master matter; SimGrid's routing gives them
(simgrid_routing.py: Full, Floyd, Dijkstra, Vivaldi (peers too) and Cluster (cabinets) zones, flat
clusters, TORUS, FAT_TREE and DRAGONFLY clusters, nested zones, bypass routes, links whose profile is
constant).

What the model does not cover is refused with one line naming the element (docs/design.md,
"Batsim timing").
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from schedlab.engine.simgrid_routing import Routing
from schedlab.engine.simgrid_zones import Link, Unmodelled, Zones, parse_xml
from schedlab.errors import InputError

TCP_GAMMA = 4194304.0  # SimGrid's network/TCP-gamma default (bytes), bounding a flow's rate
DEFAULT_MASTER_HOST = "master_host"


@dataclass(frozen=True, slots=True)
class Route:
    """A 1-byte message's route to the master: latency phase, then a transfer at `rate_bytes_per_s`
    (infinite for a route without links: the message arrives at once)."""

    latency_s: float
    rate_bytes_per_s: float


@dataclass(frozen=True)
class MessageRoutes:
    """Routes of Batsim's internal messages: from the master itself, and from each compute
    resource (by resource id: compute hosts sorted by name, as Batsim numbers them)."""

    master: Route
    resources: tuple[Route, ...]


def l07_route(links: list[Link], latency_s: float, link_lines: dict[str, int | None] | None = None) -> Route:
    """A lone 1-byte flow under ptask_L07: bounded by its slowest link and by TCP gamma. Without
    links, L07 has nothing to transfer (L07Action sets remains to 0): only the latency is left."""
    if not links:
        return Route(latency_s, float("inf"))
    crossings = Counter(link.name for link in links)  # a shared link crossed twice gives half
    rate = min(link.bandwidth_bytes_per_s / (1 if link.fatpipe else crossings[link.name]) for link in links)
    if rate <= 0:
        slow = min(links, key=lambda link: link.bandwidth_bytes_per_s)
        raise Unmodelled(f"link {slow.name!r} has no bandwidth: a message through it would never arrive",
                         (link_lines or {}).get(slow.name))
    if latency_s > 0:
        rate = min(rate, TCP_GAMMA / (2.0 * latency_s))
    return Route(latency_s, rate)


#: SimGrid configuration a platform may set that does not change simulated times (stack sizes,
#: debugging, tracing); any other (network/TCP-gamma, latency factors, models) is refused
_CONFIG_WITHOUT_TIMING = ("contexts/", "debug/", "exception/", "tracing", "path")


def _parse(text: str, master_host: str, directory: Path | None = None) -> MessageRoutes:
    root, lines = parse_xml(text)
    for config in root.iter("config"):
        for prop in config.iter("prop"):
            name = prop.get("id", "")
            if not name.startswith(_CONFIG_WITHOUT_TIMING):
                raise Unmodelled(f"<config> prop {name!r} may change SimGrid's timing and is not modelled by "
                                 "--timing batsim", lines.get(prop))
    zones = Zones(root, lines, directory)
    roles = zones.host_roles
    if roles.get(master_host) is not None:  # Batsim makes it "ROLE,master" and aborts
        raise Unmodelled(f"{master_host!r} has a role prop: Batsim 4.2.1 refuses a role on its master host "
                         f"(it adds 'master' itself)", zones.host_lines[master_host])
    masters = [h for h, role in roles.items() if role == "master" or h == master_host]
    if len(masters) != 1:
        raise Unmodelled(f"--timing batsim needs exactly one master host (role master, or named {master_host}), "
                         f"found {len(masters)}", zones.host_lines.get(masters[1]) if masters[1:] else zones.root.line)
    master = masters[0]
    compute = sorted(h for h, role in roles.items() if h != master and role != "storage")
    routing = Routing(zones)
    return MessageRoutes(l07_route(*routing.route(master, master), zones.link_lines),
                         tuple(l07_route(*routing.route(host, master), zones.link_lines) for host in compute))


def message_routes(path: str | Path, *, master_host: str = DEFAULT_MASTER_HOST) -> MessageRoutes:
    """The routes of `path`'s platform, or InputError (file, line) for what is not modelled."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        return _parse(text, master_host, Path(path).parent)
    except Unmodelled as exc:
        raise InputError(str(exc), path=str(path), line=exc.line) from None
    except ValueError as exc:
        raise InputError(f"cannot read the platform for --timing batsim: {exc}", path=str(path)) from None
