"""The published-URL ledger (nights.md section 2): a URL listed on an earlier night and not
tonight is asked again and judged (`url-dropped-*`), a URL of a sitemap that failed tonight
is held, and the summary counts the ledger. Each outcome has its own case, with a clean
control (an unchanged night) that yields none."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.crawlkit import Serve
from tests.state.test_store import run_main

DROPPED = "url-dropped-"


class LedgerSite:
    """Two sitemaps (a.xml, b.xml) under an index; each path answers as `answers` says."""

    def __init__(self) -> None:
        self.a = [f"/a/{i}" for i in range(4)]
        self.b = [f"/b/{i}" for i in range(3)]
        self.answers: dict[str, tuple[int, str | None]] = {}  # path -> (status, Location)
        self.noindex: set[str] = set()
        self.failing: set[str] = set()  # sitemaps answering 500
        self.indexed = ["a.xml", "b.xml"]
        self.disallow: list[str] = []
        self.hits: Counter[str] = Counter()
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/index.xml", self._index)
        app.router.add_get("/{name}.xml", self._sitemap)
        app.router.add_route("*", "/{tail:.*}", self._page)
        return app

    async def _robots(self, request: web.Request) -> web.Response:
        rules = "".join(f"Disallow: {p}\n" for p in self.disallow)
        return web.Response(text=f"User-agent: *\n{rules}", content_type="text/plain")

    async def _index(self, request: web.Request) -> web.Response:
        rows = "".join(f"<sitemap><loc>{self.base}/{n}</loc></sitemap>" for n in self.indexed)
        return web.Response(
            text='<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"{rows}</sitemapindex>",
            content_type="application/xml",
        )

    async def _sitemap(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name in self.failing:
            return web.Response(status=500, text="down")
        paths = self.a if name == "a" else self.b if name == "b" else None
        if paths is None:
            return web.Response(status=404)
        rows = "".join(f"<url><loc>{self.base}{p}</loc></url>" for p in paths)
        return web.Response(
            text=f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>',
            content_type="application/xml",
        )

    async def _page(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.hits[path] += 1
        status, location = self.answers.get(path, (200, None))
        if location is not None:
            return web.Response(status=status, headers={"Location": location})
        headers = {"X-Robots-Tag": "noindex"} if path in self.noindex else {}
        return web.Response(
            status=status, text="<html><title>x</title></html>", headers=headers,
            content_type="text/html",
        )  # fmt: skip


def _argv(target: str, state: Path, out: Path, *extra: str) -> list[str]:
    return [
        "crawl", target, "--state", str(state), "--format", "jsonl", "--output", str(out),
        "--no-progress", "--rate", "unlimited", "--fail-on", "never", "--retries", "0", *extra,
    ]  # fmt: skip


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def _night(site: LedgerSite, state: Path, out: Path, *extra: str) -> list[dict[str, Any]]:
    site.hits.clear()
    await run_main(_argv(site.base + "/index.xml", state, out, *extra))
    return _records(out)


def _dropped(records: list[dict[str, Any]]) -> dict[str, str]:
    return {r["url"]: r["code"] for r in records if r.get("code", "").startswith(DROPPED)}


async def test_each_dropped_outcome_and_a_clean_control(serve: Serve, tmp_path: Path) -> None:
    site = LedgerSite()
    site.a = [f"/a/{i}" for i in range(10)]
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    first = await _night(site, state, tmp_path / "1.jsonl")
    summary = first[-1]
    assert summary["ledger"] == {
        "known": 13, "listed": 13, "new": 13, "dropped": 0, "held": 0, "checked": 0,
        "unchecked": 0,
    }  # fmt: skip
    control = await _night(site, state, tmp_path / "2.jsonl")  # nothing changed
    assert not _dropped(control)
    assert not [r for r in control if r.get("source") == "ledger"]
    assert control[-1]["ledger"]["known"] == 13 and control[-1]["ledger"]["new"] == 0

    b = site.base
    site.a = ["/a/0"]  # nine URLs leave the sitemap, each answering its own way
    site.answers = {
        "/a/2": (404, None),
        "/a/3": (410, None),
        "/a/4": (301, "/a/0"),
        "/a/5": (302, "/a/0"),
        "/a/6": (301, "/"),
        "/a/7": (500, None),
    }
    site.noindex = {"/a/8"}
    site.disallow = ["/a/9"]
    night = await _night(site, state, tmp_path / "3.jsonl")
    assert _dropped(night) == {
        b + "/a/1": "url-dropped-live",
        b + "/a/2": "url-dropped-404",
        b + "/a/3": "url-dropped-gone",
        b + "/a/4": "url-dropped-redirect",
        b + "/a/5": "url-dropped-temporary",
        b + "/a/6": "url-dropped-to-home",
        b + "/a/7": "url-dropped-error",
    }  # /a/8 (noindex) and /a/9 (robots.txt) are correct removals: no finding
    records = {r["url"]: r for r in night if r.get("source") == "ledger"}
    assert {u: r["dropped"] for u, r in records.items()} == {
        b + "/a/1": "live", b + "/a/2": "404", b + "/a/3": "gone", b + "/a/4": "redirect",
        b + "/a/5": "temporary", b + "/a/6": "to-home", b + "/a/7": "error",
        b + "/a/8": "not-indexable", b + "/a/9": "robots",
    }  # fmt: skip
    for r in records.values():
        assert r["sitemap"] is None and r["line"] is None
        assert r["last_sitemap"] == b + "/a.xml"
        assert r["first_seen"].endswith("Z") and r["last_seen"].endswith("Z")
    assert records[b + "/a/9"]["robots"] == "blocked" and site.hits["/a/9"] == 0
    findings = {r["url"]: r for r in night if r.get("code", "").startswith(DROPPED)}
    for f in findings.values():
        assert f["sitemap"] is None and f["line"] is None
        assert b + "/a.xml" in f["message"]
    assert "301 -> " + b + "/a/0 (200)" in findings[b + "/a/4"]["message"]
    assert night[-1]["urls"] == 4  # a.xml's one URL and b.xml's three; not the ledger's
    assert night[-1]["ledger"] == {
        "known": 13, "listed": 4, "new": 0, "dropped": 9, "held": 0, "checked": 9,
        "unchecked": 0,
    }  # fmt: skip
    # judged again on every night they stay dropped
    again = await _night(site, state, tmp_path / "4.jsonl")
    assert _dropped(again) == _dropped(night)


async def test_a_failing_sitemap_holds_its_urls(serve: Serve, tmp_path: Path) -> None:
    site = LedgerSite()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    await _night(site, state, tmp_path / "1.jsonl")
    site.failing = {"b"}  # tonight b.xml answers 500: its three URLs are held
    night = await _night(site, state, tmp_path / "2.jsonl")
    assert not _dropped(night)
    assert not any(site.hits[p] for p in site.b)
    assert night[-1]["ledger"]["held"] == 3 and night[-1]["ledger"]["dropped"] == 0
    site.failing = set()
    site.indexed = ["a.xml"]  # b.xml no longer referenced at all: its URLs are dropped
    gone = await _night(site, state, tmp_path / "3.jsonl")
    assert set(_dropped(gone)) == {site.base + p for p in site.b}
    assert gone[-1]["ledger"]["dropped"] == 3 and gone[-1]["ledger"]["held"] == 0


async def test_dropped_max_bounds_the_requests(serve: Serve, tmp_path: Path) -> None:
    site = LedgerSite()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    await _night(site, state, tmp_path / "1.jsonl")
    site.a = []
    night = await _night(site, state, tmp_path / "2.jsonl", "--dropped-max", "2")
    assert len([r for r in night if r.get("source") == "ledger"]) == 2
    assert sum(site.hits[p] for p in ("/a/0", "/a/1", "/a/2", "/a/3")) == 2
    assert night[-1]["ledger"]["checked"] == 2 and night[-1]["ledger"]["unchecked"] == 2
    zero = await _night(site, state, tmp_path / "3.jsonl", "--dropped-max", "0")
    assert not [r for r in zero if r.get("source") == "ledger"]
    assert zero[-1]["ledger"]["unchecked"] == 4


async def test_a_cut_run_neither_judges_nor_updates_the_ledger(
    serve: Serve, tmp_path: Path
) -> None:
    """A nightly run that always stops at --max-urls (the state ties the option, so every
    night is cut) never fills the ledger: what it did not reach is not "dropped"."""
    site = LedgerSite()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    for night in (1, 2):
        cut = await _night(site, state, tmp_path / f"{night}.jsonl", "--max-urls", "2")
        assert cut[-1]["max_urls_reached"] is True
        assert not [r for r in cut if r.get("source") == "ledger"]
        assert "ledger" not in cut[-1]
    con = sqlite3.connect(state)
    (rows,) = con.execute("SELECT COUNT(*) FROM ledger").fetchone()
    con.close()
    assert rows == 0


async def test_first_and_last_seen_are_run_start_times(serve: Serve, tmp_path: Path) -> None:
    site = LedgerSite()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    await _night(site, state, tmp_path / "1.jsonl")
    con = sqlite3.connect(state)
    first = dict(con.execute("SELECT url, first_seen FROM ledger").fetchall())
    con.execute("UPDATE ledger SET first_seen = '2020-01-01T00:00:00Z'")  # an old night
    con.commit()
    con.close()
    await _night(site, state, tmp_path / "2.jsonl")
    con = sqlite3.connect(state)
    rows = con.execute("SELECT url, first_seen, last_seen FROM ledger").fetchall()
    con.close()
    assert {u for u, _, _ in rows} == set(first)
    assert all(f == "2020-01-01T00:00:00Z" and last >= "2026" for _, f, last in rows)


async def test_intent_rows_judge_dropped_urls(serve: Serve, tmp_path: Path) -> None:
    """nights.md 3: a dropped URL under an --intent row is judged on its own answer: a
    satisfied `gone` turns a 404 into url-dropped-gone, a broken row replaces the
    url-dropped-* finding with intent-violated, a satisfied `keep` leaves the finding; an
    exact row of a dropped URL is not requested a second time."""
    site = LedgerSite()
    site.base = b = await serve(site.app())
    state = tmp_path / "s.sqlite"
    intent = tmp_path / "intent.csv"
    intent.write_text(
        "url,action,target\n"
        f"{b}/a/1,gone\n"  # answers 404: satisfied
        f"{b}/a/2,redirect,{b}/a/0\n"  # answers 404: broken
        f"{b}/a/3,keep\n",  # still live: satisfied, the finding stays
        encoding="utf-8",
    )
    await _night(site, state, tmp_path / "1.jsonl", "--intent", str(intent))
    site.a = ["/a/0"]
    site.answers = {"/a/1": (404, None), "/a/2": (404, None)}
    night = await _night(site, state, tmp_path / "2.jsonl", "--intent", str(intent))
    codes = {(r["url"], r["code"]) for r in night if r["type"] == "finding"}
    assert (b + "/a/1", "url-dropped-gone") in codes
    assert (b + "/a/2", "intent-violated") in codes
    assert (b + "/a/2", "url-dropped-404") not in codes
    assert (b + "/a/3", "url-dropped-live") in codes
    records = {r["url"]: r for r in night if r.get("source") == "ledger"}
    assert records[b + "/a/1"]["intent"] == {"action": "gone", "line": 2, "ok": True}
    assert records[b + "/a/2"]["intent"]["ok"] is False
    assert not [r for r in night if r.get("source") == "intent"]  # claimed by the ledger
    # asked once each (a 404's HEAD is confirmed with a GET), not again as an intent row
    assert site.hits["/a/1"] == 2 and site.hits["/a/2"] == 2
    summary = night[-1]["intent"]
    assert summary["gone"] == {"judged": 1, "violated": 0}
    assert summary["redirect"] == {"judged": 1, "violated": 1}
