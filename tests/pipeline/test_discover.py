"""Relative `Sitemap:` lines in robots.txt (issue 16.3): resolved against the robots.txt
URL, said to be relative by `discover`, and a crawl over them ends with its summary."""

from __future__ import annotations

import asyncio
import sys

from audit.api import discover_async
from tests.crawlkit import TEXT, XML, Serve, Site, audit, urlset


def _site(base_holder: list[str]) -> Site:
    site = Site()

    async def sitemap(_request: object) -> object:
        from aiohttp import web

        return web.Response(text=urlset(base_holder[0] + "/a"), headers=XML)

    site.routes["/robots.txt"] = (
        200,
        TEXT,
        "User-agent: *\nAllow: /\nSitemap: /maps/sitemap.xml\nSitemap: other.xml\n",
    )
    site.routes["/maps/sitemap.xml"] = sitemap  # type: ignore[assignment]
    site.routes["/other.xml"] = sitemap  # type: ignore[assignment]
    site.routes["/a"] = (200, {"Content-Type": "text/html"}, "<html></html>")
    return site


async def test_crawl_over_relative_sitemap_lines_ends_with_a_summary(serve: Serve) -> None:
    holder: list[str] = []
    site = _site(holder)
    base = await serve(site)
    holder.append(base)
    run = await audit(base + "/")
    found = run.of("discovered")
    assert [(d["url"], d.get("relative")) for d in found] == [
        (base + "/maps/sitemap.xml", True),
        (base + "/other.xml", True),
    ]
    assert run.summary["type"] == "summary"
    assert "/maps/sitemap.xml" in site.paths("GET")
    assert "/other.xml" in site.paths("GET")


async def test_discover_says_the_lines_were_relative(serve: Serve) -> None:
    holder: list[str] = []
    base = await serve(_site(holder))
    holder.append(base)
    found = await discover_async(base + "/", timeout=3.0, retries=0)
    assert found.sitemaps[0] == {
        "type": "discovered",
        "url": base + "/maps/sitemap.xml",
        "source": "robots.txt",
        "relative": True,
    }


async def test_discover_command_text_says_relative(serve: Serve) -> None:
    holder: list[str] = []
    base = await serve(_site(holder))
    holder.append(base)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit", "discover", base + "/", "--retries", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert f"{base}/maps/sitemap.xml\t(from robots.txt, relative)" in lines


async def test_a_sitemap_line_that_is_no_http_url_is_a_finding(serve: Serve) -> None:
    site = Site()
    site.routes["/robots.txt"] = (200, TEXT, "Sitemap: ftp://files.test/s.xml\n")
    base = await serve(site)
    run = await audit(base + "/")
    [bad] = [f for f in run.findings("sitemap-not-found") if "ftp://" in f["message"]]
    assert bad["url"] == base + "/robots.txt"
    assert run.summary["type"] == "summary"
