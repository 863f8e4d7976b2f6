"""What `fix` writes, decided from the evidence (contracts/fix.md): pure, no I/O.

- `action_of`: kept, replaced (its final URL written instead) or dropped, with the code
  of the finding that justifies it;
- `lastmod_of`: the `<lastmod>` from the strongest evidence: the content's change time,
  then a trustworthy Last-Modified, then the listed date when no finding discredits it;
- alternates: only among kept URLs, and none for a cluster of one;
- shards: by the first path segment, split into a power of two of parts by a hash of
  the path, so a URL keeps its file from one night to the next.

Knows no HTTP and no files: `plan()` returns values the writer renders.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter, itemgetter
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from audit.core.config import DEFAULT_SHARD_SIZE, MAX_SHARD_SIZE
from audit.fix.evidence import Alt, Evidence, Listed
from audit.rules.dates import parse_http_date, parse_w3c_datetime
from audit.rules.urls import LocScope, normalize_url, origin

__all__ = [
    "DEFAULT_SHARD_SIZE",
    "MAX_SHARD_BYTES",
    "MAX_SHARD_SIZE",
    "Entry",
    "FixRecord",
    "Plan",
    "Shard",
    "path_query",
    "plan",
    "shard_key",
]

MAX_SHARD_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed per file

Action = Literal["kept", "replaced", "dropped"]

# A dropped URL names the first of these that is on it (the contract's order).
_DROP_CODES = (
    "url-robots-blocked",
    "url-not-found",
    "url-client-error",
    "url-bot-blocked",
    "url-server-error",
    "url-rate-limited",
    "url-unreachable",
    "url-redirect-loop",
    "url-redirect-error",
    "url-noindex",
    "url-canonical-mismatch",
    "url-redirect",
)
_NOT_KEPT = frozenset({"url-noindex", "url-canonical-mismatch"})
_NOT_REPLACED = _NOT_KEPT | {"url-redirect-loop", "url-redirect-error"}
# what stops a 200 from being written, by whether the listed URL redirected
_BLOCKING = {False: _NOT_KEPT, True: _NOT_REPLACED}
# the findings that make a listed <lastmod> unusable, in the order lastmod_code names them
_LASTMOD_CODES = ("lastmod-invalid", "lastmod-imprecise", "lastmod-future", "lastmod-churn")
# a URL that could not even be requested names what was wrong with its <loc>
_LOC_PREFIX = "loc-"

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML = "http://www.w3.org/1999/xhtml"
_KEY_JUNK = re.compile(r"[^a-z0-9]+")
_AUTHORITY_END = re.compile(r"[/?]")


@dataclass(slots=True)
class Entry:
    """One `<url>` written."""

    loc: str
    lastmod: str | None
    source: str | None  # "content" | "last-modified" | "sitemap"
    alternates: tuple[Alt, ...] = ()
    shard: str | None = None  # file name, set when sharded
    _xml: str | None = None  # the element, once rendered (sized, then written)

    def xml(self) -> str:
        if self._xml is None:
            self._xml = self._render()
        return self._xml

    def _render(self) -> str:
        parts = [f"<url><loc>{escape(self.loc)}</loc>"]
        if self.lastmod is not None:
            parts.append(f"<lastmod>{escape(self.lastmod)}</lastmod>")
        for alt in self.alternates:
            parts.append(
                f'<xhtml:link rel="alternate" hreflang={quoteattr(alt.hreflang or "")} '
                f"href={quoteattr(alt.href or '')}/>"
            )
        parts.append("</url>\n")
        return "".join(parts)


_NO_ENTRY = Entry("", None, None)  # a dropped URL's record: no shard, no lastmod


@dataclass(slots=True)
class FixRecord:
    """One `fix` record of fix-report.jsonl."""

    url: str
    action: Action
    code: str | None
    target: str | None = None
    # the entry written for it (a dropped URL: _NO_ENTRY, no shard and no lastmod)
    entry: Entry = field(default_factory=lambda: _NO_ENTRY)
    lastmod_code: str | None = None
    alternates_dropped: list[dict[str, str | None]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        e = self.entry  # (a dropped URL: _NO_ENTRY)
        return {
            "type": "fix",
            "url": self.url,
            "action": self.action,
            "code": self.code,
            "target": self.target,
            "shard": e.shard,
            "lastmod": e.lastmod,
            "lastmod_source": e.source,
            "lastmod_code": self.lastmod_code,
            "alternates_dropped": self.alternates_dropped,
        }


@dataclass(slots=True)
class Shard:
    name: str  # file name without .gz
    entries: list[Entry]  # in code-point order of <loc>

    def lastmod(self) -> str | None:
        """The newest <lastmod> of its entries, as that entry writes it (the first one
        written when two values name the same instant)."""
        # many entries share a date: each value is parsed once, in the entries' order (an
        # empty one, as None, never parses)
        values = dict.fromkeys(filter(None, map(attrgetter("lastmod"), self.entries)))
        parsed: list[tuple[datetime, str]] = []
        for value in values:
            try:
                parsed.append((parse_w3c_datetime(value).start, value))
            except ValueError:
                continue
        return max(parsed, key=itemgetter(0), default=(None, None))[1]

    def xml(self) -> str:
        return _urlset_head(self.entries) + "".join(map(Entry.xml, self.entries)) + _URLSET_TAIL


_URLSET_TAIL = "</urlset>\n"


def _urlset_head(entries: list[Entry]) -> str:
    xhtml = f' xmlns:xhtml="{XHTML}"' if any(map(attrgetter("alternates"), entries)) else ""
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}"{xhtml}>\n'


@dataclass(slots=True)
class Plan:
    base_url: str
    records: list[FixRecord]
    shards: list[Shard]  # in file-name order
    written: int  # the URLs written (each in one shard)
    suffix: str = ""  # of the shards' files: ".gz" when they are written gzipped


def _first(codes: tuple[str, ...], wanted: tuple[str, ...]) -> str | None:
    return next((c for c in wanted if c in codes), None)


def action_of(item: Listed, scope: LocScope) -> tuple[Action, str | None]:
    """The item's action and the code that justifies it (None for kept)."""
    out_of_scope = scope.classify(item.url, item.key)
    if out_of_scope is not None:
        return "dropped", out_of_scope
    final = item.final_url
    # a 200 (answered: robots.txt allowed it) with nothing that keeps it out of the set
    if item.status == 200 and not _BLOCKING[item.redirected].intersection(item.codes):
        if not item.redirected:
            return "kept", None
        # a redirect to a 200 in scope: its target is written instead
        # (no answer, no final URL: '' has no origin)
        if scope.classify(final) is None and origin(final) is not None:
            return "replaced", "url-redirect"
    # dropped, naming the first code of the contract's order on it; else robots.txt
    # unreachable; else, never requested, what was wrong with its <loc>
    fallback = ["robots-unreachable"] if item.robots == "unreachable" else []
    fallback += [c for c in item.codes if c.startswith(_LOC_PREFIX)][:1]
    return "dropped", _first(item.codes, _DROP_CODES) or next(iter(fallback), None)


def lastmod_code(item: Listed, ev: Evidence) -> str | None:
    """For a URL listed with a <lastmod>: the finding that discredits it, or None."""
    if not item.lastmod:
        return None
    code = _first(item.codes, _LASTMOD_CODES)
    if code is None and item.sitemap in ev.uniform_sitemaps:
        code = "lastmod-uniform"
    return code


def lastmod_of(
    item: Listed, ev: Evidence, now: datetime, listed: str = ""
) -> tuple[str | None, str | None]:
    """(<lastmod>, its source) of the entry written from `item`'s record; `listed` is the
    listed <lastmod> when it may be written (a kept item's, no finding discredits it)."""
    if item.content_changed is not None:
        return item.content_changed, "content"
    # a Last-Modified that is trusted: not in the future, not the time of the request, not
    # a host's deploy stamp (a listed URL that was answered is an http(s) URL: it has an
    # origin)
    at = parse_http_date(item.last_modified) if item.last_modified is not None else None
    if (
        at is not None
        and at <= now
        and "last-modified-dynamic" not in item.codes
        and origin(item.url) not in ev.deploy_origins
    ):
        return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00"), "last-modified"
    return (listed, "sitemap") if listed else (None, None)


def path_query(url: str) -> tuple[str, str]:
    """(path, query) of an absolute URL, by string search (urlsplit costs 10 times more,
    twice per written URL)."""
    start = url.find("//")
    if start >= 0:  # what follows the authority: from its first "/" or "?" on
        rest = url[start + 2 :]
        tail = rest[len(_AUTHORITY_END.split(rest, 1)[0]) :]  # "https://host?x": no path
    else:  # no authority: no path, a query from the first "?" on
        q = url.find("?")
        tail = url[q:] if q >= 0 else ""
    path, _, query = tail.split("#", 1)[0].partition("?")
    return path, query


def shard_key(url: str) -> str:
    """The shard key of a written URL: its first path segment, cleaned, else `root`."""
    path = path_query(url)[0]
    segment, slash, _ = path.removeprefix("/").partition("/")
    if not slash:
        return "root"
    key = _KEY_JUNK.sub("-", segment.lower()).strip("-")[:40]
    return key or "root"


def _split(entries: list[Entry], shard_size: int) -> list[list[Entry]]:
    """The entries of one key in B parts, B the smallest power of two within the limits."""
    # a URL's part: a hash of its path and query, so it keeps its file from night to night
    hashes = []
    for e in entries:
        path, query = path_query(e.loc)
        text = f"{path}?{query}" if query else path
        hashes.append(int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16))
    sizes = [len(e.xml().encode("utf-8")) for e in entries]
    bound = len(_urlset_head(entries).encode("utf-8")) + len(_URLSET_TAIL)
    b = 1
    while b < len(entries):
        counts = [0] * b
        nbytes = [bound] * b
        for h, size in zip(hashes, sizes, strict=True):
            counts[h % b] += 1
            nbytes[h % b] += size
        if max(counts) <= shard_size and max(nbytes) <= MAX_SHARD_BYTES:
            break
        b *= 2
    parts: list[list[Entry]] = [[] for _ in range(b)]
    for e, h in zip(entries, hashes, strict=True):
        parts[h % b].append(e)
    return parts


def _shards(entries: list[Entry], shard_size: int, suffix: str) -> list[Shard]:
    by_key: dict[str, list[Entry]] = {}
    for e in entries:
        by_key.setdefault(shard_key(e.loc), []).append(e)
    shards: list[Shard] = []
    for key, group in by_key.items():
        parts = _split(group, shard_size)
        for i, part in enumerate(parts, 1):
            if not part:
                continue
            name = f"sitemap-{key}.xml" if len(parts) == 1 else f"sitemap-{key}-{i}.xml"
            part.sort(key=lambda e: e.loc)
            shard = Shard(name, part)
            for e in part:
                e.shard = name + suffix
            shards.append(shard)
    shards.sort(key=lambda s: s.name)
    return shards


# the verdict of a URL no listed one normalises to (nor an alternate without href)
_UNLISTED: tuple[Action | None, str | None] = (None, None)


def _alternates(
    item: Listed, verdicts: dict[str | None, tuple[Action | None, str | None]]
) -> tuple[tuple[Alt, ...], list[dict[str, str | None]]]:
    """The kept item's alternates that name kept URLs, and the ones not written."""
    written: list[Alt] = []
    keys: set[str | None] = set()  # of the written ones
    dropped: list[dict[str, str | None]] = []
    for alt in item.alternates:
        key = normalize_url(alt.href) if alt.href is not None else None
        action, code = verdicts.get(key, _UNLISTED)  # (no listed URL's key is None)
        if action == "kept":
            written.append(alt)
            keys.add(key)
        else:
            dropped.append({"hreflang": alt.hreflang, "href": alt.href, "code": code})
    if keys <= {item.key}:
        written = []  # a cluster of one is no cluster
    return tuple(written), dropped


def normalize_base(base_url: str) -> str:
    return base_url.removesuffix("/") + "/"


def plan(
    ev: Evidence,
    base_url: str,
    *,
    shard_size: int = DEFAULT_SHARD_SIZE,
    gzip: bool = False,
    now: datetime | None = None,
) -> Plan:
    """Every listed URL's action and the shards of the written set."""
    now = now if now is not None else datetime.now(UTC)
    base_url = normalize_base(base_url)
    # LocScope takes a sitemap URL and allows its directory: a file inside DIR's URL
    scope = LocScope(base_url + "sitemap_index.xml")
    # in code-point order of the listed URLs: the records' order does not hang on the
    # order the crawl's workers happened to finish in
    listed = sorted(ev.listed, key=lambda item: item.url)
    actions = [(item, *action_of(item, scope)) for item in listed]
    # each listed URL's verdict by its key, which its alternates name it by
    verdicts: dict[str | None, tuple[Action | None, str | None]] = {
        item.key: (action, code) for item, action, code in actions
    }

    entries: dict[str, Entry] = {}  # normalised written URL -> its entry
    records: list[FixRecord] = []
    for item, action, code in actions:
        rec = FixRecord(item.url, action, code)
        if action == "kept":
            rec.lastmod_code = lastmod_code(item, ev)
            usable = item.lastmod if rec.lastmod_code is None else ""
            lastmod, source = lastmod_of(item, ev, now, usable)
            alts, rec.alternates_dropped = _alternates(item, verdicts)
            entries[item.key] = rec.entry = Entry(item.url, lastmod, source, alts)
        records.append(rec)
    # a target reached by several redirects takes the evidence of the first redirecting
    # URL in code-point order of the listed URLs; a target kept as listed is that entry
    for item, rec in zip(listed, records, strict=True):
        if rec.action != "replaced":
            continue
        # (the first one's entry stands; lastmod_of is pure, so a later one's is dropped)
        here = Entry(item.final_url, *lastmod_of(item, ev, now))
        rec.entry = entries.setdefault(normalize_url(item.final_url), here)
        rec.target = rec.entry.loc
    suffix = ".gz" if gzip else ""
    shards = _shards(list(entries.values()), shard_size, suffix)
    return Plan(base_url, records, shards, len(entries), suffix)
