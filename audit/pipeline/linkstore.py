"""The link crawl's store and queue (`crawl --links`, audit/pipeline/links.py).

`LinkStore` is one SQLite file: the queued URLs beyond memory, the inlink counts and the
records held to the end of the run (their `inlinks` are only known then). A temp file by
default; beside the --state file (`keep`), it is the crawl's state, which a resumed run
reads again. `LinkQueue` is the breadth-first queue of pages still to be checked: its first
MEMORY_FRONTIER URLs in memory, the rest in the store. The crawl hands its pages to the
run's frontier from here, in bounded batches, so memory stays flat whatever the site's size.

URL keys in the file are `url_key` (audit.rules.fingerprints): the same in every process
and the same the state uses. Imports no aiohttp.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import sqlite3
import tempfile
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from typing import Any, cast

from audit.core.evidence import Evidence
from audit.core.records import Finding, UrlResult
from audit.rules.fingerprints import url_key

__all__ = ["MEMORY_FRONTIER", "LinkQueue", "LinkStore"]

MEMORY_FRONTIER = 10_000  # queued URLs kept in memory; more wait in the SQLite file
_SPILL_BATCH = 1_000  # queued URLs moved back from the file at once
_LINK_BATCH = 20_000  # link targets counted in memory before they go to the file
_HELD_BATCH = 500  # records held in memory before they go to the file
_FLUSH_S = 0.1  # a kept store (--state): at most this long between a page held and its commit
_FIRST_SEQ = -(1 << 62)  # below every queue row (the roots go in below the lowest)
_SCHEMA = (
    "CREATE TABLE queue (seq INTEGER PRIMARY KEY, url TEXT, depth INTEGER, k INTEGER)",
    "CREATE TABLE inlinks (k INTEGER PRIMARY KEY, n INTEGER, source TEXT)",
    "CREATE TABLE held (seq INTEGER PRIMARY KEY, k INTEGER, listed INTEGER, b BLOB, "
    "url TEXT, depth INTEGER, counted INTEGER)",
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
)


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
    if row == (str(run),):  # (None: no run recorded)
        return db
    if db is not None:
        db.close()
    return None


class LinkStore:
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
        self.cursor = _FIRST_SEQ  # durable: the last queue row taken into memory (a temp
        # store's stays: it deletes the rows it takes)
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
        read or committed: every caller uses the file next, so it is open anyway; none
        waiting, each executemany writes nothing)."""
        sources = self._sources
        rows = [(url_key(norm), n, sources[norm]) for norm, n in self._links.items()]
        self._links, self._sources = Counter(), {}
        held, self._held = self._held, []
        db = self.db
        db.executemany(
            "INSERT INTO inlinks VALUES (?, ?, ?) ON CONFLICT(k) DO UPDATE SET n = n + excluded.n",
            rows,
        )
        db.executemany(
            "INSERT INTO held (k, listed, b, url, depth, counted) VALUES (?, ?, ?, ?, ?, ?)", held
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
        else:  # its row's id (0 after a root's -1: a row like any other), which sqlite3
            # sets on the cursor after every INSERT that succeeds (None only before one)
            self.cursor = cast("int", cur.lastrowid)

    def enqueue_first(self, url: str, depth: int, key: int) -> None:
        """Durable: a row ahead of every queued one (a root), held in memory."""
        (low,) = self.db.execute("SELECT COALESCE(MIN(seq), 0) FROM queue").fetchone()
        self.db.execute("INSERT INTO queue VALUES (?, ?, ?, ?)", (low - 1, url, depth, key))
        self.cursor = max(self.cursor, low - 1)

    def unspill(self) -> list[tuple[str, int]]:
        """The next queue rows into memory: a temp store forgets them; a kept one keeps
        them until their page is held (a resumed run finds them there) and reads on past
        them (`cursor`). Asked only while some wait (LinkQueue.pop: `queued`, the rows past
        the cursor), so there is at least one."""
        rows = self.db.execute(
            "SELECT seq, url, depth FROM queue WHERE seq > ? ORDER BY seq LIMIT ?",
            (self.cursor, _SPILL_BATCH),
        ).fetchall()
        self.queued -= len(rows)
        if self.durable:
            self.cursor = rows[-1][0]
        else:
            self.db.execute("DELETE FROM queue WHERE seq <= ?", (rows[-1][0],))
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
            "SELECT h.listed, h.b, COALESCE(i.n, 0), i.source FROM held h "
            "LEFT JOIN inlinks i ON i.k = h.k ORDER BY h.seq"
        )
        for listed, blob, n, source in rows:
            record, found, _ = pickle.loads(blob)
            yield bool(listed), record, found, n, source

    def evidence(self, key: int) -> Evidence | None:
        """The evidence a listed page was held with (a resumed run's page), or None."""
        self._flush()
        row = self.db.execute(
            "SELECT b FROM held WHERE k = ? AND listed = 1 ORDER BY seq DESC LIMIT 1", (key,)
        ).fetchone()
        if row is None:
            return None
        evidence: Evidence | None = pickle.loads(row[0])[2]  # (record, found, evidence)
        return evidence

    # --- a kept store ----------------------------------------------------------

    def tick(self) -> None:
        """A page is done: a kept store commits within _FLUSH_S (called back between two
        steps of the event loop, so never half-way through a page's rows)."""
        if self.durable and self._commit is None:
            self._commit = asyncio.get_running_loop().call_later(_FLUSH_S, self.commit)

    def commit(self) -> None:
        """A kept store's rows committed (its file is open: keep() opened it, and close()
        cancels the timer of tick() before it lets the file go)."""
        self._commit = None
        self._flush()  # a page's links are committed with its record
        self.db.commit()

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


class LinkQueue:
    """The breadth-first queue: FIFO, the first MEMORY_FRONTIER URLs in memory, the rest
    in the store (in order); a kept store has a row for each."""

    def __init__(self, store: LinkStore, bound: int = MEMORY_FRONTIER) -> None:
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
            self.store.enqueue_first(url, depth, url_key(url))
        self.items.appendleft((url, depth))

    def pop(self) -> tuple[str, int] | None:
        if not self.items:
            if not self.store.queued:
                return None
            self.items.extend(self.store.unspill())  # (at least one: see unspill)
        return self.items.popleft()
