"""The robots.txt product token of the configured agent (RULES.md, "What each bot sees").

RFC 9309 matches robots.txt groups, and RULES.md matches scoped `X-Robots-Tag` values, by the
crawler's product token, case-insensitively. `robots_token()` derives it from a User-Agent
string; `--robots-agent` sets it outright. It lives in the core so that both the HTTP layer
(robots.txt groups) and the checks (scoped noindex) can use it.

`KNOWN_AGENTS` is the contract's table of named agents (contracts/agents.md): each token's
tier and the exact User-Agent string `--agents-fetch` sends (None: judged from robots.txt,
never fetched). `canonical_token()` spells a token as the table does.

Pure: imports only the standard library.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

__all__ = [
    "KNOWN_AGENTS",
    "TIERS",
    "KnownAgent",
    "canonical_token",
    "is_product_token",
    "robots_token",
    "usage_pairs",
    "user_agent_of",
]


@dataclass(frozen=True, slots=True)
class KnownAgent:
    """A named agent of the table: its token as spelt, its tier, the string it sends."""

    token: str
    tier: str  # search, ai-train, ai-search, ai-user
    user_agent: str | None  # None: a robots.txt token only, never fetched


_AWK = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko"
KNOWN_AGENTS: Final[tuple[KnownAgent, ...]] = (
    KnownAgent(
        "Googlebot",
        "search",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ),
    KnownAgent(
        "Bingbot",
        "search",
        "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    ),
    KnownAgent(
        "GPTBot", "ai-train", f"{_AWK}; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
    ),
    KnownAgent(
        "ClaudeBot", "ai-train", f"{_AWK}; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"
    ),
    KnownAgent("Google-Extended", "ai-train", None),
    KnownAgent("CCBot", "ai-train", "CCBot/2.0 (https://commoncrawl.org/faq/)"),
    KnownAgent("Applebot-Extended", "ai-train", None),
    KnownAgent(
        "OAI-SearchBot",
        "ai-search",
        f"{_AWK}); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot",
    ),
    KnownAgent(
        "Claude-SearchBot",
        "ai-search",
        f"{_AWK}; compatible; Claude-SearchBot/1.0; +https://www.anthropic.com)",
    ),
    KnownAgent(
        "PerplexityBot",
        "ai-search",
        f"{_AWK}; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
    ),
    KnownAgent(
        "ChatGPT-User", "ai-user", f"{_AWK}); compatible; ChatGPT-User/1.0; +https://openai.com/bot"
    ),
    KnownAgent(
        "Claude-User",
        "ai-user",
        f"{_AWK}; compatible; Claude-User/1.0; +Claude-User@anthropic.com)",
    ),
    KnownAgent(
        "Perplexity-User",
        "ai-user",
        f"{_AWK}; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)",
    ),
)
TIERS: Final = ("search", "ai-train", "ai-search", "ai-user")
# by the token in lower case: as the table spells it, and the User-Agent it is fetched with
_TOKENS: Final = {a.token.lower(): a.token for a in KNOWN_AGENTS}
_USER_AGENTS: Final = {a.token.lower(): a.user_agent for a in KNOWN_AGENTS}


def canonical_token(token: str) -> str:
    """A token as the table spells it (`gptbot` -> `GPTBot`), else as given."""
    return _TOKENS.get(token.strip().lower(), token)


def user_agent_of(token: str) -> str | None:
    """The User-Agent string an agent is fetched with, or None (never fetched)."""
    return _USER_AGENTS.get(token.strip().lower())


# RFC 9309 2.2.1: the product token a robots.txt group names (letters, `_` and `-`)
_PRODUCT_TOKEN = re.compile(r"[A-Za-z_-]+")
# A product name: a token character run (RFC 9110 tchar minus the ones no crawler uses).
_NAME = re.compile(r"[A-Za-z0-9_.~+-]+")
# Words of a browser-like string's comments and products that never name a crawler.
_NOT_CRAWLERS = frozenset(
    {
        "applewebkit",
        "build",
        "chrome",
        "edg",
        "firefox",
        "gecko",
        "khtml",
        "mobile",
        "presto",
        "safari",
        "trident",
        "version",
    }
)


def _items(comment: str) -> list[str]:
    """The `;`-separated items of a comment's text, stripped."""
    return list(map(str.strip, comment.split(";")))


_PARENTHESIS = re.compile(r"[()]")


def _split(user_agent: str) -> tuple[list[str], list[list[str]]]:
    """The products outside parentheses (split at white space and at a comment) and the
    `;`-separated items of each comment; parentheses nested in a comment stay inside it,
    a `)` outside any comment is a product's character, and an unclosed comment still says
    what it says."""
    products: list[str] = []
    comments: list[list[str]] = []
    depth = start = 0  # start: where the text outside or the comment being read begins
    for paren in _PARENTHESIS.finditer(user_agent):
        at = paren.start()
        if paren.group() == "(":
            if depth == 0:  # a comment opens
                products += user_agent[start:at].split()
                start = at + 1
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:  # the comment closes
                comments.append(_items(user_agent[start:at]))
                start = at + 1
    rest = user_agent[start:]
    if depth == 0:
        products += rest.split()
    else:  # (an empty one, a final `(`, is one empty item: it names nothing)
        comments.append(_items(rest))
    return products, comments


def _name(product: str) -> str | None:
    """`Googlebot` of `Googlebot/2.1` or `Googlebot`; None for anything else (`MSIE 9.0`)."""
    name, _, version = product.partition("/")
    if not _NAME.fullmatch(name) or any(map(str.isspace, version)):
        return None
    return name


def _after_compatible(comments: list[list[str]]) -> Iterator[str]:
    """`Googlebot/2.1` of `(compatible; Googlebot/2.1; +http://...)`: the item after it."""
    for items in comments:
        for before, item in itertools.pairwise(items):
            if before.lower() == "compatible":
                yield item


def _crawler_in(comments: list[list[str]], products: list[str]) -> str | None:
    """The crawler the comments name: after `compatible` first, else a versioned product;
    else the product after a `compatible;` that stands outside parentheses (OpenAI's
    `Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0`);
    else the first product's name (`Mozilla`), or None."""
    bare = [_items(" ".join(products))]  # the products, `;`-separated like a comment
    # a product with a version (`Applebot/0.1` of `(Applebot/0.1; +http://...)`), not a
    # `+http://...` link
    versioned = (
        item
        for items in comments
        for item in items
        if "/" in item and not item.startswith("+") and "://" not in item
    )
    candidates = itertools.chain(
        _after_compatible(comments), versioned, _after_compatible(bare), products[:1]
    )
    for item in candidates:
        name = _name(item)  # a product name, unless it is a browser's word (`Gecko`)
        if name is not None and name.lower() not in _NOT_CRAWLERS:
            return name
    return None


def robots_token(user_agent: str, robots_agent: str | None = None) -> str:
    """The product token robots.txt groups and scoped `X-Robots-Tag` are matched with.

    `robots_agent` (`--robots-agent`), when given, is the token outright. Otherwise the
    token is the first product's name (`sitemap-audit` of `sitemap-audit/0.1.0`), unless
    the string is browser-like (`Mozilla/5.0 ...`): then it is the crawler named in a
    comment (`Googlebot` of `Mozilla/5.0 (compatible; Googlebot/2.1; +http://...)`), and
    `Mozilla` only when no crawler is named. Never empty: `*` for an empty string.
    """
    if token := (robots_agent or "").strip():
        return token
    products, comments = _split(user_agent)
    first = _name(products[0]) if products else None
    if first is not None and first.lower() != "mozilla":
        return first
    # browser-like, or no product read: the crawler it names, else `Mozilla` itself; else
    # what precedes the first `/`, else `*`
    crawler = _crawler_in(comments, products)
    return crawler if crawler is not None else user_agent.strip().split("/", 1)[0].strip() or "*"


def is_product_token(text: str) -> bool:
    """Is `text` a product token RFC 9309 lets a robots.txt group name (`--robots-agent`)?"""
    return _PRODUCT_TOKEN.fullmatch(text) is not None


def usage_pairs(value: str) -> dict[str, str]:
    """The `name=value` pairs of a `Content-Signal` or `Content-Usage` value, in order
    (contracts/agents.md, "Usage signals"): names and values trimmed and lower-cased; a
    pair without `=`, or with an empty name or value, dropped; a later pair of a name wins."""
    out: dict[str, str] = {}
    for part in value.split(","):
        name, _, val = part.partition("=")  # no `=`: no value
        name, val = name.strip().lower(), val.strip().lower()
        if name and val:
            out.pop(name, None)  # a later pair wins, and stands where it was written
            out[name] = val
    return out
