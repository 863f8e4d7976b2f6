"""Expansion (audit.pipeline.expand.Expander) over real loopback HTTP: an index's children
read once, a loop reported and not followed, every listed URL handed to `admit` with its
sitemap and line, a sitemap excluded by --exclude-sitemap not fetched, and the listing
done when nothing is pending."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from audit.core.config import CrawlConfig
from audit.core.records import Entry, Finding
from audit.http import HttpClient
from audit.http.rewrite import Rewriter
from audit.http.robots import RobotsCache
from audit.pipeline.chain import HookChain
from audit.pipeline.context import RunState, SitemapJob
from audit.pipeline.expand import Expander
from audit.pipeline.progress import NO_PROGRESS
from audit.pipeline.recorder import Recorder
from audit.rules.validator import HreflangGraph
from tests.crawlkit import FAST, XML, Serve, Site, index, urlset


async def test_an_index_and_its_children_are_read_once(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\n"),
            "/index.xml": (
                200,
                XML,
                index(f"{base}/a.xml", f"{base}/index.xml", f"{base}/skip.xml", f"{base}/a.xml"),
            ),
            "/a.xml": (200, XML, urlset(f"{base}/p1", f"{base}/p2")),
            "/skip.xml": (200, XML, urlset(f"{base}/p3")),
        }
    )
    records: list[dict[str, Any]] = []
    rec = Recorder([records.append])
    config = CrawlConfig(**FAST, exclude_sitemap=("skip",))
    admitted: list[tuple[str, str | None, int]] = []

    async def admit(source: str, item: Entry, loc: str, found: list[Finding]) -> None:
        admitted.append((source, loc, item.line))

    state = RunState()
    async with HttpClient(config) as client:
        robots = RobotsCache(client, config.user_agent)
        expander = Expander(config, rec, HookChain([], rec), state, mode="crawl",
                            progress=NO_PROGRESS, now=datetime.now(UTC),
                            agent_token="sitemap-audit", hreflang=HreflangGraph(),
                            on_entry=None, on_sitemap=None, rewrite=Rewriter(()),
                            robots_for=robots.get, admit=admit, client=lambda: client,
                            robots=lambda: robots)  # fmt: skip
        expander.schedule(SitemapJob(f"{base}/index.xml", None, None, ()))
        expander.add_pending(0)

        async def closer() -> None:
            await expander.done.wait()
            expander.stop(2)

        await asyncio.wait_for(asyncio.gather(expander.run(), expander.run(), closer()), 30)
    assert admitted == [(f"{base}/a.xml", f"{base}/p1", 3), (f"{base}/a.xml", f"{base}/p2", 4)]
    assert site.paths().count("/a.xml") == 1 and "/skip.xml" not in site.paths()
    read = sorted(r["url"] for r in records if r["type"] == "sitemap")
    assert read == [f"{base}/a.xml", f"{base}/index.xml"]
    assert [r["code"] for r in records if r["type"] == "finding"].count("index-loop") == 1
    assert state.excluded_sitemaps == 1
    assert f"{base}/p1" in expander.seen and f"{base}/p3" not in expander.seen
    assert state.target_sitemaps == {0: 2}


async def test_a_wrong_content_type_is_judged_once_the_body_shows_what_it_is(
    serve: Serve,
) -> None:
    """sitemap-content-type for a sitemap (or a body read to its end) served as JSON, once;
    none for an empty body, which shows nothing to judge."""
    site = Site()
    base = await serve(site)
    json = {"Content-Type": "application/json"}
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\n"),
            "/index.xml": (200, XML, index(*(f"{base}/{n}.xml" for n in ("a", "empty", "text")))),
            "/a.xml": (200, json, urlset(f"{base}/p1")),
            "/empty.xml": (200, json, ""),
            "/text.xml": (200, json, "not a sitemap"),
        }
    )
    records: list[dict[str, Any]] = []
    rec = Recorder([records.append])
    config = CrawlConfig(**FAST)

    async def admit(source: str, item: Entry, loc: str, found: list[Finding]) -> None:
        pass

    async with HttpClient(config) as client:
        robots = RobotsCache(client, config.user_agent)
        expander = Expander(config, rec, HookChain([], rec), RunState(), mode="crawl",
                            progress=NO_PROGRESS, now=datetime.now(UTC),
                            agent_token="sitemap-audit", hreflang=HreflangGraph(),
                            on_entry=None, on_sitemap=None, rewrite=Rewriter(()),
                            robots_for=robots.get, admit=admit, client=lambda: client,
                            robots=lambda: robots)  # fmt: skip
        expander.schedule(SitemapJob(f"{base}/index.xml", None, None, ()))
        expander.add_pending(0)

        async def closer() -> None:
            await expander.done.wait()
            expander.stop(1)

        await asyncio.wait_for(asyncio.gather(expander.run(), closer()), 30)
    typed = sorted(
        r["url"] for r in records if r["type"] == "finding" and r["code"] == "sitemap-content-type"
    )
    assert typed == [f"{base}/a.xml", f"{base}/text.xml"]
    read = {r["url"] for r in records if r["type"] == "sitemap"}
    assert f"{base}/empty.xml" in read  # read (and empty), its type not judged
