"""`--agents-fetch N` (contracts/agents.md, "What each agent is served"): the sample and the
fetches, for the AgentsHook.

- `sample_key()`: a listed URL's place in the sample, the SHA-256 hex digest of its path and
  query exactly as listed (`/` for an empty path); the N smallest digests of a host's
  eligible URLs are its sample, in digest order. It does not depend on the port, the host
  name or the crawl order.
- `AgentSampler.offer()` takes every listed URL as it is judged: eligible for an agent when
  its main check answered 200 with an HTML type and no redirect, and robots.txt lets both
  the main agent and this agent read it. Each (host, agent) keeps its N smallest keys.
- `AgentSampler.fetch()` (after every listed URL was checked) requests each sampled URL
  once per agent with the agent's own User-Agent string (`HttpClient.fetch_as`: no
  redirect, no retry, the host's politeness unchanged by the answer) and compares the
  answer with the main check's 200 (checks/agents.py `served_as`).
- `AgentPages`: with `--links` and without `--page-checks` the listed pages are read with
  one GET anyway; this hook adds a facts sink to that read (shared with the link crawl's,
  pagefacts.join) so that `agent-shell-only` can be judged.
- `findings()` and `fetched()`: one finding per code, agent and host, and
  `summary.agents.<Agent>.hosts.<origin>.fetched`.

Imports no aiohttp.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from audit.checks.agents import FETCH_CODES, empty_shell, served_as
from audit.checks.page import PageSink
from audit.checks.pagefacts import HEAD, FactsSink, is_html
from audit.core.agent import user_agent_of
from audit.core.records import FetchResult, Finding, finding
from audit.pipeline.context import work_through
from audit.pipeline.hooks import Hook

if TYPE_CHECKING:
    from audit.checks.pagefacts import PageFacts
    from audit.http import HttpClient
    from audit.http.exchange import BodySink
    from audit.pipeline.context import UrlJob

__all__ = ["AgentPages", "AgentSampler", "sample_key"]

# summary key of each code, in the contract's order
_KEYS: Final = {
    "agent-served-differently": "served_differently",
    "agent-challenged": "challenged",
    "agent-payment-required": "payment_required",
    "agent-shell-only": "shell_only",
}


# a URL: up to the first "://" if any, the authority, then (kept) the path and query, then
# the fragment
_TARGET: Final = re.compile(r"(?:.*?://)?[^/?#]*([^#]*)(?:#.*)?", re.S)


def sample_key(url: str) -> str:
    """The SHA-256 hex digest of the URL's path and `?query` as listed (no fragment)."""
    target = _TARGET.sub(r"\1", url, count=1)  # the whole URL matches
    # a leading "/" made sure of, and an empty query is no query
    target = ("/" + target.removeprefix("/")).removesuffix("?")
    return hashlib.sha256(target.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class _Tally:
    """One agent on one host: what its sampled URLs were served."""

    sampled: int = 0
    counts: Counter[str] = field(default_factory=Counter)  # code -> URLs
    statuses: dict[str, Counter[str]] = field(default_factory=dict)  # code -> status -> n
    examples: dict[str, str] = field(default_factory=dict)  # code -> first URL (sample order)


@dataclass(slots=True)
class _Candidate:
    key: str
    url: str
    main_page: bool | None  # the main answer's body was read and is no shell; None: unread


class AgentSampler:
    """The sample of each (host, agent) and what each agent was served; see the module."""

    def __init__(self, agents: tuple[str, ...], main: str, n: int) -> None:
        low = main.strip().lower()
        # fetched: a User-Agent string of its own, and not the main agent itself
        self._user_agents = {
            a: ua for a in agents if (ua := user_agent_of(a)) is not None and a.lower() != low
        }
        self.agents = tuple(self._user_agents)
        self.n = n
        # (origin, agent) -> max-heap of (reversed key, offer number, candidate), <= n
        self._heaps: dict[tuple[str, str], list[tuple[str, int, _Candidate]]] = {}
        self._offers = 0
        self.tallies: dict[tuple[str, str], _Tally] = {}

    def offer(
        self,
        origin: str,
        url: str,
        verdicts: dict[str, str],
        result: FetchResult | None,
        main_page: PageFacts | None,
    ) -> None:
        """A listed URL the main agent may read (an answer is one robots.txt let it read:
        a URL robots.txt keeps out has none), sampled when eligible: it answered 200 HTML
        without a redirect; `verdicts`: each agent's (one robots.txt blocks is not
        sampled for it)."""
        if (
            not self.agents
            or result is None
            or result.status != 200
            or result.redirects
            or not is_html(result.header("content-type"))
        ):
            return
        page_ok: bool | None = None
        if main_page is not None and main_page.bytes_read:
            page_ok = empty_shell(main_page) is None
        cand = _Candidate(sample_key(url), url, page_ok)
        item = (cand.key.translate(_REVERSED), self._offers, cand)
        self._offers += 1
        for agent in self.agents:
            if verdicts.get(agent) == "blocked":
                continue
            heap = self._heaps.setdefault((origin, agent), [])
            if len(heap) < self.n:
                heapq.heappush(heap, item)
            else:  # kept only if its key is below the largest kept, which then goes
                heapq.heappushpop(heap, item)

    def samples(self) -> list[tuple[str, str, list[_Candidate]]]:
        """(origin, agent, the sample in digest order) of each (host, agent) with one (a
        heap is made by its first offer: never empty)."""
        return [
            (origin, agent, sorted((c for _, _, c in heap), key=lambda c: (c.key, c.url)))
            for (origin, agent), heap in self._heaps.items()
        ]

    async def fetch(self, client: HttpClient, cap: int, concurrency: int) -> None:
        """Every sampled URL once per agent, with the agent's User-Agent string."""
        work: list[tuple[str, str, _Candidate]] = []
        for origin, agent, sample in self.samples():
            self.tallies[origin, agent] = _Tally(sampled=len(sample))
            work += [(origin, agent, cand) for cand in sample]
        results: dict[tuple[str, str, str], tuple[str | None, str]] = {}

        async def one(item: tuple[str, str, _Candidate]) -> None:
            origin, agent, cand = item
            results[origin, agent, cand.url] = await self._one(client, agent, cand, cap)

        await work_through(work, one, concurrency)
        # tallied in sample order (the work's), whatever order the answers came in
        for origin, agent, cand in work:
            code, status = results[origin, agent, cand.url]
            if code is not None:
                tally = self.tallies[origin, agent]
                tally.counts[code] += 1
                tally.statuses.setdefault(code, Counter())[status] += 1
                tally.examples.setdefault(code, cand.url)

    async def _one(
        self, client: HttpClient, agent: str, cand: _Candidate, cap: int
    ) -> tuple[str | None, str]:
        user_agent = self._user_agents[agent]
        sink = PageSink(cap) if cand.main_page else None
        result = await client.fetch_as(cand.url, user_agent, sink=sink, cap=cap)
        facts = sink.facts if sink is not None else None  # a sink only for a main page
        status = "none" if result.status is None else str(result.status)
        return served_as(result.status, result.headers, facts), status

    def findings(self) -> list[Finding]:
        """One finding per code, agent and host, in (host, agent) then code order."""
        out: list[Finding] = []
        for (origin, agent), tally in self.tallies.items():
            for code in FETCH_CODES:
                count = tally.counts.get(code, 0)
                if not count:
                    continue
                fields: dict[str, object] = {
                    "agent": agent,
                    "count": count,
                    "sampled": tally.sampled,
                }
                if code != "agent-shell-only":
                    fields["statuses"] = dict(tally.statuses[code])
                example = tally.examples[code]
                out.append(
                    finding(
                        code,
                        _message(code, agent, origin, tally, tally.statuses[code], example),
                        url=example,
                        fields=fields,
                    )
                )
        return out

    def fetched(self, origin: str, agent: str) -> dict[str, dict[str, int]]:
        """What an agent's `hosts.<origin>` entry adds: `{"fetched": counts}`, or {} (not
        fetched there)."""
        tally = self.tallies.get((origin, agent))
        if tally is None:
            return {}
        out = {"sampled": tally.sampled}
        for code, key in _KEYS.items():
            out[key] = tally.counts.get(code, 0)
        return {"fetched": out}


# A sample key (a hex digest, always 64 digits) ordered backwards: each digit d made
# 15 - d, so the min-heap's top is the largest key kept.
_REVERSED: Final = str.maketrans("0123456789abcdef", "fedcba9876543210")


_WHAT: Final = {
    "agent-served-differently": "answered {agent} {statuses} where the main agent got 200",
    "agent-challenged": "answered {agent} {statuses} (a WAF, bot challenge or rate limit) "
    "where the main agent got 200",
    "agent-payment-required": "answered {agent} 402 with a crawler-price header (pay-per-crawl)",
    "agent-shell-only": "gave {agent} an empty app shell where the main agent got a page with "
    "text (a prerender allowlist that misses it?)",
}


def _message(
    code: str, agent: str, origin: str, tally: _Tally, statuses: Counter[str], example: str
) -> str:
    shown = ", ".join(
        f"{'no answer' if s == 'none' else 'HTTP ' + s} x{n:,}" for s, n in statuses.most_common()
    )
    what = _WHAT[code].format(agent=agent, statuses=shown)
    count = tally.counts[code]
    return f"{count:,} of {tally.sampled:,} sampled listed URLs of {origin} {what} (e.g. {example})"


class AgentPages(Hook):
    """The facts of each listed page's GET, for the shell comparison; see the module."""

    name = "agent-pages"

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._sinks: dict[int, FactsSink] = {}  # id(job) -> its sink, until taken

    def page_body(self, job: UrlJob) -> BodySink | None:
        sink = self._sinks[id(job)] = FactsSink(HEAD, self.cap)
        return sink

    def take(self, job: UrlJob) -> PageFacts | None:
        """The page's facts (None: not read), once."""
        sink = self._sinks.pop(id(job), None)
        return sink.facts if sink is not None else None
