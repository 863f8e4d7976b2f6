"""What a state holds, read back: a run's lookups of earlier results (`StateReader`, the
read side of audit.state.store's StateStore) and a state file's records and status for
`diff`, `fix` and `worse` (`read_records`, `read_status`).

Lookups run on the event loop and are indexed reads on a connection of their own, on a
snapshot renewed every SNAPSHOT_LOOKUPS lookups. A new run (no earlier results) reads
nothing per URL. The bulk reads of a carried sitemap run in a thread (asyncio.to_thread)
on one more connection.

Imports only the standard library, audit.core.evidence (how a URL's evidence is read
back), audit.rules.urls (the ledger's normalised key), audit.rules.indexlastmod (an index
entry's state) and audit.state.schema.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from audit.core.evidence import Evidence, decode_evidence
from audit.rules.indexlastmod import IndexEntryState
from audit.rules.urls import normalize_url
from audit.state.schema import (
    Mode,
    StateError,
    check_magic,
    connect,
    decode,
    read_meta,
    refuse,
    url_key,
)

__all__ = [
    "SNAPSHOT_LOOKUPS",
    "Prior",
    "PriorSitemap",
    "StateReader",
    "read_records",
    "read_status",
]

SNAPSHOT_LOOKUPS: Final = 5000

# '' is "none" in the URL rows (audit.state.schema.URL_TABLE): read back as None here
_COLUMNS = (
    "run, NULLIF(lastmod, ''), NULLIF(etag, ''), NULLIF(last_modified, ''), record, findings, "
    "evidence"
)
# This run's own rows (a resume: the last row of a URL) and the last completed run's
_FROM_RESULTS = f"SELECT {_COLUMNS} FROM results WHERE url = ? ORDER BY rowid DESC LIMIT 1"
_FROM_URLS = f"SELECT {_COLUMNS} FROM urls WHERE url = ?"


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


class StateReader:
    """The reads of one run's state: what this run (resume) or earlier runs stored."""

    def __init__(self, path: Path, mode: Mode, run: int, reader: sqlite3.Connection) -> None:
        self.path = path
        self.mode: Mode = mode
        self.run = run
        self._reader = reader
        self._bulk: sqlite3.Connection | None = None
        self._bulk_lock = threading.Lock()
        self._lookups = 0
        self._prior_queries = [
            query for query, wanted in ((_FROM_RESULTS, mode == "resume"), (_FROM_URLS, run > 1))
            if wanted
        ]  # fmt: skip
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

    def _row(self, sql: str, *args: Any) -> Any:
        """One row of an earlier run, or None (always on a new run: nothing to read)."""
        if self.mode == "new":
            return None
        return self._reader.execute(sql, args).fetchone()

    # --- lookups (event loop; primary-key lookups only) -------------------------------

    def prior(self, url: str) -> Prior | None:
        """This run's result of `url` (resume), else the last completed run's."""
        if not self._prior_queries:  # a new run: no read per URL at all
            return None
        self._lookups += 1
        if self._lookups % SNAPSHOT_LOOKUPS == 0:
            self._snapshot()
        for query in self._prior_queries:
            row = self._reader.execute(query, (url,)).fetchone()
            if row is not None:
                run, lastmod, etag, lm, record, findings, evidence = row
                return Prior(
                    run,
                    lastmod,
                    etag,
                    lm,
                    decode(record),
                    decode(findings) if findings else [],
                    decode_evidence(evidence),  # NULL in a row older than the column
                )
        return None

    def previous_sitemap(self, url: str) -> PriorSitemap | None:
        """What an earlier run stored of a sitemap (never a row of this run)."""
        row = self._row(
            "SELECT index_lastmod, etag, last_modified, record, carry FROM sitemaps "
            "WHERE url = ? AND run < ?",
            url,
            self.run,
        )
        if row is None:
            return None
        return PriorSitemap(row[0], row[1], row[2], decode(row[3]), bool(row[4]))

    def previous_content(self, url: str) -> tuple[int, str | None] | None:
        """(fingerprint, <lastmod>) an earlier run saw for a page, or None."""
        row = self._row(
            "SELECT fp, NULLIF(lastmod, '') FROM content WHERE key = ? AND run < ?",
            url_key(url),
            self.run,
        )
        # (fp is never NULL: LastmodHook puts a page's content only with a fingerprint)
        return None if row is None else (int(row[0]), row[1])

    def previous_index_entries(self) -> dict[tuple[str, str], IndexEntryState]:
        """(index, child) -> its state (<lastmod> interval key, child digest) in the last
        completed run (audit.rules.indexlastmod), or {} on a first run (the table is
        empty)."""
        rows = self._reader.execute(
            "SELECT idx, child, lastmod, digest FROM index_entries WHERE run = "
            "(SELECT MAX(run) FROM index_entries WHERE run < ?)",
            (self.run,),
        ).fetchall()
        return {
            (idx, child): IndexEntryState(lastmod, digest) for idx, child, lastmod, digest in rows
        }

    def budget_row(self, url: str) -> tuple[int, str, str] | None:
        """--budget: (run, time, listed <lastmod>) of the URL's last check, or None."""
        row = self._row("SELECT run, at, lastmod FROM budget WHERE url = ?", url)
        return None if row is None else (int(row[0]), str(row[1]), row[2])  # (put: never NULL)

    def in_ledger(self, url: str) -> bool:
        """Did an earlier completed run list this URL (normalised)?"""
        return self._row("SELECT 1 FROM ledger WHERE key = ?", normalize_url(url)) is not None

    def ledger_rows(self) -> Iterator[tuple[str, str, str, str]]:
        """The ledger before this run: (url as last listed, first_seen, last_seen,
        last_sitemap), the latest last_seen first, then by URL (none on a new state).
        last_sitemap is never empty: Writer._complete merges the results with a sitemap."""
        cursor = self._reader.execute(
            "SELECT url, first_seen, last_seen, last_sitemap FROM ledger "
            "ORDER BY last_seen DESC, url"
        )
        pages = iter(lambda: cursor.fetchmany(1024), [])
        yield from itertools.chain.from_iterable(pages)

    # --- bulk reads for a sitemap carried forward ---------------------------------------

    def _bulk_rows(self, sql: str, *args: Any) -> list[Any]:
        """Rows read on a connection of their own: these reads are called through
        asyncio.to_thread, under a lock (expanders may call at once)."""
        with self._bulk_lock:
            if self._bulk is None:
                self._bulk = connect(self.path)
            return self._bulk.execute(sql, args).fetchall()

    def sitemap_entries(
        self, sitemap: str, after: str = "", limit: int = 10_000
    ) -> list[tuple[str, int, str | None]]:
        """(url, line, lastmod) of the URLs an earlier run found in `sitemap`, by url (a
        listed URL's line is its entry's)."""
        # One row holding the page as JSON: sqlite3 releases and retakes the GIL at every
        # row it steps to, and each retake waits on the busy event loop and then stalls it.
        rows = self._bulk_rows(
            "SELECT json_group_array(json_array(url, line, NULLIF(lastmod, ''))) FROM ("
            "SELECT url, line, lastmod FROM urls "
            "WHERE sitemap = ? AND url > ? ORDER BY url LIMIT ?)",
            sitemap,
            after,
            limit,
        )
        entries = decode(rows[0][0])  # an aggregate: one row, `[]` when nothing matched
        entries.sort()  # in url order already (a no-op pass); the caller pages on the last
        return [(url, line, lastmod) for url, line, lastmod in entries]

    def sitemap_findings(self, sitemap: str) -> list[dict[str, Any]]:
        """The records of an earlier run that go with `sitemap` when it is carried."""
        rows = self._bulk_rows(
            "SELECT record FROM findings WHERE carry_with = ? AND run < ?", sitemap, self.run
        )
        return [decode(r[0]) for r in rows]

    def close_reads(self) -> None:
        """Close the read connections (the run's end)."""
        self._reader.close()
        if self._bulk is not None:
            self._bulk.close()


# --- a state file read for its records ------------------------------------------------


def _open_read_only(p: Path) -> sqlite3.Connection:
    """A state file opened for reading only; StateError for one that is not a state."""
    check_magic(p)
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
        return read_meta(conn, p).get("status", "running")
    finally:
        conn.close()


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The report records a state file holds for its latest run (for `diff`)."""
    p = Path(path)
    conn = _open_read_only(p)
    try:
        meta = read_meta(conn, p)
        run = int(meta.get("run", "1"))
        # a run in progress (or dead) has its URLs in results; a completed one in urls
        table = "urls" if meta.get("status") == "complete" else "results"
        if meta.get("cut"):  # what diff and fix need to know of the run's summary
            # the stored notes of what the run left out: the summary's keys as a JSON
            # object (Writer._complete), or an earlier version's word 'max-urls' (not JSON)
            notes = {"max_urls_reached": True}
            with contextlib.suppress(ValueError):
                notes = json.loads(meta["cut"])
            yield {"type": "summary", **notes}
        for (record,) in itertools.chain(
            conn.execute("SELECT record FROM sitemaps WHERE run = ?", (run,)),
            conn.execute("SELECT record FROM findings WHERE run = ?", (run,)),
        ):
            yield json.loads(record)
        for record, findings in conn.execute(
            f"SELECT record, findings FROM {table} WHERE run = ? ORDER BY url", (run,)
        ):
            yield json.loads(record)
            if findings:
                yield from json.loads(findings)
    except sqlite3.DatabaseError as exc:
        raise refuse(p, f"the state file is corrupt or truncated ({exc})") from exc
    finally:
        conn.close()
