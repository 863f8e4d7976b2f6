"""markdown writer: a summary for tickets and pull requests (GitHub-flavoured tables).

A summary table (sitemaps, URLs, errors, warnings, info, duration, verdict),
a table of findings by code (code linked to its section of docs/codes.md,
severity, count, Search Console's name, what it means) and, per code, up to
`examples` examples (URL, sitemap:line, message). URLs and codes go in code
spans; `|` is escaped inside table cells (GFM unescapes `\\|` before reading
the span) and a span's fence is longer than any backtick run inside it; prose
has Markdown and HTML metacharacters backslash-escaped. Rendered at
close from an `Aggregate`. Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import Any, TextIO

from audit.core.codes import CODES, doc_anchor
from audit.core.printable import printable, url_printable
from audit.report import (
    Sections,
    agents,
    closes_once,
    coverage,
    intent,
    llms,
    rendering,
    shown_sections,
)
from audit.report.aggregate import (
    ROLLUP_ROWS,
    ROLLUP_TITLES,
    Aggregate,
    code_summary,
    host_columns,
    host_value,
    search_console,
    where,
)
from audit.report.text import format_duration
from audit.report.verdict import (
    credentials_note,
    cut_notes,
    migration_head,
    migration_rows,
    progress_line,
    verdict,
)

_PROSE_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")
_ROLLUP_HEAD = ["Sitemap", *(f"{title}:" for title in ROLLUP_TITLES)]  # counts to the right
# the sections after migrate's table, in order: what each shows (nothing to show: no section),
# and its lines from that, the summary, the examples, md_code and md_text
_SECTIONS: Sections[list[str]] = (
    (agents.agent_rows, agents.markdown_lines),
    (llms.llms_of, llms.markdown_lines),
    (llms.served_rows, llms.served_markdown_lines),
    (coverage.coverage_rows, coverage.markdown_lines),
    (intent.intent_rows, intent.markdown_lines),
    (rendering.render_rows, rendering.markdown_lines),
)


def md_text(value: object) -> str:
    """Plain text safe inside a GFM table cell: one line, no control or bidi character
    (core/printable.py), metacharacters escaped."""
    return _PROSE_SPECIAL.sub(r"\\\1", printable(str(value))).strip()


def md_code(value: object) -> str:
    """A code span safe inside a GFM table cell, whatever backticks or pipes it holds."""
    text = printable(str(value))
    if not text:
        return ""
    longest = max(map(len, re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end when both are present: pad so
    # the content survives exactly, and so a backtick (a leading or trailing one
    # among them) is not read as part of the fence.
    pad = " " if longest or text[0] + text[-1] == "  " else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


class MarkdownWriter:
    def __init__(self, stream: TextIO, *, fail_on: str = "error", examples: int = 10) -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=examples)

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)

    def render(self) -> str:
        agg = self._agg
        summary = agg.summary_dict()
        out = ["# Sitemap audit report", ""]
        progress = progress_line(summary)
        if progress is not None:
            out += [f"> **Incomplete:** {md_text(progress)}.", ""]
        out += [f"> {md_text(note)}" for note in cut_notes(summary)]
        out += [""] if cut_notes(summary) else []
        out += self._summary_table(summary)
        out += _migration_table(summary.get("migration"))
        out += chain.from_iterable(
            shown_sections(_SECTIONS, summary, agg.examples, md_code, md_text)
        )
        codes = agg.codes_sorted()
        if not codes:
            out += ["No findings.", ""]
        else:
            out += _table(
                "Findings by code",
                ["Code", "Severity", "Count:", "Search Console", "What it means"],
                [
                    [
                        # a registered code links to its section of docs/codes.md
                        f"[{md_code(code)}]({doc_anchor(code)})"
                        if code in CODES
                        else md_code(code),
                        sev,
                        f"{count:,}",
                        md_text(search_console(code)),
                        md_text(code_summary(code)),
                    ]
                    for code, sev, count in codes
                ],
            )
            for code, sev, count in codes:
                out += self._examples(code, sev, count)
        if agg.rollups:  # the per-sitemap roll-up (the `rollup` records)
            rollups = agg.rollups
            out += _table(
                "Sitemaps",
                _ROLLUP_HEAD,
                [[md_code(url_printable(r.url)), *r.cells()] for r in rollups[:ROLLUP_ROWS]],
                len(rollups) - ROLLUP_ROWS,
                "sitemaps",
            )
        if agg.hosts:
            columns = host_columns(agg.hosts)
            out += _table(
                "Hosts",
                ["Host", *(f"{md_text(title)}:" for _, title in columns)],
                [
                    [
                        md_code(x.get("host", "")),
                        *(md_text(host_value(x.get(k))) for k, _ in columns),
                    ]
                    for x in agg.hosts
                ],
            )
        return "\n".join(out)

    def _summary_table(self, summary: dict[str, Any]) -> list[str]:
        found = summary["findings"]
        v = verdict(summary, self._fail_on)
        # PASS and FAIL need no words beyond the counts above; the others do
        shown = (
            f"**{v.word}**" if v.word in ("PASS", "FAIL") else f"**{v.word}**: {md_text(v.detail)}"
        )
        return [
            "| | |",
            "| --- | ---: |",
            f"| Sitemaps | {summary['sitemaps']:,} |",
            f"| URLs | {summary['urls']:,} |",
            f"| Errors | {found['error']:,} |",
            f"| Warnings | {found['warning']:,} |",
            f"| Info | {found['info']:,} |",
            f"| Duration | {format_duration(summary.get('duration_s'))} |",
            f"| Verdict (fail on {md_text(self._fail_on)}) | {shown} |",
            "",
        ]

    def _examples(self, code: str, sev: str, count: int) -> list[str]:
        """A code's section: what it means and its first examples, if any were kept."""
        examples = self._agg.examples.get(code, [])
        if not examples:
            return []
        out = [f"### {md_code(code)} ({sev}, {count:,})", ""]
        if code_summary(code):
            out += [md_text(code_summary(code)), ""]
        if search_console(code):
            out += [f"Search Console: {md_text(search_console(code))}.", ""]
        out += ["| URL | Sitemap:line | Message |", "| --- | --- | --- |"]
        for ex in examples:
            out.append(
                f"| {md_code(url_printable(ex.url))}"
                f" | {md_code(url_printable(where(ex.sitemap, ex.line)))}"
                f" | {md_text(ex.message)} |"
            )
        if count > len(examples):
            out += ["", f"… and {count - len(examples):,} more."]
        out.append("")
        return out

    @closes_once
    def close(self) -> None:
        self._stream.write(self.render())
        self._stream.flush()


def _table(
    title: str, head: list[str], rows: list[list[str]], more: int = 0, what: str = ""
) -> list[str]:
    """A section with a GFM table: `head` names the columns (a trailing ':' aligns one to
    the right); `more` rows left out are counted below it."""
    out = [f"## {title}", "", "| " + " | ".join(h.removesuffix(":") for h in head) + " |"]
    out.append("|" + "".join(" ---: |" if h.endswith(":") else " --- |" for h in head))
    out += ["| " + " | ".join(cells) + " |" for cells in rows]
    if more > 0:
        out += ["", f"... and {more:,} more {what}."]
    out.append("")
    return out


def _migration_table(migration: Any) -> list[str]:
    """The outcome of every old URL of `migrate` (summary["migration"]), if any."""
    rows = migration_rows(migration)
    if not rows:  # (then migration is a mapping)
        return []
    new = migration.get("new_origin")
    out = ["## Migration", "", md_text(f"{migration_head(migration)}{new or '?'}"), ""]
    out += ["| Outcome | Old URLs | Share |", "| --- | ---: | ---: |"]
    out += [f"| {md_code(name)} | {count:,} | {share:.1f}% |" for name, count, share in rows]
    out.append("")
    credentials = credentials_note(migration)
    if credentials is not None:
        out += [f"> {md_text(credentials)}", ""]
    return out
