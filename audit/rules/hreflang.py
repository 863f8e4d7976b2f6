"""hreflang reciprocity across a whole audit, from sitemaps and pages, in bounded memory.

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
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from typing import Final, Literal

from audit.core.records import Finding, finding
from audit.rules.urls import normalize_url
from audit.rules.validator import HreflangGraph, SeenUrls, fingerprint

__all__ = ["MEMORY_PAIRS", "HreflangStore"]

MEMORY_PAIRS: Final = 100_000  # links held in memory before they go to disk (~25 MB)
_SIGN: Final = 1 << 63

Source = Literal["sitemap", "page"]
# (A as named, B as named, sitemap, line, source)
_Link = tuple[str, str, str | None, int | None, str]


def _signed(fp: int) -> int:
    """SQLite integers are signed 64-bit."""
    return fp - (1 << 64) if fp >= _SIGN else fp


def _show(value: str, limit: int = 100) -> str:
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)


class HreflangStore(HreflangGraph):
    """Union of every source's hreflang links; memory bounded by spilling to SQLite."""

    __slots__ = ("_db", "_links", "_memory_pairs", "_path", "_total")

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
        fa = fingerprint(normalize_url(url))
        self._nodes.add_fp(fa)
        links = self._links
        for href in hrefs:
            fb = fingerprint(normalize_url(href))
            if fb == fa:
                continue
            self._total += 1
            key = (fa, fb)
            if key not in links:
                links[key] = (url, href, sitemap, line, source)
        if len(links) >= self._memory_pairs:
            self._spill()

    def _spill(self) -> None:
        db = self._db
        if db is None:
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
        if self._links:
            self._spill()
        rows = self._db.execute(
            "SELECT e.b_fp, e.a, e.b, e.sitemap, e.line, e.source FROM links e "
            "WHERE NOT EXISTS (SELECT 1 FROM links r WHERE r.a_fp = e.b_fp AND r.b_fp = e.a_fp) "
            "ORDER BY e.rowid"
        )
        for b_fp, a, b, sitemap, line, source in rows:
            yield (b_fp + (1 << 64) if b_fp < 0 else b_fp), (a, b, sitemap, line, source)

    def iter_findings(self) -> Iterator[Finding]:
        """hreflang-not-reciprocal, once per unanswered link, streamed from memory or disk."""
        for fb, (a, b, sitemap, line, source) in self._unanswered():
            if self._nodes.contains_fp(fb):
                why = f"{_show(b)} lists hreflang alternates that do not include {_show(a)}"
            elif self.seen is None or self.seen.contains_fp(fb):
                why = f"{_show(b)} lists no hreflang alternates at all (sitemap entry or page)"
            else:
                continue  # B is not in the audit: its page may carry the links
            where = "its sitemap entry" if source == "sitemap" else "its page's <head>"
            fix = (
                f"add a return link to {_show(a)} in the entry of {_show(b)}"
                if source == "sitemap"
                else f'add <link rel="alternate" hreflang=... href={_show(a)}> to {_show(b)}'
            )
            yield finding(
                "hreflang-not-reciprocal",
                f"{_show(a)} names {_show(b)} as an hreflang alternate ({where}), but {why}: "
                f"{fix} (every version must list itself and all the others)",
                sitemap=sitemap,
                line=line,
                url=a,
            )

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
