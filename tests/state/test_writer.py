"""The state's writer thread (audit.state.writer): URL rows in one padded statement per
batch, mixed batches in order, every kind of row stored, the ledger merged at
completion, control operations answered at once, a failed write that stops queueing."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from audit.rules.urls import normalize_url
from audit.state.store import StateError, StateStore, fingerprint, read_records

FP = fingerprint("crawl", ["https://www.example.com/"], {})


def open_store(path: Path, **kw: Any) -> StateStore:
    return StateStore.open(path, fingerprint=FP, targets=["t"], **kw)


def con_free_of_padding(path: Path) -> bool:
    con = sqlite3.connect(path)
    try:
        return bool(con.execute("SELECT COUNT(*) FROM results WHERE run < 1").fetchone()[0] == 0)
    finally:
        con.close()


def rec(url: str, sitemap: str = "s", line: int = 1) -> dict[str, Any]:
    return {"type": "url", "url": url, "sitemap": sitemap, "line": line, "status": 200}


@pytest.mark.parametrize("n", [1, 15, 16, 17, 300, 2048, 2049, 5000])
def test_every_row_of_a_batch_of_any_size_is_stored_once(tmp_path: Path, n: int) -> None:
    """Batches are padded to a power of two with NULL rows that must never be stored,
    and batches larger than the largest statement are split."""
    path = tmp_path / "s.sqlite"
    st = open_store(path, flush_ms=60_000)  # nothing commits until flush: one big batch
    for i in range(n):
        findings = [{"type": "finding", "code": "url-not-found", "url": f"u{i}"}] if i % 3 else []
        st.put_url(
            f"u{i}", "s", f"2024-01-{i % 28 + 1:02d}", f'"e{i}"', None, rec(f"u{i}"), findings
        )
    st.flush()
    con = sqlite3.connect(path)
    rows = con.execute("SELECT url, lastmod, etag, findings = '' FROM results").fetchall()
    con.close()
    assert len(rows) == n
    assert sorted(r[0] for r in rows) == sorted(f"u{i}" for i in range(n))
    by_url = {r[0]: r for r in rows}
    assert by_url["u0"][1:] == ("2024-01-01", '"e0"', 1)  # no findings: ''
    assert con_free_of_padding(path)
    if n > 1:
        assert by_url["u1"][3] == 0
    st.close(complete=True)
    got = [r for r in read_records(path)]
    assert sum(1 for r in got if r["type"] == "url") == n
    assert sum(1 for r in got if r["type"] == "finding") == sum(1 for i in range(n) if i % 3)


def test_a_mixed_batch_keeps_its_order_and_all_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path, flush_ms=60_000)
    st.put_sitemap("s", {"type": "sitemap", "url": "s"})
    for i in range(40):
        st.put_url(f"u{i}", "s", None, None, None, rec(f"u{i}"), [])
        if i % 10 == 0:
            st.put_finding({"type": "finding", "code": "lastmod-missing", "sitemap": "s"})
    st.close(complete=True)
    got = list(read_records(path))
    assert [r["type"] for r in got].count("url") == 40
    assert [r["type"] for r in got].count("finding") == 4
    assert [r["type"] for r in got].count("sitemap") == 1


def test_after_a_failed_write_the_run_goes_on_without_queueing(tmp_path: Path) -> None:
    """A write that fails (here: the table is gone, as after a full disk or a foreign
    change) must not leave the run piling rows up in memory for a writer that no longer
    writes: flush still returns, the queue stays empty, close names the failure once."""
    path = tmp_path / "s.sqlite"
    st = open_store(path, flush_ms=60_000)
    st.put_url("u0", "s", None, None, None, rec("u0"), [])
    st.flush()
    con = sqlite3.connect(path)
    con.execute("DROP TABLE results")
    con.commit()
    con.close()
    for wave in range(3):
        for i in range(2000):
            st.put_url(f"w{wave}-{i}", "s", None, None, None, rec(f"w{wave}-{i}"), [])
        st.flush()  # the first fails in the writer; every one returns
        assert st._writer.queue.qsize() == 0
    assert st._writer.is_alive()  # still answering, until stop
    with pytest.raises(StateError, match="could not be written"):
        st.close(complete=True)
    assert not st._writer.is_alive()


def test_index_entries_and_budget_rows_are_stored_for_the_next_run(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_index_entries([("i.xml", "a.xml", "2024-01-01", "d1"), ("i.xml", "b.xml", None, None)])
    st.put_budget("https://x/a", "2024-03-01T00:00:00Z", "2024-01-01")
    st.put_budget("https://x/b", "2024-03-02T00:00:00Z", None)
    st.close(complete=True)
    st = open_store(path)
    assert st.previous_index_entries() == {
        ("i.xml", "a.xml"): ("2024-01-01", "d1"),
        ("i.xml", "b.xml"): (None, None),
    }
    assert st.budget_row("https://x/a") == (1, "2024-03-01T00:00:00Z", "2024-01-01")
    assert st.budget_row("https://x/b") == (1, "2024-03-02T00:00:00Z", "")
    assert st.budget_row("https://x/c") is None
    st.close(complete=True)


def test_completion_merges_the_listed_urls_into_the_ledger(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_url("HTTPS://X.example:443/a", "s.xml", None, None, None, rec("a"), [])
    st.put_url("https://x.example/robots-only", None, None, None, None, rec("r"), [])
    st.close(complete=True)
    con = sqlite3.connect(path)
    rows = con.execute(
        "SELECT key, url, first_seen, last_seen, last_sitemap FROM ledger"
    ).fetchall()
    started = con.execute("SELECT value FROM meta WHERE key = 'started'").fetchone()[0]
    con.close()
    # only a URL a sitemap listed, keyed by its normalised form, seen at the run's start
    assert rows == [
        (
            normalize_url("HTTPS://X.example:443/a"),
            "HTTPS://X.example:443/a",
            started,
            started,
            "s.xml",
        )
    ]


def test_flush_cuts_a_gathering_batch_short(tmp_path: Path) -> None:
    """A control operation ends the wait for a batch to gather: flush returns at once
    even when the writer would wait a minute for more rows."""
    path = tmp_path / "s.sqlite"
    st = open_store(path, flush_ms=60_000)
    st.put_url("u0", "s", None, None, None, rec("u0"), [])
    began = time.monotonic()
    st.flush()
    assert time.monotonic() - began < 10
    con = sqlite3.connect(path)
    assert con.execute("SELECT url FROM results").fetchall() == [("u0",)]
    con.close()
    st.close(complete=False)
    st.close(complete=False)  # again: nothing
    again = open_store(path)  # the lock was released
    assert (again.mode, again.run) == ("resume", 1)
    again.close(complete=True)
