"""Index `<lastmod>` truth across nights (nights.md section 4, `--state`): an index entry
whose child's entries changed while its `<lastmod>` stayed is `index-lastmod-frozen`; one
whose `<lastmod>` moved while the child's entries stayed is `index-lastmod-churn` (a
child answering 304 is unchanged). An unchanged night, and a night where the entry moved
with its child, yield neither."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.crawlkit import Serve
from tests.state.test_store import run_main

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class IndexSite:
    """An index of children a, b and c; each child's pages and the index's <lastmod> of
    each are set by the test. Children answer 304 to a matching If-None-Match."""

    def __init__(self) -> None:
        self.pages = {"a": ["/a/1", "/a/2"], "b": ["/b/1"], "c": ["/c/1"]}
        self.index_lastmod = {"a": "2024-05-01", "b": "2024-05-01", "c": "2024-05-01"}
        self.not_modified: list[str] = []
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/index.xml", self._index)
        app.router.add_get("/{name}.xml", self._child)
        app.router.add_route("*", "/{tail:.*}", self._page)
        return app

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def _index(self, request: web.Request) -> web.Response:
        rows = "".join(
            f"<sitemap><loc>{self.base}/{n}.xml</loc><lastmod>{lm}</lastmod></sitemap>"
            for n, lm in self.index_lastmod.items()
        )
        return web.Response(
            text=f'<sitemapindex xmlns="{NS}">{rows}</sitemapindex>',
            content_type="application/xml",
        )

    async def _child(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        rows = "".join(
            f"<url><loc>{self.base}{p}</loc><lastmod>2024-04-01</lastmod></url>"
            for p in self.pages[name]
        )
        body = f'<urlset xmlns="{NS}">{rows}</urlset>'
        etag = '"' + hashlib.sha1(body.encode()).hexdigest()[:12] + '"'
        if request.headers.get("If-None-Match") == etag:
            self.not_modified.append(name)
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(text=body, content_type="application/xml", headers={"ETag": etag})

    async def _page(self, request: web.Request) -> web.Response:
        return web.Response(text="<html><title>x</title></html>", content_type="text/html")


async def _night(site: IndexSite, state: Path, out: Path) -> dict[str, dict[str, Any]]:
    argv = [
        "crawl", site.base + "/index.xml", "--state", str(state), "--format", "jsonl",
        "--output", str(out), "--no-progress", "--rate", "unlimited", "--fail-on", "never",
    ]  # fmt: skip
    await run_main(argv)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {
        r["url"]: r
        for r in records
        if r["type"] == "finding" and r["code"] in ("index-lastmod-frozen", "index-lastmod-churn")
    }


async def test_frozen_and_churn_across_nights_with_clean_controls(
    serve: Serve, tmp_path: Path
) -> None:
    site = IndexSite()
    site.base = b = await serve(site.app())
    state = tmp_path / "s.sqlite"
    assert await _night(site, state, tmp_path / "1.jsonl") == {}  # no previous night
    assert await _night(site, state, tmp_path / "2.jsonl") == {}  # nothing changed
    assert sorted(site.not_modified) == ["a", "b", "c"]  # carried: unchanged

    site.pages["a"].append("/a/3")  # a changed, its entry did not move: frozen
    site.index_lastmod["b"] = "2024-06-01"  # b's entry moved, b did not: churn
    site.pages["c"].append("/c/2")  # c changed and its entry moved: right
    site.index_lastmod["c"] = "2024-06-01"
    found = await _night(site, state, tmp_path / "3.jsonl")
    assert {url: f["code"] for url, f in found.items()} == {
        b + "/a.xml": "index-lastmod-frozen",
        b + "/b.xml": "index-lastmod-churn",
    }
    for f in found.values():
        assert f["sitemap"] == b + "/index.xml"
        assert f["line"] == 1  # the index is one line
        assert f["severity"] == "warning"
    assert await _night(site, state, tmp_path / "4.jsonl") == {}  # nothing changed again
    # an entry's <lastmod> from a day to a second is a move (the intervals differ) ...
    site.index_lastmod["b"] = "2024-06-01T02:00:00+02:00"
    assert set(await _night(site, state, tmp_path / "5.jsonl")) == {b + "/b.xml"}
    # ... but the same second written in another notation is not
    site.index_lastmod["b"] = "2024-06-01T00:00:00Z"
    assert await _night(site, state, tmp_path / "6.jsonl") == {}
