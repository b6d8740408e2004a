"""A study's evidence: the small files of a results directory that the table of record is computed
from, committed in the study's folder (`experiments/STUDY/evidence/NAME/`) so that every cause and
figure of docs/reproductions.md can be recomputed from the repository, not from the ignored `out/`.

`schedlab evidence RESULTS -o experiments/STUDY/evidence/NAME` writes it (`reproductions.
write_evidence`): the study's JSON files (what made it, a factory's or a study's summary; the paper
rows, claims and causes as the study's files state them now), the results table as CSV without the
columns that name this machine's files or wall-clock times (run times of the schedulers excepted:
a paper row compares them), and versions.json, the library versions the runs were made with (a
factory's or a study's: those of the invocation that wrote its summary). This module only names
and reads them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from schedlab.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: the JSON files a campaign's results directory may hold that the table of record reads (a study
#: kind's record too: `json_files()`)
CAMPAIGN_JSON_FILES = ("made-by.json", "compare.json", "claims.json", "notes.json", "inputs.json", "predictions.json")
#: results columns left out of the evidence: this machine's paths and wall-clock times
DROPPED = ("workload_path", "platform_path", "wall_time_s", "simulation_time_s", "training_time_s",
           "partial_metrics", "options")
VERSION_COLUMNS = ("python", "numpy", "pandas", "scikit-learn", "xgboost")


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


def json_files() -> tuple[str, ...]:
    """The JSON files a results directory may hold that the table of record reads."""
    from schedlab.experiments.campaigns.kinds import record_files

    return (*CAMPAIGN_JSON_FILES, *record_files())


def evidence_files() -> tuple[str, ...]:
    """Everything an evidence directory holds."""
    return (*json_files(), "results.csv", "versions.json")


def has_results(directory: Path) -> bool:
    """Whether a campaign or study finished here (or its evidence is here)."""
    from schedlab.experiments.campaigns.kinds import finished_markers

    return any((directory / name).is_file() for name in ("results.parquet", "results.csv", *finished_markers()))


def versions_of(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The library versions a results table's runs were made with (each library: its distinct
    versions)."""
    return {name: sorted({str(v) for v in frame[name].dropna().unique()}) for name in VERSION_COLUMNS
            if name in frame}
