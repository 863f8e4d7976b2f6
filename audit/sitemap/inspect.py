"""`inspect`: what is in a sitemap (counts, sizes, lastmod spread, extensions, children).

Collects per-sitemap statistics from the entries as they stream past; keeps
counters only, never the entries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from audit.core.records import Entry, SitemapRecord
from audit.rules.dates import parse_w3c_datetime
from audit.sitemap.parser import StreamParser


@dataclass(slots=True)
class SitemapStats:
    url: str
    parent: str | None = None
    kind: str | None = None
    status: int | None = None
    entries: int = 0
    bytes: int = 0
    compressed_bytes: int = 0
    gzip: bool = False
    lastmod_min: str | None = None
    lastmod_max: str | None = None
    lastmod_missing: int = 0
    by_month: Counter[str] = field(default_factory=Counter)
    extensions: Counter[str] = field(default_factory=Counter)
    children: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def failure(self) -> str | None:
        """Why the sitemap could not be read ("HTTP 404", a network error), or None."""
        if self.status is None:  # no answer: a failure unless the sitemap was read (a file)
            return None if self.kind is not None else (self.error or "no answer")
        # (an answer has no error: a sitemap's stream sets the status only without one)
        return f"HTTP {self.status}" if self.status >= 400 else None

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "parent": self.parent,
            "kind": self.kind,
            "status": self.status,
            "entries": self.entries,
            "bytes": self.bytes,
            "compressed_bytes": self.compressed_bytes,
            "gzip": self.gzip,
            "lastmod_min": self.lastmod_min,
            "lastmod_max": self.lastmod_max,
            "lastmod_missing": self.lastmod_missing,
            "lastmod_by_month": dict(sorted(self.by_month.items())),
            "extensions": dict(sorted(self.extensions.items())),
            "children": self.children,
            "error": self.failure,
        }


class Inspector:
    def __init__(self) -> None:
        self.stats: dict[str, SitemapStats] = {}
        self.order: list[str] = []
        self._sort_keys: dict[str, tuple[Any, Any]] = {}

    def _get(self, source: str) -> SitemapStats:
        st = self.stats.get(source)
        if st is None:
            st = self.stats[source] = SitemapStats(source)
            self.order.append(source)
        return st

    def on_entry(self, source: str, entry: Entry) -> None:
        st = self._get(source)
        if entry.kind == "sitemap":
            st.children.append((entry.loc or "").strip())
        for name, items in (
            ("image", entry.images),
            ("video", entry.videos),
            ("news", entry.news),
            ("hreflang", entry.alternates),
        ):
            if items:
                st.extensions[name] += len(items)
        if not entry.lastmod:
            st.lastmod_missing += 1
            return
        try:
            when = parse_w3c_datetime(entry.lastmod.strip()).start
        except ValueError:
            return
        # a valid lastmod (its start): the month's count and the range
        st.by_month[when.strftime("%Y-%m")] += 1
        iso = when.isoformat()
        st.lastmod_min = min(st.lastmod_min or iso, iso)
        st.lastmod_max = max(st.lastmod_max or iso, iso)

    @property
    def failed(self) -> list[SitemapStats]:
        """The sitemaps (an index's children included) that could not be read."""
        return [st for url in self.order if (st := self.stats[url]).failure]

    def on_record(self, record: dict[str, Any]) -> None:
        """A sink of the audit's records: a sitemap that answered 404 or failed reaches
        inspect only this way (it has no parser); so does a child of an index on disk
        that is not beside it (a sitemap-not-found finding, no sitemap record: every one
        names the sitemap it is about, `url`, and says why, `message`)."""
        if record.get("type") == "finding" and record.get("code") == "sitemap-not-found":
            url = record["url"]
            if url not in self.stats:
                missing = self._get(url)
                missing.parent = record["sitemap"]
                missing.error = record["message"]
            return
        if record.get("type") != "sitemap":
            return
        st = self._get(record["url"])
        st.parent = record.get("parent")
        st.kind = record.get("kind")  # (on_sitemap, if it came first, set the same: one record)
        st.status = record.get("status")
        st.error = record.get("error")

    def on_sitemap(self, rec: SitemapRecord, parser: StreamParser) -> None:
        st = self._get(rec.url)
        st.parent = rec.parent
        st.kind = rec.kind
        st.status = rec.status
        st.entries = rec.entries
        st.bytes = rec.bytes
        st.compressed_bytes = parser.compressed_bytes
        st.gzip = rec.gzip

    def write_text(self, out: TextIO) -> None:
        for url in self.order:
            st = self.stats[url]
            indent = "  " if st.parent else ""
            comp = f", gzip {st.compressed_bytes:,} bytes" if st.gzip else ""
            out.write(f"{indent}{st.url}\n")
            if st.failure:
                out.write(f"{indent}  failed: {st.failure}\n")
                continue
            out.write(
                f"{indent}  kind {st.kind or '?'}, {st.entries:,} entries, "
                f"{st.bytes:,} bytes uncompressed{comp}\n"
            )
            _write_lastmods(out, st, indent)
            if st.extensions:
                ext = ", ".join(f"{k} {v:,}" for k, v in sorted(st.extensions.items()))
                out.write(f"{indent}  extensions: {ext}\n")
            _write_children(out, st, indent, self.stats)


def _write_lastmods(out: TextIO, st: SitemapStats, indent: str) -> None:
    """The lastmod range (not for an index without any), then a bar per month of
    lastmods, the last 24 months that have any."""
    if st.kind != "sitemapindex" or st.lastmod_min:
        rng = f"{st.lastmod_min} .. {st.lastmod_max}" if st.lastmod_min else "none"
        out.write(f"{indent}  lastmod {rng}; {st.lastmod_missing:,} without\n")
    months = sorted(st.by_month.items())  # none: no bars, no line below them
    peak = max(st.by_month.values(), default=1)
    for month, n in months[-24:]:
        bar = "#" * max(1, round(30 * n / peak))
        out.write(f"{indent}    {month} {n:>8,} {bar}\n")
    if len(months) > 24:
        out.write(f"{indent}    ({len(months) - 24} earlier months not shown)\n")


def _write_children(
    out: TextIO, st: SitemapStats, indent: str, stats: dict[str, SitemapStats]
) -> None:
    """An index's children, the first 50; one that failed says how."""
    if not st.children:
        return
    out.write(f"{indent}  children: {len(st.children):,}\n")
    for child in st.children[:50]:
        known = stats.get(child)
        failure = f"  ({known.failure})" if known is not None and known.failure else ""
        out.write(f"{indent}    {child}{failure}\n")
    if len(st.children) > 50:
        out.write(f"{indent}    ... {len(st.children) - 50:,} more\n")
