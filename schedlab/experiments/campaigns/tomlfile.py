"""Reading a study's TOML file with line numbers in its errors (tomllib keeps no positions): the
locator of a key's line, tables checked for unknown keys, and the `kind` a file declares. Every
study file (campaigns, policy factories, predictor and reliability studies, paper rows) reads
through it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from schedlab.errors import InputError
from schedlab.parsing import toml_loads


class _Locator:
    """Finds the line of a key in the TOML text (tomllib keeps no positions): the n-th `[[section]]`
    header, then the first `key =` after it."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.lines = path, text.splitlines()

    def line(self, section: str | None = None, index: int = 0, key: str | None = None) -> int | None:
        start = 0
        if section is not None:
            headers = [n for n, line in enumerate(self.lines) if re.match(rf"^\s*\[\[?\s*{section}\s*\]\]?", line)]
            if index >= len(headers):
                return None
            start = headers[index]
        if key is None:
            return start + 1
        for n in range(start, len(self.lines)):
            if n > start and section is not None and re.match(r"^\s*\[", self.lines[n]):
                break
            if re.match(rf"^\s*{re.escape(key)}\s*=", self.lines[n]) or re.search(rf"[{{,]\s*{re.escape(key)}\s*=",
                                                                               self.lines[n]):
                return n + 1
        return start + 1 if section is not None else None

    def error(self, message: str, section: str | None = None, index: int = 0, key: str | None = None) -> InputError:
        where = f"{section}[{index}]." if section else ""
        return InputError(message, path=str(self.path), line=self.line(section, index, key),
                          field=f"{where}{key}" if key else (f"{section}[{index}]" if section else None))


def file_kind(path: str | Path) -> str | None:
    """The `kind` a TOML file declares (`predictor-study`, `policy-factory`; campaigns declare none).
    A malformed file has none: the campaign loader reports it, with its line."""
    from schedlab.paths import read_input_text

    try:
        return toml_loads(read_input_text(Path(path), "a campaign file (TOML)")).get("kind")
    except tomllib.TOMLDecodeError:
        return None


def name_problem(name: object) -> str | None:
    """Why `name` cannot name a results folder (a campaign's or study's, under out/), or None: it must
    be one path component (`"../../evil"` wrote outside out/, `""` into out/ itself)."""
    if not isinstance(name, str) or not name.strip():
        return "expected a non-empty name (it names the results folder out/NAME)"
    if name in (".", "..") or any(sep in name for sep in ("/", "\\", "\0")):
        return f"{name!r} would leave out/: a name is one folder name, without / or \\ and not . or .."
    return None


def label_problem(label: object) -> str | None:
    """Why `label` cannot label a scheduler in reports, or None (matplotlib hides legend labels that
    start with `_`; an empty one named nothing, and the report failed)."""
    if not isinstance(label, str) or not label.strip():
        return "expected a non-empty label"
    if label.startswith("_"):
        return f"{label!r}: a label may not start with _ (plots leave such labels out of their legends)"
    return None


def read_checked(path: Path, keys: set[str]) -> tuple[dict[str, Any], _Locator]:
    """A study file's TOML and its locator; a top-level key not in `keys` is a one-line error."""
    text = path.read_text(encoding="utf-8")
    doc = toml_loads(text)
    at = _Locator(path, text)
    unknown = sorted(set(doc) - keys)
    if unknown:
        raise at.error(f"unknown key (known: {', '.join(sorted(keys))})", key=unknown[0])
    return doc, at


def _table(value: Any, keys: set[str], at: _Locator, section: str, index: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise at.error("expected a table", section, index)
    unknown = sorted(set(value) - keys)
    if unknown:
        raise at.error(f"unknown key (known: {', '.join(sorted(keys))})", section, index, unknown[0])
    return value
