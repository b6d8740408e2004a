"""Our SimGrid routing against SimGrid 3.32 itself (marker `batsim`: needs SimGrid's headers and a
C++ compiler, which scripts/install-batsim.sh installs): on seeded random platforms of nested Full,
Floyd, Dijkstra(Cache), Vivaldi (hosts, or peers) and routing="Cluster" zones (cabinets, host_links,
backbones), flat clusters and (in their own test) TORUS, FAT_TREE and DRAGONFLY clusters, with
every kind of link, constant link profiles, bypass routes inside zones and between zones at any
depth, and on the hand-made platforms: the latency of each route (bit for bit, as Host::route_to
sums it), its links (by name, bandwidth and latency, with multiplicity; on the topology platforms,
between every pair, in order, with their sharing policy), and the clock when one 1-byte message has
crossed it (our kernel against SimGrid's engine). What SimGrid refuses, or what changes a link during
the run, is refused with its line (no SimGrid needed)."""

from __future__ import annotations

import itertools
import math
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from schedlab.engine.batsim_kernel import Kernel, put, sleep_for
from schedlab.engine.batsim_network import l07_route
from schedlab.engine.simgrid_routing import Routing
from schedlab.engine.simgrid_zones import Link, Unmodelled, Zones, parse_xml
from schedlab.platform import load_platform
from tests.helpers.data import THOROUGH

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
    """A random platform, written in the order SimGrid's DTD wants (with topology clusters among its
    zones of hosts when `topologies`; without, the same seed gives the same platform as before them)."""

    def __init__(self, rng: random.Random, topologies: bool = False) -> None:
        self.rng, self.count, self.topologies = rng, 0, topologies
        self.files: dict[str, str] = {}  # profile files to write beside the platform

    def profile(self, value: float) -> str:
        """A profile file that leaves `value`, or sets another one, from time 0 (SimGrid names it by its
        file name, so each is used once)."""
        name, rng = f"{self.name('profile')}.txt", self.rng
        lines = [f"0 {rng.choice([value, value * 3, value / 7])!r}" for _ in range(rng.randint(1, 2))]
        self.files[name] = "\n".join(["# from time 0", *lines, ""])
        return name

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def link(self, links: list[str], policy: str | None = None) -> tuple[str, str]:
        """A new link's XML and a link_ctn for it (a split-duplex one with a random direction)."""
        rng, name = self.rng, self.name("l")
        policy = policy or rng.choice(["SHARED", "SHARED", "FATPIPE", "SPLITDUPLEX"])
        bw, unit = rng.choice([1, 10, 25, 100]), rng.choice(["Gbps", "MBps"])
        lat, lat_unit = rng.randint(1, 400), rng.choice(["us", "ns", "ms"])
        files = "".join((f' bandwidth_file="{self.profile(bw * (1.25e8 if unit == "Gbps" else 1e6))}"'
                         if rng.random() < 0.1 else "",
                         f' latency_file="{self.profile(lat * {"us": 1e-6, "ns": 1e-9, "ms": 1e-3}[lat_unit])}"'
                         if rng.random() < 0.1 else ""))
        links.append(f'<link id="{name}" bandwidth="{bw}{unit}" latency="{lat}{lat_unit}" sharing_policy="{policy}"'
                     f'{files}/>')
        direction = f' direction="{rng.choice(["UP", "DOWN"])}"' if policy == "SPLITDUPLEX" else ""
        return name, f'<link_ctn id="{name}"{direction}/>'

    def route(self, src: str, dst: str, links: list[str], tag: str = "route", gateways: str = "") -> str:
        body = "".join(self.link(links)[1] for _ in range(self.rng.randint(1, 2)))
        return f'<{tag} src="{src}" dst="{dst}"{gateways}>{body}</{tag}>'

    def leaf(self) -> tuple[str, str]:
        """A zone of hosts of a random kind: its XML and a gateway (a router or host of it)."""
        rng = self.rng
        kind = rng.choice(["Full", "Floyd", "Dijkstra", "DijkstraCache", "Vivaldi", "cluster", "peers", "Cluster",
                           *(("TORUS", "FAT_TREE", "DRAGONFLY") if self.topologies else ())])
        if kind in ("TORUS", "FAT_TREE", "DRAGONFLY"):
            return self.topology(kind)
        zone = self.name("z")
        if kind == "peers":  # a Vivaldi zone of <peer>s only (no router beside them: a peer is the gateway)
            peers = [self.name("p") for _ in range(rng.randint(1, 4))]
            body = "".join(f'<peer id="{p}" speed="1Gf" bw_in="{rng.randint(1, 40)}Gbps" '
                           f'bw_out="{rng.randint(1, 900)}MBps" coordinates="{rng.uniform(-300, 300):.3f} '
                           f'{rng.uniform(-300, 300):.3f} {rng.uniform(0, 2):.2f}"/>' for p in peers)
            return f'<zone id="{zone}" routing="Vivaldi">{body}</zone>', rng.choice(peers)
        if kind == "Cluster":  # a routing="Cluster" zone: cabinets, hosts with host_links, maybe a backbone
            hosts, links = [self.name("h") for _ in range(rng.randint(0, 2))], []
            body = "".join(f'<host id="{h}" speed="1Gf"/>' for h in hosts) + f'<router id="{zone}_gw"/>'
            for host in hosts:
                up, down = self.link(links, "SHARED")[0], self.link(links, rng.choice(["SHARED", "FATPIPE"]))[0]
                links.append(f'<host_link id="{host}" up="{up}" down="{rng.choice([up, down])}"/>')
            body += "".join(links) + "".join(
                f'<cabinet id="cab" prefix="{zone}c{i}-" suffix="" speed="1Gf" bw="{rng.randint(1, 40)}Gbps" '
                f'lat="{rng.randint(1, 90)}us" radical="0-{rng.randint(0, 2)}"/>' for i in range(rng.randint(1, 2)))
            if rng.random() < 0.7:
                body += (f'<backbone id="{zone}_bb" bandwidth="{rng.randint(1, 40)}Gbps" '
                         f'latency="{rng.randint(1, 500)}us"/>')
            return f'<zone id="{zone}" routing="Cluster">{body}</zone>', rng.choice([f"{zone}_gw", *hosts,
                                                                                        f"{zone}c0-0"])
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
            bypasses = self.bypasses([*hosts, router], links)
            body += (f'<router id="{router}" {where()}/>' + "".join(links)
                     + f'<host_link id="{hosts[0]}" up="{up}" down="{down}"/>' + bypasses)
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
        routes.append(self.bypasses(hosts + routers, links))
        body = ("".join(f'<host id="{h}" speed="1Gf" core="{rng.choice([1, 4])}"/>' for h in hosts)
                + "".join(f'<router id="{r}"/>' for r in routers) + "".join(links) + "".join(routes))
        return f'<zone id="{zone}" routing="{kind}">{body}</zone>', routers[0]

    def topology(self, kind: str) -> tuple[str, str]:
        """A TORUS, FAT_TREE or DRAGONFLY cluster that SimGrid builds (no two links of one name, no
        route past a dragonfly's blades) and a host of it as gateway (it has no router)."""
        rng, zone = self.rng, self.name("z")
        limiter_ok = True
        if kind == "TORUS":  # a dimension of size 1 links a host to itself: two would share a name
            dims = [rng.randint(2, 4) for _ in range(rng.randint(1, 2))] + [1] * (rng.random() < 0.3)
            rng.shuffle(dims)
            parameters, count = ",".join(map(str, dims)), math.prod(dims)
        elif kind == "FAT_TREE":
            levels = rng.randint(1, 3)
            down, up, ports = ([rng.randint(1, 3) for _ in range(levels)] for _ in range(3))
            down[0] = max(down[0], 2)
            parameters = f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};{','.join(map(str, ports))}"
            count = math.prod(down)
            switches = sum(math.prod(up[:i + 1]) * math.prod(down[i + 1:]) for i in range(levels))
            limiter_ok = switches <= count  # switches' limiters are numbered down from 2 x hosts
        else:
            blades = rng.randint(1, 3)
            groups, chassis, nodes = rng.randint(1, blades), rng.randint(1, 2), rng.randint(1, 2)
            parameters = (f"{groups},{rng.randint(1, 3)};{chassis},{rng.randint(1, 3)};{blades},{rng.randint(1, 3)};"
                          f"{nodes}")
            count = groups * chassis * blades * nodes
        policy = rng.choice(["SPLITDUPLEX", "SHARED", "FATPIPE", "FULLDUPLEX"])
        extra = "".join(text for text in (
            f' limiter_link="{rng.randint(1, 5)}Gbps"' if limiter_ok and rng.random() < 0.4 else "",
            f' loopback_bw="{rng.randint(1, 9)}GBps" loopback_lat="{rng.randint(0, 9)}us"'
            if rng.random() < 0.4 else "",
            ' router_id="ignored" bb_bw="1Gbps" bb_lat="1us"' if rng.random() < 0.2 else ""))
        first = rng.choice([0, 3])
        radical = f"{first}-{first + count - 1 + rng.randint(0, 2)}"  # the radicals past `count` make no host
        xml = (f'<cluster id="{zone}" prefix="{zone}-" suffix=".t" radical="{radical}" speed="1Gf" '
               f'bw="{rng.randint(1, 20)}Gbps" lat="{rng.randint(0, 90)}us" topology="{kind}" '
               f'topo_parameters="{parameters}" sharing_policy="{policy}"{extra}/>')
        return xml, f"{zone}-{first + rng.randrange(count)}.t"

    def bypasses(self, points: list[str], links: list[str]) -> str:
        """Sometimes a <bypassRoute> or two between netpoints of a zone (a netpoint to itself too)."""
        pairs = {(self.rng.choice(points), self.rng.choice(points)) for _ in range(self.rng.choice([0, 0, 1, 2]))}
        return "".join(self.route(a, b, links, "bypassRoute") for a, b in sorted(pairs))

    def group(self, depth: int, top: bool = False) -> tuple[str, str, str, list[tuple[str, str]]]:
        """A zone of zones (or, below the top, sometimes a leaf): XML, gateway, id, and each zone of
        it with a gateway in it. Its members are joined pairwise by zoneRoutes, so that every pair of
        hosts has a route; sometimes a <bypassZoneRoute> joins zones of two members (at any depth)."""
        if depth == 0 or (not top and self.rng.random() < 0.5):
            xml, gateway = self.leaf()
            return xml, gateway, xml.split('"')[1], [(xml.split('"')[1], gateway)]
        zone, members, links = self.name("g"), [self.group(depth - 1) for _ in range(self.rng.randint(2, 3))], []
        routes = [self.route(a[2], b[2], links, "zoneRoute", f' gw_src="{a[1]}" gw_dst="{b[1]}"')
                  for a, b in itertools.pairwise(members)]
        first = members[0]
        routes += [self.route(first[2], m[2], links, "zoneRoute", f' gw_src="{first[1]}" gw_dst="{m[1]}"')
                   for m in members[2:]]
        bypassed = set()
        for _ in range(self.rng.choice([0, 1, 2])):
            a, b = self.rng.sample(members, 2)
            (src, gw_src), (dst, gw_dst) = self.rng.choice(a[3]), self.rng.choice(b[3])
            if (src, dst) not in bypassed:
                bypassed.add((src, dst))
                routes.append(self.route(src, dst, links, "bypassZoneRoute", f' gw_src="{gw_src}" gw_dst="{gw_dst}"'))
        body = "".join(m[0] for m in members) + "".join(links) + "".join(routes)
        return (f'<zone id="{zone}" routing="Full">{body}</zone>', first[1], zone,
                [(zone, first[1]), *(sub for m in members for sub in m[3])])

    def xml(self) -> str:
        body, _, _, _ = self.group(depth=2, top=True)
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
            links = (word.split("/") for word in words[3:])  # name, bandwidth, latency, sharing policy
            routes.append((float(words[2]), sorted((name, float(bw), float(lat)) for name, bw, lat, _ in links)))
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


def compare(oracle: Path, path: Path, to_master: bool = False, master: str = "master_host") -> int:
    """Every host to one of them (to the master's, for platforms made for Batsim, whose other pairs
    may have no route), and a few random pairs."""
    root, lines = parse_xml(path.read_text())
    zones = Zones(root, lines, path.parent)
    routing = Routing(zones)
    hosts = sorted(zones.host_roles)
    rng = random.Random(path.name)
    if to_master:
        target = next(h for h, role in zones.host_roles.items() if role == "master" or h == master)
        pairs = [(host, target) for host in hosts]
    else:
        target = rng.choice(hosts)
        pairs = [(host, target) for host in hosts] + [(rng.choice(hosts), rng.choice(hosts)) for _ in range(3)]
    theirs, _ = simgrid_says(oracle, path, pairs)
    for (src, dst), (latency, names) in zip(pairs, theirs, strict=True):
        links, ours = routing.route(src, dst)
        assert (ours, sorted((link.name, link.bandwidth_bytes_per_s, link.latency_s) for link in links)) == (
            latency, names), (path.name, src, dst)
    for src, dst in rng.sample(pairs, 3):  # a message's arrival, to the bit
        _, arrived = simgrid_says(oracle, path, [(src, dst)])
        assert arrival(l07_route(*routing.route(src, dst))) == arrived, (path.name, src, dst)
    return len(pairs)


@pytest.mark.batsim
@pytest.mark.parametrize("seed", range(200 if THOROUGH else 15))
def test_random_platforms_route_as_simgrid(oracle, tmp_path, seed):
    path = tmp_path / f"random{seed}.xml"
    platform = _Platform(random.Random(seed))
    path.write_text(platform.xml())
    for name, text in platform.files.items():
        (tmp_path / name).write_text(text)
    assert compare(oracle, path) > 3


@pytest.mark.batsim
@pytest.mark.parametrize("seed", range(200 if THOROUGH else 15))
def test_random_platforms_with_topology_clusters_route_as_simgrid(oracle, tmp_path, seed):
    path = tmp_path / f"random{seed}.xml"
    platform = _Platform(random.Random(f"topologies{seed}"), topologies=True)
    path.write_text(platform.xml())
    for name, text in platform.files.items():
        (tmp_path / name).write_text(text)
    assert compare(oracle, path) > 3


@pytest.mark.batsim
@pytest.mark.parametrize("name", sorted(p.stem for p in HAND_MADE.glob("*.xml")))
def test_hand_made_platforms_route_as_simgrid(oracle, name):
    assert compare(oracle, HAND_MADE / f"{name}.xml", to_master=True) > 3


@pytest.mark.batsim
@pytest.mark.traces
@pytest.mark.parametrize("name", ["cluster_locality_4x128", "cluster_locality_8x16", "cluster_locality_8x64",
                                  "cluster_locality_32x16"])
def test_batsims_cluster_zone_platforms_route_as_simgrid(oracle, name):
    """Batsim 4.2.1's example platforms of routing="Cluster" zones (real Batsim refuses them only for
    their lack of a host named master_host): every host to master_host0, and random pairs."""
    from tests.helpers.data import BATSIM_V4

    path = BATSIM_V4 / "platforms" / f"{name}.xml"
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared/data)")
    root, lines = parse_xml(path.read_text())
    assert "master_host0" in Zones(root, lines, path.parent).host_roles
    assert compare(oracle, path, to_master=True, master="master_host0") > 100


def _zones(tmp_path: Path, body: str, files: dict[str, str] | None = None) -> Zones:
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    root, lines = parse_xml(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n{body}\n</platform>\n")
    return Zones(root, lines, tmp_path)


_FULL = ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>{links}'
         '<route src="a" dst="b"><link_ctn id="l"/></route></zone>')


@pytest.mark.parametrize(("links", "files", "why"), [
    ('<link id="l" bandwidth="1Gbps" latency="0" latency_file="p"/>', {"p": "0 1e-5\n10 1e-5\n"}, "at t=10.0 s"),
    ('<link id="l" bandwidth="1Gbps" latency="0" latency_file="p"/>', {"p": "PERIODICITY 10\n0 0\n"},
     "each repetition"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="p"/>', {"p": "LOOPAFTER 0\n0 1\n"}, "without end"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="p"/>', {"p": "STOCHASTIC\nDET 0 NORM 1 2\n"},
     "random"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="p"/>', {"p": "5 1\n1 1\n"}, "sorted"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="/tmp/p"/>', {}, "absolute path"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="absent"/>', {}, "cannot find"),
    ('<link id="l" bandwidth="1Gbps" latency="0" bandwidth_file="p" latency_file="p"/>', {"p": "0 1\n"}, "twice"),
    ('<link id="l" bandwidth="1Gbps" latency="0" state_file="p"/>', {"p": "0 1\n"}, "state_file"),
    ('<link id="l" bandwidth="1Gbps"/>', {}, "no latency"),
    ('<link id="l" bandwidth="1Gbps" latency="0"/><trace id="t" periodicity="-1">0 1</trace>'
     '<trace_connect kind="LATENCY" trace="t" element="l"/>', {}, "once the Link is sealed"),
])
def test_link_profiles_that_change_the_link_are_refused(tmp_path, links, files, why):
    """What SimGrid 3.32 aborts on, or what changes a link during the run (each seen in SimGrid)."""
    with pytest.raises(Unmodelled, match=why) as error:
        _zones(tmp_path, _FULL.format(links=links), files)
    assert error.value.line == 3


def test_a_profile_from_time_0_replaces_the_value(tmp_path):
    """LinkL07::apply_event: the last value dated 0 replaces the link's (bytes/s, s), split-duplex halves both."""
    zones = _zones(tmp_path, _FULL.replace('<link_ctn id="l"/>', '<link_ctn id="l" direction="UP"/>').format(
        links='<link id="l" bandwidth="1Gbps" latency="1us" sharing_policy="SPLITDUPLEX" bandwidth_file="b" '
              'latency_file="l"/>'), {"b": "# bytes/s\n0 5\n0 12500000\n", "l": "% s\n\n0 0.002\n"})
    assert zones.links["l"] == (Link("l_UP", 12500000.0, 0.002), Link("l_DOWN", 12500000.0, 0.002))


@pytest.mark.parametrize(("body", "why"), [
    ('<zone id="z" routing="Full"><peer id="p" speed="1Gf" bw_in="1Gbps" bw_out="1Gbps" coordinates="0 0 0"/></zone>',
     "only be used in Vivaldi"),
    ('<zone id="z" routing="Vivaldi"><peer id="p" speed="1Gf" bw_in="1Gbps" bw_out="1Gbps" coordinates="0 0 0"/>'
     '<host id="h" speed="1Gf" coordinates="0 0 0"/></zone>', "both peers and hosts"),
    ('<zone id="z" routing="Vivaldi"><peer id="p" speed="1Gf" bw_in="1Gbps" bw_out="1Gbps"/></zone>', "coordinates"),
])
def test_peers_simgrid_refuses_are_refused(tmp_path, body, why):
    with pytest.raises(Unmodelled, match=why) as error:
        _zones(tmp_path, body)
    assert error.value.line is not None


def test_peers_are_compute_resources_numbered_as_batsim_does():
    """A <peer> is a host (Batsim lists it; no props, so no role): names sorted as strings, master left out."""
    platform = load_platform(HAND_MADE / "peers.xml")
    assert platform.resource_names == ("p0", "p1", "p10", "p2", "p3", "p4", "p5")


_ZONES = ('<zone id="top" routing="Full"><zone id="x" routing="Full"><host id="a" speed="1Gf"/></zone>'
          '<zone id="y" routing="Full"><host id="b" speed="1Gf"/></zone><link id="l" bandwidth="1Gbps" latency="0"/>'
          '<zoneRoute src="x" dst="y" gw_src="a" gw_dst="b"><link_ctn id="l"/></zoneRoute>{bypass}</zone>')


@pytest.mark.parametrize(("bypass", "why"), [
    ('<bypassZoneRoute src="x" dst="y" gw_src="a" gw_dst="b"></bypassZoneRoute>', "empty bypass"),
    ('<bypassZoneRoute src="x" dst="y" gw_src="a" gw_dst="b"><link_ctn id="l"/></bypassZoneRoute>' * 2, "second"),
    ('<bypassZoneRoute src="x" dst="w" gw_src="a" gw_dst="b"><link_ctn id="l"/></bypassZoneRoute>', "'w' does not"),
    ('<bypassZoneRoute src="x" dst="y" gw_src="b" gw_dst="a"><link_ctn id="l"/></bypassZoneRoute>', "gateway 'b'"),
    ('<bypassRoute src="a" dst="b"><link_ctn id="l"/></bypassRoute>', "zones of hosts"),
])
def test_bypass_routes_simgrid_refuses_are_refused(tmp_path, bypass, why):
    with pytest.raises(Unmodelled, match=why) as error:
        _zones(tmp_path, _ZONES.format(bypass=bypass))
    assert error.value.line == 3


@pytest.mark.parametrize(("body", "why"), [
    ('<zone id="z" routing="Full"><cabinet id="c" prefix="c" suffix="" speed="1Gf" bw="1Gbps" lat="1us" '
     'radical="0-1"/></zone>', "outside a routing"),
    ('<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
     '<link id="l" bandwidth="1Gbps" latency="0"/><route src="a" dst="b"><link_ctn id="l"/></route></zone>',
     "in a routing"),
    ('<zone id="z" routing="Cluster"><zone id="y" routing="Full"><host id="a" speed="1Gf"/></zone></zone>',
     "with sub-zones"),
    ('<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><link id="l" bandwidth="1Gbps" '
     'latency="0" sharing_policy="SPLITDUPLEX"/><host_link id="a" up="l" down="l_DOWN"/></zone>', "split-duplex link"),
    ('<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><link id="l" bandwidth="1Gbps" latency="0"/>'
     '<host_link id="b" up="l" down="l"/></zone>', "no host is named"),
    ('<zone id="z" routing="Cluster"><link id="link_c0_UP" bandwidth="1Gbps" latency="0"/><cabinet id="c" '
     'prefix="c" suffix="" speed="1Gf" bw="1Gbps" lat="1us" radical="0-1"/></zone>', "two links named 'link_c0_UP'"),
])
def test_cluster_zones_simgrid_refuses_are_refused(tmp_path, body, why):
    with pytest.raises(Unmodelled, match=why) as error:
        _zones(tmp_path, body)
    assert error.value.line == 3


def test_a_host_link_read_elsewhere_goes_to_the_same_rank_of_the_next_cluster_zone(tmp_path):
    """sg_platf.cpp keeps <host_link>s for the next routing="Cluster" zone, whose StarZone keys routes by
    the netpoint's rank in its own zone (seen in SimGrid 3.32: the random platform of seed 90)."""
    zones = _zones(tmp_path, '<zone id="top" routing="Full"><zone id="v" routing="Vivaldi">'
                   '<host id="h" speed="1Gf" coordinates="0 0 0"/><link id="l" bandwidth="1Gbps" latency="0"/>'
                   '<host_link id="h" up="l" down="l"/></zone><zone id="c" routing="Cluster"><router id="gw"/>'
                   '</zone></zone>')
    assert zones.zones["c"].up["gw"] == [Link("l", 1.25e8, 0.0)] and "h" not in zones.zones["v"].up


TOPOLOGY_PLATFORMS = ("torus", "fat_tree", "dragonfly")


@pytest.mark.batsim
@pytest.mark.parametrize("name", TOPOLOGY_PLATFORMS)
def test_topology_clusters_route_as_simgrid_between_every_pair(oracle, name):
    """Every pair of hosts (through zoneRoutes too): the latency to the bit, the links in SimGrid's
    order with their multiplicity, and each link's sharing policy (SimGrid's FATPIPE is 0)."""
    path = HAND_MADE / f"{name}.xml"
    root, lines = parse_xml(path.read_text())
    routing = Routing(Zones(root, lines, path.parent))
    hosts = sorted(routing.zones.host_roles)
    pairs = list(itertools.product(hosts, repeat=2))
    done = subprocess.run([str(oracle), str(path), *(f"{a}:{b}" for a, b in pairs), "--log=root.thres:critical"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = [(float(words[2]), [(link, float(bw), float(lat), int(policy))
                                 for link, bw, lat, policy in (word.split("/") for word in words[3:])])
              for words in (line.split() for line in done.stdout.splitlines() if line.startswith("route "))]
    for (src, dst), expected in zip(pairs, theirs, strict=True):
        links, latency = routing.route(src, dst)
        assert (latency, [(link.name, link.bandwidth_bytes_per_s, link.latency_s, 0 if link.fatpipe else 1)
                          for link in links]) == expected, (name, src, dst)
    for src, dst in random.Random(name).sample(pairs, 3):  # a message's arrival, to the bit
        _, arrived = simgrid_says(oracle, path, [(src, dst)])
        assert arrival(l07_route(*routing.route(src, dst))) == arrived, (name, src, dst)


def test_topology_clusters_make_the_hosts_batsim_numbers():
    """One host per leaf of the topology, from the first radicals; names sorted as strings."""
    for name in TOPOLOGY_PLATFORMS:
        path = HAND_MADE / f"{name}.xml"
        root, lines = parse_xml(path.read_text())
        zones = Zones(root, lines, path.parent)
        assert load_platform(path).resource_names == tuple(sorted(h for h in zones.host_roles if h != "master_host"))
    ring = [name for name in load_platform(HAND_MADE / "torus.xml").resource_names if name.startswith("r")]
    assert sorted(ring) == sorted(f"r{n}.x" for n in (2, 3, 4, 5, 6, 10, 11, 12, 13, 14))  # 5x2: r15, r16 unused


_TOPOLOGY = '<zone id="z" routing="Full"><cluster id="c" prefix="h" suffix="" speed="1Gf" {attributes}/></zone>'
#: (attributes, why): each seen refused by SimGrid 3.32 (test_simgrid_refuses_these_topology_clusters)
_REFUSED_TOPOLOGIES = [
    ('radical="0-2" bw="1Gbps" lat="1us" topology="TORUS" topo_parameters="2,2"', "Insufficient number of radicals"),
    ('radical="0-3" bw="0" lat="1us" topology="TORUS" topo_parameters="2,2"', "bw <= 0"),
    ('radical="0-3" bw="1Gbps" lat="-1us" topology="TORUS" topo_parameters="2,2"', "lat < 0"),
    ('radical="0-3" bw="0Gbps" lat="1us" topology="FAT_TREE" topo_parameters="1;4;1;1"', "bw <= 0"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="TORUS" topo_parameters=""', "no number"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="TORUS" topo_parameters="2,0"', "must be > 0"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="FAT_TREE" topo_parameters="1;4;1"', "4 parts"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="FAT_TREE" topo_parameters="2;4;1,1;1,1"', "needs 2 value"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="FAT_TREE" topo_parameters="1;4;0;1"', "must be > 0"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="DRAGONFLY" topo_parameters="1,1;1,1;1;4"', "needs 2 value"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="DRAGONFLY" topo_parameters="1,1;1,1;1,0;4"', "must be > 0"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="TORUS" topo_parameters="4,1,1"',
     "two links named 'c_link_from_0_to_0_UP'"),
    ('radical="0-1" bw="1Gbps" lat="1us" topology="FAT_TREE" topo_parameters="1;2;4;1" limiter_link="1Gbps"',
     "two links named 'c_link_1_limiter'"),
    ('radical="0-3" bw="1Gbps" lat="1us" topology="RING" topo_parameters="4"', "none of FLAT"),
]


@pytest.mark.parametrize(("attributes", "why"), _REFUSED_TOPOLOGIES)
def test_topology_clusters_simgrid_refuses_are_refused(tmp_path, attributes, why):
    with pytest.raises(Unmodelled, match=why) as error:
        _zones(tmp_path, _TOPOLOGY.format(attributes=attributes))
    assert error.value.line == 3


def test_a_dragonfly_route_past_its_blades_is_refused(tmp_path):
    """3 groups, 2 blades a chassis: SimGrid 3.32 reads a router's green link for group 2 past the
    end of its vector (it crashes: test_simgrid_refuses_these_topology_clusters); routes to the
    other groups are fine."""
    routing = Routing(_zones(tmp_path, _TOPOLOGY.format(
        attributes='radical="0-11" bw="1Gbps" lat="1us" topology="DRAGONFLY" topo_parameters="3,1;2,1;2,1;1"')))
    assert routing.route("h4", "h0")[0][1].name == "blue_link_between_group_0_and_1_routers_1_and_4_24_DOWN"
    with pytest.raises(Unmodelled, match="past the 2 blades"):
        routing.route("h0", "h11")


@pytest.mark.batsim
@pytest.mark.parametrize("attributes", [case[0] for case in _REFUSED_TOPOLOGIES] + [
    'radical="0-11" bw="1Gbps" lat="1us" topology="DRAGONFLY" topo_parameters="3,1;2,1;2,1;1"'])
def test_simgrid_refuses_these_topology_clusters(oracle, tmp_path, attributes):
    """The refusals' reasons, seen: SimGrid 3.32 aborts on each (the dragonfly crashes on h0 -> h11)."""
    path = tmp_path / "refused.xml"
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n{_TOPOLOGY.format(attributes=attributes)}\n"
                    "</platform>\n")
    done = subprocess.run([str(oracle), str(path), "h0:h11" if "3,1;2,1" in attributes else "h0:h1",
                           "--log=root.thres:critical"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "route 0" not in done.stdout
