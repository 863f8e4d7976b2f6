"""`crawl --render`: listed pages rendered in headless Chromium and compared with their raw
HTML (contracts/render.md). A hook of the run (a feature), with one `RenderSession` per run.

While the listed URLs are checked, each is fetched with one GET whose facts sink reads the
head and the links (shared with the page checks' read and parse). `judge` tells the
candidates (200, HTML, no redirect, body read) and reads their raw facts
(checks/render.py); `deliver` holds the best `N` of each host (empty shells first, then
listing order: a sitemap's key is its root's place among the roots, then the line of each
index entry down to it; a URL's is its sitemap's and its own line) and passes every other
record on at once with `"rendered": false`. A candidate pushed out of a host's best N is
passed on then: it can never come back. Once every listed URL was checked (`drain`), the
held pages are rendered (at most --render-tabs at once, each after one turn of its host's
--rate), compared, and passed on with their `render` object and findings, to the hooks
after this one (the --links crawl, which also takes their JS-only links, then --state)
and the recorder. An interrupted run passes the held records on unrendered.

`RenderSession` is the run's: one browser (audit.http.browser.Renderer) for every target,
the per-host counts, `summary.render`; `close()` ends the browser (Audit.run's `finally`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from audit.checks.links import header_nofollow
from audit.checks.pagefacts import FactsSink
from audit.checks.render import (
    RAW_WANTS,
    RenderFacts,
    compare,
    js_links,
    js_redirect,
    page_facts,
    render_failed,
    render_record,
    rendered_facts,
)
from audit.core.config import RENDER_ALL, CrawlConfig
from audit.core.errors import TargetError
from audit.core.records import Entry, FetchResult, Finding, UrlResult
from audit.http.browser import (
    Rendered,
    Renderer,
    RendererOptions,
    StartError,
    find_browser,
    run_access,
)
from audit.http.credentials import user_agent_of
from audit.http.hosts import origin_key
from audit.pipeline.hooks import NEXT, Chain, Done, Hook

if TYPE_CHECKING:
    from audit.http.exchange import BodySink
    from audit.pipeline.context import RunContext, SitemapJob, UrlJob

__all__ = ["RenderHook", "RenderSession", "check_browser"]

_LAST = (float("inf"),)  # the listing key of a sitemap whose place is not known


def check_browser(config: CrawlConfig) -> str:
    """The browser --render will use; TargetError (one line, exit 2) when there is none."""
    try:
        return find_browser(config.browser)
    except StartError as exc:
        raise TargetError(str(exc)) from None


class RenderSession:
    """A run's rendering: one browser for every target, the pages rendered per host."""

    def __init__(self, config: CrawlConfig, executable: str | None = None) -> None:
        self.config = config
        self.executable = executable or check_browser(config)
        self.per_host: dict[str, int] = {}  # pages chosen so far, by origin
        self.pages = 0
        self.failed = 0
        # started on its first render (or probe): made now, no browser runs yet
        self.renderer = Renderer(
            RendererOptions(
                self.executable,
                user_agent_of(self.config),  # as for the raw request
                run_access(self.config),
                tabs=self.config.render_tabs,
                timeout=self.config.render_timeout,
                sandbox=os.geteuid() != 0,  # root cannot use Chromium's sandbox
            )
        )

    def room(self, origin: str) -> int:
        """Pages still to choose on `origin` (no limit: sys.maxsize, more than any run holds)."""
        n = self.config.render
        if n is None or n == RENDER_ALL:
            return sys.maxsize
        return max(0, n - self.per_host.get(origin, 0))

    async def probe(self) -> None:
        """Start the browser once and end it, before the run's first request: a browser
        that cannot be started stops the run (TargetError, one line, exit 2)."""
        probe = Renderer(replace(self.renderer.options, tabs=1))
        try:
            await probe.start_only()
        except StartError as exc:
            raise TargetError(
                f"--render: {self.executable} could not be started: {exc}; install Chromium "
                "(Debian: apt-get install chromium) or give --browser PATH"
            ) from None
        finally:
            await probe.close()

    def summary(self) -> dict[str, Any]:
        renderer = self.renderer  # (no page rendered: 0.0 seconds, no peak)
        out: dict[str, Any] = {
            "pages": self.pages,
            "failed": self.failed,
            "seconds": round(renderer.seconds, 1),
        }
        if renderer.peak_memory:
            out["peak_mb"] = round(renderer.peak_memory / 1e6, 1)
        return out

    async def close(self) -> None:
        await self.renderer.close()


@dataclass(slots=True)
class _Candidate:
    rank: tuple[Any, ...]  # (not a shell, listing key, arrival): lower is chosen first
    job: UrlJob
    record: UrlResult
    found: list[Finding]
    result: FetchResult
    raw: RenderFacts
    final: str
    shell: bool
    nofollow: bool

    def __lt__(self, other: _Candidate) -> bool:  # heapq: the worst on top (negated)
        return self.rank > other.rank


@dataclass(slots=True)
class _Chosen:
    heap: list[_Candidate] = field(default_factory=list)  # a host's best so far


class RenderHook(Hook):
    """One target's part of --render (see the module)."""

    name = "render"
    ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, config: CrawlConfig, session: RenderSession) -> None:
        self.config = config
        self.session = session
        self.agent = ""
        self._sinks: dict[int, FactsSink] = {}
        self._cands: dict[int, _Candidate] = {}
        self._hosts: dict[str, _Chosen] = {}
        self._keys: dict[str, tuple[Any, ...]] = {}
        self._arrival = itertools.count()
        self._links: Any = None  # the target's LinkCrawl, if any

    def attach(self, ctx: RunContext) -> None:
        from audit.pipeline.links import LinkCrawl

        self.ctx = ctx
        self.agent = ctx.agent_token
        self._links = ctx.peer(LinkCrawl)

    def target_roots(self, urls: list[str]) -> None:
        """The target's root sitemaps in discovery order (their place is the first key)."""
        for i, url in enumerate(urls):
            self._keys.setdefault(url, (i,))

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        parent = self._keys.get(job.record_url, _LAST)
        self._keys.setdefault(loc, (*parent, entry.line))

    # --- the listed URLs ---------------------------------------------------------

    def page_body(self, job: UrlJob) -> BodySink | None:
        sink = self._sinks[id(job)] = FactsSink(RAW_WANTS, self.config.page_cap, job.url)
        return sink

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        sink = self._sinks.pop(id(job), None)
        # facts only of a 200 HTML answer (a facts sink reads no other), fed or revived
        facts = sink.facts if sink is not None else None
        if result is None or facts is None or not facts.bytes_read or result.redirects:
            return record.with_fields({"rendered": False}), found
        final = result.final_url
        nofollow = header_nofollow(result.header_all("x-robots-tag"), self.agent)
        raw = page_facts(facts, final, agent=self.agent, header_nofollow=nofollow)
        shell = job.verdict is not None and job.verdict.shell
        key = self._keys.get(job.sitemap or "", _LAST)
        # (a listed URL: its line is its entry's)
        rank = (not shell, key, job.line, next(self._arrival))
        self._cands[id(job)] = _Candidate(
            rank, job, record, found, result, raw, final, shell, nofollow
        )
        return record, found

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        cand = self._cands.pop(id(job), None)
        if cand is None:
            return NEXT
        cand.record, cand.found = record, found
        origin = origin_key(job.url)
        room = self.session.room(origin)
        chosen = self._hosts.setdefault(origin, _Chosen())
        heapq.heappush(chosen.heap, cand)
        if len(chosen.heap) > room:
            self._unrendered(heapq.heappop(chosen.heap))
        return Done(None)  # held: passed on (ctx.pass_on) once rendered or not

    def _unrendered(self, cand: _Candidate) -> None:
        """A held record on, marked not rendered (no room on its host, an interrupt)."""
        self.pass_on(
            cand.job, cand.record.with_fields({"rendered": False}), cand.found, cand.result
        )

    def pass_on(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> None:
        """A record on to the deliver hooks after this one, then the recorder."""
        self.ctx.pass_on(self, job, record, found, result)

    # --- rendering ---------------------------------------------------------------

    async def drain(self) -> None:
        chosen: list[_Candidate] = []
        for origin, host in self._hosts.items():
            # deliver holds at most the host's room, which changes only here (after its
            # heap is taken): every held page is rendered
            picked = sorted(host.heap, key=lambda c: c.rank)
            host.heap = []
            self.session.per_host[origin] = self.session.per_host.get(origin, 0) + len(picked)
            chosen += picked
        self._hosts.clear()
        chosen.sort(key=lambda c: c.rank[1:])  # listing order across hosts
        async with asyncio.TaskGroup() as tg:
            for cand in chosen:
                tg.create_task(self._render(cand))

    async def _render(self, cand: _Candidate) -> None:
        try:
            out = await self._rendered(cand)
        except asyncio.CancelledError:  # interrupted: the record goes on unrendered
            self._unrendered(cand)
            raise
        try:
            record, found = self._judged(cand, out)
        except Exception as exc:  # one page never stops the run
            why = f"internal error: {type(exc).__name__}: {exc}"
            record, found = self._judged(cand, Rendered(out.url, out.ms, failure=why))
        self.pass_on(cand.job, record, found, cand.result)

    async def _rendered(self, cand: _Candidate) -> Rendered:
        """One turn of the page's host's --rate, then its render."""
        url = cand.job.url
        with contextlib.suppress(ValueError):  # an URL without a host: no turn to take
            await self.ctx.client.hosts.get(url).acquire(hold_slot=False)
        self.session.pages += 1
        try:
            return await self.session.renderer.render(url)
        except StartError as exc:
            return Rendered(url, 0.0, failure=f"the browser could not be started: {exc}")

    def _judged(self, cand: _Candidate, out: Rendered) -> tuple[UrlResult, list[Finding]]:
        job = cand.job
        where: dict[str, Any] = {"url": job.url, "sitemap": job.sitemap, "line": job.line}
        # a Rendered has a failure, a navigation or the DOM (audit.http.browser): only
        # one of them; a failure comes without html
        if out.navigated_to is not None:
            extra = render_record(out.navigated_to, out.ms, None)
            found = [*cand.found, js_redirect(out.navigated_to, **where)]
            return cand.record.with_fields({"rendered": True, "render": extra}), found
        if out.html is None:
            self.session.failed += 1
            why = out.failure or "the page's DOM could not be read"
            found = [*cand.found, render_failed(why, **where)]
            return cand.record.with_fields({"rendered": False}), found
        rendered = rendered_facts(
            out.html,
            cand.final,
            agent=self.agent,
            header_nofollow=cand.nofollow,
            cap=self.config.page_cap,
        )
        only = js_links(cand.raw, rendered)
        if self._links is not None:  # (no JS-only links: it adds none)
            self._links.add_rendered(cand.final, only)
        found = compare(cand.raw, rendered, shell=cand.shell, agent=self.agent, **where)
        extra = render_record(out.final_url or job.url, out.ms, rendered, len(only))
        return cand.record.with_fields({"rendered": True, "render": extra}), [*cand.found, *found]

    def end_of_run(self) -> None:
        """Held records go on unrendered (an interrupted run), then summary.render."""
        for host in self._hosts.values():
            for cand in sorted(host.heap, key=lambda c: c.rank):
                self._unrendered(cand)
        self._hosts.clear()
        self.ctx.recorder.notes["render"] = self.session.summary()
