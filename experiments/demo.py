"""The demo experiment: one seeded synthetic workload, fcfs vs easy vs easy-sjbf on the embedded
engine; Batsim-format outputs per scheduler, a comparison table (CSV + terminal) and a plot."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from schedlab.metrics import format_table
from schedlab.model import Platform
from schedlab.platform import parse_platform_xml
from schedlab.platforms.generate import cluster_xml
from schedlab.run import simulate
from schedlab.schedulers.base import create_scheduler
from schedlab.workloads.synthetic import generate

SCHEDULERS = ("fcfs", "easy", "easy-sjbf")
COLUMNS = ("scheduler", "makespan_s", "mean_waiting_time_s", "mean_bounded_slowdown", "max_bounded_slowdown",
           "utilisation", "scheduling_time_s")


def run_demo(out: Path, *, nb_jobs: int = 2000, nb_resources: int = 256, seed: int = 1,
             show_progress: bool = True) -> list[dict[str, object]]:
    out.mkdir(parents=True, exist_ok=True)
    workload = generate(nb_jobs=nb_jobs, nb_resources=nb_resources, seed=seed)
    (out / "workload.json").write_text(json.dumps(workload.to_json(), indent=1) + "\n", encoding="utf-8")
    xml = cluster_xml(nb_resources)
    (out / "platform.xml").write_text(xml, encoding="utf-8")
    platform: Platform = parse_platform_xml(xml, str(out / "platform.xml"))
    rows = []
    for name in SCHEDULERS:
        info = {"scheduler": name, "options": {}, "experiment": "demo", "seed": seed,
                "workload": {"path": str(out / "workload.json"), "nb_jobs": nb_jobs,
                             "generator": workload.extra["generator"]},
                "platform": {"path": str(out / "platform.xml"), "nb_resources": nb_resources}}
        result = simulate(platform, workload, create_scheduler(name), out / name, run_info=info)
        if result.error:
            raise RuntimeError(result.error)
        metrics = dict(result.summary["metrics"],
                       scheduling_time_s=result.summary["timing"]["scheduling_time_s"])
        rows.append({"scheduler": name, **{k: metrics.get(k) for k in COLUMNS[1:]}})
        if show_progress:
            print(f"[{name}] {nb_jobs} jobs, {nb_resources} resources, seed {seed} -> {out / name}")
            print(format_table(metrics))
    with (out / "comparison.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    plot = _plot(rows, out / "comparison.png", title=f"{nb_jobs} synthetic jobs, {nb_resources} "
                 f"resources, seed {seed}")
    if show_progress:
        print(f"\ncomparison: {out / 'comparison.csv'}" + (f", plot: {plot}" if plot else ""))
    return rows


def _plot(rows: list[dict[str, object]], path: Path, title: str) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    metrics = ("mean_waiting_time_s", "mean_bounded_slowdown", "utilisation")
    fig, axes = plt.subplots(1, len(metrics), figsize=(11, 3.4))
    names = [str(r["scheduler"]) for r in rows]
    for axis, metric in zip(axes, metrics, strict=True):
        axis.bar(names, [float(r[metric] or 0.0) for r in rows], color=["#888", "#2a7", "#27a"])
        axis.set_title(metric.replace("_", " "))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
