"""A page's main-text fingerprint and its own modification date (lastmod over time).

`ContentSink` is a body sink (the protocol of `HttpClient.fetch_page`): it keeps the
body of a 200 HTML answer up to a byte cap; `page_content(body, charset)` then parses
it with lxml.html and returns a `PageContent`:

- `fingerprint`: a signed 64-bit integer (blake2b, 8 bytes: stored as one SQLite
  INTEGER, so a million pages cost a few tens of megabytes) of the page's main text.
  What does not count: markup and attributes (so CSRF tokens in hidden inputs or metas,
  nonces, cache-busting asset hashes in src/href are never seen), scripts, styles,
  templates, iframes, svg, navigation, header, footer, aside, forms, elements whose class
  or id names an ad slot or a cookie banner, whitespace, and in the text that remains
  dates, times, long hexadecimal or base64-like tokens and long numbers (timestamps,
  request ids, nonces printed in the page). When the page marks its main text (`<main>`,
  `role=main`, a single `<article>`), only that counts.
- `modified`: the page's own modification date, from JSON-LD `dateModified` (also
  inside `@graph`) or `<meta property="article:modified_time">`, as an aware datetime.

With `head_only` the sink stops at the end of the head (only the date is wanted).

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import lxml.html
from lxml import etree

from audit.checks.htmlhead import charset_of_content_type, normalize_charset
from audit.checks.page import is_html
from audit.rules.dates import parse_w3c_start

__all__ = ["ContentSink", "PageContent", "main_text", "page_content", "text_fingerprint"]

_DROP_TAGS: Final = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "canvas",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "textarea",
)
# class/id words of per-request or rotating blocks (ads, consent banners, footers)
_NOISE_NAME: Final = re.compile(
    r"(?:^|[\s_-])(?:ad|ads|advert\w*|adslot|ad-slot|banner|sponsor\w*|promo\w*|cookie\w*|"
    r"consent|gdpr|footer|timestamp|csrf\w*|nonce|build)(?:$|[\s_-])",
    re.IGNORECASE,
)
# Text that changes per request or per build without the content changing.
_NOISE_TEXT: Final = re.compile(
    r"""
    \d{4}-\d{2}-\d{2}(?:[T\s]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?
    | \d{1,2}[/.]\d{1,2}[/.]\d{2,4}
    | \d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?
    | \b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b
    | \b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}\b
    | \b\d{6,}\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_NEVER_NOISE: Final = frozenset({"html", "body", "main", "article"})
_SPACES: Final = re.compile(r"\s+")
_DIGIT_WORD: Final = re.compile(r"(?<!\S)[^\s\d]*\d\S*")
_HEAD_END: Final = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_META_CHARSET: Final = re.compile(
    rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE | re.DOTALL
)
_MODIFIED_METAS: Final = ("article:modified_time", "og:updated_time")


@dataclass(frozen=True, slots=True)
class PageContent:
    """What a page's body says for lastmod over time."""

    fingerprint: int | None  # None: the page could not be parsed (or only its head was read)
    modified: datetime | None  # the page's own modification date
    modified_source: str | None  # where that date was found (for the message)
    modified_text: str | None  # the date as the page wrote it


class ContentSink:
    """Keeps the body of a 200 HTML answer, up to `cap` bytes (the head only with
    `head_only`); `content()` parses it once reading ended."""

    def __init__(self, cap: int, *, head_only: bool = False) -> None:
        self.cap = cap
        self.head_only = head_only
        self.body: bytearray | None = None
        self.charset: str | None = None
        self.complete = False

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        """A final answer begins: read it when it is a 200 HTML page."""
        self.body = None
        self.complete = False
        ctype = next((v for k, v in headers if k == "content-type"), None)
        if status != 200 or not is_html(ctype):
            return False
        self.body = bytearray()
        self.charset = charset_of_content_type(ctype)
        return True

    def feed(self, chunk: bytes) -> bool:
        """The next piece of the body; True when no more is wanted."""
        body = self.body
        if body is None:
            return True
        body += chunk[: max(0, self.cap - len(body))]
        if len(body) >= self.cap:
            return True
        return (
            self.head_only
            and _HEAD_END.search(body, max(0, len(body) - len(chunk) - 8)) is not None
        )

    def end(self, *, at_eof: bool) -> None:
        self.complete = at_eof

    def content(self) -> PageContent | None:
        """The page's fingerprint and date, or None when no HTML body was read."""
        if self.body is None:
            return None
        return page_content(bytes(self.body), self.charset, fingerprint=not self.head_only)


def _charset(body: bytes, http_charset: str | None) -> str:
    if http_charset:
        return http_charset
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    m = _META_CHARSET.search(body, 0, 1024)
    found = normalize_charset(m.group(1).decode("ascii", "replace")) if m else None
    return found or "utf-8"


def _parse(body: bytes, http_charset: str | None) -> Any:
    charset = _charset(body, http_charset)
    try:
        text = body.decode(charset, "replace")
    except LookupError:
        text = body.decode("utf-8", "replace")
    if not text.strip():
        return None
    try:
        return lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):  # an empty or garbage document
        return None


def page_content(body: bytes, http_charset: str | None, *, fingerprint: bool = True) -> PageContent:
    """Parse a page's body (once) into its fingerprint and modification date."""
    root = _parse(body, http_charset)
    if root is None:
        return PageContent(None, None, None, None)
    found = page_modified(root)
    fp = text_fingerprint(main_text(root)) if fingerprint else None
    return PageContent(fp, *found) if found else PageContent(fp, None, None, None)


def text_fingerprint(text: str) -> int:
    """A signed 64-bit hash of normalised text (an SQLite INTEGER)."""
    digest = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def main_text(root: Any) -> str:
    """The page's main text, noise dropped and whitespace collapsed (see the docstring).
    Changes the tree (drops the noise elements)."""
    for el in list(root.iter(*_DROP_TAGS)):
        _drop(el)
    for el in list(root.iter()):
        if _is_noise(el):
            _drop(el)
    body = _main_element(root)
    text = _SPACES.sub(" ", body.text_content())
    return _SPACES.sub(" ", _DIGIT_WORD.sub(_denoise, text)).strip()


def _denoise(m: re.Match[str]) -> str:
    # every noise pattern needs a digit: only words with one are searched (10x faster)
    return _NOISE_TEXT.sub(" ", m.group())


def _drop(el: Any) -> None:
    parent = el.getparent()
    if parent is not None:
        el.drop_tree()  # keeps the tail text (text after the element belongs to the parent)


def _is_noise(el: Any) -> bool:
    if not isinstance(el.tag, str):  # comments, processing instructions
        return True
    if el.tag in _NEVER_NOISE:
        return False
    names = f"{el.get('class') or ''} {el.get('id') or ''}"
    return names.strip() != "" and _NOISE_NAME.search(names) is not None


def _main_element(root: Any) -> Any:
    mains = root.xpath("//main | //*[@role='main']")
    if len(mains) == 1:
        return mains[0]
    articles = root.xpath("//article")
    if len(articles) == 1:
        return articles[0]
    bodies = root.xpath("//body")
    return bodies[0] if bodies else root


# --- the page's own modification date ----------------------------------------------


def page_modified(root: Any) -> tuple[datetime, str, str] | None:
    """(date, source, text) of the page's first usable modification date, or None."""
    for raw in root.xpath("//script[@type='application/ld+json']/text()"):
        for value in _json_ld_dates(str(raw)):
            when = parse_page_date(value)
            if when is not None:
                return when, "JSON-LD dateModified", value
    for meta in root.xpath("//meta[@property or @name]"):
        name = (meta.get("property") or meta.get("name") or "").strip().lower()
        value = (meta.get("content") or "").strip()
        if name in _MODIFIED_METAS and (when := parse_page_date(value)) is not None:
            return when, f'<meta property="{name}">', value
    return None


def _json_ld_dates(raw: str) -> Iterator[str]:
    try:
        data = json.loads(raw)
    except ValueError:
        return
    stack = [data]
    while stack:
        item = stack.pop(0)
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            value = item.get("dateModified")
            if isinstance(value, str):
                yield value.strip()
            graph = item.get("@graph")
            if isinstance(graph, list):
                stack.extend(graph)


def parse_page_date(text: str) -> datetime | None:
    """A page's date: W3C Datetime, else ISO 8601 (no timezone: UTC); None if neither."""
    try:
        return parse_w3c_start(text)[0]
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
