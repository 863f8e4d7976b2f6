"""The pipeline: wires discovery, expansion, the frontier, workers and the sink.

    sitemap queue -> expanders (stream -> spool -> parser -> validator)
                  -> frontier (bounded) -> workers (robots, fetch, checks)
                  -> recorder (writers, counters)

The parser and validator judge documents, the HTTP layer fetches, the checks
judge responses (audit.checks.sitemaps words the findings about a sitemap's
answer); the auditor decides what happens next. Capabilities plug in through
`audit.pipeline.hooks` (a `Hook` at fixed points, or a `UrlCheck` that
replaces how one URL is checked), never by overriding its methods.
Everything runs in one asyncio.TaskGroup, so an error or Ctrl-C cancels all
stages and the caller still writes the report of what was done.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from audit.checks import sitemaps
from audit.checks.page import PageSink, check_page, needs_probe, probe_text
from audit.checks.pagefacts import FactsSink, PageFacts, join
from audit.checks.response import check_fetch, robots_blocked_finding, url_record
from audit.core.agent import robots_token
from audit.core.config import CrawlConfig
from audit.core.errors import FetchError, TargetError
from audit.core.evidence import Evidence
from audit.core.records import (
    Entry,
    FetchResult,
    Finding,
    Hop,
    Severity,
    SitemapRecord,
    UrlResult,
    clip_url,
    finding,
)
from audit.http import HttpClient, StreamResponse
from audit.http.exchange import BodySink
from audit.http.hosts import Host, canonical_origin
from audit.http.rewrite import Rewriter
from audit.http.robots import RobotsCache, RobotsPolicy
from audit.pipeline.frontier import GroupFrontier
from audit.pipeline.hooks import Hook, TeeSink, UrlCheck, overridden
from audit.pipeline.progress import NoProgress, Progress
from audit.pipeline.recorder import Recorder
from audit.pipeline.spool import Spool
from audit.rules.hreflang import HreflangStore
from audit.rules.urls import normalize_url
from audit.rules.validator import HreflangGraph, SeenUrls, SitemapValidator
from audit.sitemap.parser import StreamParser

Mode = Literal["crawl", "validate", "inspect"]

_UNUSABLE_CHILD = frozenset({"loc-relative", "loc-invalid", "loc-missing"})
_UNREAD_NAMED = 10  # children of a local index not read: how many the summary names
_UNREQUESTABLE = frozenset({"loc-relative", "loc-invalid", "loc-too-long"})
MAX_INDEX_DEPTH = 5  # guards a chain of nested indexes; sitemaps.org allows one level
EXPANDERS = 4  # sitemaps streamed at once (one more for each target, up to EXPANDERS_MAX)
EXPANDERS_MAX = 256  # each target's sitemaps start at once, whatever the others wait for
DISCOVERERS = 16  # targets whose robots.txt and sitemaps are being found at once
LOCAL_CHUNK = 65536


EntryHook = Callable[[str, Entry], None]
Extra = dict[str, Any] | None
# how a listed URL is requested elsewhere (job, checked URL, headers, extra): its answer
# and what its page said (a cluster's worker), judged here as a local answer is
Answer = Callable[["UrlJob", str, dict[str, str] | None, Extra], Awaitable[Evidence]]
SitemapHook = Callable[[SitemapRecord, StreamParser], None]
# the root sitemaps of one target, found (discovery) while the run goes on
RootFeed = Callable[[], Awaitable[list["SitemapJob"]]]


@dataclass(slots=True)
class SitemapJob:
    url: str  # URL, or the path of a local file
    parent: str | None
    parent_line: int | None
    ancestors: tuple[str, ...]  # normalised URLs from the root down, for loop detection
    local: Path | None = None
    public_url: str | None = None  # the URL rules are judged against (--base-url for a file)
    answered: datetime | None = None  # when its answer arrived (index-lastmod-now)
    target: int = 0  # the place of its target in the run (counts per target)


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
    # the entry's hreflang alternates as listed, for the url record (`fix` keeps clusters)
    alternates: list[dict[str, str | None]] | None = None
    lane: Any = None  # its queue in the frontier (the frontier's own)
    # how it is checked when it is not a listed URL (a page the link crawl found), else None
    check: UrlCheck | None = None


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


class Auditor:
    """One run. `mode` decides how far it goes: validate stops at the documents,
    inspect hands entries to a hook, crawl checks every URL."""

    def __init__(
        self,
        config: CrawlConfig,
        recorder: Recorder,
        *,
        mode: Mode = "crawl",
        progress: Progress | None = None,
        on_entry: EntryHook | None = None,
        on_sitemap: SitemapHook | None = None,
        now: datetime | None = None,
        hooks: Sequence[Hook] = (),
        url_check: Callable[[Auditor], UrlCheck] | None = None,
        summarise: bool = True,
    ) -> None:
        self.config = config
        self.summarise = summarise  # False: a first pass whose hosts and notes come later
        self.rec = recorder
        self.mode = mode
        self.progress = progress or NoProgress()
        self.hooks = tuple(hooks)
        self.on_entry = _chain_entry(on_entry, self._at("entry"))
        self.on_sitemap = on_sitemap
        self.now = now or datetime.now(UTC)
        self.state = RunState()
        self.seen = SeenUrls()
        self.seen_crawl = SeenUrls()  # URLs admitted to the frontier (one url record each)
        # with page checks, pages add hreflang links too: a store that merges both sources
        self.hreflang: HreflangGraph = HreflangStore() if config.page_checks else HreflangGraph()
        self._probes: dict[str, asyncio.Task[str | None]] = {}  # origin -> soft-404 probe
        # the robots.txt product token: --robots-agent, or the crawler a UA string names
        self.agent_token = robots_token(config.user_agent, config.robots_agent)
        self._include = _compiled(config.include)
        self._exclude = _compiled(config.exclude)
        self._exclude_urls = bool(self._include or self._exclude)  # asked per listed URL
        self._include_sm = _compiled(config.include_sitemap)
        self._exclude_sm = _compiled(config.exclude_sitemap)
        self._visited: set[str] = set()
        self._client: HttpClient | None = None
        self._robots: RobotsCache | None = None
        # --rewrite: where a listed URL (or sitemap) is requested; falsy without rules
        self._rewrite = Rewriter(config.rewrites)
        self._rewriting = bool(self._rewrite)  # asked once per listed URL
        self._plain_fetch = not config.page_checks  # a listed URL is one HEAD (GET on error)
        # --render: every url record says whether it was rendered (one never requested: no)
        self._unrendered = {"rendered": False} if config.render is not None else {}
        self._sitemaps: asyncio.Queue[SitemapJob | None] = asyncio.Queue()
        # one queue per host, paced per politeness group; a cluster paces its own batches
        local = url_check is None
        self._frontier: GroupFrontier[UrlJob] = GroupFrontier(
            cap=config.per_host_cap if local else math.inf, pacing=local
        )
        self._expanders = EXPANDERS
        self._pending = 0
        self._done = asyncio.Event()
        self._drain_error: Exception | None = None  # a hook's drain failed (see _closer)
        self._doc_errors: dict[int, int] = {}  # parser id -> file-level errors it reported
        # Each hook point as the bound methods that do something there (none: no cost).
        self._child_hooks: list[Callable[[SitemapJob, Entry, str], None]] = self._at("child")
        self._sitemap_header_hooks: list[Callable[[SitemapJob], dict[str, str] | None]] = self._at(
            "sitemap_headers"
        )
        self._sitemap_answer_hooks: list[Callable[[SitemapJob, StreamResponse], Any]] = self._at(
            "sitemap_answered"
        )
        self._sitemap_done_hooks: list[SitemapHook] = self._at("sitemap_done")
        self._sitemap_carried_hooks: list[Callable[[SitemapJob], None]] = self._at(
            "sitemap_carried"
        )
        # sitemaps a hook is carrying (a 304): what it admits for them is also an entry
        self._carrying: set[str] = set()
        self._before_hooks: list[Callable[[UrlJob], bool]] = self._at("before_request")
        self._header_hooks: list[Callable[[UrlJob], dict[str, str] | None]] = self._at(
            "request_headers"
        )
        self._stored_hooks: list[Callable[[UrlJob], Evidence | None]] = self._at("stored_answer")
        self._stands_hooks: list[Callable[[UrlJob, FetchResult], Evidence | None]] = self._at(
            "answer_stands_for"
        )
        # a hook that revives evidence also keeps it: each answer's goes on the job
        self._keeps_evidence = bool(self._stored_hooks or self._stands_hooks)
        self._answer_hooks: list[Callable[[UrlJob, FetchResult], bool]] = self._at("after_answer")
        self._body_hooks: list[Callable[[UrlJob], BodySink | None]] = self._at("page_body")
        self._judge_hooks: list[Callable[..., tuple[UrlResult, list[Finding]] | None]] = self._at(
            "judge"
        )
        self._deliver_hooks: list[Callable[..., bool]] = self._at("deliver")
        self._end_hooks: list[Callable[[], None]] = self._at("end_of_run")
        self._drain_hooks: list[Callable[[], Awaitable[None]]] = self._at("drain")
        self._bare = (  # a listed URL is one plain request and nothing else asks about it
            self._plain_fetch
            and not self._body_hooks
            and not self._header_hooks
            and not self._keeps_evidence
        )
        self.check_url: UrlCheck = url_check(self) if url_check is not None else self.check_via
        for hook in self.hooks:
            hook.attach(self)

    def _at(self, point: str) -> list[Any]:
        """The hooks' bound methods at `point`, only those that do something there."""
        return [getattr(h, point) for h in self.hooks if overridden(h, point)]

    # --- public entry points ------------------------------------------------

    @property
    def client(self) -> HttpClient:
        if self._client is None:
            raise RuntimeError("no HTTP client outside run()")
        return self._client

    @property
    def robots(self) -> RobotsCache:
        if self._robots is None:
            raise RuntimeError("no robots cache outside run()")
        return self._robots

    def attach_client(self, client: HttpClient, robots: RobotsCache) -> None:
        """Use the caller's client and robots.txt cache (discovery shares them)."""
        self._client = client
        self._robots = robots

    async def run(self, roots: list[SitemapJob], *, pre: list[Finding] | None = None) -> None:
        """Audit the given sitemaps (already discovered). Findings of discovery go first."""
        async with HttpClient(self.config) as client:
            self.attach_client(client, RobotsCache(client, self.config.user_agent))
            for f in pre or []:
                self.rec.finding(f)
            try:
                await self._run_stages(roots)
            finally:
                self._finish_run()

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Auditor]:
        """This auditor on a client of its own, for a stage that checks URLs after the
        run (the ledger's dropped URLs: audit.state.ledger)."""
        async with HttpClient(self.config) as client:
            self.attach_client(client, RobotsCache(client, self.config.user_agent))
            yield self

    async def check_unlisted(
        self, job: UrlJob
    ) -> tuple[FetchResult | None, list[Finding], UrlResult]:
        """A URL no sitemap lists tonight (the ledger's dropped URLs, --intent's unlisted
        rows), checked as a listed URL is (robots.txt first, at its --rewrite origin, the
        request, the URL and page checks) but without any hook and never conditionally:
        its answer (None: robots.txt kept it), findings and record."""
        checked = self._rewrite(job.url) if self._rewriting else job.url
        extra = None if checked == job.url else {"checked_url": checked, "rewritten": True}
        policy = await self._policy(checked)
        if not policy.allowed(checked):
            record, found = self._not_allowed(job, policy, checked, extra)
            return None, found, record
        if self._plain_fetch:
            result, sink = await self.client.fetch(checked), None
        else:
            result, sink, _ = await self._fetch(checked)
        found, record = await self._verdicts(job, result, sink, extra)
        return result, found, record

    async def run_with_client(
        self, client: HttpClient, robots: RobotsCache, roots: list[SitemapJob]
    ) -> None:
        """Like run(), on a client the caller opened (discovery shares it)."""
        self.attach_client(client, robots)
        try:
            await self._run_stages(roots)
        finally:
            self._finish_run()

    async def run_feeds(
        self, client: HttpClient, robots: RobotsCache, feeds: Sequence[RootFeed]
    ) -> None:
        """Like run_with_client(), for targets whose roots are still to be found: each feed
        (at most DISCOVERERS at once) finds the root sitemaps of one target while the run
        goes on, so every target starts at once and each one's URLs join the frontier as
        its sitemaps are read."""
        self.attach_client(client, robots)
        try:
            await self._run_stages([], feeds)
        finally:
            self._finish_run()

    def _finish_run(self) -> None:
        for end in self._end_hooks:
            end()
        if not self.summarise:
            return
        for cause, robots_url, held in self.state.robots_unreachable.values():
            self.rec.finding(finding(*sitemaps.robots_unreachable(cause, held), url=robots_url))
        self._hreflang_findings()
        self._run_notes()
        self._hosts_record()

    def _run_notes(self) -> None:
        """The summary's notes of what was left out (--max-urls, exclusions)."""
        notes = self.rec.notes
        for key, value in (
            ("max_urls_reached", self.state.max_urls_reached),
            ("excluded_urls", self.state.excluded_urls),
            ("excluded_sitemaps", self.state.excluded_sitemaps),
        ):
            if value:
                notes[key] = value

    def _hosts_record(self) -> None:
        """A crawl's per-host politeness figures, one `hosts` record."""
        if self._client is None or self.mode != "crawl":
            return
        stats = self._client.host_stats()
        if stats:
            self.rec.emit(
                {
                    "type": "hosts",
                    "politeness_key": self.config.politeness_key,
                    "hosts": [s.to_json() for s in stats],
                    "groups": self._client.hosts.groups(),
                }
            )

    def _hreflang_findings(self) -> None:
        """Reciprocity is judged once every sitemap (and page) was read: not after an
        interrupt, where missing return links would be the cut's, not the site's."""
        if isinstance(self.hreflang, HreflangStore):
            if not self.state.interrupted:
                for f in self.hreflang.iter_findings():  # streamed: may come from disk
                    self.rec.finding(f)
            self.hreflang.close()
        elif not self.state.interrupted:
            self.rec.findings(self.hreflang.finish())

    async def _run_stages(self, roots: list[SitemapJob], feeds: Sequence[RootFeed] = ()) -> None:
        for job in roots:
            self._schedule(job)
        self._pending += len(feeds)
        self._expanders = min(EXPANDERS_MAX, EXPANDERS + max(0, len(feeds) - 1))
        if self._pending == 0:
            self._done.set()
        try:
            await self._stages(feeds)
            if self._drain_error is not None:
                raise self._drain_error
        except asyncio.CancelledError:
            self.state.interrupted = True
            raise
        finally:
            await self._cancel_probes()

    async def _stages(self, feeds: Sequence[RootFeed] = ()) -> None:
        """Discovery of the targets, expanders, workers and the closer in one TaskGroup."""
        workers = self.config.concurrency if self.mode == "crawl" else 0
        async with asyncio.TaskGroup() as tg:
            gate = asyncio.Semaphore(DISCOVERERS)
            for feed in feeds:
                tg.create_task(self._feed(feed, gate))
            for _ in range(self._expanders):
                tg.create_task(self._expander())
            for _ in range(workers):
                tg.create_task(self._worker())
            tg.create_task(self._closer(workers))

    async def _cancel_probes(self) -> None:
        probes = [t for t in self._probes.values() if not t.done()]
        for task in probes:  # only left when the run was cancelled
            task.cancel()
        await asyncio.gather(*probes, return_exceptions=True)

    async def _closer(self, workers: int) -> None:
        """When no sitemap (nor target) is pending, stop the expanders; once every listed
        URL is checked, the hooks' `drain` (the link crawl puts its pages in the frontier,
        for the same workers), then stop the workers."""
        await self._done.wait()
        for _ in range(self._expanders):
            self._sitemaps.put_nowait(None)
        try:
            if self._drain_hooks:
                await self._frontier.idle()
                for drain in self._drain_hooks:
                    await drain()
        except Exception as exc:  # raised as itself once the stages are down, as before
            self._drain_error = exc
        finally:
            self._frontier.close()

    async def _feed(self, feed: RootFeed, gate: asyncio.Semaphore) -> None:
        """One target's roots, found and scheduled; the target counts as pending till then."""
        try:
            async with gate:
                roots = await feed()
            for job in roots:
                self._schedule(job)
        finally:
            self._settle()

    def _settle(self) -> None:
        """A sitemap or a target is done: when none is pending, the listing is complete."""
        self._pending -= 1
        if self._pending == 0:
            self._done.set()
            self.progress.listing_done()  # the bar's total is known from now on

    # --- expansion ----------------------------------------------------------

    def _schedule(self, job: SitemapJob) -> None:
        public = job.public_url if job.local is not None else job.url
        key = normalize_url(public) if public else str(job.local)
        if key in self._visited:
            if job.parent is None:  # a target's root that another target reads: audited
                self._sitemap_read(job)
            return
        self._visited.add(key)
        self._pending += 1
        self._sitemaps.put_nowait(job)

    def _about_sitemap(self, job: SitemapJob, code: str, message: str) -> None:
        """A finding about a sitemap, placed where its parent lists it."""
        self.rec.finding(
            finding(code, message, sitemap=job.parent, line=job.parent_line, url=job.url)
        )

    def sitemap_excluded(self, url: str) -> bool:
        """Does --include-sitemap / --exclude-sitemap leave this sitemap out?"""
        return self._sitemap_excluded(url)

    def _sitemap_excluded(self, url: str) -> bool:
        if self._include_sm and not any(p.search(url) for p in self._include_sm):
            return True
        return any(p.search(url) for p in self._exclude_sm)

    def _url_excluded(self, url: str) -> bool:
        if self._include and not any(p.search(url) for p in self._include):
            return True
        return bool(self._exclude) and any(p.search(url) for p in self._exclude)

    async def _expander(self) -> None:
        while True:
            job = await self._sitemaps.get()
            if job is None:
                return
            try:
                if not self.state.max_urls_reached:
                    await self._expand(job)
                else:  # --max-urls is spent: its target is not audited further
                    self._sitemap_read(job)
            except FetchError as exc:
                code, message = sitemaps.sitemap_unreadable(str(exc))
                self.rec.finding(finding(code, message, sitemap=job.url))
            finally:
                self.progress.sitemap_done()
                self._settle()

    async def _expand(self, job: SitemapJob) -> None:
        """Fetch one sitemap (robots.txt first, for the finding only), judge its answer and
        stream a readable body through the parser."""
        if job.local is not None:
            await self._expand_local(job)
            return
        if job.parent is not None and self._sitemap_excluded(job.url):
            self.state.excluded_sitemaps += 1
            return
        fetch_url = self._rewrite(job.url)  # --rewrite: read the sitemap where it is checked
        policy = await self._robots_for(fetch_url)
        if policy.status == "ok" and not policy.allowed(fetch_url):
            # Still read: the auditor must know the URLs it lists to report on them.
            self._about_sitemap(job, *sitemaps.sitemap_robots_blocked(self.agent_token))
        async with self.client.stream(fetch_url, headers=self._sitemap_headers(job)) as resp:
            job.answered = datetime.now(UTC)
            if await self._sitemap_answered(job, resp):
                self._sitemap_read(job)
                return
            if resp.redirects:
                self._about_sitemap(
                    job, *sitemaps.sitemap_redirected(resp.redirects, resp.final_url)
                )
            verdict = sitemaps.sitemap_answer(resp.status, resp.error)
            if verdict is not None:
                self._unreadable(job, verdict, resp.status, resp.error)
                return
            await self._read_body(job, resp)

    async def _read_body(self, job: SitemapJob, resp: StreamResponse) -> None:
        """Stream a readable sitemap body: socket -> spool -> parser, so a slow frontier
        never stalls the download."""
        ctype = (resp.header("content-type") or "").split(";", 1)[0].strip().lower()
        ctype_ok = sitemaps.content_type_ok(ctype)
        parser = StreamParser(job.url)
        spool = Spool()

        async def pump() -> None:
            try:
                async for chunk in resp.iter_chunks():
                    spool.write(chunk)
                    if parser.stopped:
                        break
                spool.finish()
            except FetchError as exc:
                spool.finish(exc)

        reader = asyncio.create_task(pump())
        error: str | None = None
        try:
            error = await self._consume(job, parser, spool.chunks(), ctype_ok=ctype_ok, ctype=ctype)
        finally:
            if not reader.done():
                reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self._sitemap_done(job, parser, resp.status, error)

    def _unreadable(
        self, job: SitemapJob, verdict: sitemaps.Verdict, status: int | None, error: str | None
    ) -> None:
        """A sitemap that answered no readable body: its finding and its (empty) record."""
        if status is None and job.parent is None:
            self.state.roots_unreachable += 1
            unreachable = self.state.target_unreachable
            unreachable[job.target] = unreachable.get(job.target, 0) + 1
        self._sitemap_read(job)
        self._about_sitemap(job, *verdict)
        self.rec.sitemap(SitemapRecord(job.url, job.parent, None, status, 0, 0, False, error))

    def _sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        """Extra request headers for a sitemap, from the hooks (conditional requests)."""
        headers: dict[str, str] | None = None
        for hook in self._sitemap_header_hooks:
            more = hook(job)
            if more:
                headers = {**(headers or {}), **more}
        return headers

    async def _sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> bool:
        """True when a hook dealt with the answer (a 304 whose entries it carried): the
        entries it admitted meanwhile went to the entry hooks, as if parsed."""
        if not self._sitemap_answer_hooks:
            return False
        self._carrying.add(job.url)
        try:
            handled = await self._ask_answer_hooks(job, resp)
        finally:
            self._carrying.discard(job.url)
        if handled:
            for carried in self._sitemap_carried_hooks:
                carried(job)
        return handled

    async def _ask_answer_hooks(self, job: SitemapJob, resp: StreamResponse) -> bool:
        for hook in self._sitemap_answer_hooks:
            if await hook(job, resp):
                return True
        return False

    async def _expand_local(self, job: SitemapJob) -> None:
        path = job.local
        assert path is not None
        parser = StreamParser(job.public_url or str(path))

        async def chunks() -> AsyncIterator[bytes]:
            with path.open("rb") as fh:
                while chunk := fh.read(LOCAL_CHUNK):
                    yield chunk

        error = await self._consume(job, parser, chunks(), ctype_ok=True, ctype="")
        self._sitemap_done(job, parser, None, error)

    async def _consume(
        self,
        job: SitemapJob,
        parser: StreamParser,
        chunks: AsyncIterator[bytes],
        *,
        ctype_ok: bool,
        ctype: str,
    ) -> str | None:
        """Feed chunks to the parser and entries to the validator and the frontier."""
        source = job.public_url or job.url
        validator: SitemapValidator | None = None
        error: str | None = None
        ctype_pending = not ctype_ok and job.local is None
        try:
            async for chunk in chunks:
                items = parser.feed(chunk)
                if ctype_pending:
                    ctype_pending = self._content_type_pending(job, parser, ctype)
                if items:
                    validator = validator or self._validator(job, source, parser)
                    await self._handle(job, source, parser, validator, items)
                if parser.stopped:
                    break
        except FetchError as exc:
            error = str(exc)
            self._about_sitemap(job, *sitemaps.sitemap_broke_off(parser.compressed_bytes, error))
        items = parser.close(cut=error is not None)
        if ctype_pending and not parser.is_html and parser.compressed_bytes:
            self._about_sitemap(job, *sitemaps.sitemap_content_type(ctype))
        validator = validator or self._validator(job, source, parser)
        if items:
            await self._handle(job, source, parser, validator, items)
        self._document_done(job, parser, validator)
        return error

    def _content_type_pending(self, job: SitemapJob, parser: StreamParser, ctype: str) -> bool:
        """A wrong Content-Type is reported once the body shows what it is; False when
        judged. An HTML body is reported as sitemap-is-html: its type says nothing new."""
        if parser.kind is None and not parser.is_html and not parser.stopped:
            return True
        if not parser.is_html:
            self._about_sitemap(job, *sitemaps.sitemap_content_type(ctype))
        return False

    def _document_done(
        self, job: SitemapJob, parser: StreamParser, validator: SitemapValidator
    ) -> None:
        """The findings of a whole document: a nested index, and its counts."""
        if parser.kind == "sitemapindex" and job.parent is not None:
            self._about_sitemap(job, *sitemaps.index_nested())
        # A document already reported as unreadable (HTML, not XML, broken gzip) is
        # not also "empty"; one that broke off mid-way still gets its counts checked.
        if parser.entries or not self._doc_errors.get(id(parser)):
            self.rec.findings(
                validator.finish(parser.kind, parser.entries, parser.uncompressed_bytes)
            )

    def _validator(self, job: SitemapJob, source: str, parser: StreamParser) -> SitemapValidator:
        sitemap_url = job.public_url if job.local is not None else job.url
        return SitemapValidator(
            source,
            sitemap_url=sitemap_url,
            now=self.now,
            seen=self.seen,
            hreflang=self.hreflang,
            cross_submitted=self._cross_submitted(sitemap_url),
            kind=parser.kind,
            served_at=job.answered,
            tolerance_s=self.config.lastmod_tolerance_s,
        )

    def _cross_submitted(self, sitemap_url: str | None) -> Callable[[str], bool]:
        """A URL on another host is allowed when that host's robots.txt lists this
        sitemap (sitemaps.org cross-submission); only robots.txt already fetched counts."""

        def check(loc: str) -> bool:
            if sitemap_url is None or self._robots is None:
                return False
            policy = self._robots.cached(loc)
            return policy is not None and sitemap_url in policy.sitemaps

        return check

    async def _handle(
        self,
        job: SitemapJob,
        source: str,
        parser: StreamParser,
        validator: SitemapValidator,
        items: list[Entry | Finding],
    ) -> None:
        # The per-entry path of every audit: locals, and no call when nothing was found.
        rec = self.rec
        check = validator.check
        on_entry = self.on_entry
        crawl = self.mode == "crawl"
        entries = 0
        for item in items:
            if isinstance(item, Finding):
                if item.severity is Severity.ERROR:
                    self._doc_errors[id(parser)] = self._doc_errors.get(id(parser), 0) + 1
                rec.finding(item)
                continue
            entries += 1
            found = check(item)
            if found:
                rec.findings(found)
            if on_entry is not None:
                on_entry(source, item)
            if item.kind == "sitemap":
                self._child(job, item, (item.loc or "").strip(), found)
            elif crawl:
                await self.admit(source, item, (item.loc or "").strip(), found)
        rec.entries += entries

    def _child(self, job: SitemapJob, item: Entry, loc: str, found: list[Finding]) -> None:
        """An index lists `loc`: schedule it once, unless it closes a loop, is too deep,
        excluded, or (a local index) not to be fetched."""
        self.rec.index_entry(job.public_url or job.url, item.lastmod)
        for hook in self._child_hooks:
            hook(job, item, loc)
        if not self._child_usable(job, loc, found):
            return
        key = normalize_url(loc)
        own = (
            normalize_url(job.public_url or job.url) if job.local is None or job.public_url else ""
        )
        if key in job.ancestors or key == own:
            code, message = sitemaps.index_loop()
            sitemap = job.public_url or job.url
            self.rec.finding(finding(code, message, sitemap=sitemap, line=item.line, url=loc))
            return
        if len(job.ancestors) >= MAX_INDEX_DEPTH:
            return
        if self._sitemap_excluded(loc):
            self.state.excluded_sitemaps += 1
            return
        self._schedule_child(job, item, loc, (*job.ancestors, own or job.public_url or job.url))

    def _child_usable(self, job: SitemapJob, loc: str, found: list[Finding]) -> bool:
        """A child with a usable <loc> that this mode follows (inspect: the top index only)."""
        if not loc or any(f.code in _UNUSABLE_CHILD for f in found):
            return False
        return not (self.mode == "inspect" and job.parent is not None)

    def _schedule_child(
        self, job: SitemapJob, item: Entry, loc: str, ancestors: tuple[str, ...]
    ) -> None:
        """Read the child: a sibling file of a local index, or over HTTP (a local index
        stays local unless --online or a crawl); a missing sibling is a finding."""
        parent = job.public_url or job.url
        local = self._local_child(job, loc)
        if local is not None and local.is_file():
            self._schedule(
                SitemapJob(
                    str(local),
                    parent,
                    item.line,
                    ancestors,
                    local=local,
                    public_url=loc,
                    target=job.target,
                )
            )
        elif job.local is None or self.config.online or self.mode == "crawl":
            self._schedule(SitemapJob(loc, parent, item.line, ancestors, target=job.target))
        elif local is None:  # a local index stays local (--online fetches): counted, named
            notes = self.rec.notes
            notes["children_not_fetched"] = notes.get("children_not_fetched", 0) + 1
            named = notes.setdefault("children_not_read", [])
            if len(named) < _UNREAD_NAMED:  # the reports say which (and why: cut_notes)
                named.append(loc)
        else:  # a sibling named through --base-url that is not on disk
            message = (
                f"{loc} is not on disk at {local} (beside the index, from --base-url): "
                "add the file, fix the <loc>, or give --online to fetch it"
            )
            self.rec.finding(
                finding("sitemap-not-found", message, sitemap=parent, line=item.line, url=loc)
            )

    @staticmethod
    def _local_child(job: SitemapJob, loc: str) -> Path | None:
        """A local index given --base-url: the path of a child under the same public
        directory, beside the index file (it may not exist); None otherwise."""
        if job.local is None or not job.public_url:
            return None
        public_dir = job.public_url.rsplit("/", 1)[0] + "/"
        if not loc.startswith(public_dir):
            return None
        rel = loc[len(public_dir) :].split("?", 1)[0].split("#", 1)[0]
        if not rel or ".." in rel.split("/"):
            return None
        return job.local.parent / rel

    async def admit(self, source: str, item: Entry, loc: str, found: list[Finding]) -> None:
        """One url record per listed URL: duplicates and excluded URLs are not queued, nor
        any beyond --max-urls (a loc-duplicate is checked once). Once per listed URL."""
        if self._carrying:
            self._carried_entry(source, item)
        if not loc:
            return
        if self._exclude_urls and self._url_excluded(loc):
            self.state.excluded_urls += 1
            return
        if self.seen_crawl.add(loc):
            return
        state = self.state
        if self.config.max_urls is not None and state.admitted >= self.config.max_urls:
            state.max_urls_reached = True
            return
        state.admitted += 1
        self.progress.add_total(1)
        if found and self._unusable(source, item, loc, found):
            return
        frontier = self._frontier
        try:
            host: Host | None = (self._client or self.client).hosts.get(loc)
        except ValueError:  # an unusable URL: checked at once, it sends nothing
            host = None
        if host is None:
            lane = frontier.lane("", "", None)
        else:
            lane = host.queue
            if lane is None:
                await host.settle()  # --politeness-key ip: its group is its address's
                group = host.group
                lane = host.queue = frontier.lane(host, group, group)
        job = UrlJob(loc, source, item.line, item.lastmod, host=host, lane=lane)
        if item.alternates:
            job.alternates = [{"hreflang": a.hreflang, "href": a.href} for a in item.alternates]
        if not frontier.try_put(lane, job):
            await frontier.put(lane, job)

    async def enqueue(self, job: UrlJob) -> None:
        """A job of a hook's own (a page the link crawl found, `job.check` set) into the
        frontier, in its host's queue as a listed URL would be: the same workers check it,
        under its group's rate and in-flight cap. Waits while the frontier is full."""
        try:
            host: Host | None = self.client.hosts.get(job.url)
        except ValueError:
            host = None
        frontier = self._frontier
        if host is None:
            job.lane = frontier.lane("", "", None)
        else:
            if host.queue is None:
                await host.settle()
                host.queue = frontier.lane(host, host.group, host.group)
            job.lane = host.queue
        job.host = host
        if not frontier.try_put(job.lane, job):
            await frontier.put(job.lane, job)

    def judged(self, job: UrlJob, result: FetchResult) -> tuple[list[Finding], UrlResult]:
        """The URL checks on an answer, without the hooks: the step every listed URL's
        answer goes through, for a page the link crawl found."""
        return self._url_verdicts(job, result, None)

    def _carried_entry(self, source: str, item: Entry) -> None:
        """An entry admitted for a sitemap a hook is carrying goes to the entry hooks, as
        if parsed (a carried sitemap is checked as a read one: contracts/nights.md 1)."""
        if source in self._carrying and self.on_entry is not None:
            self.on_entry(source, item)

    def _unusable(self, source: str, item: Entry, loc: str, found: list[Finding]) -> bool:
        """A <loc> that cannot be requested gets its record here; True when it did."""
        unusable = [f for f in found if f.code in _UNREQUESTABLE]
        if not unusable:
            return False
        self.rec.url(
            UrlResult.unrequested(
                clip_url(loc),
                source,
                item.line,
                item.lastmod,
                "allowed",
                f"not requested: {unusable[0].code}",
                # never judged by the hooks: not indexable, it cannot even be requested
                extra={"indexable": False, "indexability": "unreachable", **self._unrendered},
            )
        )
        self.progress.advance()
        return True

    def _sitemap_done(
        self, job: SitemapJob, parser: StreamParser, status: int | None, error: str | None
    ) -> None:
        rec = SitemapRecord(
            job.public_url or job.url,
            job.parent,
            parser.kind,
            status,
            parser.entries,
            parser.uncompressed_bytes,
            parser.gzip,
            error,
        )
        self._doc_errors.pop(id(parser), None)
        self._sitemap_read(job)
        self.rec.sitemap(rec)
        if self.on_sitemap is not None:
            self.on_sitemap(rec, parser)
        for hook in self._sitemap_done_hooks:
            hook(rec, parser)

    def _sitemap_read(self, job: SitemapJob) -> None:
        """A sitemap of the job's target answered (its record is out, or a hook's)."""
        counts = self.state.target_sitemaps
        counts[job.target] = counts.get(job.target, 0) + 1

    # --- robots -------------------------------------------------------------

    async def robots_for(self, url: str) -> RobotsPolicy:
        """The robots.txt policy of the URL's host; reports an unreachable or missing
        robots.txt once per host."""
        return await self._robots_for(url)

    async def _robots_for(self, url: str) -> RobotsPolicy:
        policy = await self.robots.get(url)
        if policy.origin not in self.state.hosts_reported:
            self.state.hosts_reported.add(policy.origin)
            if policy.status == "unreachable":
                cause = policy.error or f"HTTP {policy.http_status}"
                self.state.robots_unreachable[policy.origin] = [cause, policy.url, 0]
            verdict = sitemaps.robots_verdict(policy.status, policy.error, policy.http_status)
            if verdict is not None:
                self.rec.finding(finding(*verdict, url=policy.url))
        return policy

    # --- workers ------------------------------------------------------------

    async def _worker(self) -> None:
        """Take listed URLs until the frontier is closed and empty. The frontier hands out
        the next URL of a group that may send now (rate, Retry-After, in-flight cap), so a
        worker never waits on one group while another has work. The per-URL path."""
        frontier = self._frontier
        while True:
            job = frontier.take()
            if job is None:
                job = await frontier.get()
                if job is None:
                    return
            check = job.check
            try:
                await (self.check_url if check is None else check)(job)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one URL's failure never stops the run
                self._internal_error(job, exc)
            finally:
                frontier.done(job.lane)
                if check is None:  # the bar counts listed URLs
                    self.progress.advance()

    def _internal_error(self, job: UrlJob, exc: Exception) -> None:
        self.rec.url(
            UrlResult.unrequested(
                job.url,
                job.sitemap,
                job.line,
                job.lastmod,
                "allowed",
                f"internal error: {type(exc).__name__}: {exc}",
            )
        )

    async def check_via(self, job: UrlJob, answer: Answer | None = None) -> None:
        """One listed URL: robots.txt first (a blocked URL is never requested), then the
        request, then the checks. With --rewrite the URL is requested at its rewritten
        origin (whose robots.txt applies); records keep `url` as listed and add
        `checked_url`. Hooks (--state) act before the request, on its headers, after the
        answer and at delivery, so every option composes.

        The verdict is derived once, from evidence: the answer, or stored evidence that
        stands for it (a resumed run's own answer, --changed-only's earlier one, or the
        answer a 304 confirms). Either way the same checks run on it, so a night equals a
        fresh run (STYLE.md lesson 21).

        The request is made here, or by `answer(job, checked_url, headers, extra)`: a
        cluster's worker (audit.cluster), one more transport, which returns the answer and
        what the page said. The checks, the hooks and the delivery run here either way. The
        standard check of every listed URL: no call it can do without."""
        for before in self._before_hooks:
            if before(job):
                return
        checked = self._rewrite(job.url) if self._rewriting else job.url
        extra = None if checked == job.url else {"checked_url": checked, "rewritten": True}
        host = job.host if extra is None else None
        policy = host.robots if host is not None else None
        if policy is None:
            policy = await self._policy(checked)
        result: FetchResult | None = None
        if not policy.allowed(checked):
            record, found = self._not_allowed(job, policy, checked, extra)
        else:
            stored = self._stored_answer(job) if self._stored_hooks else None
            if stored is not None:  # resumed, or --changed-only: no request
                result, sink = self._revive(job, stored)
            elif answer is None:
                if self._bare:  # the plain HEAD of a run without hooks there: no frame more
                    result, sink = await (self._client or self.client).fetch(checked), None
                else:
                    result, sink = await self._request(job, checked)
            else:  # a cluster's worker: one more transport, whose answer is evidence
                got = await answer(job, checked, self._request_headers(job), extra)
                stood = self._stands_for(job, got.result) if self._stands_hooks else None
                result, sink = self._revive(job, stood or got)
            if stored is None and self._answer_hooks and self._after_answer(job, result):
                return
            if sink is None:
                found, record = self._url_verdicts(job, result, extra)
            else:
                found, record = await self._verdicts(job, result, sink, extra)
        if extra is not None:  # a rewritten URL's findings say where it was checked
            found = [replace(f, message=f"{f.message} (checked at {checked})") for f in found]
        self._deliver(job, record, found, result)

    async def _request(self, job: UrlJob, checked: str) -> tuple[FetchResult, PageSink | None]:
        """The request of a listed URL and, with --state, the evidence it gives (or the
        stored evidence a 304 stands for, checked in its place)."""
        headers = self._request_headers(job) if self._header_hooks else None
        if self._plain_fetch and not self._body_hooks:
            client = self._client or self.client
            result, sink, outcome = await client.fetch(checked, headers=headers), None, None
        else:
            result, sink, outcome = await self._fetch(checked, headers, self._body_sinks(job))
        if self._stands_hooks:
            stood = self._stands_for(job, result)
            if stood is not None:
                return self._revive(job, stood)
        if self._keeps_evidence:
            job.evidence = Evidence(result, outcome)
        return result, sink

    def _revive(self, job: UrlJob, evidence: Evidence) -> tuple[FetchResult, PageSink | None]:
        """Stored evidence as tonight's answer: the body sinks (page checks, the hooks')
        are handed the stored facts as if they had read the body, so every check that
        reads a page reads the same page again."""
        page = PageSink(self.config.page_cap) if self.config.page_checks else None
        for sink in ([page] if page is not None else []) + self._body_sinks(job):
            if isinstance(sink, FactsSink):
                sink.accept(evidence.facts)
        job.evidence = evidence
        return evidence.result, page

    async def judge_stored(
        self, job: UrlJob, evidence: Evidence, extra: dict[str, Any] | None = None
    ) -> None:
        """A listed URL judged from stored evidence without a request or a robots.txt
        look (--budget's carried URLs): the checks, the hooks and the delivery of a fresh
        answer; `extra` joins its record."""
        result, sink = self._revive(job, evidence)
        if sink is None:
            found, record = self._url_verdicts(job, result, None)
        else:
            found, record = await self._verdicts(job, result, sink, None)
        if extra:
            record = record.with_extra({**(record.extra or {}), **extra})
        self._deliver(job, record, found, result)

    def facts_recipe(self, job: UrlJob) -> tuple[str, tuple[Any, ...]] | None:
        """What another transport must read of the URL's body for the page checks and the
        hooks (a cluster's worker): the recipe of the facts sink they join into, or None
        for a plain request."""
        if self._plain_fetch and not self._body_hooks:
            return None
        more = self._body_sinks(job)
        sinks = join([PageSink(self.config.page_cap), *more] if self.config.page_checks else more)
        first = sinks[0] if sinks else None
        return first.recipe() if isinstance(first, FactsSink) else None

    @property
    def keeps_evidence(self) -> bool:
        """Does a hook keep each answer's evidence (--state)? A `UrlCheck` of its own then
        puts its answer on `job.evidence`."""
        return self._keeps_evidence

    def stored_answer(self, job: UrlJob) -> Evidence | None:
        """Stored evidence that stands for the URL's answer without a request (a resumed
        run's), for a `UrlCheck` of its own: the hooks' `stored_answer`."""
        return self._stored_answer(job) if self._stored_hooks else None

    def _stored_answer(self, job: UrlJob) -> Evidence | None:
        for hook in self._stored_hooks:
            stored = hook(job)
            if stored is not None:
                return stored
        return None

    def _stands_for(self, job: UrlJob, result: FetchResult) -> Evidence | None:
        for hook in self._stands_hooks:
            stood = hook(job, result)
            if stood is not None:
                return stood
        return None

    def _not_allowed(
        self, job: UrlJob, policy: RobotsPolicy, checked: str, extra: dict[str, Any] | None
    ) -> tuple[UrlResult, list[Finding]]:
        """A URL robots.txt keeps us from: blocked (a finding of its own), or held back by
        an unreachable robots.txt (counted in the host's one robots-unreachable)."""
        if policy.status == "unreachable":
            held = self.state.robots_unreachable.get(policy.origin)
            if held is not None:
                held[2] += 1
            record = UrlResult.unrequested(
                job.url, job.sitemap, job.line, job.lastmod, "unreachable", extra=extra
            )
            return record, []
        record = UrlResult.unrequested(
            job.url, job.sitemap, job.line, job.lastmod, "blocked", extra=extra
        )
        return record, [robots_blocked_finding(job.url, job.sitemap, job.line, self.agent_token)]

    async def _policy(self, url: str) -> RobotsPolicy:
        """The robots.txt policy for a URL: kept on its host once read (the host pool's
        prefix memo makes a URL of a known origin a dict lookup and no await)."""
        try:
            policy: RobotsPolicy | None = self.client.hosts.get(url).robots
        except ValueError:
            policy = None
        return policy if policy is not None else await self._robots_for(url)

    async def _verdicts(
        self,
        job: UrlJob,
        result: FetchResult,
        sink: PageSink | None,
        extra: dict[str, Any] | None,
    ) -> tuple[list[Finding], UrlResult]:
        """The URL checks (and with --page-checks the page's) on an answer."""
        if extra is not None:
            result = self._as_listed(job, result)  # findings and the record name the listing
        found, record = self._url_verdicts(job, result, extra)
        if sink is not None and sink.facts is not None and result.status == 200:
            job.page = sink.facts
            found, record = await self._page_checks(job, result, sink.facts, found, record)
        return found, record

    def _url_verdicts(
        self, job: UrlJob, result: FetchResult, extra: dict[str, Any] | None
    ) -> tuple[list[Finding], UrlResult]:
        """The URL checks on an answer: its record and findings."""
        if extra is not None and result.url != job.url:
            result = self._as_listed(job, result)  # findings and the record name the listing
        record = url_record(result, sitemap=job.sitemap, line=job.line, lastmod=job.lastmod)
        if extra is not None:
            record = record.with_extra({**(record.extra or {}), **extra})
        found = check_fetch(
            result,
            lastmod=job.lastmod,
            sitemap=job.sitemap,
            line=job.line,
            config=self.config,
            agent_token=self.agent_token,
            now=self.now,
        )
        return found, record

    def _as_listed(self, job: UrlJob, result: FetchResult) -> FetchResult:
        """A rewritten URL's answer in the listing's terms: its URL as listed, and the hops
        and final URL on the rewritten origin back on the listed one, so that advice ("list
        the final URL ... instead") names the production URL, never staging. Where it was
        checked stays in the record's checked_url and each finding's "(checked at ...)"."""
        back = self._rewrite.back
        return replace(
            result,
            url=job.url,
            final_url=back(result.final_url) if result.final_url else result.final_url,
            redirects=tuple(Hop(back(h.url), h.status) for h in result.redirects),
        )

    # The hook points of _check (a --state run answers from, and writes to, its store).

    def _request_headers(self, job: UrlJob) -> dict[str, str] | None:
        headers: dict[str, str] | None = None
        for hook in self._header_hooks:
            more = hook(job)
            if more:
                headers = {**(headers or {}), **more}
        return headers

    def _after_answer(self, job: UrlJob, result: FetchResult) -> bool:
        return any(hook(job, result) for hook in self._answer_hooks)

    def _deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> None:
        if job.alternates is not None:  # the listed entry's, as listed (contracts/fix.md)
            record = record.with_extra({**(record.extra or {}), "alternates": job.alternates})
        for judge in self._judge_hooks:
            changed = judge(job, record, found, result)
            if changed is not None:
                record, found = changed
        for hook in self._deliver_hooks:
            if hook(job, record, found, result):
                return
        self.rec.url(record)  # self.deliver(), written out: once per listed URL
        if found:
            self.rec.findings(found)

    def deliver(self, record: UrlResult, found: list[Finding]) -> None:
        """A URL's record and its findings to the recorder."""
        self.rec.url(record)
        if found:
            self.rec.findings(found)

    def deliver_checked(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> None:
        """A `UrlCheck`'s verdict on a listed URL, through the judge and deliver hooks
        (--state stores it) as the standard check's is."""
        self._deliver(job, record, found, result)

    def _body_sinks(self, job: UrlJob) -> list[BodySink]:
        """The hooks' sinks for the URL's body (none: no hook wants it)."""
        return [s for hook in self._body_hooks if (s := hook(job)) is not None]

    async def _fetch(
        self, url: str, headers: dict[str, str] | None = None, more: Sequence[BodySink] = ()
    ) -> tuple[FetchResult, PageSink | None, tuple[Any, ...] | None]:
        """The request of one listed URL: HEAD (GET to confirm an error), or with page checks
        (or a hook's body sink) one GET whose body is read up to the end of the head (or
        what the hooks' sinks want) or the cap. The page's facts sinks (page checks, links,
        content) share one read and one parse (pagefacts.join). Returns the answer, the
        page checks' sink and what the page's one parse found (kept as evidence)."""
        cap = self.config.page_cap
        sink = PageSink(cap) if self.config.page_checks else None
        sinks = join([sink, *more] if sink is not None else more)
        if not sinks:
            return await self.client.fetch(url, headers=headers), None, None
        tee = sinks[0] if len(sinks) == 1 else TeeSink(sinks)
        result = await self.client.fetch_page(url, tee, cap=cap, headers=headers)
        first = sinks[0]
        return result, sink, first.outcome() if isinstance(first, FactsSink) else None

    async def _page_checks(
        self,
        job: UrlJob,
        result: FetchResult,
        facts: PageFacts,
        found: list[Finding],
        record: UrlResult,
    ) -> tuple[list[Finding], UrlResult]:
        """--page-checks on a 200 HTML page: findings merged with check_fetch's, the url
        record with a `page` object, the head's hreflang links into the run's store."""
        probe = None
        if needs_probe(facts, result.final_url):
            probe = await self._probe_for(result.final_url)
        verdict = check_page(
            result,
            facts,
            found,
            agent_token=self.agent_token,
            sitemap=job.sitemap,
            line=job.line,
            probe=probe,
        )
        if verdict.alternates and isinstance(self.hreflang, HreflangStore):
            page_url = result.final_url if result.redirects else result.url
            self.hreflang.add(
                page_url, verdict.alternates, sitemap=job.sitemap, line=job.line, source="page"
            )
        extra = {**(record.extra or {}), "page": verdict.record}
        return verdict.findings, record.with_extra(extra)

    async def _probe_for(self, url: str) -> str | None:
        """The host's answer to a path that cannot exist, fetched once per origin per run
        (the first caller fetches, the others wait for it, as for robots.txt)."""
        origin = canonical_origin(url) or url
        task = self._probes.get(origin)
        if task is None:
            task = self._probes[origin] = asyncio.create_task(self._load_probe(origin))
        # shield: a cancelled caller must not cancel the probe other pages wait on
        return await asyncio.shield(task)

    async def _load_probe(self, origin: str) -> str | None:
        url = f"{origin}/sitemap-audit-probe-{secrets.token_hex(8)}"
        try:
            policy = await self._robots_for(url)
            if not policy.allowed(url):
                return None  # polite: no probe where robots.txt says no
            sink = PageSink(self.config.page_cap)
            result = await self.client.fetch_page(url, sink, cap=self.config.page_cap)
        except Exception:  # a failed probe only means no similarity check for this host
            return None
        return probe_text(result, sink.facts)


def _compiled(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    return [re.compile(p) for p in patterns]


def _chain_entry(
    first: EntryHook | None, more: list[Callable[[str, Entry], None]]
) -> EntryHook | None:
    """One entry callback for the per-entry path: the caller's and the hooks' in turn."""
    calls = [c for c in (first, *more) if c is not None]
    if len(calls) <= 1:
        return calls[0] if calls else None

    def every(source: str, item: Entry) -> None:
        for call in calls:
            call(source, item)

    return every


def classify_target(target: str) -> tuple[str, str]:
    """('file', path) | ('site', url) | ('robots', url) | ('sitemap', url); TargetError otherwise."""
    if "://" in target:
        return _classify_url(target)
    p = Path(target)
    if p.is_dir():
        raise TargetError(f"{target}: is a directory, not a sitemap file")
    if not p.exists():
        raise TargetError(f"{target}: no such file (and not an http(s) URL)")
    try:
        with p.open("rb"):
            pass
    except OSError as exc:
        raise TargetError(f"{target}: cannot be read: {exc.strerror}") from exc
    return "file", target


def _classify_url(target: str) -> tuple[str, str]:
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetError(f"{target}: not an http(s) URL or a local file")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise TargetError(f"{target}: bad port in URL") from exc
    path = parts.path
    if path in ("", "/") and not parts.query:
        return "site", target if path else target + "/"
    if path.lower().endswith("/robots.txt"):
        return "robots", target
    return "sitemap", target
