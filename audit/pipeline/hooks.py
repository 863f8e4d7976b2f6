"""How a capability plugs into the pipeline: typed hooks, not overridden privates.

A `Hook` sees the run at fixed points and changes it only through its return
values and what its `RunContext` (audit.pipeline.context) offers. The base class does nothing at every
point; a capability overrides the points it needs, and the auditor calls only
the points a hook overrides (a run without hooks pays nothing per URL).

    attach(ctx)                once, before the first sitemap is read: the RunContext
    entry(source, entry)       every entry a sitemap lists, as it is parsed
    child(job, entry, loc)     an index lists a child sitemap
    sitemap_headers(job)       extra request headers for a sitemap
    sitemap_answered(job, r)   a sitemap's answer before it is read; True: handled here
    sitemap_done(rec, parser)  a sitemap was read to its end
    sitemap_carried(job)       a sitemap a hook carried on its answer (a 304): read as is
    before_request(job)        a listed URL before anything is sent; True: delivered here
    stored_answer(job)         robots.txt allows it: evidence that stands for tonight's
                               answer without a request (resume, --changed-only), or None
    request_headers(job)       extra request headers for a listed URL
    page_body(job)             a body sink for the URL's GET (the URL is then fetched with GET)
    answer_stands_for(job, r)  the final answer stands for stored evidence (a 304): that
                               evidence, which is then checked as a fresh answer is
    after_answer(job, result)  the final answer; True: handled here (no checks run)
    judge(job, rec, found, r)  add to a URL's record and findings before delivery
    deliver(job, rec, found)   the url record and findings; True: delivered here
    drain()                    every listed URL was checked: a hook's own work (--links) ends
    end_of_run()               the run ends (completed or not), before the summary

`UrlCheck` is the one step a capability may replace whole: how a listed URL is
checked (`migrate` judges each old URL on the new site). It is given to the
Auditor, never patched into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from audit.http.exchange import TeeSink  # its home is the HTTP layer; kept importable here

if TYPE_CHECKING:
    from audit.core.evidence import Evidence
    from audit.core.records import Entry, FetchResult, Finding, SitemapRecord, UrlResult
    from audit.http import StreamResponse
    from audit.http.exchange import BodySink
    from audit.pipeline.context import RunContext, SitemapJob, UrlJob
    from audit.sitemap.parser import StreamParser

__all__ = ["HOOK_POINTS", "Hook", "TeeSink", "UrlCheck", "overridden"]


class Hook:
    """A no-op at every point; subclass and override what the capability needs."""

    def attach(self, ctx: RunContext) -> None:
        """Called once with the context of the run the hook serves (never the Auditor)."""

    def entry(self, source: str, entry: Entry) -> None:
        """Every parsed entry of every sitemap (the per-entry path: keep it cheap)."""

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        """An index lists the child sitemap `loc` (before it is scheduled)."""

    def sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        """Extra request headers for a sitemap (conditional requests)."""
        return None

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> bool:
        """A sitemap's answer before its body is read. True: the hook dealt with it
        (a 304 whose entries it carried forward) and the body is not read."""
        return False

    def sitemap_done(self, record: SitemapRecord, parser: StreamParser) -> None:
        """A sitemap was read to its end (its record is already delivered)."""

    def sitemap_carried(self, job: SitemapJob) -> None:
        """A sitemap that a hook's `sitemap_answered` carried forward without reading it
        (a 304): the entries it admitted for it reached `entry` as if parsed, and it
        counts as read to its end (night equals fresh, contracts/nights.md 1)."""

    def before_request(self, job: UrlJob) -> bool:
        """A listed URL before robots.txt or a request. True: its outcome is delivered."""
        return False

    def stored_answer(self, job: UrlJob) -> Evidence | None:
        """A listed URL robots.txt allows, before its request: stored evidence that stands
        for tonight's answer without a request, or None (the URL is requested). The
        auditor derives the verdict from it exactly as from a fresh answer."""
        return None

    def request_headers(self, job: UrlJob) -> dict[str, str] | None:
        """Extra request headers for a listed URL."""
        return None

    def answer_stands_for(self, job: UrlJob, result: FetchResult) -> Evidence | None:
        """The URL's final answer: the stored evidence it stands for (a 304 to a
        conditional request: the earlier answer, with the 304's validators), or None.
        The verdict is then derived from that evidence as from a fresh answer."""
        return None

    def page_body(self, job: UrlJob) -> BodySink | None:
        """A sink for the listed URL's body (content fingerprints). A hook that returns
        one makes the URL be fetched with one GET, as --page-checks does, up to the
        page cap; the sink sees the final answer's body beside the page checks' own."""
        return None

    def after_answer(self, job: UrlJob, result: FetchResult) -> bool:
        """The URL's final answer, before checks. True: the hook delivered its outcome."""
        return False

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        """A URL's record and findings before delivery (`result` None: not requested,
        e.g. robots-blocked). Return them changed (a field added to the record, a finding
        added), or None to leave them as they are."""
        return None

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> bool:
        """A URL's record and findings. True: the hook delivered them itself (through
        `RunContext.deliver`), so the auditor does not deliver them again."""
        return False

    async def drain(self) -> None:
        """Every listed URL was checked and the run was not cut: a hook finishes its own
        requests here (the link crawl), on the auditor's client, before `end_of_run`."""

    def end_of_run(self) -> None:
        """The run ends, completed or interrupted; notes for the summary go here."""


HOOK_POINTS = (
    "entry",
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


def overridden(hook: Hook, point: str) -> bool:
    """Does this hook do something at `point`? (The auditor skips the no-op defaults.)"""
    return getattr(type(hook), point) is not getattr(Hook, point)


class UrlCheck(Protocol):
    """How one listed URL is checked: the standard check, or a capability's own."""

    async def __call__(self, job: UrlJob) -> None: ...
