"""The state's writer thread: writes never run on the event loop.

The store's `put_*` encode the record (JSON text) and append the row to a queue that
this thread drains, committing every `flush_every` rows or `flush_ms` milliseconds, the
URL rows of a batch in one statement (WAL mode, synchronous=NORMAL: a committed batch
survives a killed process; a crash loses at most the last uncommitted batch, whose URLs
are then simply checked again).

A run is marked complete (`complete`, queued by the store's `close`) only when the state
holds every URL row this run wrote: the rows of the run are counted against the rows
present when it started plus the rows this writer inserted; a mismatch (another process
wrote to or completed the same state) leaves it `running`, so the next run resumes
instead of trusting it.

Imports only the standard library, audit.rules.urls (the ledger's normalised key) and
audit.state.schema.
"""

from __future__ import annotations

import itertools
import queue
import sqlite3
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

from audit.rules.urls import normalize_url
from audit.state.schema import URL_COLUMNS, URL_TABLE, connect

__all__ = ["CONTROL", "FLUSH_EVERY", "FLUSH_MS", "STOP", "Op", "Writer"]

FLUSH_MS: Final = 100.0  # at most this long between a put and its commit (what a kill loses)
FLUSH_EVERY: Final = 2048  # queued writes per transaction at most

# A queued operation: its kind ("url", "complete", a kind of _MANY, and the control
# operations "sync" and "stop") and its row
Op = tuple[str, tuple[Any, ...]]
STOP: Final = ("stop", ())
CONTROL: Final = ("stop", "sync")

# The URL rows of a batch go in as ONE statement: sqlite3 releases the GIL around each
# step (and reset) of a statement, and taking it back from a busy event loop means waiting
# for the loop's switch interval and then making the loop wait in turn; a step per row,
# or per chunk, would do that hand-over many times a batch. A statement for every batch
# size would be prepared afresh each time (preparing a 500-row INSERT costs more than
# running it), so there is one per power of two, prepared once; the rows short of it are
# padding of zeros (cheapest to bind) that INSERT OR IGNORE skips (CHECK (run > 0)).
_SIZES: Final = tuple(1 << i for i in range(4, 12))  # 16 ... 2048 rows
_PAD_ROW: Final = (0,) * URL_COLUMNS
_INSERT_URLS: Final = {
    size: "INSERT OR IGNORE INTO results VALUES "
    + ",".join(["(" + ",".join("?" * URL_COLUMNS) + ")"] * size)
    for size in _SIZES
}
# The other kinds of row, each many at once
_MANY: Final = {
    "sitemap": "INSERT OR REPLACE INTO sitemaps VALUES (?,?,?,?,?,?,?)",
    "finding": "INSERT INTO findings VALUES (?, ?, ?)",
    "content": "INSERT OR REPLACE INTO content VALUES (?, ?, ?, ?)",
    "index_entry": "INSERT OR REPLACE INTO index_entries VALUES (?, ?, ?, ?, ?)",
    "budget": "INSERT OR REPLACE INTO budget VALUES (?, ?, ?, ?)",
}
# Completion: the run's results (the last row of a URL: a resumed run may have checked
# an in-flight URL twice) become `urls`, indexed in one sorted build each.
_DEDUPE = "DELETE FROM results WHERE rowid NOT IN (SELECT MAX(rowid) FROM results GROUP BY url)"
_COMPLETE: Final = (
    # what left part of the site out (--max-urls, exclusions), for `diff` and `fix`
    # (read_records gives them as a summary)
    "INSERT OR REPLACE INTO meta VALUES ('cut', :cut)",
    "DROP INDEX IF EXISTS results_url",
    "DROP TABLE urls",
    "ALTER TABLE results RENAME TO urls",
    "CREATE INDEX urls_url ON urls (url)",
    "CREATE INDEX urls_sitemap ON urls (sitemap, url)",
    f"CREATE TABLE results {URL_TABLE}",
    # earlier runs' rows
    "DELETE FROM sitemaps WHERE run < :run",
    "DELETE FROM findings WHERE run < :run",
    "DELETE FROM index_entries WHERE run < :run",
    "UPDATE meta SET value = 'complete' WHERE key = 'status'",
)
# The URLs this run listed (its results with a sitemap) into the ledger, keyed by their
# normalised URL (normalize_url, a function of the writer's connection), as last seen at
# the run's start (a resumed run keeps the start of the run it finishes: begin_run writes
# it for a new or incremental run, a resumed one keeps it). (The WHERE clause tells
# SQLite's parser that ON CONFLICT is the upsert's.)
_LEDGER_MERGE = (
    "INSERT INTO ledger SELECT normalize_url(r.url), r.url, m.value, m.value, r.sitemap "
    "FROM results AS r JOIN meta AS m ON m.key = 'started' WHERE r.sitemap != '' "
    "ON CONFLICT(key) DO UPDATE SET "
    "url = excluded.url, last_seen = excluded.last_seen, last_sitemap = excluded.last_sitemap"
)


# why the state cannot be trusted when a write failed (a full disk)
_UNWRITTEN: Final = (
    "the state file could not be written ({}; is the disk full?); the report is not "
    "affected, and the next run with this state resumes from what it holds"
)


class Writer(threading.Thread):
    """The thread that commits what the store queues (`queue`); `failure` says why the
    state is not what the run wrote: a write failed, or completion was refused."""

    def __init__(self, path: Path, flush_every: int, flush_ms: float, rows: int = 0) -> None:
        super().__init__(name="sitemap-audit-state", daemon=True)
        self.path = path
        # URL rows of the run in `results`: those there at open, plus every row this
        # writer inserts; checked at completion (see _complete)
        self.rows = rows
        self.queue: queue.SimpleQueue[Op] = queue.SimpleQueue()
        self.flush_every = min(max(1, flush_every), _SIZES[-1])
        self.flush_s = max(0.0, flush_ms) / 1000.0
        self.failure: str | None = None  # reported by the store's close()
        self.wake = threading.Event()
        # control operations (sync, stop) queued and done: each counter is written by
        # one thread only; while one is pending no batch waits to gather
        self.controls_queued = 0
        self.controls_done = 0

    def run(self) -> None:
        try:
            conn = connect(self.path)
            # per connection: the writer's would otherwise be FULL, an fsync per commit
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.create_function("normalize_url", 1, normalize_url, deterministic=True)
        except BaseException as exc:
            self.failure = _UNWRITTEN.format(exc)
            self._discard()
            return
        try:
            self._loop(conn)
        finally:
            conn.close()

    def control(self, op: Op) -> None:
        """Queue a control operation (sync, stop): a batch gathering meanwhile ends at
        once, and none waits to gather until it is done."""
        self.controls_queued += 1
        self.queue.put(op)
        self.wake.set()

    def _discard(self) -> None:
        """Drop what the run queues from now on (a million URL rows must not pile up in
        memory), still answering flush and stop."""
        while not self._settled(self.queue.get()):
            pass

    def _settled(self, op: Op) -> bool:
        """A control operation answered without writing; True for stop."""
        kind, args = op
        if kind == "sync":
            args[0].set()
        self.controls_done += kind in CONTROL
        return kind == "stop"

    def _loop(self, conn: sqlite3.Connection) -> None:
        """Commit batch after batch until a stop; after a write that failed, only answer
        what is queued (the batch's own control operation, then _discard)."""
        q = self.queue
        while self.failure is None:
            batch = [q.get()]
            self.wake.clear()
            # (a control operation taken first is pending too: `control` counts it before
            # queueing it)
            if q.qsize() < self.flush_every and self.controls_queued == self.controls_done:
                # let a batch gather (the GIL is free meanwhile): one transaction for many
                # rows; flush() and close() cut the wait short (a flush_s of 0: no wait)
                self.wake.wait(self.flush_s)
            while len(batch) < self.flush_every and batch[-1][0] not in CONTROL:
                try:
                    batch.append(q.get_nowait())
                except queue.Empty:
                    break
            try:
                self.write(conn, batch)
            except BaseException as exc:  # the run goes on without its state
                self.failure = _UNWRITTEN.format(exc)
            if self._settled(batch[-1]):  # a sync answered, a stop: the end
                return
        self._discard()

    def write(self, conn: sqlite3.Connection, batch: list[Op]) -> None:
        """Commit one batch of queued operations in one transaction (a control operation
        only last, answered by the loop once the batch is committed): each kind's rows
        together (the tables are apart), in their order, and the completion last (it
        counts the URL rows)."""
        ops = batch[:-1] if batch[-1][0] in CONTROL else batch
        rows: defaultdict[str, list[tuple[Any, ...]]] = defaultdict(list)
        for kind, args in ops:
            rows[kind].append(args)
        urls = rows.pop("url", [])
        completes = rows.pop("complete", [])
        conn.execute("BEGIN")
        if urls:
            # the URL rows (JSON already encoded, at most FLUSH_EVERY): one statement,
            # padded to its size (the power of two that holds them, 16 at least)
            size = max(_SIZES[0], 1 << (len(urls) - 1).bit_length())
            flat = list(itertools.chain.from_iterable(urls))
            flat += _PAD_ROW * (size - len(urls))
            self.rows += conn.execute(_INSERT_URLS[size], flat).rowcount
        for kind, many in rows.items():  # an unknown kind is a programming error (KeyError)
            conn.executemany(_MANY[kind], many)
        for complete in completes:
            self._complete(conn, *complete)
        conn.execute("COMMIT")

    def _complete(
        self, conn: sqlite3.Connection, run: int, dedupe: bool, ledger: bool, cut: str
    ) -> None:
        """Make the run's results the base of the next run, unless they are not all the
        rows it wrote (inside the batch's transaction)."""
        (held,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
        if held != self.rows:
            self.failure = (
                f"not marked complete: it holds {held} URL rows of this run where "
                f"{self.rows} were written (another process wrote to it); the next run "
                "resumes it"
            )
            return
        if dedupe:  # only a resumed run may hold a URL twice
            conn.execute(_DEDUPE)
        if ledger:
            conn.execute(_LEDGER_MERGE)
        for statement in _COMPLETE:
            conn.execute(statement, {"cut": cut, "run": run})
