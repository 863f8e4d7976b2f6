"""The "What each bot sees" section of the text, markdown and HTML reports, and the HTML
report's indexability panel.

From the summary's `agents` (`--agents`: blocked and noindex counts per agent): one row per
agent with its counts and the share of listed URLs robots.txt lets it read. From the url
records' `indexability` (`IndexTally`): how many listed URLs are indexable and why the others
are not, with the first URLs of each reason in a table the reader filters by reason (CSS
only: the report's CSP runs no script but its own).

The text and markdown writers show the agents section when `agent_rows` gives rows (their
tables of sections), through the function here for their format; the HTML writer calls
`html_section` for both panels. Values from records are escaped by the writer's own escaper.
Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from audit.report.aggregate import Examples, as_dict, as_int, count_of, percent
from audit.report.llms import coverage_line

__all__ = ["REASONS", "IndexTally", "agent_rows", "html_section", "markdown_lines", "text_lines"]

Escape = Callable[[str], str]
REASONS = ("noindex", "robots", "canonical", "status", "redirect", "not-html", "unreachable")
TITLE = "What each bot sees"
EXAMPLES_PER_REASON = 50


Row = tuple[str, int, int, float | None]


def agent_rows(summary: dict[str, Any]) -> list[Row]:
    """(agent, blocked, noindex, % of listed URLs it may read) of each agent of the summary."""
    # summary_dict() made "urls" an int
    total = max(0, as_int(summary.get("urls")))
    rows = []
    for name, counts in as_dict(summary.get("agents")).items():
        counts = as_dict(counts)
        blocked, noindex = count_of(counts.get("blocked")), count_of(counts.get("noindex"))
        share = 100.0 * max(0, total - blocked) / total if total else None
        rows.append((str(name), blocked, noindex, share))
    return rows


def text_lines(
    summary: dict[str, Any], rows: list[Row], examples: Examples, clean: Escape, bold: Escape
) -> list[str]:
    """The section for the text report: a title and one aligned row per agent."""
    names = [clean(name) for name, *_ in rows]
    width = max(map(len, ["agent", *names]))
    out = ["", bold(TITLE), f"  {'agent':<{width}}  {'blocked':>9}  {'noindex':>9}  may read"]
    for name, (_, blocked, noindex, share) in zip(names, rows, strict=True):
        out.append(f"  {name:<{width}}  {blocked:>9,}  {noindex:>9,}  {percent(share):>8}")
    line = coverage_line(summary)
    if line is not None:
        out.append(f"  {clean(line)}")
    return out


def markdown_lines(
    summary: dict[str, Any], rows: list[Row], examples: Examples, code: Escape, text: Escape
) -> list[str]:
    """The section for the markdown report: a table, one row per agent."""
    out = [
        f"## {TITLE}",
        "",
        "| Agent | Blocked | Noindex | May read |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, blocked, noindex, share in rows:
        out.append(f"| {code(name)} | {blocked:,} | {noindex:,} | {percent(share)} |")
    out.append("")
    line = coverage_line(summary)
    if line is not None:
        out += [line, ""]
    return out


class IndexTally:
    """Indexability over the url records, with the first URLs of each reason."""

    def __init__(self, examples: int = EXAMPLES_PER_REASON) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self._max = examples

    def add(self, record: dict[str, Any]) -> None:
        if record.get("type") != "url" or "indexable" not in record:
            return
        reason = record.get("indexability")
        key = reason if isinstance(reason, str) else "indexable"
        self.counts[key] += 1
        if key != "indexable":
            kept = self.examples.setdefault(key, [])
            if len(kept) < self._max:
                kept.append(str(record.get("url") or ""))


_CSS = """
.ixf{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:10px}
#indexability>input[name=ix]{position:absolute;opacity:0;width:1px;height:1px;margin:0}
#indexability>input[name=ix]:focus-visible~.ixf{outline:2px solid #0969da;outline-offset:4px}
.ixf label{border:1px solid var(--line);border-radius:12px;padding:2px 10px;cursor:pointer}
.bar{fill:#2da44e}.bar.back{fill:#eaeef2}
"""


# the reason radios hide the rows of other reasons
_CSS += (
    "".join(
        f"#ix-{r}:checked~.scroll tr[data-ix]:not([data-ix={r}]){{display:none}}"
        f"#ix-{r}:checked~.ixf label[for=ix-{r}]{{background:#ddf4ff}}"
        for r in REASONS
    )
    + "#ix-all:checked~.ixf label[for=ix-all]{background:#ddf4ff}"
)


def html_section(summary: dict[str, Any], tally: IndexTally, esc: Escape, nonce: str) -> str:
    """The HTML report's indexability panel, and the agents panel when --agents ran."""
    panels = _indexability_panel(tally, esc) + _agents_panel(summary, esc)
    if not panels:
        return ""
    return f'<style nonce="{esc(nonce)}">{_CSS}</style>{panels}'


def _indexability_panel(tally: IndexTally, esc: Escape) -> str:
    if not tally.counts:
        return ""
    radios = ['<input type="radio" name="ix" id="ix-all" checked>']
    labels = [f'<label for="ix-all">all ({sum(tally.counts.values()):,})</label>']
    labels.append(f"<span>indexable: {tally.counts['indexable']:,}</span>")
    rows = []
    for reason in filter(tally.counts.get, REASONS):  # the reasons some URL has
        radios.append(f'<input type="radio" name="ix" id="ix-{reason}">')
        labels.append(f'<label for="ix-{reason}">{reason} ({tally.counts[reason]:,})</label>')
        rows += [
            f'<tr data-ix="{reason}"><td>{reason}</td><td class="url">{esc(url)}</td></tr>'
            for url in tally.examples.get(reason, [])
        ]
    table = (
        '<div class="scroll"><table id="ix-table"><thead><tr><th>Not indexable: why</th>'
        f"<th>URL</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    return (
        '<section class="panel" id="indexability"><h2>Indexability</h2>'
        + "".join(radios)
        + f'<div class="ixf">{"".join(labels)}</div>{table}'
        + f'<p class="more">The first {EXAMPLES_PER_REASON} URLs of each reason; the jsonl'
        " or csv report has every one.</p></section>"
    )


def _agents_panel(summary: dict[str, Any], esc: Escape) -> str:
    rows = agent_rows(summary)
    if not rows:
        return ""
    llms = coverage_line(summary)  # what --llms found, under the agents table
    body = "".join(
        f'<tr><td class="mono">{esc(name)}</td><td class="num">{blocked:,}</td>'
        f'<td class="num">{noindex:,}</td><td class="num">{percent(share)}</td>'
        f"<td>{_bar(share, name, esc)}</td></tr>"
        for name, blocked, noindex, share in rows
    )
    return (
        f'<section class="panel" id="agents"><h2>{TITLE}</h2><table><thead><tr><th>Agent</th>'
        '<th class="num">Blocked</th><th class="num">Noindex</th><th class="num">May read</th>'
        f"<th>Listed URLs it may read</th></tr></thead><tbody>{body}</tbody></table>"
        '<p class="more">Blocked: robots.txt disallows the agent; noindex: an X-Robots-Tag or'
        " robots meta (with --page-checks) that applies to it. Judged from what the run"
        " fetched, without a request of the agent's own.</p>"
        + ("" if llms is None else f'<p class="llms">{esc(llms)}</p>')
        + "</section>"
    )


def _bar(share: float | None, name: str, esc: Escape) -> str:
    """A small inline SVG bar of the share (attributes, not styles: the CSP allows them)."""
    width = 0.0 if share is None else round(2 * share, 1)
    return (
        f'<svg class="chart" viewBox="0 0 200 14" width="200" role="img"'
        f' aria-label="{esc(name)}: {percent(share)}"><rect class="bar back" width="200"'
        f' height="14" rx="3"/><rect class="bar" width="{width}" height="14" rx="3"/></svg>'
    )
