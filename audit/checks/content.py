"""A page's main-text fingerprint and its own modification date (lastmod over time).

`ContentSink` is a body sink (the protocol of `HttpClient.fetch_page`, a facts sink of
checks/pagefacts.py: beside the page checks and the link crawl it shares their one read
and one parse): it keeps the body of a 200 HTML answer up to a byte cap and parses it
with lxml.html once reading ended; `page_content(body, charset)` does the same for a body
in memory. Both give a `PageContent` (the main text and dates: checks/maintext.py):

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

from dataclasses import dataclass
from datetime import datetime

from audit.checks.maintext import main_text, parse_page_date, text_fingerprint
from audit.checks.pagefacts import CONTENT, DATE, FactsSink, PageFacts, parse_facts

__all__ = ["ContentSink", "PageContent", "main_text", "page_content", "text_fingerprint"]


@dataclass(frozen=True, slots=True)
class PageContent:
    """What a page's body says for lastmod over time."""

    fingerprint: int | None  # None: the page could not be parsed (or only its head was read)
    modified: datetime | None  # the page's own modification date
    modified_source: str | None  # where that date was found (for the message)
    modified_text: str | None  # the date as the page wrote it


class ContentSink(FactsSink):
    """Keeps the body of a 200 HTML answer, up to `cap` bytes (the head only with
    `head_only`); `content()` reads the facts of its one parse."""

    def __init__(self, cap: int, *, head_only: bool = False) -> None:
        super().__init__(DATE if head_only else CONTENT, cap)
        self.head_only = head_only

    def content(self) -> PageContent | None:
        """The page's fingerprint and date, or None when no HTML body was read."""
        return None if self.facts is None else content_of(self.facts)


def content_of(facts: PageFacts) -> PageContent:
    """The content part of a page's facts."""
    if facts.modified is None:
        return PageContent(facts.fingerprint, None, None, None)
    text, source = facts.modified
    return PageContent(facts.fingerprint, parse_page_date(text), source, text)


def page_content(body: bytes, http_charset: str | None) -> PageContent:
    """Parse a page's body (once) into its fingerprint and modification date."""
    facts = parse_facts(body, http_charset, complete=True, wants=CONTENT)
    return content_of(facts)
