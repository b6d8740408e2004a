"""Reports of campaign results: Markdown and a self-contained HTML page with the tables and plots
people expect (box plots of AVGbsld, waiting-time shares, metric-vs-option curves, a Gantt chart and
a utilisation curve of one run, and the perturbation arm's spread)."""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from schedlab.experiments.campaigns.render import _fmt, _pyplot, _save, html_table, markdown_table, median_text  # noqa: F401 (this module's names too)
from schedlab.paths import write_text_atomic

#: every file a report may write into its directory (a command never writes over its inputs)
REPORT_FILES = ("report.md", "report.html", "summary.json", "factory.png", "reliability.png", "predictors.png",
                "policy_boxes.png", "bsld_boxes.png", "wait_shares.png", "option_curves.png", "gantt.png")

SUMMARY_METRICS = {  # column -> heading with unit
    "mean_waiting_time_s": "mean wait (s)", "max_waiting_time_s": "max wait (s)",
    "mean_bounded_slowdown": "mean bsld (tau 10 s)", "mean_slowdown": "mean slowdown",
    "utilisation": "utilisation", "makespan_s": "makespan (s)", "scheduling_time_s": "scheduling time (s)",
}
SHARES = {"share_wait_lt_1min": "< 1 min", "share_wait_lt_10min": "< 10 min", "share_wait_lt_1h": "< 1 h",
          "share_wait_lt_6h": "< 6 h"}


def configuration(frame: pd.DataFrame, without: str | None = None) -> pd.Series:
    """A readable name per scheduler configuration: label and the options that vary (but `without`
    and `seed`: a scheduler's seed repeats a configuration, like the campaign's seeds)."""
    names = frame["scheduler"].astype(str)
    # an option is shown when it varies under one name (labels usually say the rest already)
    varying = [c for c in frame.columns if c.startswith("opt_") and c not in (without, "opt_seed")
               and (frame.groupby(names)[c].nunique(dropna=True) > 1).any()]
    for column in varying:
        names = names + np.where(frame[column].notna(), f" {column[4:]}=" + frame[column].astype(str), "")
    return names


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Median over seeds and windows of the unperturbed runs, per workload, platform, configuration."""
    base = frame[frame["repetition"].isna() & frame["complete"]]
    metrics = [m for m in SUMMARY_METRICS if m in base.columns]  # a campaign may keep only some
    table = (base.groupby(["workload", "platform", "configuration"], sort=True)
             .agg(runs=("run_id", "count"), **{SUMMARY_METRICS[m]: (m, "median") for m in metrics})
             .reset_index())
    return table


def perturbation_table(frame: pd.DataFrame, metric: str = "mean_bounded_slowdown") -> pd.DataFrame | None:
    """Per configuration: the unperturbed value and the median and range over jittered repetitions
    per workload instance (a window, a generated workload's seed), then the median over instances of
    each. A difference between two configurations smaller than these ranges is within the noise of
    millisecond event shifts."""
    jittered = frame[frame["repetition"].notna() & frame["complete"]]
    if jittered.empty or metric not in frame:
        return None
    keys = ["workload", "instance", "platform", "configuration"]
    spread = (jittered.groupby(keys, dropna=False)[metric].agg(["median", "min", "max"]).reset_index())
    spread["range %"] = 100.0 * (spread["max"] - spread["min"]) / spread["median"].where(spread["median"] != 0)
    base = frame[frame["repetition"].isna()].groupby(keys, dropna=False)[metric].median().rename("unperturbed")
    spread = spread.join(base, on=keys)
    table = (spread.groupby(["workload", "platform", "configuration"])
             .agg(unperturbed=("unperturbed", "median"), jitter_median=("median", "median"),
                  jitter_min=("min", "median"), jitter_max=("max", "median"), range_pct=("range %", "max"))
             .reset_index())
    # paired per instance: configuration X is beyond noise on an instance when its jittered range
    # does not meet the best configuration's range on that same instance
    verdicts = {}
    for (workload, platform), group in table.groupby(["workload", "platform"]):
        ranked = group.dropna(subset=["jitter_median"]).sort_values("jitter_median")
        if ranked.empty:
            continue
        best = ranked.iloc[0]["configuration"]
        ranges = spread[(spread["workload"] == workload) & (spread["platform"] == platform)].set_index(
            ["instance", "configuration"])
        for index, entry in ranked.iterrows():
            if entry["configuration"] == best:
                verdicts[index] = "best"
                continue
            beyond = total = 0
            for instance in ranges.index.get_level_values("instance").unique():
                if (instance, best) in ranges.index and (instance, entry["configuration"]) in ranges.index:
                    mine, theirs = ranges.loc[(instance, entry["configuration"])], ranges.loc[(instance, best)]
                    total += 1
                    beyond += bool(mine["min"] > theirs["max"] or mine["max"] < theirs["min"])
            verdicts[index] = f"beyond noise on {beyond} of {total} instances"
    table["vs best"] = pd.Series(verdicts).reindex(table.index).fillna("-")
    return table.rename(columns={"range_pct": "max range %"})


# ---------------------------------------------------------------------------------------------- plots


def _panels(data: pd.DataFrame, width: float, height: float):
    """One panel per (workload, platform) that has runs: a row per workload, its platforms across
    (a campaign pairing each workload with its own platform gets one column)."""
    workloads = sorted(data["workload"].unique())
    platforms = {w: sorted(data.loc[data["workload"] == w, "platform"].unique()) for w in workloads}
    columns = max(len(p) for p in platforms.values())
    plt = _pyplot()
    fig, axes = plt.subplots(len(workloads), columns, squeeze=False,
                             figsize=(max(width * columns, 7.0), height * len(workloads) + 0.6))
    panels = []
    for i, workload in enumerate(workloads):
        for j in range(columns):
            if j >= len(platforms[workload]):
                axes[i][j].set_axis_off()
                continue
            platform = platforms[workload][j]
            axes[i][j].set_title(f"{workload} on {platform}", fontsize=10, pad=12)
            panels.append((axes[i][j], data[(data["workload"] == workload) & (data["platform"] == platform)]))
    return fig, panels


def _only_queue_orders(frame: pd.DataFrame) -> bool:
    """Whether a scheduler label's configurations differ in `queue_order` only."""
    if "opt_queue_order" not in frame or frame.loc[frame["complete"], "opt_queue_order"].isna().any():
        return False  # a scheduler without queue_order is in no policy panel
    options = [c for c in frame.columns if c.startswith("opt_") and c != "opt_queue_order"]
    return all(frame.groupby("scheduler")[c].nunique(dropna=False).max() <= 1 for c in options)


def plot_policy_boxes(frame: pd.DataFrame, path: Path) -> Path | None:
    """AVGbsld per queue policy (in the campaign's order), a panel per workload and scheduler:
    drawn when a campaign varies `queue_order` (the policies study's figures)."""
    from schedlab.experiments.papers.claims import policy_name

    if "opt_queue_order" not in frame or "mean_bounded_slowdown" not in frame:
        return None
    data = frame[frame["complete"] & frame["repetition"].isna() & frame["opt_queue_order"].notna()]
    orders = list(pd.unique(data["opt_queue_order"]))
    if len(orders) < 2:
        return None
    groups = list(dict.fromkeys(zip(data["workload"], data["platform"], strict=True)))
    labels = list(pd.unique(data["scheduler"]))
    plt = _pyplot()
    fig, axes = plt.subplots(len(groups), len(labels), squeeze=False,
                             figsize=(max(0.62 * len(orders), 4.2) * len(labels) + 0.4, 2.9 * len(groups) + 0.8))
    for i, (workload, platform) in enumerate(groups):
        for j, label in enumerate(labels):
            axis = axes[i][j]
            part = data[(data["workload"] == workload) & (data["platform"] == platform) & (data["scheduler"] == label)]
            present = [o for o in orders if (part["opt_queue_order"] == o).any()]
            if not present:
                axis.set_axis_off()
                continue
            values = [part.loc[part["opt_queue_order"] == o, "mean_bounded_slowdown"].to_numpy() for o in present]
            axis.boxplot(values, tick_labels=[policy_name(o) for o in present], showmeans=True)
            low, high = min(v.min() for v in values), max(v.max() for v in values)
            if high / max(low, 1e-9) > 10:  # AVGbsld spans decades across policies
                axis.set_yscale("log")
            top = axis.get_xaxis_transform()  # x: data, y: axes fraction: medians in a row above the boxes
            for position, value in enumerate(values, start=1):
                median = float(np.median(value))
                axis.text(position, 1.01, median_text(median), transform=top,
                          ha="center", va="bottom", fontsize=6.5, color="#a04000")
            count = part["instance"].nunique()
            axis.set_title(f"{workload} ({platform}), {label}: {count} instance{'s' if count > 1 else ''}",
                           fontsize=9, pad=12)
            axis.tick_params(axis="x", rotation=35, labelsize=7.5)
            for tick in axis.get_xticklabels():
                tick.set_horizontalalignment("right")
            if j == 0:
                axis.set_ylabel("AVGbsld")
    fig.suptitle("AVGbsld (tau 10 s) per queue policy, log scale when it spans a decade; box: seeds or windows, "
                 "triangle: mean, numbers: medians",
                 fontsize=9)
    return _save(fig, path, rect=(0, 0, 1, 0.98))


def plot_bsld_boxes(frame: pd.DataFrame, path: Path) -> Path | None:
    """AVGbsld per configuration, one panel per workload and platform: each box holds the seeds,
    windows and jittered repetitions of one configuration."""
    if "mean_bounded_slowdown" not in frame:
        return None
    data = frame[frame["complete"] & frame["repetition"].isna() & frame["mean_bounded_slowdown"].notna()]
    if data.empty:
        return None
    fig, panels = _panels(data, max(4.6, 0.5 * data["configuration"].nunique()), 3.6)
    for axis, part in panels:
        names = sorted(part["configuration"].unique())
        values = [part.loc[part["configuration"] == n, "mean_bounded_slowdown"].to_numpy() for n in names]
        if not names:
            axis.set_axis_off()
            continue
        axis.boxplot(values, tick_labels=names, showmeans=True)
        axis.set_ylabel("mean bounded slowdown")
        low, high = min(v.min() for v in values), max(v.max() for v in values)
        if high / max(low, 1e-9) > 20:
            axis.set_yscale("log")
        top = axis.get_xaxis_transform()  # x: data, y: axes fraction: medians in a row above the boxes
        for position, value in enumerate(values, start=1):
            axis.text(position, 1.01, median_text(float(np.median(value))), transform=top,
                      ha="center", va="bottom", fontsize=7, color="#a04000")
        axis.tick_params(axis="x", rotation=25, labelsize=8)
        for label in axis.get_xticklabels():
            label.set_horizontalalignment("right")
    fig.suptitle("AVGbsld (tau 10 s) per scheduler configuration, unperturbed runs\n(box: seeds and windows; "
                 "triangle: mean; number: median)", fontsize=9)
    return _save(fig, path, rect=(0, 0, 1, 1 - 0.55 / fig.get_figheight()))  # room for the two-line title


def plot_wait_shares(frame: pd.DataFrame, path: Path) -> Path | None:
    data = frame[frame["complete"] & frame["repetition"].isna()]
    if data.empty or not set(SHARES) <= set(data.columns):
        return None
    count = data["configuration"].nunique()
    longest = max(len(str(c)) for c in data["configuration"].unique())
    columns = max(1, min(4, int(max(5.2, 0.45 * count, 7.0) * 72 / (4.9 * longest + 36))))  # legend fits
    legend_rows = math.ceil(count / columns)
    fig, panels = _panels(data, max(5.2, 0.45 * count), 3.6 + 0.22 * legend_rows)
    for axis, part in panels:
        shares = part.groupby("configuration")[list(SHARES)].median()
        if shares.empty:
            axis.set_axis_off()
            continue
        width = 0.8 / len(shares.index)
        x = np.arange(len(SHARES))
        for k, (name, row) in enumerate(shares.iterrows()):
            colour = _pyplot().get_cmap("tab20" if len(shares.index) > 10 else "tab10")(k % 20)
            bars = axis.bar(x + k * width - 0.4 + width / 2, 100 * row.to_numpy(), width, label=name, color=colour)
            if len(shares.index) <= 6:  # more labels than that overlap
                axis.bar_label(bars, fmt="%.0f", fontsize=6, padding=1)
        axis.set_xticks(x, [f"wait {label}" for label in SHARES.values()], fontsize=8)
        axis.set_ylim(0, 112)
        axis.set_ylabel("jobs (%)")
        handles, labels = axis.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), columns), fontsize=8)
    fig.suptitle("Share of jobs by waiting time (median over seeds and windows)", fontsize=10)
    height = fig.get_size_inches()[1]
    return _save(fig, path, rect=(0, min(0.5, (0.3 + 0.22 * legend_rows) / height), 1, 1 - 0.35 / height))


def plot_option_curves(frame: pd.DataFrame, path: Path) -> Path | None:
    """Metric vs option, for options taking three numeric values or more (e.g. an alpha0 sweep);
    not `seed`, which repeats a configuration (its spread is the band of the other curves)."""
    data = frame[frame["complete"] & frame["repetition"].isna()]
    if "mean_bounded_slowdown" not in data:
        return None
    curves = []
    for column in (c for c in data.columns if c.startswith("opt_") and c != "opt_seed"):
        values = pd.to_numeric(data[column], errors="coerce")
        if values.notna().sum() and values.nunique() >= 3:
            curves.append((column, values))
    if not curves:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(curves), figsize=(5.0 * len(curves), 4.0), squeeze=False)
    for axis, (column, values) in zip(axes[0], curves, strict=True):
        part = data.assign(_x=values, _rest=configuration(data, without=column)).dropna(subset=["_x"])
        for (workload, platform, rest), group in part.groupby(["workload", "platform", "_rest"]):
            curve = group.groupby("_x")["mean_bounded_slowdown"].agg(["median", "min", "max"])
            axis.plot(curve.index, curve["median"], marker="o", label=f"{rest}: {workload} on {platform}")
            axis.fill_between(curve.index, curve["min"], curve["max"], alpha=0.2)
        axis.set_xlabel(column[4:])
        axis.set_ylabel("mean bounded slowdown")
        axis.set_title(f"AVGbsld vs {column[4:]}\n(line: median over seeds and windows; band: min to max)",
                       fontsize=9)
        axis.legend(fontsize=7)
    return _save(fig, path)


def plot_gantt(run_dir: Path, path: Path, nb_resources: int) -> Path | None:
    """The chosen run's schedule (one bar per job and resource interval) and utilisation over time."""
    from procset import ProcSet

    jobs = pd.read_csv(run_dir / "jobs.csv", dtype={"allocated_resources": str})
    jobs = jobs[jobs["final_state"] != "REJECTED"]
    if jobs.empty:
        return None
    plt = _pyplot()
    fig, (gantt, usage) = plt.subplots(2, 1, figsize=(10, 6.2), sharex=True, height_ratios=(3, 1.2))
    from matplotlib.collections import PolyCollection

    colours = plt.get_cmap("tab20")
    boxes, faces = [], []  # one collection: a bar artist per job took minutes on 20,000-job runs
    for number, job in enumerate(jobs.itertuples(index=False)):
        start, end = job.starting_time, job.starting_time + job.execution_time
        for interval in ProcSet.from_str(job.allocated_resources).intervals():
            low, high = interval.inf, interval.sup + 1
            boxes.append([(start, low), (end, low), (end, high), (start, high)])
            faces.append(colours(number % 20))
    gantt.add_collection(PolyCollection(boxes, facecolors=faces, edgecolors="black",
                                        linewidths=0.2 if len(jobs) <= 2000 else 0.0))
    gantt.set_xlim(float(jobs["starting_time"].min()), float((jobs["starting_time"] + jobs["execution_time"]).max()))
    gantt.set_ylim(0, nb_resources)
    gantt.set_ylabel("resource id")
    gantt.set_title(f"Gantt chart of run {run_dir.name} ({len(jobs)} jobs)")
    sizes = jobs["requested_number_of_resources"]
    events = sorted([*zip(jobs["starting_time"], sizes, strict=True), *zip(jobs["finish_time"], -sizes, strict=True)])
    times, busy, level = [], [], 0
    for time, delta in events:
        level += delta
        times.append(time)
        busy.append(100.0 * level / nb_resources)
    usage.step(times, busy, where="post")
    usage.set_ylim(0, 105)
    usage.set_ylabel("resources busy (%)")
    usage.set_xlabel("simulated time (s)")
    return _save(fig, path)


def _image_html(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"><figcaption>' \
           f"{html.escape(alt)}</figcaption></figure>"


CSS = """body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #bbb;padding:3px 7px;
text-align:right}th{background:#eee}td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}
img{max-width:100%;border:1px solid #ddd}figcaption{font-size:12px;color:#555}"""


def check_gantt_run(results_dir: Path, gantt_run: str) -> None:
    """`--gantt RUN_ID` names a run of this campaign (checked before any output is made)."""
    from schedlab.errors import InputError
    from schedlab.experiments.campaigns.kinds import kind_of_results

    results = results_dir / "results.parquet"
    if not results.is_file() or kind_of_results(results_dir) is not None:  # a study: no runs to draw
        raise InputError("--gantt draws a run of a campaign; this directory holds no campaign's runs",
                         path=str(results_dir))
    if gantt_run not in set(pd.read_parquet(results, columns=["run_id"])["run_id"]):
        raise InputError(f"--gantt {gantt_run}: no such run in {results}")


def make_report(results_dir: Path, out: Path, *, gantt_run: str | None = None) -> dict[str, Any]:
    """Write report.md, report.html (self-contained) and the PNGs into `out`."""
    if gantt_run is not None:
        check_gantt_run(results_dir, gantt_run)
    out.mkdir(parents=True, exist_ok=True)
    from schedlab.experiments.campaigns.kinds import kind_of_results

    study = kind_of_results(results_dir)
    if study is not None:  # a study file's results, not a campaign's
        title, parts, plots = study.report(results_dir, out)
        return write_report(out, title, parts, plots)
    frame = pd.read_parquet(results_dir / "results.parquet")
    frame["configuration"] = configuration(frame)
    campaign = ", ".join(sorted(frame["campaign"].unique()))
    complete = frame["complete"]
    sections: list[tuple[str, str, Any]] = []  # (title, text, table or image path)
    description = campaign_description(results_dir)
    if description:
        sections.append(("Study", description, None))
    sections.append(("Runs", f"{int(complete.sum())} of {len(frame)} runs complete; versions: schedlab "
                     f"{', '.join(sorted(frame['schedlab_version'].unique()))}.", None))
    if (results_dir / "notes.json").is_file():
        sections.append(("Notes", " ".join(json.loads((results_dir / "notes.json").read_text())), None))
    if (~complete).any():
        failed = frame.loc[~complete, ["run_id", "workload", "configuration", "error"]]
        sections.append(("Failed runs", "Each recorded with its error; the others went on.", failed))
    sections.append(("Summary", "Median over seeds and windows of the unperturbed runs.", summary_table(frame)))
    if (results_dir / "compare.json").is_file():
        from schedlab.experiments.papers.compare import sections as comparison

        sections += comparison(frame, json.loads((results_dir / "compare.json").read_text()))
    if (results_dir / "claims.json").is_file():
        from schedlab.experiments.papers.claims import claims_table

        table = claims_table(frame, json.loads((results_dir / "claims.json").read_text()))
        if not table.empty:
            sections.append(("Paper vs ours", "Medians over each group's instances (seeds or windows) of unperturbed, "
                             "complete runs; the thresholds are ours, stated in each line.", table))
    plots = []
    if (results_dir / "predictions.json").is_file():
        from schedlab.experiments.studies.campaign_predictions import sections as prediction_sections

        more, made_plots = prediction_sections(frame, json.loads((results_dir / "predictions.json").read_text()), out)
        sections += more
        plots += made_plots
    spread = perturbation_table(frame)
    if spread is not None:
        jitter = frame["jitter_s"].dropna().iloc[0]
        sections.append(("Perturbation arm", f"Submit times shifted by U[0, {jitter:g} s), mean bounded slowdown; "
                         "a configuration whose jittered range overlaps the best one's is not distinguishable "
                         "from it at this noise level.", spread))
    makers = [("AVGbsld per queue policy", plot_policy_boxes, "policy_boxes.png"),
              ("AVGbsld per configuration", plot_bsld_boxes, "bsld_boxes.png"),
              ("Waiting-time shares", plot_wait_shares, "wait_shares.png"),
              ("Metric vs option", plot_option_curves, "option_curves.png")]
    for title, maker, name in makers:
        if maker is plot_bsld_boxes and (out / "policy_boxes.png") in plots and _only_queue_orders(frame):
            continue  # the per-policy plot shows the same boxes, readably
        made: Path | None = maker(frame, out / name)
        if made is not None:
            plots.append(made)
            sections.append((title, "", made))
    chosen = frame.loc[complete & frame["repetition"].isna()]
    if gantt_run is not None:
        chosen = frame.loc[frame["run_id"] == gantt_run]
    if not chosen.empty:
        run = chosen.iloc[0]
        run_dir = results_dir / "runs" / run["run_id"]
        nb_resources = json.loads((run_dir / "summary.json").read_text())["metrics"]["nb_resources"]
        made = plot_gantt(run_dir, out / "gantt.png", int(nb_resources))
        if made is not None:
            plots.append(made)
            sections.append((f"Schedule of one run: {run['workload']}, {run['platform']}, {run['configuration']}",
                             f"run {run['run_id']}", made))
    report = write_report(out, f"Campaign report: {campaign}", sections, plots)
    write_text_atomic(out / "summary.json", json.dumps({"campaign": campaign, "runs": len(frame),
                                                        "complete": int(complete.sum())}) + "\n")
    return report


def campaign_description(results_dir: Path) -> str:
    """The `description` of the campaign file that made the results (made-by.json names it, as
    given: relative to where it ran), when that file is here; else empty."""
    import tomllib

    made = results_dir / "made-by.json"
    try:
        invocations = json.loads(made.read_text()).get("invocations", []) if made.is_file() else []
        path = Path(invocations[-1]["campaign"]) if invocations else None
        if path is None or not path.is_file():
            return ""
        return str(tomllib.loads(path.read_text(encoding="utf-8")).get("description", ""))
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError):
        return ""


def write_report(out: Path, name: str, sections: list[tuple[str, str, Any]], plots: list[Path]) -> dict[str, Any]:
    """report.md and a self-contained report.html from (title, text, table or image path) sections."""
    markdown = [f"# {name}", ""]
    body = [f"<h1>{html.escape(name)}</h1>"]
    for title, text, content in sections:
        markdown += [f"## {title}", "", text, ""] if text else [f"## {title}", ""]
        body += [f"<h2>{html.escape(title)}</h2>"] + ([f"<p>{html.escape(text)}</p>"] if text else [])
        if isinstance(content, pd.DataFrame):
            markdown += [markdown_table(content), ""]
            body.append(html_table(content))
        elif isinstance(content, Path):
            markdown += [f"![{title}]({content.name})", ""]
            body.append(_image_html(content, title))
    write_text_atomic(out / "report.md", "\n".join(markdown) + "\n")
    page = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(name)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
    write_text_atomic(out / "report.html", page)
    return {"markdown": out / "report.md", "html": out / "report.html", "plots": plots}
