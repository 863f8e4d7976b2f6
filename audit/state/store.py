"""The run state (`--state PATH`): an embedded SQLite store that makes audits resumable
and incremental.

What it holds (schema version SCHEMA_VERSION):

    meta      key/value: app, schema_version, fingerprint (targets + options that
              change results), identity (the same, readable JSON: audit.state.identity),
              targets, run (a counter), status (running | complete), started
    urls      the last COMPLETED run: one row per checked URL, with its sitemap, line and
              <lastmod>, the url record JSON, its check findings JSON ('' when none),
              ETag, Last-Modified ('' when absent), and the evidence the verdict was
              derived from (audit.core.evidence: the final answer and the page's facts;
              added to schema 4 as a column, '' or NULL in rows made before) (indexed by
              url, and by sitemap for carried sitemaps); 64 KiB pages
    results   the same columns for the run in progress, appended as URLs are checked:
              no index while a run writes it (an index keyed by URL is an insert at a
              random place per row, three times the cost); indexed only when a dead run
              is resumed; at completion it becomes `urls` and gets its indexes in one
              sorted build
    sitemaps  one row per sitemap read: record JSON, ETag, Last-Modified, the index
              <lastmod> that listed it
    findings  the other findings of a run (documents, entries, robots, hreflang)
    ledger    the published-URL ledger (audit.state.ledger): one row per normalised URL a
              completed run listed (not one cut by --max-urls), with first_seen and
              last_seen (run start times) and the sitemap that last listed it; merged
              from the run's results when it is marked complete. Added to schema 4 like
              `content`
    index_entries  each index entry of the last completed run (and of this one): the
              interval of its <lastmod> and its child's entries digest, for
              index-lastmod-frozen / -churn (audit.rules.indexlastmod). Added like `content`
    budget    --budget: each URL's last check (run, time, listed <lastmod>), for the
              rolling audit's order (audit.state.budget). Added like `content`
    content   lastmod over time (audit.state.lastmod): per page, keyed by a 64-bit hash
              of its URL (the rowid: no second index), the run that saw it, a 64-bit
              fingerprint of its main text and the <lastmod> listed then (about 50 bytes
              a page: a million pages add some 50 MB). Added to schema 4 without a new
              version: a state made before it gets the table when it is opened
              (`_MIGRATIONS`), and older versions ignore it

How a run uses it:

- a new file (or `--fresh`): run 1;
- status `running` (the last run died: kill -9, Ctrl-C, power loss): the same run
  resumes; URLs with a row of this run are not requested again, their stored record
  and findings are replayed into the report;
- status `complete`: a new, incremental run; rows of earlier runs give the ETag and
  Last-Modified for conditional requests and the <lastmod> for `--changed-only`.

Writes never run on the event loop: `put_*` encodes the record (JSON text) and appends
the row to a queue that a writer thread drains, committing every `flush_every` rows or
`flush_ms` milliseconds, the URL rows of a batch in one statement (WAL mode,
synchronous=NORMAL: a committed batch survives a killed process; a crash loses at most
the last uncommitted batch, whose URLs are then simply checked again). A new run (no
earlier results) reads nothing per URL. Lookups of earlier results are indexed reads on
a separate connection, on a snapshot renewed every SNAPSHOT_LOOKUPS lookups.

One state file, one run: `open` takes an exclusive lock on `PATH.lock` (flock, held
until `close`; the kernel drops it when the process dies however it dies, so a killed
run leaves no stale lock) and writes the holder's pid, host and start time into it. A
second run on the same state is refused with a StateError naming the holder (exit 2)
instead of resuming the live run's rows. Without fcntl (Windows) there is no lock.

Files a capability keeps for a run beside the state (`side_file`: the link crawl's store
of `crawl --links`, `PATH.links-N`) are under the same lock, kept while the run is
unfinished and removed once it is marked complete.

A state is marked complete only when it holds every URL row this run wrote: at
completion the rows of the run are counted against the rows present when it started
plus the rows its writer inserted; a mismatch (another process wrote to or completed
the same state) leaves it `running`, so the next run resumes instead of trusting it.

A new state is created in one transaction (schema and meta together). A file left
half-created by an older version or a full disk (empty, or holding only tables of this
schema and no meta rows) holds nothing: it is recognised and created again.

Schema 4 (64 KiB pages, text values) replaced 3; a state of schema 3 is refused by its
version (start it over with --fresh).

A file that is not SQLite, is truncated or corrupt, or belongs to another program or
schema is refused with a one-line StateError and never written to; only `fresh=True`
replaces it.

Imports only the standard library, audit.core.errors, audit.core.evidence (how a URL's
evidence is written as text), audit.rules.urls (the ledger's normalised key) and
audit.state.identity; knows nothing of HTTP or parsing.
"""

from __future__ import annotations

import calendar
import contextlib
import functools
import hashlib
import itertools
import json
import os
import queue
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from audit.core.errors import AuditError
from audit.core.evidence import Evidence, decode_evidence, encode_evidence
from audit.rules.fingerprints import url_key
from audit.rules.urls import normalize_url
from audit.state.identity import what_differs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (see the docstring)
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "SCHEMA_VERSION",
    "Prior",
    "PriorSitemap",
    "StateError",
    "StateStore",
    "fingerprint",
    "read_records",
    "read_status",
    "url_key",
]

APP: Final = "sitemap-audit"
SCHEMA_VERSION: Final = 4
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
FLUSH_MS: Final = 100.0  # at most this long between a put and its commit (what a kill loses)
FLUSH_EVERY: Final = 2048  # queued writes per transaction at most
# A run that died is resumed only this soon after it started: an older one (last night's,
# killed) is tonight's run's past, not its first half; tonight starts anew from the last
# complete run, requesting again what the dead run had checked.
RESUME_WITHIN_S: Final = 12 * 3600
# Large pages: URL rows are appended, never updated, so a page is written about once;
# 64 KiB pages make a sixteenth of the page writes, WAL frames and checkpoint copies of
# 4 KiB ones. Reads go through mmap (no copy of a whole page per lookup).
PAGE_SIZE: Final = 65536
MMAP_SIZE: Final = 1 << 30
SNAPSHOT_LOOKUPS: Final = 5000

# The URL rows of a run (results) and of the last completed one (urls). Values are
# text, never NULL or bytes ('' is "none"): sqlite3 binds str and int directly, but looks
# up an adapter for None and bytes, a failed attribute lookup each that costs more than
# the row's insert. CHECK (run > 0) lets INSERT OR IGNORE skip padding rows (see
# _insert_urls).
_URL_TABLE = """(
    url TEXT NOT NULL,
    run INTEGER NOT NULL CHECK (run > 0),
    sitemap TEXT,
    line INTEGER,
    lastmod TEXT,
    etag TEXT,
    last_modified TEXT,
    record TEXT NOT NULL,
    findings TEXT,
    evidence TEXT
)"""
# The published-URL ledger (nights.md section 2): one row per normalised URL a completed
# run ever listed, with the URL as last listed, the start times of the first and the last
# completed runs that listed it, and the sitemap that listed it then.
_LEDGER_TABLE = (
    "CREATE TABLE IF NOT EXISTS ledger (key TEXT PRIMARY KEY, url TEXT NOT NULL, "
    "first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, last_sitemap TEXT) WITHOUT ROWID"
)
# Index <lastmod> truth over time (nights.md section 4): each index entry of a run, the
# interval of its <lastmod> and its child's entries digest (audit.rules.indexlastmod).
_INDEX_ENTRIES_TABLE = (
    "CREATE TABLE IF NOT EXISTS index_entries (run INTEGER NOT NULL, idx TEXT NOT NULL, "
    "child TEXT NOT NULL, lastmod TEXT, digest TEXT, PRIMARY KEY (run, idx, child))"
)
# --budget (contracts/manysites.md): each URL's last check: the run, its time and the
# <lastmod> it was listed with then
_BUDGET_TABLE = (
    "CREATE TABLE IF NOT EXISTS budget (url TEXT PRIMARY KEY, run INTEGER NOT NULL, "
    "at TEXT NOT NULL, lastmod TEXT) WITHOUT ROWID"
)
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE urls {_URL_TABLE};
CREATE INDEX urls_url ON urls (url);
CREATE INDEX urls_sitemap ON urls (sitemap, url);
CREATE TABLE results {_URL_TABLE};
CREATE TABLE sitemaps (
    url TEXT PRIMARY KEY,
    run INTEGER NOT NULL,
    index_lastmod TEXT,
    etag TEXT,
    last_modified TEXT,
    record TEXT NOT NULL,
    carry INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE findings (run INTEGER NOT NULL, carry_with TEXT, record TEXT NOT NULL);
CREATE INDEX findings_run ON findings (run);
CREATE INDEX findings_carry ON findings (carry_with);
CREATE TABLE content (key INTEGER PRIMARY KEY, run INTEGER NOT NULL, fp INTEGER, lastmod TEXT);
{_LEDGER_TABLE};
{_INDEX_ENTRIES_TABLE};
{_BUDGET_TABLE};
"""
# Tables added to a schema after states were made with it: created when such a state
# is opened for a run (additive only: an older version reading the file ignores them).
_MIGRATIONS: Final = (
    "CREATE TABLE IF NOT EXISTS content "
    "(key INTEGER PRIMARY KEY, run INTEGER NOT NULL, fp INTEGER, lastmod TEXT)",
    _LEDGER_TABLE,
    _INDEX_ENTRIES_TABLE,
    _BUDGET_TABLE,
)
# Columns added to a schema's tables the same way: (table, column, its declaration).
_COLUMN_MIGRATIONS: Final = (
    ("urls", "evidence", "evidence TEXT"),
    ("results", "evidence", "evidence TEXT"),
)
_STATEMENTS: Final = tuple(s.strip() for s in _SCHEMA.split(";") if s.strip())
_URL_COLUMNS: Final = 10
# The URL rows of a batch go in as ONE statement: sqlite3 releases the GIL around each
# step (and reset) of a statement, and taking it back from a busy event loop means waiting
# for the loop's switch interval and then making the loop wait in turn; a step per row,
# or per chunk, would do that hand-over many times a batch. A statement for every batch
# size would be prepared afresh each time (preparing a 500-row INSERT costs more than
# running it), so there is one per power of two, prepared once; the rows short of it are
# padding of zeros (cheapest to bind) that INSERT OR IGNORE skips (CHECK (run > 0)).
_SIZES: Final = tuple(1 << i for i in range(4, 12))  # 16 ... 2048 rows
_PAD_ROW: Final = (0,) * _URL_COLUMNS


@functools.lru_cache(maxsize=len(_SIZES))
def _insert_urls(rows: int) -> str:
    return "INSERT OR IGNORE INTO results VALUES " + ",".join(["(?,?,?,?,?,?,?,?,?,?)"] * rows)


# A resumed run looks up the results of its dead predecessor by URL.
_RESULTS_INDEX = "CREATE INDEX IF NOT EXISTS results_url ON results (url)"
# Completion: the run's results (the last row of a URL: a resumed run may have checked
# an in-flight URL twice) become `urls`, indexed in one sorted build each.
_DEDUPE = "DELETE FROM results WHERE rowid NOT IN (SELECT MAX(rowid) FROM results GROUP BY url)"
_COMPLETE = f"""
DROP INDEX IF EXISTS results_url;
DROP TABLE urls;
ALTER TABLE results RENAME TO urls;
CREATE INDEX urls_url ON urls (url);
CREATE INDEX urls_sitemap ON urls (sitemap, url);
CREATE TABLE results {_URL_TABLE};
"""
# Findings about a sitemap that its parent records (sitemap = parent, url = child) but
# that come from reading the child: they go with the child when it is carried forward.
CHILD_CODES: Final = frozenset({"sitemap-redirected", "sitemap-content-type", "index-nested"})
# Only what reading a document finds travels with it when it is carried: the sitemap's
# own and its entries' findings. A finding judged from a URL's answer or at the end of a
# run names its sitemap too (lastmod-stale released by the deploy-stamp check, agent-*,
# index-lastmod-*), but is judged again every night: carried, it would be counted twice.
_DOCUMENT_PREFIXES: Final = (
    "sitemap-", "index-nested", "index-loop", "element-", "text-sitemap-", "loc-",
    "changefreq-", "priority-", "image-", "video-", "news-", "hreflang-",
)  # fmt: skip
_DOCUMENT_LASTMOD: Final = frozenset(
    {"lastmod-invalid", "lastmod-imprecise", "lastmod-future", "lastmod-missing", "lastmod-uniform"}
)


def _travels(code: object) -> bool:
    """Does a finding of this code go with its sitemap when the sitemap is carried?"""
    return isinstance(code, str) and (
        code.startswith(_DOCUMENT_PREFIXES) or code in _DOCUMENT_LASTMOD
    )


Mode = Literal["new", "resume", "incremental"]


class StateError(AuditError):
    """A state file that cannot be used; the message is one line naming the file."""


@dataclass(frozen=True, slots=True)
class PriorSitemap:
    """What the state knows of one sitemap from an earlier run."""

    index_lastmod: str | None
    etag: str | None
    last_modified: str | None
    record: dict[str, Any]
    carry: bool


@dataclass(frozen=True, slots=True)
class Prior:
    """What the state knows of one URL from this run (resume) or an earlier one."""

    run: int
    lastmod: str | None
    etag: str | None
    last_modified: str | None
    record: dict[str, Any]
    findings: list[dict[str, Any]]
    evidence: Evidence | None = None  # what the verdict was derived from (None: not kept)


def fingerprint(mode: str, targets: list[str], options: dict[str, Any]) -> str:
    """A stable digest of what makes two runs comparable: the targets and the options
    that change results (not rate, concurrency, output or format)."""
    blob = json.dumps(
        {"mode": mode, "targets": targets, "options": options}, sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _different(meta: dict[str, str], identity: dict[str, Any] | None) -> str:
    """Why a state is another audit's: what differs, when the state says what its audit
    was (a state written before `identity` only has the digest)."""
    stored = meta.get("identity")
    if stored and identity is not None:
        try:
            return f"the state of a different audit: {what_differs(json.loads(stored), identity)}"
        except ValueError:
            pass
    return f"the state of a different audit (targets {meta.get('targets', '?')} or options differ)"


def _refuse(path: Path, why: str) -> StateError:
    return StateError(
        f"{path}: {why}; it was not modified (use --fresh to start over, or another --state path)"
    )


def _check_magic(path: Path) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StateError(f"{path}: cannot read the state file: {exc.strerror or exc}") from exc
    if head != SQLITE_MAGIC:
        raise _refuse(path, "not a sitemap-audit state file (not an SQLite database)")


def _read_meta(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    try:
        row = conn.execute("PRAGMA quick_check").fetchone()
        if row is None or row[0] != "ok":
            raise _refuse(path, f"the state file is corrupt ({row[0] if row else 'no answer'})")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        msg = str(exc)
        if "no such table" in msg:
            raise _refuse(path, "not a sitemap-audit state file (no meta table)") from exc
        raise _refuse(path, f"the state file is corrupt or truncated ({msg})") from exc
    if meta.get("app") != APP:
        raise _refuse(path, "not a sitemap-audit state file (foreign meta table)")
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        raise _refuse(
            path,
            f"state schema version {meta.get('schema_version')!r}, this version reads "
            f"{SCHEMA_VERSION}",
        )
    return meta


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    return conn


def _too_old(started: str | None) -> bool:
    """Did the dead run start more than RESUME_WITHIN_S ago? (Unknown: no.)"""
    if not started:
        return False
    try:
        then = calendar.timegm(time.strptime(started, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return False
    return time.time() - then > RESUME_WITHIN_S


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StateError(f"{p}: cannot remove the old state: {exc.strerror}") from exc


def _normal(sql: str) -> str:
    return " ".join(sql.split())


_OURS: Final = frozenset(_normal(s) for s in _STATEMENTS)


def _half_created(conn: sqlite3.Connection) -> bool:
    """True for a database that a creation cut short left behind (a full disk, a kill):
    no table but this schema's (each exactly as this module creates it) and no meta row,
    so no run ever wrote to it and nothing is lost by creating it again. A file of
    another program, or a meta table not made by this module, is not."""
    try:
        rows = conn.execute("SELECT name, sql FROM sqlite_master").fetchall()
        for name, sql in rows:
            if sql is None:  # the automatic index of a PRIMARY KEY
                if not str(name).startswith("sqlite_autoindex_"):
                    return False
            elif _normal(str(sql)) not in _OURS:
                return False
        if any(name == "meta" for name, _ in rows):
            return bool(conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0)
    except sqlite3.DatabaseError:
        return False
    return True


def _add_columns(conn: sqlite3.Connection) -> None:
    """Columns added to schema 4 after states were made with it (an earlier row has
    none: its URL is then asked in full, as on a first run)."""
    for table, column, declaration in _COLUMN_MIGRATIONS:
        names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in names:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {declaration}")


class _Lock:
    """An exclusive flock on PATH.lock for one run; the file tells who holds it."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    @classmethod
    def take(cls, state: Path) -> _Lock:
        if fcntl is None:  # pragma: no cover - Windows
            return cls(None)
        lock_path = Path(str(state) + ".lock")
        try:
            # O_CLOEXEC: a child process (a fetch worker) never holds the lock
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StateError(
                f"{lock_path}: cannot create the state's lock file: {exc.strerror or exc}"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 512, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise StateError(
                f"{state}: in use by another run ({holder or 'holder unknown'}); wait for it "
                "to end, or use another --state path"
            ) from None
        # Rewritten, never removed: unlinking a lock file lets a third process lock a new
        # file while the second still holds the old one.
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        holder = f"pid {os.getpid()} on {socket.gethostname()}, started {started}"
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (holder + "\n").encode(), 0)
        except OSError:  # a full disk: the lock holds all the same, its holder is unnamed
            pass
        return cls(fd)

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)  # closing the last descriptor drops the flock


# --- the writer thread -----------------------------------------------------------

_Op = tuple[str, tuple[Any, ...]]
_STOP: Final = ("stop", ())
_CONTROL: Final = ("stop", "sync")


class _Writer(threading.Thread):
    def __init__(self, path: Path, flush_every: int, flush_ms: float, rows: int = 0) -> None:
        super().__init__(name="sitemap-audit-state", daemon=True)
        self.path = path
        # URL rows of the run in `results`: those there at open, plus every row this
        # writer inserts; checked at completion (see _complete)
        self.rows = rows
        self.incomplete: str | None = None  # why completion was refused
        self.queue: queue.SimpleQueue[_Op] = queue.SimpleQueue()
        self.flush_every = min(max(1, flush_every), _SIZES[-1])
        self.flush_s = max(0.0, flush_ms) / 1000.0
        self.error: BaseException | None = None
        self.wake = threading.Event()
        # control operations (sync, stop) queued and done: each counter is written by
        # one thread only; while one is pending no batch waits to gather
        self.controls_queued = 0
        self.controls_done = 0

    def run(self) -> None:
        try:
            conn = _connect(self.path)
            # per connection: the writer's would otherwise be FULL, an fsync per commit
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException as exc:
            self.error = exc
            self._discard()
            return
        try:
            self._loop(conn)
        finally:
            conn.close()

    def _failed(self, exc: BaseException, batch: list[_Op]) -> None:
        """A write failed (reported by close()): the run goes on without its state."""
        self.error = exc
        if not self._settled(batch[-1]):
            self._discard()

    def _discard(self) -> None:
        """Drop what the run queues from now on (a million URL rows must not pile up in
        memory), still answering flush and stop."""
        while not self._settled(self.queue.get()):
            pass

    def _settled(self, op: _Op) -> bool:
        """A control operation answered without writing; True for stop."""
        kind, args = op
        if kind == "sync":
            args[0].set()
        if kind in _CONTROL:
            self.controls_done += 1
        return kind == "stop"

    def _loop(self, conn: sqlite3.Connection) -> None:
        q = self.queue
        while True:
            batch = [q.get()]
            self.wake.clear()
            if (
                batch[0][0] not in _CONTROL
                and self.flush_s
                and q.qsize() < self.flush_every
                and self.controls_queued == self.controls_done
            ):
                # let a batch gather (the GIL is free meanwhile): one transaction for many
                # rows; flush() and close() cut the wait short
                self.wake.wait(self.flush_s)
            while len(batch) < self.flush_every and batch[-1][0] not in _CONTROL:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            try:
                self.write(conn, batch)
            except BaseException as exc:
                self._failed(exc, batch)
                return
            if batch[-1][0] in _CONTROL:
                self.controls_done += 1
            if batch[-1][0] == "stop":
                return

    def write(self, conn: sqlite3.Connection, batch: list[_Op]) -> None:
        """Commit one batch of queued operations (a control operation only last)."""
        batch = self._write_content(conn, batch)
        if not batch:
            return
        last = batch[-1][0]
        rows = len(batch) - (last in _CONTROL)
        if (
            rows
            and batch[0][0] == "url"
            and batch[rows - 1][0] == "url"
            and all(op[0] == "url" for op in batch[:rows])
        ):
            # the common batch: URL rows only, one statement, its own transaction
            self._insert_urls(conn, [op[1] for op in batch[:rows]])
        elif rows:
            conn.execute("BEGIN")
            i = 0
            while i < rows:  # runs of one kind go in together, in order
                kind = batch[i][0]
                j = i
                while j < rows and batch[j][0] == kind:
                    j += 1
                self._apply(conn, kind, [op[1] for op in batch[i:j]])
                i = j
            conn.execute("COMMIT")
        if last == "sync":
            batch[-1][1][0].set()

    @staticmethod
    def _write_content(conn: sqlite3.Connection, batch: list[_Op]) -> list[_Op]:
        """Commit the batch's content rows (their own table: order does not matter) and
        return the rest, so URL rows still go in as one statement."""
        rows = [op[1] for op in batch if op[0] == "content"]
        if not rows:
            return batch
        conn.execute("BEGIN")
        conn.executemany("INSERT OR REPLACE INTO content VALUES (?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
        return [op for op in batch if op[0] != "content"]

    def _insert_urls(self, conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
        """Rows queued as the INSERT's parameters (JSON already encoded), at most
        FLUSH_EVERY of them: one statement, padded to its size."""
        for size in _SIZES:
            if size >= len(rows):
                break
        flat = list(itertools.chain.from_iterable(rows))
        if len(rows) < size:
            flat += _PAD_ROW * (size - len(rows))
        self.rows += conn.execute(_insert_urls(size), flat).rowcount

    def _apply(self, conn: sqlite3.Connection, kind: str, rows: list[tuple[Any, ...]]) -> None:
        if kind == "url":
            self._insert_urls(conn, rows)
        elif kind == "touch":
            self.rows += conn.executemany(
                "INSERT INTO results SELECT url, ?, ?, line, ?, etag, last_modified, record, "
                "findings, evidence FROM urls WHERE url = ?",
                rows,
            ).rowcount
        elif kind == "sitemap":
            conn.executemany("INSERT OR REPLACE INTO sitemaps VALUES (?,?,?,?,?,?,?)", rows)
        elif kind == "finding":
            conn.executemany("INSERT INTO findings VALUES (?, ?, ?)", rows)
        elif kind == "sql":
            for args in rows:
                conn.execute(args[0], args[1:])
        elif kind == "complete":
            for run, dedupe, ledger, cut in rows:
                self._complete(conn, run, dedupe, ledger, cut)
        else:  # pragma: no cover - a programming error
            raise ValueError(f"unknown state operation {kind}")

    def _complete(
        self, conn: sqlite3.Connection, run: int, dedupe: bool, ledger: bool, cut: str
    ) -> None:
        """Make the run's results the base of the next run, unless they are not all the
        rows it wrote (inside the batch's transaction)."""
        (held,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
        if held != self.rows:
            self.incomplete = (
                f"it holds {held} URL rows of this run where {self.rows} were written "
                "(another process wrote to it)"
            )
            return
        if dedupe:  # only a resumed run may hold a URL twice
            conn.execute(_DEDUPE)
        if ledger:
            _merge_ledger(conn)
        # what left part of the site out (--max-urls, exclusions), for `diff` and `fix`
        # (read_records gives them as a summary)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('cut', ?)", (cut,))
        for statement in _COMPLETE.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("DELETE FROM sitemaps WHERE run < ?", (run,))
        conn.execute("DELETE FROM findings WHERE run < ?", (run,))
        conn.execute("DELETE FROM index_entries WHERE run < ?", (run,))
        conn.execute("UPDATE meta SET value = 'complete' WHERE key = 'status'")


_LEDGER_MERGE = (
    "INSERT INTO ledger VALUES (?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET "
    "url = excluded.url, last_seen = excluded.last_seen, last_sitemap = excluded.last_sitemap"
)


def _merge_ledger(conn: sqlite3.Connection) -> None:
    """The URLs this run listed (its results with a sitemap) into the ledger, as last
    seen at the run's start (a resumed run keeps the start of the run it finishes)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'started'").fetchone()
    started = row[0] if row else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    cursor = conn.execute("SELECT url, sitemap FROM results WHERE sitemap != ''")
    while True:
        page = cursor.fetchmany(4096)
        if not page:
            return
        conn.executemany(
            _LEDGER_MERGE,
            [(normalize_url(url), url, started, started, sitemap) for url, sitemap in page],
        )


def _load_orjson() -> Any:
    try:
        import orjson
    except ImportError:
        return None
    return orjson


_ORJSON: Any = _load_orjson()
_decode: Any = json.loads if _ORJSON is None else _ORJSON.loads
_ORJSON_DUMPS: Any = None if _ORJSON is None else _ORJSON.dumps


def _encoder() -> Any:
    """JSON text: orjson when installed (~10x faster), else the standard library; both
    are read back by json.loads. Text, not orjson's bytes: sqlite3 binds str directly."""
    dumps = _ORJSON_DUMPS
    if dumps is None:
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode

    def encode(obj: Any) -> str:
        text: str = dumps(obj, default=str).decode()
        return text

    return encode


_encode = _encoder()

# --- the store --------------------------------------------------------------------


class StateStore:
    """One run's state. Open with `StateStore.open(...)`; `close(complete=...)` at the end."""

    def __init__(
        self,
        path: Path,
        mode: Mode,
        run: int,
        reader: sqlite3.Connection,
        writer: _Writer,
    ) -> None:
        self.path = path
        self.mode: Mode = mode
        self.run = run
        self._reader = reader
        self._writer = writer
        self._put = writer.queue.put
        self._closed = False
        self._lock = _Lock(None)  # set by open()
        self._bulk: sqlite3.Connection | None = None
        self._bulk_lock = threading.Lock()
        self.replayed = 0  # URLs of this run found done (resume)
        self.carried = 0  # URLs carried forward from an earlier run (304, --changed-only)
        self.skipped = 0  # of those, not requested at all (--changed-only)
        self.sitemaps_carried = 0  # unchanged child sitemaps not read again
        # a completed run adds what it listed to the ledger; not one cut by --max-urls
        self.ledger_update = True
        # the summary's notes of what the run left out (max_urls_reached, excluded_urls,
        # excluded_sitemaps), kept for diff and fix: a state has no summary of its own
        self.cut: dict[str, Any] = {}
        self._lookups = 0
        self._side: list[Path] = []  # files of this run beside the state (side_file)
        if mode != "new":
            self._snapshot()

    def _snapshot(self) -> None:
        """Lookups read one snapshot, renewed every SNAPSHOT_LOOKUPS: a query of its own
        would take and drop the WAL read lock each time and find its page cache stale
        after every commit of the writer. What they read (earlier runs, and this run
        before a resume) does not change while the run writes; renewing lets checkpoints
        reach the end of the WAL."""
        reader = self._reader
        if reader.in_transaction:
            reader.execute("COMMIT")
        reader.execute("BEGIN")
        reader.execute("SELECT 1 FROM meta LIMIT 1").fetchone()  # the snapshot starts here

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        fingerprint: str,
        targets: list[str],
        fresh: bool = False,
        flush_every: int = FLUSH_EVERY,
        flush_ms: float = FLUSH_MS,
        identity: dict[str, Any] | None = None,
    ) -> StateStore:
        """`identity`: the audit the fingerprint digests, readable (audit.state.identity),
        kept so that a refusal can name the target or option that differs."""
        p = Path(path)
        if p.is_dir():
            raise StateError(f"{p}: is a directory, not a state file")
        lock = _Lock.take(p)  # before anything is read, removed (--fresh) or written
        try:
            store = cls._open_locked(
                p, fingerprint, targets, fresh, flush_every, flush_ms, identity
            )
        except BaseException:
            lock.release()
            raise
        store._lock = lock
        return store

    @classmethod
    def _open_locked(
        cls,
        p: Path,
        fingerprint: str,
        targets: list[str],
        fresh: bool,
        flush_every: int,
        flush_ms: float,
        identity: dict[str, Any] | None = None,
    ) -> StateStore:
        if fresh:
            _remove(p)
        size = p.stat().st_size if p.exists() else None
        if size:
            _check_magic(p)
        try:
            conn = _connect(p)
        except sqlite3.Error as exc:
            raise StateError(f"{p}: cannot open the state file: {exc}") from exc
        if size is not None and _half_created(conn):
            # an empty file, or a creation cut short: nothing in it to keep
            conn.close()
            _remove(p)
            conn = _connect(p)
            size = None
        mode: Mode = "new" if size is None else "resume"
        try:
            if size is not None:
                meta = _read_meta(conn, p)
                if meta.get("fingerprint") != fingerprint:
                    raise _refuse(p, _different(meta, identity))
                run = int(meta.get("run", "1"))
                if meta.get("status") == "complete":
                    mode = "incremental"
                    run += 1
                elif _too_old(meta.get("started")) and run > 1:
                    mode = "incremental"  # on the last complete run: see RESUME_WITHIN_S
                    conn.execute("DELETE FROM results WHERE run = ?", (run,))
                    conn.execute("DELETE FROM findings WHERE run = ?", (run,))
                    conn.commit()
            else:
                run = 1
            meta_rows = {
                "app": APP,
                "schema_version": str(SCHEMA_VERSION),
                "fingerprint": fingerprint,
                "targets": " ".join(targets),
                "run": str(run),
                "status": "running",
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            if identity is not None:
                meta_rows["identity"] = json.dumps(identity, sort_keys=True, default=str)
            rows = cls._begin_run(conn, mode, run, meta_rows)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if mode == "new":  # ours, just made, holding nothing: not left half-created
                _remove(p)
                raise StateError(f"{p}: cannot create the state file ({exc})") from exc
            raise StateError(f"{p}: cannot write to the state file ({exc})") from exc
        except BaseException:
            conn.close()
            raise
        writer = _Writer(p, flush_every, flush_ms, rows)
        writer.start()
        return cls(p, mode, run, conn, writer)

    @staticmethod
    def _begin_run(
        conn: sqlite3.Connection, mode: Mode, run: int, meta_rows: dict[str, str]
    ) -> int:
        """Mark the run started (a new state: created, schema and meta in one
        transaction, so that a failure leaves no half-made state); return the URL rows
        already in `results` (a resumed run's)."""
        if mode == "new":
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before the first write
        conn.execute("PRAGMA journal_mode = WAL")
        if mode == "resume":
            conn.execute(_RESULTS_INDEX)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN")
        for statement in _STATEMENTS if mode == "new" else _MIGRATIONS:
            conn.execute(statement)
        if mode != "new":
            _add_columns(conn)
        if mode == "resume":
            del meta_rows["started"]
            # Documents are read again on resume and their findings recorded again.
            conn.execute("DELETE FROM findings WHERE run = ?", (run,))
        conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta_rows.items())
        (rows,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
        conn.execute("COMMIT")
        return int(rows)

    def side_file(self, name: str) -> Path:
        """`PATH.name`: a file a capability keeps for this run beside the state (the link
        crawl's store of `crawl --links`), under the state's lock; removed when the run is
        marked complete, kept for a resumed run otherwise."""
        path = Path(f"{self.path}.{name}")
        self._side.append(path)
        return path

    def _remove_side_files(self) -> None:
        for path in self._side:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):  # a leftover is made anew by the next run
                    Path(str(path) + suffix).unlink()

    # --- reads (event loop; primary-key lookups only) ---------------------------------

    def prior(self, url: str) -> Prior | None:
        """This run's result of `url` (resume), else the last completed run's."""
        if self.mode == "new":  # nothing to look up: no read per URL at all
            return None
        self._lookups += 1
        if self._lookups % SNAPSHOT_LOOKUPS == 0:
            self._snapshot()
        row = None
        if self.mode == "resume":
            row = self._reader.execute(
                "SELECT run, lastmod, etag, last_modified, record, findings, evidence FROM results "
                "WHERE url = ? ORDER BY rowid DESC LIMIT 1",
                (url,),
            ).fetchone()
        if row is None and self.run > 1:
            row = self._reader.execute(
                "SELECT run, lastmod, etag, last_modified, record, findings, evidence FROM urls "
                "WHERE url = ?",
                (url,),
            ).fetchone()
        if row is None:
            return None
        run, lastmod, etag, lm, record, findings, evidence = row
        return Prior(
            run,
            lastmod or None,
            etag or None,
            lm or None,
            _decode(record),
            _decode(findings) if findings else [],
            decode_evidence(evidence or ""),
        )

    def previous_sitemap(self, url: str) -> PriorSitemap | None:
        """What an earlier run stored of a sitemap (never a row of this run)."""
        if self.mode == "new":
            return None
        row = self._reader.execute(
            "SELECT index_lastmod, etag, last_modified, record, carry FROM sitemaps "
            "WHERE url = ? AND run < ?",
            (url, self.run),
        ).fetchone()
        if row is None:
            return None
        return PriorSitemap(row[0], row[1], row[2], _decode(row[3]), bool(row[4]))

    def previous_content(self, url: str) -> tuple[int, str | None] | None:
        """(fingerprint, <lastmod>) an earlier run saw for a page, or None."""
        if self.mode == "new":
            return None
        row = self._reader.execute(
            "SELECT fp, lastmod FROM content WHERE key = ? AND run < ?", (url_key(url), self.run)
        ).fetchone()
        return None if row is None or row[0] is None else (int(row[0]), row[1] or None)

    def previous_index_entries(self) -> dict[tuple[str, str], tuple[str | None, str | None]]:
        """(index, child) -> (<lastmod> interval key, child digest) of the last completed
        run (audit.rules.indexlastmod), or {} on a first run."""
        if self.mode == "new":
            return {}
        rows = self._reader.execute(
            "SELECT idx, child, lastmod, digest FROM index_entries WHERE run = "
            "(SELECT MAX(run) FROM index_entries WHERE run < ?)",
            (self.run,),
        ).fetchall()
        return {(idx, child): (lastmod, digest) for idx, child, lastmod, digest in rows}

    def put_index_entries(self, rows: list[tuple[str, str, str | None, str | None]]) -> None:
        """This run's index entries: (index, child, <lastmod> interval key, digest)."""
        for idx, child, lastmod, digest in rows:
            self._put(
                (
                    "sql",
                    (
                        "INSERT OR REPLACE INTO index_entries VALUES (?, ?, ?, ?, ?)",
                        self.run,
                        idx,
                        child,
                        lastmod,
                        digest,
                    ),
                )
            )

    def budget_row(self, url: str) -> tuple[int, str, str] | None:
        """--budget: (run, time, listed <lastmod>) of the URL's last check, or None."""
        if self.mode == "new":
            return None
        row = self._reader.execute(
            "SELECT run, at, lastmod FROM budget WHERE url = ?", (url,)
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), row[2] or "")

    def put_budget(self, url: str, at: str, lastmod: str | None) -> None:
        """--budget: the URL was checked in this run at `at`, listed with `lastmod`."""
        self._put(
            (
                "sql",
                (
                    "INSERT OR REPLACE INTO budget VALUES (?, ?, ?, ?)",
                    url,
                    self.run,
                    at,
                    lastmod or "",
                ),
            )
        )

    def in_ledger(self, url: str) -> bool:
        """Did an earlier completed run list this URL (normalised)?"""
        if self.mode == "new":
            return False
        row = self._reader.execute(
            "SELECT 1 FROM ledger WHERE key = ?", (normalize_url(url),)
        ).fetchone()
        return row is not None

    def ledger_rows(self) -> Iterator[tuple[str, str, str, str | None]]:
        """The ledger before this run: (url as last listed, first_seen, last_seen,
        last_sitemap), the latest last_seen first, then by URL."""
        if self.mode == "new":
            return
        cursor = self._reader.execute(
            "SELECT url, first_seen, last_seen, last_sitemap FROM ledger "
            "ORDER BY last_seen DESC, url"
        )
        while True:
            page = cursor.fetchmany(1024)
            if not page:
                return
            for url, first, last, sitemap in page:
                yield url, first, last, sitemap or None

    # Bulk reads for a sitemap carried forward: called through asyncio.to_thread, so
    # they use their own connection (under a lock: expanders may call at once).

    def _bulk_conn(self) -> sqlite3.Connection:
        if self._bulk is None:
            self._bulk = _connect(self.path)
        return self._bulk

    def sitemap_entries(
        self, sitemap: str, after: str = "", limit: int = 10_000
    ) -> list[tuple[str, int | None, str | None]]:
        """(url, line, lastmod) of the URLs an earlier run found in `sitemap`, by url."""
        # One row holding the page as JSON: sqlite3 releases and retakes the GIL at every
        # row it steps to, and each retake waits on the busy event loop and then stalls it.
        with self._bulk_lock:
            row = (
                self._bulk_conn()
                .execute(
                    "SELECT json_group_array(json_array(url, line, lastmod)) FROM ("
                    "SELECT url, line, lastmod FROM urls "
                    "WHERE sitemap = ? AND url > ? ORDER BY url LIMIT ?)",
                    (sitemap, after, limit),
                )
                .fetchone()
            )
        entries = _decode(row[0]) if row is not None and row[0] else []
        entries.sort()  # in url order already (a no-op pass); the caller pages on the last
        return [(url, line, lastmod or None) for url, line, lastmod in entries]

    def sitemap_findings(self, sitemap: str) -> list[dict[str, Any]]:
        """The records of an earlier run that go with `sitemap` when it is carried."""
        with self._bulk_lock:
            rows = (
                self._bulk_conn()
                .execute(
                    "SELECT record FROM findings WHERE carry_with = ? AND run < ?",
                    (sitemap, self.run),
                )
                .fetchall()
            )
        return [_decode(r[0]) for r in rows]

    # --- writes (queued; the writer thread commits them) ---------------------------

    def put_url(
        self,
        url: str,
        sitemap: str | None,
        lastmod: str | None,
        etag: str | None,
        last_modified: str | None,
        record: dict[str, Any],
        findings: list[dict[str, Any]],
        line: int | None = None,
        evidence: Evidence | None = None,
    ) -> None:
        # Encoded here, not in the writer: a dict waiting in the queue would outlive a
        # collection of the young generation and be promoted, and every promoted object
        # brings the next full collection of the whole heap closer (str is not tracked).
        # '' for None: see _URL_TABLE. Once per checked URL: orjson called directly (no
        # wrapper frame), one tuple, one put.
        dumps = _ORJSON_DUMPS
        if dumps is None:
            text, found = _encode(record), _encode(findings) if findings else ""
        else:
            text = dumps(record, default=str).decode()
            found = dumps(findings, default=str).decode() if findings else ""
        self._put(
            (
                "url",
                (
                    url,
                    self.run,
                    sitemap or "",
                    line,
                    lastmod or "",
                    etag or "",
                    last_modified or "",
                    text,
                    found,
                    encode_evidence(evidence) if evidence is not None else "",
                ),
            )
        )

    def put_content(self, url: str, fp: int, lastmod: str | None) -> None:
        """A page's fingerprint and the <lastmod> it was listed with in this run."""
        self._put(("content", (url_key(url), self.run, fp, lastmod or "")))

    def touch_url(self, url: str, sitemap: str | None, lastmod: str | None) -> None:
        """An earlier result carried into this run unchanged."""
        self._put(("touch", (self.run, sitemap, lastmod, url)))

    def put_sitemap(
        self,
        url: str,
        record: dict[str, Any],
        *,
        index_lastmod: str | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        carry: bool = False,
    ) -> None:
        """`carry`: the sitemap's entries may be carried into a later run when it is
        unchanged (not when cross-sitemap rules such as hreflang need them read)."""
        row = (url, self.run, index_lastmod, etag, last_modified, _encode(record), int(carry))
        self._put(("sitemap", row))

    def put_finding(self, record: dict[str, Any]) -> None:
        """A record of the run that is not a URL check (findings, URLs not requested)."""
        code = record.get("code")
        if not _travels(code):
            carry_with = None
        elif code in CHILD_CODES:
            carry_with = record.get("url")
        else:
            carry_with = record.get("sitemap")
        self._put(("finding", (self.run, carry_with, _encode(record))))

    def flush(self) -> None:
        """Wait until everything queued so far is committed (tests, shutdown)."""
        done = threading.Event()
        self._writer.controls_queued += 1
        self._put(("sync", (done,)))
        self._writer.wake.set()
        while self._writer.is_alive() and not done.wait(0.05):
            pass

    def close(self, *, complete: bool) -> None:
        """Stop the writer (committing what is queued); a complete run is marked so and
        the rows of URLs and sitemaps no longer listed are dropped."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._reader.in_transaction:
                self._reader.execute("COMMIT")
            if complete:
                cut = json.dumps(self.cut, sort_keys=True) if self.cut else ""
                self._put(("complete", (self.run, self.mode == "resume", self.ledger_update, cut)))
            self._writer.controls_queued += 1
            self._put(_STOP)
            self._writer.wake.set()
            self._writer.join()
            self._reader.close()
            if self._bulk is not None:
                self._bulk.close()
            if complete and self._writer.error is None and self._writer.incomplete is None:
                self._remove_side_files()  # the next run starts anew
        finally:
            self._lock.release()  # after the last write
        if self._writer.error is not None:
            raise StateError(
                f"{self.path}: the state file could not be written ({self._writer.error}; "
                "is the disk full?); the report is not affected, and the next run with this "
                "state resumes from what it holds"
            )
        if self._writer.incomplete is not None:
            raise StateError(
                f"{self.path}: not marked complete: {self._writer.incomplete}; the next run "
                "resumes it"
            )


def _cut_notes(text: str) -> dict[str, Any]:
    """The stored notes of what a run left out ('max-urls': an earlier version's)."""
    try:
        notes = json.loads(text)
    except ValueError:
        notes = None
    return notes if isinstance(notes, dict) else {"max_urls_reached": True}


def _open_read_only(p: Path) -> sqlite3.Connection:
    """A state file opened for reading only; StateError for one that is not a state."""
    _check_magic(p)
    try:
        return sqlite3.connect(f"file:{os.fspath(p)}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StateError(f"{p}: cannot open the state file: {exc}") from exc


def read_status(path: str | Path) -> str:
    """The status of a state file's latest run: `complete`, or `running` (in progress,
    or died). Raises StateError for a file that is not a usable state."""
    p = Path(path)
    conn = _open_read_only(p)
    try:
        return _read_meta(conn, p).get("status", "running")
    finally:
        conn.close()


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The report records a state file holds for its latest run (for `diff`)."""
    p = Path(path)
    conn = _open_read_only(p)
    try:
        meta = _read_meta(conn, p)
        run = int(meta.get("run", "1"))
        # a run in progress (or dead) has its URLs in results; a completed one in urls
        table = "urls" if meta.get("status") == "complete" else "results"
        if meta.get("cut"):  # what diff and fix need to know of the run's summary
            yield {"type": "summary", **_cut_notes(meta["cut"])}
        for (record,) in conn.execute("SELECT record FROM sitemaps WHERE run = ?", (run,)):
            yield json.loads(record)
        for (record,) in conn.execute("SELECT record FROM findings WHERE run = ?", (run,)):
            yield json.loads(record)
        for record, findings in conn.execute(
            f"SELECT record, findings FROM {table} WHERE run = ? ORDER BY url", (run,)
        ):
            yield json.loads(record)
            if findings:
                yield from json.loads(findings)
    except sqlite3.DatabaseError as exc:
        raise _refuse(p, f"the state file is corrupt or truncated ({exc})") from exc
    finally:
        conn.close()
