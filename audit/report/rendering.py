"""The "Rendering" section (crawl --render) of the text, markdown and HTML reports.

From the summary's `render` (pages whose render started, failures, the seconds from the
browser's first start to the end of the last render, the browser's peak memory) and its
`by_code` (each render code counted), and the raw/rendered differences per page: the
findings of the render codes the writer kept as examples, whose messages name both values.
Nothing without --render.

A writer shows the section when `render_rows` gives rows (its table of sections), through the
one function here for its format, which takes them; values are escaped by the writer's own
escaper. Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from audit.report.aggregate import Examples, as_dict, count_of

__all__ = ["RENDER_CODES", "html_section", "markdown_lines", "render_rows", "text_lines"]

Escape = Callable[[str], str]
TITLE = "Rendering"
RENDER_CODES = (
    "render-noindex-raw-only",
    "render-noindex-added",
    "render-canonical-changed",
    "render-title-changed",
    "render-links-only",
    "render-content-only",
    "render-hreflang-changed",
    "render-js-redirect",
    "render-failed",
)
PER_PAGE = 20  # differences listed at most


def render_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """(label, value) rows of the summary's render note; None without --render."""
    note = summary.get("render")
    if not isinstance(note, dict):
        return None
    pages, failed = count_of(note.get("pages")), count_of(note.get("failed"))
    seconds = note.get("seconds")
    rows = [
        ("pages rendered", f"{pages - failed:,}"),
        ("failed (render-failed)", f"{failed:,}"),
        ("seconds", f"{seconds:.1f}" if isinstance(seconds, int | float) else "—"),
    ]
    peak = note.get("peak_mb")
    if isinstance(peak, int | float):
        rows.append(("browser peak memory (MB)", f"{peak:,.0f}"))
    by_code = as_dict(summary.get("by_code"))
    rows += [(code, f"{count_of(by_code.get(code)):,}") for code in RENDER_CODES]
    return rows


def _differences(examples: Examples) -> list[tuple[str, str, str]]:
    """(url, code, message) of the render findings kept, in code order, at most PER_PAGE."""
    out: list[tuple[str, str, str]] = []
    for code in RENDER_CODES:
        for ex in examples.get(code, ()):
            out.append((ex.url, code, ex.message))
    return out[:PER_PAGE]


def text_lines(
    summary: Mapping[str, Any],
    rows: list[tuple[str, str]],
    examples: Examples,
    clean: Escape,
    bold: Escape,
) -> list[str]:
    out = ["", bold(TITLE)]
    out += [f"  {label:<38} {value:>9}" for label, value in rows]
    diffs = _differences(examples)
    if diffs:
        out.append("  raw HTML against the rendered page:")
        out += [f"    {clean(url)}: {code}: {clean(message)}" for url, code, message in diffs]
    return out


def markdown_lines(
    summary: Mapping[str, Any],
    rows: list[tuple[str, str]],
    examples: Examples,
    code: Escape,
    esc: Escape,
) -> list[str]:
    out = [f"## {TITLE}", "", "| | |", "| --- | ---: |"]
    out += [f"| {esc(label)} | {value} |" for label, value in rows]
    diffs = _differences(examples)
    if diffs:
        out += ["", "| Page | Code | Raw HTML against the rendered page |", "| --- | --- | --- |"]
        out += [f"| {esc(url)} | `{code}` | {esc(message)} |" for url, code, message in diffs]
    return [*out, ""]


def html_section(
    summary: Mapping[str, Any], rows: list[tuple[str, str]], examples: Examples, esc: Escape
) -> str:
    cells = "".join(f"<tr><td>{esc(label)}</td><td>{esc(value)}</td></tr>" for label, value in rows)
    diffs = _differences(examples)
    table = ""
    if diffs:
        body = "".join(
            f"<tr><td>{esc(url)}</td><td><code>{esc(code)}</code></td><td>{esc(message)}</td></tr>"
            for url, code, message in diffs
        )
        table = (
            "<table><thead><tr><th>Page</th><th>Code</th>"
            f"<th>Raw HTML against the rendered page</th></tr></thead><tbody>{body}</tbody></table>"
        )
    return f'<section id="rendering"><h2>{TITLE}</h2><table>{cells}</table>{table}</section>'
