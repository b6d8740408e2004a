"""Generate SimGrid platform XML that real Batsim 4.2.1 loads, with ids in numeric order.

Batsim numbers compute resources by host name sorted as strings, so `node2` would come after
`node10`. SimGrid `<cluster>` radicals cannot zero-pad, so resources are split into one cluster per
number of digits, whose prefixes carry the padding (`node0000` + 0-9, `node000` + 10-99, ...): every
name has the same width, string order equals numeric order, and the file stays a few KB even for
15,680 resources. Clusters and the master host are joined by zone routes over a backbone (Batsim
needs a route from each host to the master).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from schedlab.errors import InputError


def _digit_groups(count: int) -> list[tuple[int, int, int]]:
    """(digits, first, last) ranges covering 0..count-1."""
    groups, first, digits = [], 0, 1
    while first < count:
        last = min(count - 1, 10**digits - 1)
        groups.append((digits, first, last))
        first, digits = last + 1, digits + 1
    return groups


def cluster_xml(nb_resources: int, *, prefix: str = "node", speed: str = "1Gf", bandwidth: str = "125MBps",
                latency: str = "50us", cores_per_resource: int = 1, comment: str = "") -> str:
    """A platform of `nb_resources` compute hosts (`prefix` + zero-padded number) and `master_host0`."""
    if nb_resources <= 0 or cores_per_resource <= 0:
        raise InputError("--hosts and --cores-per-host must be > 0")
    width = len(str(nb_resources - 1))
    attrs = (f"speed={quoteattr(speed)} bw={quoteattr(bandwidth)} lat={quoteattr(latency)} "
             f'bb_bw="10GBps" bb_lat="500us"')
    zones: list[tuple[str, str]] = []
    lines: list[str] = []
    for digits, first, last in _digit_groups(nb_resources):
        zone_id, zone_prefix = f"compute{digits}", prefix + "0" * (width - digits)
        core = f' core="{cores_per_resource}"' if cores_per_resource > 1 else ""
        lines.append(f'    <cluster id="{zone_id}" prefix="{zone_prefix}" suffix="" radical="{first}-{last}"{core} '
                     f"{attrs}/>")
        zones.append((zone_id, zone_prefix))
    lines.append(f'    <cluster id="master" prefix="master_host" suffix="" radical="0-0" {attrs}>')
    lines.append('      <prop id="role" value="master"/>')
    lines.append("    </cluster>")
    lines.append('    <link id="backbone" bandwidth="10GBps" latency="500us"/>')
    zones.append(("master", "master_host"))
    for i, (src, src_prefix) in enumerate(zones):
        for dst, dst_prefix in zones[i + 1:]:
            lines.append(f'    <zoneRoute src="{src}" dst="{dst}" gw_src="{src_prefix}{src}_router" '
                         f'gw_dst="{dst_prefix}{dst}_router"><link_ctn id="backbone"/></zoneRoute>')
    note = f"<!-- {comment} -->\n" if comment else ""
    names = f"{prefix}{'0' * width}-{prefix}{nb_resources - 1}"
    body = "\n".join(lines)
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- schedlab platform: {nb_resources} compute resources ({names}), master_host0 -->
{note}<platform version="4.1">
  <zone id="AS0" routing="Full">
{body}
  </zone>
</platform>
"""


def slow_master_xml(nb_hosts: int, master_message_s: float = 0.5) -> str:
    """A Vivaldi zone of `nb_hosts` compute hosts and a master far from them: a message from the
    master to itself takes exactly `master_message_s` (latency only: Vivaldi routes have no links),
    one from a compute host half of it plus up to a millisecond. For wake-ups on slow platforms
    (`scheduler check`, schedulers.wakeups)."""
    if nb_hosts <= 0 or not master_message_s > 0:
        raise InputError("a slow-master platform needs hosts and a message time > 0")
    width = len(str(nb_hosts - 1))
    height_ms = master_message_s * 1000.0 / 2.0  # latency = (distance + both heights) / 1000 s
    hosts = "\n".join(f'    <host id="node{i:0{width}d}" speed="1Gf" '
                      f'coordinates="{i % 32 * 0.03:g} {i // 32 * 0.03:g} 0"/>' for i in range(nb_hosts))
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- schedlab platform: {nb_hosts} compute hosts, a master whose messages to itself take {master_message_s:g} s -->
<platform version="4.1">
  <zone id="far" routing="Vivaldi">
    <host id="master_host" speed="1Gf" coordinates="0 0 {height_ms!r}"/>
{hosts}
  </zone>
</platform>
"""


def machine_xml(nb_hosts: int, cores_per_host: int = 1, *, resource_per: str = "core", comment: str = "") -> str:
    """A machine of `nb_hosts` x `cores_per_host`: one Batsim resource per core (default), the
    allocation unit of core-level studies, or one per host (`resource_per="host"`)."""
    if resource_per == "core":
        return cluster_xml(nb_hosts * cores_per_host, prefix="core", comment=comment)
    if resource_per == "host":
        return cluster_xml(nb_hosts, prefix="node", cores_per_resource=cores_per_host, comment=comment)
    raise InputError(f"resource_per must be 'core' or 'host', got {resource_per!r}")
