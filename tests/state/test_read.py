"""The reads of a state (audit.state.read): lookups on a snapshot that stay right while
the run writes, a resumed run's own rows before the last completed run's, a carried
sitemap's entries in pages, and a state file's records and status for `diff`."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import audit.state.read as state_mod
from audit.state.store import StateError, StateStore, fingerprint, read_records, read_status

FP = fingerprint("crawl", ["https://www.example.com/"], {})


def open_store(path: Path, **kw: Any) -> StateStore:
    return StateStore.open(path, fingerprint=FP, targets=["t"], **kw)


def rec(url: str, sitemap: str = "s", line: int = 1) -> dict[str, Any]:
    return {"type": "url", "url": url, "sitemap": sitemap, "line": line, "status": 200}


def test_lookups_renew_their_snapshot_and_stay_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    for i in range(50):
        st.put_url(f"u{i}", "s", f"lm{i}", f'"e{i}"', None, rec(f"u{i}"), [])
    st.close(complete=True)
    monkeypatch.setattr(state_mod, "SNAPSHOT_LOOKUPS", 7)
    st = open_store(path)
    assert st.mode == "incremental"
    for rnd in range(3):
        for i in range(50):
            p = st.prior(f"u{i}")
            assert p is not None and (p.lastmod, p.etag, p.findings) == (f"lm{i}", f'"e{i}"', [])
            if rnd == 0:  # this run's writes go on meanwhile, committed between renewals
                st.put_url(f"u{i}", "s", f"lm{i}", f'"e{i}"', None, rec(f"u{i}"), [])
        assert st.prior("missing") is None
        st.flush()
    st.close(complete=True)  # completion is not blocked by the reader's snapshot
    assert sum(1 for r in read_records(path) if r["type"] == "url") == 50


def test_a_carried_sitemaps_entries_come_in_url_order_across_pages(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    for i in reversed(range(25)):
        lastmod = None if i % 4 else f"2024-02-{i + 1:02d}"
        st.put_url(f"https://x/{i:02d}", "a.xml", lastmod, None, None, rec("x"), [], line=i + 2)
    for i in range(3):
        st.put_url(f"https://y/{i}", "b.xml", None, None, None, rec("y"), [], line=i + 2)
    st.close(complete=True)
    st = open_store(path)
    pages, after = [], ""
    while page := st.sitemap_entries("a.xml", after, limit=10):
        pages.append(page)
        after = page[-1][0]
    assert [len(p) for p in pages] == [10, 10, 5]
    flat = [e for p in pages for e in p]
    assert flat == [
        (f"https://x/{i:02d}", i + 2, None if i % 4 else f"2024-02-{i + 1:02d}") for i in range(25)
    ]
    assert st.sitemap_entries("nothing.xml") == []
    st.close(complete=True)


def test_a_resumed_run_reads_its_own_rows_before_the_last_completed_runs(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_url("a", "s", "old", '"e1"', None, rec("a"), [])
    st.put_url("b", "s", "old", None, None, rec("b"), [])
    st.close(complete=True)
    st = open_store(path)
    st.put_url("a", "s", "new", '"e2"', None, rec("a"), [{"type": "finding", "code": "url-slow"}])
    st.close(complete=False)  # the run dies
    st = open_store(path)
    assert (st.mode, st.run) == ("resume", 2)
    a, b = st.prior("a"), st.prior("b")
    assert a is not None and (a.run, a.lastmod, a.etag) == (2, "new", '"e2"')
    assert a.findings == [{"type": "finding", "code": "url-slow"}]
    assert b is not None and (b.run, b.lastmod, b.etag) == (1, "old", None)
    assert st.prior("c") is None
    st.close(complete=True)


def test_a_new_run_reads_nothing(tmp_path: Path) -> None:
    st = open_store(tmp_path / "s.sqlite")
    assert st.mode == "new"
    assert st.prior("a") is None
    assert st.previous_sitemap("s") is None
    assert st.previous_content("a") is None
    assert st.previous_index_entries() == {}
    assert st.budget_row("a") is None
    assert st.in_ledger("a") is False
    assert list(st.ledger_rows()) == []
    st.close(complete=True)


def test_records_of_a_dead_run_and_of_a_completed_one(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_sitemap("s", {"type": "sitemap", "url": "s"})
    st.put_url("b", "s", None, None, None, rec("b"), [{"type": "finding", "code": "url-slow"}])
    st.put_url("a", "s", None, None, None, rec("a"), [])
    st.close(complete=False)
    assert read_status(path) == "running"
    types = [(r["type"], r.get("url")) for r in read_records(path)]
    assert types == [("sitemap", "s"), ("url", "a"), ("url", "b"), ("finding", None)]
    st = open_store(path)
    st.cut = {"max_urls_reached": True}
    st.close(complete=True)
    assert read_status(path) == "complete"
    records = list(read_records(path))
    assert records[0] == {"type": "summary", "max_urls_reached": True}
    assert [r["type"] for r in records[1:]] == ["sitemap", "url", "url", "finding"]


def test_a_file_that_is_no_state_is_refused_by_the_readers(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    for read in (read_status, lambda p: list(read_records(p))):
        with pytest.raises(StateError, match="not an SQLite database") as info:
            read(path)
        assert "\n" not in str(info.value)
    con = sqlite3.connect(tmp_path / "other.sqlite")
    con.execute("CREATE TABLE t (x)")
    con.close()
    with pytest.raises(StateError, match="no meta table"):
        read_status(tmp_path / "other.sqlite")
