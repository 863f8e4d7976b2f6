"""The links of one HTML page, for the link crawl (RULES.md, Site coverage).

`links_of(facts, url, ...)` reads the facts of a page's one parse (checks/pagefacts.py:
the sink of the link crawl reads the whole body, up to the cap) and returns the `<a href>`
links a crawler follows: those inside `<body>` only (a link written in `<head>`, in a
comment or in a script string is none), resolved against `<base href>` and the page's
final URL, fragments dropped, `rel="nofollow"` links left out, http(s) only. It also says
whether the page's robots meta forbids following (`nofollow`, `none`) or indexing
(`noindex`, `none`), and where its canonical points. `page_links(body, url)` does the same
for a body in memory; `header_nofollow()` reads the same from `X-Robots-Tag` values.

The head's facts (base, metas, canonical) follow the page checks' rules (checks/scan.py):
a meta after an element that cannot be in a head is in the body and does not count.

Pure and synchronous: must not import aiohttp, asyncio or audit.http.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from audit.checks.agents import robots_meta
from audit.checks.charsets import normalize_charset
from audit.checks.hrefs import base_of, joined
from audit.checks.pagefacts import LINKS, PageFacts, parse_facts, resolve_links
from audit.checks.response import noindex_directive

__all__ = ["PageLinks", "header_nofollow", "links_of", "page_links"]

_NOFOLLOW: Final = frozenset({"nofollow", "none"})


@dataclass(frozen=True, slots=True)
class PageLinks:
    links: tuple[str, ...]  # followable absolute links, fragment-free, in document order
    nofollow: bool = False  # robots meta: follow none of them
    noindex: bool = False  # robots meta: do not index this page
    canonical: str | None = None  # absolute


def page_links(body: bytes, url: str, *, agent: str = "", charset: str | None = None) -> PageLinks:
    """The links a crawler follows from a page read as `body` at (final) `url`."""
    facts = parse_facts(body, normalize_charset(charset), complete=True, wants=LINKS)
    return links_of(facts, url, agent=agent)


def links_of(facts: PageFacts, url: str, *, agent: str = "") -> PageLinks:
    """The links a crawler follows from a page (its facts) at (final) `url`."""
    base = base_of(url, facts.base_href)
    nofollow = robots_meta(facts.metas, agent, _NOFOLLOW) is not None
    if nofollow:
        links: tuple[str, ...] = ()
    elif facts.links_at == url:  # resolved where the page was parsed
        links = facts.links
    else:
        links = resolve_links(url, facts)
    canonical = next(filter(None, facts.canonicals), None)
    if canonical is not None:
        # None when urllib cannot parse it: search engines ignore such a canonical too
        canonical = joined(base, canonical)
    noindex = robots_meta(facts.metas, agent) is not None
    return PageLinks(links, nofollow, noindex, canonical)


def header_nofollow(values: Sequence[str], agent: str = "") -> bool:
    """An `X-Robots-Tag` that says nofollow (or none) for every agent or for `agent`, read
    as the URL checks read a noindex in it (`unavailable_after:` dates are no agent)."""
    return noindex_directive(values, agent, words=_NOFOLLOW) is not None
