"""The hook that says what each bot sees: indexability always, the agents matrix with --agents.

Every url record gets `indexable` and `indexability` (checks/agents.py `indexability`, for
the main agent). With `--agents`, it also gets `"agents": {token: verdict}`, judged from the
robots.txt the run already fetched for the URL's host and the answer already received (no
request is made for an agent), and the hook counts blocked and noindex URLs per agent and
host with one example each. At the end of the run: one `agent-blocked` and one
`agent-noindex` finding per agent and host (only for a noindex scoped to that agent: an
unscoped one is the main agent's `url-noindex`, though it counts in the verdicts), and `summary.agents` (merged over the targets
of one run). The main agent itself gets no agent-* finding: its blocks and noindex are
`url-robots-blocked` and `url-noindex` already.

The Audit installs it on every run (audit/api.py). Imports no aiohttp.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from audit.checks.agents import (
    agent_verdict,
    indexability,
    parse_agents,
    scoped_noindex,
)
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, UrlResult, finding
from audit.http.hosts import canonical_origin
from audit.pipeline.hooks import Hook

if TYPE_CHECKING:
    from audit.pipeline.auditor import Auditor, UrlJob

__all__ = ["AgentsHook"]


@dataclass(slots=True)
class _Tally:
    """One agent on one host: how many listed URLs it may not read or index, one example."""

    blocked: int = 0
    noindex: int = 0
    scoped: int = 0  # of the noindex ones, those scoped to the agent: agent-noindex's count
    examples: dict[str, Finding] = field(default_factory=dict)  # verdict -> where


class AgentsHook(Hook):
    def __init__(self, config: CrawlConfig) -> None:
        # presets expanded here too: the library takes `agents=("ai",)` as the CLI does
        self.agents = parse_agents(",".join(config.agents)) if config.agents else ()
        self.auditor: Auditor | None = None
        self.main = ""
        # (agent, origin) -> tally, in the order first seen
        self.tallies: dict[tuple[str, str], _Tally] = {}

    def attach(self, auditor: Auditor) -> None:
        self.auditor = auditor
        self.main = auditor.agent_token.strip().lower()

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        reason = indexability(record, found, result)
        extra: dict[str, Any] = {
            **(record.extra or {}),
            "indexable": reason is None,
            "indexability": reason,
        }
        if self.agents:
            extra["agents"] = self._verdicts(job, record, result)
        return record.with_extra(extra), found

    def _verdicts(
        self, job: UrlJob, record: UrlResult, result: FetchResult | None
    ) -> dict[str, str]:
        checked = str((record.extra or {}).get("checked_url") or job.url)
        policy = self.auditor.robots.cached(checked) if self.auditor is not None else None
        tags = result.header_all("x-robots-tag") if result is not None else []
        # the head's metas of a page the page checks read (the auditor keeps a 200 page's
        # facts on its job); none otherwise
        metas = job.page.metas if job.page is not None else ()
        out: dict[str, str] = {}
        for agent in self.agents:
            allowed = policy is None or policy.allowed(checked, agent)
            out[agent] = verdict = agent_verdict(allowed, tags, metas, agent)
            if verdict != "allowed":
                scoped = verdict == "noindex" and scoped_noindex(tags, metas, agent)
                self._count(agent, _origin(checked), verdict, job, scoped)
        return out

    def _count(self, agent: str, origin: str, verdict: str, job: UrlJob, scoped: bool) -> None:
        tally = self.tallies.get((agent, origin))
        if tally is None:
            tally = self.tallies[agent, origin] = _Tally()
        if verdict == "blocked":
            tally.blocked += 1
        else:
            tally.noindex += 1
            if not scoped:
                return  # a noindex for every agent: no agent-noindex (RULES.md)
            tally.scoped += 1
        known = tally.examples.get(verdict)
        # the example is the first in sitemap order, whichever worker came first
        if known is None or _place(job.sitemap, job.line) < _place(known.sitemap, known.line):
            tally.examples[verdict] = finding(
                "agent-blocked" if verdict == "blocked" else "agent-noindex",
                "",
                sitemap=job.sitemap,
                line=job.line,
                url=job.url,
            )

    def end_of_run(self) -> None:
        if not self.agents or self.auditor is None:
            return
        rec = self.auditor.rec
        for (agent, origin), tally in self.tallies.items():
            if agent.lower() != self.main:
                rec.findings(_findings(agent, origin, tally))
        # merged: each target of a run has its own hook, the summary is the run's
        notes: dict[str, dict[str, int]] = rec.notes.setdefault("agents", {})
        for agent in self.agents:
            notes.setdefault(agent, {"blocked": 0, "noindex": 0})
        for (agent, _), tally in self.tallies.items():
            notes[agent]["blocked"] += tally.blocked
            notes[agent]["noindex"] += tally.noindex


def _findings(agent: str, origin: str, tally: _Tally) -> list[Finding]:
    out = []
    for verdict, count in (("blocked", tally.blocked), ("noindex", tally.scoped)):
        example = tally.examples.get(verdict)
        if count and example is not None:
            out.append(replace(example, message=_message(agent, origin, verdict, count, example)))
    return out


def _message(agent: str, origin: str, verdict: str, count: int, example: Finding) -> str:
    urls = f"{count:,} listed URL{'' if count == 1 else 's'} of {origin}"
    if verdict == "blocked":
        return (
            f"robots.txt disallows {agent} from {urls} (e.g. {example.url}); "
            f"if {agent} should read them, allow it in robots.txt"
        )
    return (
        f"X-Robots-Tag or robots meta says noindex for {agent} on {urls} (e.g. {example.url}); "
        f"if {agent} should index them, remove the directive"
    )


def _place(sitemap: str | None, line: int | None) -> tuple[str, int]:
    return sitemap or "", line or 0


def _origin(url: str) -> str:
    return canonical_origin(url) or url
