"""The state store's write and read paths that make `--state` cheap: URL rows in one
padded statement per batch, lookups on a snapshot, a carried sitemap's entries in pages,
an older schema refused by name."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

import audit.state.store as state_mod
from audit.state.store import SCHEMA_VERSION, StateError, StateStore, fingerprint, read_records

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


def test_a_state_of_the_previous_schema_is_refused_by_its_version(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    open_store(path).close(complete=True)
    con = sqlite3.connect(path)
    con.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),)
    )
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(StateError, match=f"schema version '{SCHEMA_VERSION - 1}'") as info:
        open_store(path)
    assert "--fresh" in str(info.value) and "\n" not in str(info.value)
    assert path.read_bytes() == before
    with pytest.raises(StateError, match="schema version"):
        list(read_records(path))  # diff refuses it too


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
