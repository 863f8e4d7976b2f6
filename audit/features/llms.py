"""`crawl --llms` (contracts/agents.md, "llms.txt"): a hook of the run (a feature).

Files: when the first sitemap of an origin answers (before its body is read, so before any
URL it lists is checked), `/llms.txt` and `/llms-full.txt` of that origin are requested
once each (GET, the main User-Agent, whatever robots.txt says; redirects followed). A
missing file is no finding; an HTML answer is `llms-html-shell` and nothing more; an
llms.txt read as text gets `llms-invalid` and `llms-too-large` and its links are kept
(checks/llms.py). llms-full.txt is only checked for the shell.

Links on audited origins: a listed URL that llms.txt links is judged from its own listed
check when its record is judged (marked `"llms": true`, the link codes added to its
findings). Once every listed URL was checked (`drain`), each link no sitemap lists is
requested like a listed URL (robots.txt first: a blocked link is not requested), gets a
url record with `"sitemap": null`, `"source": "llms"`, and only the llms codes. Links on
other origins are counted, never requested. `summary.llms` at the end: the files, the link
counts and the coverage of indexable listed URLs on origins whose llms.txt was read.

Imports no aiohttp.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from audit.checks.agents import (
    Indexability,
    agent_verdict,
    index_reason,
    meta_noindex,
    parse_agents,
)
from audit.checks.llms import (
    READ_CHARS,
    LinkAnswer,
    blocked_finding,
    decode_llms,
    file_findings,
    is_html_shell,
    is_html_type,
    link_code,
    link_finding,
    read_llms,
    resolve_links,
    shell_finding,
    starts_like_html,
)
from audit.checks.page import PageSink
from audit.checks.verdict import Listing, UrlVerdict, judge_url
from audit.core.agent import canonical_token
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, UrlResult, header_value
from audit.http.hosts import canonical_origin
from audit.pipeline.context import work_through
from audit.pipeline.hooks import NEXT, Chain, Hook
from audit.rules.fingerprints import SeenUrls
from audit.rules.urls import normalize_url

if TYPE_CHECKING:
    from audit.checks.pagefacts import PageFacts
    from audit.http import StreamResponse
    from audit.http.robots import RobotsPolicy
    from audit.pipeline.context import RunContext, SitemapJob, UrlJob

__all__ = ["LlmsHook"]

_SNIFF = 1024  # bytes of llms-full.txt read: enough to tell an HTML shell
_TEXT_BYTES = READ_CHARS * 4 + 4  # READ_CHARS characters of UTF-8 at most


@dataclass(frozen=True, slots=True)
class _Link:
    url: str  # resolved, without fragment
    llms: str  # the llms.txt URL
    line: int  # its first line there


def _origin(url: str) -> str:
    return canonical_origin(url) or ""


class LlmsHook(Hook):
    """`--llms`: one per target; see the module."""

    name = "llms"
    ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.agents = parse_agents(",".join(config.agents)) if config.agents else ()
        self.main = ""
        self.reads: dict[str, asyncio.Task[None]] = {}  # origin -> its files' read
        self.files: dict[str, list[dict[str, Any]]] = {}  # origin -> its files' entries
        self.links: dict[str, _Link] = {}  # normalised URL -> the link, every llms.txt
        self.counted: set[str] = set()  # origins whose llms.txt was read as text
        self.listed = SeenUrls()  # normalised listed URLs
        self.indexable: Counter[str] = Counter()  # origin -> indexable listed URLs
        self.covered: Counter[str] = Counter()  # origin -> those some llms.txt links

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.main = canonical_token(ctx.agent_token)  # `bingbot` is spelt `Bingbot`

    # --- the files -------------------------------------------------------------

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> Chain[None]:
        origin = _origin(job.url)
        if origin:
            task = self.reads.get(origin)
            if task is None:
                self.files[origin] = []
                task = self.reads[origin] = asyncio.create_task(self._read(origin))
            await asyncio.shield(task)
        return NEXT

    async def _read(self, origin: str) -> None:
        """Both files of an origin, llms.txt first."""
        client = self.ctx.client
        entries = self.files[origin]
        found: list[Finding] = []
        # llms.txt is read as text; of llms-full.txt only enough to tell an HTML shell
        for name, size in (("llms.txt", _TEXT_BYTES), ("llms-full.txt", _SNIFF)):
            url = f"{origin}/{name}"
            result = await client.fetch(url, method="GET", body_bytes=size, confirm_with_get=False)
            entry: dict[str, Any] = {"url": url, "status": result.status}
            entries.append(entry)
            body = result.body_head
            if result.status != 200:
                continue
            if is_html_shell(header_value(result.headers, "content-type"), body):
                found.append(shell_finding(url))
            elif name == "llms.txt":
                found += self._text(origin, url, decode_llms(body), entry)
        self.ctx.recorder.findings(found)

    def _text(self, origin: str, url: str, text: str, entry: dict[str, Any]) -> list[Finding]:
        """An llms.txt read as text: its entry's fields, its links kept, its findings."""
        parsed = read_llms(text)
        resolved = resolve_links(url, parsed.links)
        self.counted.add(origin)
        entry["chars"] = len(text)
        entry["links"] = sum(
            1 for dest, line in parsed.links if resolve_links(url, ((dest, line),))
        )
        entry["valid"] = parsed.invalid_line is None
        for norm, (link, line) in resolved.items():
            self.links.setdefault(norm, _Link(link, url, line))
        return file_findings(url, len(text), parsed.invalid_line)

    # --- listed URLs that llms.txt links ----------------------------------------

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        norm = normalize_url(job.url)
        self.listed.add(norm)
        origin = _origin(norm)
        extra = record.extra or {}
        indexable = extra.get("indexable") is True
        self.indexable[origin] += indexable  # one more, or none
        link = self.links.get(norm)
        # (each listed URL is judged once: the run admits a normalised URL once)
        if link is None or not self._audited(norm):
            return None
        self.covered[origin] += indexable
        policy = self.ctx.robots.cached(record.url)
        answer = None
        if result is not None:
            judged = job.verdict
            said = (judged.noindex, judged.canonical) if judged is not None else (False, False)
            noindex, elsewhere = said
            answer = _answer(result, noindex=noindex, elsewhere=elsewhere, listed=True)
        more = self._findings(link, answer, policy, main_blocked=record.robots == "blocked")
        return record.with_extra({**extra, "llms": True}), [*found, *more]

    def _audited(self, norm: str) -> bool:
        return _origin(norm) in self.reads

    def _findings(
        self,
        link: _Link,
        answer: LinkAnswer | None,
        policy: RobotsPolicy | None,
        *,
        main_blocked: bool,
    ) -> list[Finding]:
        """The link's findings: the link code its answer gives (None: not requested), then
        the agents robots.txt keeps from it, the main agent first, then the named agents
        in --agents order."""
        out: list[Finding] = []
        if answer is not None and (code := link_code(link.url, answer)) is not None:
            out.append(link_finding(code, link.url, link.llms, link.line, answer))
        if policy is None or policy.status != "ok":
            return out
        blocked = [self.main] if main_blocked else []
        blocked += [
            agent
            for agent in self.agents
            if agent.lower() != self.main.lower() and not policy.allowed(link.url, agent)
        ]
        if blocked:
            out.append(blocked_finding(link.url, link.llms, link.line, blocked))
        return out

    # --- links no sitemap lists --------------------------------------------------

    async def drain(self) -> None:
        # (a link judged as a listed URL is listed: judge notes it)
        todo = [
            link
            for norm, link in self.links.items()
            if self._audited(norm) and norm not in self.listed
        ]
        await work_through(todo, self._check, self.config.concurrency)

    async def _check(self, link: _Link) -> None:
        """A link only llms.txt lists: robots.txt first, then the request, its record."""
        url = link.url
        policy = await self.ctx.robots_for(url)
        if not policy.allowed(url):  # robots.txt keeps the main agent out (or is unreachable)
            held = policy.status == "unreachable"
            record = UrlResult.unrequested(
                url, None, None, None, "unreachable" if held else "blocked"
            )
            kept = self._findings(link, None, policy, main_blocked=not held)
            self._deliver(UrlVerdict(record, [], Indexability.ROBOTS), kept, policy, [], ())
            return
        result, facts = await self._fetch(url)
        judged = judge_url(result, Listing(url), self.config, agent_token=self.main)
        noindex, elsewhere = self._page_says(result, judged, facts)
        answer = _answer(result, noindex=noindex, elsewhere=elsewhere, listed=False)
        found = self._findings(link, answer, policy, main_blocked=False)
        # the headers' reason, else the page's noindex or canonical (in index_reason's order)
        reason = judged.reason or index_reason(judged.record, result, noindex, elsewhere)
        tags = result.header_all("x-robots-tag")
        metas = facts.metas if facts is not None else ()
        self._deliver(replace(judged, reason=reason), found, policy, tags, metas)

    async def _fetch(self, url: str) -> tuple[FetchResult, PageFacts | None]:
        """As a listed URL: one GET with --page-checks (the page's facts), else HEAD."""
        if not self.config.page_checks:
            return await self.ctx.client.fetch(url), None
        sink = PageSink(self.config.page_cap)
        result = await self.ctx.client.fetch_page(url, sink, cap=self.config.page_cap)
        return result, sink.facts  # None but for a 200 HTML answer (the sink reads no other)

    def _page_says(
        self, result: FetchResult, judged: UrlVerdict, facts: PageFacts | None
    ) -> tuple[bool, bool]:
        """(noindex for the main agent, a canonical to another URL), headers and page."""
        noindex, elsewhere = judged.noindex, judged.canonical
        if facts is not None:
            noindex = noindex or meta_noindex(facts.metas, self.main) is not None
            page = result.final_url
            if facts.canonicals:  # the head's first
                canonical = urljoin(page, facts.canonicals[0])
                elsewhere = elsewhere or normalize_url(canonical) != normalize_url(page)
        return noindex, elsewhere

    def _deliver(
        self,
        judged: UrlVerdict,
        found: list[Finding],
        policy: RobotsPolicy,
        tags: list[str],
        metas: tuple[tuple[str, str], ...],
    ) -> None:
        """A link's record on, with its fields (its indexability: the verdict's); `tags` and
        `metas`: the X-Robots-Tag values and robots metas its answer had (none for a link
        not requested)."""
        record = judged.record
        fields: dict[str, Any] = {"source": "llms", "llms": True, **judged.index_fields()}
        if self.agents:
            fields["agents"] = {
                agent: agent_verdict(policy.allowed(record.url, agent), tags, metas, agent)
                for agent in self.agents
            }
        self.ctx.deliver(record.with_fields(fields), found)

    # --- the summary -------------------------------------------------------------

    def end_of_run(self) -> None:
        on_site = {n for n in self.links if self._audited(n)}
        external = len(self.links) - len(on_site)
        indexable = sum(self.indexable[o] for o in self.counted)
        covered = sum(self.covered[o] for o in self.counted)
        notes: dict[str, Any] = self.ctx.recorder.notes.setdefault(
            "llms",
            {"files": [], "links": 0, "external": 0, "covered": 0, "indexable": 0},
        )
        notes["files"] += itertools.chain.from_iterable(self.files.values())
        notes["links"] += len(on_site)
        notes["external"] += external
        notes["covered"] += covered
        notes["indexable"] += indexable
        total = notes["indexable"]
        notes["coverage"] = round(notes["covered"] / total, 3) if total else None


def _answer(result: FetchResult, *, noindex: bool, elsewhere: bool, listed: bool) -> LinkAnswer:
    """A link's answer as the link codes read it."""
    ctype = header_value(result.headers, "content-type")
    html = is_html_type(ctype) or starts_like_html(result.body_head)
    return LinkAnswer(
        status=result.status,
        redirected=bool(result.redirects),
        failed=result.error is not None,
        html=html,
        noindex=noindex,
        canonical_elsewhere=elsewhere,
        listed=listed,
    )
