"""The run state (`--state PATH`): an embedded SQLite store that makes audits resumable
and incremental. Its parts: the schema and how a file is recognised, created and
refused (audit.state.schema), the lock a run holds on it (audit.state.lock), the writer
thread that commits what a run puts (audit.state.writer), and the reads of earlier
results and of a state file's records (audit.state.read). `StateStore` is the run's
handle on all of them: it reads what `StateReader` reads, and queues its writes.

How a run uses it:

- a new file (or `--fresh`): run 1;
- status `running` (the last run died: kill -9, Ctrl-C, power loss): the same run
  resumes; URLs with a row of this run are not requested again, their stored record
  and findings are replayed into the report; a run that died more than RESUME_WITHIN_S
  ago is not resumed but followed by a new, incremental one;
- status `complete`: a new, incremental run; rows of earlier runs give the ETag and
  Last-Modified for conditional requests and the <lastmod> for `--changed-only`.

One state file, one run: `open` takes the state's lock before anything is read, removed
(--fresh) or written, and `close` drops it after the last write; a second run on the
same state is refused with a StateError naming the holder.

Files a capability keeps for a run beside the state (`side_file`: the link crawl's store
of `crawl --links`, `PATH.links-N`) are under the same lock, kept while the run is
unfinished and removed once it is marked complete.

Imports only the standard library, audit.core.evidence (how a URL's evidence is written
as text) and the state's own parts; knows nothing of HTTP or parsing.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Final

from audit.core.evidence import Evidence, encode_evidence
from audit.state.identity import what_differs
from audit.state.lock import StateLock
from audit.state.read import Prior, PriorSitemap, StateReader, read_records, read_status
from audit.state.schema import (
    APP,
    ORJSON_DUMPS,
    SCHEMA_VERSION,
    Mode,
    StateError,
    begin_run,
    check_magic,
    connect,
    encode,
    fingerprint,
    half_created,
    read_meta,
    refuse,
    remove_database,
    url_key,
)
from audit.state.writer import FLUSH_EVERY, FLUSH_MS, STOP, Writer

__all__ = [
    "FLUSH_MS",
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

# A run that died is resumed only this soon after it started: an older one (last night's,
# killed) is tonight's run's past, not its first half; tonight starts anew from the last
# complete run, requesting again what the dead run had checked.
RESUME_WITHIN_S: Final = 12 * 3600
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


def _carry_with(record: dict[str, Any]) -> str | None:
    """The sitemap a finding travels with when that sitemap is carried, or None."""
    code = record.get("code", "")  # a finding's is a str; a url record has none
    if not (code.startswith(_DOCUMENT_PREFIXES) or code in _DOCUMENT_LASTMOD):
        return None
    return record.get("url") if code in CHILD_CODES else record.get("sitemap")


def _next_run(
    conn: sqlite3.Connection, path: Path, fingerprint: str, identity: dict[str, Any] | None
) -> tuple[Mode, int]:
    """The run an existing state goes on with: its dead run resumed, or the next one
    (incremental). A state of another audit is refused, naming what differs when the
    state says what its audit was (one written before `identity` only has the digest)."""
    meta = read_meta(conn, path)
    if meta.get("fingerprint") != fingerprint:
        why = f" (targets {meta.get('targets', '?')} or options differ)"
        if meta.get("identity") and identity is not None:
            with contextlib.suppress(ValueError):
                why = f": {what_differs(json.loads(meta['identity']), identity)}"
        raise refuse(path, f"the state of a different audit{why}")
    run = int(meta.get("run", "1"))
    if meta.get("status") == "complete":
        return "incremental", run + 1
    started = meta.get("started", "")  # (meta values are TEXT NOT NULL)
    age = 0.0  # unknown (not a time of ours): not too old
    with contextlib.suppress(ValueError):
        age = time.time() - calendar.timegm(time.strptime(started, "%Y-%m-%dT%H:%M:%SZ"))
    if run > 1 and age > RESUME_WITHIN_S:
        # on the last complete run: see RESUME_WITHIN_S
        conn.execute("DELETE FROM results WHERE run = ?", (run,))
        conn.execute("DELETE FROM findings WHERE run = ?", (run,))
        return "incremental", run
    return "resume", run


class StateStore(StateReader):
    """One run's state. Open with `StateStore.open(...)`; `close(complete=...)` at the end."""

    def __init__(
        self,
        path: Path,
        mode: Mode,
        run: int,
        reader: sqlite3.Connection,
        writer: Writer,
    ) -> None:
        super().__init__(path, mode, run, reader)
        self._writer = writer
        self._put = writer.queue.put
        self._closed = False
        self._lock = StateLock(None)  # set by open()
        self.replayed = 0  # URLs of this run found done (resume)
        self.carried = 0  # URLs carried forward from an earlier run (304, --changed-only)
        self.skipped = 0  # of those, not requested at all (--changed-only)
        self.sitemaps_carried = 0  # unchanged child sitemaps not read again
        # a completed run adds what it listed to the ledger; not one cut by --max-urls
        self.ledger_update = True
        # the summary's notes of what the run left out (max_urls_reached, excluded_urls,
        # excluded_sitemaps), kept for diff and fix: a state has no summary of its own
        self.cut: dict[str, Any] = {}
        self._side: list[Path] = []  # files of this run beside the state (side_file)

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
        lock = StateLock.take(p)  # before anything is read, removed (--fresh) or written
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
            remove_database(p)
        exists = p.exists()
        if exists and p.stat().st_size:
            check_magic(p)
        try:
            conn = connect(p)
        except sqlite3.Error as exc:
            raise StateError(f"{p}: cannot open the state file: {exc}") from exc
        if exists and half_created(conn):
            # an empty file, or a creation cut short: nothing in it to keep
            conn.close()
            remove_database(p)
            conn = connect(p)
            exists = False
        try:
            mode, run = _next_run(conn, p, fingerprint, identity) if exists else ("new", 1)
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
            rows = begin_run(conn, mode, run, meta_rows)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if not exists:  # ours, just made, holding nothing: not left half-created
                remove_database(p)
                raise StateError(f"{p}: cannot create the state file ({exc})") from exc
            raise StateError(f"{p}: cannot write to the state file ({exc})") from exc
        except BaseException:
            conn.close()
            raise
        writer = Writer(p, flush_every, flush_ms, rows)
        writer.start()
        return cls(p, mode, run, conn, writer)

    def side_file(self, name: str) -> Path:
        """`PATH.name`: a file a capability keeps for this run beside the state (the link
        crawl's store of `crawl --links`), under the state's lock; removed when the run is
        marked complete, kept for a resumed run otherwise."""
        path = Path(f"{self.path}.{name}")
        self._side.append(path)
        return path

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
        # '' for None: see audit.state.schema.URL_TABLE. Once per checked URL: orjson called directly (no
        # wrapper frame), one tuple, one put.
        dumps = ORJSON_DUMPS
        if dumps is None:
            text, found = encode(record), encode(findings) if findings else ""
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

    def put_index_entries(self, rows: list[tuple[str, str, str | None, str | None]]) -> None:
        """This run's index entries: (index, child, <lastmod> interval key, digest)."""
        for idx, child, lastmod, digest in rows:
            self._put(("index_entry", (self.run, idx, child, lastmod, digest)))

    def put_budget(self, url: str, at: str, lastmod: str | None) -> None:
        """--budget: the URL was checked in this run at `at`, listed with `lastmod`."""
        self._put(("budget", (url, self.run, at, lastmod or "")))

    def put_content(self, url: str, fp: int, lastmod: str | None) -> None:
        """A page's fingerprint and the <lastmod> it was listed with in this run."""
        self._put(("content", (url_key(url), self.run, fp, lastmod or "")))

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
        row = (url, self.run, index_lastmod, etag, last_modified, encode(record), int(carry))
        self._put(("sitemap", row))

    def put_finding(self, record: dict[str, Any]) -> None:
        """A record of the run that is not a URL check (findings, URLs not requested)."""
        self._put(("finding", (self.run, _carry_with(record), encode(record))))

    def flush(self) -> None:
        """Wait until everything queued so far is committed (tests, shutdown)."""
        done = threading.Event()
        self._writer.control(("sync", (done,)))
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
            self._writer.control(STOP)
            self._writer.join()
            self.close_reads()
            if complete and self._writer.failure is None:
                for side in self._side:  # the next run starts anew
                    remove_database(side, quiet=True)
        finally:
            self._lock.release()  # after the last write
        if self._writer.failure is not None:
            raise StateError(f"{self.path}: {self._writer.failure}")
