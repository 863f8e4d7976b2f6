"""What each bot sees (RULES.md, `--agents`): per-agent verdicts, indexability, empty shells.

- `parse_agents()` expands `--agents` (product tokens and the presets by tier: `search`,
  `ai-train`, `ai-search`, `ai-user`, `ai`, `all`; contracts/agents.md).
- `agent_verdict()` says what one named agent makes of a listed URL from what the run already
  has: the robots.txt answer for that agent, the `X-Robots-Tag` values and (with page checks)
  the head's robots metas. `blocked` before `noindex` before `allowed`. A noindex that is not
  scoped (`X-Robots-Tag: noindex`, `<meta name="robots">`) applies to every agent; a scoped
  one (`gptbot: noindex`, `<meta name="gptbot">`) only to its agent.
- `robots_meta()` is the first head meta that applies to an agent and says noindex (or
  other directives: `nofollow` for the link crawl).
- `scoped_noindex()` says whether such a noindex names the agent itself: only those are
  `agent-noindex` findings (RULES.md); the verdict counts both.
- `index_reason()` is the first reason the main agent cannot index a URL, or None; the
  reasons are judged in the order a crawler meets them: robots, unreachable, redirect,
  status, noindex, canonical, not-html.
- `empty_shell()` is the reason a 200 HTML page reads as an empty JavaScript shell (fewer
  than `SHELL_TEXT` characters of visible body text while it loads scripts), or None. It
  judges only a body read to its end: a page cut off by the reader may have text later.
- `served_as()` is the code of what an agent was served (`--agents-fetch`), or None.
- `says_yes()` is the uses (`search`, `ai-input`, `ai-train`) an agent's effective usage
  signals say yes to (contracts/agents.md, "Usage signals"; `usage-contradiction`).

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from functools import lru_cache
from typing import Final, Literal

from audit.checks.pagefacts import PageFacts, is_html
from audit.checks.response import noindex_directive
from audit.core.agent import KNOWN_AGENTS, canonical_token, is_product_token
from audit.core.records import STATUS_2XX, FetchResult, UrlResult, header_value

__all__ = [
    "FETCH_CODES",
    "PRESETS",
    "SHELL_TEXT",
    "USES",
    "AgentVerdict",
    "Indexability",
    "agent_verdict",
    "directives",
    "empty_shell",
    "index_reason",
    "meta_noindex",
    "parse_agents",
    "robots_meta",
    "says_yes",
    "scoped_noindex",
    "served_as",
]

AgentVerdict = Literal["blocked", "noindex", "allowed"]


def _tier(*tiers: str) -> tuple[str, ...]:
    return tuple(a.token for tier in tiers for a in KNOWN_AGENTS if a.tier == tier)


# contracts/agents.md: each preset's tokens, in this order, each once
PRESETS: Final[dict[str, tuple[str, ...]]] = {
    "search": _tier("search"),
    "ai-train": _tier("ai-train"),
    "ai-search": _tier("ai-search"),
    "ai-user": _tier("ai-user"),
    "ai": _tier("ai-train", "ai-search", "ai-user"),
    "all": _tier("search", "ai-train", "ai-search", "ai-user"),
}
# contracts/agents.md, "Usage signals": each use, its Content-Usage name ('': none, as no
# pair has an empty name: core.agent.usage_pairs drops them), its agents
USES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    ("search", "search", frozenset(t.lower() for t in PRESETS["search"])),
    ("ai-input", "", frozenset(t.lower() for t in (*PRESETS["ai-search"], *PRESETS["ai-user"]))),
    ("ai-train", "train-ai", frozenset(t.lower() for t in PRESETS["ai-train"])),
)
SHELL_TEXT: Final = 200  # characters of visible body text below which a page is a shell
_NOINDEX: Final = frozenset({"noindex", "none"})


def parse_agents(text: str) -> tuple[str, ...]:
    """The agents of `--agents LIST`, presets expanded, each once (case-insensitively), in
    the order given; a token of the agents table spelt as the table does, any other as
    first typed. ValueError names the first item that is neither preset nor token."""
    out: dict[str, str] = {}  # lower-cased -> as first written
    for item in filter(None, map(str.strip, text.split(","))):  # (an empty item names none)
        for name in _expanded(item):
            out.setdefault(name.lower(), canonical_token(name))
    if not out:
        raise ValueError("no agent named")
    return tuple(out.values())


def _expanded(item: str) -> tuple[str, ...]:
    names = PRESETS.get(item.lower())
    if names is not None:
        return names
    if not is_product_token(item):
        raise ValueError(
            f"{item!r} is neither a product token (letters, '_' and '-') nor one of "
            f"the presets {', '.join(PRESETS)}"
        )
    return (item,)


def says_yes(agent: str, signals: dict[str, str], usage: dict[str, str]) -> list[str]:
    """The uses (`search`, `ai-input`, `ai-train`) of `agent`'s tier that its effective
    `Content-Signal` says `yes` to, or its `Content-Usage` says `y` to."""
    token = agent.strip().lower()
    return [
        category
        for category, name, agents in USES
        if token in agents and (signals.get(category) == "yes" or usage.get(name) == "y")
    ]


def robots_meta(
    metas: Iterable[tuple[str, str]], agent: str, words: frozenset[str] = _NOINDEX
) -> tuple[str, str] | None:
    """The first head meta that applies to `agent` (`robots`, or named after its token)
    and says one of `words` (by default noindex or none), as (name, content), or None."""
    names = {"robots", agent.strip().lower()} - {""}  # no own name for no agent
    return next(
        (
            (name, content)
            for name, content in metas
            if name in names and directives(content) & words
        ),
        None,
    )


def meta_noindex(metas: Iterable[tuple[str, str]], agent: str) -> str | None:
    """The first head meta (`robots`, or named after `agent`) that says noindex, shown as
    `name: content`, or None."""
    hit = robots_meta(metas, agent)
    return None if hit is None else f"{hit[0]}: {hit[1].strip()}"


def scoped_noindex(
    robots_tags: Sequence[str], metas: Sequence[tuple[str, str]], agent: str
) -> bool:
    """Whether a noindex is scoped to `agent` itself (`gptbot: noindex`, `<meta
    name="gptbot">`): what `agent-noindex` reports (RULES.md). A noindex for every agent is
    the main agent's `url-noindex` already."""
    own = agent.strip().lower()
    if noindex_directive(robots_tags, own, scoped_only=True):
        return True
    return any(name == own and directives(content) & _NOINDEX for name, content in metas)


def directives(content: str) -> set[str]:
    """The comma-separated directives of a robots meta's content, trimmed, lower-cased
    (an empty one included: it is never a directive looked for)."""
    return set(map(str.strip, content.lower().split(",")))


def agent_verdict(
    allowed: bool, robots_tags: Sequence[str], metas: Sequence[tuple[str, str]], agent: str
) -> AgentVerdict:
    """What `agent` makes of a URL: robots.txt first (a blocked URL is never read), then a
    noindex of the headers or the head that applies to it."""
    if not allowed:
        return "blocked"
    if noindex_directive(robots_tags, agent) is not None:
        return "noindex"
    if meta_noindex(metas, agent) is not None:
        return "noindex"
    return "allowed"


_is_html_type = lru_cache(maxsize=256)(is_html)


class Indexability(StrEnum):
    """Why the main agent cannot index a URL (the url record's `indexability`), in the
    order a crawler meets the reasons."""

    ROBOTS = "robots"
    UNREACHABLE = "unreachable"
    REDIRECT = "redirect"
    STATUS = "status"
    NOINDEX = "noindex"
    CANONICAL = "canonical"
    NOT_HTML = "not-html"


def index_reason(
    record: UrlResult, result: FetchResult | None, noindex: bool, canonical: bool
) -> Indexability | None:
    """The first reason the main agent cannot index the URL, or None (indexable), from
    its record, its answer and what the checks said of it: a noindex (header or head), a
    canonical naming another URL."""
    if record.robots != "allowed":
        return Indexability.ROBOTS
    if result is None or record.status is None:
        return Indexability.UNREACHABLE
    # in the order a crawler meets them (an if per reason: a table of them, built per
    # URL, cost four times as much)
    if record.redirects:
        return Indexability.REDIRECT
    if record.status != 200:
        return Indexability.STATUS
    if noindex:
        return Indexability.NOINDEX
    if canonical:
        return Indexability.CANONICAL
    for name, value in result.headers:  # header_value(), written out: once per URL
        if name == "content-type":
            # cached: a site has few content types
            return None if _is_html_type(value) else Indexability.NOT_HTML
    return None


# contracts/agents.md, "What each agent is served": the codes in the table's order
FETCH_CODES: Final = (
    "agent-served-differently",
    "agent-challenged",
    "agent-payment-required",
    "agent-shell-only",
)
_CHALLENGES: Final = frozenset({403, 429, 503})


def served_as(
    status: int | None, headers: Sequence[tuple[str, str]], facts: PageFacts | None
) -> str | None:
    """The code of an agent's answer to a URL that answered the main agent 200, or None
    (the same): the first that applies of a 402 with `crawler-price`, a challenge (403,
    429, 503), any other status that is not 2xx (or no answer), then an empty shell
    (`facts`: the agent's page, given only when the main answer's body was read and is
    no shell)."""
    priced = header_value(tuple(headers), "crawler-price") is not None
    rows = (  # (whether it applies, its code), the first that applies
        (status == 402 and priced, "agent-payment-required"),
        (status in _CHALLENGES, "agent-challenged"),
        (status not in STATUS_2XX, "agent-served-differently"),  # (no answer, None, too)
        (facts is not None and empty_shell(facts) is not None, "agent-shell-only"),
    )
    return next((code for applies, code in rows if applies), None)


def empty_shell(facts: PageFacts) -> str | None:
    """Why a page read to its end is an empty JavaScript shell, or None."""
    if not facts.complete or not facts.scripts:
        return None
    text = facts.text
    if len(text) >= SHELL_TEXT:
        return None
    n = len(text)
    shown = (
        f"only {n} character{'' if n == 1 else 's'} of visible text (under {SHELL_TEXT})"
        if text
        else "no visible text"
    )
    scripts = f"{facts.scripts} script{'' if facts.scripts == 1 else 's'}"
    return (
        f"the page's <body> holds {shown} while it loads {scripts}: crawlers that do not "
        "run JavaScript, most AI crawlers among them, see an empty page; render the content "
        "on the server"
    )
