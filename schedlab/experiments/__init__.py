"""schedlab.experiments: campaigns (TOML), their runs and reports (see docs/design.md).

From Python: `schedlab.experiments.run(campaign, out)` runs a campaign file or the same content as
a dict and returns its results table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def run(campaign: str | Path | dict[str, Any], out: str | Path, *, workers: int = 1) -> Any:
    """Run a campaign (a TOML file, or a dict of the same keys: relative paths are then relative to
    the working directory) into `out` and return its results as a pandas DataFrame (one row per
    run, as `out/results.parquet`). Runs finished earlier in `out` are reused (content-addressed);
    failed runs are rows with `complete` False and their `error`."""
    import pandas as pd

    from schedlab.errors import InputError
    from schedlab.experiments.campaigns.campaign import campaign_from_doc, load_campaign
    from schedlab.experiments.campaigns.plan import expand
    from schedlab.experiments.campaigns.runner import check_run_inputs, run_campaign
    from schedlab.paths import check_output_dir

    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if isinstance(campaign, dict):
        loaded = campaign_from_doc(campaign, Path.cwd() / "<campaign>")
    else:
        loaded = load_campaign(campaign)
    directory = check_output_dir(out)
    runs = expand(loaded, directory, workers=workers)
    check_run_inputs(runs)  # as the command line: files options name, Batsim timing's platforms
    rows = run_campaign(runs, directory, workers=workers)
    return pd.DataFrame(rows)
