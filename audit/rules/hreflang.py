"""hreflang reciprocity across a whole audit, from sitemaps and pages, in bounded memory.

`HreflangGraph` is the sitemap-only graph (kept small: only unanswered links are held).
`HreflangStore` is a drop-in `HreflangGraph` for runs with page checks: a URL's
alternates may arrive twice (its sitemap entry's `xhtml:link` and its page's
`<link rel=alternate hreflang>`), so a link counts when either source names it (the
union), and a link named by both is one link, reported at most once.

Every link A -> B is kept (fingerprints of both normalised URLs, the URLs as named, where
it was named) in a dict up to `memory_pairs` links; past that, the dict is written to a
SQLite table in a temporary file and emptied, so memory stays flat however many links a
site has. At the end, a link is reported when the reverse link B -> A does not exist and B
is part of the audit (`seen`): one `hreflang-not-reciprocal` per unanswered link. Two
different URLs share a 64-bit fingerprint with negligible probability (see SeenUrls).

Pure and synchronous (standard library sqlite3 and a temp file); must not import aiohttp
or asyncio.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, ClassVar, Final, Literal

from audit.core.records import Finding, finding
from audit.rules.findings import show
from audit.rules.fingerprints import SeenUrls, url_fingerprint

if TYPE_CHECKING:
    import sqlite3

__all__ = ["MEMORY_PAIRS", "HreflangGraph", "HreflangStore"]

MEMORY_PAIRS: Final = 100_000  # links held in memory before they go to disk (~25 MB)
_SIGN: Final = 1 << 63
_MASK64: Final = (1 << 64) - 1

Source = Literal["sitemap", "page"]
# (A as named, B as named, sitemap, line, source)
_Link = tuple[str, str, str | None, int | None, str]


def _signed(fp: int) -> int:
    """SQLite integers are signed 64-bit."""
    return fp - (1 << 64) if fp >= _SIGN else fp


# where a link A -> B was named, as the message says it, and how to add its return link
# ({a}, {b}: A and B shown): the store's, which holds links of both sources
_RETURN_LINKS: Final = {
    "sitemap": (" (its sitemap entry)", "add a return link to {a} in the entry of {b}"),
    "page": (" (its page's <head>)", 'add <link rel="alternate" hreflang=... href={a}> to {b}'),
}


class HreflangGraph:
    """Collects each URL's hreflang alternates and reports links that are not returned.

    Stored compactly: the set of URLs that declared alternates is a SeenUrls
    table of fingerprints, and only *unanswered* links are kept, keyed by a
    hash of (fingerprint A, fingerprint B). When B later names A (or named it
    earlier), the pair is dropped, so a healthy site keeps almost nothing; what
    remains at the end is exactly what gets reported. The pending dict is the
    piece to spill to disk if sites with millions of broken links need it.

    A URL listed with alternates more than once counts once (the first time).
    `seen` (all URLs of the audit) tells "B is in the audit without
    alternates" from "B was not audited"; without it, every unanswered link is
    reported. SitemapValidator wires the run's SeenUrls in when it has one.
    """

    __slots__ = ("_nodes", "_pending", "seen")

    # how "B lists no alternates" ends in a finding (the store adds where they could be),
    # and where a link was named and how to return it: the graph's links are sitemaps'
    _NO_ALTERNATES = "lists no hreflang alternates at all"
    _RETURN_LINK: ClassVar[Mapping[str, tuple[str, str]]] = {
        "sitemap": ("", "add a return link to {a} in the entry of {b}")
    }

    def __init__(self, seen: SeenUrls | None = None) -> None:
        self.seen = seen
        self._nodes = SeenUrls()
        # pair hash -> (fp of B, A as listed, B as listed, sitemap, line)
        self._pending: dict[int, tuple[int, str, str, str | None, int | None]] = {}

    def __len__(self) -> int:
        """URLs that declared alternates."""
        return len(self._nodes)

    @property
    def pending(self) -> int:
        """Links not (yet) returned."""
        return len(self._pending)

    def add(
        self,
        url: str,
        hrefs: Iterable[str],
        *,
        sitemap: str | None = None,
        line: int | None = None,
    ) -> None:
        """Record that `url` names each of `hrefs` (absolute URLs) as an alternate."""
        fa = url_fingerprint(url)
        if self._nodes.add_fp(fa) >= 0:
            return
        pending = self._pending
        done = {fa}
        for href in hrefs:
            fb = url_fingerprint(href)
            if fb in done:
                continue
            done.add(fb)
            back = hash((fb, fa))
            if back in pending:
                del pending[back]  # B named A before: the pair is reciprocal
            else:
                pending[hash((fa, fb))] = (fb, url, href, sitemap, line)

    def _not_returned(self, links: Iterable[tuple[int, _Link]]) -> Iterator[Finding]:
        """hreflang-not-reciprocal for each link A -> B of `links` (with B's fingerprint)
        whose B does not name A: B lists other alternates, or none while it is part of the
        audit. A B that is not in the audit is left alone (its page may carry the links)."""
        for fb, (a, b, sitemap, line, source) in links:
            if self._nodes.contains_fp(fb):
                why = f"{show(b)} lists hreflang alternates that do not include {show(a)}"
            elif self.seen is None or self.seen.contains_fp(fb):
                why = f"{show(b)} {self._NO_ALTERNATES}"
            else:
                continue
            where, fix = self._RETURN_LINK[source]
            yield finding(
                "hreflang-not-reciprocal",
                f"{show(a)} names {show(b)} as an hreflang alternate{where}, but {why}: "
                f"{fix.format(a=show(a), b=show(b))} (every version must list itself and all "
                "the others)",
                sitemap=sitemap,
                line=line,
                url=a,
            )

    def finish(self) -> list[Finding]:
        """hreflang-not-reciprocal, once per unanswered link (A names B, B does not name A)."""
        pending = self._pending.values()  # (kept flat: one tuple a link while it waits)
        return list(
            self._not_returned((fb, (a, b, sm, n, "sitemap")) for fb, a, b, sm, n in pending)
        )


class HreflangStore(HreflangGraph):
    """Union of every source's hreflang links; memory bounded by spilling to SQLite."""

    __slots__ = ("_db", "_links", "_memory_pairs", "_path", "_total")

    _NO_ALTERNATES = "lists no hreflang alternates at all (sitemap entry or page)"
    _RETURN_LINK = _RETURN_LINKS

    def __init__(self, seen: SeenUrls | None = None, *, memory_pairs: int = MEMORY_PAIRS) -> None:
        super().__init__(seen)
        self._memory_pairs = max(1, memory_pairs)
        self._links: dict[tuple[int, int], _Link] = {}
        self._db: sqlite3.Connection | None = None
        self._path: str | None = None
        self._total = 0  # links added, duplicates included (for tests and stats)

    @property
    def spilled(self) -> bool:
        """True once links went to the on-disk table."""
        return self._db is not None

    @property
    def pending(self) -> int:
        """Links held in memory now."""
        return len(self._links)

    def add(
        self,
        url: str,
        hrefs: Iterable[str],
        *,
        sitemap: str | None = None,
        line: int | None = None,
        source: Source = "sitemap",
    ) -> None:
        """Record that `url` names each of `hrefs` (absolute URLs) as an alternate."""
        fa = url_fingerprint(url)
        self._nodes.add_fp(fa)
        links = self._links
        for href in hrefs:
            fb = url_fingerprint(href)
            if fb == fa:
                continue
            self._total += 1
            links.setdefault((fa, fb), (url, href, sitemap, line, source))  # the first naming
        if len(links) >= self._memory_pairs:
            self._spill()

    def _spill(self) -> None:
        db = self._db
        if db is None:  # the first spill of the run: SQLite and a temp file only then
            import sqlite3
            import tempfile

            fd, self._path = tempfile.mkstemp(prefix="sitemap-audit-hreflang-", suffix=".sqlite")
            os.close(fd)
            db = self._db = sqlite3.connect(self._path)
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute(
                "CREATE TABLE links (a_fp INTEGER NOT NULL, b_fp INTEGER NOT NULL, a TEXT, "
                "b TEXT, sitemap TEXT, line INTEGER, source TEXT, UNIQUE (a_fp, b_fp))"
            )
        with db:
            db.executemany(
                "INSERT OR IGNORE INTO links VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(_signed(fa), _signed(fb), *link) for (fa, fb), link in self._links.items()],
            )
        self._links.clear()

    def _unanswered(self) -> Iterator[tuple[int, _Link]]:
        """(fp of B, link) for every link A -> B whose reverse B -> A does not exist."""
        if self._db is None:
            links = self._links
            for (fa, fb), link in links.items():
                if (fb, fa) not in links:
                    yield fb, link
            return
        self._spill()  # what is still in memory
        rows = self._db.execute(
            "SELECT e.b_fp, e.a, e.b, e.sitemap, e.line, e.source FROM links e "
            "WHERE NOT EXISTS (SELECT 1 FROM links r WHERE r.a_fp = e.b_fp AND r.b_fp = e.a_fp) "
            "ORDER BY e.rowid"
        )
        for b_fp, a, b, sitemap, line, source in rows:
            yield b_fp & _MASK64, (a, b, sitemap, line, source)  # unsigned again

    def iter_findings(self) -> Iterator[Finding]:
        """hreflang-not-reciprocal, once per unanswered link, streamed from memory or disk."""
        return self._not_returned(self._unanswered())

    def finish(self) -> list[Finding]:
        """Every hreflang-not-reciprocal finding; the on-disk table is removed afterwards."""
        try:
            return list(self.iter_findings())
        finally:
            self.close()

    def close(self) -> None:
        """Drop the on-disk table (also after an interrupted run)."""
        db, self._db = self._db, None
        if db is not None:
            db.close()
        path, self._path = self._path, None
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
