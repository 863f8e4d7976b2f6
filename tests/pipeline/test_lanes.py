"""One host's trouble never stalls the others (issue 22.2): a host that answers 429 with
Retry-After parks its own URLs, and the workers keep serving the healthy host."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from audit.pipeline.lanes import PARK_MAX, Lanes
from tests.crawlkit import HTML, TEXT, XML, Site, audit, index, urlset


@pytest.mark.slow
async def test_a_backed_off_host_never_holds_the_healthy_ones_back(serve: Any) -> None:
    slow, healthy = Site(), Site()
    slow_base, healthy_base = await serve(slow), await serve(healthy)
    b_pages = [f"{healthy_base}/b{i}" for i in range(1000)]

    def healthy_seen() -> int:
        return sum(1 for p in healthy.paths() if p.startswith("/b"))

    async def busy(request: web.Request) -> web.StreamResponse:
        # 429 for as long as the healthy host has not had all its pages: without lanes the
        # workers wait on this host's Retry-After and the run never gets there (the test's
        # deadline fails it); with lanes the healthy host is served meanwhile.
        if healthy_seen() < len(b_pages):
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(status=200, headers=HTML)

    slow.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*[f"{slow_base}/a{i}" for i in range(40)])),
        **{f"/a{i}": busy for i in range(40)},
    }
    healthy.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*b_pages)),
        **{f"/b{i}": (200, HTML, "") for i in range(1000)},
    }
    root = Site(
        routes={
            "/index.xml": (
                200,
                XML,
                index(f"{slow_base}/sitemap.xml", f"{healthy_base}/sitemap.xml"),
            )
        }
    )
    root_base = await serve(root)
    run = await audit(f"{root_base}/index.xml", retries=5, concurrency=16, deadline=45)
    assert all(run.url(p)["status"] == 200 for p in b_pages)
    assert healthy_seen() == len(b_pages)  # each healthy page asked once (HEAD answered 200)
    for i in range(40):  # every URL of the busy host still has exactly one record
        run.url(f"{slow_base}/a{i}")


def test_a_parked_host_always_has_a_worker_to_take_its_jobs() -> None:
    lanes: Lanes[str] = Lanes()
    lanes.enter("a")
    lanes.enter("a")
    assert lanes.park("a", "job1", 2) and lanes.park("a", "job2", 2)
    assert not lanes.park("b", "other", 2)  # a host with room runs at once
    assert not lanes.park("a", "free", None)  # no limit: never parked
    assert lanes.ready_job() is None  # nobody left host a yet
    lanes.leave("a")
    assert lanes.ready_job() == "job1"
    lanes.leave("a")
    assert lanes.ready_job() == "job2" and lanes.parked == 0


def test_parking_is_bounded() -> None:
    lanes: Lanes[int] = Lanes()
    lanes.enter("a")
    parked = sum(lanes.park("a", i, 1) for i in range(PARK_MAX + 5))
    assert parked == PARK_MAX and lanes.parked == PARK_MAX
