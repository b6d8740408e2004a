"""docs/design.md opens with a map a newcomer can route a change by: every file its table "To add X,
touch Y" names exists, each answer names one to three files, and every folder of the layout table
is one of the repository's."""

from __future__ import annotations

import re

from tests.helpers.data import REPO

CHANGES = ("a scheduler", "a Batsim message", "a predictor model", "a metric", "a trace format", "a study kind",
           "an engine feature")


def _table(title: str) -> list[list[str]]:
    text = (REPO / "docs" / "design.md").read_text()
    section = text.split(f"### {title}\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_the_map_routes_each_change_to_files_that_exist():
    rows = {change: files for change, files in _table("To add X, touch Y")}
    assert tuple(rows) == CHANGES
    for change, cell in rows.items():
        named = [path for path in re.findall(r"`([\w./-]+\.py)`", cell)]
        assert 1 <= len(named) <= 3, change
        for path in named:
            found = REPO / path.replace("NAME", "easy" if change == "a scheduler" else "x")
            if "NAME" in path:  # a new module of that folder: the folder exists and holds others
                assert found.parent.is_dir() and any(found.parent.glob("*.py")), (change, path)
            else:
                assert found.is_file(), (change, path)


def test_the_map_is_the_first_section_and_names_every_folder():
    text = (REPO / "docs" / "design.md").read_text()
    assert text.split("\n## ", 2)[1].startswith("Map")
    folders = [re.findall(r"`([\w/.-]+/)`", row[0]) for row in _table("Folders and import names")]
    for folder in (name for names in folders for name in names):
        assert (REPO / folder).is_dir(), folder
    assert "### Three flows" in text
