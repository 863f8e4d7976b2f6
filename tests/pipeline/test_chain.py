"""The run's hooks point by point (audit.pipeline.chain.HookChain): only the hooks that do
something at a point are asked, in HOOK_ORDER's order, and a chain that can stop stops at
the first Done; the delivery of a verdict goes judge hooks -> deliver hooks -> recorder."""

from __future__ import annotations

from typing import Any

from audit.core.evidence import Evidence
from audit.core.records import Entry, FetchResult, Finding, UrlResult
from audit.http import StreamResponse
from audit.pipeline.chain import HookChain
from audit.pipeline.context import SitemapJob, UrlJob
from audit.pipeline.hooks import NEXT, Chain, Done, Hook
from audit.pipeline.recorder import Recorder

URL = "https://example.test/a"


def recorder() -> tuple[Recorder, list[dict[str, Any]]]:
    records: list[dict[str, Any]] = []
    return Recorder([records.append]), records


def answer(status: int = 200) -> FetchResult:
    return FetchResult(URL, URL, status)


def test_a_chain_without_hooks_asks_nobody() -> None:
    rec, records = recorder()
    chain = HookChain([], rec)
    assert chain.entries(None) is None
    own = lambda source, entry: None  # noqa: E731
    assert chain.entries(own) is own  # the caller's alone: no wrapper per entry
    assert not (chain.before or chain.stored or chain.stands or chain.bodies)
    assert chain.keeps_evidence is False
    job = UrlJob(URL, "s.xml", 1, None)
    assert chain.stored_answer(job) is None and chain.request_headers(job) is None
    chain.deliver_checked(job, UrlResult.unrequested(URL, "s.xml", 1, None, "allowed"), [], None)
    assert [r["type"] for r in records] == ["url"]


class Stored(Hook):
    def __init__(self, value: Evidence | None, log: list[str], tag: str) -> None:
        self.value, self.log, self.tag = value, log, tag

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        self.log.append(self.tag)
        return Done(self.value) if self.value is not None else NEXT

    def request_headers(self, job: UrlJob) -> dict[str, str] | None:
        return {self.tag: "1"}


def test_the_first_done_ends_a_chain_and_headers_merge() -> None:
    log: list[str] = []
    stored = Evidence(answer())
    hooks = [
        Stored(None, log, "a"),
        Stored(stored, log, "b"),
        Stored(Evidence(answer(500)), log, "c"),
    ]
    chain = HookChain(hooks, recorder()[0])
    job = UrlJob(URL, "s.xml", 1, None)
    assert chain.keeps_evidence is True
    assert chain.stored_answer(job) is stored
    assert log == ["a", "b"]
    assert chain.request_headers(job) == {"a": "1", "b": "1", "c": "1"}


class Judge(Hook):
    name = "agents"

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        return record.with_extra({**(record.extra or {}), "judged": True}), found


class Keep(Hook):
    name = "state"

    def __init__(self) -> None:
        self.kept: list[UrlResult] = []

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        self.kept.append(record)
        return Done(None) if job.url.endswith("/kept") else NEXT


def test_a_verdict_is_judged_then_delivered_once() -> None:
    rec, records = recorder()
    keep = Keep()
    chain = HookChain([keep, Judge()], rec)  # the table puts the judge first
    alternates: list[dict[str, str | None]] = [{"hreflang": "de", "href": URL + "?de"}]
    job = UrlJob(URL, "s.xml", 1, None, alternates=alternates)
    chain.deliver_checked(job, UrlResult.unrequested(URL, "s.xml", 1, None, "allowed"), [], None)
    kept = UrlJob(URL + "/kept", "s.xml", 2, None)
    chain.deliver_checked(kept, UrlResult.unrequested(kept.url, "s.xml", 2, None, "allowed"), [], None)  # fmt: skip
    assert [r.extra for r in keep.kept] == [
        {"alternates": alternates, "judged": True},
        {"judged": True},
    ]
    assert [r["url"] for r in records] == [URL]  # the kept one is the hook's
    assert records[0]["judged"] is True and records[0]["alternates"] == alternates
    chain.pass_on(keep, kept, keep.kept[1], [], None)  # on after the holder: the recorder
    assert [r["url"] for r in records] == [URL, kept.url]


class Carrier(Hook):
    def __init__(self, chain_ref: list[HookChain]) -> None:
        self.chain_ref = chain_ref
        self.seen_carrying: list[set[str]] = []
        self.carried: list[str] = []
        self.entries: list[str] = []

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> Chain[None]:
        self.seen_carrying.append(set(self.chain_ref[0].carrying))
        return Done(None) if job.url.endswith("304.xml") else NEXT

    def sitemap_carried(self, job: SitemapJob) -> None:
        self.carried.append(job.url)

    def entry(self, source: str, entry: Entry) -> None:
        self.entries.append(source)


async def test_a_sitemap_a_hook_is_done_with_is_carried() -> None:
    ref: list[HookChain] = []
    carrier = Carrier(ref)
    chain = HookChain([carrier], recorder()[0])
    ref.append(chain)
    fresh, same = SitemapJob("https://e.test/a.xml", None, None, ()), SitemapJob("https://e.test/304.xml", None, None, ())  # fmt: skip
    resp: Any = None  # the hooks here do not read the answer
    assert await chain.sitemap_answered(fresh, resp) is False
    assert await chain.sitemap_answered(same, resp) is True
    assert carrier.seen_carrying == [{fresh.url}, {same.url}]  # while asked: carrying it
    assert chain.carrying == set() and carrier.carried == [same.url]
    on_entry = chain.entries(None)
    assert on_entry is not None
    on_entry("s.xml", Entry("url", URL, 1, None))
    assert carrier.entries == ["s.xml"]
