"""Study kinds: TOML files that declare `kind = "..."` (a campaign declares none).

A kind is one class in its own module of `schedlab.experiments.studies`, registered with
`@study_kind`: how its file is read, planned and run, which record file marks its results
directory, and how that directory is reported and set beside its paper. The command line, the
report and the table of record find a kind here, by its file's `kind` or its record file, and never
branch on its name: adding a study kind adds one module.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

#: how a study says its progress (a line), and how a long one counts its units (a progress bar's update)
Say = Callable[[str], None]


class StudyKind:
    """What a study kind knows; subclasses set the three names and implement the methods."""

    kind: ClassVar[str]  # the file's `kind = "..."`
    label: ClassVar[str]  # how messages name a study of this kind ("policy factory")
    record: ClassVar[str]  # the JSON file at the top of its results directory: what marks one
    #: the file that holds its results once it has finished (a results table, or its record)
    results_file: ClassVar[str] = "results.parquet"
    #: whether its record's keys are written sorted
    record_sorted: ClassVar[bool] = True
    #: what else it writes at the top of its results directory
    other_outputs: ClassVar[tuple[str, ...]] = ()

    def load(self, path: str | Path) -> dict[str, Any]:
        """The file, validated before any work (one line naming the file, line and key otherwise)."""
        raise NotImplementedError

    def describe(self, spec: dict[str, Any], path: str) -> list[str]:
        """What `experiment plan` prints: the work the file asks for."""
        raise NotImplementedError

    def progress_units(self, spec: dict[str, Any]) -> tuple[int, str] | None:
        """(how many units, their name) for a progress bar on a terminal, or None (no bar)."""
        return None

    def run(self, spec: dict[str, Any], out: Path, *, workers: int, say: Say,
            unit_done: Callable[[int], Any] | None) -> str:
        """Run the study into `out`; returns the line that says where its results are."""
        raise NotImplementedError

    def name_of(self, results_dir: Path) -> str:
        """The study's name, from its record."""
        return str(self.read_record(results_dir)["name"])

    def read_record(self, results_dir: Path) -> dict[str, Any]:
        return json.loads((results_dir / self.record).read_text())

    #: its report's figure: (file name, the section that shows it)
    figure: ClassVar[tuple[str, str]]

    def sections(self, results_dir: Path) -> list[tuple[str, str, Any]]:
        """Its report's sections (title, text, table or None)."""
        raise NotImplementedError

    def plot(self, results_dir: Path, path: Path) -> Path:
        """Its report's figure, written to `path`."""
        raise NotImplementedError

    def report(self, results_dir: Path, out: Path) -> tuple[str, list[tuple[str, str, Any]], list[Path]]:
        """(title, sections, plots) of the study's report; its figure written into `out`."""
        plot = self.plot(results_dir, out / self.figure[0])
        parts = [*self.sections(results_dir), (self.figure[1], "", plot)]
        return f"{self.label.capitalize()}: {self.name_of(results_dir)}", parts, [plot]

    def paper_table(self, results_dir: Path, frames: dict[str, Any], locations: dict[str, str]) -> tuple[str, Any]:
        """(the study's name, its rows of the table of record: papers.reproductions.COLUMNS)."""
        raise NotImplementedError

    def refresh(self, spec: dict[str, Any], update: Callable[[str, Callable[[dict], None]], None]) -> dict[str, Any]:
        """Copy the file's paper figures and causes into the record (`update(record, change)`);
        returns the study's input as `inputs.json` lists it (here: a study of one trace, `source`)."""
        keys = ("cause", "causes", "size_factor", "paper", "evidence")
        update(self.record, lambda data: data.update({k: spec[k] for k in keys if k in spec}))
        return {"name": "trace", "source": Path(str(spec["source"])).name, "convert": spec.get("convert") or {}}


STUDY_KINDS: dict[str, StudyKind] = {}


def study_kind(cls: type[StudyKind]) -> type[StudyKind]:
    """Class decorator: registers a kind (one instance) under its `kind`."""
    if cls.kind in STUDY_KINDS and type(STUDY_KINDS[cls.kind]) is not cls:
        raise ValueError(f"study kind {cls.kind!r} is registered twice ({type(STUDY_KINDS[cls.kind]).__name__}, "
                         f"{cls.__name__})")
    STUDY_KINDS[cls.kind] = cls()
    return cls


def all_study_kinds() -> dict[str, StudyKind]:
    """Every kind, each module of `schedlab.experiments.studies` imported (by name: the registry
    knows no study)."""
    package = importlib.import_module("schedlab.experiments.studies")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return STUDY_KINDS


def kind_named(kind: object) -> StudyKind | None:
    """The registered kind a file's `kind` names, or None (a campaign, or a kind the campaign loader
    refuses with its line)."""
    return all_study_kinds().get(kind) if isinstance(kind, str) else None


def kind_of_results(results_dir: Path) -> StudyKind | None:
    """The kind whose record file a results directory holds, or None (a campaign's)."""
    return next((k for k in all_study_kinds().values() if (results_dir / k.record).is_file()), None)


def record_files() -> tuple[str, ...]:
    """Every kind's record file, sorted."""
    return tuple(sorted(k.record for k in all_study_kinds().values()))


def finished_markers() -> tuple[str, ...]:
    """The files whose presence says a study of some kind has finished, sorted (a campaign's:
    results.parquet)."""
    return tuple(sorted({k.results_file for k in all_study_kinds().values()}))


def study_outputs() -> tuple[str, ...]:
    """Every file a study of any kind writes at the top of its results directory, sorted."""
    return tuple(sorted({name for k in all_study_kinds().values() for name in (k.record, *k.other_outputs)}))
