"""The RunContext a feature is handed (audit.pipeline.context), over real loopback HTTP:
what it reads of the run (config, listed URLs, counters, notes), what it may do (the run's
client and robots.txt, a peer of another type, a hookless context of its own), and that it
is never the Auditor."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from audit.api import Audit
from audit.core.config import CrawlConfig
from audit.core.records import Finding, UrlResult
from audit.pipeline.auditor import Auditor
from audit.pipeline.context import RunContext, SitemapJob, UrlJob, work_through
from audit.pipeline.hooks import NEXT, Chain, Hook
from audit.pipeline.recorder import Recorder
from tests.crawlkit import FAST, HTML, XML, Serve, Site, urlset

PAGE = (200, HTML, "<html><head><title>t</title></head><body>a page</body></html>")


async def small_site(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow: /no\n"),
            "/sitemap.xml": (200, XML, urlset(f"{base}/a", f"{base}/b")),
            "/a": PAGE,
            "/b": PAGE,
            "/unlisted": PAGE,
        }
    )
    return site, base


class Looker(Hook):
    """Reads the run through its context and notes what it saw."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.ctx: RunContext | None = None
        self.seen: dict[str, Any] = {}

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: Any
    ) -> Chain[None]:
        self.seen.setdefault("delivered", []).append(record.url)
        return NEXT

    async def drain(self) -> None:
        ctx = self.ctx
        assert ctx is not None
        self.seen["listed"] = sorted(u for u in (f"{self.base}/a", f"{self.base}/b",
                                                 f"{self.base}/c") if u in ctx.listed)  # fmt: skip
        self.seen["admitted"] = ctx.state.admitted
        policy = await ctx.robots_for(f"{self.base}/no")
        self.seen["allowed"] = policy.allowed(f"{self.base}/no")
        answer = await ctx.client.fetch(f"{self.base}/unlisted")
        self.seen["status"] = answer.status
        ctx.notes["looked"] = len(self.seen["delivered"])


def test_a_sitemap_job_is_named_in_records_by_its_public_url_else_its_url(
    tmp_path: Any,
) -> None:
    local = tmp_path / "sitemap.xml"
    public = "https://example.com/sitemap.xml"
    on_disk = SitemapJob(str(local), None, None, (), local=local, public_url=public)
    assert on_disk.record_url == public  # --base-url: the file stands for that URL
    assert SitemapJob(str(local), None, None, (), local=local).record_url == str(local)
    assert SitemapJob(public, None, None, ()).record_url == public


async def test_a_hook_sees_the_run_through_its_context(serve: Serve) -> None:
    site, base = await small_site(serve)
    looker = Looker(base)
    records: list[dict[str, Any]] = []
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), sinks=[records.append],
                hooks=lambda: [looker])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    summary = run.finish().summary
    ctx = looker.ctx
    assert type(ctx) is RunContext
    assert not isinstance(ctx, Auditor)
    assert not hasattr(ctx, "hooks") and not hasattr(ctx, "_frontier")
    assert ctx.agent_token == "sitemap-audit"
    assert ctx.config.rate == FAST["rate"]
    assert sorted(looker.seen["delivered"]) == [f"{base}/a", f"{base}/b"]
    assert looker.seen["listed"] == [f"{base}/a", f"{base}/b"]
    assert looker.seen["admitted"] == 2
    assert looker.seen["allowed"] is False
    assert looker.seen["status"] == 200
    assert site.paths().count("/unlisted") == 1  # the context's client sent it
    assert summary["looked"] == 2  # the context's notes are the summary's
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.config = CrawlConfig()  # type: ignore[misc]


class Other(Hook):
    pass


class Finder(Hook):
    def __init__(self) -> None:
        self.found: list[object] = []

    def attach(self, ctx: RunContext) -> None:
        self.found = [ctx.peer(Other), ctx.peer(Looker)]


async def test_peer_is_the_runs_feature_of_that_type(serve: Serve) -> None:
    _, base = await small_site(serve)
    other, finder = Other(), Finder()
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), mode="validate",
                hooks=lambda: [finder, other])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    assert finder.found == [other, None]


class Afterwards(Hook):
    """Checks an unlisted URL after the listed ones, on a context of its own."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.ctx: RunContext | None = None
        self.got: list[Any] = []

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx

    async def drain(self) -> None:
        assert self.ctx is not None
        quiet = Recorder([])
        async with self.ctx.alone(quiet) as alone:
            assert alone is not self.ctx and alone.listed is not self.ctx.listed
            for path in ("/unlisted", "/no"):
                job = UrlJob(self.base + path, "", None, None)
                self.got.append(await alone.check_unlisted(job))


async def test_alone_checks_a_url_without_the_runs_hooks(serve: Serve) -> None:
    site, base = await small_site(serve)
    after = Afterwards(base)
    records: list[dict[str, Any]] = []
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), sinks=[records.append],
                hooks=lambda: [after])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    run.finish()
    (result, verdict), (blocked, unheld) = after.got
    found, record, held = verdict.findings, verdict.record, unheld.record
    assert result is not None and result.status == 200 and record.robots == "allowed"
    assert found == []
    assert blocked is None and held.robots == "blocked"  # robots.txt first, never sent
    assert "/no" not in site.paths()
    # nothing it checked reached the run's report
    assert f"{base}/unlisted" not in [r.get("url") for r in records if r["type"] == "url"]


async def test_work_through_takes_each_item_once_in_order_with_at_most_n_tasks() -> None:
    """Every item is worked once, started in the given order, by no more tasks than asked
    (at least one); no items start no task."""
    started: list[int] = []
    running = peak = 0

    async def work(item: int) -> None:
        nonlocal running, peak
        started.append(item)
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1

    await work_through(range(10), work, 3)
    assert started == list(range(10))
    assert peak == 3
    started.clear()
    peak = 0
    await work_through([1, 2], work, 0)  # 0 workers asked: one all the same
    assert started == [1, 2] and peak == 1
    await work_through([], work, 5)
    assert started == [1, 2]
