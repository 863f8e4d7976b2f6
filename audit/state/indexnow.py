"""`crawl --indexnow KEY` (contracts/fix.md): after a complete run, tell IndexNow what
verifiably changed since its last accepted submission, and keep a ledger of what was
accepted in the --state file.

- `IndexNowCollector` is a record sink: it notes, in the order of the url records, every
  listed URL that is *live* (200, no redirect, indexable) or *gone* (404/410, no redirect).
- `Ledger` is the state's `indexnow_ledger` table (audit.state.schema): per URL, what its last successful
  submission sent, `live` with the main-text fingerprint of that time, or `gone`. The
  fingerprint of this run is the one the lastmod hook kept in the store's `content` table
  (a 304 or a carried record keeps the stored one).
- `submit()` decides (`new`, `changed`, `gone`; a live URL whose fingerprint is the
  ledger's is `skipped`), checks `ORIGIN/KEY.txt` once per origin with something to send,
  POSTs at most 10,000 URLs at a time, records the accepted ones and reports refusals.

A rejected POST, a dry run and an invalid key leave the ledger as it was: the comparison
is with the last accepted submission, so a refused URL is sent again next run.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from audit.core.config import CrawlConfig
from audit.core.records import Finding, finding
from audit.http.post import get_text, post_json
from audit.rules.urls import normalize_url
from audit.state.store import url_key

__all__ = [
    "CHUNK",
    "DEFAULT_ENDPOINT",
    "KEY_PATTERN",
    "IndexNowCollector",
    "Ledger",
    "check_key",
    "submit",
]

DEFAULT_ENDPOINT: Final = "https://api.indexnow.org/indexnow"
KEY_PATTERN: Final = re.compile(r"[A-Za-z0-9-]{8,128}")
CHUNK: Final = 10_000  # URLs per POST at most (IndexNow's limit)
ACCEPTED: Final = frozenset({200, 202})
_KEY_BODY_BYTES = 4096  # a key file is one line; more is not a key file

Reason = Literal["new", "changed", "gone"]


def check_key(key: str) -> str | None:
    """Why KEY is not a usable IndexNow key, or None."""
    if KEY_PATTERN.fullmatch(key) is None:
        return f"--indexnow {key!r}: a key is 8 to 128 characters of a-z, A-Z, 0-9 and -"
    return None


class IndexNowCollector:
    """A record sink: the listed URLs that are live or gone, in url-record order."""

    def __init__(self) -> None:
        self.urls: dict[str, Literal["live", "gone"]] = {}

    def __call__(self, record: dict[str, Any]) -> None:
        if record.get("type") != "url" or record.get("sitemap") is None:
            return
        url: str = record["url"]  # a url record's is always a str (UrlResult.url)
        if url in self.urls or record.get("redirects"):
            return
        status = record.get("status")
        if status == 200 and record.get("indexable") is True:
            self.urls[url] = "live"
        elif status in (404, 410):
            self.urls[url] = "gone"


class Ledger:
    """The ledger table and the fingerprints of a state file, on a connection of its own.
    Both tables are the state's (audit.state.schema: a run with --state made or migrated
    them before anything is submitted)."""

    def __init__(self, path: str | Path) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None, timeout=30)

    def entry(self, url: str) -> tuple[str | None, int | None]:
        """(`live` | `gone`, fingerprint) of the URL's last accepted submission, or (None,
        None) when it has none."""
        row = self.conn.execute(
            "SELECT state, fp FROM indexnow_ledger WHERE url = ?", (url,)
        ).fetchone()
        return (None, None) if row is None else (str(row[0]), row[1])  # fp: INTEGER or NULL

    def fingerprint(self, url: str) -> int | None:
        """The page's main-text fingerprint as the state holds it (this run's, or the one a
        304 or a carried record kept), or None."""
        row = self.conn.execute("SELECT fp FROM content WHERE key = ?", (url_key(url),)).fetchone()
        return None if row is None else row[0]  # fp: an INTEGER or NULL

    def accept(self, sent: list[tuple[str, str, int | None]]) -> None:
        """Record an accepted POST's URLs: (url, live | gone, fingerprint)."""
        at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        self.conn.execute("BEGIN IMMEDIATE")
        with self.conn:  # committed, or rolled back on any exception
            self.conn.executemany(
                "INSERT OR REPLACE INTO indexnow_ledger VALUES (?, ?, ?, ?)",
                [(url, state, fp, at) for url, state, fp in sent],
            )

    def close(self) -> None:
        self.conn.close()


@dataclass(slots=True)
class _Send:
    url: str
    reason: Reason
    state: Literal["live", "gone"]
    fp: int | None


@dataclass(slots=True)
class _Origin:
    root: str  # scheme://netloc, as normalize_url writes it
    host: str  # lower case, without the port
    sends: list[_Send] = field(default_factory=list)


def _decide(collector: IndexNowCollector, ledger: Ledger) -> tuple[dict[str, _Origin], int]:
    """The URLs to send, per origin in order of first appearance, and the skipped count."""
    origins: dict[str, _Origin] = {}
    skipped = 0
    for url, kind in collector.urls.items():
        state, sent = ledger.entry(url)
        if kind == "live":
            fp = ledger.fingerprint(url)
            if fp is None:
                continue  # no main text: nothing verified about its content
            if (state, sent) == ("live", fp):
                skipped += 1
                continue
            send = _Send(url, "new" if state is None else "changed", "live", fp)
        elif state == "live":
            send = _Send(url, "gone", "gone", None)
        else:
            continue  # gone, and not live when last submitted: nothing to say
        parts = urlsplit(normalize_url(url))
        root = f"{parts.scheme}://{parts.netloc}"
        origins.setdefault(root, _Origin(root, (parts.hostname or "").lower())).sends.append(send)
    return origins, skipped


async def _key_valid(group: _Origin, key: str, config: CrawlConfig) -> Finding | None:
    """The preflight: `ORIGIN/KEY.txt` answers 200 with exactly KEY (no redirects
    followed, robots.txt not asked); None when it does, else the finding."""
    key_url = f"{group.root}/{key}.txt"
    status, body, error = await get_text(
        key_url,
        user_agent=config.user_agent,
        timeout=config.timeout,
        limit=_KEY_BODY_BYTES,
    )
    shown = (body or "").strip()
    if status == 200 and shown == key:  # (a key is never empty: no body is no key)
        return None
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if status == 200:
        answered = f"HTTP 200 with {shown!r}" if shown else "HTTP 200 with an empty body"
    else:
        answered = _answered(status, error)
    message = (
        f"the IndexNow key file {key_url} answered {answered}, not "
        f"200 with the key: nothing of {group.root} was submitted; serve the key as the "
        "file's only content at that URL"
    )
    return finding("indexnow-key-invalid", message, url=key_url)


def _answered(status: int | None, error: str | None) -> str:
    """What a server answered, for a message: `HTTP 403`, or `no answer` and the network
    error when there was one."""
    if status is not None:
        return f"HTTP {status}"
    return f"no answer ({error})" if error else "no answer"


def _record(send: _Send, outcome: str, status: int | None) -> dict[str, Any]:
    return {
        "type": "indexnow",
        "url": send.url,
        "reason": send.reason,
        "outcome": outcome,
        "status": status,
    }


async def submit(
    collector: IndexNowCollector,
    state_path: str | Path,
    *,
    key: str,
    endpoint: str,
    dry_run: bool,
    config: CrawlConfig,
    emit: Callable[[dict[str, Any]], None],
    report: Callable[[Finding], None],
) -> dict[str, Any]:
    """Submit the run's verified changes; emit `indexnow` records and report findings as
    it goes. Returns the summary's `indexnow` object."""
    counts = {"submitted": 0, "skipped": 0, "rejected": 0, "posts": 0}
    ledger = Ledger(state_path)
    try:
        origins, counts["skipped"] = _decide(collector, ledger)
        for group in origins.values():
            problem = await _key_valid(group, key, config)
            if problem is not None:
                report(problem)
                continue
            if dry_run:
                for send in group.sends:
                    emit(_record(send, "dry-run", None))
                continue
            for i in range(0, len(group.sends), CHUNK):
                chunk = group.sends[i : i + CHUNK]
                await _post_chunk(group, chunk, key, endpoint, config, ledger, counts, emit, report)
    finally:
        ledger.close()
    return {"endpoint": endpoint, "dry_run": dry_run, **counts}


async def _post_chunk(
    group: _Origin,
    chunk: list[_Send],
    key: str,
    endpoint: str,
    config: CrawlConfig,
    ledger: Ledger,
    counts: dict[str, int],
    emit: Callable[[dict[str, Any]], None],
    report: Callable[[Finding], None],
) -> None:
    body = json.dumps(
        {
            "host": group.host,
            "key": key,
            "keyLocation": f"{group.root}/{key}.txt",
            "urlList": [s.url for s in chunk],
        }
    ).encode("utf-8")
    result = await post_json(
        endpoint,
        body,
        user_agent=config.user_agent,
        timeout=config.timeout,
        retries=config.retries,
        backoff_base=config.backoff_base,
        backoff_cap=config.backoff_cap,
        max_retry_after=config.retry_after_cap,
    )
    counts["posts"] += result.attempts
    if result.status in ACCEPTED:
        outcome = "submitted"
        ledger.accept([(s.url, s.state, s.fp) for s in chunk])
    else:
        outcome = "rejected"
        answer = _answered(result.status, result.error)
        why = result.gave_up or (
            f"after {result.attempts} attempts" if result.attempts > 1 else "not retried"
        )
        message = (
            f"the IndexNow endpoint answered {answer} to a POST of {len(chunk):,} URLs "
            f"of {group.root} ({why}): they stay unsubmitted and are sent again next run"
        )
        report(finding("indexnow-rejected", message, url=endpoint))
    counts[outcome] += len(chunk)
    for send in chunk:
        emit(_record(send, outcome, result.status))
