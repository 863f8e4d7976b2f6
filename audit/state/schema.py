"""The state file's schema (`--state PATH`): its tables, how a file is recognised as a
state of this version, created, migrated and refused, and how values are stored.

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
    ledger    the published-URL ledger (audit.features.ledger): one row per normalised URL a
              completed run listed (not one cut by --max-urls), with first_seen and
              last_seen (run start times) and the sitemap that last listed it; merged
              from the run's results when it is marked complete. Added to schema 4 like
              `content`
    index_entries  each index entry of the last completed run (and of this one): the
              interval of its <lastmod> and its child's entries digest, for
              index-lastmod-frozen / -churn (audit.rules.indexlastmod). Added like `content`
    budget    --budget: each URL's last check (run, time, listed <lastmod>), for the
              rolling audit's order (audit.features.budget). Added like `content`
    indexnow_ledger  --indexnow: per URL, what its last accepted submission sent (`live`
              with the main-text fingerprint of that time, or `gone`) and when
              (audit.state.indexnow). Added like `content`
    content   lastmod over time (audit.features.lastmod): per page, keyed by a 64-bit hash
              of its URL (the rowid: no second index), the run that saw it, a 64-bit
              fingerprint of its main text and the <lastmod> listed then (about 50 bytes
              a page: a million pages add some 50 MB). Added to schema 4 without a new
              version: a state made before it gets the table when it is opened
              (MIGRATIONS), and older versions ignore it

A new state is created in one transaction (schema and meta together). A file left
half-created by an older version or a full disk (empty, or holding only tables of this
schema and no meta rows) holds nothing: it is recognised and created again.

Schema 4 (64 KiB pages, text values) replaced 3; a state of schema 3 is refused by its
version (start it over with --fresh).

A file that is not SQLite, is truncated or corrupt, or belongs to another program or
schema is refused with a one-line StateError and never written to; only `fresh=True`
replaces it.

Imports only the standard library and audit.core.errors.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Literal

from audit.core.errors import AuditError
from audit.rules.fingerprints import url_key

__all__ = [
    "APP",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "STATEMENTS",
    "Mode",
    "StateError",
    "begin_run",
    "check_magic",
    "connect",
    "decode",
    "encode",
    "fingerprint",
    "half_created",
    "is_state_file",
    "read_meta",
    "refuse",
    "remove_database",
    "url_key",
]

APP: Final = "sitemap-audit"
SCHEMA_VERSION: Final = 4
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
# Large pages: URL rows are appended, never updated, so a page is written about once;
# 64 KiB pages make a sixteenth of the page writes, WAL frames and checkpoint copies of
# 4 KiB ones. Reads go through mmap (no copy of a whole page per lookup).
PAGE_SIZE: Final = 65536
MMAP_SIZE: Final = 1 << 30

# The URL rows of a run (results) and of the last completed one (urls). Values are
# text, never NULL or bytes ('' is "none"): sqlite3 binds str and int directly, but looks
# up an adapter for None and bytes, a failed attribute lookup each that costs more than
# the row's insert. CHECK (run > 0) lets INSERT OR IGNORE skip padding rows (see
# audit.state.writer).
URL_TABLE: Final = """(
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
URL_COLUMNS: Final = 10
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
# --indexnow (contracts/fix.md): each URL's last accepted submission
_INDEXNOW_TABLE = (
    "CREATE TABLE IF NOT EXISTS indexnow_ledger "
    "(url TEXT PRIMARY KEY, state TEXT NOT NULL, fp INTEGER, at TEXT NOT NULL)"
)
_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE urls {URL_TABLE};
CREATE INDEX urls_url ON urls (url);
CREATE INDEX urls_sitemap ON urls (sitemap, url);
CREATE TABLE results {URL_TABLE};
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
{_INDEXNOW_TABLE};
"""
# Tables added to a schema after states were made with it: created when such a state
# is opened for a run (additive only: an older version reading the file ignores them).
MIGRATIONS: Final = (
    "CREATE TABLE IF NOT EXISTS content "
    "(key INTEGER PRIMARY KEY, run INTEGER NOT NULL, fp INTEGER, lastmod TEXT)",
    _LEDGER_TABLE,
    _INDEX_ENTRIES_TABLE,
    _BUDGET_TABLE,
    _INDEXNOW_TABLE,
)
# Columns added to a schema's tables the same way: (table, column, its declaration), added
# when a state's table lacks them (a new state's has them). An earlier row has none: its
# URL is then asked in full, as on a first run.
_COLUMN_MIGRATIONS: Final = (
    ("urls", "evidence", "evidence TEXT"),
    ("results", "evidence", "evidence TEXT"),
)
STATEMENTS: Final = tuple(s.strip() for s in _SCHEMA.split(";") if s.strip())
_WAL: Final = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL")
_STARTED: Final = "INSERT OR REPLACE INTO meta VALUES ('started', :started)"
# What each mode runs to begin its run, in order (with :run, :started; the statements of
# the state from BEGIN on are one transaction, so that a failure leaves no half-made
# state): a new state is created (its page size before the first write), an older one
# migrated; a new or incremental run writes when it started, a resumed one keeps the
# start of the run it finishes, looks up the results of its dead predecessor by URL,
# and drops its documents' findings (documents are read again on resume and their
# findings recorded again).
_BEGIN: Final[dict[str, tuple[str, ...]]] = {
    "new": (
        f"PRAGMA page_size = {PAGE_SIZE}",
        *_WAL,
        "BEGIN",
        *STATEMENTS,
        _STARTED,
    ),
    "incremental": (
        *_WAL,
        "BEGIN",
        *MIGRATIONS,
        _STARTED,
    ),
    "resume": (
        *_WAL,
        "BEGIN",
        *MIGRATIONS,
        "CREATE INDEX IF NOT EXISTS results_url ON results (url)",
        "DELETE FROM findings WHERE run = :run",
    ),
}

Mode = Literal["new", "resume", "incremental"]


class StateError(AuditError):
    """A state file that cannot be used; the message is one line naming the file."""


def fingerprint(mode: str, targets: list[str], options: dict[str, Any]) -> str:
    """A stable digest of what makes two runs comparable: the targets and the options
    that change results (not rate, concurrency, output or format)."""
    blob = json.dumps(
        {"mode": mode, "targets": targets, "options": options}, sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def refuse(path: Path, why: str) -> StateError:
    """The refusal of a state file that is left as it is."""
    return StateError(
        f"{path}: {why}; it was not modified (use --fresh to start over, or another --state path)"
    )


def check_magic(path: Path) -> None:
    """StateError unless the file starts as an SQLite database does."""
    if not is_state_file(path, StateError, " the state file"):
        raise refuse(path, "not a sitemap-audit state file (not an SQLite database)")


def is_state_file(path: str | Path, error: Callable[[str], Exception], what: str = "") -> bool:
    """Does the file start as a state file (an SQLite database) does? `error` with one line
    (`PATH: cannot read{what}: why`) when it cannot be read (diff's DiffError, fix's
    FixRefused, check_magic's StateError)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError as exc:
        raise error(f"{path}: cannot read{what}: {exc.strerror or exc}") from exc


def read_meta(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    """The meta rows of a state of this schema; StateError (refused) for anything else."""
    try:
        (check,) = conn.execute("PRAGMA quick_check").fetchone()  # "ok", or the first problem
        if check != "ok":
            raise refuse(path, f"the state file is corrupt ({check})")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        msg = str(exc)
        if "no such table" in msg:
            raise refuse(path, "not a sitemap-audit state file (no meta table)") from exc
        raise refuse(path, f"the state file is corrupt or truncated ({msg})") from exc
    if meta.get("app") != APP:
        raise refuse(path, "not a sitemap-audit state file (foreign meta table)")
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        raise refuse(
            path,
            f"state schema version {meta.get('schema_version')!r}, this version reads "
            f"{SCHEMA_VERSION}",
        )
    return meta


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), reading through mmap."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute(f"PRAGMA mmap_size = {MMAP_SIZE}")
    return conn


def remove_database(path: Path, *, quiet: bool = False) -> None:
    """Remove an SQLite file and its WAL, shared-memory and journal files. A failure is
    a StateError, or ignored when `quiet` (a leftover is made anew by the next run)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        try:
            p.unlink(missing_ok=True)
        except OSError as exc:
            if not quiet:
                raise StateError(f"{p}: cannot remove the old state: {exc.strerror}") from exc


def _normal(sql: str) -> str:
    return " ".join(sql.split())


_OURS: Final = frozenset(_normal(s) for s in STATEMENTS)


def half_created(conn: sqlite3.Connection) -> bool:
    """True for a database that a creation cut short left behind (a full disk, a kill):
    no table but this schema's (each exactly as this module creates it) and no meta row,
    so no run ever wrote to it and nothing is lost by creating it again. A file of
    another program, or a meta table not made by this module, is not."""
    try:
        rows = conn.execute("SELECT name, sql FROM sqlite_master").fetchall()
        ours = (
            # an index without SQL: the automatic index of a PRIMARY KEY
            str(name).startswith("sqlite_autoindex_") if sql is None else _normal(str(sql)) in _OURS
            for name, sql in rows
        )
        if not all(ours):
            return False
        if "meta" in dict(rows):  # (name -> sql)
            return bool(conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0] == 0)
    except sqlite3.DatabaseError:
        return False
    return True


def begin_run(conn: sqlite3.Connection, mode: Mode, run: int, meta_rows: dict[str, str]) -> int:
    """Mark the run started, as _BEGIN says for its mode, with `meta_rows` (their
    `started` as the mode says); return the URL rows already in `results` (a resumed
    run's)."""
    params = {"run": run, "started": meta_rows.pop("started")}
    for statement in _BEGIN[mode]:
        conn.execute(statement, params)
    for table, column, declaration in _COLUMN_MIGRATIONS:
        sql = "SELECT 1 FROM pragma_table_info(?) WHERE name = ?"
        if conn.execute(sql, (table, column)).fetchone() is None:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {declaration}")
    conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta_rows.items())
    (rows,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
    conn.execute("COMMIT")
    return int(rows)


# --- values as text ------------------------------------------------------------------

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is optional (the `fast` extra)
    _orjson = None  # type: ignore[assignment]

#: orjson's `dumps` when installed (~10x faster than the standard library), else None
ORJSON_DUMPS: Any = None if _orjson is None else _orjson.dumps
#: JSON text back to values
decode: Any = json.loads if _orjson is None else _orjson.loads


def _orjson_encode(obj: Any) -> str:
    text: str = ORJSON_DUMPS(obj, default=str).decode()
    return text


#: a value as JSON text: orjson when installed, else the standard library; both are read
#: back by json.loads. Text, not orjson's bytes: sqlite3 binds str directly.
encode: Any = (
    json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
    if _orjson is None
    else _orjson_encode
)
