"""What a feature sees of the run: a `RunContext`, never the Auditor (STYLE.md lesson 19).

A hook (audit.pipeline.hooks) or a URL check of its own (`migrate`, a cluster) is handed
one `RunContext` when it is attached: the run's configuration and robots.txt product
token, the recorder (deliver records, read and write the run's notes), the URLs the
sitemaps listed so far, the HTTP client and robots.txt cache, and the few things it may
ask the pipeline to do (enqueue a listed URL, check one, deliver a verdict). The engine
behind it may change without a feature noticing.

Also the jobs that travel through the pipeline (`SitemapJob`, `UrlJob`) and the run's
counters (`RunState`), which hooks read and the Auditor writes.

Imports nothing of the pipeline's engine (auditor, hooks): they import this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence
from audit.core.records import Entry, FetchResult, Finding, SitemapRecord, UrlResult
from audit.http import HttpClient
from audit.http.hosts import Host
from audit.http.robots import RobotsCache, RobotsPolicy
from audit.pipeline.recorder import Recorder
from audit.rules.validator import SeenUrls
from audit.sitemap.parser import StreamParser

if TYPE_CHECKING:
    from audit.checks.pagefacts import PageFacts
    from audit.checks.verdict import UrlVerdict

__all__ = [
    "Answer",
    "EntryHook",
    "Extra",
    "Keeper",
    "Mode",
    "RunContext",
    "RunState",
    "SitemapHook",
    "SitemapJob",
    "UrlJob",
    "work_through",
]

T = TypeVar("T")


async def work_through(
    items: Iterable[T], work: Callable[[T], Awaitable[None]], workers: int
) -> None:
    """`work(item)` for every item, started in their order by at most `workers` tasks
    (at least one, none for no items): the few requests a feature makes of its own after
    the listed URLs (--intent's unlisted rows, llms.txt links no sitemap lists, the
    --agents-fetch samples), each under its host's politeness."""
    todo = list(items)
    pending = iter(todo)

    async def worker() -> None:
        for item in pending:  # one iterator for all: each item is taken once
            await work(item)

    async with asyncio.TaskGroup() as tg:
        for _ in range(min(len(todo), max(1, workers))):
            tg.create_task(worker())


# how far a run goes: validate stops at the documents, inspect hands entries to a hook,
# crawl checks every URL
Mode = Literal["crawl", "validate", "inspect"]


@dataclass(slots=True)
class SitemapJob:
    url: str  # URL, or the path of a local file
    parent: str | None
    parent_line: int | None
    ancestors: tuple[str, ...]  # normalised URLs (paths) from the root down, for loop detection
    local: Path | None = None
    public_url: str | None = None  # the URL rules are judged against (--base-url for a file)
    answered: datetime | None = None  # when its answer arrived (index-lastmod-now)
    target: int = 0  # the place of its target in the run (counts per target)

    @property
    def record_url(self) -> str:
        """The sitemap as its records name it: its public URL (a local file's, given
        --base-url), else its URL or path."""
        return self.public_url or self.url


@dataclass(slots=True)
class UrlJob:
    url: str
    sitemap: str | None  # None: a page the link crawl found (no sitemap lists it)
    line: int | None
    lastmod: str | None
    context: Any = None  # what a hook carries from before the request to after it
    host: Host | None = None  # the politeness object of `url`, looked up once when listed
    page: PageFacts | None = None  # what the page checks read of the page, for the hooks
    evidence: Evidence | None = None  # with --state: what the verdict is derived from
    verdict: UrlVerdict | None = None  # the one verdict on its answer, for the hooks
    # the entry's hreflang alternates as listed, for the url record (`fix` keeps clusters)
    alternates: list[dict[str, str | None]] | None = None
    lane: Any = None  # its queue in the frontier (the frontier's own)
    # how it is checked when it is not a listed URL (a page the link crawl found), else None
    check: Callable[[UrlJob], Awaitable[None]] | None = None


@dataclass(slots=True)
class RunState:
    interrupted: bool = False
    max_urls_reached: bool = False
    excluded_urls: int = 0
    excluded_sitemaps: int = 0
    admitted: int = 0
    roots_unreachable: int = 0  # root sitemaps that got no HTTP answer at all
    # per target (SitemapJob.target): root sitemaps without an answer, sitemaps read
    target_unreachable: dict[int, int] = field(default_factory=dict)
    target_sitemaps: dict[int, int] = field(default_factory=dict)
    hosts_reported: set[str] = field(default_factory=set)
    # host key -> [why its robots.txt could not be read, its URL, listed URLs held back]
    robots_unreachable: dict[str, list[Any]] = field(default_factory=dict)


Extra = dict[str, Any] | None
# how a listed URL is requested elsewhere (job, checked URL, headers, extra): its answer
# and what its page said (a cluster's worker), judged here as a local answer is
Answer = Callable[[UrlJob, str, dict[str, str] | None, Extra], Awaitable[Evidence]]
# what a caller sees of the listing as it is read: each entry, each sitemap read
EntryHook = Callable[[str, Entry], None]
SitemapHook = Callable[[SitemapRecord, StreamParser], None]


@runtime_checkable
class Keeper(Protocol):
    """The feature that keeps a run's results (--state), as the others see it: where they
    keep their own (a side file beside it, one per target), whether the run goes on from
    one that died, and how a record they deliver at the end is stored with the run's."""

    @property
    def resume(self) -> bool: ...

    @property
    def run(self) -> int: ...

    def side_file(self, name: str) -> Path: ...

    def deliver_final(self, record: UrlResult, found: list[Finding]) -> None: ...


@dataclass(frozen=True, slots=True)
class RunContext:
    """One run as a feature may use it (crawlee's `BasicCrawlingContext`).

    What it reads: `config`, `agent_token` (the robots.txt product token), `now` (the
    time of the audit), `recorder` (its `notes` are the summary's), `listed` (every URL a
    sitemap listed so far), `state` (the run's counters: was --max-urls reached?),
    `client` and `robots` (the run's HTTP client and robots.txt cache, once it runs).
    What it does: `robots_for` (a policy, its findings reported once per host), `enqueue`
    (a listed URL into the frontier, as if parsed), `enqueue_job` (a job of the feature's
    own, `job.check` set, into the frontier for the run's workers: the link crawl's pages),
    `judge_answer` (the verdict on an answer, without the hooks), `check` (the standard check of a
    listed URL, or the run's own `UrlCheck`), `check_with` (the standard check with the
    request made by another transport), `check_unlisted`, `judge_stored` (a verdict from
    stored evidence), `deliver` (a record and findings to the recorder), `deliver_checked`
    (a verdict through the judge and deliver hooks), `alone` (a context of the run's
    configuration without hooks, on a client of its own, for a stage that checks URLs
    after the run: the ledger's dropped URLs), `pass_on` (a record a deliver hook held goes
    on to the deliver hooks after it, then the recorder), `sitemap_excluded`
    (--include-sitemap / --exclude-sitemap). For a `UrlCheck` of its own (`migrate`, a
    cluster): `before_request`, `stored_answer` and `keeps_evidence` (what the hooks say
    before a request), `facts_recipe` (what another transport must read of a page).
    `peers` are the run's hooks: `peer()` finds one by type, `keeper()` the --state one."""

    config: CrawlConfig
    agent_token: str
    now: datetime
    recorder: Recorder
    listed: SeenUrls
    state: RunState
    peers: tuple[object, ...]
    get_client: Callable[[], HttpClient]
    get_robots: Callable[[], RobotsCache]
    robots_for: Callable[[str], Awaitable[RobotsPolicy]]
    enqueue: Callable[[str, Entry, str, list[Finding]], Awaitable[None]]
    enqueue_job: Callable[[UrlJob], Awaitable[None]]
    judge_answer: Callable[[UrlJob, FetchResult], UrlVerdict]
    check: Callable[[UrlJob], Awaitable[None]]
    check_with: Callable[[UrlJob, Answer], Awaitable[None]]
    check_unlisted: Callable[[UrlJob], Awaitable[tuple[FetchResult | None, UrlVerdict]]]
    judge_stored: Callable[[UrlJob, Evidence, dict[str, Any]], Awaitable[None]]
    deliver: Callable[[UrlResult, list[Finding]], None]
    deliver_checked: Callable[[UrlJob, UrlResult, list[Finding], FetchResult | None], None]
    before_request: Callable[[UrlJob], bool]
    stored_answer: Callable[[UrlJob], Evidence | None]
    keeps_evidence: bool
    facts_recipe: Callable[[UrlJob], tuple[str, tuple[Any, ...]] | None]
    sitemap_excluded: Callable[[str], bool]
    alone: Callable[[Recorder], AbstractAsyncContextManager[RunContext]]
    pass_on: Callable[[object, UrlJob, UrlResult, list[Finding], FetchResult | None], None]

    @property
    def client(self) -> HttpClient:
        """The run's HTTP client (RuntimeError before the run opens one)."""
        return self.get_client()

    @property
    def robots(self) -> RobotsCache:
        """The run's robots.txt cache (RuntimeError before the run opens one)."""
        return self.get_robots()

    @property
    def notes(self) -> dict[str, Any]:
        """The run's notes: they go into the summary."""
        return self.recorder.notes

    def keeper(self) -> Keeper | None:
        """The run's keeper (--state), or None: a feature keeps its own beside it."""
        # (Keeper is a runtime-checkable Protocol: isinstance() takes it; mypy's type[T]
        # wants a concrete class, its type-abstract check)
        return self.peer(Keeper)  # type: ignore[type-abstract]

    def peer(self, kind: type[T]) -> T | None:
        """The run's feature of this type, if it has one (a feature that reads another's
        results: the ledger reads --intent's rows)."""
        for hook in self.peers:
            if isinstance(hook, kind):
                return hook
        return None
