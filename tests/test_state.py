"""The run state (`--state`): the store itself, refusal of corrupt and foreign files,
resume after SIGKILL, conditional requests, --changed-only."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from audit.diff import diff_reports
from audit.state import StateError, StateStore, fingerprint, read_records

FP = fingerprint("crawl", ["https://www.example.com/"], {"page_checks": False})


def rec(url: str, status: int = 200) -> dict[str, Any]:
    return {"type": "url", "url": url, "sitemap": "s", "line": 1, "status": status}


def nf(url: str) -> dict[str, Any]:
    return {"type": "finding", "code": "url-not-found", "severity": "error", "url": url}


def open_store(path: Path, **kw: Any) -> StateStore:
    return StateStore.open(path, fingerprint=kw.pop("fp", FP), targets=["t"], **kw)


# --- the store ---------------------------------------------------------------------


def test_new_resume_incremental_cycle(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    assert (st.mode, st.run) == ("new", 1)
    st.put_url("u1", "s", "2024-01-01", '"e1"', "Mon, 01 Jan 2024 00:00:00 GMT", rec("u1"), [])
    st.put_url("u2", "s", None, None, None, rec("u2", 404), [nf("u2")])
    st.put_finding({"type": "finding", "code": "lastmod-missing", "sitemap": "s"})
    st.put_sitemap("s", {"type": "sitemap", "url": "s"}, etag='"se"')
    st.close(complete=False)  # died mid-run

    st = open_store(path)
    assert (st.mode, st.run) == ("resume", 1)
    p = st.prior("u2")
    assert p is not None and p.run == 1 and p.record["status"] == 404 and p.findings == [nf("u2")]
    p1 = st.prior("u1")
    assert p1 is not None and (p1.etag, p1.lastmod) == ('"e1"', "2024-01-01")
    assert st.prior("nope") is None
    st.close(complete=True)

    st = open_store(path)
    assert (st.mode, st.run) == ("incremental", 2)
    assert st.previous_sitemap("s") == (None, '"se"', None)
    st.touch_url("u1", "s", "2024-01-01")  # carried; u2 no longer listed
    st.close(complete=True)
    urls = [r["url"] for r in read_records(path) if r["type"] == "url"]
    assert urls == ["u1"]  # rows of URLs no longer listed are dropped at completion


def test_resume_forgets_document_findings_of_the_dead_run(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_finding({"type": "finding", "code": "lastmod-missing", "sitemap": "s"})
    st.close(complete=False)
    st = open_store(path)  # documents are read again: their findings come again
    st.put_finding({"type": "finding", "code": "lastmod-missing", "sitemap": "s"})
    st.close(complete=True)
    assert [r["code"] for r in read_records(path) if r["type"] == "finding"] == ["lastmod-missing"]


def test_writes_are_batched_and_flush_commits(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path, flush_every=1000, flush_ms=60_000)
    for i in range(10):
        st.put_url(f"u{i}", "s", None, None, None, rec(f"u{i}"), [])
    st.flush()
    other = sqlite3.connect(path)
    assert other.execute("SELECT COUNT(*) FROM urls").fetchone()[0] == 10
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.close()
    st.close(complete=True)


# --- refusing files that are not ours ------------------------------------------------


def assert_refused(path: Path, *needles: str, fp: str = FP) -> None:
    before = path.read_bytes()
    with pytest.raises(StateError) as info:
        open_store(path, fp=fp)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg and "--fresh" in msg
    for n in needles:
        assert n in msg, msg
    assert path.read_bytes() == before  # never overwritten


def test_not_sqlite_is_refused_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text('{"type": "summary"}\n')
    assert_refused(path, "not an SQLite database")


def test_truncated_state_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    for i in range(2000):
        st.put_url(f"https://x/{i}", "s", None, None, None, rec(f"https://x/{i}"), [])
    st.close(complete=True)
    con = sqlite3.connect(path)  # fold the WAL into the file, as a copy would have it
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    assert_refused(path, "corrupt")


def test_foreign_sqlite_and_wrong_schema_are_refused(tmp_path: Path) -> None:
    foreign = tmp_path / "other.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE things (x)")
    con.commit()
    con.close()
    assert_refused(foreign, "no meta table")

    other_app = tmp_path / "app.db"
    con = sqlite3.connect(other_app)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    con.execute("INSERT INTO meta VALUES ('app', 'something-else')")
    con.commit()
    con.close()
    assert_refused(other_app, "foreign")

    path = tmp_path / "s.sqlite"
    open_store(path).close(complete=True)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    assert_refused(path, "schema version '99'")


def test_state_of_another_audit_is_refused_and_fresh_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = open_store(path)
    st.put_url("u", "s", None, None, None, rec("u"), [])
    st.close(complete=True)
    other = fingerprint("crawl", ["https://other.example/"], {})
    assert_refused(path, "different audit", fp=other)
    st = open_store(path, fp=other, fresh=True)
    assert (st.mode, st.run) == ("new", 1)
    assert st.prior("u") is None
    st.close(complete=True)


def test_fresh_replaces_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"garbage" * 100)
    st = open_store(path, fresh=True)
    assert st.mode == "new"
    st.close(complete=True)


# --- diff over two state files -----------------------------------------------------------


def test_diff_two_state_files(tmp_path: Path) -> None:
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    st = open_store(old)
    st.put_url("https://x/a", "s", None, None, None, rec("https://x/a"), [])
    st.put_url("https://x/b", "s", None, None, None, rec("https://x/b", 404), [nf("https://x/b")])
    st.close(complete=True)
    st = open_store(new)
    st.put_url("https://x/a", "s", None, None, None, rec("https://x/a", 404), [nf("https://x/a")])
    st.put_url("https://x/b", "s", None, None, None, rec("https://x/b"), [])
    st.close(complete=True)
    out = io.StringIO()
    summary = diff_reports(old, new, out, fmt="jsonl")
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    changes = {(r["change"], r["url"]) for r in rows if r["type"] == "diff-finding"}
    assert changes == {("new", "https://x/a"), ("fixed", "https://x/b")}
    assert summary.failed
