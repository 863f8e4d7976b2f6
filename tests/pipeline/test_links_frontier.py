"""crawl --links through the run's one frontier (issue 27.1, issue 29.3), over real loopback
servers that stamp each request's arrival and answer: the pages the links lead to are
checked by the run's own workers, in their host's queue, so a host whose pages answer
slowly holds no worker while another host's pages wait, and --concurrency bounds every
request of a URL check in flight, listed and linked pages together."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

import audit.pipeline.links as links_module
from tests.crawlkit import HTML, XML, audit, urlset

SLOW_S = 1.0  # each linked page of the slow host answers after this long
SLOW_PAGES = 12
FAST_PAGES = 8
WORKERS = 4  # --concurrency
CAP = 2  # --max-per-host


@dataclass
class Stamped:
    """Every page request: (arrival, answer) monotonic times, by path. Robots.txt and
    sitemaps are left out: they are not URL checks."""

    name: str
    stamps: dict[str, list[float]] = field(default_factory=dict)
    log: list[tuple[str, float, float]] = field(default_factory=list)


def site(
    stamped: Stamped, shared: dict[str, int], *, delay: float, linked: int, first: float = 0.0
) -> web.Application:
    """`/listed` (the one page the sitemap lists, answering after `first`) links to `/p/0`
    .. `/p/{linked-1}`, which answer after `delay`; `shared` counts page requests in flight
    over both servers."""
    listed = "".join(f'<a href="/p/{i}">{i}</a>' for i in range(linked))

    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path == "/robots.txt":
            return web.Response(status=404)
        if path == "/sitemap.xml":
            return web.Response(headers=XML, text=urlset(f"{request.url.origin()}/listed"))
        arrived = time.monotonic()
        shared["now"] += 1
        shared["max"] = max(shared["max"], shared["now"])
        try:
            await asyncio.sleep(
                delay if path.startswith("/p/") else first if path == "/listed" else 0
            )
            body = listed if path == "/listed" else ""
            return web.Response(headers=HTML, text=f"<html><body>{body}</body></html>")
        finally:
            shared["now"] -= 1
            stamped.log.append((path, arrived, time.monotonic()))

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def linked(stamped: Stamped) -> list[tuple[float, float]]:
    return sorted((a, b) for path, a, b in stamped.log if path.startswith("/p/"))


@pytest.mark.slow
@pytest.mark.parametrize("bounds", [{}, {"FEED_MAX": 6, "HOST_OUT": 1}])
async def test_a_slow_host_s_linked_pages_do_not_delay_another_host_s(
    serve: Any, bounds: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bounds`: the crawl's own, or so small that the slow host's pages alone would fill
    what the crawl hands to the frontier at once (its pages then wait aside)."""
    for name, value in bounds.items():
        monkeypatch.setattr(links_module, name, value)
    shared = {"now": 0, "max": 0}
    slow, fast = Stamped("slow"), Stamped("fast")
    slow_base = await serve(site(slow, shared, delay=SLOW_S, linked=SLOW_PAGES))
    # the fast host's listed page answers last: the slow host's pages are found first
    fast_base = await serve(site(fast, shared, delay=0.0, linked=FAST_PAGES, first=0.3))
    run = await audit(
        [slow_base + "/sitemap.xml", fast_base + "/sitemap.xml"],
        links=True,
        rate=0.0,
        concurrency=WORKERS,
        max_per_host=CAP,
        timeout=10.0,
    )
    slow_pages, fast_pages = linked(slow), linked(fast)
    assert len(slow_pages) == SLOW_PAGES and len(fast_pages) == FAST_PAGES  # each once
    start = min(slow_pages[0][0], fast_pages[0][0])  # the first linked page asked, any host
    # the slow host's pages take SLOW_PAGES / CAP seconds at its cap...
    assert slow_pages[-1][1] - start >= SLOW_PAGES / CAP * SLOW_S * 0.9
    # ...while the other host's are all checked meanwhile, by the workers it does not hold:
    # before the slow host's third round of pages is even asked
    assert fast_pages[-1][1] < slow_pages[2 * CAP][0]
    # checked at once: fast pages asked while the slow host's first pages were in flight
    assert [a for a, _ in fast_pages if a < slow_pages[0][1]]
    # never more URL checks in flight than --concurrency, listed and linked together, and
    # never more than --max-per-host at one host
    assert shared["max"] <= WORKERS
    assert max_overlap(slow_pages) <= CAP
    by_url = {r["url"]: r for r in run.of("url")}
    assert by_url[fast_base + "/p/0"]["source"] == "links"
    assert run.summary["coverage"]["complete"] is True
    assert run.summary["coverage"]["unlisted"] == SLOW_PAGES + FAST_PAGES


def max_overlap(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = top = 0
    for _, step in edges:
        now += step
        top = max(top, now)
    return top
