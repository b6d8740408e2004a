"""How a report says things: numbers and tables in Markdown and HTML, medians in words, figures
laid out and written whole. Shared by the campaign report and every study's own sections (the
studies import this, never the report, which imports them)."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import pandas as pd


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def markdown_table(frame: pd.DataFrame) -> str:
    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def html_table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def median_text(value: float) -> str:
    """A median as plots and claim rows print it: whole above 100, three digits below."""
    return "n/a" if math.isnan(value) else (f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path, rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> Path:
    """Lay out and write a figure: a title wider than the figure is wrapped to it, and the saved
    image grows to hold anything still outside (no label is cut at an edge)."""
    title = getattr(fig, "_suptitle", None)
    if title is not None and title.get_text():
        import textwrap

        # characters per line: the figure's width over an average glyph (~0.55 em) at the title's size
        per_line = max(20, int(fig.get_figwidth() * 72 / (0.55 * title.get_fontsize())))
        lines = [textwrap.fill(line, per_line) for line in title.get_text().split("\n")]
        title.set_text("\n".join(lines))
        extra = sum(line.count("\n") for line in lines) * title.get_fontsize() * 1.3 / 72 / fig.get_figheight()
        rect = (rect[0], rect[1], rect[2], rect[3] - extra)
    fig.tight_layout(rect=rect)
    from schedlab.paths import atomic_path

    with atomic_path(path, suffix=Path(path).suffix) as temporary:
        fig.savefig(temporary, dpi=110, bbox_inches="tight", pad_inches=0.08)
    _pyplot().close(fig)
    return path
