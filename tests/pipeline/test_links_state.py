"""crawl --links --state (issue 18): the link crawl's results are kept beside the state, so a
run killed half-way and run again with the same state goes on where it stopped, with real
processes over loopback HTTP.

The site's server holds one page until the test lets it go (the crawl is then half-way,
whatever the machine's speed); the test waits until the crawl has committed every page it
was answered before (its store beside the state, read-only), SIGKILLs it, and runs it again.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.core.records import UrlResult
from audit.pipeline.linkstore import LinkQueue, LinkStore
from audit.state.store import read_records, read_status
from tests.crawlkit import HTML, XML, Serve, Site, index, urlset

LISTED = ["/", *(f"/l/{i}" for i in range(6)), "/orphan"]
NOT_PAGES = ("/robots.txt", "/sitemap.xml", "/sitemap-index.xml", "/sitemap-pages.xml")
TIMING = ("elapsed_ms", "duration_s")


def a(href: str) -> str:
    return f'<a href="{href}">x</a>'


def bodies() -> dict[str, str]:
    """The pages: the root and six listed pages link to a chain of ten unlisted ones; the
    chain's end links to a broken link, a noindex page and a redirect; /orphan is listed
    and linked from nowhere."""
    out = {"/": "".join(a(p) for p in LISTED[1:-1]) + a("/u/0")}
    for i in range(6):
        out[f"/l/{i}"] = a("/") + a(f"/u/{i}")
    out["/orphan"] = a("/")
    for i in range(9):
        out[f"/u/{i}"] = a(f"/u/{i + 1}")
    out["/u/9"] = a("/missing") + a("/noindex") + a("/r")
    out["/t"] = a("/")
    return out


@dataclass
class LinkSite:
    """The site; `hold` (a path) waits until `gate` is set, `held` is set when it does."""

    hold: str | None = None
    base: str = ""
    site: Site = field(default_factory=Site)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    held: asyncio.Event = field(default_factory=asyncio.Event)
    with_index: bool = False  # the sitemap is an index of one child (with <lastmod>, ETag)

    async def serve(self, serve: Serve) -> LinkSite:
        self.base = await serve(self.site)
        for path, body in bodies().items():
            self.site.routes[path] = self._page(body)
        self.site.routes["/noindex"] = self._page("", head='<meta name="robots" content="noindex">')
        self.site.routes["/r"] = (301, {"Location": "/t"}, "")
        pages = urlset(*(self.base + p for p in LISTED))
        if self.with_index:
            self.site.routes["/sitemap-index.xml"] = (200, XML, self._index())
            self.site.routes["/sitemap-pages.xml"] = self._child(pages)
        else:
            self.site.routes["/sitemap.xml"] = (200, XML, pages)
        return self

    @property
    def target(self) -> str:
        name = "/sitemap-index.xml" if self.with_index else "/sitemap.xml"
        return self.base + name

    def _index(self) -> str:
        lastmod = "<lastmod>2024-05-01</lastmod></sitemap>"
        return index(self.base + "/sitemap-pages.xml").replace("</sitemap>", lastmod)

    def _child(self, pages: str) -> Any:
        async def child(request: web.Request) -> web.StreamResponse:
            if request.headers.get("If-None-Match") == '"v1"':
                return web.Response(status=304, headers={"ETag": '"v1"'})
            return web.Response(status=200, headers={**XML, "ETag": '"v1"'}, text=pages)

        return child

    def _page(self, body: str, head: str = "") -> Any:
        html = f"<html><head><title>t</title>{head}</head><body>{body}</body></html>"

        async def page(request: web.Request) -> web.StreamResponse:
            if request.path == self.hold and not self.gate.is_set():
                self.held.set()
                await self.gate.wait()
            return web.Response(status=200, headers=HTML, text=html)

        return page

    def pages(self) -> Counter[str]:
        """Requests per page (not robots.txt or the sitemaps)."""
        return Counter(p for p in self.site.paths() if p not in NOT_PAGES)

    def hold_at(self, path: str) -> None:
        self.hold = path
        self.gate.clear()
        self.held.clear()
        self.site.hits.clear()


async def start(site: LinkSite, state: Path, out: Path, *extra: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit", "crawl", site.target, "--links",
        "--state", str(state), "--format", "jsonl", "--output", str(out), "--no-progress",
        "--rate", "1000", "--concurrency", "1", "--retries", "0", *extra,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    _, err = await proc.communicate()
    assert b"Traceback" not in err, err.decode()
    assert proc.returncode is not None
    return proc.returncode, err.decode()


async def crawl(site: LinkSite, state: Path, out: Path, *extra: str) -> int:
    code, _ = await crawl_said(site, state, out, *extra)
    return code


async def crawl_said(site: LinkSite, state: Path, out: Path, *extra: str) -> tuple[int, str]:
    """Exit status and stderr of an uninterrupted crawl."""
    site.gate.set()
    return await finish(await start(site, state, out, *extra))


async def committed(store: Path, rows: int) -> None:
    """Until the crawl's store beside the state holds `rows` pages (committed)."""
    while True:
        try:
            with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
                if db.execute("SELECT COUNT(*) FROM held").fetchone()[0] >= rows:
                    return
        except sqlite3.Error:
            pass  # not made yet
        await asyncio.sleep(0.02)


async def crawl_killed(
    site: LinkSite, state: Path, out: Path, *extra: str, sig: int = signal.SIGKILL
) -> Counter[str]:
    """A crawl SIGKILLed (or sent `sig`) while the server holds `site.hold`, once it has
    committed every other page it was answered; the requests per page it made."""
    site.gate.clear()
    proc = await start(site, state, out, *extra)
    try:
        await site.held.wait()
        answered = site.pages()
        store = Path(f"{state}.links-1")
        if store.exists():  # made before the first sitemap is read (none: nothing kept)
            await committed(store, len(answered) - 1)
    finally:
        proc.send_signal(sig)
        code, _ = await finish(proc)
        site.gate.set()
    assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 130)
    return site.pages()


def untimed(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in r.items() if k not in TIMING}
        for r in records
        if r["type"] not in ("hosts", "summary")
    ]


def report(path: Path) -> list[dict[str, Any]]:
    return untimed(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


def summary(path: Path) -> dict[str, Any]:
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "summary"
    return dict(last)


def canonical(records: Iterable[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in records)


async def reference(site: LinkSite, tmp_path: Path, *extra: str) -> tuple[int, Path]:
    """An uninterrupted run of the same crawl, with a state of its own."""
    out = tmp_path / "ref.jsonl"
    code = await crawl(site, tmp_path / "ref.sqlite", out, *extra)
    return code, out


def assert_same_report(out: Path, ref: Path) -> None:
    final = report(out)
    assert canonical(final) == canonical(report(ref))
    assert summary(out)["coverage"] == summary(ref)["coverage"]
    assert summary(out)["findings"] == summary(ref)["findings"]
    urls = [r["url"] for r in final if r["type"] == "url"]
    assert len(urls) == len(set(urls))  # each page once


@pytest.mark.slow
@pytest.mark.parametrize(
    ("hold", "sig"),
    [
        ("/l/3", signal.SIGKILL),  # in the listed pages
        ("/u/5", signal.SIGKILL),  # in the link crawl
        ("/u/5", signal.SIGINT),  # the report of what was done is written (and stored)
    ],
)
async def test_a_killed_link_crawl_resumes_where_it_stopped(
    serve: Serve, tmp_path: Path, hold: str, sig: int
) -> None:
    site = await LinkSite().serve(serve)
    ref_code, ref = await reference(site, tmp_path)
    assert all(n == 1 for n in site.pages().values())
    state, out = tmp_path / "s.sqlite", tmp_path / "out.jsonl"
    site.hold_at(hold)
    before = await crawl_killed(site, state, out, sig=sig)
    assert before[hold] == 1 and len(before) > 3  # half-way
    site.site.hits.clear()
    code, said = await crawl_said(site, state, out)
    assert code == ref_code
    assert f"{len(before) - 1} URLs already checked were not requested again" in said
    assert read_status(state) == "complete"
    again = site.pages()
    # the page in flight at the kill is the one page fetched twice
    assert {p for p in before if again[p]} == {hold}, again
    assert again[hold] == 1 and all(n == 1 for n in again.values())
    assert_same_report(out, ref)
    assert not Path(f"{state}.links-1").exists()  # the run completed: its store is gone
    stored = [r for r in untimed(read_records(state)) if r["type"] == "url"]
    assert canonical(stored) == canonical(r for r in report(out) if r["type"] == "url")


@pytest.mark.slow
async def test_max_pages_cut_is_resumed_without_fetching_more(serve: Serve, tmp_path: Path) -> None:
    site = await LinkSite().serve(serve)
    ref_code, ref = await reference(site, tmp_path, "--max-pages", "4")
    cut = [p for p in site.pages() if p not in LISTED]
    assert sorted(cut) == ["/u/0", "/u/1", "/u/2", "/u/3"]
    state, out = tmp_path / "s.sqlite", tmp_path / "out.jsonl"
    site.hold_at("/u/2")
    before = await crawl_killed(site, state, out, "--max-pages", "4")
    site.site.hits.clear()
    assert await crawl(site, state, out, "--max-pages", "4") == ref_code
    again = site.pages()
    assert sorted(again) == ["/u/2", "/u/3"]  # the one in flight, and the fourth
    assert sum((before + again).values()) == len(LISTED) + 4 + 1
    assert_same_report(out, ref)
    assert summary(out)["coverage"]["stopped_by"] == "max-pages"


@pytest.mark.slow
async def test_a_run_after_a_complete_one_crawls_anew(serve: Serve, tmp_path: Path) -> None:
    site = await LinkSite(with_index=True).serve(serve)
    state, first = tmp_path / "s.sqlite", tmp_path / "1.jsonl"
    await crawl(site, state, first)
    assert read_status(state) == "complete"
    assert not Path(f"{state}.links-1").exists()
    pages = dict(site.pages())
    assert set(pages) == {*bodies(), "/noindex", "/r", "/missing"}
    assert all(n == 1 for n in pages.values())
    # the state holds the run's url records as the report has them
    stored = [r for r in untimed(read_records(state)) if r["type"] == "url"]
    written = [r for r in report(first) if r["type"] == "url"]
    assert canonical(stored) == canonical(written) and len(stored) == len(pages)

    # the chain's end no longer links to /noindex: a kept crawl would still report it
    site.site.routes["/u/9"] = site._page(a("/missing") + a("/r"))
    site.site.hits.clear()
    second = tmp_path / "2.jsonl"
    await crawl(site, state, second)  # no conditional request: --links GETs every page
    assert dict(site.pages()) == {p: 1 for p in pages if p != "/noindex"}
    # the unchanged child sitemap was not read again (a 304); its URLs came from the state
    child = [h for h in site.site.hits if h.path == "/sitemap-pages.xml"]
    assert [h.headers.get("If-None-Match") for h in child] == ['"v1"']
    assert all(
        "If-None-Match" not in h.headers and h.method == "GET"
        for h in site.site.hits
        if h.path in pages
    )
    urls = {r["url"].removeprefix(site.base): r for r in report(second) if r["type"] == "url"}
    assert sorted(urls) == sorted({*pages, "/t"} - {"/noindex"})
    assert urls["/l/0"]["source"] == "both" and urls["/u/0"]["source"] == "links"
    assert not any(r.get("carried") for r in urls.values())
    ref = {r["url"].removeprefix(site.base): r for r in written}
    assert urls["/u/3"] == ref["/u/3"]


# --- the kept store itself -------------------------------------------------------------


def page_record(url: str) -> UrlResult:
    return UrlResult(url, None, None, 200, url, (), None, None, "allowed", 1.0)


def kept(path: Path, *, resume: bool, run: int = 1) -> tuple[LinkStore, LinkQueue, bool]:
    store = LinkStore()
    resumed = store.keep(str(path), resume=resume, run=run)
    return store, LinkQueue(store, bound=3), resumed


def killed(store: LinkStore) -> None:
    """What a SIGKILL leaves: the connection gone, its open transaction with it."""
    assert store._db is not None
    store._db.close()
    store._db = None


def test_a_kept_queue_goes_on_from_its_last_commit_in_order(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite.links-1"
    store, queue, resumed = kept(path, resume=False)
    assert not resumed
    urls = [f"http://example.com/{i}" for i in range(8)]
    for i, url in enumerate(urls):
        queue.push(url, 1, 100 + i)
    queue.first("http://example.com/", 0)
    assert len(queue) == 9 and len(queue.items) == 4  # the root and 3 cached, 5 in the file
    assert [queue.pop() for _ in range(5)] == [
        ("http://example.com/", 0), *((u, 1) for u in urls[:4])
    ]  # fmt: skip
    store.hold(100, False, page_record(urls[0]), [], url=urls[0], depth=1, counted=True)
    store.commit()
    store.hold(101, False, page_record(urls[1]), [], url=urls[1], depth=1, counted=True)
    queue.push("http://example.com/late", 2, 999)
    killed(store)  # urls[1] held and /late queued after the last commit: lost

    store, queue, resumed = kept(path, resume=True)
    assert resumed and store.counts() == (1, 0, Counter({1: 1}))
    assert sorted(store.queued_urls()) == sorted(["http://example.com/", *urls[1:]])
    popped = [queue.pop() for _ in range(len(queue))]
    assert popped == [("http://example.com/", 0), *((u, 1) for u in urls[1:])]
    assert queue.pop() is None
    store.close()

    store, queue, resumed = kept(path, resume=True, run=2)  # another run's: a new crawl
    assert not resumed and len(queue) == 0 and store.counts() == (0, 0, Counter())
    store.close()


def test_a_kept_queue_that_starts_with_the_root_pops_each_url_once(tmp_path: Path) -> None:
    store, _, _ = kept(tmp_path / "s.sqlite.links-1", resume=False)
    queue = LinkQueue(store, bound=2)
    queue.first("http://example.com/", 0)  # the first row: seq -1, the next one 0
    urls = [f"http://example.com/{i}" for i in range(6)]
    for i, url in enumerate(urls):
        queue.push(url, 1, i)
    popped = [queue.pop() for _ in range(len(queue))]
    assert popped == [("http://example.com/", 0), *((u, 1) for u in urls)]
    assert queue.pop() is None
    store.close()
