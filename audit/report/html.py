"""html writer: one self-contained page for people fixing a site.

Summary cards, SVG charts (status classes, findings by code, lastmod ages), a
table of the codes found (with Search Console's name for each, where it has one),
the sitemap tree with entries and findings per sitemap, and a searchable,
sortable findings table holding the first `max_rows_per_code` findings of each
code with "N more" counts. Everything is inline: CSS, SVG and a small script;
no script, style, font, image or link is fetched from anywhere, and a
Content-Security-Policy with a per-report nonce makes sure nothing else runs.

Safety: every value taken from records goes through `h` or `link`, and the JSON data
block through `json_for_script` (audit.report.htmlkit, with the charts, stylesheet and
script): nothing from a record reaches the page raw.

Memory and size: rendered at close from an `Aggregate` (counters plus the
kept rows), so neither depends on the number of URLs. Imports nothing from the
crawl, HTTP or parser layers.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from datetime import UTC
from typing import Any, TextIO

from audit.core.version import __version__
from audit.report import Sections, closes_once, coverage, intent, llms, rendering, shown_sections
from audit.report.agents import IndexTally, html_section
from audit.report.aggregate import (
    ROLLUP_TITLES,
    SEVERITIES,
    STATUS_CLASSES,
    Aggregate,
    Example,
    SitemapStat,
    code_summary,
    host_columns,
    host_value,
    rank,
    search_console,
    search_console_label,
    str_or_none,
    where,
)
from audit.report.htmlkit import (
    AGE_COLOUR,
    AGE_SHORT,
    CSS,
    JS,
    SEV_COLOUR,
    STATUS_COLOUR,
    grouped,
    h,
    hbars,
    json_for_script,
    link,
    vbars,
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

# Sitemap tree rows and chart bars shown at most; the rest are counted.
MAX_TREE_ROWS = 2000
MAX_CODE_BARS = 25
# Findings table rows in all: when many codes have findings, each gets a
# smaller share (never under MIN_ROWS_PER_CODE) so the page stays a few MB.
MAX_TABLE_ROWS = 4000
MIN_ROWS_PER_CODE = 20

_STANDARD_SUMMARY = {
    "type",
    "sitemaps",
    "urls",
    "entries",
    "findings",
    "by_code",
    "duration_s",
    "partial",
    "interrupted",
    "stopped_by",
    "max_urls_reached",
    "excluded_urls",
    "excluded_sitemaps",
    "migration",
}
# the findings table's filter: a checkbox per severity
_SEVERITY_BOXES = "".join(
    f'<label><input type="checkbox" data-sev="{s}" checked> {s}</label>' for s in SEVERITIES
)
# the llms.txt and Agents served panels (one piece of the page), then the panels after them,
# in order: what each shows (nothing to show: no panel), and its HTML from that, the
# summary, the examples and the escaper
_LLMS_SECTIONS: Sections[str] = (
    (llms.llms_of, llms.html_section),
    (llms.served_rows, llms.served_html_section),
)
_SECTIONS: Sections[str] = (
    (coverage.coverage_rows, coverage.html_section),
    (intent.intent_rows, intent.html_section),
    (rendering.render_rows, rendering.html_section),
)
# summary keys shown in a panel of their own, not again under "Run notes"
_OWN_PANEL = frozenset({"agents", "coverage", "hosts"})
_NOT_NOTES = _STANDARD_SUMMARY | _OWN_PANEL
# what a run note means, said once beside its value
_NOTE_WORDS = {
    "carried": "URLs carried forward (--state): they answered 304 Not Modified, so their "
    "result, records and findings are the previous run's",
    "skipped_unchanged": "URLs not requested (--changed-only): unchanged and clean last "
    "time, their result carried forward from the previous run",
    "sitemaps_carried": "sitemaps carried forward (--state): they answered 304 Not "
    "Modified and were not read again; their entries and findings are the previous run's",
    "ignored": "finding codes ignored (--ignore): neither reported nor counted",
    "fatal": "targets not audited",
    "targets": "targets in the run",
    "children_not_fetched": "sitemaps a local index lists that were not read (give "
    "--base-url or --online)",
    "children_not_read": "of which",
}


# how a run note's scalar value of each type is shown; any other type as str()
_NOTE_SHOWN: dict[type, Callable[[Any], str]] = {
    bool: ("no", "yes").__getitem__,
    int: "{:,}".format,
    type(None): lambda _: "",
}


def _note_value(value: Any) -> str:
    """A run note's value in words: numbers grouped, lists joined, mappings as `key: value`."""
    if isinstance(value, list | tuple):
        return ", ".join(map(_note_value, value))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_note_value(v)}" for k, v in value.items())
    return _NOTE_SHOWN.get(type(value), str)(value)


def _size(n: int | None) -> str:
    if n is None:
        return ""
    if n < 1024:
        return f"{n:,} B"
    kb = n / 1024
    return f"{kb:,.1f} KB" if kb < 1024 else f"{kb / 1024:,.1f} MB"


def _migration(migration: Any) -> str:
    """The outcome table of `migrate` (summary["migration"]), if any."""
    rows = migration_rows(migration)
    if not rows:  # (then migration is a mapping)
        return ""
    new = migration.get("new_origin")
    body = "".join(
        f'<tr><td class="mono">{h(name)}</td><td class="num">{grouped(count)}</td>'
        f'<td class="num">{share:.1f}%</td></tr>'
        for name, count, share in rows
    )
    credentials = credentials_note(migration)
    note = f'<p class="notice">{h(credentials)}</p>' if credentials is not None else ""
    return (
        f'<section class="panel" id="migration"><h2>Migration</h2><p>{h(migration_head(migration))}{link(str_or_none(new))}</p>'
        f"{note}"
        '<table><thead><tr><th>Outcome</th><th class="num">Old URLs</th>'
        f'<th class="num">Share</th></tr></thead><tbody>{body}</tbody></table></section>'
    )


def _tree_row(stat: SitemapStat, depth: int) -> str:
    """A sitemap's row: its kind (gzip noted, unfinished when unknown), its HTTP status
    and error, its counts and size."""
    kind = (stat.kind or ("" if stat.has_record else "not finished")) + (
        " (gzip)" if stat.gzip else ""
    )
    status = f"{'' if stat.status is None else stat.status} {stat.error or ''}".strip()
    return (
        f'<tr><td class="url d{min(depth, 5)}">{link(stat.url)}</td><td>{h(kind)}</td>'
        f'<td class="num">{h(status)}</td>'
        f'<td class="num">{"" if stat.entries is None else grouped(stat.entries)}</td>'
        f'<td class="num">{grouped(stat.urls)}</td>'
        f"{_count_cell(stat.findings['error'])}"
        f"{_count_cell(stat.findings['warning'])}"
        f'<td class="num">{_size(stat.bytes)}</td></tr>'
    )


def _count_cell(n: int) -> str:
    """A table cell of a finding count, greyed out when zero."""
    return f'<td class="num{"" if n else " zero"}">{grouped(n)}</td>'


def _finding_row(ex: Example) -> str:
    """A findings table row; the code's title says what it means and, where it has one,
    Search Console's name for it; the sitemap cell shows its file name (the full URL is
    the title)."""
    label = search_console_label(ex.code)
    meaning = f"{code_summary(ex.code)} ({label})" if label else code_summary(ex.code)
    sitemap = ex.sitemap
    name = None if sitemap is None else (sitemap.rstrip("/").rsplit("/", 1)[-1] or sitemap)
    return (
        f'<tr data-sev="{h(ex.severity)}"><td data-k="{-rank(ex.severity)}">'
        f'<span class="sev {h(ex.severity)}">{h(ex.severity)}</span></td>'
        f'<td class="mono code" title="{h(meaning)}">{h(ex.code)}</td>'
        f'<td class="url">{link(ex.url)}</td>'
        f'<td class="where mono" title="{h(where(ex.sitemap, ex.line))}">'
        f"{h(where(name, ex.line))}</td>"
        f"<td>{h(ex.message)}</td></tr>"
    )


class HtmlWriter:
    def __init__(
        self, stream: TextIO, *, fail_on: str = "error", max_rows_per_code: int = 200
    ) -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=max_rows_per_code)
        self._index = IndexTally()  # indexability of the url records (report/agents.py)

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)
        self._index.add(record)

    @closes_once
    def close(self) -> None:
        self._stream.write(self.render())
        self._stream.flush()

    # --- rendering ------------------------------------------------------

    def render(self) -> str:
        agg = self._agg
        summary = agg.summary_dict()
        nonce = secrets.token_urlsafe(18)
        v = verdict(summary, self._fail_on)
        stamp = agg.reference_time().astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
        csp = (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}';"
            " img-src data:; base-uri 'none'; form-action 'none'"
        )
        badge = (
            h(v.word) if v.word in ("PASS", "FAIL") else f"{h(v.word)}<small>{h(v.detail)}</small>"
        )
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Sitemap audit: {h(v.word)}</title>",
            f'<style nonce="{nonce}">{CSS}</style>',
            "</head><body><main>",
            "<header><div><h1>Sitemap audit report</h1>",
            f'<p class="sub">{h(stamp)} · fail on {h(self._fail_on)} ·'
            f" sitemap-audit {h(__version__)}</p></div>",
            f'<div class="verdict {h(v.style)}" id="verdict">{badge}</div></header>',
        ]
        # the banner of a run that did not finish, and what the run left out on purpose
        progress = progress_line(summary)
        notices = [f'<p class="notice cut">{h(note)}</p>' for note in cut_notes(summary)]
        if progress is not None:
            notices.insert(
                0, f'<p class="notice" id="partial"><strong>Incomplete.</strong> {h(progress)}.</p>'
            )
        out.append("".join(notices))
        out.append(self._cards(summary))
        out.append(self._charts())
        out.append(html_section(summary, self._index, h, nonce))
        out.append("".join(shown_sections(_LLMS_SECTIONS, summary, agg.examples, h)))
        out += shown_sections(_SECTIONS, summary, agg.examples, h)
        out.append(self._notes(summary))
        out.append(_migration(summary.get("migration")))
        out.append(self._tree())
        out.append(self._findings())
        out.append(self._sitemaps())
        out.append(self._hosts())
        data = {
            "summary": summary,
            "status_classes": {c: agg.status_classes[c] for c in STATUS_CLASSES},
            "lastmod_ages": dict(agg.lastmod_histogram()),
            "fail_on": self._fail_on,
            "verdict": v.word,
        }
        out.append(
            f"<footer>Generated by sitemap-audit {h(__version__)}. Self-contained:"
            " works offline.</footer></main>"
            f'<script type="application/json" id="report-data">{json_for_script(data)}</script>'
            f'<script nonce="{nonce}">{JS}</script></body></html>\n'
        )
        return "\n".join(filter(None, out))  # the sections that have something to show

    def _cards(self, summary: dict[str, Any]) -> str:
        agg = self._agg
        found = summary["findings"]
        # the sitemaps card's detail: how many indexes, how many entries
        indexes = sum(s.kind == "sitemapindex" for s in agg.sitemaps.values())
        detail = f"{indexes} index" + ("" if indexes == 1 else "es")
        if isinstance(summary.get("entries"), int):
            detail += f" · {grouped(summary['entries'])} entries"
        cards = [
            ("sitemaps", "Sitemaps", grouped(summary["sitemaps"]), detail),
            (
                "urls",
                "URLs checked",
                grouped(summary["urls"]),
                f"{grouped(agg.status_classes['3xx'])} redirected · {grouped(agg.robots_blocked)} blocked",
            ),
            ("error", "Errors", grouped(found["error"]), "search engines reject"),
            ("warning", "Warnings", grouped(found["warning"]), "wasted crawl budget"),
            ("info", "Info", grouped(found["info"]), "worth knowing"),
            ("duration", "Duration", format_duration(summary.get("duration_s")), ""),
        ]
        parts = ['<section class="cards">']
        for key, title, value, detail in cards:
            parts.append(
                f'<div class="card {key}" id="card-{key}"><div class="k">{title}</div>'
                f'<div class="v">{h(value)}</div><div class="d">{h(detail)}</div></div>'
            )
        parts.append("</section>")
        return "".join(parts)

    def _charts(self) -> str:
        agg = self._agg
        status = [(c, agg.status_classes[c], STATUS_COLOUR[c]) for c in STATUS_CLASSES]
        ages = [(b, n, AGE_COLOUR[b]) for b, n in agg.lastmod_histogram()]
        codes = agg.codes_sorted()
        chart = '<p class="more">No findings.</p>'
        if codes:
            # the findings-by-code chart: its first bars, and how many codes it leaves out
            bars = [(c, n, SEV_COLOUR.get(sev, "#8c959f")) for c, sev, n in codes[:MAX_CODE_BARS]]
            chart = hbars(bars, "Findings by code")
            if len(codes) > len(bars):
                chart += f'<p class="more">and {len(codes) - len(bars)} more codes</p>'
            # every code found: severity, count, Search Console's name ('' for none), meaning
            rows = "".join(
                f'<tr><td class="mono code">{h(code)}</td><td><span class="sev {h(sev)}">{h(sev)}'
                f'</span></td><td class="num">{grouped(n)}</td><td>{h(search_console(code))}</td>'
                f"<td>{h(code_summary(code))}</td></tr>"
                for code, sev, n in codes
            )
            chart += (
                '<table id="codes"><thead><tr><th>Code</th><th>Severity</th><th class="num">Count'
                "</th><th>Search Console</th><th>What it means</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>"
            )
        parts = [
            '<div class="grid2">',
            '<section class="panel" id="chart-status"><h2>What the listed URLs answered</h2>',
            vbars(status, "URLs by status class"),
            '<p class="more">3xx: the listed URL redirects (whatever the final answer);'
            " none: no answer (network error, robots-blocked, not checked).</p></section>",
            '<section class="panel" id="chart-lastmod"><h2>Age of &lt;lastmod&gt;</h2>',
            vbars(ages, "URLs by lastmod age", short=AGE_SHORT),
            f'<p class="more">Relative to {h(agg.reference_time().date().isoformat())};'
            " none: no or unreadable lastmod.</p></section>",
            "</div>",
            '<section class="panel" id="chart-codes"><h2>Findings by code</h2>',
            chart,
            "</section>",
        ]
        return "".join(parts)

    def _notes(self, summary: dict[str, Any]) -> str:
        """What else the summary says, in words: what a note means, then its value (never
        raw JSON); notes with a panel of their own (agents, coverage) are not repeated."""
        extra = {k: v for k, v in summary.items() if k not in _NOT_NOTES}
        if not extra:
            return ""
        items = "".join(
            f"<tr><th>{h(_NOTE_WORDS.get(k, k.replace('_', ' ')))}</th>"
            f"<td>{h(_note_value(v))}</td></tr>"
            for k, v in extra.items()
        )
        return (
            f'<section class="panel" id="notes"><h2>Run notes</h2><table>{items}</table></section>'
        )

    def _tree_order(self) -> list[tuple[SitemapStat, int]]:
        """The sitemaps depth first from the roots (those without a known parent), each
        once, with their depth; children in record order."""
        stats = self._agg.sitemaps
        children: dict[str, list[SitemapStat]] = {}
        roots: list[SitemapStat] = []
        for stat in stats.values():  # in record order (their `order`)
            if stat.parent in stats and stat.parent != stat.url:  # (no key is None)
                children.setdefault(stat.parent, []).append(stat)
            else:
                roots.append(stat)
        ordered: list[tuple[SitemapStat, int]] = []
        seen: set[str] = set()
        stack = [(r, 0) for r in reversed(roots)]
        # each sitemap has one parent at most: one reached from a root is reached once
        while stack:
            stat, depth = stack.pop()
            seen.add(stat.url)
            ordered.append((stat, depth))
            stack += [(child, depth + 1) for child in reversed(children.get(stat.url, []))]
        # Members of a parent loop are reachable from no root: list them flat.
        ordered += [(s, 0) for s in stats.values() if s.url not in seen]
        return ordered

    def _tree(self) -> str:
        ordered = self._tree_order()
        parts = [
            '<section class="panel" id="sitemap-tree"><h2>Sitemap tree</h2>',
            '<div class="scroll"><table class="tree"><thead><tr><th>Sitemap</th><th>Kind</th>'
            '<th class="num">Status</th><th class="num">Entries</th>'
            '<th class="num">URLs checked</th><th class="num">Errors</th>'
            '<th class="num">Warnings</th><th class="num">Size</th></tr></thead><tbody>',
        ]
        parts += itertools.starmap(_tree_row, ordered[:MAX_TREE_ROWS])
        if not ordered:
            parts.append('<tr><td colspan="8" class="zero">No sitemap was recorded.</td></tr>')
        parts.append("</tbody></table></div>")
        if len(ordered) > MAX_TREE_ROWS:
            parts.append(
                f'<p class="more">and {grouped(len(ordered) - MAX_TREE_ROWS)} more sitemaps</p>'
            )
        parts.append("</section>")
        return "".join(parts)

    def _findings(self) -> str:
        """The findings table: a fair share of rows per code, and which codes have rows
        left out."""
        agg = self._agg
        codes = agg.codes_sorted()
        rows: list[str] = []
        truncated: list[tuple[str, int, int]] = []  # (code, shown, total)
        with_rows = sum(bool(agg.examples.get(code)) for code, _, _ in codes)
        share = max(MIN_ROWS_PER_CODE, MAX_TABLE_ROWS // max(1, with_rows))
        for code, _sev, count in codes:
            kept = agg.examples.get(code, [])[:share]
            if count > len(kept):
                truncated.append((code, len(kept), count))
            rows += map(_finding_row, kept)
        parts = [
            '<section class="panel" id="findings-panel"><h2>Findings</h2>',
            '<div class="tools"><input type="search" id="q" placeholder="Filter by URL, code,'
            f' sitemap or message" aria-label="Filter findings">{_SEVERITY_BOXES}'
            '<span class="more" id="shown"></span></div>',
            '<div class="scroll"><table id="findings"><thead><tr>'
            '<th class="sort">Severity</th><th class="sort">Code</th><th class="sort">URL</th>'
            '<th class="sort">Sitemap</th><th class="sort">Message</th></tr></thead><tbody>',
            *rows,
            "</tbody></table></div>",
        ]
        if not rows:
            parts.append('<p class="more">No findings.</p>')
        if truncated:
            items = "; ".join(
                f"<code>{h(code)}</code>: first {grouped(shown)}, and {grouped(total - shown)} more"
                for code, shown, total in truncated
            )
            parts.append(
                f'<p class="more" id="truncated">Rows per code are limited: {items}.'
                " The jsonl or csv report has every one.</p>"
            )
        parts.append("</section>")
        return "".join(parts)

    def _sitemaps(self) -> str:
        """The per-sitemap roll-up (the `rollup` records): every sitemap, in plain HTML."""
        rollups = self._agg.rollups
        if not rollups:
            return ""
        head = "".join(f'<th class="num">{h(title)}</th>' for title in ROLLUP_TITLES)
        rows = "".join(
            f'<tr><td class="mono">{link(r.url)}</td>'
            + "".join(f'<td class="num">{n:,}</td>' for n in r.counts)
            + "</tr>"
            for r in rollups
        )
        return (
            '<section class="panel" id="sitemap-rollup"><h2>Sitemaps</h2><div class="scroll">'
            f'<table id="sitemaps"><thead><tr><th>Sitemap</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></div></section>"
        )

    def _hosts(self) -> str:
        hosts = self._agg.hosts
        if not hosts:
            return ""
        columns = host_columns(hosts)
        head = "".join(f'<th class="num">{h(title)}</th>' for _, title in columns)
        rows = "".join(
            f'<tr><td class="mono">{h(x.get("host", ""))}</td>'
            + "".join(f'<td class="num">{h(host_value(x.get(k)))}</td>' for k, _ in columns)
            + "</tr>"
            for x in hosts
        )
        return (
            '<section class="panel" id="hosts"><h2>Hosts</h2><table><thead><tr><th>Host</th>'
            f"{head}</tr></thead><tbody>{rows}</tbody></table></section>"
        )
