"""The hook table and the chain (audit.pipeline.hooks), over real loopback HTTP: hooks are
asked in HOOK_ORDER's order whatever order they are given in (a caller's own after the
built-in ones), and a point that can stop the chain stops it only on `Done`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from audit.api import Audit
from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence
from audit.core.records import Entry, FetchResult, Finding, UrlResult
from audit.pipeline.context import RunContext, UrlJob
from audit.pipeline.hooks import (
    CALLER_ORDER,
    HOOK_ORDER,
    NEXT,
    Chain,
    Done,
    Hook,
    Next,
    order_of,
    ordered,
)
from tests.crawlkit import FAST, HTML, XML, Serve, Site, urlset

PAGE = (200, HTML, "<html><head><title>t</title></head><body>a page</body></html>")


async def two_pages(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\n"),
            "/sitemap.xml": (200, XML, urlset(f"{base}/a", f"{base}/b")),
            "/a": PAGE,
            "/b": PAGE,
        }
    )
    return site, base


def test_the_table_numbers_every_built_in_hook_once() -> None:
    numbers = list(HOOK_ORDER.values())
    assert len(set(numbers)) == len(numbers)
    assert all(n < CALLER_ORDER for n in numbers)
    # the orders the pipeline relies on (see the comments in the table)
    before = [("agents", "llms"), ("agents", "links"), ("render", "links"),
              ("agents", "intent"), ("lastmod", "state"), ("state", "budget")]  # fmt: skip
    for first, then in before:
        assert HOOK_ORDER[first] < HOOK_ORDER[then], (first, then)


def named(name: str, calls: list[str]) -> Hook:
    class Named(Hook):
        def judge(
            self, job: UrlJob, record: UrlResult, found: list[Finding], result: Any
        ) -> tuple[UrlResult, list[Finding]] | None:
            calls.append(name or "caller")
            return None

    Named.name = name
    return Named()


def test_ordered_sorts_by_number_and_keeps_a_callers_order() -> None:
    calls: list[str] = []
    first, second = named("", calls), named("", calls)
    state, deploy, ledger = (
        named("state", calls),
        named("deploy-stamp", calls),
        named("ledger", calls),
    )
    got = ordered([first, ledger, second, state, deploy])
    assert got == (deploy, state, ledger, first, second)
    assert order_of(first) == CALLER_ORDER and order_of(state) == HOOK_ORDER["state"]


async def test_a_run_asks_its_hooks_in_the_tables_order(serve: Serve) -> None:
    _, base = await two_pages(serve)
    calls: list[str] = []
    hooks = [
        named("", calls),
        named("ledger", calls),
        named("state", calls),
        named("render", calls),
    ]
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), hooks=lambda: hooks)
    await asyncio.wait_for(run.run(), timeout=50)
    assert calls == ["render", "state", "ledger", "caller"] * 2


class Stored(Hook):
    """Answers /a from evidence without a request (Done); says NEXT for /b."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.asked: list[str] = []

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        self.asked.append(job.url)
        if job.url != f"{self.base}/a":
            return NEXT
        result = FetchResult(job.url, job.url, 200, (("content-type", "text/html"),))
        return Done(Evidence(result, None, "carried"))


class Later(Hook):
    """Never asked for /a (the chain was done), asked for /b, and says NEXT."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        self.asked.append(job.url)
        return NEXT


async def test_stored_answer_done_stands_for_the_request_and_ends_the_chain(
    serve: Serve,
) -> None:
    site, base = await two_pages(serve)
    stored, later = Stored(base), Later()
    records: list[dict[str, Any]] = []
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), sinks=[records.append],
                hooks=lambda: [stored, later])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    run.finish()
    assert sorted(stored.asked) == [f"{base}/a", f"{base}/b"]
    assert later.asked == [f"{base}/b"]
    assert "/a" not in site.paths() and "/b" in site.paths()
    statuses = {r["url"]: r["status"] for r in records if r["type"] == "url"}
    assert statuses == {f"{base}/a": 200, f"{base}/b": 200}


class Holder(Hook):
    """Holds /a at delivery (Done) and passes it on at the end through the context."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.ctx: RunContext | None = None
        self.held: list[tuple[UrlJob, UrlResult, list[Finding], FetchResult | None]] = []

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        if job.url != f"{self.base}/a":
            return NEXT
        self.held.append((job, record.with_extra({**(record.extra or {}), "held": True}),
                          found, result))  # fmt: skip
        return Done(None)

    async def drain(self) -> None:
        assert self.ctx is not None
        for job, record, found, result in self.held:
            self.ctx.pass_on(self, job, record, found, result)


class Counter(Hook):
    def __init__(self) -> None:
        self.delivered: list[str] = []

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        self.delivered.append(record.url)
        return NEXT


async def test_deliver_done_holds_a_record_and_pass_on_resumes_after_the_holder(
    serve: Serve,
) -> None:
    _, base = await two_pages(serve)
    before, holder, after = Counter(), Holder(base), Counter()
    records: list[dict[str, Any]] = []
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), sinks=[records.append],
                hooks=lambda: [before, holder, after])  # fmt: skip
    await asyncio.wait_for(run.run(), timeout=50)
    run.finish()
    assert sorted(before.delivered) == [f"{base}/a", f"{base}/b"]
    assert after.delivered[-1] == f"{base}/a"  # only once it was passed on, after /b
    assert sorted(after.delivered) == [f"{base}/a", f"{base}/b"]
    urls = [r for r in records if r["type"] == "url"]
    assert [r["url"] for r in urls][-1] == f"{base}/a" and urls[-1]["held"] is True
    assert len(urls) == 2


def test_next_and_done_are_values() -> None:
    assert isinstance(NEXT, Next) and repr(NEXT) == "NEXT"
    assert Done(3) == Done(3) and Done(3).value == 3 and Done(None) != NEXT


class Entries(Hook):
    """Sees every parsed entry twice: one at a time (`entry`) and by the batch (`entries`)."""

    def __init__(self) -> None:
        self.one: list[tuple[str, str | None]] = []
        self.batched: list[tuple[str, str | None]] = []
        self.batches = 0

    def entry(self, source: str, entry: Entry) -> None:
        self.one.append((source, entry.loc))

    def entries(self, source: str, entries: Sequence[Entry]) -> None:
        self.batches += 1
        assert all(isinstance(e, Entry) for e in entries)  # never the parser's findings
        self.batched += [(source, e.loc) for e in entries]


async def test_the_entries_point_sees_each_entry_once_by_the_batch(serve: Serve) -> None:
    """A hook taking parsed entries a batch at a time sees what `entry` sees, in the same
    order, and never the parser's findings (an unknown element among the entries)."""
    site = Site()
    base = await serve(site)
    body = "".join(f"<url><loc>{base}/p{i}</loc></url><bogus/>" for i in range(300))
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, "User-agent: *\n"),
            "/sitemap.xml": (
                200,
                XML,
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' + body + "</urlset>",
            ),
        }
    )
    hook = Entries()
    run = Audit(base + "/sitemap.xml", CrawlConfig(**FAST), mode="validate", hooks=lambda: [hook])
    await asyncio.wait_for(run.run(), timeout=50)
    assert len(hook.one) == 300 and hook.batched == hook.one and 1 <= hook.batches <= 300
