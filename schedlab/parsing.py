"""JSON and TOML of users' files, read so that nesting too deep for the parsers is a decode error at
its place: json and tomllib recurse once per level and raise RecursionError near 1,000 levels (a
workload or a campaign file nested 100,000 deep was exit 3, "a bug"). Every reader of a user's JSON
or TOML goes through here, and its usual handling of a malformed file (exit 2, the file and line)
covers this case too."""

from __future__ import annotations

import json
import tomllib
from typing import Any

#: where a too-deep file is said to go wrong (the parsers themselves stop near the recursion limit)
MAX_DEPTH = 500


def too_deep_at(text: str, limit: int = MAX_DEPTH) -> int:
    """The index of the first bracket nested deeper than `limit` outside strings, or -1. Read only
    after a parser gave up: a linear scan, approximate inside TOML's comments and multi-line strings."""
    depth, quote, escaped, comment = 0, "", False, False
    for index, char in enumerate(text):
        if comment:  # a TOML comment runs to the end of its line
            comment = char != "\n"
        elif quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":  # never outside a string in JSON
            comment = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return index
        elif char in "]}":
            depth -= 1
    return -1


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def json_loads(raw: bytes | str, **options: Any) -> Any:
    """json.loads; nesting too deep is a JSONDecodeError (a ValueError) at the first level too many."""
    try:
        return json.loads(raw, **options)
    except RecursionError:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        index = max(too_deep_at(text), 0)
        raise json.JSONDecodeError(f"brackets nested more than {MAX_DEPTH} levels deep", text, index) from None


def toml_loads(text: str) -> dict[str, Any]:
    """tomllib.loads; nesting too deep is a TOMLDecodeError whose message gives the line, as tomllib's do."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        line, column = _position(text, max(too_deep_at(text), 0))
        raise tomllib.TOMLDecodeError(f"Brackets nested more than {MAX_DEPTH} levels deep (at line {line}, "
                                      f"column {column})") from None
