"""The pipeline: wires discovery, expansion, the frontier, workers and the sink.

    sitemap queue -> expanders (stream -> spool -> parser -> validator)
                  -> frontier (bounded) -> workers (robots, fetch, checks)
                  -> recorder (writers, counters)

The Auditor only wires: `Expander` (audit.pipeline.expand) reads the sitemaps and hands
each listed URL to `admit`, the frontier (audit.pipeline.frontier) queues it per host,
a worker checks it (`UrlChecker`, audit.pipeline.check, or a `UrlCheck` of the run's
own), and the hooks (audit.pipeline.chain) see it at their points. Capabilities plug in
through `audit.pipeline.hooks` and see the run through one `RunContext`
(audit.pipeline.context), never this class. Everything runs in one asyncio.TaskGroup,
so an error or Ctrl-C cancels all stages and the caller still writes the report of what
was done.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from audit.checks import sitemaps
from audit.core.agent import robots_token
from audit.core.config import CrawlConfig
from audit.core.records import Entry, Finding, UrlResult, clip_url, finding
from audit.http import HttpClient
from audit.http.hosts import Host, HostPool
from audit.http.robots import RobotsCache
from audit.pipeline.chain import HookChain
from audit.pipeline.context import (
    EntryHook,
    Mode,
    RunContext,
    RunState,
    SitemapHook,
    SitemapJob,
    UrlJob,
)
from audit.pipeline.expand import Expander, excluded
from audit.pipeline.frontier import GroupFrontier
from audit.pipeline.hooks import Hook, UrlCheck
from audit.pipeline.progress import NO_PROGRESS, Progress
from audit.pipeline.recorder import Recorder
from audit.rules.hreflang import HreflangStore
from audit.rules.locs import LocUse, loc_use
from audit.rules.validator import HreflangGraph, SeenUrls

if TYPE_CHECKING:
    from audit.pipeline.check import UrlChecker

__all__ = ["DISCOVERERS", "EXPANDERS", "EXPANDERS_MAX", "Auditor", "RootFeed"]

EXPANDERS = 4  # sitemaps streamed at once (one more for each target, up to EXPANDERS_MAX)
EXPANDERS_MAX = 256  # each target's sitemaps start at once, whatever the others wait for
DISCOVERERS = 16  # targets whose robots.txt and sitemaps are being found at once
# workers started at once; a larger --concurrency (a cluster's driver, whose checks wait
# on batches: 32,768) grows by as many whenever jobs wait with every worker busy, looked
# at every GROW_EVERY s, and a grown worker ends when nothing is queued (measured: 32,768
# workers started at once held the driver's loop for 0.1-0.2 s before its first check;
# woken at once by the frontier's close at the end, with the collection after, 0.2 s)
WORKERS_FIRST = 1024
GROW_EVERY = 0.05

# the root sitemaps of one target, found (discovery) while the run goes on
RootFeed = Callable[[], Awaitable[list[SitemapJob]]]


class Auditor:
    """One run. `mode` decides how far it goes: validate stops at the documents,
    inspect hands entries to a hook, crawl checks every URL."""

    # the run's client's host pool, from attach_client (which every run calls before a
    # URL is admitted or a job queued): where a URL's queue is found, once per URL
    _hosts: HostPool

    def __init__(
        self,
        config: CrawlConfig,
        recorder: Recorder,
        *,
        mode: Mode = "crawl",
        progress: Progress = NO_PROGRESS,
        on_entry: EntryHook | None = None,
        on_sitemap: SitemapHook | None = None,
        hooks: Sequence[Hook] = (),
        url_check: Callable[[RunContext], UrlCheck] | None = None,
        summarise: bool = True,
    ) -> None:
        self.config = config
        self.summarise = summarise  # False: a first pass whose hosts and notes come later
        self.rec = recorder
        self.mode = mode
        self.progress = progress
        self.chain = HookChain(hooks, recorder)
        self.on_entry = self.chain.entries(on_entry)
        self.now = datetime.now(UTC)  # the time of the audit
        self.state = RunState()
        self.seen_crawl = SeenUrls()  # URLs admitted to the frontier (one url record each)
        # with page checks, pages add hreflang links too: a store that merges both sources
        self.hreflang: HreflangGraph = HreflangStore() if config.page_checks else HreflangGraph()
        # the robots.txt product token: --robots-agent, or the crawler a UA string names
        self.agent_token = robots_token(config.user_agent, config.robots_agent)
        self._include = list(map(re.compile, config.include))
        self._exclude = list(map(re.compile, config.exclude))
        self._exclude_urls = bool(self._include or self._exclude)  # asked per listed URL
        self._max_urls = math.inf if config.max_urls is None else config.max_urls
        self._client: HttpClient | None = None
        # --render: every url record says whether it was rendered (one never requested: no)
        self._unrendered = {"rendered": False} if config.render is not None else {}
        self._expanders = EXPANDERS
        self._drain_error: Exception | None = None  # a hook's drain failed (see _closer)
        # workers grown beyond WORKERS_FIRST alive, and ended since _grow looked (_grow)
        self._extra = self._ended = 0
        self._robots: RobotsCache | None = None
        # The standard check of a listed URL (audit.pipeline.check, and the URL and page
        # checks it imports): a validate run checks none, so it gets its checker at the
        # first use, if any (a remote sitemap's robots.txt); every other run at once.
        self._checker: UrlChecker | None = None
        checker: Any = _FirstUse(self) if mode == "validate" else self.checker
        self.expander = Expander(
            config,
            recorder,
            self.chain,
            self.state,
            mode=mode,
            progress=self.progress,
            now=self.now,
            agent_token=self.agent_token,
            hreflang=self.hreflang,
            on_entry=self.on_entry,
            on_sitemap=on_sitemap,
            rewrite=checker.rewrite,
            robots_for=checker.robots_for,
            admit=self.admit,
            client=lambda: self.client,
            robots=lambda: self._robots,
        )
        self.context = RunContext(
            config=config,
            agent_token=self.agent_token,
            now=self.now,
            recorder=recorder,
            listed=self.expander.seen,
            state=self.state,
            peers=self.chain.hooks,
            get_client=lambda: self.client,
            get_robots=lambda: self._robots or self.checker.robots,
            robots_for=checker.robots_for,
            enqueue=self.admit,
            enqueue_job=self.enqueue_job,
            judge_answer=checker.judge_answer,
            check=self._check_url,
            check_with=checker.check_via,
            check_unlisted=checker.check_unlisted,
            judge_stored=checker.judge_stored,
            deliver=self.chain.deliver,
            deliver_checked=self.chain.deliver_checked,
            before_request=self.chain.before_request,
            stored_answer=self.chain.stored_answer,
            keeps_evidence=self.chain.keeps_evidence,
            facts_recipe=checker.facts_recipe,
            sitemap_excluded=self.expander.sitemap_excluded,
            alone=self._alone,
            pass_on=self.chain.pass_on,
        )
        self._frontier: GroupFrontier[UrlJob]  # one queue per host
        self.check_url: UrlCheck
        if url_check is None:  # the standard check: paced per politeness group here
            self._frontier = GroupFrontier(cap=config.per_host_cap)
            self.check_url = checker.check_via
        else:  # the run's own (a cluster's): it paces its batches on its workers
            self._frontier = GroupFrontier(cap=math.inf, pacing=False)
            self.check_url = url_check(self.context)
        for hook in self.chain.hooks:
            hook.attach(self.context)

    @property
    def checker(self) -> UrlChecker:
        """The run's standard check of a listed URL, built at the first call."""
        checker = self._checker
        if checker is None:
            from audit.pipeline.check import UrlChecker  # a validate run may never need it

            checker = self._checker = UrlChecker(
                self.config,
                self.rec,
                self.chain,
                self.state,
                agent_token=self.agent_token,
                now=self.now,
                hreflang=self.hreflang,
            )
            if self._robots is not None:  # (attach_client sets it with the client)
                checker.attach(self.client, self._robots)
        return checker

    async def _check_url(self, job: UrlJob) -> None:
        """The run's check of a listed URL (its own `UrlCheck`, or the standard one)."""
        await self.check_url(job)

    @property
    def client(self) -> HttpClient:
        return self._client or self.checker.client  # the checker's says there is none

    def attach_client(self, client: HttpClient, robots: RobotsCache) -> None:
        """Use the caller's client and robots.txt cache (discovery shares them)."""
        self._client, self._robots = client, robots
        self._hosts = client.hosts
        if self._checker is not None:
            self._checker.attach(client, robots)

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[Auditor]:
        """This auditor on a client of its own, for a stage that checks URLs after the
        run (the ledger's dropped URLs: audit.features.ledger)."""
        async with HttpClient(self.config) as client:
            self.attach_client(client, RobotsCache(client, self.config.user_agent))
            yield self

    @contextlib.asynccontextmanager
    async def _alone(self, recorder: Recorder) -> AsyncIterator[RunContext]:
        """A crawl of this configuration without hooks, on a client of its own."""
        auditor = Auditor(self.config, recorder, mode="crawl")
        async with auditor.opened():
            yield auditor.context

    async def run_with_client(
        self,
        client: HttpClient,
        robots: RobotsCache,
        roots: list[SitemapJob],
        feeds: Sequence[RootFeed] = (),
    ) -> None:
        """Audit `roots` on a client the caller opened (discovery shares it). `feeds`: the
        targets whose roots are still to be found: each feed (at most DISCOVERERS at once)
        finds the root sitemaps of one target while the run goes on, so every target starts
        at once and each one's URLs join the frontier as its sitemaps are read."""
        self.attach_client(client, robots)
        try:  # discovery of the targets, expanders, workers and the closer: one TaskGroup
            expander = self.expander
            for job in roots:
                expander.schedule(job)
            self._expanders = min(EXPANDERS_MAX, EXPANDERS + max(0, len(feeds) - 1))
            expander.add_pending(len(feeds))
            workers = self.config.concurrency if self.mode == "crawl" else 0
            async with asyncio.TaskGroup() as tg:
                gate = asyncio.Semaphore(DISCOVERERS)
                for feed in feeds:
                    tg.create_task(self._feed(feed, gate))
                for _ in range(self._expanders):
                    tg.create_task(self.expander.run())
                for _ in range(min(workers, WORKERS_FIRST)):
                    tg.create_task(self._worker())
                if workers > WORKERS_FIRST:
                    tg.create_task(self._grow(tg, workers - WORKERS_FIRST))
                tg.create_task(self._closer())
            if self._drain_error is not None:
                raise self._drain_error
        except asyncio.CancelledError:
            self.state.interrupted = True
            raise
        finally:
            try:
                if self._checker is not None:
                    await self._checker.cancel_probes()
            finally:
                self._finish_run()

    def _finish_run(self) -> None:
        """The end of a run, however it ends: the hooks' end, then (unless a first pass)
        robots-unreachable per host, hreflang reciprocity, the notes, the hosts record."""
        self.chain.end_of_run()
        if not self.summarise:
            return
        rec, state = self.rec, self.state
        for cause, robots_url, held in state.robots_unreachable.values():
            rec.finding(finding(*sitemaps.robots_unreachable(cause, held), url=robots_url))
        # Reciprocity is judged once every sitemap (and page) was read: not after an
        # interrupt, where missing return links would be the cut's, not the site's.
        if isinstance(self.hreflang, HreflangStore):
            if not state.interrupted:
                rec.findings(self.hreflang.iter_findings())  # streamed: may come from disk
            self.hreflang.close()
        elif not state.interrupted:
            rec.findings(self.hreflang.finish())
        for key, value in (  # what was left out (--max-urls, exclusions)
            ("max_urls_reached", state.max_urls_reached),
            ("excluded_urls", state.excluded_urls),
            ("excluded_sitemaps", state.excluded_sitemaps),
        ):
            if value:
                rec.notes[key] = value
        # a crawl's per-host politeness figures: one `hosts` record (on the run's client:
        # run_with_client attached it before anything that ends here)
        if self.mode == "crawl":
            client = self.client
            stats = client.host_stats()
            if stats:
                rec.emit(
                    {
                        "type": "hosts",
                        "politeness_key": self.config.politeness_key,
                        "hosts": [s.to_json() for s in stats],
                        "groups": client.hosts.groups(),
                    }
                )

    async def _grow(self, tg: asyncio.TaskGroup, more: int) -> None:
        """Up to `more` workers past the first, WORKERS_FIRST at a time, while jobs wait
        with every worker busy, till the frontier is closed and empty (see _worker)."""
        frontier = self._frontier
        while not (frontier.closed and not frontier.total):
            await asyncio.sleep(GROW_EVERY)
            more += self._ended
            self._ended = 0
            if frontier.starved():  # (none more to grow: a step of 0)
                step = min(more, WORKERS_FIRST)
                more -= step
                self._extra += step
                for _ in range(step):
                    tg.create_task(self._worker())

    async def _closer(self) -> None:
        """When no sitemap (nor target) is pending, stop the expanders; once every listed
        URL is checked, the hooks' `drain` (the link crawl puts its pages in the frontier,
        for the same workers), then stop the workers."""
        await self.expander.done.wait()
        self.expander.stop(self._expanders)
        try:
            if self.chain.drains:
                await self._frontier.idle()
                for drain in self.chain.drains:
                    await drain()
        except Exception as exc:  # raised as itself once the stages are down, as before
            self._drain_error = exc
        finally:
            self._frontier.close()

    async def enqueue_job(self, job: UrlJob) -> None:
        """A job of a feature's own (a page the link crawl found, `job.check` set) into the
        frontier, in its host's queue as a listed URL would be: the same workers check it,
        under its group's rate and in-flight cap. Waits while the frontier is full."""
        try:
            host: Host | None = self._hosts.get(job.url)
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

    async def _feed(
        self, feed: Callable[[], Awaitable[list[SitemapJob]]], gate: asyncio.Semaphore
    ) -> None:
        """One target's roots, found and scheduled; the target counts as pending till then."""
        try:
            async with gate:
                roots = await feed()
            for job in roots:
                self.expander.schedule(job)
        finally:
            self.expander.settle()

    # --- the frontier ---------------------------------------------------------

    async def admit(self, source: str, item: Entry, loc: str, found: list[Finding]) -> None:
        """One url record per listed URL: duplicates and excluded URLs are not queued, nor
        any beyond --max-urls (a loc-duplicate is checked once). Once per listed URL."""
        if source in self.chain.carrying:  # (mostly empty: a set look-up, no call)
            self.chain.carried_entry(self.on_entry, source, item)  # as if parsed (nights.md 1)
        if not loc:
            return
        if self._exclude_urls and excluded(loc, self._include, self._exclude):
            self.state.excluded_urls += 1
            return
        if self.seen_crawl.add(loc):
            return
        state = self.state
        if state.admitted >= self._max_urls:
            state.max_urls_reached = True
            return
        state.admitted += 1
        self.progress.add_total(1)
        if found and self._unusable(source, item, loc, found):
            return
        frontier = self._frontier
        try:
            host: Host | None = self._hosts.get(loc)
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

    def _unusable(self, source: str, item: Entry, loc: str, found: list[Finding]) -> bool:
        """A <loc> that cannot be requested gets its record here; True when it did."""
        use, why = loc_use(found)
        if use is LocUse.URL:
            return False
        self.rec.url(
            UrlResult.unrequested(
                clip_url(loc),
                source,
                item.line,
                item.lastmod,
                "allowed",
                f"not requested: {why}",
                # never judged by the hooks: not indexable, it cannot even be requested
                extra={"indexable": False, "indexability": "unreachable", **self._unrendered},
            )
        )
        self.progress.advance()
        return True

    async def _worker(self) -> None:
        """Take listed URLs until the frontier is closed and empty. The frontier hands out
        the next URL of a group that may send now (rate, Retry-After, in-flight cap), so a
        worker never waits on one group while another has work. The per-URL path."""
        frontier = self._frontier
        while True:
            job = frontier.take()
            if job is None:
                if self._extra and not frontier.total:  # a grown worker, nothing queued
                    self._extra, self._ended = self._extra - 1, self._ended + 1
                    return
                job = await frontier.get()
                if job is None:
                    return
            check = job.check
            try:
                await (self.check_url if check is None else check)(job)
            except Exception as exc:  # one URL's failure never stops the run (a cancel does)
                why = f"internal error: {type(exc).__name__}: {exc}"
                self.rec.url(
                    UrlResult.unrequested(
                        job.url, job.sitemap, job.line, job.lastmod, "allowed", why
                    )
                )
            finally:
                frontier.done(job.lane)
                if check is None:  # the bar counts listed URLs
                    self.progress.advance()


class _FirstUse:
    """Stands for a validate run's checker until its first use: `x.name(...)` builds the
    checker (Auditor.checker) and calls its `name`, so that a run that never calls one
    (a validate of local files) never imports audit.pipeline.check."""

    def __init__(self, auditor: Auditor) -> None:
        self._auditor = auditor

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(self._auditor.checker, name)(*args, **kwargs)

        return call
