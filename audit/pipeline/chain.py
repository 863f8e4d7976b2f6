"""The run's hooks at each hook point: `HookChain` asks them in HOOK_ORDER's order.

Each point keeps only the bound methods of the hooks that do something there, so a run
without hooks pays nothing per URL. A point that can stop the chain stops it on the
first `Done` (audit.pipeline.hooks); the others ask every hook in turn. The delivery of a
URL's verdict is here too: the entry's alternates, the judge hooks, the deliver hooks,
then the recorder.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from audit.core.records import Entry, FetchResult, Finding, UrlResult
from audit.pipeline.context import EntryHook, SitemapHook, SitemapJob, UrlJob
from audit.pipeline.hooks import Chain, Done, Hook, ordered, overridden
from audit.pipeline.recorder import Recorder

if TYPE_CHECKING:
    from audit.core.evidence import Evidence
    from audit.http import StreamResponse
    from audit.http.exchange import BodySink

__all__ = ["HookChain"]

_Job = TypeVar("_Job", SitemapJob, UrlJob)


def _merged_headers(
    hooks: Sequence[Callable[[_Job], dict[str, str] | None]], job: _Job
) -> dict[str, str] | None:
    """The extra request headers the hooks give for a sitemap or a listed URL, merged in
    their order (a later hook's header wins); None when none gives any."""
    headers: dict[str, str] | None = None
    for hook in hooks:
        more = hook(job)
        if more:
            headers = {**(headers or {}), **more}
    return headers


def _first_done(hooks: Sequence[Callable[..., Chain[Any]]], *args: Any) -> Any:
    """The value of the first hook's `Done` at a point (the chain ends there), or None."""
    for hook in hooks:
        said = hook(*args)
        if isinstance(said, Done):
            return said.value
    return None


def _done(hooks: Sequence[Callable[..., Chain[None]]], *args: Any) -> bool:
    """Was a hook `Done` at a point (the first one ends the chain)?"""
    return any(isinstance(hook(*args), Done) for hook in hooks)


class HookChain:
    """The hooks of one run, point by point (see the module)."""

    def __init__(self, hooks: Iterable[Hook], recorder: Recorder) -> None:
        self.hooks = ordered(hooks)  # HOOK_ORDER's order, whatever order they came in
        self.rec = recorder
        self._targets: list[Callable[[list[str]], None]] = self.at("target_roots")
        self.child: list[Callable[[SitemapJob, Entry, str], None]] = self.at("child")
        self.batches: list[Callable[[str, Sequence[Entry]], None]] = self.at("entries")
        self.sitemap_headers_at: list[Callable[[SitemapJob], dict[str, str] | None]] = self.at(
            "sitemap_headers"
        )
        self.sitemap_answered_at: list[
            Callable[[SitemapJob, StreamResponse], Awaitable[Chain[None]]]
        ] = self.at("sitemap_answered")
        self.sitemap_done: list[SitemapHook] = self.at("sitemap_done")
        self._carried: list[Callable[[SitemapJob], None]] = self.at("sitemap_carried")
        # sitemaps a hook is carrying (a 304): what it admits for them is also an entry
        self.carrying: set[str] = set()
        self.before: list[Callable[[UrlJob], Chain[None]]] = self.at("before_request")
        self.headers: list[Callable[[UrlJob], dict[str, str] | None]] = self.at("request_headers")
        # extra request headers (conditional requests) for a sitemap and for a listed URL:
        # the one merge of _merged_headers over each point's hooks (a partial: no frame more
        # than a method's on the per-URL path)
        self.sitemap_headers: Callable[[SitemapJob], dict[str, str] | None] = partial(
            _merged_headers, self.sitemap_headers_at
        )
        self.request_headers: Callable[[UrlJob], dict[str, str] | None] = partial(
            _merged_headers, self.headers
        )
        self.stored: list[Callable[[UrlJob], Chain[Evidence]]] = self.at("stored_answer")
        self.stands: list[Callable[[UrlJob, FetchResult], Chain[Evidence]]] = self.at(
            "answer_stands_for"
        )
        # True when a hook was Done with the URL before its request (it delivered the
        # outcome, or holds the URL to check it later)
        self.before_request: Callable[[UrlJob], bool] = partial(_done, self.before)
        # stored evidence that stands for the URL's answer without a request: the first
        # hook's Done (a resumed run's, --changed-only's), or None
        self.stored_answer: Callable[[UrlJob], Evidence | None] = partial(_first_done, self.stored)
        # the stored evidence the final answer stands for (a 304): the first Done, or None
        self.stands_for: Callable[[UrlJob, FetchResult], Evidence | None] = partial(
            _first_done, self.stands
        )
        # a hook that revives evidence also keeps it: each answer's goes on the job
        self.keeps_evidence = bool(self.stored or self.stands)
        self.answered: list[Callable[[UrlJob, FetchResult], Chain[None]]] = self.at("after_answer")
        # True when a hook was Done with the final answer (no checks run)
        self.after_answer: Callable[[UrlJob, FetchResult], bool] = partial(_done, self.answered)
        self.bodies: list[Callable[[UrlJob], BodySink | None]] = self.at("page_body")
        self._judges: list[Callable[..., tuple[UrlResult, list[Finding]] | None]] = self.at("judge")
        self._deliverers: list[Callable[..., Chain[None]]] = self.at("deliver")
        self.drains: list[Callable[[], Awaitable[None]]] = self.at("drain")
        self._ends: list[Callable[[], None]] = self.at("end_of_run")

    def at(self, point: str) -> list[Any]:
        """The hooks' bound methods at `point`, only those that do something there."""
        return [getattr(h, point) for h in self.hooks if overridden(h, point)]

    def entries(self, first: EntryHook | None) -> EntryHook | None:
        """One entry callback for the per-entry path: the caller's and the hooks' in turn
        (None: nobody asks, no call per entry)."""
        calls = list(filter(None, (first, *self.at("entry"))))  # (the caller's may be None)
        if len(calls) <= 1:
            return next(iter(calls), None)

        def every(source: str, item: Entry) -> None:
            for call in calls:
                call(source, item)

        return every

    def carried_entry(self, first: EntryHook | None, source: str, item: Entry) -> None:
        """An entry a hook admits for a sitemap it carries (a 304): to the entry hooks
        (`first`: the run's combined one) as if parsed."""
        if first is not None:
            first(source, item)
        for batch in self.batches:
            batch(source, (item,))

    # --- sitemaps -----------------------------------------------------------------

    def target_roots(self, urls: list[str]) -> None:
        """A target's root sitemaps, in discovery order."""
        for hook in self._targets:
            hook(urls)

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> bool:
        """True when a hook was Done with the answer (a 304 whose entries it carried): the
        entries it admitted meanwhile went to the entry hooks, as if parsed."""
        self.carrying.add(job.url)  # (once per sitemap: no hook there, nothing carried)
        try:
            for hook in self.sitemap_answered_at:
                if isinstance(await hook(job, resp), Done):  # carried: it counts as read
                    for carried in self._carried:
                        carried(job)
                    return True
            return False
        finally:
            self.carrying.discard(job.url)

    # --- a listed URL -------------------------------------------------------------

    def body_sinks(self, job: UrlJob) -> list[BodySink]:
        """The hooks' sinks for the URL's body (none: no hook wants it)."""
        return [s for hook in self.bodies if (s := hook(job)) is not None]

    # --- delivery -----------------------------------------------------------------

    def deliver_checked(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> None:
        """A listed URL's verdict: the entry's alternates, the judge hooks, the deliver
        hooks (the first Done has it), then the recorder. Once per listed URL."""
        if job.alternates is not None:  # the listed entry's, as listed (contracts/fix.md)
            record = record.with_fields({"alternates": job.alternates})
        for judge in self._judges:
            changed = judge(job, record, found, result)
            if changed is not None:
                record, found = changed
        for hook in self._deliverers:
            if isinstance(hook(job, record, found, result), Done):
                return
        self.rec.url(record)  # self.deliver(), written out: once per listed URL
        if found:
            self.rec.findings(found)

    def deliver(self, record: UrlResult, found: list[Finding]) -> None:
        """A URL's record and its findings to the recorder."""
        self.rec.url(record)
        if found:
            self.rec.findings(found)

    def pass_on(
        self,
        after: object,
        job: UrlJob,
        record: UrlResult,
        found: list[Finding],
        result: FetchResult | None,
    ) -> None:
        """A record a deliver hook held (Done) goes on to the deliver hooks after that
        one, then the recorder (--render passes on what it rendered)."""
        hooks = self._deliverers
        at = next((n for n, h in enumerate(hooks) if getattr(h, "__self__", None) is after), -1)
        if not _done(hooks[at + 1 :], job, record, found, result):
            self.deliver(record, found)

    def end_of_run(self) -> None:
        for end in self._ends:
            end()
