"""Read SimGrid platform XML files the way Batsim 4.2.1 numbers their compute resources.

Batsim's compute resources are the hosts that are neither the master host nor storage, and their ids
follow SimGrid's host list: host names sorted as strings (cluster512: 0=a0, 1=a1, 2=a10, 3=a100, ...).
Hosts are `<host>`s, `<peer>`s and the hosts of `<cluster>`s and `<cabinet>`s (a TORUS, FAT_TREE or
DRAGONFLY cluster makes as many hosts as its topology has leaves, from the first radicals).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from schedlab.errors import InputError
from schedlab.model import Platform

DEFAULT_MASTER_HOST = "master_host"
_RADICAL_PART = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
_STOI = re.compile(r"\s*([+-]?\d+)")  # what std::stoi reads (the rest of the text is ignored)
TOPOLOGIES = ("TORUS", "FAT_TREE", "DRAGONFLY")  # <cluster topology=...> other than FLAT


def host_roles(element: ET.Element) -> set[str]:
    """The roles of a host or cluster: its `role` props, each a comma-separated list (Batsim's form)."""
    roles: set[str] = set()
    for prop in element.findall("prop"):
        if prop.get("id") == "role":
            roles.update(r.strip() for r in (prop.get("value") or "").split(",") if r.strip())
    return roles


def radical_numbers(radical: str) -> list[int] | None:
    """The host numbers of a cluster's `radical` ("0-3,7"), or None when it cannot be read."""
    numbers: list[int] = []
    for part in radical.split(","):
        match = _RADICAL_PART.match(part)
        if match is None:
            return None
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            return None
        numbers.extend(range(first, last + 1))
    return numbers


def _stoi(text: str) -> int:
    match = _STOI.match(text)
    if match is None:
        raise ValueError(f"{text!r} is no number (std::stoi throws)")
    value = int(match.group(1))
    if value <= 0:  # SimGrid refuses 0; a negative one wraps around in its unsigned fields
        raise ValueError(f"{text!r}: each value must be > 0")
    return value


def _counts(text: str, size: int | None, what: str) -> list[int]:
    parts = text.split(",")
    if size is not None and len(parts) != size:
        raise ValueError(f"{what} needs {size} value(s), got {len(parts)}")
    return [_stoi(part) for part in parts]


def topology_parameters(topology: str, text: str) -> list[list[int]]:
    """A topology cluster's topo_parameters as SimGrid 3.32 reads them (TorusZone, FatTreeZone and
    DragonflyZone::parse_topo_parameters): TORUS "d1,...,dn" gives [[d1, ..., dn]]; FAT_TREE
    "h;m1,..,mh;w1,..,wh;p1,..,ph" gives [[h], m, w, p]; DRAGONFLY "g,blue;c,black;b,green;n" gives
    [[g, blue], [c, black], [b, green], [n]]. ValueError for what SimGrid refuses (or what wraps
    around in its unsigned fields: negative values)."""
    if topology == "TORUS":
        return [_counts(text, None, "TORUS")]
    parts = text.split(";")
    if len(parts) != 4:
        raise ValueError(f"{topology} topo_parameters need 4 parts separated by ';', got {len(parts)}")
    if topology == "FAT_TREE":
        levels = _stoi(parts[0])
        return [[levels], *(_counts(part, levels, "each FAT_TREE vector") for part in parts[1:])]
    if topology == "DRAGONFLY":
        return [*(_counts(part, 2, "each DRAGONFLY level") for part in parts[:3]), [_stoi(parts[3])]]
    raise ValueError(f"topology {topology!r} is none of FLAT, {', '.join(TOPOLOGIES)}")


def topology_host_count(topology: str, parameters: list[list[int]]) -> int:
    """How many hosts SimGrid 3.32 makes for these parameters (the leaves of the topology)."""
    if topology == "TORUS":
        factors = parameters[0]
    elif topology == "FAT_TREE":
        factors = parameters[1]
    else:
        factors = [parameters[0][0], parameters[1][0], parameters[2][0], parameters[3][0]]
    return math.prod(factors)


def _expand_radical(radical: str, path: str, line: int | None) -> list[int]:
    numbers = radical_numbers(radical)
    if numbers is None:
        raise InputError(f"bad cluster radical {radical!r}", path=path, line=line, field="radical")
    return numbers


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1


def _topology_hosts(element: ET.Element, topology: str, names: list[str], path: str, line: int | None) -> list[str]:
    """The hosts SimGrid makes for a topology cluster: one per leaf, from the first radicals (the
    others are left unused; too few makes SimGrid abort)."""
    try:
        count = topology_host_count(topology, topology_parameters(topology, element.get("topo_parameters", "")))
    except ValueError as exc:
        raise InputError(f"cluster {element.get('id')!r}: topo_parameters: {exc}", path=path, line=line,
                         field="topo_parameters") from None
    if len(names) < count:
        raise InputError(f"cluster {element.get('id')!r}: its {topology} topology has {count} hosts but the radical "
                         f"names {len(names)}", path=path, line=line, field="radical")
    return names[:count]


def parse_platform_xml(text: str, path: str = "<string>", *,
                       master_host: str = DEFAULT_MASTER_HOST) -> Platform:
    """Parse platform XML text; leading whitespace before `<?xml` is accepted (real files have it)."""
    stripped = text.lstrip()
    offset_lines = text[: len(text) - len(stripped)].count("\n")
    try:
        root = ET.fromstring(stripped)
    except ET.ParseError as exc:
        line = exc.position[0] + offset_lines
        raise InputError(f"malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}", path=path,
                         line=line) from None
    if root.tag != "platform":
        raise InputError(f"root element is <{root.tag}>, expected <platform>", path=path, line=1)
    compute: list[str] = []
    masters: list[str] = []
    for element in root.iter():
        if element.tag in ("host", "peer"):  # a <peer> is a host of a Vivaldi zone (props: none)
            name = element.get("id")
            if not name:
                raise InputError("host without id", path=path, field="id")
            roles = host_roles(element)
            names = [name]
        elif element.tag in ("cluster", "cabinet"):
            prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
            radical = element.get("radical")
            if radical is None:
                raise InputError(f"{element.tag} {element.get('id')!r} has no radical", path=path,
                                 line=_line_of(text, f'id="{element.get("id")}"'), field="radical")
            names = [f"{prefix}{n}{suffix}"
                     for n in _expand_radical(radical, path, _line_of(text, f'radical="{radical}"'))]
            topology = element.get("topology") or "FLAT"
            if element.tag == "cluster" and topology != "FLAT":
                names = _topology_hosts(element, topology, names, path, _line_of(text, f'id="{element.get("id")}"'))
            roles = host_roles(element)
        else:
            continue
        for name in names:
            if "master" in roles or name == master_host:
                masters.append(name)
            elif "storage" in roles:
                continue
            else:
                compute.append(name)
    if len(set(compute)) != len(compute):
        raise InputError("duplicate host names", path=path, field="id")
    if not compute:
        raise InputError("no compute host (every host is master or storage)", path=path)
    if len(masters) > 1:
        raise InputError(f"more than one master host: {', '.join(masters)}", path=path, field="role")
    return Platform(tuple(sorted(compute)), source=path)


def load_platform(path: str | Path, *, master_host: str = DEFAULT_MASTER_HOST) -> Platform:
    from schedlab.paths import read_input_text

    text = read_input_text(path, "a SimGrid platform XML file")
    return parse_platform_xml(text, str(path), master_host=master_host)
