"""A site that publishes /sitemap.xml and its gzip copy /sitemap.xml.gz (MkDocs does)
has one sitemap: crawl audits it once, so its URLs are not all loc-duplicate; the
`discover` command still lists both."""

from __future__ import annotations

import gzip
from typing import Any

from audit.api import discover_async
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset


async def test_the_gzip_copy_of_sitemap_xml_is_not_audited_twice(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    body = urlset(f"{base}/", f"{base}/guide/")
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, body),
        "/sitemap.xml.gz": (
            200,
            {"Content-Type": "application/gzip"},
            gzip.compress(body.encode()),
        ),
        "/": (200, HTML, ""),
        "/guide/": (200, HTML, ""),
    }
    run = await audit(f"{base}/")
    assert [s["url"] for s in run.of("sitemap")] == [f"{base}/sitemap.xml"]
    assert not run.findings("loc-duplicate")
    assert "/sitemap.xml.gz" not in site.paths()
    found = await discover_async(f"{base}/", rate=1000.0)
    assert [d["url"] for d in found.sitemaps] == [f"{base}/sitemap.xml", f"{base}/sitemap.xml.gz"]


async def test_a_gzip_sitemap_alone_is_still_found(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    body = urlset(f"{base}/")
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml.gz": (
            200,
            {"Content-Type": "application/gzip"},
            gzip.compress(body.encode()),
        ),
        "/": (200, HTML, ""),
    }
    run = await audit(f"{base}/")
    assert [s["url"] for s in run.of("sitemap")] == [f"{base}/sitemap.xml.gz"]
