"""Expansion: sitemaps in, entries out, listed URLs on to the frontier.

    sitemap queue -> expanders (robots.txt, the answer, stream -> spool -> parser
                  -> validator) -> entries (hooks, the caller's callback) -> admit

A sitemap is fetched once (robots.txt first, for the finding only: it is still read),
its answer judged (audit.checks.sitemaps words the findings), and a readable body
streamed through the parser, so a slow frontier never stalls the download. An index's
children are scheduled here (loops, depth, exclusions, a local index's sibling files).
The pipeline (audit.pipeline.auditor) runs `EXPANDERS` of `run()` in its TaskGroup.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from audit.checks import sitemaps
from audit.core.config import CrawlConfig
from audit.core.errors import FetchError
from audit.core.records import Entry, Finding, Severity, SitemapRecord, finding
from audit.http import HttpClient, StreamResponse
from audit.http.rewrite import Rewriter
from audit.http.robots import RobotsCache, RobotsPolicy
from audit.pipeline.chain import HookChain
from audit.pipeline.context import EntryHook, Mode, RunState, SitemapHook, SitemapJob
from audit.pipeline.progress import Progress
from audit.pipeline.recorder import Recorder
from audit.pipeline.spool import Spool
from audit.rules.locs import LocUse, loc_use
from audit.rules.urls import normalize_url
from audit.rules.validator import HreflangGraph, SeenUrls, SitemapValidator
from audit.sitemap.parser import StreamParser

__all__ = ["LOCAL_CHUNK", "MAX_INDEX_DEPTH", "Expander", "excluded"]

_UNREAD_NAMED = 10  # children of a local index not read: how many the summary names
MAX_INDEX_DEPTH = 5  # guards a chain of nested indexes; sitemaps.org allows one level
LOCAL_CHUNK = 65536

Admit = Callable[[str, Entry, str, list[Finding]], Awaitable[None]]


class Expander:
    """The sitemaps of one run: its queue, what was visited, what is still pending."""

    def __init__(
        self,
        config: CrawlConfig,
        recorder: Recorder,
        chain: HookChain,
        state: RunState,
        *,
        mode: Mode,
        progress: Progress,
        now: datetime,
        agent_token: str,
        hreflang: HreflangGraph,
        on_entry: EntryHook | None,
        on_sitemap: SitemapHook | None,
        rewrite: Rewriter,
        robots_for: Callable[[str], Awaitable[RobotsPolicy]],
        admit: Admit,
        client: Callable[[], HttpClient],
        robots: Callable[[], RobotsCache | None],
    ) -> None:
        self.config = config
        self.rec = recorder
        self.chain = chain
        self.state = state
        self.mode = mode
        self.progress = progress
        self.now = now
        self.agent_token = agent_token
        self.seen = SeenUrls()  # every URL listed (loc-duplicate across sitemaps)
        self.hreflang = hreflang
        self.on_entry = on_entry
        # who sees each sitemap read to its end: the caller's callback, then the hooks'
        self._read_to_end: list[SitemapHook] = list(
            filter(None, (on_sitemap, *chain.sitemap_done))  # (the caller's may be None)
        )
        self._rewrite = rewrite
        self.robots_for = robots_for
        self.admit = admit
        self.client = client
        self.robots = robots
        self._include_sm = list(map(re.compile, config.include_sitemap))
        self._exclude_sm = list(map(re.compile, config.exclude_sitemap))
        self._visited: set[str] = set()
        self._sitemaps: asyncio.Queue[SitemapJob | None] = asyncio.Queue()
        self._pending = 0  # sitemaps and targets not done yet
        self.done = asyncio.Event()  # none pending: the listing is complete
        self._doc_errors: dict[int, int] = {}  # parser id -> file-level errors it reported

    def add_pending(self, n: int) -> None:
        """`n` more things (targets being discovered) to wait for before the listing is
        complete."""
        self._pending += n
        if self._pending == 0:
            self.done.set()

    def stop(self, expanders: int) -> None:
        """The listing is complete: each of the `expanders` running `run()` returns."""
        for _ in range(expanders):
            self._sitemaps.put_nowait(None)

    def schedule(self, job: SitemapJob) -> None:
        key = normalize_url(job.record_url)  # (a local path without a URL: stripped, as it is)
        if key in self._visited:
            if job.parent is None:  # a target's root that another target reads: audited
                self.sitemap_read(job)
            return
        self._visited.add(key)
        self._pending += 1
        self._sitemaps.put_nowait(job)

    def settle(self) -> None:
        """A sitemap or a target is done: when none is pending, the listing is complete."""
        self._pending -= 1
        if self._pending == 0:
            self.done.set()
            self.progress.listing_done()  # the bar's total is known from now on

    def _about_sitemap(self, job: SitemapJob, code: str, message: str) -> None:
        """A finding about a sitemap, placed where its parent lists it."""
        self.rec.finding(
            finding(code, message, sitemap=job.parent, line=job.parent_line, url=job.url)
        )

    def sitemap_excluded(self, url: str) -> bool:
        """Does --include-sitemap / --exclude-sitemap leave this sitemap out?"""
        return excluded(url, self._include_sm, self._exclude_sm)

    async def run(self) -> None:
        """One expander: sitemaps from the queue until it is closed."""
        while True:
            job = await self._sitemaps.get()
            if job is None:
                return
            try:  # (a body that breaks off is _consume's: nothing else raises a FetchError)
                if not self.state.max_urls_reached:
                    await self._expand(job)
                else:  # --max-urls is spent: its target is not audited further
                    self.sitemap_read(job)
            finally:
                self.progress.sitemap_done()
                self.settle()

    async def _expand(self, job: SitemapJob) -> None:
        """Fetch one sitemap (robots.txt first, for the finding only), judge its answer and
        stream a readable body through the parser."""
        path = job.local
        if path is not None:  # a local file: read in chunks, as an answer's body streams

            async def chunks() -> AsyncIterator[bytes]:
                with path.open("rb") as fh:
                    while chunk := fh.read(LOCAL_CHUNK):
                        yield chunk

            parser = StreamParser(job.public_url or str(path))
            error = await self._consume(job, parser, chunks(), ctype_ok=True, ctype="")
            self._sitemap_done(job, parser, None, error)
            return
        fetch_url = self._rewrite(job.url)  # --rewrite: read the sitemap where it is checked
        policy = await self.robots_for(fetch_url)
        if policy.status == "ok" and not policy.allowed(fetch_url):
            # Still read: the auditor must know the URLs it lists to report on them.
            self._about_sitemap(job, *sitemaps.sitemap_robots_blocked(self.agent_token))
        async with self.client().stream(fetch_url, headers=self.chain.sitemap_headers(job)) as resp:
            job.answered = datetime.now(UTC)
            if await self.chain.sitemap_answered(job, resp):
                self.sitemap_read(job)
                return
            if resp.redirects:
                self._about_sitemap(
                    job, *sitemaps.sitemap_redirected(resp.redirects, resp.final_url)
                )
            verdict = sitemaps.sitemap_answer(resp.status, resp.error)
            if verdict is not None:  # no readable body: its finding, its (empty) record
                if resp.status is None and job.parent is None:
                    self.state.roots_unreachable += 1
                    unreachable = self.state.target_unreachable
                    unreachable[job.target] = unreachable.get(job.target, 0) + 1
                self.sitemap_read(job)
                self._about_sitemap(job, *verdict)
                record = SitemapRecord(
                    job.url, job.parent, None, resp.status, 0, 0, False, resp.error
                )
                self.rec.sitemap(record)
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
            reader.cancel()  # (a done reader stays as it ended)
            await asyncio.gather(reader, return_exceptions=True)
        self._sitemap_done(job, parser, resp.status, error)

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
        source = job.record_url
        validator: SitemapValidator | None = None
        error: str | None = None
        ctype_pending = not ctype_ok  # (a local file's is always ok)
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
        if ctype_pending:  # the parser stopped (close): judged now
            self._content_type_pending(job, parser, ctype)
        validator = validator or self._validator(job, source, parser)
        if items:
            await self._handle(job, source, parser, validator, items)
        # the whole document's findings: a nested index, and its counts. A document
        # already reported as unreadable (HTML, not XML, broken gzip) is not also "empty";
        # one that broke off mid-way still gets its counts checked.
        if parser.kind == "sitemapindex" and job.parent is not None:
            self._about_sitemap(job, *sitemaps.index_nested())
        if parser.entries or not self._doc_errors.get(id(parser)):
            self.rec.findings(
                validator.finish(parser.kind, parser.entries, parser.uncompressed_bytes)
            )
        return error

    def _content_type_pending(self, job: SitemapJob, parser: StreamParser, ctype: str) -> bool:
        """A wrong Content-Type is reported once the body shows what it is (or the parser
        stopped); False when judged. An HTML body is reported as sitemap-is-html: its type
        says nothing new; an empty one (nothing fed: every chunk fed has bytes) shows
        nothing to judge."""
        if parser.is_html or not parser.compressed_bytes:
            return False
        if parser.kind is None and not parser.stopped:
            return True
        self._about_sitemap(job, *sitemaps.sitemap_content_type(ctype))
        return False

    def _validator(self, job: SitemapJob, source: str, parser: StreamParser) -> SitemapValidator:
        sitemap_url = job.public_url if job.local is not None else job.url

        def cross_submitted(loc: str) -> bool:
            """A URL on another host is allowed when that host's robots.txt lists this
            sitemap (sitemaps.org cross-submission); only robots.txt already read counts."""
            robots = self.robots()
            if sitemap_url is None or robots is None:
                return False
            policy = robots.cached(loc)
            return policy is not None and sitemap_url in policy.sitemaps

        return SitemapValidator(
            source,
            sitemap_url=sitemap_url,
            now=self.now,
            seen=self.seen,
            hreflang=self.hreflang,
            cross_submitted=cross_submitted,
            kind=parser.kind,
            served_at=job.answered,
            tolerance_s=self.config.lastmod_tolerance_s,
        )

    async def _handle(
        self,
        job: SitemapJob,
        source: str,
        parser: StreamParser,
        validator: SitemapValidator,
        items: list[Entry | Finding],
    ) -> None:
        # The per-entry path of every audit: the validator takes the batch in one call,
        # then each entry's findings go out in document order, among the parser's own.
        rec = self.rec
        on_entry = self.on_entry
        crawl = self.mode == "crawl"
        entries = [item for item in items if isinstance(item, Entry)]
        results = iter(validator.check_entries(entries))
        for item in items:
            if isinstance(item, Finding):
                if item.severity is Severity.ERROR:
                    self._doc_errors[id(parser)] = self._doc_errors.get(id(parser), 0) + 1
                rec.finding(item)
                continue
            found = next(results)
            if found:
                rec.findings(found)
            if on_entry is not None:
                on_entry(source, item)
            if item.kind == "sitemap":
                self._child(job, item, (item.loc or "").strip(), found)
            elif crawl:
                await self.admit(source, item, (item.loc or "").strip(), found)
        rec.entries += len(entries)
        for hook in self.chain.batches:  # the entries alone (the parser's findings went above)
            hook(source, entries)

    def _child(self, job: SitemapJob, item: Entry, loc: str, found: list[Finding]) -> None:
        """An index lists `loc`: schedule it once, unless it closes a loop, is too deep,
        excluded, or (a local index) not to be fetched."""
        parent = job.record_url
        self.rec.index_entry(parent, item.lastmod)
        for hook in self.chain.child:
            hook(job, item, loc)
        if loc_use(found)[0] is LocUse.NONE:
            return  # no usable <loc> (an empty one is loc-missing)
        if self.mode == "inspect" and job.parent is not None:
            return  # inspect follows the top index only
        # the child's ancestors: this index and its own; a <loc> among them closes a loop
        # (an http(s) URL: a local path there is never it)
        ancestors = (*job.ancestors, normalize_url(parent))
        if normalize_url(loc) in ancestors:
            code, message = sitemaps.index_loop()
            self.rec.finding(finding(code, message, sitemap=parent, line=item.line, url=loc))
            return
        if len(job.ancestors) >= MAX_INDEX_DEPTH:
            return
        if self.sitemap_excluded(loc):
            self.state.excluded_sitemaps += 1
            return
        self._schedule_child(job, item, loc, parent, ancestors)

    def _schedule_child(
        self, job: SitemapJob, item: Entry, loc: str, parent: str, ancestors: tuple[str, ...]
    ) -> None:
        """Read the child of `parent` (the index as its URL): a sibling file of a local index,
        or over HTTP (a local index stays local unless --online or a crawl); a missing
        sibling is a finding."""
        local = _local_child(job, loc)
        if local is not None and local.is_file():
            self.schedule(
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
            self.schedule(SitemapJob(loc, parent, item.line, ancestors, target=job.target))
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

    def _sitemap_done(
        self, job: SitemapJob, parser: StreamParser, status: int | None, error: str | None
    ) -> None:
        rec = SitemapRecord(
            job.record_url,
            job.parent,
            parser.kind,
            status,
            parser.entries,
            parser.uncompressed_bytes,
            parser.gzip,
            error,
        )
        self._doc_errors.pop(id(parser), None)
        self.sitemap_read(job)
        self.rec.sitemap(rec)
        for hook in self._read_to_end:
            hook(rec, parser)

    def sitemap_read(self, job: SitemapJob) -> None:
        """A sitemap of the job's target answered (its record is out, or a hook's)."""
        counts = self.state.target_sitemaps
        counts[job.target] = counts.get(job.target, 0) + 1


def excluded(
    url: str, include: Sequence[re.Pattern[str]], exclude: Sequence[re.Pattern[str]]
) -> bool:
    """Does an --include / --exclude pair (a sitemap's or a listed URL's) leave `url` out:
    it matches no include pattern (when there are some), or an exclude pattern?"""
    if include and not any(p.search(url) for p in include):
        return True
    return any(p.search(url) for p in exclude)


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
