"""The link crawl of `crawl --links` (RULES.md, Site coverage): a hook on the Auditor.

While the listed URLs are checked, each is fetched with one GET (a facts sink of
checks/pagefacts.py, sharing the read and the parse with --page-checks and --content) and
`judge` reads its links (checks/links.py) off the sink's facts; the internal ones (on the
origins of the audited sitemaps) are counted as inlinks and queued. Once every listed URL
was checked, `drain` hands the site roots and then every queued page, breadth-first, to the
run's frontier (Auditor.enqueue): each goes into its host's queue and one of the run's
workers checks it (`_check`) under its group's rate and in-flight cap, as it checks a
listed URL. There is no second pool of workers: a page waiting on a slow or backed-off
group holds none, and --concurrency bounds listed and linked pages together. At most
FEED_MAX pages are out at once (the rest wait in the queue), so memory stays flat. A page's
answer is judged by the step a listed URL's answer goes through (Auditor.judged), on the
run's client (its politeness, retries and redirect recording), robots.txt first: a
blocked page is not fetched and nothing is found through it. A listed URL is never fetched
again. Depth counts link hops from a seed: the root is depth 0, a listed page's links
depth 1. A redirect is followed: its target counts as linked from the redirecting URL (unless
the chain ends in an error: the redirecting URL is then the one `link-broken`).

Memory stays flat: URLs queued or fetched are 8-byte fingerprints (SeenUrls); the queue
beyond `MEMORY_FRONTIER` URLs, the inlink counts and the records waiting for their inlinks
live in one SQLite temp file (audit/pipeline/linkstore.py; counts and records go there in
bounded batches). Every url record is held until the end (its `inlinks` are only known then) and delivered with `source` and `inlinks`; links-only pages get records
with `"sitemap": null`. The verdicts (checks/coverage.py) and `summary.coverage` come at
the end of the run.

With `--state PATH` the crawl asks the run's keeper (the StateHook, through its
RunContext) for a side file when attached: the store is kept as `PATH.links-N`
(N: the target's place in the run) instead of a temp file. Every queued URL has a row there
(memory only caches the first ones) and a row stays until its page is held; rows are
committed at most 100 ms after a page is done and always between two pages (WAL: a SIGKILL
loses at most the last batch, whose pages are simply fetched again). When the state resumes
the same run, the crawl goes on from the file: listed pages held are not fetched again
(`before_request`), URLs met (held or queued) are not queued again, the frontier is the
queued rows whose page is not held, and --max-pages, the listed pages read and the pages by
depth are counted from the held rows; the verdicts at the end cover everything, so the
report is that of an uninterrupted run. The records go out through the StateHook, which
stores them as the run's URL results. The state removes the file when its run completes;
a new run (and a run after a complete one) starts a new crawl. URL keys in the file are
`url_key` (audit.rules.fingerprints), the same in every process. Imports no aiohttp.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from audit.checks.coverage import (
    coverage_incomplete,
    link_broken,
    page_not_in_sitemap,
    page_reason,
    url_orphan,
)
from audit.checks.links import PageLinks, header_nofollow, links_of
from audit.checks.pagefacts import LINKS, FactsSink, PageFacts
from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence
from audit.core.records import FetchResult, Finding, SitemapRecord, UrlResult
from audit.pipeline.context import UrlJob
from audit.pipeline.hooks import NEXT, Chain, Done, Hook
from audit.pipeline.linkstore import MEMORY_FRONTIER, LinkQueue, LinkStore
from audit.rules.fingerprints import SeenUrls, url_key
from audit.rules.urls import normalize_url

if TYPE_CHECKING:
    from audit.http.exchange import BodySink
    from audit.pipeline.context import RunContext, SitemapJob
    from audit.sitemap.parser import StreamParser

__all__ = [
    "FEED_MAX",
    "HOST_OUT",
    "MEMORY_FRONTIER",
    "WAITING_MAX",
    "LinkCrawl",
    "add_coverage",
    "marked",
    "verdicts",
]

FEED_MAX = 1_000  # pages of the crawl in the frontier at once (queued or being checked)
HOST_OUT = 250  # ... of one host (or twice its in-flight cap); its next ones wait aside...
WAITING_MAX = 10_000  # ... up to this many in all, so that other hosts' pages go meanwhile
_NORMS_KEPT = 50_000  # links remembered with their normalised form (then forgotten at once)

# The final delivery of a url record and its findings (Auditor.deliver, or the --state
# hook's, which also stores them)
Deliver = Callable[[UrlResult, list[Finding]], None]


def _origin(norm: str) -> str:
    """scheme://host[:port] of a normalised absolute http(s) URL: what comes before its
    path, which always starts with "/" (normalize_url). Both callers pass one: a sitemap's
    URL that starts so (_origin_of), a queued page (an internal link, or a root)."""
    return norm[: norm.find("/", norm.find("://") + 3)]


class LinkCrawl(Hook):
    """`--links`: one per target; see the module."""

    name = "links"
    ctx: RunContext  # set by attach, which the run calls before any other hook point
    _emit: Deliver  # the final delivery (attach: the run's, or its keeper's)

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.agent = ""
        self.origins: set[str] = set()
        self._inside: tuple[str, ...] = ()  # "origin/" of each: a normalised URL inside one
        self._norms: dict[str, str] = {}  # link -> normalised, for links met again (menus)
        self.roots: set[str] = set()  # normalised
        self.seen = SeenUrls()  # queued or fetched by the link crawl
        self.store = LinkStore()
        self.queue = LinkQueue(self.store)
        self.fetched = 0  # links-only pages requested (what --max-pages counts)
        self.listed_read = 0
        self.depths: Counter[int] = Counter()
        self.stopped_by: str | None = None
        self.drained = False
        self.cut_depth = False  # a link deeper than --max-depth was not followed
        self.out = 0  # pages handed to the frontier and not checked yet
        self._out: Counter[str] = Counter()  # ... by origin
        # origin -> pages waiting (an audited origin's queue stays once made, emptied)
        self._aside: defaultdict[str, deque[tuple[str, int]]] = defaultdict(deque)
        self._n_aside = 0
        self._more = asyncio.Event()  # set when the frontier may take more
        self._sinks: dict[int, FactsSink] = {}  # id(job) -> the sink of its GET, until judged
        self.done_listed: SeenUrls | None = None  # resumed: the listed URLs held before
        self._again: set[int] = set()  # id(job) of listed pages held before, judged again
        self.resumed = 0  # resumed: the pages held before (not requested again)
        # --render: normalised target -> pages whose link to it is JS-only (js_inlinks)
        self._js: Counter[str] = Counter()
        self._rendering = config.render is not None  # records say their js_inlinks

    # --- the listed URLs ------------------------------------------------------

    def attach(self, ctx: RunContext) -> None:
        """With --state the crawl keeps its store in the keeper's side file: when the keeper
        resumes its run, the crawl goes on from what that run left there (none, or another
        run's: a new crawl), and its records go out at the end through the keeper."""
        self.ctx = ctx
        self.agent = ctx.agent_token
        self._emit = ctx.deliver
        keeper = ctx.keeper()
        if keeper is not None:
            self._emit = keeper.deliver_final
            path = os.fspath(keeper.side_file("links"))
            if self.store.keep(path, resume=keeper.resume, run=keeper.run):
                self._restore()

    def _restore(self) -> None:
        """A resumed crawl: the URLs it met (held or queued) are not queued again, listed
        pages held are not fetched again, and its counters start from what it held."""
        done = SeenUrls()
        for url, listed in self.store.held_urls():
            self.seen.add(url)
            self.resumed += 1
            if listed:
                done.add(url)
        for url in self.store.queued_urls():
            self.seen.add(url)
        self.done_listed = done
        self.fetched, self.listed_read, depths = self.store.counts()
        self.depths.update(depths)

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        """A resumed crawl: a listed page held before the run died is not requested
        again; its verdict is derived again from the evidence held with it (so host-wide
        judgements such as a deploy stamp see its answer), its links were counted and
        queued already."""
        done = self.done_listed
        if done is None or job.url not in done:
            return NEXT
        evidence = self.store.evidence(url_key(job.url))
        if evidence is None:
            return NEXT
        self._again.add(id(job))
        return Done(evidence)

    def sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        self._origin_of(job.url)  # early: the listed pages' links are judged against it
        return None

    def sitemap_done(self, record: SitemapRecord, parser: StreamParser) -> None:
        self._origin_of(record.url)

    def _origin_of(self, url: str) -> None:
        norm = normalize_url(url)
        if norm.startswith(("http://", "https://")):
            origin = _origin(norm)
            if origin not in self.origins:
                self.origins.add(origin)
                self._inside = tuple(o + "/" for o in sorted(self.origins))
                self.roots.add(origin + "/")

    def page_body(self, job: UrlJob) -> BodySink | None:
        sink = self._sinks[id(job)] = FactsSink(LINKS, self.config.page_cap, job.url)
        return sink

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        sink = self._sinks.pop(id(job), None)
        if result is None:
            return None
        facts = sink.facts if sink is not None else None
        final = result.final_url
        if id(job) in self._again:  # counted, and its links followed, before the crash
            page = self._read(final, result, facts)
        else:
            self.listed_read += 1
            self.depths[0] += 1
            page = self._answered(job.url, result, 0, facts)
        extra = record.extra or {}
        reason = page_reason(extra.get("indexability"), page, final)
        if reason == extra.get("indexability"):
            return None
        extra = {**extra, "indexable": reason is None, "indexability": reason}
        return record.with_extra(extra), found

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        depth = 0 if result is not None else None  # judge() counted it as read
        again = id(job) in self._again
        self._again.discard(id(job))
        key = url_key(job.url)
        self.store.hold(
            key, True, record, found, url=job.url, depth=depth, evidence=job.evidence, again=again
        )
        self.store.tick()
        return Done(None)

    def add_rendered(self, page: str, links: Iterable[str]) -> None:
        """--render: a listed page's JS-only links (rendered, not in its raw HTML) at its
        final URL `page`: linked from it like its raw links (one inlink per page), queued
        one hop deeper, and counted as JS-only links of their targets."""
        targets = self._targets(links)
        targets.pop(normalize_url(page), None)
        self._js.update(targets.keys())
        self._link(page, targets.values(), 1)

    # --- what a fetched page adds to the crawl -------------------------------

    def _answered(
        self, url: str, result: FetchResult, depth: int, facts: PageFacts | None
    ) -> PageLinks | None:
        """A page's answer into the crawl: a redirect's target as linked from the URL, the
        page's followable internal links as linked from it and queued one hop deeper."""
        final = url
        if result.redirects:  # (final_url: the redirect's target, never empty)
            final = result.final_url
            # held first: once seen, _link does not queue it to be fetched a second time
            self._redirect_target(final, result, facts)
            if result.status is not None and result.status < 400:
                self._link(url, [final], depth)
            # else the chain ends in an error: that is the linked URL's one link-broken, its
            # target is not a second one (nor counted twice in summary.coverage)
        page = self._read(final, result, facts)
        if page is not None and page.links:  # (most pages of a site link nowhere new)
            self._link(final, page.links, depth + 1)
        return page

    def _read(self, url: str, result: FetchResult, facts: PageFacts | None) -> PageLinks | None:
        """The links of a 200 HTML page of an audited origin; None for anything else."""
        if facts is None or result.status != 200 or not facts.bytes_read:
            return None
        if not self._internal(normalize_url(url)):
            return None
        page = links_of(facts, url, agent=self.agent)
        if header_nofollow(result.header_all("x-robots-tag"), self.agent):
            page = replace(page, links=(), nofollow=True)
        return page

    def _internal(self, norm: str) -> bool:
        # a normalised URL's path starts with "/": its origin is what comes before
        return norm.startswith(self._inside)

    def _link(self, source: str, links: Iterable[str], depth: int) -> None:
        """Count `source`'s links once per target (never to itself), queue the new ones."""
        targets = self._targets(links)
        targets.pop(normalize_url(source), None)
        if not targets:  # (a store write saved: per page, with --links)
            return
        self.store.link(source, targets)
        known = {norm for _i, norm, _first in self.seen.add_all(list(targets))}
        for norm, link in targets.items():
            if norm not in known:  # new
                self.queue.push(link, depth, url_key(norm))

    def _targets(self, links: Iterable[str]) -> dict[str, str]:
        """The internal links, normalised (each once) -> the link as found first."""
        targets: dict[str, str] = {}
        inside, norms = self._inside, self._norms
        if len(norms) > _NORMS_KEPT:
            norms.clear()
        for link in links:
            norm = norms.get(link)
            if norm is None:
                norm = norms[link] = normalize_url(link)
            if norm.startswith(inside):
                targets.setdefault(norm, link)  # (as found first)
        return targets

    def _redirect_target(self, final: str, result: FetchResult, facts: PageFacts | None) -> None:
        """A redirect's target read here, not again: its own record, unless it is listed
        (the listed URL has its record) or was met before."""
        norm = normalize_url(final)
        if not self._internal(norm) or self._listed(final) or self.seen.add(final):
            return
        target = replace(result, url=final, redirects=())
        self._hold_page(final, target, self._read(final, target, facts), None)

    def _listed(self, url: str) -> bool:
        return url in self.ctx.listed

    # --- the crawl beyond the listed URLs ------------------------------------

    async def drain(self) -> None:
        """Every listed URL is checked: the pages found through links go to the run's
        frontier, the roots first, then breadth-first, and the run's workers check them
        (`_check`) under their groups' politeness, as they check listed URLs. At most
        FEED_MAX pages are out at once, topped up as each is done: first the pages set
        aside for a host that has room again, then the queue's. A page whose host has
        HOST_OUT (or twice its in-flight cap) out waits aside, at most WAITING_MAX in all,
        so that a slow host's pages never keep another host's from the frontier. Returns
        when nothing is queued and no page is out."""
        for root in sorted(self.roots, reverse=True):
            if not self.seen.add(root):
                self.queue.first(root, 0)
        host_out = max(HOST_OUT, 2 * self.config.per_host_cap)
        aside = self._aside
        more = self._more
        while True:
            more.clear()
            for origin, waiting in aside.items():  # (drain alone adds to it, not here)
                while waiting and self._out[origin] < host_out:
                    await self._send(*waiting.popleft(), origin)
                    self._n_aside -= 1
            while self.out < FEED_MAX and self._n_aside < WAITING_MAX:
                item = self._take()
                if item is None:
                    break
                origin = _origin(normalize_url(item[0]))
                if self._out[origin] < host_out:
                    await self._send(*item, origin)
                else:
                    aside[origin].append(item)
                    self._n_aside += 1
            if not self.out:
                break
            await more.wait()
        self.drained = True

    async def _send(self, url: str, depth: int, origin: str) -> None:
        self.out += 1
        self._out[origin] += 1
        job = UrlJob(url, None, None, None, context=(depth, origin), check=self._check)
        await self.ctx.enqueue_job(job)

    def _take(self) -> tuple[str, int] | None:
        """A queued page to fetch now: listed ones were read already, too deep ones are cut."""
        while self.stopped_by is None and (item := self.queue.pop()) is not None:
            url, depth = item
            if self._listed(url):
                continue
            max_depth = self.config.max_depth
            if max_depth is not None and depth > max_depth:
                self.cut_depth = True
                continue
            if self.fetched >= self.config.max_pages:
                self.stopped_by = "max-pages"
                return None
            self.fetched += 1
            return item
        return None

    async def _check(self, job: UrlJob) -> None:
        """A page of the crawl, taken from the frontier by one of the run's workers:
        robots.txt first (a blocked page is not fetched), then one GET whose links are read."""
        url, (depth, origin) = job.url, job.context
        try:
            policy = await self.ctx.robots_for(url)
            if not policy.allowed(url):
                blocked = UrlResult.unrequested(url, None, None, None, "blocked")
                self._hold(url, blocked, "robots", counted=True)
                return
            cap = self.config.page_cap
            sink = FactsSink(LINKS, cap, url)
            result = await self.ctx.client.fetch_page(url, sink, cap=cap)
            self.depths[depth] += 1
            page = self._answered(url, result, depth, sink.facts)
            self._hold_page(url, result, page, depth)
        finally:
            self.store.tick()
            self.out -= 1
            self._out[origin] -= 1
            self._more.set()  # topped up: the next one goes while this one's did

    def _hold_page(
        self,
        url: str,
        result: FetchResult,
        page: PageLinks | None,
        depth: int | None,
    ) -> None:
        """A links-only page's record, judged by the step a listed URL's answer goes
        through (RunContext.judge_answer: checks/verdict.py), its indexability as for a
        listed URL; `depth`: of a page the crawl fetched (counted), None for a redirect's
        target."""
        judged = self.ctx.judge_answer(UrlJob(url, None, None, None), result)
        said = judged.index_fields()["indexability"]
        reason = page_reason(said, page, result.final_url)
        self._hold(url, judged.record, reason, depth, counted=depth is not None)

    def _hold(
        self,
        url: str,
        record: UrlResult,
        reason: str | None,
        depth: int | None = None,
        *,
        counted: bool = False,
    ) -> None:
        record = record.with_fields({"indexable": reason is None, "indexability": reason})
        self.store.hold(url_key(url), False, record, [], url=url, depth=depth, counted=counted)

    # --- the end: verdicts, records, summary ---------------------------------

    def _stopped(self) -> str | None:
        """What kept the crawl from being complete, or None."""
        rows = (  # (whether it stopped the crawl, what), the first that applies
            (not self.drained, "interrupted"),
            (self.ctx.state.max_urls_reached, "max-urls"),
            (self.stopped_by is not None, self.stopped_by),
            (self.cut_depth, "max-depth"),
        )
        return next((what for stopped, what in rows if stopped), None)

    def end_of_run(self) -> None:
        stopped = self._stopped()
        counts = Counter[str]()
        emit = self._emit
        try:
            for listed, record, found, n, source in self.store.held():
                out = verdicts(listed, record, n, source, stopped is None, self.roots)
                counts.update(f.code for f in out)
                emit(self._js_marked(marked(listed, record, n)), [*found, *out])
        finally:
            self.store.close()
        if stopped is not None:
            root = min(self.roots, default="")
            pages = self.fetched + self.listed_read
            self.ctx.recorder.finding(coverage_incomplete(root, pages, stopped))
        add_coverage(
            self.ctx.recorder.notes,
            stopped,
            counts,
            fetched=self.fetched,
            listed=self.listed_read,
            depths=self.depths,
        )

    def _js_marked(self, record: UrlResult) -> UrlResult:
        """--render: the record's js_inlinks."""
        if not self._rendering:
            return record
        n = self._js.get(normalize_url(record.url), 0)
        extra = record.extra or {}
        rendered = extra.get("rendered", False)  # a links-only page is never rendered
        return record.with_extra({**extra, "js_inlinks": n, "rendered": rendered})


def add_coverage(
    notes: dict[str, Any],
    stopped: str | None,
    counts: Counter[str],
    *,
    fetched: int,
    listed: int,
    depths: Counter[int],
) -> None:
    """summary.coverage into the run's `notes`, added to what is there: `stopped` (what
    cut the crawl, or None), the coverage findings by code, the pages the crawl `fetched`
    beyond the `listed` pages it read, and the pages read by depth."""
    coverage: dict[str, Any] = notes.setdefault(
        "coverage",
        {"complete": True, "pages": 0, "listed": 0, "orphans": 0, "unlisted": 0},
    )
    coverage["complete"] = coverage["complete"] and stopped is None
    coverage["pages"] += fetched + listed
    coverage["listed"] += listed
    coverage["orphans"] += counts["url-orphan"]
    coverage["unlisted"] += counts["page-not-in-sitemap"]
    coverage["broken_links"] = coverage.get("broken_links", 0) + counts["link-broken"]
    by_depth = coverage.setdefault("depths", {})
    for depth, n in depths.items():
        by_depth[str(depth)] = by_depth.get(str(depth), 0) + n
    if stopped is not None:
        coverage["stopped_by"] = stopped


def verdicts(
    listed: bool, record: UrlResult, n: int, source: str | None, complete: bool, roots: set[str]
) -> list[Finding]:
    """The coverage findings of a held record with its `n` inlinks (`source`: the first
    page linking to it): link-broken, and url-orphan (a listed page that is not a root)
    or page-not-in-sitemap (a links-only page); `complete`: the crawl was not cut."""
    out: list[Finding | None] = [link_broken(record, n, source)]
    if not listed:
        out.append(page_not_in_sitemap(record, n, source))
    elif normalize_url(record.url) not in roots:
        out.append(url_orphan(record, n, complete=complete))
    return list(filter(None, out))  # (a Finding is never falsy)


# a held record's `source`, by (listed in a sitemap, linked from a page of the crawl)
_SOURCE = {
    (True, True): "both",
    (True, False): "sitemap",
    (False, True): "links",
    (False, False): "links",  # a page only the crawl found, even with no link to it
}


def marked(listed: bool, record: UrlResult, n: int) -> UrlResult:
    """The record with its `source` (sitemap, links or both) and `inlinks`."""
    return record.with_fields({"source": _SOURCE[listed, n > 0], "inlinks": n})
