"""How long Batsim 4.2.1's internal messages take on a platform: routes to the master host.

Batsim runs SimGrid 3.32 with the `ptask_L07` host model (batsim.cpp): a message is a 1-byte
communication whose duration is the route's latency (the sum of its links' latencies, no latency
factor) followed by a transfer at `min(least link bandwidth, TCP_gamma / (2 latency))` bytes/s; a
route without links takes no time. Every internal message goes to the server's mailbox on the
master host, so only the routes from each host to the master matter; SimGrid's routing gives them
(simgrid_routing.py: Full, Floyd, Dijkstra and Vivaldi zones, flat clusters, nested zones).

What the model does not cover is refused with one line naming the element (docs/design.md,
"Batsim timing").
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from schedlab.errors import InputError
from schedlab.simgrid_routing import Link, Routing, Unmodelled

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


def l07_route(links: list[Link], latency_s: float) -> Route:
    """A lone 1-byte flow under ptask_L07: bounded by its slowest link and by TCP gamma. Without
    links, L07 has nothing to transfer (L07Action sets remains to 0): only the latency is left."""
    if not links:
        return Route(latency_s, float("inf"))
    crossings = Counter(link.name for link in links)  # a shared link crossed twice gives half
    rate = min(link.bandwidth_bytes_per_s / (1 if link.fatpipe else crossings[link.name]) for link in links)
    if rate <= 0:
        slow = min(links, key=lambda link: link.bandwidth_bytes_per_s)
        raise Unmodelled(f"link {slow.name!r} has no bandwidth: a message through it would never arrive",
                         f'id="{slow.name}"')
    if latency_s > 0:
        rate = min(rate, TCP_GAMMA / (2.0 * latency_s))
    return Route(latency_s, rate)


#: SimGrid configuration a platform may set that does not change simulated times (stack sizes,
#: debugging, tracing); any other (network/TCP-gamma, latency factors, models) is refused
_CONFIG_WITHOUT_TIMING = ("contexts/", "debug/", "exception/", "tracing", "path")


def _parse(root: ET.Element, master_host: str) -> MessageRoutes:
    for config in root.iter("config"):
        for prop in config.iter("prop"):
            name = prop.get("id", "")
            if not name.startswith(_CONFIG_WITHOUT_TIMING):
                raise Unmodelled(f"<config> prop {name!r} may change SimGrid's timing and is not modelled by "
                                 "--timing batsim", f'id="{name}"')
    routing = Routing(root)
    hosts = routing.host_roles
    masters = [h for h, roles in hosts.items() if "master" in roles or h == master_host]
    if len(masters) != 1:
        raise Unmodelled(f"--timing batsim needs exactly one master host, found {len(masters)}", "master")
    master = masters[0]
    compute = sorted(h for h, roles in hosts.items() if h != master and "storage" not in roles)
    return MessageRoutes(l07_route(*routing.route(master, master)),
                         tuple(l07_route(*routing.route(host, master)) for host in compute))


def message_routes(path: str | Path, *, master_host: str = DEFAULT_MASTER_HOST) -> MessageRoutes:
    """The routes of `path`'s platform, or InputError (file, line) for what is not modelled."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        return _parse(ET.fromstring(text.lstrip()), master_host)
    except Unmodelled as exc:
        index = text.find(exc.needle) if exc.needle else -1
        line = text.count("\n", 0, index) + 1 if index >= 0 else None
        raise InputError(str(exc), path=str(path), line=line) from None
    except (ET.ParseError, ValueError) as exc:
        raise InputError(f"cannot read the platform for --timing batsim: {exc}", path=str(path)) from None
