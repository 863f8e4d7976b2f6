"""Protocol validator: entries in, findings out (RULES.md 'Entries' and counts).

Pure and synchronous: imports nothing of HTTP or asyncio, and nothing of the
parser (it reads plain `Entry` records and plain counts).

    seen = SeenUrls()                               # one per run: loc-duplicate across sitemaps
    hreflang = HreflangGraph()                      # one per run: reciprocity across sitemaps
    v = SitemapValidator(source, sitemap_url=url_or_None, now=datetime_utc,
                         seen=seen, hreflang=hreflang,
                         cross_submitted=lambda loc: False, kind=parser.kind)
    v.check(entry) -> list[Finding]                 # per entry, as it streams past
    v.finish(kind, entries, uncompressed_bytes) -> list[Finding]   # per sitemap
    hreflang.finish() -> list[Finding]              # end of run: hreflang-not-reciprocal

`SitemapValidator` composes one checker per concern and keeps the per-entry path:

    audit.rules.locs        LocCheck        <loc> syntax, loc-cross-host, loc-outside-path
    audit.rules.urlkeys     UrlKeys         loc-duplicate (the run's SeenUrls, the index's)
    audit.rules.lastmods    LastmodCheck    lastmod-* and index-lastmod-now
    audit.rules.crawlhints  CrawlHints      changefreq-invalid, priority-invalid, -uniform
    audit.rules.extensions  ExtensionCheck  image-*, video-*, news-*, hreflang-*
    audit.rules.limits      size_problems   sitemap-too-many-urls, -near-limit, -empty,
                            news_count_problems  news-too-many
    audit.rules.findings    the shared empty result and how values are quoted

Memory: run-wide state holds 64-bit fingerprints of normalised URLs, never the
URL strings (SeenUrls: about 8.3 MiB for 1,000,000 URLs). Per-sitemap state is
a handful of counters and a per-day lastmod counter.

The URL fingerprint table (`SeenUrls`, `fingerprint`) lives in audit.rules.fingerprints
and the sitemap-only hreflang graph (`HreflangGraph`) in audit.rules.hreflang; both, and
the thresholds of the concerns above, stay importable from here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from audit.core.records import Entry, Finding, finding
from audit.rules.crawlhints import CHANGEFREQS, CrawlHints
from audit.rules.extensions import NEWS_MAX_AGE, ExtensionCheck
from audit.rules.findings import NO_FINDINGS as _NO_FINDINGS
from audit.rules.findings import writable
from audit.rules.fingerprints import SeenUrls, fingerprint
from audit.rules.hreflang import HreflangGraph
from audit.rules.lastmods import FUTURE_TOLERANCE, FUTURE_TOLERANCE_DATE, LastmodCheck
from audit.rules.limits import (
    MAX_ENTRIES,
    MAX_IMAGES,
    MAX_NEWS,
    MAX_UNCOMPRESSED_BYTES,
    news_count_problems,
    size_problems,
)
from audit.rules.locs import LocCheck, LocFindings
from audit.rules.urlkeys import UrlKeys

__all__ = [
    "FUTURE_TOLERANCE",
    "FUTURE_TOLERANCE_DATE",
    "MAX_ENTRIES",
    "MAX_IMAGES",
    "MAX_NEWS",
    "MAX_UNCOMPRESSED_BYTES",
    "NEWS_MAX_AGE",
    "_NO_FINDINGS",
    "HreflangGraph",
    "SeenUrls",
    "SitemapValidator",
    "fingerprint",
]


class SitemapValidator:
    """Checks the entries of one sitemap as they stream past, then its totals.

    `source` names the sitemap in findings; `sitemap_url` (None for a local file
    without a public URL) enables loc-cross-host and loc-outside-path;
    `cross_submitted(loc)` True lets a URL on another host pass (its robots.txt
    lists this sitemap). `seen` is the run's duplicate table for `<url>`
    entries; `seen_sitemaps` the one for an index's `<sitemap>` entries
    (default: a table of this sitemap's own). `served_at` is when the sitemap's
    answer arrived (None: a local file), for index-lastmod-now; `tolerance_s`
    (--lastmod-tolerance) widens its window. `now`, the time of the audit, is an aware
    datetime (None: the time the validator is made).
    """

    __slots__ = (
        # the concerns (check() calls self._x.method, which builds no bound method), the
        # <loc> fast path and this sitemap's id in `seen`
        "_dates",
        "_ext",
        "_hints",
        "_keys",
        "_locs",
        "_plain_loc",
        "_src_url",
        "checked",
        "cross_submitted",
        "hreflang",
        "kind",
        "now",
        "seen",
        "seen_sitemaps",
        "served_at",
        "sitemap_url",
        "source",
        "tolerance_s",
    )

    def __init__(
        self,
        source: str,
        *,
        sitemap_url: str | None = None,
        now: datetime | None = None,
        seen: SeenUrls | None = None,
        hreflang: HreflangGraph | None = None,
        cross_submitted: Callable[[str], bool] | None = None,
        kind: str | None = None,
        seen_sitemaps: SeenUrls | None = None,
        served_at: datetime | None = None,
        tolerance_s: float = 0.0,
    ) -> None:
        self.source = source
        self.served_at = served_at
        self.tolerance_s = tolerance_s
        self.sitemap_url = sitemap_url
        if now is None:
            now = datetime.now(UTC)
        self.now = now.astimezone(UTC)
        self.seen = seen
        self.hreflang = hreflang
        if hreflang is not None and hreflang.seen is None:  # the graph gets the run's table
            hreflang.seen = seen
        self.cross_submitted = cross_submitted
        self.kind = kind
        self.checked = 0
        self._locs = LocCheck(source, sitemap_url=sitemap_url, cross_submitted=cross_submitted)
        self._keys = keys = UrlKeys(source, seen=seen, seen_sitemaps=seen_sitemaps)
        self.seen_sitemaps = keys.seen_sitemaps
        self._dates = LastmodCheck(
            source, now=self.now, kind=kind, served_at=served_at, tolerance_s=tolerance_s
        )
        self._hints = CrawlHints(source)
        self._ext = ExtensionCheck(source, now=self.now, hreflang=hreflang)
        self._plain_loc = self._locs.plain
        self._src_url = keys.src_url

    # -- per entry ----------------------------------------------------------

    def check(self, entry: Entry) -> list[Finding]:
        """Findings for one entry (empty for a clean one; never mutate the list returned).

        The per-entry path of the audit: the common case of each field (a plain <loc>, a
        new URL, a past lastmod, a known priority) is decided here or by one call at most,
        and a clean entry gets the shared empty list (no allocation). Every step that
        reports swaps the shared list for one of its own first (`writable`).
        """
        self.checked += 1
        is_url = entry.kind == "url"
        if not is_url:
            self._dates.index_entry(entry.lastmod)
        out = _NO_FINDINGS
        raw = entry.loc
        if raw is not None and self._plain_loc(raw):
            loc: str | None = raw
            norm: str | None = raw
        else:  # the full checks: the findings also say what the <loc> can be used for
            out = LocFindings()
            loc, norm = self._locs.check(entry, out)
        if norm is not None:
            seen = self.seen
            if is_url and seen is not None and entry.news is None:  # UrlKeys.check's usual
                first = seen.add_normalized(norm, self._src_url)
                if first >= 0:
                    out = writable(out)
                    self._keys.report(entry, seen, first, loc or norm, norm, out)
            else:
                out = self._keys.check(entry, is_url, loc, norm, out)
        lastmod = entry.lastmod
        if lastmod is None:
            self._dates.missing += 1
        else:
            out = self._dates.check(lastmod, entry.line, loc, out)
        changefreq = entry.changefreq
        if changefreq is not None and changefreq not in CHANGEFREQS:
            out = writable(out)
            self._hints.check_changefreq(changefreq, entry.line, loc, out)
        if entry.priority is not None:
            out = self._hints.count_priority(entry.priority, entry.line, loc, is_url, out)
        if (
            entry.images is not None
            or entry.videos is not None
            or entry.news is not None
            or entry.alternates is not None
        ):
            out = writable(out)
            self._ext.check(entry, loc, norm, out)
        return out if out else _NO_FINDINGS

    # -- per sitemap --------------------------------------------------------

    def finish(self, kind: str | None, entries: int, uncompressed_bytes: int) -> list[Finding]:
        """Per-sitemap findings, once the document is done; `entries` and
        `uncompressed_bytes` are the parser's totals, `kind` the document kind."""
        dates = self._dates
        problems = [
            *size_problems(kind, entries, uncompressed_bytes),
            *dates.problems(kind, self.checked, self._ext.news),
            *self._hints.problems(self.checked - dates.index_entries),
            *news_count_problems(self._ext.news),
        ]
        return [finding(code, message, sitemap=self.source) for code, message in problems]
