"""The robots.txt product token of the configured agent (RULES.md, "What each bot sees").

RFC 9309 matches robots.txt groups, and RULES.md matches scoped `X-Robots-Tag` values, by the
crawler's product token, case-insensitively. `robots_token()` derives it from a User-Agent
string; `--robots-agent` sets it outright. It lives in the core so that both the HTTP layer
(robots.txt groups) and the checks (scoped noindex) can use it.

Pure: imports only the standard library.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["is_product_token", "robots_token"]

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


def _split(user_agent: str) -> tuple[list[str], list[list[str]]]:
    """The products outside parentheses and the `;`-separated items of each comment."""
    products: list[str] = []
    comments: list[list[str]] = []
    depth = 0
    buf: list[str] = []
    word: list[str] = []
    for ch in user_agent:
        if ch == "(":
            if depth == 0 and word:
                products.append("".join(word))
                word = []
            depth += 1
            if depth == 1:
                buf = []
                continue
        elif ch == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                comments.append([item.strip() for item in "".join(buf).split(";")])
                continue
        if depth:
            buf.append(ch)
        elif ch.isspace():
            if word:
                products.append("".join(word))
                word = []
        else:
            word.append(ch)
    if word:
        products.append("".join(word))
    if depth and buf:  # an unclosed comment still says what it says
        comments.append([item.strip() for item in "".join(buf).split(";")])
    return products, comments


def _name(product: str) -> str | None:
    """`Googlebot` of `Googlebot/2.1` or `Googlebot`; None for anything else (`MSIE 9.0`)."""
    name, _, version = product.partition("/")
    if not _NAME.fullmatch(name) or any(c.isspace() for c in version):
        return None
    return name


def _crawler_in(comments: list[list[str]]) -> str | None:
    # `(compatible; Googlebot/2.1; +http://...)`: the item after `compatible` names it
    for items in comments:
        for before, item in itertools.pairwise(items):
            if before.lower() == "compatible":
                name = _name(item)
                if name is not None and name.lower() not in _NOT_CRAWLERS:
                    return name
    # `(Applebot/0.1; +http://...)`: a versioned product inside a comment
    for items in comments:
        for item in items:
            if "/" in item and not item.startswith("+") and "://" not in item:
                name = _name(item)
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
    if robots_agent is not None and robots_agent.strip():
        return robots_agent.strip()
    products, comments = _split(user_agent)
    first = _name(products[0]) if products else None
    if first is None or first.lower() == "mozilla":
        crawler = _crawler_in(comments)
        if crawler is not None:
            return crawler
    if first is not None:
        return first
    stripped = user_agent.strip()
    return stripped.split("/", 1)[0].strip() or "*"


def is_product_token(text: str) -> bool:
    """Is `text` a product token RFC 9309 lets a robots.txt group name (`--robots-agent`)?"""
    return _PRODUCT_TOKEN.fullmatch(text) is not None
