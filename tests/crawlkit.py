"""Helpers for end-to-end tests: tiny sites with inline handlers, and a way to
run the real pipeline against them in-process and collect its records."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from audit.api import Audit
from audit.core.config import CrawlConfig

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# The `serve` fixture of tests/conftest.py: serve(site_or_app, **server_kwargs) -> base URL.
Serve = Callable[..., Awaitable[str]]

FAST = {"timeout": 3.0, "retries": 2, "backoff_base": 0.01, "backoff_cap": 0.05, "rate": 1000.0}


@dataclass
class Hit:
    method: str
    path: str
    t: float
    headers: dict[str, str]


@dataclass
class Site:
    """Routes by path; every request logged; in-flight requests counted."""

    routes: dict[str, Handler | tuple[int, dict[str, str], bytes | str]] = field(
        default_factory=dict
    )
    hits: list[Hit] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(
            Hit(request.method, request.path_qs, time.monotonic(), dict(request.headers))
        )
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            route = self.routes.get(request.path_qs) or self.routes.get(request.path)
            if route is None:
                return web.Response(status=404, text="not found")
            if callable(route):
                return await route(request)
            status, headers, body = route
            if request.method == "HEAD":
                return web.Response(status=status, headers=headers)
            data = body.encode() if isinstance(body, str) else body
            return web.Response(status=status, headers=headers, body=data)
        finally:
            self.in_flight -= 1

    def paths(self, method: str | None = None) -> list[str]:
        return [h.path for h in self.hits if method is None or h.method == method]


def urlset(*locs: str, extra: str = "") -> str:
    body = "".join(f"<url><loc>{loc}</loc>{extra}</url>\n" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n"
    )


def index(*locs: str) -> str:
    body = "".join(f"<sitemap><loc>{loc}</loc></sitemap>\n" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        + body
        + "</sitemapindex>\n"
    )


XML = {"Content-Type": "application/xml"}
HTML = {"Content-Type": "text/html; charset=utf-8"}
TEXT = {"Content-Type": "text/plain"}


@dataclass
class HeldSite:
    """A site whose sitemap lists `n` pages, every one answering 404; the pages after the
    first wait until `gate` is set, and `held` is set when a crawl waits on one (it is
    then half-way, whatever the machine's speed)."""

    n: int
    base: str = ""
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    held: asyncio.Event = field(default_factory=asyncio.Event)

    async def serve(self, serve: Serve) -> HeldSite:
        site = Site()
        self.base = await serve(site)
        site.routes["/sitemap.xml"] = (200, XML, urlset(*self.pages()))
        for i in range(self.n):
            site.routes[f"/p/{i}"] = self._page
        return self

    def pages(self) -> list[str]:
        return [f"{self.base}/p/{i}" for i in range(self.n)]

    async def _page(self, request: web.Request) -> web.StreamResponse:
        if request.path != "/p/0" and not self.gate.is_set():
            self.held.set()
            await self.gate.wait()
        return web.Response(status=404, headers=HTML, text="gone")


@dataclass
class Run:
    records: list[dict[str, Any]]
    outcome: dict[str, Any]

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["type"] == type_]

    def codes(self) -> list[str]:
        return [r["code"] for r in self.of("finding")]

    def findings(self, code: str) -> list[dict[str, Any]]:
        return [r for r in self.of("finding") if r["code"] == code]

    def url(self, url: str) -> dict[str, Any]:
        matches = [r for r in self.of("url") if r["url"] == url]
        assert len(matches) == 1, f"{url}: {len(matches)} url records"
        return matches[0]

    @property
    def summary(self) -> dict[str, Any]:
        return self.of("summary")[-1]


async def audit(target: str, mode: str = "crawl", *, deadline: float = 50, **cfg: Any) -> Run:
    """Run the real pipeline (real HTTP) through the front door and collect its records."""
    options = {**FAST, **cfg}
    records: list[dict[str, Any]] = []
    run = Audit(target, CrawlConfig(**options), mode=mode, sinks=[records.append])
    await asyncio.wait_for(run.run(), timeout=deadline)
    run.finish()
    outcome = run.outcomes[0]
    return Run(records, outcome)
