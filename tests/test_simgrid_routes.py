"""Our SimGrid routing against SimGrid 3.32 itself (marker `batsim`: needs SimGrid's headers and a
C++ compiler, which scripts/install-batsim.sh installs): on seeded random platforms of nested Full,
Floyd, Dijkstra(Cache), Vivaldi and cluster zones with every kind of link, the latency of each route
(bit for bit, as Host::route_to sums it), its links (by name, with multiplicity), and the clock
when one 1-byte message has crossed it (our kernel against SimGrid's engine)."""

from __future__ import annotations

import itertools
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from schedlab.engine.batsim_kernel import Kernel, put, sleep_for
from schedlab.engine.batsim_network import l07_route
from schedlab.engine.simgrid_routing import Routing
from schedlab.engine.simgrid_zones import Zones, parse_xml
from tests.helpers.data import THOROUGH

pytestmark = pytest.mark.batsim
ORACLE_SOURCE = Path(__file__).resolve().parent / "simgrid" / "routes.cpp"
HAND_MADE = Path(__file__).resolve().parent / "data" / "batsim-timing" / "platforms"


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> Path:
    compiler, pkg_config = shutil.which("g++") or shutil.which("c++"), shutil.which("pkg-config")
    if not compiler or not pkg_config:
        pytest.skip("no C++ compiler or pkg-config (scripts/install-batsim.sh installs them)")
    flags = subprocess.run([pkg_config, "--cflags", "--libs", "simgrid"], capture_output=True, text=True)
    if flags.returncode != 0:
        pytest.skip("SimGrid's development files are absent (scripts/install-batsim.sh installs libsimgrid-dev)")
    binary = tmp_path_factory.mktemp("oracle") / "routes"
    subprocess.run([compiler, "-std=c++17", "-O1", "-o", str(binary), str(ORACLE_SOURCE), *flags.stdout.split()],
                   check=True)
    return binary


class _Platform:
    """A random platform, written in the order SimGrid's DTD wants."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.count = rng, 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def link(self, links: list[str], policy: str | None = None) -> tuple[str, str]:
        """A new link's XML and a link_ctn for it (a split-duplex one with a random direction)."""
        rng, name = self.rng, self.name("l")
        policy = policy or rng.choice(["SHARED", "SHARED", "FATPIPE", "SPLITDUPLEX"])
        links.append(f'<link id="{name}" bandwidth="{rng.choice([1, 10, 25, 100])}{rng.choice(["Gbps", "MBps"])}" '
                     f'latency="{rng.randint(1, 400)}{rng.choice(["us", "ns", "ms"])}" sharing_policy="{policy}"/>')
        direction = f' direction="{rng.choice(["UP", "DOWN"])}"' if policy == "SPLITDUPLEX" else ""
        return name, f'<link_ctn id="{name}"{direction}/>'

    def route(self, src: str, dst: str, links: list[str], tag: str = "route", gateways: str = "") -> str:
        body = "".join(self.link(links)[1] for _ in range(self.rng.randint(1, 2)))
        return f'<{tag} src="{src}" dst="{dst}"{gateways}>{body}</{tag}>'

    def leaf(self) -> tuple[str, str]:
        """A zone of hosts of a random kind: its XML and a gateway (a router or host of it)."""
        rng = self.rng
        kind = rng.choice(["Full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi", "cluster"])
        zone = self.name("z")
        if kind == "cluster":
            policy = rng.choice(["SPLITDUPLEX", "SHARED", "FATPIPE", "FULLDUPLEX"])
            extra = "".join(text for text in (
                f' bb_bw="{rng.randint(1, 40)}Gbps" bb_lat="{rng.randint(1, 500)}us" '
                f'bb_sharing_policy="{rng.choice(["SHARED", "FATPIPE"])}"' if rng.random() < 0.7 else "",
                f' limiter_link="{rng.randint(1, 5)}Gbps"' if rng.random() < 0.3 else "",
                f' loopback_bw="{rng.randint(1, 9)}GBps" loopback_lat="{rng.randint(0, 9)}us"'
                if rng.random() < 0.3 else ""))
            count = rng.randint(1, 4)
            names = [f"c{zone}-{i}.x" for i in range(count)]
            xml = (f'<cluster id="{zone}" prefix="c{zone}-" suffix=".x" radical="0-{count - 1}" speed="1Gf" '
                   f'bw="{rng.randint(1, 20)}Gbps" lat="{rng.randint(1, 90)}us" sharing_policy="{policy}"{extra}/>')
            return xml, rng.choice([f"c{zone}-{zone}_router.x", *names])
        hosts, links, routes = [self.name("h") for _ in range(rng.randint(1, 4))], [], []
        if kind == "Vivaldi":
            def where() -> str:
                x, y, height = rng.uniform(-300, 300), rng.uniform(-300, 300), rng.uniform(0, 2)
                return f'coordinates="{x:.3f} {y:.3f} {height:.2f}"'
            router = self.name("r")
            body = "".join(f'<host id="{h}" speed="1Gf" {where()}/>' for h in hosts)
            # host_links, which SimGrid reads in Cluster zones only
            up, down = self.link(links, "SHARED")[0], self.link(links, "SHARED")[0]
            body += (f'<router id="{router}" {where()}/>' + "".join(links)
                     + f'<host_link id="{hosts[0]}" up="{up}" down="{down}"/>')
            return f'<zone id="{zone}" routing="Vivaldi">{body}</zone>', router
        routers = [self.name("r") for _ in range(rng.randint(1, 3))]
        for host in hosts:
            routes.append(self.route(host, rng.choice(routers), links))
        for a, b in itertools.pairwise(routers):
            routes.append(self.route(a, b, links))
        if kind == "Full":  # Full zones need their host-to-host routes declared (or they are empty)
            for a, b in itertools.pairwise(hosts):
                routes.append(self.route(a, b, links))
        else:  # shortcuts: equal or shorter alternatives for the tie rules
            points = hosts + routers
            pairs = {(a, b) for a in points for b in points if a < b} - {
                tuple(sorted((r.split('"')[1], r.split('"')[3]))) for r in routes}
            for a, b in rng.sample(sorted(pairs), min(len(pairs), rng.randint(0, 3))):
                routes.append(self.route(a, b, links))
        body = ("".join(f'<host id="{h}" speed="1Gf" core="{rng.choice([1, 4])}"/>' for h in hosts)
                + "".join(f'<router id="{r}"/>' for r in routers) + "".join(links) + "".join(routes))
        return f'<zone id="{zone}" routing="{kind}">{body}</zone>', routers[0]

    def group(self, depth: int, top: bool = False) -> tuple[str, str, str]:
        """A zone of zones (or, below the top, sometimes a leaf): XML, gateway, id. Its members are
        joined pairwise by zoneRoutes, so that every pair of hosts has a route."""
        if depth == 0 or (not top and self.rng.random() < 0.5):
            xml, gateway = self.leaf()
            return xml, gateway, xml.split('"')[1]
        zone, members, links = self.name("g"), [self.group(depth - 1) for _ in range(self.rng.randint(2, 3))], []
        routes = [self.route(a[2], b[2], links, "zoneRoute", f' gw_src="{a[1]}" gw_dst="{b[1]}"')
                  for a, b in itertools.pairwise(members)]
        first = members[0]
        routes += [self.route(first[2], m[2], links, "zoneRoute", f' gw_src="{first[1]}" gw_dst="{m[1]}"')
                   for m in members[2:]]
        body = "".join(m[0] for m in members) + "".join(links) + "".join(routes)
        return f'<zone id="{zone}" routing="Full">{body}</zone>', first[1], zone

    def xml(self) -> str:
        body, _, _ = self.group(depth=2, top=True)
        return (f"<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                f"<platform version=\"4.1\">\n{body}\n</platform>\n")


def simgrid_says(oracle: Path, platform: Path, pairs: list[tuple[str, str]]) -> tuple[list, float]:
    done = subprocess.run([str(oracle), str(platform), *(f"{a}:{b}" for a, b in pairs), "--log=root.thres:critical"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    routes, arrived = [], None
    for line in done.stdout.splitlines():
        words = line.split()
        if words[0] == "route":
            routes.append((float(words[2]), sorted(word.split("/")[0] for word in words[3:])))
        elif words[0] == "arrived":
            arrived = float(words[1])
    return routes, arrived


def arrival(route) -> float:
    """Our kernel: one 1-byte message sent alone at 1000 s, as the oracle sends it."""
    kernel = Kernel()

    def receiver():
        comm = yield ("irecv",)
        yield ("wait", comm)

    def sender():
        yield from sleep_for(1000.0)
        yield from put(1)

    kernel.spawn("receiver", route, receiver())
    kernel.spawn("sender", route, sender())
    kernel.run()
    return kernel.now


def compare(oracle: Path, path: Path, to_master: bool = False) -> int:
    """Every host to one of them (to the master's, for platforms made for Batsim, whose other pairs
    may have no route), and a few random pairs."""
    root, lines = parse_xml(path.read_text())
    zones = Zones(root, lines)
    routing = Routing(zones)
    hosts = sorted(zones.host_roles)
    rng = random.Random(path.name)
    if to_master:
        target = next(h for h, role in zones.host_roles.items() if role == "master" or h == "master_host")
        pairs = [(host, target) for host in hosts]
    else:
        target = rng.choice(hosts)
        pairs = [(host, target) for host in hosts] + [(rng.choice(hosts), rng.choice(hosts)) for _ in range(3)]
    theirs, _ = simgrid_says(oracle, path, pairs)
    for (src, dst), (latency, names) in zip(pairs, theirs, strict=True):
        links, ours = routing.route(src, dst)
        assert (ours, sorted(link.name for link in links)) == (latency, names), (path.name, src, dst)
    for src, dst in rng.sample(pairs, 3):  # a message's arrival, to the bit
        _, arrived = simgrid_says(oracle, path, [(src, dst)])
        assert arrival(l07_route(*routing.route(src, dst))) == arrived, (path.name, src, dst)
    return len(pairs)


@pytest.mark.parametrize("seed", range(200 if THOROUGH else 15))
def test_random_platforms_route_as_simgrid(oracle, tmp_path, seed):
    path = tmp_path / f"random{seed}.xml"
    path.write_text(_Platform(random.Random(seed)).xml())
    assert compare(oracle, path) > 3


@pytest.mark.parametrize("name", sorted(p.stem for p in HAND_MADE.glob("*.xml")))
def test_hand_made_platforms_route_as_simgrid(oracle, name):
    assert compare(oracle, HAND_MADE / f"{name}.xml", to_master=True) > 3
