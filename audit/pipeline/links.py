"""The link crawl of `crawl --links` (RULES.md, Site coverage): a hook on the Auditor.

While the listed URLs are checked, each is fetched with one GET (a facts sink of
checks/pagefacts.py, sharing the read and the parse with --page-checks and --content) and
`judge` reads its links (checks/links.py) off the sink's facts; the internal ones (on the
origins of the audited sitemaps) are counted as inlinks and queued. Once every listed URL
was checked, `drain` fetches the site root and then every queued page breadth-first, on the
auditor's client (its politeness, retries and redirect recording), robots.txt first: a
blocked page is not fetched and nothing is found through it. A listed URL is never fetched
again. Depth counts link hops from a seed: the root is depth 0, a listed page's links
depth 1. A redirect is followed: its target counts as linked from the redirecting URL (unless
the chain ends in an error: the redirecting URL is then the one `link-broken`).

Memory stays flat: URLs queued or fetched are 8-byte fingerprints (SeenUrls); the queue
beyond `MEMORY_FRONTIER` URLs, the inlink counts and the records waiting for their inlinks
live in one SQLite temp file (counts and records go there in bounded batches). Every url record is held until the end (its `inlinks` are
only known then) and delivered with `source` and `inlinks`; links-only pages get records
with `"sitemap": null`. The verdicts (checks/coverage.py) and `summary.coverage` come at
the end of the run.

With `--state PATH` the crawl asks the run's keeper (the StateHook, through its
RunContext) for a side file when attached: the store is kept as `PATH.links-N`
(N: the target's place in the run) instead of a temp file. Every queued URL has a row there
(memory only caches the first ones) and a row stays until its page is held; rows are
committed at most 100 ms after a page is done and always between two pages (WAL: a SIGKILL
loses at most the last batch, whose pages are simply fetched again). When the state resumes
the same run, the crawl goes on from the file: listed pages held are not fetched again
(`before_request`), URLs met (held or queued) are not queued again, the frontier is the
queued rows whose page is not held, and --max-pages, the listed pages read and the pages by
depth are counted from the held rows; the verdicts at the end cover everything, so the
report is that of an uninterrupted run. The records go out through the StateHook, which
stores them as the run's URL results. The state removes the file when its run completes;
a new run (and a run after a complete one) starts a new crawl. URL keys in the file are
blake2b digests, the same in every process. Imports no aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import pickle
import sqlite3
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from audit.checks.coverage import (
    coverage_incomplete,
    link_broken,
    page_not_in_sitemap,
    page_reason,
    url_orphan,
)
from audit.checks.links import PageLinks, header_nofollow, links_of
from audit.checks.pagefacts import LINKS, FactsSink, PageFacts
from audit.checks.verdict import Listing, judge_url
from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence
from audit.core.records import FetchResult, Finding, SitemapRecord, UrlResult
from audit.pipeline.hooks import NEXT, Chain, Done, Hook
from audit.rules.fingerprints import SeenUrls
from audit.rules.urls import normalize_url

if TYPE_CHECKING:
    from audit.http.exchange import BodySink
    from audit.pipeline.context import RunContext, SitemapJob, UrlJob
    from audit.sitemap.parser import StreamParser

__all__ = ["MEMORY_FRONTIER", "LinkCrawl"]

MEMORY_FRONTIER = 10_000  # queued URLs kept in memory; more wait in the SQLite file
_SPILL_BATCH = 1_000  # queued URLs moved back from the file at once
_LINK_BATCH = 20_000  # link targets counted in memory before they go to the file
_HELD_BATCH = 500  # records held in memory before they go to the file
_NORMS_KEPT = 50_000  # links remembered with their normalised form (then forgotten at once)
_MASK63 = (1 << 63) - 1  # SQLite integers are signed 64-bit
_FLUSH_S = 0.1  # a kept store (--state): at most this long between a page held and its commit
_FIRST_SEQ = -(1 << 62)  # below every queue row (the roots go in below the lowest)
_SCHEMA = (
    "CREATE TABLE queue (seq INTEGER PRIMARY KEY, url TEXT, depth INTEGER, k INTEGER)",
    "CREATE TABLE inlinks (k INTEGER PRIMARY KEY, n INTEGER, source TEXT)",
    "CREATE TABLE held (seq INTEGER PRIMARY KEY, k INTEGER, listed INTEGER, b BLOB, "
    "url TEXT, depth INTEGER, counted INTEGER)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
)

# The final delivery of a url record and its findings (Auditor.deliver, or the --state
# hook's, which also stores them)
Deliver = Callable[[UrlResult, list[Finding]], None]


def _key(norm: str) -> int:
    """A normalised URL as a 63-bit key, the same in every process (a kept store is read
    again by the run that resumes it)."""
    digest = hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _MASK63


def _origin(norm: str) -> str:
    """scheme://host[:port] of a normalised absolute URL (its path always starts with "/");
    of anything else, a string no origin equals."""
    start = norm.find("://")
    end = norm.find("/", start + 3) if start > 0 else -1
    return norm[:end] if end > 0 else ""


def _unlink(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)


def _create(db: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        db.execute(statement)


def _connect_kept(path: str) -> sqlite3.Connection:
    """A kept store: WAL, so that a killed run loses at most its last uncommitted batch."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _reopen(path: str, run: int) -> sqlite3.Connection | None:
    """The kept store of run `run` at `path`, or None (none, another run's, unreadable)."""
    if not os.path.exists(path):
        return None
    db: sqlite3.Connection | None = None
    try:
        db = _connect_kept(path)
        row = db.execute("SELECT value FROM meta WHERE key = 'run'").fetchone()
    except sqlite3.DatabaseError:
        row = None
    if row is not None and row[0] == str(run):
        return db
    if db is not None:
        db.close()
    return None


class _Store:
    """The SQLite file: queued URLs beyond memory, inlinks, records held to the end.

    A temp file by default (made on first use, removed at the end). Inlinks are counted
    and records held in memory first, and written in batches (`_LINK_BATCH` targets,
    `_HELD_BATCH` records), always before the file is read or committed. Kept beside the
    --state file (`keep`), it is the crawl's state: every queued URL has a row (memory is
    only a cache of the first ones), rows are committed at most _FLUSH_S after a page is
    done, always between two pages (a page's rows go in one synchronous stretch of the
    event loop), and the file stays when the run ends; the state removes it once its run
    completes."""

    def __init__(self) -> None:
        self.queued = 0  # queue rows not in memory
        self.path = ""
        self.durable = False  # kept (--state): see keep()
        self.cursor = _FIRST_SEQ  # durable: the last queue row taken into memory
        self._db: sqlite3.Connection | None = None
        self._commit: asyncio.TimerHandle | None = None
        self._links: Counter[str] = Counter()  # normalised target -> links to it
        self._sources: dict[str, str] = {}  # normalised target -> the first page linking it
        self._held: list[tuple[Any, ...]] = []  # held rows not written yet

    @property
    def db(self) -> sqlite3.Connection:
        """The file, made on first use (a run that never gets here leaves none behind)."""
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        fd, self.path = tempfile.mkstemp(prefix="sitemap-audit-links-", suffix=".sqlite")
        os.close(fd)
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        _create(db)
        return db

    def keep(self, path: str, *, resume: bool, run: int) -> bool:
        """Keep the store at `path`: the one run `run` left there when `resume` (True),
        else a new one (False)."""
        self.durable = True
        self.path = path
        db = _reopen(path, run) if resume else None
        if db is None:
            _unlink(path)
            db = _connect_kept(path)
            _create(db)
            db.execute("INSERT INTO meta VALUES ('run', ?)", (str(run),))
            db.commit()
            self._db = db
            return False
        # the queue rows of pages held are done; the others are the frontier
        db.execute("DELETE FROM queue WHERE k IN (SELECT k FROM held)")
        db.commit()
        self.queued = db.execute("SELECT COUNT(*) FROM queue").fetchone()[0]
        self._db = db
        return True

    def link(self, source: str, targets: Iterable[str]) -> None:
        """One link from `source` to each (normalised) target: counted in memory first (a
        site's menus link the same pages from every page) and written at the next flush;
        the first source of a target is the one kept."""
        self._links.update(iter(targets))  # iter: a dict of targets counts its keys
        sources = self._sources
        for norm in targets:
            sources.setdefault(norm, source)
        if len(sources) >= _LINK_BATCH:
            self._flush()

    def _flush(self) -> None:
        """The inlinks counted and the records held in memory into the file (before it is
        read or committed)."""
        if self._links:
            sources = self._sources
            rows = [(_key(norm), n, sources[norm]) for norm, n in self._links.items()]
            self._links, self._sources = Counter(), {}
            self.db.executemany(
                "INSERT INTO inlinks VALUES (?, ?, ?) "
                "ON CONFLICT(k) DO UPDATE SET n = n + excluded.n",
                rows,
            )
        if self._held:
            held, self._held = self._held, []
            self.db.executemany(
                "INSERT INTO held (k, listed, b, url, depth, counted) VALUES (?, ?, ?, ?, ?, ?)",
                held,
            )

    def spill(self, url: str, depth: int) -> None:
        self.db.execute("INSERT INTO queue (url, depth) VALUES (?, ?)", (url, depth))
        self.queued += 1

    def enqueue(self, url: str, depth: int, key: int, *, cached: bool) -> None:
        """Durable: a queued URL's row, whether memory holds it too (`cached`) or not."""
        cur = self.db.execute(
            "INSERT INTO queue (url, depth, k) VALUES (?, ?, ?)", (url, depth, key)
        )
        if not cached:
            self.queued += 1
        elif cur.lastrowid is not None:  # 0 after a root's -1: a row like any other
            self.cursor = cur.lastrowid

    def enqueue_first(self, url: str, depth: int, key: int) -> None:
        """Durable: a row ahead of every queued one (a root), held in memory."""
        (low,) = self.db.execute("SELECT COALESCE(MIN(seq), 0) FROM queue").fetchone()
        self.db.execute("INSERT INTO queue VALUES (?, ?, ?, ?)", (low - 1, url, depth, key))
        self.cursor = max(self.cursor, low - 1)

    def unspill(self) -> list[tuple[str, int]]:
        if self.durable:
            return self._next_rows()
        rows = self.db.execute(
            "SELECT seq, url, depth FROM queue ORDER BY seq LIMIT ?", (_SPILL_BATCH,)
        ).fetchall()
        if rows:
            self.db.execute("DELETE FROM queue WHERE seq <= ?", (rows[-1][0],))
            self.queued -= len(rows)
        return [(url, depth) for _, url, depth in rows]

    def _next_rows(self) -> list[tuple[str, int]]:
        """Durable: the next queue rows into memory (they stay until their page is held:
        a resumed run finds them there)."""
        rows = self.db.execute(
            "SELECT seq, url, depth FROM queue WHERE seq > ? ORDER BY seq LIMIT ?",
            (self.cursor, _SPILL_BATCH),
        ).fetchall()
        if rows:
            self.cursor = rows[-1][0]
            self.queued -= len(rows)
        return [(url, depth) for _, url, depth in rows]

    def hold(
        self,
        key: int,
        listed: bool,
        record: UrlResult,
        found: list[Finding],
        *,
        url: str = "",
        depth: int | None = None,
        counted: bool = False,
        evidence: Evidence | None = None,
        again: bool = False,
    ) -> None:
        """A record held to the end; `depth`: counted in pages by depth, `counted`: in
        --max-pages (what a resumed run counts again from the rows). A listed page's
        `evidence` is kept with it, so that a resumed run derives its verdict again
        (`again`: the row it held before the crash is replaced)."""
        if again:
            self._flush()
            self.db.execute("DELETE FROM held WHERE k = ? AND listed = 1", (key,))
        blob = pickle.dumps((record, found, evidence), protocol=pickle.HIGHEST_PROTOCOL)
        self._held.append((key, listed, blob, url, depth, counted))
        if len(self._held) >= _HELD_BATCH:
            self._flush()

    def held(self) -> Iterator[tuple[bool, UrlResult, list[Finding], int, str | None]]:
        self._flush()
        rows = self.db.execute(
            "SELECT h.listed, h.b, i.n, i.source FROM held h "
            "LEFT JOIN inlinks i ON i.k = h.k ORDER BY h.seq"
        )
        for listed, blob, n, source in rows:
            record, found, _ = pickle.loads(blob)
            yield bool(listed), record, found, n or 0, source

    def evidence(self, key: int) -> Evidence | None:
        """The evidence a listed page was held with (a resumed run's page), or None."""
        self._flush()
        row = self.db.execute(
            "SELECT b FROM held WHERE k = ? AND listed = 1 ORDER BY seq DESC LIMIT 1", (key,)
        ).fetchone()
        if row is None:
            return None
        held = pickle.loads(row[0])
        return held[2] if len(held) > 2 else None

    # --- a kept store ----------------------------------------------------------

    def tick(self) -> None:
        """A page is done: a kept store commits within _FLUSH_S (called back between two
        steps of the event loop, so never half-way through a page's rows)."""
        if self.durable and self._commit is None:
            self._commit = asyncio.get_running_loop().call_later(_FLUSH_S, self.commit)

    def commit(self) -> None:
        self._commit = None
        if self._db is not None:
            self._flush()  # a page's links are committed with its record
            self._db.commit()

    def held_urls(self) -> Iterator[tuple[str, bool]]:
        self._flush()
        for url, listed in self.db.execute("SELECT url, listed FROM held"):
            yield url, bool(listed)

    def queued_urls(self) -> Iterator[str]:
        for (url,) in self.db.execute("SELECT url FROM queue"):
            yield url

    def counts(self) -> tuple[int, int, Counter[int]]:
        """Pages fetched (--max-pages), listed pages read, pages by depth, from the rows."""
        self._flush()
        db = self.db
        (fetched,) = db.execute("SELECT COALESCE(SUM(counted), 0) FROM held").fetchone()
        (listed,) = db.execute(
            "SELECT COUNT(*) FROM held WHERE listed AND depth IS NOT NULL"
        ).fetchone()
        rows = db.execute("SELECT depth, COUNT(*) FROM held WHERE depth IS NOT NULL GROUP BY depth")
        return int(fetched), int(listed), Counter(dict(rows.fetchall()))

    def close(self) -> None:
        if self._commit is not None:
            self._commit.cancel()
            self._commit = None
        if self._db is None:
            return
        if self.durable:  # kept: the state removes it when its run completes
            self._flush()
            self._db.commit()
            self._db.close()
            self._db = None
            return
        self._db.close()
        self._db = None
        with contextlib.suppress(OSError):
            os.unlink(self.path)


class _Queue:
    """The breadth-first queue: FIFO, the first MEMORY_FRONTIER URLs in memory, the rest
    in the store (in order); a kept store has a row for each."""

    def __init__(self, store: _Store, bound: int = MEMORY_FRONTIER) -> None:
        self.items: deque[tuple[str, int]] = deque()
        self.store = store
        self.bound = bound

    def __len__(self) -> int:
        return len(self.items) + self.store.queued

    def push(self, url: str, depth: int, key: int = 0) -> None:
        cached = not self.store.queued and len(self.items) < self.bound
        if self.store.durable:
            self.store.enqueue(url, depth, key, cached=cached)
        elif not cached:
            self.store.spill(url, depth)
        if cached:
            self.items.append((url, depth))

    def first(self, url: str, depth: int) -> None:
        """Ahead of everything queued (a site root)."""
        if self.store.durable:
            self.store.enqueue_first(url, depth, _key(normalize_url(url)))
        self.items.appendleft((url, depth))

    def pop(self) -> tuple[str, int] | None:
        if not self.items and self.store.queued:
            self.items.extend(self.store.unspill())
        return self.items.popleft() if self.items else None


class LinkCrawl(Hook):
    """`--links`: one per target; see the module."""

    name = "links"

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.ctx: RunContext | None = None
        self.agent = ""
        self.origins: set[str] = set()
        self._inside: tuple[str, ...] = ()  # "origin/" of each: a normalised URL inside one
        self._norms: dict[str, str] = {}  # link -> normalised, for links met again (menus)
        self.roots: set[str] = set()  # normalised
        self.seen = SeenUrls()  # queued or fetched by the link crawl
        self.store = _Store()
        self.queue = _Queue(self.store)
        self.fetched = 0  # links-only pages requested (what --max-pages counts)
        self.listed_read = 0
        self.depths: Counter[int] = Counter()
        self.stopped_by: str | None = None
        self.drained = False
        self.cut_depth = False  # a link deeper than --max-depth was not followed
        self.active = 0
        self._cond: asyncio.Condition | None = None
        self._sinks: dict[int, FactsSink] = {}  # id(job) -> the sink of its GET, until judged
        self.done_listed: SeenUrls | None = None  # resumed: the listed URLs held before
        self._again: set[int] = set()  # id(job) of listed pages held before, judged again
        self.resumed = 0  # resumed: the pages held before (not requested again)
        self._emit: Deliver | None = None  # the final delivery (None: the auditor's)
        # --render: normalised target -> pages whose link to it is JS-only (js_inlinks)
        self._js: Counter[str] | None = Counter() if config.render is not None else None

    # --- the listed URLs ------------------------------------------------------

    def attach(self, ctx: RunContext) -> None:
        """With --state the crawl keeps its store in the keeper's side file: when the keeper
        resumes its run, the crawl goes on from what that run left there (none, or another
        run's: a new crawl), and its records go out at the end through the keeper."""
        self.ctx = ctx
        self.agent = ctx.agent_token
        keeper = ctx.keeper()
        if keeper is not None:
            self._emit = keeper.deliver_final
            path = os.fspath(keeper.side_file("links"))
            if self.store.keep(path, resume=keeper.resume, run=keeper.run):
                self._restore()

    def _restore(self) -> None:
        """A resumed crawl: the URLs it met (held or queued) are not queued again, listed
        pages held are not fetched again, and its counters start from what it held."""
        done = SeenUrls()
        for url, listed in self.store.held_urls():
            self.seen.add(url)
            self.resumed += 1
            if listed:
                done.add(url)
        for url in self.store.queued_urls():
            self.seen.add(url)
        self.done_listed = done
        self.fetched, self.listed_read, depths = self.store.counts()
        self.depths.update(depths)

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        """A resumed crawl: a listed page held before the run died is not requested
        again; its verdict is derived again from the evidence held with it (so host-wide
        judgements such as a deploy stamp see its answer), its links were counted and
        queued already."""
        done = self.done_listed
        if done is None or job.url not in done:
            return NEXT
        evidence = self.store.evidence(_key(normalize_url(job.url)))
        if evidence is None:
            return NEXT
        self._again.add(id(job))
        return Done(evidence)

    def sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        self._origin_of(job.url)  # early: the listed pages' links are judged against it
        return None

    def sitemap_done(self, record: SitemapRecord, parser: StreamParser) -> None:
        self._origin_of(record.url)

    def _origin_of(self, url: str) -> None:
        norm = normalize_url(url)
        if norm.startswith(("http://", "https://")):
            origin = _origin(norm)
            if origin not in self.origins:
                self.origins.add(origin)
                self._inside = tuple(o + "/" for o in sorted(self.origins))
                self.roots.add(origin + "/")

    def page_body(self, job: UrlJob) -> BodySink | None:
        sink = self._sinks[id(job)] = FactsSink(LINKS, self.config.page_cap, job.url)
        return sink

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        sink = self._sinks.pop(id(job), None)
        if result is None:
            return None
        facts = sink.facts if sink is not None else None
        if id(job) in self._again:  # counted, and its links followed, before the crash
            page = self._read(result.final_url or job.url, result, facts)
        else:
            self.listed_read += 1
            self.depths[0] += 1
            page = self._answered(job.url, result, 0, facts)
        extra = record.extra or {}
        final = result.final_url or job.url
        reason = page_reason(extra.get("indexability"), page, final)
        if reason == extra.get("indexability"):
            return None
        extra = {**extra, "indexable": reason is None, "indexability": reason}
        return record.with_extra(extra), found

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        depth = 0 if result is not None else None  # judge() counted it as read
        again = id(job) in self._again
        if again:
            self._again.discard(id(job))
        key = _key(normalize_url(job.url))
        self.store.hold(
            key, True, record, found, url=job.url, depth=depth, evidence=job.evidence, again=again
        )
        self.store.tick()
        return Done(None)

    def add_rendered(self, page: str, links: Iterable[str]) -> None:
        """--render: a listed page's JS-only links (rendered, not in its raw HTML) at its
        final URL `page`: linked from it like its raw links (one inlink per page), queued
        one hop deeper, and counted as JS-only links of their targets."""
        targets = self._targets(links)
        targets.pop(normalize_url(page), None)
        if self._js is not None:
            self._js.update(targets.keys())
        self._link(page, targets.values(), 1)

    # --- what a fetched page adds to the crawl -------------------------------

    def _answered(
        self, url: str, result: FetchResult, depth: int, facts: PageFacts | None
    ) -> PageLinks | None:
        """A page's answer into the crawl: a redirect's target as linked from the URL, the
        page's followable internal links as linked from it and queued one hop deeper."""
        final = url
        if result.redirects and result.final_url:
            final = result.final_url
            # held first: once seen, _link does not queue it to be fetched a second time
            self._redirect_target(final, result, depth, facts)
            if result.status is not None and result.status < 400:
                self._link(url, [final], depth)
            # else the chain ends in an error: that is the linked URL's one link-broken, its
            # target is not a second one (nor counted twice in summary.coverage)
        page = self._read(final, result, facts)
        if page is not None and page.links:
            self._link(final, page.links, depth + 1)
        return page

    def _read(self, url: str, result: FetchResult, facts: PageFacts | None) -> PageLinks | None:
        """The links of a 200 HTML page of an audited origin; None for anything else."""
        if facts is None or result.status != 200 or not facts.bytes_read:
            return None
        if not self._internal(normalize_url(url)):
            return None
        page = links_of(facts, url, agent=self.agent)
        if header_nofollow(result.header_all("x-robots-tag"), self.agent):
            page = replace(page, links=(), nofollow=True)
        return page

    def _internal(self, norm: str) -> bool:
        # a normalised URL's path starts with "/": its origin is what comes before
        return norm.startswith(self._inside)

    def _link(self, source: str, links: Iterable[str], depth: int) -> None:
        """Count `source`'s links once per target (never to itself), queue the new ones."""
        targets = self._targets(links)
        targets.pop(normalize_url(source), None)
        if not targets:
            return
        self.store.link(source, targets)
        seen = self.seen
        for norm, link in targets.items():
            if seen.add_normalized(norm) < 0:  # new
                self.queue.push(link, depth, _key(norm))

    def _targets(self, links: Iterable[str]) -> dict[str, str]:
        """The internal links, normalised (each once) -> the link as found first."""
        targets: dict[str, str] = {}
        inside, norms = self._inside, self._norms
        if len(norms) > _NORMS_KEPT:
            norms.clear()
        for link in links:
            norm = norms.get(link)
            if norm is None:
                norm = norms[link] = normalize_url(link)
            if norm not in targets and norm.startswith(inside):
                targets[norm] = link
        return targets

    def _redirect_target(
        self, final: str, result: FetchResult, depth: int, facts: PageFacts | None
    ) -> None:
        """A redirect's target read here, not again: its own record, unless it is listed
        (the listed URL has its record) or was met before."""
        norm = normalize_url(final)
        if not self._internal(norm) or self._listed(final) or self.seen.add(final):
            return
        target = replace(result, url=final, redirects=())
        self._hold_page(final, target, self._read(final, target, facts), depth)

    def _listed(self, url: str) -> bool:
        return self.ctx is not None and url in self.ctx.listed

    # --- the crawl beyond the listed URLs ------------------------------------

    async def drain(self) -> None:
        self._cond = asyncio.Condition()
        for root in sorted(self.roots, reverse=True):
            if not self.seen.add(root):
                self.queue.first(root, 0)
        workers = max(1, self.config.concurrency)
        async with asyncio.TaskGroup() as tg:
            for _ in range(workers):
                tg.create_task(self._worker())
        self.drained = True

    async def _worker(self) -> None:
        while (item := await self._next()) is not None:
            self.active += 1
            try:
                await self._visit(*item)
            finally:
                self.active -= 1
                await self._wake()

    async def _wake(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._cond.notify_all()

    async def _next(self) -> tuple[str, int] | None:
        """The next page to fetch; None when the crawl is over (or cut)."""
        assert self._cond is not None
        async with self._cond:
            while True:
                item = self._take()
                if item is not None or self.stopped_by is not None or not self.active:
                    self._cond.notify_all()
                    return item
                await self._cond.wait()

    def _take(self) -> tuple[str, int] | None:
        """A queued page to fetch now: listed ones were read already, too deep ones are cut."""
        while self.stopped_by is None and (item := self.queue.pop()) is not None:
            url, depth = item
            if self._listed(url):
                continue
            max_depth = self.config.max_depth
            if max_depth is not None and depth > max_depth:
                self.cut_depth = True
                continue
            if self.fetched >= self.config.max_pages:
                self.stopped_by = "max-pages"
                return None
            self.fetched += 1
            return item
        return None

    async def _visit(self, url: str, depth: int) -> None:
        assert self.ctx is not None
        policy = await self.ctx.robots_for(url)
        if not policy.allowed(url):
            blocked = UrlResult.unrequested(url, None, None, None, "blocked")
            self._hold(url, blocked, "robots", counted=True)
            self.store.tick()
            return
        cap = self.config.page_cap
        sink = FactsSink(LINKS, cap, url)
        result = await self.ctx.client.fetch_page(url, sink, cap=cap)
        self.depths[depth] += 1
        self._hold_page(
            url, result, self._answered(url, result, depth, sink.facts), depth, counted=True
        )
        self.store.tick()

    def _hold_page(
        self,
        url: str,
        result: FetchResult,
        page: PageLinks | None,
        depth: int,
        *,
        counted: bool = False,
    ) -> None:
        """A links-only page's record, its indexability judged as for a listed URL;
        `counted`: a page the crawl fetched (not a redirect's target)."""
        judged = judge_url(result, Listing(url), self.config, agent_token=self.agent)
        said = judged.index_fields()["indexability"]
        reason = page_reason(said, page, result.final_url or url)
        self._hold(url, judged.record, reason, depth if counted else None, counted=counted)

    def _hold(
        self,
        url: str,
        record: UrlResult,
        reason: str | None,
        depth: int | None = None,
        *,
        counted: bool = False,
    ) -> None:
        extra = {**(record.extra or {}), "indexable": reason is None, "indexability": reason}
        key = _key(normalize_url(url))
        record = record.with_extra(extra)
        self.store.hold(key, False, record, [], url=url, depth=depth, counted=counted)

    # --- the end: verdicts, records, summary ---------------------------------

    def _stopped(self) -> str | None:
        """What kept the crawl from being complete, or None."""
        assert self.ctx is not None
        if not self.drained:
            return "interrupted"
        if self.ctx.state.max_urls_reached:
            return "max-urls"
        if self.stopped_by is not None:
            return self.stopped_by
        return "max-depth" if self.cut_depth else None

    def end_of_run(self) -> None:
        assert self.ctx is not None
        stopped = self._stopped()
        counts = Counter[str]()
        emit = self._emit or self.ctx.deliver
        try:
            for listed, record, found, n, source in self.store.held():
                out = self._verdicts(listed, record, n, source, stopped is None)
                counts.update(f.code for f in out)
                emit(self._js_marked(self._marked(listed, record, n)), [*found, *out])
        finally:
            self.store.close()
        if stopped is not None:
            root = min(self.roots) if self.roots else ""
            pages = self.fetched + self.listed_read
            self.ctx.recorder.finding(coverage_incomplete(root, pages, stopped))
        self._summary(stopped, counts)

    def _verdicts(
        self, listed: bool, record: UrlResult, n: int, source: str | None, complete: bool
    ) -> list[Finding]:
        out: list[Finding | None] = [link_broken(record, n, source)]
        if listed and normalize_url(record.url) not in self.roots:
            out.append(url_orphan(record, n, complete=complete))
        elif not listed:
            out.append(page_not_in_sitemap(record, n, source))
        return [f for f in out if f is not None]

    @staticmethod
    def _marked(listed: bool, record: UrlResult, n: int) -> UrlResult:
        source = ("both" if n else "sitemap") if listed else "links"
        return record.with_extra({**(record.extra or {}), "source": source, "inlinks": n})

    def _js_marked(self, record: UrlResult) -> UrlResult:
        """--render: the record's js_inlinks."""
        if self._js is None:
            return record
        n = self._js.get(normalize_url(record.url), 0)
        extra = record.extra or {}
        rendered = extra.get("rendered", False)  # a links-only page is never rendered
        return record.with_extra({**extra, "js_inlinks": n, "rendered": rendered})

    def _summary(self, stopped: str | None, counts: Counter[str]) -> None:
        """summary.coverage, merged over the targets of one run."""
        assert self.ctx is not None
        notes: dict[str, Any] = self.ctx.recorder.notes.setdefault(
            "coverage",
            {"complete": True, "pages": 0, "listed": 0, "orphans": 0, "unlisted": 0},
        )
        notes["complete"] = notes["complete"] and stopped is None
        notes["pages"] += self.fetched + self.listed_read
        notes["listed"] += self.listed_read
        notes["orphans"] += counts["url-orphan"]
        notes["unlisted"] += counts["page-not-in-sitemap"]
        notes["broken_links"] = notes.get("broken_links", 0) + counts["link-broken"]
        depths = notes.setdefault("depths", {})
        for depth, n in self.depths.items():
            depths[str(depth)] = depths.get(str(depth), 0) + n
        if stopped is not None:
            notes["stopped_by"] = stopped
