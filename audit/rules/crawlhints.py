"""<changefreq> and <priority>, the crawl hints Google ignores (RULES.md "Entries"):
changefreq-invalid and priority-invalid per entry, priority-uniform per sitemap.

    hints = CrawlHints(source)
    hints.count_priority(priority, line, loc, is_url, out) -> out (or a new list)
    hints.check_changefreq(text, line, loc, out)    # for a value not in CHANGEFREQS
    hints.problems(urls) -> [(code, message)]        # once per sitemap of `urls` <url>s
"""

from __future__ import annotations

from decimal import Decimal

from audit.core.records import Finding
from audit.rules.findings import DECIMAL, XML_SPACE, ZERO, add, show, writable

__all__ = ["CHANGEFREQS", "CrawlHints"]

CHANGEFREQS = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_ONE = Decimal(1)
_CACHE_SIZE = 4096  # valid priority values kept parsed per sitemap


class CrawlHints:
    """The changefreq and priority checks of one sitemap, and its priority counts."""

    __slots__ = ("_cache", "_count", "_first", "_same", "_text", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._count = 0  # <url>s with a valid <priority>
        self._first: Decimal | None = None
        self._text = ""  # the first valid priority as written (stripped)
        self._same = True
        # sitemaps repeat priority values verbatim: the valid ones, parsed (an invalid one is
        # checked again each time, as it is reported each time)
        self._cache: dict[str, Decimal] = {}

    def count_priority(
        self, priority: str, line: int, loc: str | None, is_url: bool, out: list[Finding]
    ) -> list[Finding]:
        """Count a <priority>; the full checks unless it is a valid value seen before."""
        number = self._cache.get(priority)
        if number is None:
            out = writable(out)
            number = self._check_priority(priority, line, loc, out)
            if number is None:  # invalid: reported
                return out
        if is_url:
            if self._first is None:
                self._first, self._text = number, priority.strip(XML_SPACE)
            self._count += 1
            self._same = self._same and number == self._first
        return out

    def check_changefreq(self, text: str, line: int, loc: str | None, out: list[Finding]) -> None:
        value = text.strip(XML_SPACE)
        if value in CHANGEFREQS:
            return
        hint = (
            f"write {value.lower()!r} (lower-case)"
            if value.lower() in CHANGEFREQS
            else f"use one of {', '.join(sorted(CHANGEFREQS))}"
        )
        add(
            out,
            self.source,
            "changefreq-invalid",
            f"<changefreq> {show(text)} is not a valid value: {hint} "
            "or remove it (Google ignores changefreq)",
            line,
            loc,
        )

    def _check_priority(
        self, text: str, line: int, loc: str | None, out: list[Finding]
    ) -> Decimal | None:
        """A priority not in the cache parsed (and kept), or None when it is invalid
        (priority-invalid added)."""
        stripped = text.strip(XML_SPACE)
        if not DECIMAL.fullmatch(stripped):
            why = "is not a decimal number"
        elif not ZERO <= (number := Decimal(stripped)) <= _ONE:  # the regex: decimals only
            why = "is outside 0.0 to 1.0"
        else:
            cache = self._cache
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[text] = number
            return number
        add(
            out,
            self.source,
            "priority-invalid",
            f"<priority> {show(text)} {why}: use a decimal from 0.0 to 1.0 such as 0.5, "
            "or remove it (Google ignores priority)",
            line,
            loc,
        )
        return None

    def problems(self, urls: int) -> list[tuple[str, str]]:
        """priority-uniform: every one of the sitemap's `urls` <url> entries has the same
        <priority> (at least two)."""
        count = self._count
        if not self._same or count < 2 or count != urls:
            return []
        return [
            (
                "priority-uniform",
                f"all {count:,} URLs have <priority> {show(self._text)}: a uniform "
                "priority says nothing (Google ignores priority); vary it or remove it",
            )
        ]
