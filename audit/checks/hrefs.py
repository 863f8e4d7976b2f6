"""A page's hrefs as absolute http(s) URLs without fragment: `urldefrag(urljoin(base, href))`,
the standard library's resolution, with a shortcut for the two shapes most links have.

Resolving costs a link crawl more than parsing the page: `urljoin` and `urldefrag` parse
and rebuild every URL (about 6 µs a link, some 40 links a page; lxml parses such a page in
about 90 µs). Most hrefs are already
absolute (`https://host/path`) or start at the root (`/path?query`), and for those the
answer can be written down without parsing: an absolute one is itself, a root one is the
base's `scheme://netloc` before it, each cut at `#`. The shortcut takes only hrefs where
that is exactly what urllib answers, printable ASCII without `;` (path parameters), `[`,
`]` (IP literals), `\\` or space, no empty query left at the end, and for a root href no
`//` or dot segment in the path. Two more shapes are answered without urllib: an href with
a scheme other than http(s) (`mailto:`, `javascript:`) is no web link, and every
fragment-only href (`#main`) of a page is the page itself, asked of urllib once. Anything
else goes to urllib itself. A property test holds the two to the same answers
(tests/checks/test_hrefs.py).

Pure and synchronous.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urldefrag, urljoin, urlsplit

from audit.rules.urls import normalize_url

__all__ = ["absolute", "base_of", "joined", "joined_all", "norm_url", "resolve"]

# The two shapes (see the module), in printable ASCII but space ; [ \ ] (the fragment, cut
# off, may hold any of those; the rest no "#"): a root href whose path has no "//" or "/."
# (empty or dot segments), and an absolute http(s) href with a host; neither ending in "?"
# before the fragment (urllib drops an empty query). Group 1 is the href without fragment.
_ROOTED: Final = re.compile(
    r'(/(?![/.])(?:/(?![/.])|[!"$-.0-:<->@-Z^-~])*(?:\?[!"$-:<-Z^-~]*[!"$-:<->@-Z^-~])?)'
    r"(?:#[!-:<-Z^-~]*)?"
)
_ABSOLUTE: Final = re.compile(
    r'(https?://[!"$-.0-:<->@-Z^-~](?:[!"$-:<-Z^-~]*[!"$-:<->@-Z^-~])?)(?:#[!-:<-Z^-~]*)?'
)
# a scheme (as urllib reads one) that is not http or https
_OTHER_SCHEME: Final = re.compile(r"(?!https?:)[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def resolve(url: str, base_href: str | None, hrefs: Iterable[str]) -> tuple[str, ...]:
    """The hrefs of a page read at `url` (with its `<base href>`, if any) as absolute
    http(s) URLs without fragment, in order; hrefs that resolve to anything else are left
    out."""
    base = base_of(url, base_href)
    root = _root(base)
    itself: dict[str, str | None] = {}  # what a fragment-only href resolves to, once asked
    out: list[str] = []
    for href in hrefs:
        link = _shortcut(root, href)
        # else urllib, but mailto:, javascript:, tel: ... are never an http(s) link
        if link is None and not _OTHER_SCHEME.match(href):
            if href[:1] != "#":
                link = absolute(base, href)
            else:  # every fragment-only href of a page is the page itself, asked once
                if "#" not in itself:
                    itself["#"] = absolute(base, href)
                link = itself["#"]
        if link is not None:
            out.append(link)
    return tuple(out)


def joined(base: str, href: str) -> str | None:
    """urllib's `urldefrag(urljoin(base, href))`, or None when urllib cannot parse it."""
    link = _shortcut(_root(base) if href[:1] == "/" else None, href)
    if link is not None:
        return link
    try:
        return urldefrag(urljoin(base, href))[0]
    except ValueError:  # a malformed IPv6 literal, say
        return None


def joined_all(base: str, hrefs: Iterable[str]) -> list[str]:
    """Each href resolved against `base` by urllib's `urljoin` (its fragment kept: a
    message shows it as written), each once, in order; an href urllib cannot parse stays
    as written (then it is judged as no http(s) URL)."""
    out: dict[str, None] = {}
    for href in hrefs:
        try:
            out[urljoin(base, href)] = None
        except ValueError:  # a malformed IPv6 literal, say
            out[href] = None
    return list(out)


def base_of(url: str, base_href: str | None) -> str:
    """What a page's relative links resolve against: its `<base href>` resolved against
    its URL, or its URL when it has none or one urllib cannot parse (a browser ignores an
    invalid base URL too)."""
    if not base_href:
        return url
    try:
        return urljoin(url, base_href)
    except ValueError:  # a malformed IPv6 literal, say
        return url


def absolute(base: str, href: str) -> str | None:
    """urllib's `urldefrag(urljoin(base, href.strip()))`, when it is an http(s) URL."""
    try:
        link = urldefrag(urljoin(base, href.strip()))[0]
    except ValueError:  # a malformed IPv6 literal, say
        return None
    scheme = link.split(":", 1)[0].lower()
    return link if scheme in ("http", "https") else None


def _root(base: str) -> str | None:
    """`scheme://netloc` of an http(s) base that a root href is written after, or None
    (then every root href goes to urllib)."""
    if not base.isascii():
        return None
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _shortcut(root: str | None, href: str) -> str | None:
    """The resolved href when its shape allows writing it down, else None (ask urllib)."""
    m = _ROOTED.fullmatch(href)
    if m is not None:
        return None if root is None else root + m.group(1)
    m = _ABSOLUTE.fullmatch(href)
    return m.group(1) if m is not None else None


def norm_url(url: str) -> str:
    """The URL as compared (normalize_url) without its fragment, which search engines
    ignore; cut at `#` when urllib cannot parse it (a malformed IPv6 literal)."""
    url = url.strip()
    try:
        url = urldefrag(url)[0]
    except ValueError:
        url = url.split("#", 1)[0]
    return normalize_url(url)
