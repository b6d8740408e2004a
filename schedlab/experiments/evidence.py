"""A study's evidence: the small files of a results directory that the table of record is computed
from, committed in the study's folder (`experiments/STUDY/evidence/NAME/`) so that every cause and
figure of docs/reproductions.md can be recomputed from the repository, not from the ignored `out/`.

`schedlab evidence RESULTS -o experiments/STUDY/evidence/NAME` writes it: the study's JSON files
as they are (what made it, the paper rows and claims, a factory's or a study's summary), the
results table as CSV without the columns that name this machine's files or wall-clock times (run
times of the schedulers excepted: a paper row compares them), and versions.json, the library
versions the runs were made with (a factory's or a study's: those of the invocation that wrote its
summary)."""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schedlab.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: the JSON files a results directory may hold that the table of record reads
JSON_FILES = ("made-by.json", "compare.json", "claims.json", "notes.json", "factory.json", "study.json",
              "reliability.json")
#: everything an evidence directory holds
EVIDENCE_FILES = (*JSON_FILES, "results.csv", "versions.json")
#: results columns left out of the evidence: this machine's paths and wall-clock times
DROPPED = ("workload_path", "platform_path", "wall_time_s", "simulation_time_s", "training_time_s",
           "partial_metrics", "options")
VERSION_COLUMNS = ("python", "numpy", "pandas", "scikit-learn", "xgboost")


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """The versions a run's figures may depend on (the libraries of the learning schedulers too),
    read from the installed distributions (nothing imported)."""
    import platform
    from importlib import metadata

    def version(*names: str) -> str:
        for name in names:  # xgboost's CPU-only wheel is another distribution
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return "absent"

    return {"python": platform.python_version(), "numpy": version("numpy"), "pandas": version("pandas"),
            "scikit-learn": version("scikit-learn"), "xgboost": version("xgboost", "xgboost-cpu")}


def read_results(directory: Path) -> pd.DataFrame:
    """The results table of a results directory (results.parquet) or of its evidence (results.csv)."""
    import pandas as pd

    if (directory / "results.parquet").is_file():
        return pd.read_parquet(directory / "results.parquet")
    if (directory / "results.csv").is_file():
        frame = pd.read_csv(directory / "results.csv", keep_default_na=True, low_memory=False)
        for column in [c for c in frame.columns if c.startswith("opt_")] + ["workload", "platform", "scheduler"]:
            if column in frame:  # options are strings in results.parquet ("1.0", "lin:lublin256")
                frame[column] = frame[column].map(lambda v: v if pd.isna(v) else str(v))
        if "complete" in frame:
            frame["complete"] = frame["complete"].astype(bool)
        return frame
    raise InputError("no results here (results.parquet or results.csv)", path=str(directory))


def has_results(directory: Path) -> bool:
    return any((directory / name).is_file() for name in ("results.parquet", "results.csv", "factory.json"))


def versions_of(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The library versions a results table's runs were made with (each library: its distinct
    versions)."""
    return {name: sorted({str(v) for v in frame[name].dropna().unique()}) for name in VERSION_COLUMNS
            if name in frame}


def write_evidence(results_dir: Path, out: Path) -> dict[str, Any]:
    """Write the evidence of a results directory into `out` (replaced as a whole, atomically)."""
    import pandas as pd

    from schedlab.paths import atomic_write

    if not has_results(results_dir):
        raise InputError("no results here (not a results directory, or a study that has not finished)",
                         path=str(results_dir))
    staging = out.with_name(out.name + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in JSON_FILES:
        if (results_dir / name).is_file():
            shutil.copyfile(results_dir / name, staging / name)
    versions: dict[str, list[str]] = {}
    for name in ("factory.json", "study.json", "reliability.json"):  # a study's own record of them
        if (results_dir / name).is_file():
            recorded = json.loads((results_dir / name).read_text()).get("versions") or {}
            versions = {library: [value] for library, value in recorded.items()}
    if (results_dir / "results.parquet").is_file() and not versions:
        frame = pd.read_parquet(results_dir / "results.parquet")
        versions = versions_of(frame)
        kept = frame.drop(columns=[c for c in DROPPED if c in frame])
        kept.to_csv(staging / "results.csv", index=False, float_format="%.10g")
    with atomic_write(staging / "versions.json") as handle:
        handle.write(json.dumps(versions, indent=1, sort_keys=True) + "\n")
    old = out.with_name(out.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return versions
