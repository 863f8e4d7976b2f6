"""The evidence `fix` works from: the listed URLs' records and the findings on them.

Reads a `crawl --format jsonl` report or a `--state` file (recognised by its first 16
bytes) and keeps, for each distinct listed URL (`loc-duplicate` normalisation), what its
url record says and which finding codes are on it, plus the run-wide facts the
`<lastmod>` rules need: the origins with a deploy-stamped Last-Modified and the sitemaps
with uniform lastmods.

A run that did not check every URL its sitemaps list is refused (`FixRefused`): fixing
from it would drop what it never reached. Nothing here writes anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.core.errors import AuditError
from audit.report import ReportInputError, read_jsonl
from audit.report.aggregate import as_list, count_of, float_or_none, str_or_none
from audit.rules.urls import normalize_url, origin
from audit.state.schema import SQLITE_MAGIC, is_state_file

__all__ = ["SQLITE_MAGIC", "Evidence", "FixRefused", "Listed", "read_evidence"]


# summary flags that mean some listed URLs were never checked
_CUT_FLAGS = ("interrupted", "partial", "max_urls_reached")
_CUT_COUNTS = ("excluded_urls", "excluded_sitemaps")


class FixRefused(AuditError):
    """SOURCE cannot be fixed from (unreadable, not a report, a partial run, several
    origins without --base-url): one line naming the file and why. Exit 2."""


@dataclass(frozen=True, slots=True)
class Alt:
    hreflang: str | None
    href: str | None


@dataclass(slots=True)
class Listed:
    """One distinct listed URL: its url record's facts and the codes on it."""

    url: str  # as listed (the first listing's url record)
    key: str  # normalize_url(url)
    sitemap: str | None
    status: int | None
    final_url: str  # "" without an answer
    redirected: bool
    robots: str
    lastmod: str  # stripped; "" when not listed
    last_modified: str | None
    content_changed: str | None
    alternates: tuple[Alt, ...]
    codes: tuple[str, ...] = ()  # codes of the findings on it, in order


@dataclass(slots=True)
class Evidence:
    source: str
    listed: list[Listed]  # in the order of the url records
    by_key: dict[str, Listed]
    deploy_origins: set[tuple[str, str, int]]  # origins with a last-modified-deploy finding
    uniform_sitemaps: set[str]  # sitemaps with a lastmod-uniform finding


def _alternates(value: Any) -> tuple[Alt, ...]:
    return tuple(
        Alt(str_or_none(item.get("hreflang")), str_or_none(item.get("href")))
        for item in as_list(value)
        if isinstance(item, dict)
    )


def _listed(rec: dict[str, Any], key: str, shared: dict[str, str]) -> Listed:
    """The facts `fix` needs of a url record. A million of them are held at once: equal
    strings (sitemaps, dates, a final URL or key equal to the URL) are kept once."""
    url: str = rec["url"]
    status = rec.get("status")
    final_url = str_or_none(rec.get("final_url")) or ""
    sitemap = str_or_none(rec.get("sitemap"))
    lastmod = (str_or_none(rec.get("lastmod")) or "").strip()
    robots = str_or_none(rec.get("robots")) or "allowed"
    return Listed(
        url=url,
        key=url if key == url else key,
        sitemap=None if sitemap is None else shared.setdefault(sitemap, sitemap),
        status=status if type(status) is int else None,  # not a bool
        final_url=url if final_url == url else final_url,
        redirected=bool(rec.get("redirects")),
        robots=shared.setdefault(robots, robots),
        lastmod=shared.setdefault(lastmod, lastmod),
        last_modified=str_or_none(rec.get("last_modified")),
        content_changed=str_or_none(rec.get("content_changed")),
        alternates=_alternates(rec.get("alternates")),
    )


def _cut_reason(summary: dict[str, Any] | None) -> str | None:
    """Why a report with this summary did not check every listed URL, or None."""
    if summary is None:
        return "the report has no summary record (the run never finished)"
    for flag in _CUT_FLAGS:
        if summary.get(flag) is True:
            return f'its summary says "{flag}": true'
    for count in _CUT_COUNTS:
        n = summary.get(count)
        if (float_or_none(n) or 0) > 0:  # a number (not a bool) above 0
            return f'its summary says "{count}": {n}'
    return None


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of SOURCE; raises FixRefused for a cut run or an unreadable file."""
    from audit.state.store import StateError, read_records, read_status

    state = is_state_file(path, FixRefused)
    summary: dict[str, Any] | None = None  # a report always holds one
    seen_any = state  # a state file is never empty: it has a status
    try:
        if state:
            status = read_status(path)
            if status != "complete":
                raise FixRefused(
                    f"{path}: its last run did not complete (status {status}): fix needs a "
                    "run that checked every listed URL"
                )
            records = read_records(path)
            summary = {}  # a state holds a summary only of what cut its run
        else:
            records = read_jsonl(path)
        for rec in records:
            seen_any = True
            if rec.get("type") == "summary":
                summary = rec
            yield rec
    except StateError as exc:
        raise FixRefused(str(exc)) from exc
    except ReportInputError as exc:
        raise FixRefused(f"{exc}: not a jsonl report or a state file") from exc
    if not seen_any:
        raise FixRefused(f"{path}: empty: not a jsonl report or a state file")
    why = _cut_reason(summary)
    if why is not None:
        raise FixRefused(f"{path}: {why}: fix needs a complete run that checked every listed URL")


class _Gathered:
    """What the records of a source say, gathered as they are read."""

    def __init__(self) -> None:
        self.by_key: dict[str, Listed] = {}  # in the order of the url records
        self.codes_by_key: dict[str, list[str]] = {}
        self.shared: dict[str, str] = {}  # equal strings kept once (see _listed)
        self.deploy: set[tuple[str, str, int]] = set()
        self.uniform: set[str] = set()
        self.summary: dict[str, Any] = {}
        self.saw_url_or_summary = False

    def add(self, rec: dict[str, Any]) -> None:
        kind, url = rec.get("type"), rec.get("url")
        if kind == "url":
            self.saw_url_or_summary = True
            # a URL found only by --links (no sitemap) is never added
            if isinstance(url, str) and rec.get("sitemap") is not None:
                key = normalize_url(url)  # the first listing's record stands for the URL
                self.by_key.setdefault(key, _listed(rec, key, self.shared))
        elif kind == "finding":
            self.finding(rec.get("code"), url, rec.get("sitemap"))
        elif kind == "summary":
            self.saw_url_or_summary = True
            self.summary = rec

    def finding(self, code: Any, url: Any, sitemap: Any) -> None:
        """The codes on each URL, and the run-wide facts the <lastmod> rules need."""
        if not isinstance(code, str):
            return
        if isinstance(url, str):
            self.codes_by_key.setdefault(normalize_url(url), []).append(code)
            if code == "last-modified-deploy" and (o := origin(url)) is not None:
                self.deploy.add(o)
        if code == "lastmod-uniform" and isinstance(sitemap, str):
            self.uniform.add(sitemap)

    def evidence(self, source: str | Path) -> Evidence:
        """The evidence gathered; FixRefused for the report of no crawl."""
        # (every listed URL came from a url record)
        if not self.saw_url_or_summary:
            raise FixRefused(f"{source}: holds no url records: not the report of a crawl")
        listed = list(self.by_key.values())
        entries = count_of(self.summary.get("entries"))  # the summary's listed entries
        if not listed and entries > 0 and not self.summary.get("urls"):
            raise FixRefused(
                f"{source}: its sitemaps list {entries:,} entries but no URL was checked (a "
                "`validate` report?): fix needs the report of a complete crawl"
            )
        for item in listed:
            item.codes = tuple(self.codes_by_key.get(item.key, item.codes))
        return Evidence(str(source), listed, self.by_key, self.deploy, self.uniform)


def read_evidence(source: str | Path) -> Evidence:
    """The evidence of SOURCE (a jsonl report or a state file); FixRefused when it cannot
    be used. The whole source is read before anything is decided."""
    path = Path(source)
    if not path.is_file():
        raise FixRefused(f"{source}: no such report or state file")
    gathered = _Gathered()
    for rec in _records(path):
        gathered.add(rec)
    return gathered.evidence(source)
