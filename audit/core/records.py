"""Outcome records: what every stage produces, as plain values.

Nothing here does I/O. Each record has `to_json()` returning the dict of the
jsonl format in DESIGN.md.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from audit.core.codes import severity_of as _severity_of
from audit.core.severity import Severity as Severity  # re-exported: the records name it

DocKind = Literal["urlset", "sitemapindex", "text", "rss", "atom"]


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    sitemap: str | None = None
    line: int | None = None
    url: str | None = None
    column: int | None = None
    # a code's own fields (contracts/agents.md: `agent`, `count`, `llms`, ...), after the
    # rest; left out of equality and hashing (a dict is not hashable)
    fields: dict[str, Any] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "type": "finding",
            "code": self.code,
            # _value_, not .value: enum's `value` is a Python-level property (two per finding)
            "severity": self.severity._value_,
            "url": self.url,
            "sitemap": self.sitemap,
            "line": self.line,
            "message": self.message,
        }
        if self.fields:
            out.update(self.fields)
        return out


# A URL read from the network may be megabytes long (libxml2 allows 10 MB of text):
# reports keep its start, enough to find it, not all of it.
MAX_REPORTED_URL = 8192


def clip_url(url: str) -> str:
    if len(url) <= MAX_REPORTED_URL:
        return url
    return f"{url[:MAX_REPORTED_URL]}...[{len(url) - MAX_REPORTED_URL:,} more characters]"


def finding(
    code: str,
    message: str,
    *,
    sitemap: str | None = None,
    line: int | None = None,
    url: str | None = None,
    column: int | None = None,
    fields: dict[str, Any] | None = None,
) -> Finding:
    """Build a Finding with the severity RULES.md gives its code (and its own `fields`)."""
    if url is not None:
        url = clip_url(url)
    return Finding(code, _severity(code), message, sitemap, line, url, column, fields)


# code -> severity, kept from the first use: a cache lookup is cheaper than codes' table walk
_severity = functools.cache(_severity_of)


# --- entries, as the streaming parser emits them ---------------------------


@dataclass(slots=True)
class Image:
    loc: str | None
    line: int
    deprecated: list[str] = field(default_factory=list)  # deprecated child tags seen


@dataclass(slots=True)
class Video:
    line: int
    fields: dict[str, str] = field(default_factory=dict)  # local name -> text


@dataclass(slots=True)
class News:
    line: int
    # "name", "language", "publication_date", "title", ...
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Alternate:
    hreflang: str | None
    href: str | None
    line: int


@dataclass(slots=True)
class Entry:
    """One `<url>` or `<sitemap>` (or a text line, RSS item, Atom entry).

    `loc` is the text exactly as in the document (not stripped; None when the
    element is absent). `line` is the line of `<loc>`, else of the entry.
    """

    kind: Literal["url", "sitemap"]
    loc: str | None
    line: int
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None
    images: list[Image] | None = None
    videos: list[Video] | None = None
    news: list[News] | None = None
    alternates: list[Alternate] | None = None


# --- crawl records ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hop:
    url: str
    status: int


@dataclass(frozen=True, slots=True)
class SitemapRecord:
    url: str
    parent: str | None
    kind: str | None
    status: int | None
    entries: int
    bytes: int
    gzip: bool
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "sitemap",
            "url": self.url,
            "parent": self.parent,
            "kind": self.kind,
            "status": self.status,
            "entries": self.entries,
            "bytes": self.bytes,
            "gzip": self.gzip,
            "error": self.error,
        }


# UrlResult and FetchResult are built once or twice per checked URL: not `frozen`, whose
# __init__ sets each field through object.__setattr__ (about 2% of a crawl). They are
# values all the same: never assigned to after construction (dataclasses.replace makes
# a changed copy).
@dataclass(slots=True)
class UrlResult:
    url: str
    sitemap: str | None
    line: int | None
    status: int | None
    final_url: str | None
    redirects: tuple[Hop, ...]
    lastmod: str | None
    last_modified: str | None
    robots: Literal["allowed", "blocked", "unreachable"]
    elapsed_ms: float | None
    error: str | None = None
    extra: dict[str, Any] | None = None  # headers that matter, body excerpt of failures, ...

    def with_extra(self, extra: dict[str, Any] | None) -> UrlResult:
        """A copy with other extras (its slots set here: a fraction of dataclasses.replace's
        cost, paid once per checked URL by the hooks that add fields)."""
        new = _new_url_result(UrlResult)
        new.url = self.url
        new.sitemap = self.sitemap
        new.line = self.line
        new.status = self.status
        new.final_url = self.final_url
        new.redirects = self.redirects
        new.lastmod = self.lastmod
        new.last_modified = self.last_modified
        new.robots = self.robots
        new.elapsed_ms = self.elapsed_ms
        new.error = self.error
        new.extra = extra
        return new

    def with_fields(self, fields: dict[str, Any]) -> UrlResult:
        """A copy with `fields` added to its extras (a field it has is replaced)."""
        return self.with_extra({**self.extra, **fields} if self.extra else fields)

    @classmethod
    def unrequested(
        cls,
        url: str,
        sitemap: str | None,
        line: int | None,
        lastmod: str | None,
        robots: Literal["allowed", "blocked", "unreachable"],
        error: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> UrlResult:
        """The record of a listed URL that got no request (blocked, unusable, failed)."""
        return cls(url, sitemap, line, None, None, (), lastmod, None, robots, None, error, extra)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "url",
            "url": self.url,
            "sitemap": self.sitemap,
            "line": self.line,
            "status": self.status,
            "final_url": self.final_url,
            "redirects": [{"url": h.url, "status": h.status} for h in self.redirects]
            if self.redirects
            else [],
            "lastmod": self.lastmod,
            "last_modified": self.last_modified,
            "robots": self.robots,
            "elapsed_ms": self.elapsed_ms,
            "error": self.error,
        }
        if self.extra:
            out.update(self.extra)
        return out


# with_extra() fills a new record's slots itself: calling the class costs a C-to-Python
# __init__ frame more, once per checked URL
_new_url_result = object.__new__


# The successful statuses: `status in STATUS_2XX` is False for no answer (None) too.
STATUS_2XX: Final = frozenset(range(200, 300))


def header_value(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    """The first value of a header among lower-cased (name, value) pairs."""
    name = name.lower()
    for k, v in headers:
        if k == name:
            return v
    return None


def header_values(headers: tuple[tuple[str, str], ...], name: str) -> list[str]:
    """Every value of a header that may repeat."""
    name = name.lower()
    return [v for k, v in headers if k == name]


@dataclass(slots=True)
class FetchResult:
    """What the HTTP layer saw for one URL, after redirects and retries.

    Pure data: the URL checks read it, the state store can keep it. Header
    names are lower-cased; a header may repeat.
    """

    url: str
    final_url: str
    status: int | None  # final status; None when no answer at all
    headers: tuple[tuple[str, str], ...] = ()
    redirects: tuple[Hop, ...] = ()  # every hop that answered 3xx, in order
    elapsed_ms: float = 0.0  # wall time of the final request (not backoff)
    method: str = "HEAD"
    error: str | None = None  # one-line description of a network/redirect failure
    # timeout|connect|dns|tls|reset|redirect-loop|redirect-limit|redirect-invalid|redirect-scheme|other
    error_kind: str | None = None
    body_head: bytes = b""  # first bytes of the body (failures and GETs), for diagnosis
    attempts: int = 1  # requests made including retries

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    def header_all(self, name: str) -> list[str]:
        return header_values(self.headers, name)
