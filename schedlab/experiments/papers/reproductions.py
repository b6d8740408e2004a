"""The table of record (`schedlab reproductions DIR... -o docs/reproductions.md`): per study, per
published row, `paper | ours | same sign? | cause | evidence`, generated from the results
directories of the campaigns and factories that reproduce the papers, each headed by what made it
(DIR/made-by.json). A row's cause comes from its paper file (`cause`, default `unknown`; `none`
when ours has the paper's sign and no cause is given) or, for a policy factory, from which trial
order reproduces the figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from schedlab.errors import InputError
from schedlab.experiments.papers.evidence import DROPPED, has_results, json_files, read_results, versions_of

COLUMNS = ["row", "where", "source", "paper", "ours", "same sign?", "same size?", "cause", "evidence"]


def source_commit() -> str:
    """The commit of the code running (short hash, and whether the tree has uncommitted changes)."""
    import subprocess

    source = Path(__file__).resolve().parents[2]  # the checkout holding the package (schedlab/)
    try:
        commit = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True, timeout=10).stdout.strip()
        # the tables of record are outputs: regenerating them does not make the code "changed"
        dirty = subprocess.run(["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)experiments/*/RESULTS-*.md", ":(exclude)docs/reproductions.md"],
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return commit + (" with uncommitted changes" if dirty else "")


def made_by_text(results_dir: Path) -> str:
    """Who made a results directory: each `experiment run` into it, oldest first."""
    import shlex

    path = results_dir / "made-by.json"
    if not path.is_file():
        return f"an `experiment run` into {results_dir} that did not record itself"
    invocations = json.loads(path.read_text()).get("invocations", [])
    texts = [f"`schedlab {shlex.join(m['command'])}` on {m['date']}, schedlab {m['version']}, commit {m['commit']}"
             for m in invocations]
    return texts[0] + "".join(f"; resumed (finished runs kept) by {text}" for text in texts[1:])


def load_frames(results_dirs: list[Path], locations: dict[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """Each campaign's results table by the campaign's name: what causes measure (a study's own
    runs, or another's, such as the same schedulers with exact run times). `locations` receives
    each one's directory."""
    frames = {}
    for directory in results_dirs:
        if (directory / "results.parquet").is_file() or (directory / "results.csv").is_file():
            frame = read_results(directory)
            if "campaign" in frame and len(frame):
                frames[str(frame["campaign"].iloc[0])] = frame
                if locations is not None:
                    locations[str(frame["campaign"].iloc[0])] = display_path(directory)
    return frames


def display_path(directory: Path) -> str:
    """A directory as the table names it: relative to the working directory when inside it."""
    try:
        return str(directory.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(directory)


def agrees(same_sign: str, same_size: str) -> bool:
    """Agreement needs a check that passes and none that fails: the sign (or finding) and the size."""
    sign_ok = same_sign in ("yes", "holds")
    size_ok = same_size == "yes"
    return (sign_ok or size_ok) and same_sign in ("yes", "holds", "-") and same_size in ("yes", "-")


def evidence_places(cause: Any, study: str, typed: str, locations: dict[str, str], own: str) -> str:
    """Where a row was measured: its study's evidence, any other study's its cause measures on, and
    where else its file says to look."""
    from schedlab.experiments.papers.causes import studies_named

    others = studies_named(cause) if isinstance(cause, dict) else []
    places = list(dict.fromkeys([own, *(locations.get(name, name) for name in others)]))
    return "; ".join(places) + (f"; see also {typed}" if typed else "")


def study_table(results_dir: Path, frames: dict[str, pd.DataFrame] | None = None,
                locations: dict[str, str] | None = None) -> tuple[str, pd.DataFrame]:
    """(the study's name, its rows in COLUMNS), each cause measured on `frames` (every study's
    results by campaign name; default: this study's only); `locations`: each study's directory, as
    the evidence column names it."""
    from schedlab.experiments.papers.causes import final_cause
    if not results_dir.is_dir():
        raise InputError("no such directory", path=str(results_dir))
    if not has_results(results_dir):
        raise InputError("no results here (not a results directory, or a study that has not finished)",
                         path=str(results_dir))
    frames = dict(frames or load_frames([results_dir]))
    locations = locations or {}
    from schedlab.experiments.campaigns.kinds import kind_of_results

    kind = kind_of_results(results_dir)
    if kind is not None:  # a study file's results: the kind sets them beside its paper
        return kind.paper_table(results_dir, frames, locations)
    results = read_results(results_dir)
    name = str(results["campaign"].iloc[0])
    frames.setdefault(name, results)
    if (results_dir / "claims.json").is_file():
        from schedlab.experiments.papers.claims import claims_table

        table = claims_table(results, json.loads((results_dir / "claims.json").read_text()), measured=True)
        if table.empty:
            return name, pd.DataFrame(columns=COLUMNS)
        from schedlab.experiments.papers.claims import recompute

        def ablation(line: dict[str, Any]):
            return lambda arm: recompute(frames[arm.get("study", name)], line["_claim"], line["_workload"],
                                         line["_platform"], line["_label"], arm)

        cause = [("none" if agrees(line["same sign?"], "-") else "per group: each group's cause, measured above")
                 if line["_summary"] else
                 final_cause(line["cause"], agrees(line["same sign?"], "-"), frames=frames, study=name,
                             context={"workload": line["_workload"], "platform": line["_platform"]},
                             ours_distance=_number_or_none(line["_distance"]),
                             recompute=ablation(line) if line["_label"] else None)
                 for line in table.to_dict("records")]
        frame = pd.DataFrame({"row": table["row"], "where": name, "source": "paper",
                              "paper": table["paper figure"], "ours": table["ours"], "same sign?": table["same sign?"],
                              "same size?": "-", "cause": cause, "headline": table["_headline"],
                              "evidence": [evidence_places(c, name, e, locations, display_path(results_dir))
                                           for c, e in zip(table["cause"], table["evidence"], strict=True)]})
        return name, frame
    if not (results_dir / "compare.json").is_file():  # a campaign of arms that other studies' causes measure
        return name, pd.DataFrame(columns=COLUMNS)
    from schedlab.experiments.papers.paper_rows import paper_table

    spec = json.loads((results_dir / "compare.json").read_text())
    table = paper_table(results, spec, measured=True)
    if table.empty:
        return name, pd.DataFrame(columns=COLUMNS)
    lines = []
    for line in table.to_dict("records"):
        same = line["same sign? last / median"].split(" / ")[-1]
        measured = final_cause(line["cause"], agrees(same, line["same size?"]), frames=frames, study=name,
                            context={"workload": line["workload"], "platform": line["platform"]},
                            ours_distance=_number_or_none(line.get("_distance")),
                            recompute=_compare_recompute(frames, name, spec, line))
        note = line["note"]
        lines.append({"row": line["row"], "where": f"{line['workload']} on {line['platform']}",
                      "source": line["_row"].get("source", "paper"), "paper": _paper_text(line),
                      "ours": line["ours, median"] + (f" (note: {note})" if note else ""),
                      "same sign?": same, "same size?": line["same size?"], "cause": measured,
                      "evidence": evidence_places(line["cause"], name, line["evidence"], locations,
                                             display_path(results_dir)),
                      "headline": bool(line["_row"].get("headline", False))})
    return name, pd.DataFrame(lines, columns=[*COLUMNS, "headline"])


def _number_or_none(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


def _paper_text(line: dict[str, Any]) -> str:
    """The paper's figure compared, and what the paper prints when that differs (say which)."""
    printed = line["_row"].get("printed")
    return f"{line['paper']} (printed: {printed})" if printed else line["paper"]


def _compare_recompute(frames: dict[str, pd.DataFrame], study: str, spec: dict[str, Any], line: dict[str, Any]):
    """The ablation of a paper row: the same figure on another arm (schedulers, workload, platform,
    metric, study)."""
    from schedlab.experiments.papers.paper_rows import figure_distance

    def recompute(arm: dict[str, Any]) -> tuple[str, float] | None:
        pair = tuple(arm.get("schedulers") or line.get("_pair") or ())
        if len(pair) != 2:
            return None
        if "candidate" in arm:  # only the row's candidate replaced
            pair = (pair[0], arm["candidate"])
        row = {**line["_row"], **({"metric": arm["metric"]} if "metric" in arm else {})}
        frame = frames[arm.get("study", study)]
        if arm.get("options"):
            from schedlab.experiments.papers.causes import runs_of

            frame = runs_of(frame, options=arm["options"])
        if row["metric"] not in frame:
            return None
        return figure_distance(frame, spec, row, pair, arm.get("workload", line["workload"]),
                               arm.get("platform", line["platform"]))

    return recompute


def _commits(results_dir: Path) -> list[str]:
    path = results_dir / "made-by.json"
    if not path.is_file():
        return []
    return [m["commit"] for m in json.loads(path.read_text()).get("invocations", [])]


def _versions(results_dir: Path) -> dict[str, list[str]]:
    if (results_dir / "versions.json").is_file():
        return json.loads((results_dir / "versions.json").read_text())
    if (results_dir / "results.parquet").is_file() or (results_dir / "results.csv").is_file():
        return versions_of(read_results(results_dir))
    return {}


def _inputs_lines(results_dir: Path) -> list[str]:
    """What the study ran on (inputs.json, written with its evidence): its description (what stands
    for the paper's data) and each trace or generator with its conversion."""
    path = results_dir / "inputs.json"
    if not path.is_file():
        return []
    inputs = json.loads(path.read_text())

    def source(entry: dict[str, Any]) -> str:
        what = entry["source"]
        text = (", ".join(f"{k} {v}" for k, v in what.items()) if isinstance(what, dict) else str(what))
        options = {k: v for k, v in (entry.get("convert") or {}).items()}
        if entry.get("windows"):
            options["windows"] = entry["windows"]
        return f"{entry['name']} = {text}" + (f" ({', '.join(f'{k} {v}' for k, v in options.items())})"
                                              if options else "")

    lines = [inputs["description"]] if inputs.get("description") else []
    if inputs.get("workloads"):
        lines.append("Traces and workloads: " + "; ".join(source(e) for e in inputs["workloads"]) + ".")
    return lines


def versions_text(versions: dict[str, list[str]]) -> str:
    return ", ".join(f"{name} {' and '.join(v)}" for name, v in sorted(versions.items()) if v) or "not recorded"


def summary_lines(name: str, frame: pd.DataFrame) -> list[str]:
    """What reproduces and what does not, from the rows: the headline row (the first its file marks
    `headline`, else the first) with paper, ours and cause, and the count of rows per cause kind."""
    if frame.empty:
        return [f"- **{name}**: no published figure to compare."]
    marked = frame.index[frame["headline"].fillna(False).astype(bool)] if "headline" in frame else []
    headline = frame.index.get_loc(marked[0]) if len(marked) else 0
    kinds = frame["cause"].map(lambda c: c.split(";")[0].split(" (")[0].split(":")[0])
    counts = kinds.value_counts()
    agree = int(counts.get("none", 0))
    differ = ", ".join(f"{int(n)} {kind}" for kind, n in counts.items() if kind != "none")
    top = frame.iloc[headline]
    cause = str(top["cause"]).split(";")[0]
    return [f"- **{name}**: {agree} of {len(frame)} rows agree with the paper (sign and size)"
            + (f"; the others' causes: {differ}" if differ else "") + ". Headline: " + f"{top['row']}: paper "
            f"{top['paper']}, ours {top['ours']} ({'agrees' if cause == 'none' else 'cause: ' + cause})."]


def load_not_attempted(path: Path | None) -> dict[str, list[tuple[str, str]]]:
    """`[[claims]]` of study, claim, why: the published claims not reproduced, by study name."""
    if path is None:
        return {}
    from schedlab.experiments.campaigns.tomlfile import _table, read_checked

    if not path.is_file():
        raise InputError("no such file", path=str(path))
    doc, at = read_checked(path, {"claims"})
    found: dict[str, list[tuple[str, str]]] = {}
    for index, entry in enumerate(doc.get("claims", [])):
        entry = _table(entry, {"study", "claim", "why"}, at, "claims", index)
        for key in ("study", "claim", "why"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise at.error("expected a text", "claims", index, key)
        found.setdefault(entry["study"], []).append((entry["claim"], entry["why"]))
    return found


def write_reproductions(results_dirs: list[Path], path: Path, *, one_commit: bool = False,
                       not_attempted: Path | None = None) -> int:
    """docs/reproductions.md from the results directories (or their committed evidence); returns the
    number of rows. Every cause is measured first: an unsupported one fails before the file is
    touched. `one_commit`: fail unless every study was made by one commit of the code."""
    from schedlab.experiments.campaigns.render import markdown_table
    from schedlab.paths import atomic_write

    skipped = load_not_attempted(not_attempted)
    locations: dict[str, str] = {}
    frames = load_frames(results_dirs, locations)
    tables = [study_table(d, frames, locations) for d in results_dirs]
    commits = sorted({c for d in results_dirs for c in _commits(d)})
    if one_commit and len(commits) != 1:
        raise InputError(f"the studies were made by {len(commits)} commits ({', '.join(commits) or 'none recorded'}),"
                         " not one: rerun them from scratch (scripts/reproduce.sh all)", path=str(results_dirs[0]))
    versions: dict[str, set[str]] = {}
    for directory in results_dirs:
        for library, values in _versions(directory).items():
            versions.setdefault(library, set()).update(values)
    made = (f"every study made by commit {commits[0]}" if len(commits) == 1 else
            f"studies made by {len(commits)} commits ({', '.join(commits)}): not one" if commits else
            "commits not recorded")
    parts = ["# Reproductions: the table of record",
             "<!-- written by `schedlab reproductions`: regenerate it, do not edit it -->",
             f"Made from {made}; library versions: {versions_text({k: sorted(v) for k, v in versions.items()})}.",
             "Per study and published row: the paper's figure (its source: the paper, or the authors' data), ours "
             "(the median over windows), whether ours has the paper's sign and its size (within the study's factor), "
             "and the cause of any difference: data, method or defect fixed, each with the measurement that "
             "supports it (computed here from the study's committed evidence) or the fact it cites; unknown when "
             "not known; none when ours agrees. Each study's evidence and the command that made it head its table; "
             "the studies' RESULTS files hold the full reports.",
             "## What reproduces and what does not"]
    parts.append("\n".join(line for (name, frame) in tables for line in summary_lines(name, frame)
                            + [f"  Not attempted: {claim} ({why})." for claim, why in skipped.get(name, [])]))
    unknown = sorted(set(skipped) - {name for name, _ in tables})
    if unknown:
        raise InputError(f"no study named {unknown[0]!r} among the studies given", path=str(not_attempted))
    count = 0
    for results_dir, (name, frame) in zip(results_dirs, tables, strict=True):
        count += len(frame)
        parts += [f"## {name}", *_inputs_lines(results_dir),
                  f"Made by {made_by_text(results_dir)}; library versions: {versions_text(_versions(results_dir))}.",
                  markdown_table(frame[COLUMNS]) if len(frame) else "No published figure to compare.",
                  *(f"Not attempted: {claim}. Why: {why}." for claim, why in skipped.get(name, []))]
    with atomic_write(path) as handle:
        handle.write("\n\n".join(parts) + "\n")
    return count


# ---------------------------------------------------------------- a study's committed evidence


def refresh_paper(directory: Path) -> Path | None:
    """The paper's figures and the causes as the study's files state them now (the campaign, factory
    or study file its last invocation named, and the paper file that names), in place of the copies
    the run made: a cause is corrected and measured again without re-running a study, so one commit
    still made every run. Returns the file read (None when it is not here: the copies stand)."""
    from schedlab.experiments.campaigns.kinds import kind_named
    from schedlab.experiments.campaigns.tomlfile import file_kind

    made = directory / "made-by.json"
    invocations = json.loads(made.read_text()).get("invocations", []) if made.is_file() else []
    path = Path(invocations[-1]["campaign"]) if invocations else None
    if path is None or not path.is_file():
        return None
    study = kind_named(file_kind(path))

    def update(name: str, change) -> None:
        target = directory / name
        if target.is_file():
            data = json.loads(target.read_text())
            change(data)
            sorted_keys = study is None or study.record_sorted
            target.write_text(json.dumps(data, indent=1, sort_keys=sorted_keys) + "\n")

    import tomllib

    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    inputs: dict[str, Any] = {"description": str(doc.get("description", "")), "workloads": []}
    if study is not None:
        inputs["workloads"].append(study.refresh(study.load(path), update))
    else:
        from schedlab.experiments.campaigns.campaign import load_campaign

        campaign = load_campaign(path)
        if campaign.compare is not None:
            (directory / "compare.json").write_text(json.dumps(campaign.compare, indent=1, sort_keys=True) + "\n")
        if campaign.claims:
            (directory / "claims.json").write_text(json.dumps(list(campaign.claims), indent=1, sort_keys=True) + "\n")
        for spec in campaign.workloads:
            source = spec.source if isinstance(spec.source, dict) else Path(str(spec.source)).name
            inputs["workloads"].append({"name": spec.name, "kind": spec.kind, "source": source,
                                        "convert": dict(spec.convert), "windows": spec.windows})
    (directory / "inputs.json").write_text(json.dumps(inputs, indent=1, sort_keys=True, default=str) + "\n")
    return path


def write_evidence(results_dir: Path, out: Path) -> dict[str, Any]:
    """Write the evidence of a results directory into `out` (replaced as a whole, atomically)."""
    import pandas as pd

    from schedlab.experiments.campaigns.kinds import record_files
    from schedlab.paths import atomic_write

    if not has_results(results_dir):
        raise InputError("no results here (not a results directory, or a study that has not finished)",
                         path=str(results_dir))
    staging = out.with_name(out.name + ".part")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in json_files():
        if (results_dir / name).is_file():
            shutil.copyfile(results_dir / name, staging / name)
    refresh_paper(staging)
    here = Path.cwd().resolve()
    for name in json_files():  # no machine's paths: the repository's relative to it, the data beside it as ../shared
        if (staging / name).is_file():
            text = (staging / name).read_text()
            text = text.replace(f'"{here}/', '"').replace(f'"{here.parent}/shared/', '"../shared/')
            (staging / name).write_text(text)
    versions: dict[str, list[str]] = {}
    for name in record_files():  # a study's own record of them
        if (results_dir / name).is_file():
            recorded = json.loads((results_dir / name).read_text()).get("versions") or {}
            versions = {library: [value] for library, value in recorded.items()}
    if (results_dir / "results.parquet").is_file():
        frame = pd.read_parquet(results_dir / "results.parquet")
        versions = versions or versions_of(frame)
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
