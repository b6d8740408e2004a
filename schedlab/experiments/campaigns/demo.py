"""The demo experiment: a campaign like any other (written to OUT/demo.toml), one seeded synthetic
workload, fcfs vs easy vs easy-sjbf on the embedded engine, reported by the campaign report code."""

from __future__ import annotations

import json
from pathlib import Path

SCHEDULERS = ("fcfs", "easy", "easy-sjbf")

CAMPAIGN = """# The demo campaign (written by `schedlab demo`; run it again with
#   schedlab experiment run {toml} -o {out})
name = "demo"
seeds = [{seed}]

[[workloads]]
name = "synthetic"
synthetic = {{ jobs = {jobs}, resources = {resources}, load = 0.9 }}

[[platforms]]
name = "cluster{resources}"
resources = {resources}
{schedulers}
"""


def run_demo(out: Path, *, nb_jobs: int = 2000, nb_resources: int = 256, seed: int = 1,
             show_progress: bool = True) -> list[dict[str, object]]:
    from schedlab.experiments.campaigns.campaign import load_campaign
    from schedlab.experiments.campaigns.plan import expand
    from schedlab.experiments.campaigns.report import make_report
    from schedlab.experiments.campaigns.runner import run_campaign
    from schedlab.metrics import format_table
    from schedlab.paths import write_text_atomic

    toml = out / "demo.toml"
    schedulers = "".join(f'\n[[schedulers]]\nname = "{name}"\n' for name in SCHEDULERS)
    write_text_atomic(toml, CAMPAIGN.format(toml=toml, out=out, seed=seed, jobs=nb_jobs, resources=nb_resources,
                                            schedulers=schedulers))
    runs = expand(load_campaign(toml), out)
    rows = run_campaign(runs, out)
    failed = [row for row in rows if not row["complete"]]
    if failed:
        from schedlab.errors import SimulationError

        raise SimulationError(f"demo run {failed[0]['run_id']} ({failed[0]['scheduler']}) failed: {failed[0]['error']}")
    report = make_report(out, out / "report")
    if show_progress:
        for row in rows:
            print(f"[{row['scheduler']}] {nb_jobs} jobs, {nb_resources} resources, seed {seed} -> "
                  f"{out / 'runs' / row['run_id']}")
            print(format_table({**row, "jobs_per_state": json.loads(row["jobs_per_state"])}))
        print(f"\nresults: {out / 'results.parquet'}; report: {report['html']} ({len(report['plots'])} plots)")
    return rows
