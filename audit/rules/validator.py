"""Protocol validator: entries in, findings out (RULES.md 'Entries' and counts).

Pure and synchronous: imports nothing of HTTP or asyncio, and nothing of the
parser (it reads plain `Entry` records and plain counts).

    seen = SeenUrls()                               # one per run: loc-duplicate across sitemaps
    hreflang = HreflangGraph()                      # one per run: reciprocity across sitemaps
    v = SitemapValidator(source, sitemap_url=url_or_None, now=datetime_utc,
                         seen=seen, hreflang=hreflang,
                         cross_submitted=lambda loc: False, kind=parser.kind)
    v.check_entries(entries) -> [list[Finding]]     # per batch of entries, as they stream past
    v.check(entry) -> list[Finding]                 # one entry
    v.finish(kind, entries, uncompressed_bytes) -> list[Finding]   # per sitemap
    hreflang.finish() -> list[Finding]              # end of run: hreflang-not-reciprocal

`SitemapValidator` composes one checker per concern; each takes a batch of entries in
turn (the per-entry path has no call per entry):

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

from collections.abc import Callable, Sequence
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
from audit.rules.locs import LocCheck
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
        # the concerns, each taking a batch in turn
        "_dates",
        "_ext",
        "_hints",
        "_keys",
        "_locs",
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

    # -- per entry ----------------------------------------------------------

    def check_entries(self, entries: Sequence[Entry]) -> list[list[Finding]]:
        """The findings of each entry of a batch, in order (an empty list for a clean
        entry, mostly the shared one: never mutate the lists returned).

        The per-entry path of the audit, a batch at a time: each concern takes the whole
        batch in turn (the <loc>, loc-duplicate, <lastmod>, then <changefreq>, <priority>
        and the extensions), so a clean entry costs a few lookups in each concern's loop
        and no call. An entry's findings come in that order; a step that reports swaps the
        shared empty list for one of its own first (`writable`).
        """
        outs = [_NO_FINDINGS] * len(entries)
        self.checked += len(entries)
        locs, norms = self._locs.locate(entries, outs)
        self._keys.check_all(entries, locs, norms, outs)
        self._dates.check_all(entries, locs, outs)
        hints = self._hints
        for i, entry in enumerate(entries):
            changefreq = entry.changefreq
            if changefreq is not None and changefreq not in CHANGEFREQS:
                outs[i] = out = writable(outs[i])
                hints.check_changefreq(changefreq, entry.line, locs[i], out)
            if entry.priority is not None:
                is_url = entry.kind == "url"
                outs[i] = hints.count_priority(entry.priority, entry.line, locs[i], is_url, outs[i])
            if (
                entry.images is not None
                or entry.videos is not None
                or entry.news is not None
                or entry.alternates is not None
            ):
                outs[i] = out = writable(outs[i])
                self._ext.check(entry, locs[i], norms[i], out)
        return outs

    def check(self, entry: Entry) -> list[Finding]:
        """The findings of one entry (check_entries of a batch of one); the shared empty
        list when there are none."""
        out = self.check_entries((entry,))[0]
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
