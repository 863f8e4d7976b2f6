"""A generated site that answers conditional requests as a real server does, for the
night-equals-fresh property tests (issue 28).

`NightSite(seed)` draws, from the seed alone, a site of pages with every kind of answer a
night must judge again from stored evidence: content dates or a deploy stamp as
Last-Modified, `<lastmod>` behind, equal to or ahead of it, 404s, permanent and temporary
redirects, noindex headers and metas, canonicals elsewhere, pages without Last-Modified.
Every answer carries an ETag and Last-Modified (where the page has one) and a matching
`If-None-Match` / `If-Modified-Since` is answered `304 Not Modified` without the other
headers (RFC 9110 15.4.5 allows that), so a night's answers differ from the first's
exactly as a real server's do. Requests are counted server-side.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from aiohttp import web

__all__ = ["NightPage", "NightSite"]

DEPLOY = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)  # a deploy stamp: every file at once


@dataclass
class NightPage:
    path: str
    status: int = 200
    last_modified: datetime | None = None
    lastmod: str | None = None
    location: str | None = None  # a redirect's target path
    noindex_header: bool = False
    noindex_meta: bool = False
    canonical: str | None = None  # a path elsewhere
    title: str = ""


class NightSite:
    """A site of `n` pages drawn from `seed`; `deploy` stamps every Last-Modified."""

    def __init__(
        self, seed: int, *, n: int | None = None, deploy: bool | None = None, index: bool = False
    ) -> None:
        rnd = random.Random(seed)
        self.seed = seed
        # index: /sitemap.xml is an index of two child sitemaps (their <lastmod> never moves,
        # and they answer 304 to a conditional request: carried on later nights)
        self.index = index
        self.deploy = rnd.random() < 0.5 if deploy is None else deploy
        count = n if n is not None else rnd.randint(25, 70)
        self.pages: dict[str, NightPage] = {}
        self.hits: Counter[str] = Counter()
        self.not_modified: Counter[str] = Counter()
        self.base = ""
        for i in range(count):
            self.pages[f"/p/{i}"] = self._draw(rnd, i, count)

    def _draw(self, rnd: random.Random, i: int, count: int) -> NightPage:
        page = NightPage(f"/p/{i}", title=f"Page {i}")
        if self.deploy:
            page.last_modified = DEPLOY + timedelta(seconds=rnd.randint(0, 90))
        elif rnd.random() < 0.9:
            page.last_modified = datetime(2023, 1, 1, tzinfo=UTC) + timedelta(
                days=rnd.randint(0, 500), seconds=rnd.randint(0, 86399)
            )
        kind = rnd.random()
        if kind < 0.08:
            page.status = 404
        elif kind < 0.14:
            page.status = 301
            page.location = f"/p/{rnd.randrange(count)}"
        elif kind < 0.18:
            page.status = 302
            page.location = f"/p/{rnd.randrange(count)}"
        if page.status == 200:
            page.noindex_header = rnd.random() < 0.08
            page.noindex_meta = rnd.random() < 0.08
            if rnd.random() < 0.08:
                page.canonical = f"/p/{rnd.randrange(count)}"
        # <lastmod>: behind, equal to or ahead of the answer's date, or absent
        anchor = page.last_modified or datetime(2024, 1, 1, tzinfo=UTC)
        where = rnd.random()
        if where < 0.25:
            page.lastmod = None
        elif where < 0.5:
            page.lastmod = (anchor - timedelta(days=rnd.randint(3, 200))).strftime("%Y-%m-%d")
        elif where < 0.8:
            page.lastmod = anchor.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        else:
            page.lastmod = (anchor + timedelta(days=rnd.randint(3, 60))).strftime("%Y-%m-%d")
        return page

    # --- serving -----------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/sitemap.xml", self._root)
        app.router.add_get("/child-{n}.xml", self._child)
        app.router.add_route("*", "/p/{n}", self._page)
        return app

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

    async def _root(self, request: web.Request) -> web.Response:
        if not self.index:
            return self._urlset(request, list(self.pages.values()))
        rows = "".join(
            f"<sitemap><loc>{self.base}/child-{n}.xml</loc><lastmod>2024-06-0{n + 1}</lastmod>"
            "</sitemap>"
            for n in range(2)
        )
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}'
            "</sitemapindex>\n"
        )
        return web.Response(text=body, content_type="application/xml")

    async def _child(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        pages = [p for i, p in enumerate(self.pages.values()) if i % 2 == n]
        return self._urlset(request, pages)

    def _urlset(self, request: web.Request, pages: list[NightPage]) -> web.Response:
        rows = []
        for page in pages:
            lastmod = f"<lastmod>{page.lastmod}</lastmod>" if page.lastmod else ""
            rows.append(f"<url><loc>{self.base}{page.path}</loc>{lastmod}</url>")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "\n".join(rows)
            + "\n</urlset>\n"
        )
        etag = '"' + hashlib.sha1(body.encode()).hexdigest()[:16] + '"'
        if etag in request.headers.get("If-None-Match", ""):
            self.not_modified[request.path] += 1
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(text=body, content_type="application/xml", headers={"ETag": etag})

    def _body(self, page: NightPage) -> bytes:
        metas = '<meta name="robots" content="noindex">' if page.noindex_meta else ""
        canonical = (
            f'<link rel="canonical" href="{self.base}{page.canonical}">' if page.canonical else ""
        )
        text = " ".join(f"word{(self.seed + j) % 97}" for j in range(60))
        return (
            f"<!doctype html><html><head><title>{page.title}</title>{metas}{canonical}"
            f"</head><body><h1>{page.title}</h1><p>{text}</p></body></html>"
        ).encode()

    async def _page(self, request: web.Request) -> web.StreamResponse:
        page = self.pages.get(request.path)
        self.hits[request.path] += 1
        if page is None or page.status == 404:
            return web.Response(status=404, text="<h1>Not found</h1>", content_type="text/html")
        if page.location is not None:
            raise (
                web.HTTPFound(page.location)
                if page.status == 302
                else web.HTTPMovedPermanently(page.location)
            )
        body = self._body(page)
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        headers = {"ETag": etag}
        if page.last_modified is not None:
            headers["Last-Modified"] = format_datetime(page.last_modified, usegmt=True)
        if page.noindex_header:
            headers["X-Robots-Tag"] = "noindex"
        if self._unchanged(request, etag, page.last_modified):
            self.not_modified[request.path] += 1
            # RFC 9110 15.4.5: the validators may be repeated, the rest need not be
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, headers=headers, content_type="text/html")

    @staticmethod
    def _unchanged(request: web.Request, etag: str, modified: datetime | None) -> bool:
        asked = request.headers.get("If-None-Match")
        if asked is not None:
            return etag in [t.strip() for t in asked.split(",")]
        since = request.headers.get("If-Modified-Since")
        if since is None or modified is None:
            return False
        try:
            return modified.replace(microsecond=0) <= parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False
