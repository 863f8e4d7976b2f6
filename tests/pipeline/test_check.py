"""The standard check of a listed URL (audit.pipeline.check.UrlChecker) over real
loopback HTTP: robots.txt first (a blocked URL is never requested), the request and the
URL checks, the verdict through the hooks to the recorder; --rewrite's origin; an unlisted
URL checked the same way without the hooks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, UrlResult
from audit.http import HttpClient
from audit.http.robots import RobotsCache
from audit.pipeline.chain import HookChain
from audit.pipeline.check import UrlChecker
from audit.pipeline.context import RunState, UrlJob
from audit.pipeline.hooks import Hook
from audit.pipeline.recorder import Recorder
from audit.rules.validator import HreflangGraph
from tests.crawlkit import FAST, HTML, Serve, Site

PAGE = (200, HTML, "<html><head><title>t</title></head><body>a page</body></html>")


class Judged(Hook):
    def __init__(self) -> None:
        self.judged: list[tuple[str, int | None]] = []

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        self.judged.append((job.url, result.status if result is not None else None))
        return None


async def checked(serve: Serve, config: CrawlConfig, *paths: str) -> tuple[Site, str, Any]:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /no\n"),
            "/ok": PAGE,
            "/gone": (404, HTML, "no"),
            "/no": PAGE,
        }
    )
    records: list[dict[str, Any]] = []
    rec = Recorder([records.append])
    judged = Judged()
    chain = HookChain([judged], rec)
    state = RunState()
    checker = UrlChecker(config, rec, chain, state, agent_token="sitemap-audit",
                         now=datetime.now(UTC), hreflang=HreflangGraph())  # fmt: skip
    async with HttpClient(config) as client:
        checker.attach(client, RobotsCache(client, config.user_agent))
        for path in paths:
            await checker.check_via(UrlJob(base + path, base + "/s.xml", 3, None))
        unlisted = await checker.check_unlisted(UrlJob(base + "/ok", "", None, None))
    return site, base, (records, judged, unlisted, state)


async def test_robots_first_then_the_request_and_the_checks(serve: Serve) -> None:
    site, base, (records, judged, unlisted, state) = await checked(
        serve, CrawlConfig(**FAST), "/ok", "/gone", "/no"
    )
    urls = {r["url"]: r for r in records if r["type"] == "url"}
    assert urls[base + "/ok"]["status"] == 200 and urls[base + "/ok"]["line"] == 3
    assert urls[base + "/gone"]["status"] == 404
    assert urls[base + "/no"]["robots"] == "blocked"
    codes = {(r["code"], r["url"]) for r in records if r["type"] == "finding"}
    assert ("url-not-found", base + "/gone") in codes
    assert ("url-robots-blocked", base + "/no") in codes
    assert "/no" not in site.paths()
    assert site.paths().count("/robots.txt") == 1  # one robots.txt per host
    assert judged.judged == [(base + "/ok", 200), (base + "/gone", 404), (base + "/no", None)]
    result, verdict = unlisted  # no hook, nothing delivered
    found, record = verdict.findings, verdict.record
    assert (
        result is not None and result.status == 200 and found == [] and record.robots == "allowed"
    )
    assert len(judged.judged) == 3 and len(urls) == 3
    assert state.hosts_reported  # the host's robots.txt was looked at, and reported once


async def test_a_rewritten_url_is_checked_at_its_origin_and_named_as_listed(
    serve: Serve,
) -> None:
    listed = "https://www.example.test"
    site = Site()
    staging = await serve(site)
    site.routes.update({"/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\n"),
                        "/gone": (404, HTML, "no")})  # fmt: skip
    records: list[dict[str, Any]] = []
    rec = Recorder([records.append])
    config = CrawlConfig(**FAST, rewrites=((listed, staging),))
    checker = UrlChecker(config, rec, HookChain([], rec), RunState(), agent_token="sitemap-audit",
                         now=datetime.now(UTC), hreflang=HreflangGraph())  # fmt: skip
    async with HttpClient(config) as client:
        checker.attach(client, RobotsCache(client, config.user_agent))
        await checker.check_via(UrlJob(listed + "/gone", listed + "/s.xml", 1, None))
    (url,) = [r for r in records if r["type"] == "url"]
    assert url["url"] == listed + "/gone" and url["checked_url"] == staging + "/gone"
    (found,) = [r for r in records if r.get("code") == "url-not-found"]
    assert found["url"] == listed + "/gone" and f"(checked at {staging}/gone)" in found["message"]
    assert "/gone" in site.paths()  # requested on staging, never on the listed origin
