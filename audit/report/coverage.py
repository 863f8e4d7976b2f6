"""The "Site coverage" section (crawl --links) of the text, markdown and HTML reports.

From the summary's `coverage`: whether the link crawl was complete (what stopped it if not),
pages crawled, listed URLs read, orphans, unlisted pages and broken links, and the pages
found at each depth (hops from the root or a listed page); the HTML section draws the depths
as an inline SVG bar chart. The findings themselves (url-orphan, page-not-in-sitemap,
link-broken) are listed with every other finding. Nothing without --links.

A writer shows the section when `coverage_rows` gives rows (its table of sections), through
the one function here for its format, which takes them; values are escaped by the writer's own
escaper. Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audit.report.aggregate import Examples, as_dict, count_of

__all__ = ["coverage_rows", "html_section", "markdown_lines", "text_lines"]

Escape = Callable[[str], str]
TITLE = "Site coverage"
_ROWS = (
    ("pages", "pages crawled"),
    ("listed", "listed pages read"),
    ("orphans", "orphans (url-orphan)"),
    ("unlisted", "unlisted pages (page-not-in-sitemap)"),
    ("broken_links", "broken link targets (link-broken)"),
)


def _verdict(cov: dict[str, Any]) -> str:
    if cov.get("complete"):
        return "complete: every internal link was followed"
    stopped = str(cov.get("stopped_by") or "cut")
    return f"incomplete (stopped by {stopped}): orphan verdicts withheld"


def _depths(cov: dict[str, Any]) -> list[tuple[int, int]]:
    depths = as_dict(cov.get("depths"))
    out = [(int(k), count_of(v)) for k, v in depths.items() if str(k).isdigit()]
    return sorted(out)


def coverage_rows(summary: dict[str, Any]) -> list[tuple[str, int]] | None:
    """(label, count) rows of the summary's coverage; None without --links."""
    cov = summary.get("coverage")
    if not isinstance(cov, dict):
        return None
    return [(label, count_of(cov.get(key))) for key, label in _ROWS]


def text_lines(
    summary: dict[str, Any],
    rows: list[tuple[str, int]],
    examples: Examples,
    clean: Escape,
    bold: Escape,
) -> list[str]:
    cov = summary["coverage"]
    out = ["", bold(TITLE), f"  {_verdict(cov)}"]
    out += [f"  {label:<38} {n:>9,}" for label, n in rows]
    depths = _depths(cov)
    if depths:
        out.append("  pages by depth: " + ", ".join(f"{d}: {n:,}" for d, n in depths))
    return out


def markdown_lines(
    summary: dict[str, Any],
    rows: list[tuple[str, int]],
    examples: Examples,
    code: Escape,
    text: Escape,
) -> list[str]:
    cov = summary["coverage"]
    out = [f"## {TITLE}", "", _verdict(cov) + ".", "", "| | Count |", "| --- | ---: |"]
    out += [f"| {label} | {n:,} |" for label, n in rows]
    depths = _depths(cov)
    if depths:
        out += ["", "| Depth | Pages |", "| ---: | ---: |"]
        out += [f"| {d} | {n:,} |" for d, n in depths]
    return [*out, ""]


def html_section(
    summary: dict[str, Any], rows: list[tuple[str, int]], examples: Examples, esc: Escape
) -> str:
    cov = summary["coverage"]
    cells = "".join(f"<tr><td>{esc(label)}</td><td>{n:,}</td></tr>" for label, n in rows)
    return (
        f'<section id="coverage"><h2>{TITLE}</h2><p>{esc(_verdict(cov))}</p>'
        f"<table>{cells}</table>{_depth_chart(_depths(cov))}</section>"
    )


def _depth_chart(depths: list[tuple[int, int]]) -> str:
    """Pages by depth as horizontal bars (SVG attributes only: no inline style)."""
    if not depths:
        return ""
    top = max(n for _, n in depths) or 1
    bars = []
    for i, (depth, n) in enumerate(depths):
        y = i * 18
        width = max(1, round(300 * n / top))
        bars.append(
            f'<text x="0" y="{y + 12}" font-size="11">depth {depth}</text>'
            f'<rect x="60" y="{y + 2}" width="{width}" height="12" fill="#4a78b0"></rect>'
            f'<text x="{66 + width}" y="{y + 12}" font-size="11">{n:,}</text>'
        )
    height = 18 * len(depths)
    return (
        f'<svg role="img" aria-label="pages by depth" width="440" height="{height}" '
        f'viewBox="0 0 440 {height}">{"".join(bars)}</svg>'
    )
