"""A page's main text and its own modification date, from its lxml tree (for content
fingerprints: checks/content.py has what counts and what does not). The tree is a plain
lxml.etree HTML tree (no lxml.html element classes: no Python call per element).

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Final

from lxml import etree

from audit.checks.charsets import prescan
from audit.rules.dates import parse_w3c_start

__all__ = [
    "content_charset",
    "main_text",
    "page_modified",
    "parse_page_date",
    "text_fingerprint",
]

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
# a noise element's name until it is dropped: never a parsed one (the HTML parser
# lower-cases every tag name)
_NOISE_TAG: Final = "Noise"
_SPACES: Final = re.compile(r"\s+")
_DIGIT_WORD: Final = re.compile(r"(?<!\S)[^\s\d]*\d\S*")
_MODIFIED_METAS: Final = ("article:modified_time", "og:updated_time")
_STRING: Final = etree.XPath("string()")  # an element's text content, as XPath sees it


def content_charset(body: bytes, http_charset: str | None) -> str:
    """The charset content fingerprints decode a page with (always the same, so that a
    page keeps its fingerprint): the HTTP header's, a UTF-8 BOM, the prescan, UTF-8."""
    if http_charset:
        return http_charset
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    return prescan(body) or "utf-8"


def text_fingerprint(text: str) -> int:
    """A signed 64-bit hash of normalised text (an SQLite INTEGER)."""
    digest = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def main_text(root: Any) -> str:
    """The page's main text, noise dropped and whitespace collapsed (see the docstring).
    Changes the tree (drops the noise elements, keeping their tail text: the text after an
    element belongs to its parent)."""
    etree.strip_elements(root, *_DROP_TAGS, with_tail=False)
    # elements named like noise are renamed, then dropped with the tags above (comments and
    # processing instructions stay: their text is not in an element's string value)
    for el in root.iter(etree.Element):
        if (
            el.tag not in _NEVER_NOISE
            and _NOISE_NAME.search(f"{el.get('class', '')} {el.get('id', '')}") is not None
        ):
            el.tag = _NOISE_TAG
    etree.strip_elements(root, _NOISE_TAG, with_tail=False)
    # the one <main> (or role=main), else the one <article>, else the body
    body = root.xpath("//main | //*[@role='main']")
    if len(body) != 1:
        articles = root.xpath("//article")
        body = articles if len(articles) == 1 else root.xpath("//body") or [root]
    text = _SPACES.sub(" ", str(_STRING(body[0])))
    # every noise pattern needs a digit: only words with one are searched (10x faster)
    text = _DIGIT_WORD.sub(lambda m: _NOISE_TEXT.sub(" ", m.group()), text)
    return _SPACES.sub(" ", text).strip()


# --- the page's own modification date ----------------------------------------------


def page_modified(root: Any) -> tuple[datetime, str, str] | None:
    """(date, source, text) of the page's first usable modification date, or None."""
    for raw in root.xpath("//script[@type='application/ld+json']/text()"):
        for value in _json_ld_dates(str(raw)):
            when = parse_page_date(value)
            if when is not None:
                return when, "JSON-LD dateModified", value
    for meta in root.xpath("//meta[@property or @name]"):
        name = (meta.get("property") or meta.get("name", "")).strip().lower()
        value = meta.get("content", "").strip()
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
