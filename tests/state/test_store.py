"""The run state (`--state`): the store itself, refusal of corrupt and foreign files,
resume after SIGKILL, conditional requests, --changed-only."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from audit.state.diff import diff_reports
from audit.state.store import FLUSH_MS, StateError, StateStore, fingerprint, read_records
from tests.crawlkit import Serve

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
    prev = st.previous_sitemap("s")
    assert prev is not None and (prev.etag, prev.record, prev.carry) == (
        '"se"',
        {"type": "sitemap", "url": "s"},
        False,
    )
    # u1 listed again (a carried result is stored as a put_url too); u2 no longer listed
    st.put_url("u1", "s", "2024-01-01", '"e1"', "Mon, 01 Jan 2024 00:00:00 GMT", rec("u1"), [])
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
    assert other.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 10
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


# --- end to end: the CLI with --state against loopback servers ------------------------

N_KILL = 2000  # URLs of the SIGKILL test
KILL_RATE = 400.0  # requests per second: bounds what one uncommitted batch may hold
KILL_CONCURRENCY = 8


class Pages:
    """A site of N pages (/p/0 ...) with ETags, counting requests per path."""

    def __init__(self, n: int, *, lastmod: str | None = None) -> None:
        self.n = n
        self.hits: Counter[str] = Counter()
        self.conditional: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.version: dict[str, int] = {}
        self.lastmods: dict[str, str] = {}
        self.status: dict[str, int] = {}
        self.extra: list[str] = []
        self.default_lastmod = lastmod
        self.base = ""

    def paths(self) -> list[str]:
        return [f"/p/{i}" for i in range(self.n)] + self.extra

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/sitemap.xml", self.sitemap)
        app.router.add_route("*", "/p/{i}", self.page)
        app.router.add_route("*", "/x/{i}", self.page)
        return app

    async def sitemap(self, request: web.Request) -> web.Response:
        rows = []
        for path in self.paths():
            lm = self.lastmods.get(path, self.default_lastmod)
            tag = f"<lastmod>{lm}</lastmod>" if lm else ""
            rows.append(f"<url><loc>{self.base}{path}</loc>{tag}</url>")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "\n".join(rows)
            + "\n</urlset>\n"
        )
        return web.Response(body=body.encode(), content_type="application/xml")

    async def page(self, request: web.Request) -> web.Response:
        path = request.path
        self.hits[path] += 1
        if path == "/x/echo":  # a server that echoes a credential into a redirect
            token = request.headers.get("X-Token", "")
            return web.Response(status=302, headers={"Location": f"/x/landing?t={token}"})
        etag = f'"{path}-v{self.version.get(path, 1)}"'
        status = self.status.get(path, 200)
        if request.headers.get("If-None-Match"):
            self.conditional[path] += 1
            if request.headers["If-None-Match"] == etag and status == 200:
                self.not_modified[path] += 1
                return web.Response(status=304, headers={"ETag": etag})
        headers = {"ETag": etag, "Content-Type": "text/html"}
        return web.Response(status=status, headers=headers, body=b"<html>page</html>")


async def serve_pages(serve: Serve, pages: Pages) -> str:
    pages.base = await serve(pages)
    return pages.base + "/sitemap.xml"


TIMING = ("elapsed_ms", "duration_s")


def report(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [
        {k: v for k, v in r.items() if k not in TIMING} for r in records if r["type"] != "hosts"
    ]


def canonical(records: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in records)


def crawl_argv(target: str, state: Path, out: Path, *extra: str) -> list[str]:
    return [
        "crawl",
        target,
        "--state",
        str(state),
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--no-progress",
        "--rate",
        "1000",
        "--retries",
        "0",
        *extra,
    ]


async def run_main(argv: list[str]) -> int:
    return await asyncio.to_thread(main, argv)


@pytest.mark.slow
async def test_resume_after_sigkill(serve: Serve, tmp_path: Path) -> None:
    pages = Pages(N_KILL)
    target = await serve_pages(serve, pages)
    argv_common = [
        "--format",
        "jsonl",
        "--no-progress",
        "--rate",
        str(KILL_RATE),
        "--concurrency",
        str(KILL_CONCURRENCY),
    ]

    async def crawl(state: Path, out: Path, *, kill_at: int | None = None) -> int | None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "audit",
            "crawl",
            target,
            "--state",
            str(state),
            "--output",
            str(out),
            *argv_common,
            stderr=asyncio.subprocess.PIPE,
        )
        if kill_at is not None:
            while sum(pages.hits.values()) < kill_at and proc.returncode is None:
                await asyncio.sleep(0.005)
            proc.send_signal(signal.SIGKILL)
        _, err = await proc.communicate()
        assert b"Traceback" not in err, err.decode()
        return proc.returncode

    # an uninterrupted run, for reference
    assert await crawl(tmp_path / "ref.sqlite", tmp_path / "ref.jsonl") == 0
    assert all(pages.hits[p] == 1 for p in pages.paths())
    reference = report(tmp_path / "ref.jsonl")
    pages.hits.clear()

    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    assert await crawl(state, out, kill_at=N_KILL // 2) == -signal.SIGKILL
    before = Counter(pages.hits)
    assert 0 < len(before) < N_KILL  # killed mid-way
    assert await crawl(state, out) == 0

    final = report(out)
    urls = [r["url"] for r in final if r["type"] == "url"]
    assert sorted(urls) == sorted(pages.base + p for p in pages.paths())  # each exactly once
    assert canonical(final) == canonical(reference)  # the same report as without the crash

    # Requested again: only what was in flight or not yet committed at the kill.
    twice = [p for p in pages.paths() if pages.hits[p] == 2]
    assert all(pages.hits[p] in (1, 2) for p in pages.paths())
    uncommitted = int(KILL_RATE * FLUSH_MS / 1000) + 1
    assert len(twice) <= KILL_CONCURRENCY + uncommitted, (len(twice), len(before))


async def test_second_run_sends_conditional_requests_and_carries_304s(
    serve: Serve, tmp_path: Path
) -> None:
    pages = Pages(20)
    target = await serve_pages(serve, pages)
    state = tmp_path / "s.sqlite"
    assert await run_main(crawl_argv(target, state, tmp_path / "1.jsonl")) == 0
    first = report(tmp_path / "1.jsonl")
    assert not pages.conditional and all(pages.hits[p] == 1 for p in pages.paths())

    pages.version["/p/3"] = 2  # changed: a full answer
    pages.status["/p/4"] = 404  # now gone
    code = await run_main(crawl_argv(target, state, tmp_path / "2.jsonl"))
    assert code == 1  # the new 404
    second = report(tmp_path / "2.jsonl")
    assert set(pages.conditional) == set(pages.paths())  # every URL asked conditionally
    assert set(pages.not_modified) == set(pages.paths()) - {"/p/3", "/p/4"}
    by_url = {r["url"]: r for r in second if r["type"] == "url"}
    assert len(by_url) == 20 == len([r for r in second if r["type"] == "url"])
    assert by_url[pages.base + "/p/0"]["carried"] is True
    assert by_url[pages.base + "/p/0"]["status"] == 200
    assert "carried" not in by_url[pages.base + "/p/3"]
    assert by_url[pages.base + "/p/4"]["status"] == 404
    assert [
        r["url"] for r in second if r["type"] == "finding" and r["code"] == "url-not-found"
    ] == [pages.base + "/p/4"]
    assert second[-1]["carried"] == 18
    firsts = {r["url"]: r for r in first if r["type"] == "url"}
    carried = {k: {**v, "carried": None} for k, v in by_url.items() if v.get("carried")}
    assert all(carried[u] == {**firsts[u], "carried": None} for u in carried)


async def test_changed_only_requests_only_new_and_moved_urls(serve: Serve, tmp_path: Path) -> None:
    pages = Pages(30, lastmod="2024-05-01")
    target = await serve_pages(serve, pages)
    state = tmp_path / "s.sqlite"
    assert await run_main(crawl_argv(target, state, tmp_path / "1.jsonl")) == 0
    pages.hits.clear()

    for path, day in (("/p/7", "2024-06-01"), ("/p/8", "2024-06-02")):
        pages.lastmods[path] = day
        pages.version[path] = 2  # the content changed with it
    pages.extra.append("/x/new")
    out = tmp_path / "2.jsonl"
    assert await run_main(crawl_argv(target, state, out, "--changed-only")) == 0
    assert sorted(pages.hits) == ["/p/7", "/p/8", "/x/new"]
    records = report(out)
    urls = [r for r in records if r["type"] == "url"]
    assert len(urls) == 31
    assert sum(1 for r in urls if r.get("carried")) == 28
    summary = records[-1]
    assert summary["type"] == "summary" and summary["skipped_unchanged"] == 28
    # the moved ones were asked conditionally, and answered in full (new ETag)
    assert set(pages.conditional) == {"/p/7", "/p/8"} and not pages.not_modified


@pytest.mark.parametrize("kind", ["not-sqlite", "truncated", "foreign", "other-audit"])
async def test_cli_refuses_unusable_state_and_keeps_it(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    pages = Pages(3)
    target = await serve_pages(serve, pages)
    state = tmp_path / "state.sqlite"
    extra: list[str] = []
    if kind == "not-sqlite":
        state.write_text("not a database\n" * 10)
    elif kind == "foreign":
        con = sqlite3.connect(state)
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        con.commit()
        con.close()
    else:
        assert await run_main(crawl_argv(target, state, tmp_path / "0.jsonl")) == 0
        con = sqlite3.connect(state)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        if kind == "truncated":
            state.write_bytes(state.read_bytes()[:1500])
        else:
            extra = ["--exclude", "/nothing-matches/"]  # another audit's options
    capsys.readouterr()
    before = state.read_bytes()
    pages.hits.clear()
    out = tmp_path / "out.jsonl"
    out.write_text("the previous report\n")
    assert await run_main(crawl_argv(target, state, out, *extra)) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err and str(state) in lines[0], err
    assert "--fresh" in lines[0]
    assert state.read_bytes() == before  # never overwritten
    assert out.read_text() == "the previous report\n"  # nothing ran, nothing written
    assert not pages.hits

    assert await run_main(crawl_argv(target, state, out, *extra, "--fresh")) == 0
    assert sum(pages.hits.values()) == 3


async def test_state_flags_need_state(capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_main(["crawl", "https://x.example/", "--changed-only"]) == 2
    assert "--changed-only needs --state" in capsys.readouterr().err


async def test_changed_only_is_refused_with_links(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The link crawl needs every page's links: carrying a page unread would lose them."""
    state = tmp_path / "s.sqlite"
    argv = ["crawl", "https://x.example/", "--links", "--state", str(state), "--changed-only"]
    assert await run_main(argv) == 2
    err = capsys.readouterr().err
    assert "--changed-only cannot be used with --links" in err and "Traceback" not in err
    assert not state.exists()


class Indexed(Pages):
    """An index of 3 child sitemaps (with <lastmod> and ETags) of 5 pages each."""

    def __init__(self) -> None:
        super().__init__(0)
        self.children = {c: 1 for c in range(3)}  # child -> version
        self.sitemap_hits: Counter[int] = Counter()  # full answers
        self.sitemap_304: Counter[int] = Counter()

    def child_paths(self, c: int) -> list[str]:
        return [f"/x/{c}-{i}" for i in range(5 + (self.children[c] - 1))]

    def paths(self) -> list[str]:
        return [p for c in self.children for p in self.child_paths(c)]

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/sitemap_index.xml", self.index)
        app.router.add_get("/sm/{c}.xml", self.child)
        app.router.add_route("*", "/x/{i}", self.page)
        return app

    async def index(self, request: web.Request) -> web.Response:
        rows = "".join(
            f"<sitemap><loc>{self.base}/sm/{c}.xml</loc><lastmod>2024-0{v}-01</lastmod></sitemap>"
            for c, v in self.children.items()
        )
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}'
            "</sitemapindex>\n"
        )
        return web.Response(body=body.encode(), content_type="application/xml")

    async def child(self, request: web.Request) -> web.Response:
        c = int(request.match_info["c"])
        etag = f'"sm{c}-v{self.children[c]}"'
        if request.headers.get("If-None-Match") == etag:
            self.sitemap_304[c] += 1
            return web.Response(status=304, headers={"ETag": etag})
        self.sitemap_hits[c] += 1
        rows = "".join(
            f"<url><loc>{self.base}{p}</loc><lastmod>2024-05-01</lastmod></url>\n"
            for p in self.child_paths(c)
        )
        if c == 0:  # a planted entry finding, to be carried with its sitemap
            rows += f"<url><loc>{self.base}/x/0-bad</loc><lastmod>2024-02-30</lastmod></url>\n"
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + rows + "</urlset>\n"
        )
        return web.Response(
            body=body.encode(), content_type="application/xml", headers={"ETag": etag}
        )


async def test_unchanged_child_sitemaps_are_not_read_again(serve: Serve, tmp_path: Path) -> None:
    site = Indexed()
    site.base = await serve(site)
    target = site.base + "/sitemap_index.xml"
    state = tmp_path / "s.sqlite"
    assert await run_main(crawl_argv(target, state, tmp_path / "1.jsonl")) == 1  # lastmod-invalid
    first = report(tmp_path / "1.jsonl")
    assert site.sitemap_hits == Counter({0: 1, 1: 1, 2: 1})

    site.children[2] = 2  # child 2 changed (new ETag, new index <lastmod>, one more page)
    assert await run_main(crawl_argv(target, state, tmp_path / "2.jsonl")) == 1
    second = report(tmp_path / "2.jsonl")
    assert site.sitemap_304 == Counter({0: 1, 1: 1})  # asked conditionally, not read
    assert site.sitemap_hits == Counter({0: 1, 1: 1, 2: 2})  # only the changed one again

    sitemaps = {r["url"]: r for r in second if r["type"] == "sitemap"}
    assert sitemaps[site.base + "/sm/0.xml"].get("carried") is True
    assert "carried" not in sitemaps[site.base + "/sm/2.xml"]
    assert second[-1]["sitemaps_carried"] == 2
    # every URL of the carried sitemaps is still in the report, checked as usual (304s)
    urls = sorted(r["url"] for r in second if r["type"] == "url")
    assert urls == sorted([site.base + p for p in site.paths()] + [site.base + "/x/0-bad"])
    assert site.not_modified["/x/2-5"] == 0 and site.hits["/x/2-5"] == 1  # the new page
    # the carried sitemap's findings are in the report again, once
    bad = [r for r in second if r["type"] == "finding" and r["code"] == "lastmod-invalid"]
    assert [r["url"] for r in bad] == [site.base + "/x/0-bad"]

    def shape(records: list[dict[str, Any]]) -> list[str]:
        drop = ("carried",)
        keep = [
            {k: v for k, v in r.items() if k not in drop}
            for r in records
            if r["type"] in ("finding", "sitemap") and "/sm/2.xml" not in json.dumps(r)
        ]
        return canonical(keep)

    assert shape(second) == shape(first)  # the unchanged part of the report is the same


async def test_state_keeps_no_credentials(serve: Serve, tmp_path: Path) -> None:
    """What the state stores is what the report says: credential values redacted."""
    secret = "s3cr3t-token-value-0123456789"
    pages = Pages(0)
    pages.extra = ["/x/echo"]
    target = await serve_pages(serve, pages)
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    argv = crawl_argv(target, state, out, "--header", f"X-Token: {secret}")
    assert await run_main(argv) in (0, 1)
    assert pages.hits["/x/landing"] == 1  # followed with the real token
    assert secret not in out.read_text()
    con = sqlite3.connect(state)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    assert secret.encode() not in state.read_bytes()
    assert any(r["type"] == "url" for r in read_records(state))
