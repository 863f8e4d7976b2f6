"""RULES.md robots-unreachable: one error per host that names the cause and counts the
listed URLs it held back; those URLs say "robots": "unreachable" and are not requested,
and none of them is reported one by one as url-robots-blocked."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from tests.crawlkit import HTML, TEXT, XML, Site, audit, index, urlset


async def test_one_finding_per_host_with_the_urls_it_held_back(serve: Any) -> None:
    down, up = Site(), Site()
    down_base, up_base = await serve(down), await serve(up)
    pages = [f"{down_base}/p{i}" for i in range(30)]
    down.routes = {
        "/robots.txt": (503, TEXT, "maintenance"),
        "/sitemap.xml": (200, XML, urlset(*pages)),
        **{f"/p{i}": (200, HTML, "") for i in range(30)},
    }
    up.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /private\n"),
        "/sitemap.xml": (200, XML, urlset(f"{up_base}/ok", f"{up_base}/private")),
        "/ok": (200, HTML, ""),
    }
    root = Site(
        routes={
            "/index.xml": (200, XML, index(f"{down_base}/sitemap.xml", f"{up_base}/sitemap.xml"))
        }
    )
    root_base = await serve(root)
    run = await audit(f"{root_base}/index.xml")
    (unreachable,) = run.findings("robots-unreachable")
    assert unreachable["severity"] == "error"
    assert unreachable["url"] == f"{down_base}/robots.txt"
    assert "HTTP 503" in unreachable["message"] and "30 listed URLs" in unreachable["message"]
    assert all(run.url(p)["robots"] == "unreachable" for p in pages)
    assert not [p for p in down.paths() if p.startswith("/p")]  # never requested
    # the other host's own block is still reported one by one
    (blocked,) = run.findings("url-robots-blocked")
    assert blocked["url"] == f"{up_base}/private"
    assert run.url(f"{up_base}/ok")["status"] == 200


async def test_a_robots_txt_that_never_answers_names_the_timeout(serve: Any) -> None:
    site = Site()
    base = await serve(site)

    async def hang(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(30)
        return web.Response(status=200)

    site.routes = {
        "/robots.txt": hang,
        "/sitemap.xml": (200, XML, urlset(f"{base}/a", f"{base}/b")),
    }
    run = await audit(f"{base}/sitemap.xml", timeout=0.5, retries=0)
    (unreachable,) = run.findings("robots-unreachable")
    assert "2 listed URLs" in unreachable["message"]
    assert "url-robots-blocked" not in run.codes()
    assert {run.url(f"{base}/a")["robots"], run.url(f"{base}/b")["robots"]} == {"unreachable"}
