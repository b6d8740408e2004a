"""Generate SimGrid platform XML that real Batsim 4.2.1 loads: one `<cluster>` of compute hosts plus a
master host, a simple star network (each host's private link to a backbone)."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr


def cluster_xml(nb_hosts: int, *, prefix: str = "host", speed: str = "1Gf", bandwidth: str = "125MBps",
                latency: str = "50us", cores_per_host: int = 1, zero_pad: bool = True) -> str:
    """A platform of `nb_hosts` compute hosts named so that Batsim's id order (names sorted as
    strings) equals the numeric order: names are zero-padded unless `zero_pad` is False."""
    if nb_hosts <= 0 or cores_per_host <= 0:
        raise ValueError("nb_hosts and cores_per_host must be > 0")
    width = len(str(nb_hosts - 1)) if zero_pad else 0
    # SimGrid clusters cannot zero-pad their radicals, so padded platforms list their hosts. The
    # master is found by its name (Batsim's --master-host default); a role prop too would make
    # Batsim read the role "master,master" and abort.
    if width > 1:
        hosts = "\n".join(
            f'    <host id="{prefix}{i:0{width}d}" speed={quoteattr(speed)} core="{cores_per_host}"/>'
            for i in range(nb_hosts))
        links = "\n".join(
            f'    <link id="l{i}" bandwidth={quoteattr(bandwidth)} latency={quoteattr(latency)}/>'
            for i in range(nb_hosts))
        routes = "\n".join(
            f'    <route src="master_host" dst="{prefix}{i:0{width}d}"><link_ctn id="l{i}"/>'
            f'<link_ctn id="backbone"/></route>' for i in range(nb_hosts))
        body = f"""  <zone id="AS0" routing="Full">
    <host id="master_host" speed={quoteattr(speed)}/>
{hosts}
    <link id="backbone" bandwidth="10GBps" latency="500us"/>
{links}
{routes}
  </zone>"""
    else:
        body = f"""  <zone id="AS0" routing="Full">
    <cluster id="compute" prefix="{prefix}" suffix="" radical="0-{nb_hosts - 1}" core="{cores_per_host}"
             speed={quoteattr(speed)} bw={quoteattr(bandwidth)} lat={quoteattr(latency)}
             bb_bw="10GBps" bb_lat="500us"/>
    <cluster id="master" prefix="master_host" suffix="" radical="0-0" speed={quoteattr(speed)}
             bw={quoteattr(bandwidth)} lat={quoteattr(latency)} bb_bw="10GBps" bb_lat="500us">
      <prop id="role" value="master"/>
    </cluster>
    <link id="backbone" bandwidth="10GBps" latency="500us"/>
    <zoneRoute src="compute" dst="master" gw_src="{prefix}compute_router" gw_dst="master_hostmaster_router">
      <link_ctn id="backbone"/>
    </zoneRoute>
  </zone>"""
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- schedlab platform: {nb_hosts} compute hosts ({cores_per_host} core(s) each) + master_host -->
<platform version="4.1">
{body}
</platform>
"""
