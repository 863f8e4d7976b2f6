"""How a capability plugs into the pipeline: typed hooks, not overridden privates.

A `Hook` sees the run at fixed points and changes it only through its return
values and what its `RunContext` (audit.pipeline.context) offers. The base class does nothing at every
point; a capability overrides the points it needs, and the auditor calls only
the points a hook overrides (a run without hooks pays nothing per URL).

    attach(ctx)                once, before the first sitemap is read: the RunContext
    target_roots(urls)         a target's root sitemaps, in discovery order
    entry(source, entry)       every entry a sitemap lists, as it is parsed
    entries(source, entries)   the same entries a parsed batch at a time, after the
                               per-entry path saw each
    child(job, entry, loc)     an index lists a child sitemap
    sitemap_headers(job)       extra request headers for a sitemap
    sitemap_answered(job, r)   a sitemap's answer before it is read; Done: handled here
    sitemap_done(rec, parser)  a sitemap was read to its end
    sitemap_carried(job)       a sitemap a hook carried on its answer (a 304): read as is
    before_request(job)        a listed URL before anything is sent; Done: delivered here
    stored_answer(job)         robots.txt allows it: Done(evidence) that stands for
                               tonight's answer without a request (resume, --changed-only)
    request_headers(job)       extra request headers for a listed URL
    page_body(job)             a body sink for the URL's GET (the URL is then fetched with GET)
    answer_stands_for(job, r)  Done(the stored evidence the final answer stands for) (a 304),
                               which is then checked as a fresh answer is
    after_answer(job, result)  the final answer; Done: handled here (no checks run)
    judge(job, rec, found, r)  add to a URL's record and findings before delivery
    deliver(job, rec, found)   the url record and findings; Done: delivered here
    drain()                    every listed URL was checked: a hook's own work (--links) ends
    end_of_run()               the run ends (completed or not), before the summary

Order is data (STYLE.md lesson 20): each built-in hook has a `name`, and `HOOK_ORDER`
gives every name its number, the one place that decides which hook is asked first at
every point (scrapy's DOWNLOADER_MIDDLEWARES_BASE). A hook the table does not name (a
library caller's own) comes after the built-in ones, in the order given. A point that
can stop the chain returns `NEXT` (go on: ask the next hook) or `Done(value)` (the chain
ends here, with this value: lychee's ChainResult), never a flag or a None someone else
must interpret.

`UrlCheck` is the one step a capability may replace whole: how a listed URL is
checked (`migrate` judges each old URL on the new site). It is given to the
Auditor, never patched into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeAlias, TypeVar

from audit.http.exchange import TeeSink  # its home is the HTTP layer; kept importable here

if TYPE_CHECKING:
    from audit.core.evidence import Evidence
    from audit.core.records import Entry, FetchResult, Finding, SitemapRecord, UrlResult
    from audit.http import StreamResponse
    from audit.http.exchange import BodySink
    from audit.pipeline.context import RunContext, SitemapJob, UrlJob
    from audit.sitemap.parser import StreamParser

__all__ = [
    "CALLER_ORDER",
    "HOOK_ORDER",
    "HOOK_POINTS",
    "NEXT",
    "Chain",
    "Done",
    "Hook",
    "Next",
    "TeeSink",
    "UrlCheck",
    "order_of",
    "ordered",
    "overridden",
]

T = TypeVar("T")

# Every built-in hook's place in a run, lowest first at every hook point.
HOOK_ORDER: Mapping[str, int] = MappingProxyType(
    {
        "deploy-stamp": 100,  # a host's deploy stamp explains lastmod findings first
        "index-lastmod": 200,  # index <lastmod> against each child read
        "agents": 300,  # indexability (and --agents): what the hooks below read
        "agent-pages": 310,  # --agents-fetch with --links: the pages' facts
        "render": 400,  # before the link crawl, which takes the rendered pages' links
        "llms": 500,  # after indexability, which it reads
        "links": 600,  # after indexability, which it reads
        "intent": 700,  # after indexability, which it reads; before the state stores it
        "lastmod": 800,  # lastmod over time: sees a 304 before the state carries it
        "state": 900,  # --state: stores each verdict, answers from the store
        "budget": 1000,  # --budget: holds the listed URLs the state did not answer
        "ledger": 1100,  # the published-URL ledger (the listing, then dropped URLs)
        "new-sitemap": 1200,  # migrate --new-sitemap: the new site's listing
    }
)
CALLER_ORDER = 10_000  # a hook the table does not name: after the built-in ones


class Next:
    """Go on: the next hook at this point is asked (the pipeline's own step follows)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEXT"


NEXT = Next()


@dataclass(frozen=True, slots=True)
class Done(Generic[T]):
    """The chain ends here, with `value`: no later hook is asked at this point."""

    value: T


Chain: TypeAlias = Next | Done[T]


class Hook:
    """A no-op at every point; subclass and override what the capability needs."""

    name: ClassVar[str] = ""  # its place in HOOK_ORDER ("": a caller's, after them)

    def attach(self, ctx: RunContext) -> None:
        """Called once with the context of the run the hook serves (never the Auditor)."""

    def target_roots(self, urls: list[str]) -> None:
        """A target's root sitemaps, in discovery order (before any is read)."""

    def entry(self, source: str, entry: Entry) -> None:
        """Every parsed entry of every sitemap (the per-entry path: keep it cheap)."""

    def entries(self, source: str, entries: Sequence[Entry]) -> None:
        """The entries of one parsed batch of a sitemap, once each went through the
        per-entry path: what `entry` sees, for a hook that can take them a batch at a
        time (one call per batch, not per entry). A carried entry (a 304) comes alone."""

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        """An index lists the child sitemap `loc` (before it is scheduled)."""

    def sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        """Extra request headers for a sitemap (conditional requests)."""
        return None

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> Chain[None]:
        """A sitemap's answer before its body is read. Done: the hook dealt with it
        (a 304 whose entries it carried forward) and the body is not read."""
        return NEXT

    def sitemap_done(self, record: SitemapRecord, parser: StreamParser) -> None:
        """A sitemap was read to its end (its record is already delivered)."""

    def sitemap_carried(self, job: SitemapJob) -> None:
        """A sitemap that a hook's `sitemap_answered` carried forward without reading it
        (a 304): the entries it admitted for it reached `entry` as if parsed, and it
        counts as read to its end (night equals fresh, contracts/nights.md 1)."""

    def before_request(self, job: UrlJob) -> Chain[None]:
        """A listed URL before robots.txt or a request. Done: its outcome is delivered
        (or held, to be checked later through the context)."""
        return NEXT

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        """A listed URL robots.txt allows, before its request: Done(stored evidence) that
        stands for tonight's answer without a request, or NEXT (the URL is requested if no
        later hook has any). The verdict is derived from it exactly as from a fresh one."""
        return NEXT

    def request_headers(self, job: UrlJob) -> dict[str, str] | None:
        """Extra request headers for a listed URL."""
        return None

    def answer_stands_for(self, job: UrlJob, result: FetchResult) -> Chain[Evidence]:
        """The URL's final answer: Done(the stored evidence it stands for) (a 304 to a
        conditional request: the earlier answer, with the 304's validators), or NEXT.
        The verdict is then derived from that evidence as from a fresh answer."""
        return NEXT

    def page_body(self, job: UrlJob) -> BodySink | None:
        """A sink for the listed URL's body (content fingerprints). A hook that returns
        one makes the URL be fetched with one GET, as --page-checks does, up to the
        page cap; the sink sees the final answer's body beside the page checks' own."""
        return None

    def after_answer(self, job: UrlJob, result: FetchResult) -> Chain[None]:
        """The URL's final answer, before checks. Done: the hook delivered its outcome."""
        return NEXT

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        """A URL's record and findings before delivery (`result` None: not requested,
        e.g. robots-blocked). Return them changed (a field added to the record, a finding
        added), or None to leave them as they are."""
        return None

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        """A URL's record and findings. Done: the hook delivered them itself (through
        `RunContext.deliver`, or later through `RunContext.pass_on`), so no later hook
        nor the recorder gets them here."""
        return NEXT

    async def drain(self) -> None:
        """Every listed URL was checked and the run was not cut: a hook finishes its own
        requests here (the link crawl), on the run's client, before `end_of_run`."""

    def end_of_run(self) -> None:
        """The run ends, completed or interrupted; notes for the summary go here."""


HOOK_POINTS = (
    "target_roots",
    "entry",
    "entries",
    "child",
    "sitemap_headers",
    "sitemap_answered",
    "sitemap_done",
    "sitemap_carried",
    "before_request",
    "stored_answer",
    "request_headers",
    "answer_stands_for",
    "page_body",
    "after_answer",
    "judge",
    "deliver",
    "drain",
    "end_of_run",
)


def order_of(hook: Hook) -> int:
    """The hook's number in HOOK_ORDER (CALLER_ORDER for a name the table lacks)."""
    return HOOK_ORDER.get(hook.name, CALLER_ORDER)


def ordered(hooks: Iterable[Hook]) -> tuple[Hook, ...]:
    """The run's hooks in the table's order (a stable sort: hooks of one number, such as
    a caller's, keep the order they were given in)."""
    return tuple(sorted(hooks, key=order_of))


def overridden(hook: Hook, point: str) -> bool:
    """Does this hook do something at `point`? (The auditor skips the no-op defaults.)"""
    return getattr(type(hook), point) is not getattr(Hook, point)


class UrlCheck(Protocol):
    """How one listed URL is checked: the standard check, or a capability's own."""

    async def __call__(self, job: UrlJob) -> None: ...
