"""text writer: the readable default for terminals.

Header, counts by severity and by code (worst severity first, then most
frequent; Search Console's name beside a code that has one), for each code up to `examples` offenders as `sitemap:line  url
message` (the first ones in audit order), a per-host table when a `hosts`
record came, and a verdict line for `--fail-on`. ANSI colours only when the
stream is a terminal. Everything is rendered at close from an `Aggregate`, so
memory does not grow with the number of URLs. Imports nothing from the crawl,
HTTP or parser layers.
"""

from __future__ import annotations

from functools import partial
from itertools import chain
from typing import Any, TextIO

from audit.core.printable import printable
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
    SEVERITIES,
    Aggregate,
    as_dict,
    count_of,
    counted,
    host_columns,
    host_value,
    search_console_label,
    where,
)
from audit.report.verdict import (
    credentials_note,
    cut_notes,
    migration_rows,
    progress_line,
    stopped_how,
    verdict,
)

_COLOURS = {"error": "31", "warning": "33", "info": "36", "ok": "32", "dim": "2", "bold": "1"}
_VERDICT_STYLE = {"pass": "ok", "fail": "error", "warn": "warning", "partial": "warning"}
# the sections after migrate's table, in order: what each shows (nothing to show: no section),
# and its lines from that, the summary, the examples and the writer's clean and bold
_SECTIONS: Sections[list[str]] = (
    (agents.agent_rows, agents.text_lines),
    (llms.llms_of, llms.text_lines),
    (llms.served_rows, llms.served_text_lines),
    (coverage.coverage_rows, coverage.text_lines),
    (intent.intent_rows, intent.text_lines),
    (rendering.render_rows, rendering.text_lines),
)


def _clean(text: str) -> str:
    """One line, no control characters: record values must not drive the terminal."""
    return printable(text)


def format_duration(seconds: Any) -> str:
    if type(seconds) not in (int, float):  # a bool is no duration
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


class TextWriter:
    def __init__(self, stream: TextIO, *, fail_on: str = "error", examples: int = 10) -> None:
        self._stream = stream
        self._fail_on = fail_on
        self._agg = Aggregate(examples=examples)
        isatty = getattr(stream, "isatty", None)
        self._colour = bool(isatty and isatty())

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)

    def _c(self, style: str, text: str) -> str:
        return f"\x1b[{_COLOURS[style]}m{text}\x1b[0m" if self._colour else text

    def render(self) -> str:
        agg = self._agg
        summary = agg.summary_dict()
        lines = self._head(summary)
        codes = agg.codes_sorted()
        if codes:
            width = max(len(c) for c, _, _ in codes)
            lines += ["", self._c("bold", "by code")]
            for code, sev, count in codes:
                line = f"  {self._c(sev, f'{sev:<7}')}  {_clean(code):<{width}}  {count:>9,}"
                lines.append(line + _search_console(code, "  "))
            for code, sev, count in codes:
                lines += self._examples(code, sev, count)
        lines += self._migration(as_dict(summary.get("migration")))
        bold = partial(self._c, "bold")
        lines += chain.from_iterable(shown_sections(_SECTIONS, summary, agg.examples, _clean, bold))
        if agg.rollups:  # the per-sitemap table (the `rollup` records), in the style of hosts
            rollups = agg.rollups
            lines += self._table(
                "sitemaps",
                ["sitemap", "urls", "indexable", "with lastmod", "errors", "warnings", "info"],
                [[_clean(r.url), *r.cells()] for r in rollups[:ROLLUP_ROWS]],
            )
            more = len(rollups) - ROLLUP_ROWS
            if more > 0:
                lines.append(f"  ... and {more:,} more sitemaps")
        if agg.hosts:
            columns = host_columns(agg.hosts)
            lines += self._table(
                "hosts",
                ["host"] + [title.lower() for _, title in columns],
                [
                    [_clean(str(x.get("host", "")))]
                    + [_clean(host_value(x.get(k)))[:30] for k, _ in columns]
                    for x in agg.hosts
                ],
            )
        lines += ["", self._verdict(summary)]
        return "\n".join(lines) + "\n"

    def _head(self, summary: dict[str, Any]) -> list[str]:
        """The title, the run's size and duration, the counts by severity, and what the
        run left out (a cut, exclusions, an interrupt)."""
        found = summary["findings"]
        title = "sitemap-audit report"
        notes = list(map(_clean, cut_notes(summary)))
        how = stopped_how(summary)
        if how is not None:  # a run that did not finish: the title says so, a line how far
            title += f" (incomplete: {how.lower()})"
            notes.insert(0, self._c("warning", f"{progress_line(summary)}"))
        counts = (
            self._c(s, counted(found[s], s)) if found[s] else counted(0, s) for s in SEVERITIES
        )
        lines = [
            self._c("bold", title),
            f"{counted(summary['sitemaps'], 'sitemap')}, {_entries(summary)}"
            f"{counted(summary['urls'], 'URL')}, {format_duration(summary.get('duration_s'))}",
            "findings: " + ", ".join(counts),
        ]
        return lines + notes

    def _examples(self, code: str, sev: str, count: int) -> list[str]:
        """A code's first offenders as `sitemap:line  url  message`, and how many more."""
        examples = self._agg.examples.get(code, [])
        if not examples:
            return []
        head = f"{self._c(sev, sev)} {self._c('bold', _clean(code))}{_search_console(code)}"
        lines = ["", f"{head} ({count:,})"]
        for ex in examples:
            parts = [_clean(where(ex.sitemap, ex.line)) or "-"]
            if ex.url not in ("", ex.sitemap):  # a URL, not the sitemap's own
                parts.append(_clean(ex.url))
            parts.append(_clean(ex.message))
            lines.append("  " + "  ".join(parts))
        if count > len(examples):
            lines.append(self._c("dim", f"  … and {count - len(examples):,} more"))
        return lines

    def _table(self, title: str, head: list[str], rows: list[list[str]]) -> list[str]:
        """A titled table, the first column left-aligned and the others right-aligned to
        their widest cell; the blank line before the next section ends it."""
        widths = [max(map(len, column)) for column in zip(head, *rows, strict=True)]
        lines = ["", self._c("bold", title)]
        for r in [head, *rows]:
            cells = [r[0].ljust(widths[0])]
            cells += [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
            lines.append("  " + "  ".join(cells).rstrip())
        return lines

    def _migration(self, m: dict[str, Any]) -> list[str]:
        """The outcome of every old URL of `migrate`, with shares (summary["migration"])."""
        total = m.get("old_urls")
        rows = migration_rows(m)
        if not isinstance(total, int) or not rows:
            return []
        new = _clean(str(m.get("new_origin") or ""))
        lines = ["", self._c("bold", f"migration: {total:,} old URLs checked on {new}")]
        for name, count, share in rows:
            label = f"  {_clean(name):<20} {count:>7,}  {share:>5.1f}%"
            if name == "ok":
                label = self._c("ok", label)
            elif count:  # (an outcome no old URL had is plain)
                label = self._c("error", label)
            lines.append(label)
        return lines + [f"  {x}" for x in _migration_notes(m)]

    def _verdict(self, summary: dict[str, Any]) -> str:
        v = verdict(summary, self._fail_on)
        return self._c(_VERDICT_STYLE[v.style], _clean(v.line))

    @closes_once
    def close(self) -> None:
        self._stream.write(self.render())
        self._stream.flush()


def _search_console(code: str, sep: str = " ") -> str:
    """ "(Search Console: NAME)" after `sep` for a code Search Console names, else ''."""
    label = search_console_label(code)
    return f"{sep}({label})" if label else ""


def _entries(summary: dict[str, Any]) -> str:
    """ "N entries, " for a run that read entries but checked no URL (validate)."""
    entries = count_of(summary.get("entries"))  # (0 when not an int)
    if entries and not summary["urls"]:
        return f"{entries:,} {'entry' if entries == 1 else 'entries'}, "
    return ""


def _migration_notes(m: dict[str, Any]) -> list[str]:
    """What the migration summary says about the new sitemap and the map, if anything."""
    notes = []
    new_sitemap = m.get("new_sitemap")
    if isinstance(new_sitemap, dict):
        notes.append(
            f"new sitemap: {new_sitemap.get('urls')} URLs, {new_sitemap.get('redirecting')} "
            f"redirecting; {new_sitemap.get('old_urls_missing')} old URLs land on pages it "
            "does not list"
        )
    rmap = m.get("map")
    if isinstance(rmap, dict):
        notes.append(
            f"map: {_clean(str(rmap.get('file')))}, {rmap.get('entries')} rows and rules, "
            f"{rmap.get('unmapped')} old URLs matched none"
        )
    credentials = credentials_note(m)
    if credentials is not None:
        notes.append(_clean(credentials))
    return notes
