"""The hook that says what each bot sees: indexability always, the agents matrix with --agents.

Every url record gets `indexable` and `indexability` (the URL's verdict, checks/verdict.py,
for the main agent). With `--agents`, it also gets `"agents": {token: verdict}`, judged from the
robots.txt the run already fetched for the URL's host and the answer already received (no
request is made for an agent), and the hook counts blocked and noindex URLs per agent and
host with one example each. At the end of the run: one `agent-blocked` and one
`agent-noindex` finding per agent and host (only for a noindex scoped to that agent: an
unscoped one is the main agent's `url-noindex`, though it counts in the verdicts), and `summary.agents` (over every target
of the run). The main agent itself gets no agent-* finding: its blocks and noindex are
`url-robots-blocked` and `url-noindex` already.

Usage signals (contracts/agents.md), with `--agents` only: a url record whose answer carries
`Content-Usage` headers gets `"usage"` (reported, not judged); each agent's entry of
`summary.agents` gets `"hosts"`, one per origin whose robots.txt the run read, with its
counts there and its effective `Content-Signal` (`signals`) and `Content-Usage` (`usage`)
values; a use that a named agent's signals say yes to while its group disallows `/` is one
`usage-contradiction` per host and use.

The Audit installs it on every run (audit/api.py). Imports no aiohttp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from audit.checks.agents import (
    USES,
    agent_verdict,
    index_reason,
    parse_agents,
    says_yes,
    scoped_noindex,
)
from audit.checks.verdict import INDEX_FIELDS
from audit.core.agent import usage_pairs
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, UrlResult, finding, header_values
from audit.features.agentfetch import AgentPages, AgentSampler
from audit.http.hosts import canonical_origin
from audit.pipeline.hooks import Hook
from audit.report.aggregate import counted

if TYPE_CHECKING:
    from audit.http.robots import RobotsPolicy
    from audit.pipeline.context import RunContext, UrlJob

__all__ = ["AgentsHook"]


@dataclass(slots=True)
class _Tally:
    """One agent on one host: how many listed URLs it may not read or index, one example."""

    blocked: int = 0
    noindex: int = 0
    scoped: int = 0  # of the noindex ones, those scoped to the agent: agent-noindex's count
    # verdict -> the first listed URL in sitemap order: (sitemap, line, url)
    examples: dict[str, tuple[str | None, int | None, str]] = field(default_factory=dict)


class AgentsHook(Hook):
    """Indexability of every URL and, with --agents, each agent's verdict; see the module."""

    name = "agents"
    ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, config: CrawlConfig) -> None:
        # presets expanded here too: the library takes `agents=("ai",)` as the CLI does
        self.agents = parse_agents(",".join(config.agents)) if config.agents else ()
        self.main = ""
        # (agent, origin) -> tally, in the order first seen
        self.tallies: dict[tuple[str, str], _Tally] = {}
        # origin -> its robots.txt policy, for every origin whose robots.txt was read
        self.policies: dict[str, RobotsPolicy] = {}
        # (never without --agents: every run's option check refuses it, and with no agent
        # named the sample would be of none)
        self.fetch_n = config.agents_fetch
        # the main answers' bodies, for agent-shell-only: --page-checks keeps them on the
        # job; --links reads them anyway, and AgentPages (a hook of its own) adds a sink.
        # Without either no page is read: the sample's main pages are None.
        self.pages = (
            AgentPages(config.page_cap)
            if self.fetch_n and config.links and not config.page_checks
            else None
        )
        # --agents-fetch's sample (attach makes it); without, one that samples nothing
        self.sampler = AgentSampler((), "", 0)

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.main = ctx.agent_token.strip().lower()
        if self.fetch_n:
            self.sampler = AgentSampler(self.agents, self.main, self.fetch_n)

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        judged = job.verdict
        # UrlVerdict.index_fields(), written out: once per listed URL
        if judged is not None:
            reason = judged.reason
        else:  # a `UrlCheck` of its own delivered no verdict: its answer alone says
            reason = index_reason(record, result, noindex=False, canonical=False)
        index = INDEX_FIELDS[reason]
        # shared when nothing joins it (a record's extra is never changed in place)
        extra = {**record.extra, **index} if record.extra else index
        if self.agents:
            headers = result.headers if result is not None else ()
            extra = {**extra, "agents": self._verdicts(job, record, result, headers)}
            # the `Content-Usage` header values, parsed in order (later pairs win)
            values = header_values(headers, "content-usage")
            if values:
                usage: dict[str, str] = {}
                for value in values:
                    usage.update(usage_pairs(value))
                extra["usage"] = usage
        return record.with_extra(extra), found

    def _verdicts(
        self,
        job: UrlJob,
        record: UrlResult,
        result: FetchResult | None,
        headers: tuple[tuple[str, str], ...],
    ) -> dict[str, str]:
        checked = str((record.extra or {}).get("checked_url") or job.url)
        policy = self.ctx.robots.cached(checked)
        tags = header_values(headers, "x-robots-tag")
        # the head's metas of a page the page checks read (the auditor keeps a 200 page's
        # facts on its job); none otherwise
        metas = job.page.metas if job.page is not None else ()
        out: dict[str, str] = {}
        origin = _origin(checked)
        if policy is not None:
            self.policies.setdefault(origin, policy)
        for agent in self.agents:
            allowed = policy is None or policy.allowed(checked, agent)
            out[agent] = verdict = agent_verdict(allowed, tags, metas, agent)
            if verdict != "allowed":  # (_count reads `scoped` of a noindex only)
                self._count(agent, origin, verdict, job, scoped_noindex(tags, metas, agent))
        # --agents-fetch: the URL offered to the sample of its host
        page = self.pages.take(job) if self.pages is not None else job.page
        self.sampler.offer(origin, checked, out, result, page)
        return out

    async def drain(self) -> None:
        """--agents-fetch: the sample of every host fetched as each agent."""
        config = self.ctx.config
        await self.sampler.fetch(self.ctx.client, config.page_cap, config.concurrency)

    def _count(self, agent: str, origin: str, verdict: str, job: UrlJob, scoped: bool) -> None:
        tally = self.tallies.setdefault((agent, origin), _Tally())
        if verdict == "blocked":
            tally.blocked += 1
        else:
            tally.noindex += 1
            if not scoped:
                return  # a noindex for every agent: no agent-noindex (RULES.md)
            tally.scoped += 1
        # the example is the first in sitemap order, whichever worker came first (a
        # listed URL's place: the judge hooks are asked for listed URLs only); on the same
        # place the one already kept stays (min gives the first of equals)
        where = (job.sitemap, job.line, job.url)
        known = tally.examples.get(verdict, where)
        tally.examples[verdict] = min(known, where, key=lambda w: (w[0], w[1]))

    def end_of_run(self) -> None:
        if not self.agents:
            return
        rec = self.ctx.recorder
        for (agent, origin), tally in self.tallies.items():
            if agent.lower() != self.main:
                rec.findings(_findings(agent, origin, tally))
        # every robots.txt the run read: hosts with no listed URL too (the run's robots.txt
        # cache is open: end_of_run comes at the end of Auditor.run_with_client, which
        # attached the run's client and cache first)
        for policy in self.ctx.robots.read():
            self.policies.setdefault(_origin(policy.origin), policy)
        for origin, policy in self.policies.items():
            rec.findings(self._contradictions(origin, policy))
        rec.findings(self.sampler.findings())
        self._summary(rec.notes.setdefault("agents", {}))

    def _summary(self, notes: dict[str, dict[str, Any]]) -> None:
        """summary.agents: each agent's counts and hosts (one hook for every target: the
        run's one pipeline)."""
        for agent in self.agents:
            hosts = {o: self.host_entry(agent, o, policy) for o, policy in self.policies.items()}
            notes[agent] = {"blocked": 0, "noindex": 0, "hosts": hosts}
        for (agent, _), tally in self.tallies.items():  # (every tallied agent is named)
            notes[agent]["blocked"] += tally.blocked
            notes[agent]["noindex"] += tally.noindex

    def host_entry(self, agent: str, origin: str, policy: RobotsPolicy) -> dict[str, Any]:
        """`summary.agents.<agent>.hosts.<origin>`: its counts there and its usage values."""
        tally = self.tallies.get((agent, origin), _Tally())
        signals, usage = policy.usage(agent)
        return {
            "blocked": tally.blocked,
            "noindex": tally.noindex,
            "signals": signals,
            "usage": usage,
            **self.sampler.fetched(origin, agent),  # (--agents-fetch, where it sampled)
        }

    def _contradictions(self, origin: str, policy: RobotsPolicy) -> list[Finding]:
        """One `usage-contradiction` per use the named agents' signals say yes to on this
        host while their groups disallow the whole site."""
        by_use: dict[str, list[str]] = {}
        root = origin + "/"
        for agent in self.agents:
            uses = says_yes(agent, *policy.usage(agent))
            if not policy.allowed(root, agent):  # (no uses: the loop adds none)
                for use in uses:
                    by_use.setdefault(use, []).append(agent)
        out = []
        for use, _, _ in USES:  # the contract's order of uses
            agents = by_use.get(use)
            if agents:
                them = "it" if len(agents) == 1 else "them"
                message = (
                    f"robots.txt of {origin} says yes to {use} for {', '.join(agents)} in its "
                    "usage signals (Content-Signal / Content-Usage), yet disallows the whole "
                    f"site (/) for {them}: allow the agents, or say no to the use"
                )
                out.append(
                    finding(
                        "usage-contradiction",
                        message,
                        url=policy.url,
                        fields={"category": use, "agents": agents},
                    )
                )
        return out


def _findings(agent: str, origin: str, tally: _Tally) -> list[Finding]:
    out = []
    for verdict, count in (("blocked", tally.blocked), ("noindex", tally.scoped)):
        example = tally.examples.get(verdict)  # there is one once the count is not 0
        if example is not None:
            sitemap, line, url = example
            urls = f"{counted(count, 'listed URL')} of {origin}"
            message = _MESSAGES[verdict].format(agent=agent, urls=urls, url=url)
            code = f"agent-{verdict}"  # agent-blocked, agent-noindex
            out.append(finding(code, message, sitemap=sitemap, line=line, url=url))
    return out


_MESSAGES = {
    "blocked": "robots.txt disallows {agent} from {urls} (e.g. {url}); "
    "if {agent} should read them, allow it in robots.txt",
    "noindex": "X-Robots-Tag or robots meta says noindex for {agent} on {urls} (e.g. {url}); "
    "if {agent} should index them, remove the directive",
}


def _origin(url: str) -> str:
    return canonical_origin(url) or url
