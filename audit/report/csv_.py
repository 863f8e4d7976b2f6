"""csv writer: one row per URL, for spreadsheets.

Columns: url, sitemap, line, status, final_url, redirect_hops, redirect_chain,
lastmod, last_modified, robots, elapsed_ms, worst_severity, codes, error, outcome,
expected, checked_url (the last three from `migrate` and --rewrite: the migration
outcome, the expected new URL of the redirect map, the URL actually requested).
Then indexable (true/false) and indexability (why not: noindex, robots, canonical,
status, redirect, not-html, unreachable), on every url record of a crawl. Last,
source (sitemap, links or both) and inlinks (followable links to the URL from crawled
pages), from `crawl --links`; empty without it.

- Encoding: UTF-8 with a byte order mark by default. Excel only reads a CSV as
  UTF-8 when it starts with a BOM (without one, non-ASCII URLs turn into
  mojibake); Python reads it with `encoding="utf-8-sig"`, pandas and
  LibreOffice skip it. `bom=False` leaves it out for tools that mind.
- Quoting and line ends: the csv module's defaults (RFC 4180, CRLF).
- A cell that would start with `=`, `+`, `-`, `@`, tab or CR gets a leading `'`
  so a spreadsheet never evaluates a crafted sitemap value as a formula; real
  http(s) URLs never start with those characters.
- Findings that arrive after the url record (HTTP checks) or before it (entry
  checks) are joined by `UrlJoiner` (see aggregate.py for what it relies on
  about record order) in bounded memory. A URL with findings but no url record
  (validate mode, URLs never fetched) still gets a row, with the HTTP columns
  empty. Findings without a URL (about a whole sitemap) are left out, and so are
  findings without a sitemap (robots.txt, discovery) unless they come with their
  URL's url record (the coverage findings of a links-only page); the jsonl, json
  and sarif reports carry them all.

Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import csv
from typing import Any, TextIO

from audit.report import closes_once
from audit.report.aggregate import (
    UrlJoiner,
    float_or_none,
    int_or_none,
    rank,
    severity_of,
    str_or_none,
)

COLUMNS: tuple[str, ...] = (
    "url",
    "sitemap",
    "line",
    "status",
    "final_url",
    "redirect_hops",
    "redirect_chain",
    "lastmod",
    "last_modified",
    "robots",
    "elapsed_ms",
    "worst_severity",
    "codes",
    "error",
    "outcome",
    "expected",
    "checked_url",
    "indexable",
    "indexability",
    "source",
    "inlinks",
)
# Columns filled from url records' extras: `migrate` (outcome, expected target) and
# --rewrite or `migrate` (the URL actually requested); empty in other runs.
_EXTRA_COLUMNS: tuple[str, ...] = ("outcome", "expected", "checked_url")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """A value as csv writes it (None empty: csv's own rule), a text that a spreadsheet
    would read as a formula quoted."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _chain(redirects: Any) -> tuple[int | None, str]:
    if not isinstance(redirects, list):
        return None, ""
    hops = [h for h in redirects if isinstance(h, dict)]
    text = " -> ".join(f"{h.get('status')} {h.get('url')}" for h in hops)
    return len(hops), text


def _indexability(rec: dict[str, Any]) -> tuple[str, str]:
    """The indexable and indexability cells: true/false and the reason; empty for a record
    without them (a report written before they existed)."""
    indexable = rec.get("indexable")
    if not isinstance(indexable, bool):
        return "", ""
    return ("true" if indexable else "false"), str_or_none(rec.get("indexability")) or ""


class CsvWriter:
    def __init__(self, stream: TextIO, *, bom: bool = True) -> None:
        self._stream = stream
        self._csv = csv.writer(stream)
        self._joiner = UrlJoiner(self._row)
        self._header_done = False
        self._bom = bom

    def _header(self) -> None:
        if not self._header_done:
            self._header_done = True
            if self._bom:
                self._stream.write("\ufeff")
            self._csv.writerow(COLUMNS)

    def write(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "url":
            self._joiner.url(record)
        elif kind == "finding" and (url := str_or_none(record.get("url"))):
            self._finding(url, record)

    def _finding(self, url: str, record: dict[str, Any]) -> None:
        """A finding with a sitemap joins its URL's row; one without (a links-only page's
        page-not-in-sitemap or link-broken) only the row of a url record just written."""
        if str_or_none(record.get("sitemap")):
            self._joiner.finding(url, record)
        else:
            self._joiner.attach(url, record)

    def _row(self, rec: dict[str, Any] | None, url: str, found: list[dict[str, Any]]) -> None:
        self._header()
        # the worst severity of the URL's findings ("" for none) and their codes, each once
        worst = max(map(severity_of, found), key=rank, default="")
        codes = " ".join(dict.fromkeys(str(f.get("code") or "") for f in found))
        if rec is None:
            first = found[0]  # findings with no url record: the joiner gives at least one
            sitemap, line = str_or_none(first.get("sitemap")), int_or_none(first.get("line"))
            row: list[Any] = [url, sitemap, line, *[""] * 8, worst, codes, ""]
            row += [""] * (len(COLUMNS) - len(row))  # no url record: nothing more known
        else:
            hops, chain = _chain(rec.get("redirects"))
            row = [
                url,
                str_or_none(rec.get("sitemap")),
                int_or_none(rec.get("line")),
                int_or_none(rec.get("status")),
                str_or_none(rec.get("final_url")),
                hops,
                chain,
                str_or_none(rec.get("lastmod")),
                str_or_none(rec.get("last_modified")),
                str_or_none(rec.get("robots")),
                float_or_none(rec.get("elapsed_ms")),
                worst,
                codes,
                str_or_none(rec.get("error")),
                *(str_or_none(rec.get(key)) for key in _EXTRA_COLUMNS),
                *_indexability(rec),
                str_or_none(rec.get("source")),
                int_or_none(rec.get("inlinks")),
            ]
        # csv.writer writes the whole row in one call: a crash leaves complete lines.
        self._csv.writerow(map(_cell, row))

    @closes_once
    def close(self) -> None:
        self._joiner.close()
        self._header()
        self._stream.flush()
