"""The "Intent" section of the text, markdown and HTML reports (`--intent FILE`).

From the summary's `intent` (contracts/nights.md section 3): one row per action (`keep`,
`redirect`, `gone`) with the URLs judged under a row of that action, how many broke it, and
the pass rate. A writer shows it when `intent_rows` gives rows (its table of sections), through
the function here for its format; values from records are escaped by the writer's own escaper.
Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audit.report.aggregate import Examples, as_dict, count_of, counted, percent

__all__ = ["ACTIONS", "html_section", "intent_rows", "markdown_lines", "text_lines"]

Escape = Callable[[str], str]
ACTIONS = ("keep", "redirect", "gone")
TITLE = "Intent"


Row = tuple[str, int, int, float | None]


def intent_rows(summary: dict[str, Any]) -> list[Row]:
    """(action, judged, violated, % passed or None when none was judged), one per action;
    empty when the run had no --intent."""
    block = summary.get("intent")
    if not isinstance(block, dict):
        return []
    rows = []
    for action in ACTIONS:
        counts = as_dict(block.get(action))
        judged, violated = count_of(counts.get("judged")), count_of(counts.get("violated"))
        rate = 100.0 * (judged - violated) / judged if judged else None
        rows.append((action, judged, violated, rate))
    return rows


def _head(summary: dict[str, Any]) -> tuple[str, int]:
    block = as_dict(summary.get("intent"))
    return str(block.get("file") or ""), count_of(block.get("rows"))


def text_lines(
    summary: dict[str, Any], rows: list[Row], examples: Examples, clean: Escape, bold: Escape
) -> list[str]:
    """The section for the text report: a title, the file, and one row per action."""
    file, n = _head(summary)
    out = [
        "",
        bold(TITLE),
        f"  {clean(file)}: {counted(n, 'row')}",
        f"  {'action':<8}  {'judged':>9}  {'violated':>9}  {'passed':>7}",
    ]
    for action, judged, violated, rate in rows:
        out.append(f"  {action:<8}  {judged:>9,}  {violated:>9,}  {percent(rate):>7}")
    return out


def markdown_lines(
    summary: dict[str, Any], rows: list[Row], examples: Examples, code: Escape, text: Escape
) -> list[str]:
    """The section for the markdown report: the file and a table, one row per action."""
    file, n = _head(summary)
    out = [
        f"## {TITLE}",
        "",
        f"{code(file)}: {counted(n, 'row')}",
        "",
        "| Action | Judged | Violated | Passed |",
        "| --- | ---: | ---: | ---: |",
    ]
    for action, judged, violated, rate in rows:
        out.append(f"| `{action}` | {judged:,} | {violated:,} | {percent(rate)} |")
    out.append("")
    return out


def html_section(summary: dict[str, Any], rows: list[Row], examples: Examples, esc: Escape) -> str:
    """The HTML report's panel: the file and a table, one row per action."""
    file, n = _head(summary)
    body = "".join(
        f'<tr><td class="mono">{action}</td><td class="num">{judged:,}</td>'
        f'<td class="num">{violated:,}</td><td class="num">{percent(rate)}</td></tr>'
        for action, judged, violated, rate in rows
    )
    return (
        f'<section class="panel" id="intent"><h2>{TITLE}</h2>'
        f'<p><span class="mono">{esc(file)}</span>: {counted(n, "row")}</p>'
        '<table><thead><tr><th>Action</th><th class="num">Judged</th>'
        '<th class="num">Violated</th><th class="num">Passed</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
        '<p class="more">Each URL an intent row applies to, judged on the answer its check got;'
        " a URL that breaks its row is an intent-violated error.</p></section>"
    )
