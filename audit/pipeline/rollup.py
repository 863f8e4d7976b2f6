"""The per-sitemap roll-up: one `rollup` record per `sitemap` record (contracts/nights.md 5).

The recorder feeds every record it delivers (after --ignore) to a `Rollup`, and the
index entries with their `<lastmod>` (an index's entries are no records). At the end of
the run `records()` gives one `rollup` record per sitemap record, in their order:

    {"type": "rollup", "url": SITEMAP,
     "counts": {"urls", "indexable", "with_lastmod", "errors", "warnings", "info"}}

`urls` and `indexable` count the url records that name the sitemap (none for an index);
`with_lastmod` those whose `<lastmod>` is valid (for an index: its `<sitemap>` entries
with a valid `<lastmod>`); the last three count the findings that name the sitemap, by
severity. Memory grows with the number of sitemaps, never with the number of URLs.

Pure bookkeeping over dicts: no I/O, no HTTP; the validity of a `<lastmod>` is the
validator's (audit.rules.dates), a record's fields are read as the reports read them
(audit.report.aggregate).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from audit.report.aggregate import str_or_none
from audit.rules.dates import parse_rss_date, parse_w3c_start

__all__ = ["COUNT_KEYS", "Rollup", "lastmod_validity"]

COUNT_KEYS: tuple[str, ...] = ("urls", "indexable", "with_lastmod", "errors", "warnings", "info")
_SEVERITY_KEY = {"error": "errors", "warning": "warnings", "info": "info"}
_XML_SPACE = " \t\r\n"
_CACHE_SIZE = 4096  # <lastmod> texts whose validity is remembered: sitemaps repeat them
_UNSEEN: Any = object()  # a <lastmod> text whose validity is not remembered
_VALIDITY = ("w3c", "rss", None)  # what lastmod_validity says


def lastmod_validity(text: Any) -> str | None:
    """How a `<lastmod>` is valid: "w3c" (a W3C Datetime, valid anywhere), "rss" (only an
    RFC 822 date, valid in an RSS feed), or None (missing or invalid), as the validator
    judges it (audit.rules.validator: lastmod-invalid)."""
    if not isinstance(text, str):
        return None
    value = text.strip(_XML_SPACE)  # (an empty one is neither date: None below)
    try:
        parse_w3c_start(value)
    except ValueError:
        return "rss" if parse_rss_date(value) is not None else None
    return "w3c"


@dataclass(slots=True)
class _Counts:
    urls: int = 0
    indexable: int = 0
    # url records with a <lastmod>, by how it is valid (lastmod_validity): "w3c" (a W3C
    # Datetime), "rss" (valid only in an RSS feed), None (invalid)
    lastmod: dict[str | None, int] = field(default_factory=lambda: dict.fromkeys(_VALIDITY, 0))
    index_lastmod: int = 0  # an index's <sitemap> entries with a valid <lastmod>
    errors: int = 0
    warnings: int = 0
    info: int = 0
    kind: str | None = None


class Rollup:
    """Counts per sitemap URL over the record stream; see the module."""

    def __init__(self) -> None:
        self._counts: defaultdict[str, _Counts] = defaultdict(_Counts)  # made at first use
        self._order: list[str] = []  # the url of every sitemap record, in order
        self._validity: dict[Any, str | None] = {}

    def add(self, record: dict[str, Any]) -> None:
        """A record as the report gets it (findings of --ignore'd codes never come)."""
        kind = record.get("type")
        if kind == "url":
            self.url(record)
        elif kind == "finding":
            self._finding(record)
        elif kind == "sitemap":  # (its url: a string, as SitemapRecord.to_json writes it)
            url = record["url"]
            self._order.append(url)
            self._counts[url].kind = str_or_none(record.get("kind"))

    def url(self, record: dict[str, Any]) -> None:
        """A url record (add()'s)."""
        self.listed(record.get("sitemap"), record.get("indexable"), record.get("lastmod"))

    def listed(self, sitemap: Any, indexable: Any, lastmod: Any) -> None:
        """A url record's `sitemap`, `indexable` and `lastmod` (the recorder's, read off
        the record it writes: once per URL, without add()'s dispatch)."""
        if not isinstance(sitemap, str):
            return  # links-only pages, ledger and intent URLs: listed by no sitemap tonight
        counts = self._counts[sitemap]
        counts.urls += 1
        if indexable is True:
            counts.indexable += 1
        if lastmod is None:  # a string or null
            return
        cache = self._validity  # lastmod_validity, remembered for the texts seen last
        validity = cache.get(lastmod, _UNSEEN)
        if validity is _UNSEEN:
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            validity = cache[lastmod] = lastmod_validity(lastmod)
        counts.lastmod[validity] += 1

    def _finding(self, record: dict[str, Any]) -> None:
        sitemap = record.get("sitemap")
        if isinstance(sitemap, str):  # (None: a finding about no sitemap)
            key = _SEVERITY_KEY[record["severity"]]  # (as Finding.to_json writes it)
            counts = self._counts[sitemap]
            setattr(counts, key, getattr(counts, key) + 1)

    def index_entry(self, sitemap: str, lastmod: str | None) -> None:
        """An index's `<sitemap>` entry as parsed, with its `<lastmod>` (or None)."""
        if lastmod_validity(lastmod) == "w3c":
            self._counts[sitemap].index_lastmod += 1

    def counts(self, sitemap: str) -> dict[str, int]:
        """The roll-up counts of one sitemap record's URL (add() has seen it)."""
        c = self._counts[sitemap]
        if c.kind == "sitemapindex":
            urls, indexable, with_lastmod = 0, 0, c.index_lastmod
        else:
            urls, indexable = c.urls, c.indexable
            lastmod = c.lastmod
            with_lastmod = lastmod["w3c"] + (lastmod["rss"] if c.kind == "rss" else 0)
        return {
            "urls": urls,
            "indexable": indexable,
            "with_lastmod": with_lastmod,
            "errors": c.errors,
            "warnings": c.warnings,
            "info": c.info,
        }

    def records(self) -> list[dict[str, Any]]:
        """One `rollup` record per sitemap record, in the order of the sitemap records."""
        return [{"type": "rollup", "url": url, "counts": self.counts(url)} for url in self._order]
