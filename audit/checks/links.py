"""The links of one HTML page, for the link crawl (RULES.md, Site coverage).

`page_links(body, url, ...)` reads a page body with lxml's HTML parser and returns the
`<a href>` links a crawler follows: those inside `<body>` only (a link written in `<head>`,
in a comment or in a script string is none), resolved against `<base href>` and the page's
final URL, fragments dropped, `rel="nofollow"` links left out, http(s) only. It also says
whether the page's robots meta forbids following (`nofollow`, `none`) or indexing
(`noindex`, `none`), and where its canonical points. `header_nofollow()` reads the same
from `X-Robots-Tag` values.

libxml2 (like a browser) moves an `<a>` met in the head into an implied body, so the head
is cut off at the source first (at `</head>` or `<body`) and parsed on its own.

Pure and synchronous: must not import aiohttp, asyncio or audit.http.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urldefrag, urljoin

from lxml import etree

__all__ = ["PageLinks", "header_nofollow", "page_links"]

_BODY_START: Final = re.compile(rb"</head\s*>|<body[\s>/]", re.IGNORECASE)
_NOFOLLOW: Final = frozenset({"nofollow", "none"})
_NOINDEX: Final = frozenset({"noindex", "none"})
_PARSER: Final = etree.HTMLParser(remove_comments=True, remove_pis=True, recover=True)


@dataclass(frozen=True, slots=True)
class PageLinks:
    links: tuple[str, ...]  # followable absolute links, fragment-free, in document order
    nofollow: bool = False  # robots meta: follow none of them
    noindex: bool = False  # robots meta: do not index this page
    canonical: str | None = None  # absolute


def page_links(body: bytes, url: str, *, agent: str = "", charset: str | None = None) -> PageLinks:
    """The links a crawler follows from a page read as `body` at (final) `url`."""
    head, rest = _split(body)
    head_root = _parse(head, charset)
    base, metas, canonical = _head_facts(head_root, url)
    nofollow = _meta_says(metas, agent, _NOFOLLOW)
    links = () if nofollow else tuple(_anchors(_parse(rest, charset), base))
    return PageLinks(links, nofollow, _meta_says(metas, agent, _NOINDEX), canonical)


def header_nofollow(values: Iterable[str], agent: str = "") -> bool:
    """An `X-Robots-Tag` that says nofollow (or none) for every agent or for `agent`."""
    own = agent.strip().lower()
    for value in values:
        scope: str | None = None
        for raw in value.lower().split(","):
            name, colon, token = raw.strip().partition(":")
            if colon and token.strip() and " " not in name.strip():
                scope, raw = name.strip(), token
            if raw.strip() in _NOFOLLOW and (scope is None or scope == own):
                return True
    return False


def _split(body: bytes) -> tuple[bytes, bytes]:
    """(the source up to the end of the head, the rest); no head: (b"", body)."""
    m = _BODY_START.search(body)
    if m is None:
        return b"", body
    return body[: m.start()], body[m.start() :]


def _parse(data: bytes, charset: str | None) -> Any:
    if not data.strip():
        return None
    parser = _PARSER if charset is None else _parser_for(charset)
    try:
        return etree.fromstring(data, parser)
    except (etree.ParserError, ValueError, LookupError):
        return None


def _parser_for(charset: str) -> Any:
    try:
        return etree.HTMLParser(
            remove_comments=True, remove_pis=True, recover=True, encoding=charset
        )
    except LookupError:
        return _PARSER


def _head_facts(root: Any, url: str) -> tuple[str, list[tuple[str, str]], str | None]:
    """(the base links resolve against, the robots-ish metas, the canonical) of the head."""
    if root is None:
        return url, [], None
    base = url
    for el in root.iter("base"):
        href = (el.get("href") or "").strip()
        if href:
            base = urljoin(url, href)
            break
    metas = [
        ((el.get("name") or "").strip().lower(), el.get("content") or "")
        for el in root.iter("meta")
    ]
    return base, metas, _canonical(root, base)


def _canonical(root: Any, base: str) -> str | None:
    for el in root.iter("link"):
        rel = (el.get("rel") or "").lower().split()
        href = (el.get("href") or "").strip()
        if "canonical" in rel and href:
            return str(urldefrag(urljoin(base, href))[0])
    return None


def _meta_says(metas: list[tuple[str, str]], agent: str, words: frozenset[str]) -> bool:
    own = agent.strip().lower()
    for name, content in metas:
        named = name == "robots" or (own and name == own)
        if named and {t.strip().lower() for t in content.split(",")} & words:
            return True
    return False


def _anchors(root: Any, base: str) -> Iterable[str]:
    if root is None:
        return
    for el in root.iter("a"):
        href = el.get("href")
        if not href or "nofollow" in (el.get("rel") or "").lower().split():
            continue
        link = _absolute(base, href)
        if link is not None:
            yield link


def _absolute(base: str, href: str) -> str | None:
    try:
        link = urldefrag(urljoin(base, href.strip()))[0]
    except ValueError:  # a malformed IPv6 literal, say
        return None
    scheme = link.split(":", 1)[0].lower()
    return link if scheme in ("http", "https") else None
