"""A link's `latency_file` / `bandwidth_file` as SimGrid 3.32 applies it under ptask_L07, kept only
when it leaves the link constant (simgrid_zones.py reads the links).

SimGrid reads the file when it parses the link (ProfileBuilder::from_file: `DATE VALUE` lines in
increasing absolute dates, `#` or `%` comments, `PERIODICITY p` or `LOOPAFTER d` to repeat the
pattern), and applies the events dated 0 when the platform is created (EngineImpl::presolve), before
any actor runs. Under L07 (LinkL07::apply_event) a value replaces the link's bandwidth (bytes/s) or
latency (s); it does not scale it. So a profile whose events are all dated 0 sets the link's value
for the whole run (the last one wins). A later event is refused even when it repeats the value in
force: SimGrid cuts the time step at its date while a message crosses the link, and the clock summed
piecewise moves arrivals in the last bits (a periodic profile of a link's own latency moved one
message's arrival from 1000.4333333333334 to 1000.4333333329715 s in SimGrid 3.32).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan))", re.IGNORECASE)  # strtod
_RANDOM = ("NORM", "NORMAL", "GAUSS", "GAUSSIAN", "EXP", "EXPONENTIAL", "UNIF", "UNIFORM")


class ProfileError(Exception):
    """A profile that SimGrid refuses, or that changes the link during the run."""


def _number(token: str, what: str) -> float:
    """std::stod: the longest number at the start of `token`, the rest ignored."""
    match = _NUMBER.match(token)
    if match is None:
        raise ProfileError(f"cannot read {what} {token!r} (SimGrid aborts)")
    return float(match.group(1))


def _scanned(line: str, keyword: str) -> float | None:
    """sscanf(line, "KEYWORD %lg"): the number after the keyword, or None."""
    if not line.startswith(keyword):
        return None
    match = _NUMBER.match(line[len(keyword):])
    return float(match.group(1)) if match else None


def read_pattern(text: str) -> tuple[list[tuple[float, float]], bool]:
    """LegacyUpdateCb for a file (periodicity -1): the (absolute date, value) pairs of one pass of
    the pattern, and whether the pattern repeats."""
    pattern: list[tuple[float, float]] = []
    loop, periodicity, loop_delay, last_date = False, -1.0, 0.0, 0.0
    for raw in re.split(r"[\n\r]", text):
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        if (value := _scanned(line, "PERIODICITY")) is not None:
            loop, periodicity = True, value
            continue
        if (value := _scanned(line, "LOOPAFTER")) is not None:
            loop, loop_delay = True, value
            continue
        if line.startswith("STOCHASTIC") or line.split()[0] in _RANDOM:
            raise ProfileError(f"random profile line {line!r}: its values are not constant")
        words = [word for word in line.split() if word != "DET"] if line.split()[0] == "DET" else line.split()
        if len(words) < 2:
            raise ProfileError(f"invalid profile line {line!r} (SimGrid aborts)")
        date, value = _number(words[0], "date"), _number(words[1], "value")
        if not date >= 0 or date < last_date or not value >= 0:
            raise ProfileError(f"profile line {line!r}: dates must be sorted and >= 0, values >= 0 (SimGrid aborts)")
        last_date = date
        pattern.append((date, value))
    if periodicity > 0:
        if loop_delay != 0 or periodicity < last_date:
            raise ProfileError("PERIODICITY with LOOPAFTER, or shorter than the pattern (SimGrid aborts)")
        loop_delay = periodicity - last_date
    if loop and pattern and last_date == 0 and loop_delay == 0:
        raise ProfileError("a repeated pattern of no duration (SimGrid replays it at time 0 without end)")
    return pattern, loop


def constant_value(text: str, own: float, what: str) -> float:
    """The value the link keeps for the whole run: `own`, or the last event dated 0 (presolve applies
    them in order before anything runs); ProfileError for any later event."""
    pattern, loop = read_pattern(text)
    later = pattern if loop else [event for event in pattern if event[0] > 0]
    if later:
        when = "at each repetition of the pattern" if loop else f"at t={later[0][0]!r} s"
        raise ProfileError(f"an event sets its {what} {when}: SimGrid then cuts the time step in two while a message "
                           "crosses the link, which moves arrivals in the last bits; not modelled by --timing batsim")
    return pattern[-1][1] if pattern else own


def find_file(name: str, directory: Path | None) -> Path:
    """surf_ifsopen: a relative name in the current directory, then in the platform file's one (an
    absolute name is not found: SimGrid 3.32 opens it, then reopens a relative path over it)."""
    if os.path.isabs(name):
        raise ProfileError(f"{name!r}: SimGrid 3.32 cannot open a profile given by an absolute path (it aborts)")
    for folder in (Path.cwd(), directory):
        if folder is not None and (folder / name).is_file():
            return folder / name
    raise ProfileError(f"cannot find the profile {name!r} (SimGrid looks in the current directory, then in the "
                       "platform file's)")
