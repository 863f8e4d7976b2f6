"""How one listed URL is checked: robots.txt first, the request (or stored evidence that
stands for it), the URL checks and the page checks, then the verdict through the hooks
(audit.pipeline.chain) to the recorder.

The verdict is derived once, from evidence: the answer, or stored evidence that stands
for it (a resumed run's own answer, --changed-only's earlier one, the answer a 304
confirms, a cluster worker's answer). Either way the same checks run on it, so a night
equals a fresh run (STYLE.md lesson 21).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from audit.checks import sitemaps
from audit.checks.page import PageSink, needs_probe, probe_text
from audit.checks.pagefacts import FactsSink, join
from audit.checks.verdict import UrlVerdict, judge_unrequested, judge_url
from audit.core.config import CrawlConfig
from audit.core.evidence import Evidence
from audit.core.records import FetchResult, Hop, finding
from audit.http import HttpClient
from audit.http.exchange import BodySink, TeeSink
from audit.http.hosts import Host, canonical_origin
from audit.http.rewrite import Rewriter
from audit.http.robots import RobotsCache, RobotsPolicy
from audit.pipeline.chain import HookChain
from audit.pipeline.context import Answer, RunState, UrlJob
from audit.pipeline.recorder import Recorder
from audit.rules.hreflang import HreflangStore
from audit.rules.validator import HreflangGraph

__all__ = ["UrlChecker"]


class UrlChecker:
    """The standard check of a listed URL, and the robots.txt look of every request."""

    # the run's client, from attach(), which comes before any check: the per-URL path
    # reads it as is (before: no attribute, and `client` says so)
    _client: HttpClient

    def __init__(
        self,
        config: CrawlConfig,
        recorder: Recorder,
        chain: HookChain,
        state: RunState,
        *,
        agent_token: str,
        now: datetime,
        hreflang: HreflangGraph,
    ) -> None:
        self.config = config
        self.rec = recorder
        self.chain = chain
        self.state = state
        self.agent_token = agent_token
        self.now = now
        self.hreflang = hreflang
        self.robots_cache: RobotsCache | None = None
        self._probes: dict[str, asyncio.Task[str | None]] = {}  # origin -> soft-404 probe
        # --rewrite: where a listed URL (or sitemap) is requested; falsy without rules
        self.rewrite = Rewriter(config.rewrites)
        self._rewriting = bool(self.rewrite)  # asked once per listed URL
        # a listed URL is one HEAD (GET on error): no page checks, no hook reads its body
        self._plain_fetch = not config.page_checks and not chain.bodies
        # ... and nothing else asks about it: one plain request
        self._bare = self._plain_fetch and not chain.headers and not chain.keeps_evidence

    def attach(self, client: HttpClient, robots: RobotsCache) -> None:
        """Check on this client and robots.txt cache (the run's)."""
        self._client = client
        self.robots_cache = robots

    @property
    def client(self) -> HttpClient:
        try:
            return self._client
        except AttributeError:
            raise RuntimeError("no HTTP client outside run()") from None

    @property
    def robots(self) -> RobotsCache:
        if self.robots_cache is None:
            raise RuntimeError("no robots cache outside run()")
        return self.robots_cache

    def _where(self, job: UrlJob) -> tuple[str, dict[str, Any] | None]:
        """Where the listed URL is checked, and the record's extra saying so (None: as
        listed)."""
        checked = self.rewrite(job.url)  # (the URL as it is without rules)
        return checked, None if checked == job.url else {"checked_url": checked, "rewritten": True}

    async def robots_for(self, url: str) -> RobotsPolicy:
        """The robots.txt policy of the URL's host; reports an unreachable or missing
        robots.txt once per host."""
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

    async def check_unlisted(self, job: UrlJob) -> tuple[FetchResult | None, UrlVerdict]:
        """A URL no sitemap lists tonight (the ledger's dropped URLs, --intent's unlisted
        rows), checked as a listed URL is (robots.txt first, at its --rewrite origin, the
        request, the URL and page checks) but without any hook and never conditionally:
        its answer (None: robots.txt kept it) and its verdict (also `job.verdict`)."""
        checked, extra = self._where(job)
        policy = await self._policy(checked)
        if not policy.allowed(checked):
            job.verdict = verdict = self._not_allowed(job, policy, extra)
            return None, verdict
        result, sink, _ = await self._fetch(checked)  # without page checks: one plain fetch
        job.verdict = verdict = await self._verdicts(job, result, sink, extra)
        return result, verdict

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
        chain = self.chain
        if chain.before and chain.before_request(job):
            return
        checked, extra = self._where(job) if self._rewriting else (job.url, None)
        host = job.host if extra is None else None
        policy = host.robots if host is not None else None
        if policy is None:
            policy = await self._policy(checked)
        result: FetchResult | None = None
        if not policy.allowed(checked):
            verdict = self._not_allowed(job, policy, extra)
        else:
            stored = chain.stored_answer(job) if chain.stored else None
            if stored is not None:  # resumed, or --changed-only: no request
                result, sink = self._revive(job, stored)
            elif answer is None:
                if self._bare:  # the plain HEAD of a run without hooks there: no frame more
                    result, sink = await self._client.fetch(checked, host=host), None
                else:
                    result, sink = await self._request(job, checked, host)
            else:  # a cluster's worker: one more transport, whose answer is evidence
                got = await answer(job, checked, chain.request_headers(job), extra)
                result, sink = self._revive(job, chain.stands_for(job, got.result) or got)
            if stored is None and chain.answered and chain.after_answer(job, result):
                return
            if sink is None:
                verdict = self._url_verdicts(job, result, extra)
            else:
                verdict = await self._verdicts(job, result, sink, extra)
        job.verdict = verdict  # computed once: the hooks read it (checks/verdict.py)
        self.chain.deliver_checked(job, verdict.record, verdict.findings, result)

    async def _request(
        self, job: UrlJob, checked: str, host: Host | None
    ) -> tuple[FetchResult, PageSink | None]:
        """The request of a listed URL (`host`: its host, when listed as checked) and, with
        --state, the evidence it gives (or the stored evidence a 304 stands for, checked in
        its place)."""
        headers = self.chain.request_headers(job)
        if self._plain_fetch:
            result = await self._client.fetch(checked, headers=headers, host=host)
            sink, outcome = None, None
        else:
            result, sink, outcome = await self._fetch(checked, headers, self.chain.body_sinks(job))
        stood = self.chain.stands_for(job, result)
        if stood is not None:
            return self._revive(job, stood)
        if self.chain.keeps_evidence:
            job.evidence = Evidence(result, outcome)
        return result, sink

    def _revive(self, job: UrlJob, evidence: Evidence) -> tuple[FetchResult, PageSink | None]:
        """Stored evidence as tonight's answer: the body sinks (page checks, the hooks')
        are handed the stored facts as if they had read the body, so every check that
        reads a page reads the same page again."""
        page, sinks = self._sinks(self.chain.body_sinks(job))
        for sink in sinks:
            if isinstance(sink, FactsSink):
                sink.accept(evidence.facts)
        job.evidence = evidence
        return evidence.result, page

    async def judge_stored(self, job: UrlJob, evidence: Evidence, extra: dict[str, Any]) -> None:
        """A listed URL judged from stored evidence without a request or a robots.txt
        look (--budget's carried URLs): the checks, the hooks and the delivery of a fresh
        answer; `extra` (what says so: carried, checked_at) joins its record."""
        result, sink = self._revive(job, evidence)
        verdict = await self._verdicts(job, result, sink, None)
        verdict = replace(verdict, record=verdict.record.with_fields(extra))
        job.verdict = verdict
        self.chain.deliver_checked(job, verdict.record, verdict.findings, result)

    def facts_recipe(self, job: UrlJob) -> tuple[str, tuple[Any, ...]] | None:
        """What another transport must read of the URL's body for the page checks and the
        hooks (a cluster's worker): the recipe of the facts sink they join into, or None
        for a plain request."""
        if self._plain_fetch:
            return None
        _, sinks = self._sinks(self.chain.body_sinks(job))
        first = next(iter(sinks), None)
        return first.recipe() if isinstance(first, FactsSink) else None

    def _not_allowed(
        self, job: UrlJob, policy: RobotsPolicy, extra: dict[str, Any] | None
    ) -> UrlVerdict:
        """A URL robots.txt keeps us from: blocked (a finding of its own), or held back by
        an unreachable robots.txt (counted in the host's one robots-unreachable)."""
        why: Literal["blocked", "unreachable"] = "blocked"
        if policy.status == "unreachable":
            why = "unreachable"
            held = self.state.robots_unreachable.get(policy.origin)
            if held is not None:
                held[2] += 1
        return judge_unrequested(
            job, why, agent_token=self.agent_token, extra=extra, checked_at=_checked_at(extra)
        )

    async def _policy(self, url: str) -> RobotsPolicy:
        """The robots.txt policy for a URL: kept on its host once read (the host pool's
        prefix memo makes a URL of a known origin a dict lookup and no await)."""
        try:
            policy: RobotsPolicy | None = self.client.hosts.get(url).robots
        except ValueError:
            policy = None
        return policy if policy is not None else await self.robots_for(url)

    async def _verdicts(
        self,
        job: UrlJob,
        result: FetchResult,
        sink: PageSink | None,
        extra: dict[str, Any] | None,
    ) -> UrlVerdict:
        """The verdict on an answer whose body was read: with --page-checks on a 200 page
        the page's checks too (the host's probe fetched first when the page needs one), the
        head's hreflang links into the run's store."""
        if extra is not None:
            result = self._as_listed(job, result)  # findings and the record name the listing
        facts = sink.facts if sink is not None and result.status == 200 else None
        if facts is None:
            return self._url_verdicts(job, result, extra)
        job.page = facts
        probe = None
        if needs_probe(facts, result.final_url):
            probe = await self._probe_for(result.final_url)
        verdict = judge_url(
            result,
            job,
            self.config,
            agent_token=self.agent_token,
            now=self.now,
            facts=facts,
            probe=probe,
            extra=extra,
            checked_at=_checked_at(extra),
        )
        if verdict.alternates and isinstance(self.hreflang, HreflangStore):
            page_url = result.final_url if result.redirects else result.url
            self.hreflang.add(
                page_url,
                list(verdict.alternates),
                sitemap=job.sitemap,
                line=job.line,
                source="page",
            )
        return verdict

    def judge_answer(self, job: UrlJob, result: FetchResult) -> UrlVerdict:
        """The verdict on an answer without the hooks: the step every listed URL's answer
        goes through, for a page the link crawl found."""
        return self._url_verdicts(job, result, None)

    def _url_verdicts(
        self, job: UrlJob, result: FetchResult, extra: dict[str, Any] | None
    ) -> UrlVerdict:
        """The verdict on an answer without a page to judge (checks/verdict.py)."""
        if extra is None:  # positional: keyword arguments cost more, once per URL
            return judge_url(result, job, self.config, self.agent_token, self.now)
        if result.url != job.url:
            result = self._as_listed(job, result)  # findings and the record name the listing
        return judge_url(
            result,
            job,
            self.config,
            agent_token=self.agent_token,
            now=self.now,
            extra=extra,
            checked_at=extra.get("checked_url"),
        )

    def _as_listed(self, job: UrlJob, result: FetchResult) -> FetchResult:
        """A rewritten URL's answer in the listing's terms: its URL as listed, and the hops
        and final URL on the rewritten origin back on the listed one, so that advice ("list
        the final URL ... instead") names the production URL, never staging. Where it was
        checked stays in the record's checked_url and each finding's "(checked at ...)"."""
        back = self.rewrite.back
        return replace(
            result,
            url=job.url,
            final_url=back(result.final_url),  # ("" as it is: no origin to rewrite)
            redirects=tuple(Hop(back(h.url), h.status) for h in result.redirects),
        )

    async def _fetch(
        self, url: str, headers: dict[str, str] | None = None, more: Sequence[BodySink] = ()
    ) -> tuple[FetchResult, PageSink | None, tuple[Any, ...] | None]:
        """The request of one listed URL: HEAD (GET to confirm an error), or with page checks
        (or a hook's body sink) one GET whose body is read up to the end of the head (or
        what the hooks' sinks want) or the cap. The page's facts sinks (page checks, links,
        content) share one read and one parse (pagefacts.join). Returns the answer, the
        page checks' sink and what the page's one parse found (kept as evidence)."""
        cap = self.config.page_cap
        sink, sinks = self._sinks(more)
        if not sinks:
            return await self.client.fetch(url, headers=headers), None, None
        tee = sinks[0] if len(sinks) == 1 else TeeSink(sinks)
        result = await self.client.fetch_page(url, tee, cap=cap, headers=headers)
        first = sinks[0]
        return result, sink, first.outcome() if isinstance(first, FactsSink) else None

    def _sinks(self, more: Sequence[BodySink]) -> tuple[PageSink | None, list[Any]]:
        """The sinks of one read of a listed URL's page: the page checks' (with
        --page-checks, also returned alone) and the hooks' `more`, its facts sinks one
        (pagefacts.join): for a request (_fetch), stored evidence (_revive) and another
        transport (facts_recipe)."""
        if not self.config.page_checks:
            return None, join(more)
        page = PageSink(self.config.page_cap)
        return page, join([page, *more])

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
            policy = await self.robots_for(url)
            if not policy.allowed(url):
                return None  # polite: no probe where robots.txt says no
            sink = PageSink(self.config.page_cap)
            result = await self.client.fetch_page(url, sink, cap=self.config.page_cap)
        except Exception:  # a failed probe only means no similarity check for this host
            return None
        return probe_text(result, sink.facts)

    async def cancel_probes(self) -> None:
        probes = list(self._probes.values())
        for task in probes:  # one not done is only left when the run was cancelled
            task.cancel()  # (a done one stays as it ended)
        await asyncio.gather(*probes, return_exceptions=True)


def _checked_at(extra: dict[str, Any] | None) -> str | None:
    """Where a rewritten URL was checked (its findings say so), or None."""
    return None if extra is None else extra.get("checked_url")
