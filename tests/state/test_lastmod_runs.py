"""lastmod over time across two runs over loopback HTTP (RULES.md): a site whose pages
change between the runs, audited with --state and --content (or --page-checks)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.crawlkit import Serve
from tests.state.test_store import crawl_argv, report, run_main

PAGE = """<!doctype html><html><head><title>{title}</title>
<meta name="csrf-token" content="{token}"><link rel="stylesheet" href="/app.{asset}.css">
<script nonce="{token}">window.t = "{token}";</script>{dates}</head>
<body><nav><a href="/">Home</a></nav><main><h1>{title}</h1><p>{text}</p></main>
<div class="ad-slot">{ad}</div><input type="hidden" name="csrf" value="{token}">
<footer>Rendered {stamp}</footer></body></html>"""


@dataclass
class Page:
    text: str
    lastmod: str
    dates: str = ""
    etag: str | None = None  # answers If-None-Match with 304 when it matches
    status: int = 200  # another status: listed, but answered with this and no page


@dataclass
class MutatingSite:
    pages: dict[str, Page]
    night: int = 1
    base: str = ""
    hits: list[tuple[str, str]] = field(default_factory=list)  # (path, If-None-Match)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/sitemap.xml", self.sitemap)
        app.router.add_get("/robots.txt", self.no_robots)
        app.router.add_get("/{name}", self.page)
        return app

    async def no_robots(self, request: web.Request) -> web.Response:
        return web.Response(status=404)

    async def sitemap(self, request: web.Request) -> web.Response:
        urls = "".join(
            f"<url><loc>{self.base}/{name}</loc><lastmod>{p.lastmod}</lastmod></url>"
            for name, p in sorted(self.pages.items())
        )
        body = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        return web.Response(body=body, content_type="application/xml")

    async def page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        page = self.pages.get(name)
        asked = request.headers.get("If-None-Match", "")
        self.hits.append((name, asked))
        if page is None or page.status != 200:
            return web.Response(status=404 if page is None else page.status)
        headers = {"ETag": page.etag} if page.etag else {}
        if page.etag and asked == page.etag:
            return web.Response(status=304, headers=headers)
        n = self.night
        body = PAGE.format(
            title=name,
            text=page.text,
            dates=page.dates,
            token=f"tok{n}x{name}9f8e7d6c5b4a3f2e1d0c{n}",
            asset=f"{n}a{n}b{n}c4d5e6f7a8b{n}",
            ad=f"Buy product number {n * 7} today",
            stamp=f"2024-06-0{n} 12:0{n}:33 UTC",
        )
        return web.Response(body=body, content_type="text/html", headers=headers)


def _jsonld(date: str) -> str:
    data = {
        "@context": "https://schema.org",
        "@graph": [{"@type": "Article", "dateModified": date}],
    }
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def _site() -> MutatingSite:
    return MutatingSite(
        {
            "frozen": Page("The frozen page says one thing.", "2024-05-01"),
            "churn": Page("The churning page never changes.", "2024-05-01"),
            "both": Page("The honest page, first version.", "2024-05-01"),
            "same": Page("The untouched page.", "2024-05-01T10:00:00+00:00"),
            "far": Page("A page dated far from its lastmod.", "2024-05-01", _jsonld("2024-05-06")),
            "near": Page(
                "A page dated near its lastmod.",
                "2024-05-01",
                '<meta property="article:modified_time" content="2024-05-01T22:00:00Z">',
            ),
        }
    )


def _mutate(site: MutatingSite) -> None:
    site.night = 2  # every page's token, ad, asset hash and footer stamp change
    site.pages["frozen"].text = "The frozen page now says another thing."
    site.pages["churn"].lastmod = "2024-06-02"
    site.pages["both"].text = "The honest page, second version."
    site.pages["both"].lastmod = "2024-06-02"
    # the same instant written another way has not moved
    site.pages["same"].lastmod = "2024-05-01T12:00:00+02:00"


def _found(path: Path, prefix: str = "lastmod-") -> dict[tuple[str, str], str]:
    return {
        (r["code"], r["url"].rsplit("/", 1)[-1]): r["message"]
        for r in report(path)
        if r["type"] == "finding" and r["code"].startswith(prefix) and r.get("url")
    }


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--content", "--page-checks"])
async def test_two_runs_of_a_mutating_site(serve: Serve, tmp_path: Path, flag: str) -> None:
    site = _site()
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    target = site.base + "/sitemap.xml"
    await run_main(crawl_argv(target, state, first, flag))
    assert set(_found(first)) == {("lastmod-page-date", "far")}
    assert "JSON-LD dateModified says 2024-05-06" in _found(first)[("lastmod-page-date", "far")]
    assert set(site.pages) <= {name for name, _ in site.hits}  # every page fetched (GET)

    _mutate(site)
    await run_main(crawl_argv(target, state, second, flag))
    found = _found(second)
    assert set(found) == {
        ("lastmod-frozen", "frozen"),
        ("lastmod-churn", "churn"),
        ("lastmod-page-date", "far"),
    }
    assert "stayed 2024-05-01 (previous run: 2024-05-01)" in found[("lastmod-frozen", "frozen")]
    assert "moved from 2024-05-01 (previous run) to 2024-06-02" in found[("lastmod-churn", "churn")]
    severities = {r["severity"] for r in report(second) if r.get("code", "").startswith("lastmod-")}
    assert severities == {"warning"}


@pytest.mark.slow
async def test_a_304_is_unchanged_content(serve: Serve, tmp_path: Path) -> None:
    """A conditional request answered 304: no body, the earlier fingerprint stands."""
    site = MutatingSite(
        {
            "stamped": Page("Static text.", "2024-05-01", etag='"v1"'),
            "quiet": Page("Static text too.", "2024-05-01", etag='"q1"'),
        }
    )
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    target = site.base + "/sitemap.xml"
    await run_main(crawl_argv(target, state, tmp_path / "1.jsonl", "--content"))
    site.pages["stamped"].lastmod = "2024-06-02"  # a rebuild stamps it; the server knows better
    site.hits.clear()
    second = tmp_path / "2.jsonl"
    await run_main(crawl_argv(target, state, second, "--content"))
    assert sorted(site.hits) == [("quiet", '"q1"'), ("stamped", '"v1"')]  # both answered 304
    found = _found(second)
    assert set(found) == {("lastmod-churn", "stamped")}
    assert "answered 304 Not Modified" in found[("lastmod-churn", "stamped")]
    # a third run still compares with the fingerprint of the first (carried, not lost)
    site.pages["stamped"].lastmod = "2024-07-03"
    third = tmp_path / "3.jsonl"
    await run_main(crawl_argv(target, state, third, "--content"))
    assert set(_found(third)) == {("lastmod-churn", "stamped")}
    assert (
        "from 2024-06-02 (previous run) to 2024-07-03"
        in _found(third)[("lastmod-churn", "stamped")]
    )


async def test_an_old_state_gets_the_content_table(serve: Serve, tmp_path: Path) -> None:
    """A state written before the content table existed is migrated when opened."""
    site = MutatingSite({"one": Page("Text.", "2024-05-01")})
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    target = site.base + "/sitemap.xml"
    await run_main(crawl_argv(target, state, tmp_path / "1.jsonl"))
    with sqlite3.connect(state) as conn:
        conn.execute("DROP TABLE content")  # as an older version made it
    site.pages["one"].text = "Other text."
    assert await run_main(crawl_argv(target, state, tmp_path / "2.jsonl", "--content")) == 0
    with sqlite3.connect(state) as conn:
        rows: list[Any] = conn.execute("SELECT run, lastmod FROM content").fetchall()
    assert rows == [(2, "2024-05-01")]
