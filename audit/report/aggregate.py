"""Running totals over the record stream, shared by the writers that render at close.

An `Aggregate` keeps counters, the sitemap table and a bounded number of
example findings per code; it never keeps url records, so its size depends on
the number of sitemaps and codes, not on the number of URLs. `UrlJoiner` pairs
url records with their findings for the one-row-per-URL formats (csv, junit)
using a bounded window. What a run amounts to in words (the verdict, how far a partial
run got, what it left out) is audit.report.verdict, built on the counts here.

Pure bookkeeping over dicts: no I/O, and nothing from the crawl, HTTP or parser
layers may be imported here.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from audit.core.codes import CODES, search_console_name

SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
FAIL_ON_LEVELS: tuple[str, ...] = ("error", "warning", "info", "never")
_RANK: dict[str | None, int] = {"error": 3, "warning": 2, "info": 1}

STATUS_CLASSES: tuple[str, ...] = ("2xx", "3xx", "4xx", "5xx", "none")
_STATUS_CLASS = {2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx"}  # status // 100 -> its class
AGE_BUCKETS: tuple[str, ...] = (
    "future",
    "< 1 week",
    "< 1 month",
    "< 6 months",
    "< 1 year",
    "< 2 years",
    "older",
    "none",
)
# an age in days under each limit has the bucket beside it; from the last limit on, "older"
_AGE_DAYS = (7, 31, 183, 366, 731)
_AGE_LABELS = ("< 1 week", "< 1 month", "< 6 months", "< 1 year", "< 2 years", "older")
# Distinct lastmod days kept for the age histogram; beyond this (a hostile or
# absurd sitemap) further new days count as "none" so memory stays bounded.
_MAX_LASTMOD_DAYS = 200_000
_LASTMOD_RE = re.compile(r"\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def rank(severity: str | None) -> int:
    """3 for error, 2 for warning, 1 for info, 0 for anything else."""
    return _RANK.get(severity, 0)


def at_or_above(severity: str | None, fail_on: str) -> bool:
    """True when `severity` reaches the `--fail-on` threshold ("never" never does).

    The one --fail-on decision: every writer's verdict, junit's failures and the exit
    status come down to this function."""
    if fail_on == "never":
        return False
    # (every caller's severity is a known one: severity_of or SEVERITIES)
    return rank(severity) >= _RANK[fail_on]


def failing_severities(counts: Mapping[str, Any], fail_on: str) -> list[str]:
    """The severities, worst first, with a non-zero count in `counts` (severity -> count,
    as a summary's `findings`) that are at or above `fail_on`."""
    return [s for s in SEVERITIES if as_int(counts.get(s)) and at_or_above(s, fail_on)]


def worst_severity(summary: dict[str, Any]) -> str | None:
    """The highest severity with a non-zero count in a summary record, or None."""
    findings = as_dict(summary.get("findings"))
    return next((sev for sev in SEVERITIES if as_int(findings.get(sev))), None)


def fails(summary: dict[str, Any], fail_on: str) -> bool:
    """True when the summary has a finding at or above `fail_on` (exit status 1)."""
    return bool(failing_severities(as_dict(summary.get("findings")), fail_on))


def severity_of(record: dict[str, Any]) -> str:
    """Severity of a finding record: its own field, else the code table, else info."""
    sev = record.get("severity")
    if sev in SEVERITIES:  # (a tuple: any JSON value is compared, none hashed)
        return str(sev)
    code = record.get("code")
    if isinstance(code, str) and code in CODES:
        return CODES[code].severity.value
    return "info"


def code_summary(code: str) -> str:
    """What a code means, from codes.CODES; unknown codes explain nothing."""
    known = CODES.get(code)
    return known.summary if known else ""


def search_console(code: str) -> str:
    """The name Search Console gives a code's problem; '' where it has none."""
    return search_console_name(code) or ""


def search_console_label(code: str) -> str:
    """ "Search Console: NAME" for a code Search Console names; '' where it has none."""
    name = search_console_name(code)
    return f"Search Console: {name}" if name else ""


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int:
    """A count as an int: a number truncated (a bool is 0 or 1), anything else 0."""
    return int(value) if isinstance(value, int | float) else 0


def count_of(value: Any) -> int:
    """A count that must be an int (a float or a bool is none): else 0."""
    return value if type(value) is int else 0


def as_dict(value: Any) -> dict[Any, Any]:
    """A record's mapping, or {} for anything else (a saved report is untrusted input)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A record's list, or [] for anything else."""
    return value if isinstance(value, list) else []


def int_or_none(value: Any) -> int | None:
    """A number as an int (a bool is none: its type is not int), else None."""
    return int(value) if type(value) in (int, float) else None


def float_or_none(value: Any) -> float | None:
    """A number as a float (a bool is none), else None."""
    return float(value) if type(value) in (int, float) else None


def status_class(record: dict[str, Any]) -> str:
    """What the listed URL itself answered: 3xx when it redirected (its first redirect's
    status, 300 if unknown), else its status class."""
    first = as_list(record.get("redirects"))[:1]
    status: int | None
    if first and isinstance(first[0], dict):
        status = int_or_none(first[0].get("status")) or 300
    else:
        status = int_or_none(record.get("status"))
    return "none" if status is None else _STATUS_CLASS.get(status // 100, "none")


def lastmod_day(value: Any) -> date | None:
    """The calendar day of a W3C Datetime (YYYY and YYYY-MM mean their first day)."""
    if not isinstance(value, str):
        return None
    m = _LASTMOD_RE.match(value)
    if not m:
        return None
    try:
        return date(*map(int, m.groups("1")))
    except ValueError:
        return None


def age_bucket(day: date, today: date) -> str:
    days = (today - day).days
    if days < 0:
        return "future"
    return _AGE_LABELS[bisect_right(_AGE_DAYS, days)]


def where(sitemap: str | None, line: int | None) -> str:
    """`sitemap:line` as people read it; empty when nothing is known."""
    if sitemap is None:
        return ""
    return f"{sitemap}:{line}" if line is not None else sitemap


@dataclass(slots=True)
class SitemapStat:
    url: str
    order: int
    parent: str | None = None
    kind: str | None = None
    status: int | None = None
    entries: int | None = None
    bytes: int | None = None
    gzip: bool = False
    error: str | None = None
    has_record: bool = False
    urls: int = 0  # url records that name this sitemap
    findings: Counter[str] = field(default_factory=Counter)  # severity -> count


# The counts of a `rollup` record (contracts/nights.md 5), in the order the tables show
# them, with their column titles.
ROLLUP_KEYS: tuple[str, ...] = ("urls", "indexable", "with_lastmod", "errors", "warnings", "info")
ROLLUP_TITLES: tuple[str, ...] = (
    "URLs",
    "Indexable",
    "With lastmod",
    "Errors",
    "Warnings",
    "Info",
)
# Sitemap rows the text and markdown tables show at most (html shows every one).
ROLLUP_ROWS = 100


@dataclass(frozen=True, slots=True)
class SitemapRollup:
    """One `rollup` record: a sitemap and its six counts, in ROLLUP_KEYS order (and the
    record's counts as they came, which the json report repeats)."""

    url: str
    counts: tuple[int, ...]
    record_counts: dict[str, Any] = field(default_factory=dict, compare=False)

    def cells(self) -> list[str]:
        """The counts as the tables show them, thousands grouped."""
        return [f"{n:,}" for n in self.counts]


@dataclass(slots=True)
class Example:
    severity: str
    code: str
    url: str  # "" for a finding about no URL
    sitemap: str | None
    line: int | None
    message: str


# the examples an Aggregate keeps, by code (what the writers' sections receive)
Examples = Mapping[str, Iterable[Example]]


class Aggregate:
    """Counters over a record stream; `examples` bounds the findings kept per code."""

    def __init__(self, examples: int = 10, now: datetime | None = None) -> None:
        self.max_examples = max(0, examples)
        self.now = now or datetime.now(UTC)
        self.sitemaps: dict[str, SitemapStat] = {}
        self.urls = 0
        self.by_severity: Counter[str] = Counter()
        self.by_code: Counter[str] = Counter()
        self.code_severity: dict[str, str] = {}
        self.examples: dict[str, list[Example]] = {}
        self.status_classes: Counter[str] = Counter()
        self.lastmod_days: Counter[date] = Counter()
        self.lastmod_none = 0
        self.robots_blocked = 0
        self.hosts: list[dict[str, Any]] | None = None
        self.summary: dict[str, Any] | None = None
        self.rollups: list[SitemapRollup] = []  # one per `rollup` record, in order
        self.records = 0

    # --- feeding --------------------------------------------------------

    def add(self, record: dict[str, Any]) -> None:
        self.records += 1
        add = _ADD.get(str(record.get("type")))  # (str: any JSON value of a foreign record)
        if add is not None:
            add(self, record)

    def _add_summary(self, record: dict[str, Any]) -> None:
        self.summary = record

    def _add_hosts(self, record: dict[str, Any]) -> None:
        hosts = record.get("hosts")
        if isinstance(hosts, list):
            self.hosts = [h for h in hosts if isinstance(h, dict)]

    def _add_rollup(self, record: dict[str, Any]) -> None:
        url, counts = str_or_none(record.get("url")), record.get("counts")
        if url is not None and isinstance(counts, dict):
            self.rollups.append(
                SitemapRollup(url, tuple(as_int(counts.get(k)) for k in ROLLUP_KEYS), counts)
            )

    def sitemap(self, url: str) -> SitemapStat:
        stat = self.sitemaps.get(url)
        if stat is None:
            stat = self.sitemaps[url] = SitemapStat(url, len(self.sitemaps))
        return stat

    def _add_sitemap(self, record: dict[str, Any]) -> None:
        url = str_or_none(record.get("url"))
        if url is None:
            return
        stat = self.sitemap(url)
        stat.has_record = True
        stat.parent = str_or_none(record.get("parent"))
        stat.kind = str_or_none(record.get("kind"))
        stat.status = int_or_none(record.get("status"))
        stat.entries = int_or_none(record.get("entries"))
        stat.bytes = int_or_none(record.get("bytes"))
        stat.gzip = bool(record.get("gzip"))
        stat.error = str_or_none(record.get("error"))

    def _add_url(self, record: dict[str, Any]) -> None:
        self.urls += 1
        sitemap = str_or_none(record.get("sitemap"))
        if sitemap is not None:
            self.sitemap(sitemap).urls += 1
        self.status_classes[status_class(record)] += 1
        if record.get("robots") == "blocked":
            self.robots_blocked += 1
        # its lastmod day (as none past the bound of distinct days)
        day = lastmod_day(record.get("lastmod"))
        if day is None or (
            day not in self.lastmod_days and len(self.lastmod_days) >= _MAX_LASTMOD_DAYS
        ):
            self.lastmod_none += 1
        else:
            self.lastmod_days[day] += 1

    def _add_finding(self, record: dict[str, Any]) -> None:
        sev = severity_of(record)
        code = str(record.get("code") or "unknown")
        self.by_severity[sev] += 1
        self.by_code[code] += 1
        self.code_severity.setdefault(code, sev)
        sitemap = str_or_none(record.get("sitemap"))
        if sitemap is not None:
            self.sitemap(sitemap).findings[sev] += 1
        kept = self.examples.setdefault(code, [])
        if len(kept) < self.max_examples:
            kept.append(
                Example(
                    sev,
                    code,
                    str_or_none(record.get("url")) or "",
                    sitemap,
                    int_or_none(record.get("line")),
                    str(record.get("message") or ""),
                )
            )

    # --- reading --------------------------------------------------------

    @property
    def complete(self) -> bool:
        """False when the stream ended without a summary (an interrupted run)."""
        return self.summary is not None

    def summary_dict(self) -> dict[str, Any]:
        """The summary record, or one computed from what was seen (marked partial)."""
        if self.summary is not None:
            return self._checked_summary(self.summary)
        return {
            "type": "summary",
            "sitemaps": sum(s.has_record for s in self.sitemaps.values()),
            "urls": self.urls,
            "findings": {s: self.by_severity[s] for s in SEVERITIES},
            "by_code": dict(sorted(self.by_code.items(), key=lambda kv: (-kv[1], kv[0]))),
            "duration_s": None,
            "partial": True,
        }

    def _checked_summary(self, summary: dict[str, Any]) -> dict[str, Any]:
        """The summary record with its counts made ints (by_code from the findings seen
        when the record has none)."""
        out = dict(summary)
        found = as_dict(out.get("findings"))
        out["findings"] = {s: as_int(found.get(s)) for s in SEVERITIES}
        by_code = out.get("by_code")
        if not isinstance(by_code, dict):
            by_code = dict(self.by_code)
        out["by_code"] = {str(k): as_int(v) for k, v in by_code.items()}
        out["sitemaps"] = as_int(out.get("sitemaps"))
        out["urls"] = as_int(out.get("urls"))
        return out

    def severity_for_code(self, code: str) -> str:
        """The severity its findings came with, else the code table's (as severity_of)."""
        return self.code_severity.get(code) or severity_of({"code": code})

    def codes_sorted(self) -> list[tuple[str, str, int]]:
        """(code, severity, count), worst severity first, then most frequent."""
        by_code = self.summary_dict()["by_code"]
        rows = [(c, self.severity_for_code(c), n) for c, n in by_code.items() if n]
        rows.sort(key=lambda r: (-rank(r[1]), -r[2], r[0]))
        return rows

    def reference_time(self) -> datetime:
        """When the audit ran: the summary's `finished`/`started` stamp if any, else now."""
        summary = as_dict(self.summary)  # (None before a summary came)
        for key in ("finished", "finished_at", "started", "started_at"):
            try:  # ISO 8601 ('Z' too, since 3.11), UTC when it names no zone
                stamp = datetime.fromisoformat(summary.get(key, ""))
            except (TypeError, ValueError):  # not a string, or not a stamp (absent: "")
                continue
            return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
        return self.now

    def lastmod_histogram(self) -> list[tuple[str, int]]:
        today = self.reference_time().astimezone(UTC).date()
        counts: Counter[str] = Counter()
        for day, n in self.lastmod_days.items():
            counts[age_bucket(day, today)] += n
        counts["none"] += self.lastmod_none
        return [(b, counts[b]) for b in AGE_BUCKETS if b != "future" or counts[b]]


# what a record of each type adds to an Aggregate (one of another type is only counted)
_ADD: dict[str, Callable[[Aggregate, dict[str, Any]], None]] = {
    "url": Aggregate._add_url,
    "finding": Aggregate._add_finding,
    "sitemap": Aggregate._add_sitemap,
    "summary": Aggregate._add_summary,
    "hosts": Aggregate._add_hosts,
    "rollup": Aggregate._add_rollup,
}

# --- the per-host table ---------------------------------------------------

_HOST_TITLES = {
    "group": "Group",  # the politeness group (--politeness-key): the host itself by default
    "requests": "Requests",
    "rate": "Rate/s",
    "retries": "Retries",
    "http_429": "429 answers",
    "rate_limited": "Rate limited",
    "server_errors": "5xx answers",
    "backoff_s": "Backoff (s)",
    "crawl_delay": "Crawl-delay",
}
_HOST_ORDER = {k: i for i, k in enumerate(_HOST_TITLES)}
# how a host statistic of each type is shown; any other type as str()
_HOST_SHOWN: dict[type, Callable[[Any], str]] = {
    bool: ("no", "yes").__getitem__,
    int: "{:,}".format,
    float: "{:,.1f}".format,
}


def host_columns(hosts: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(key, title) of the columns of a `hosts` record's table.

    The known statistics first, in a fixed order, then any other scalar field
    the HTTP layer adds, so a new counter shows up without a writer change.
    """
    # the scalar fields of the hosts' statistics (not their names), in the order first seen
    keys = dict.fromkeys(
        k
        for host in hosts
        for k, v in host.items()
        if k != "host" and not isinstance(v, list | dict)
    )
    # the known ones in their order, then the others (a stable sort keeps theirs)
    ordered = sorted(keys, key=lambda k: _HOST_ORDER.get(k, len(_HOST_ORDER)))
    return [(k, _HOST_TITLES.get(k, k.replace("_", " ").capitalize())) for k in ordered]


def host_value(value: Any) -> str:
    """A host statistic as shown in tables: numbers grouped, floats to 0.1, none as '-'."""
    if value in (None, ""):
        return "-"
    return _HOST_SHOWN.get(type(value), str)(value)


# --- joining url records with their findings ------------------------------

JoinEmit = Callable[[dict[str, Any] | None, str, list[dict[str, Any]]], None]

# How many url records wait for late findings, and how many URLs with findings
# but no url record yet may wait for theirs. Both bound memory.
JOIN_WINDOW = 256
JOIN_PENDING = 20_000


class UrlJoiner:
    """Pairs each url record with the findings about the same URL, in bounded memory.

    What it relies on about record order (true of audit/pipeline/auditor.py): a URL's
    HTTP findings come right after its url record, and its entry findings
    (validator) come before it. A url record waits while the next `window`
    url records arrive; findings for a URL with no url record yet wait (up to
    `pending` URLs, oldest given up first) for the next url record of that URL.
    Findings that find no url record (validate mode, URLs never fetched,
    hreflang reciprocity computed at the end of the run) are emitted with
    record None, once per URL, when given up or at close.
    """

    def __init__(self, emit: JoinEmit, window: int = JOIN_WINDOW, pending: int = JOIN_PENDING):
        self._emit = emit
        self._window_size = max(1, window)
        self._pending_size = max(1, pending)
        self._window: OrderedDict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = OrderedDict()
        self._pending: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def url(self, record: dict[str, Any]) -> None:
        url = str(record.get("url") or "")
        if url in self._window:  # the same URL again: the earlier one is done
            rec, found = self._window.pop(url)
            self._emit(rec, url, found)
        self._window[url] = (record, self._pending.pop(url, []))
        if len(self._window) > self._window_size:
            old_url, (rec, found) = self._window.popitem(last=False)
            self._emit(rec, old_url, found)

    def finding(self, url: str, record: dict[str, Any]) -> None:
        """A finding about `url` (its record's, as the caller read it)."""
        held = self._window.get(url)
        if held is not None:
            held[1].append(record)
            return
        waiting = self._pending.setdefault(url, [])
        # only a URL new to the pending ones makes them more than the bound, which every
        # one added before kept: the oldest (never the one just added) is given up
        if len(self._pending) > self._pending_size:
            old_url, found = self._pending.popitem(last=False)
            self._emit(None, old_url, found)
        waiting.append(record)

    def attach(self, url: str, record: dict[str, Any]) -> None:
        """A finding that joins the url record of `url` only if that record is held (a
        links-only page's page-not-in-sitemap, which names no sitemap); else dropped."""
        held = self._window.get(url)
        if held is not None:
            held[1].append(record)

    def close(self) -> None:
        while self._window:
            url, (rec, found) = self._window.popitem(last=False)
            self._emit(rec, url, found)
        while self._pending:
            url, found = self._pending.popitem(last=False)
            self._emit(None, url, found)


def counted(n: int, word: str) -> str:
    """`1 URL`, `3 URLs`, `2 info`: a count and its word, thousands grouped."""
    return f"{n:,} info" if word == "info" else f"{n:,} {word}{'' if n == 1 else 's'}"


def percent(share: float | None) -> str:
    """A share in percent to one decimal (`33.3%`), or `—` where there is none."""
    return "—" if share is None else f"{share:.1f}%"


def unread_children_note(summary: Mapping[str, Any]) -> str | None:
    """Which children of a sitemap index on disk were not read, and why, in one sentence."""
    count = as_int(summary.get("children_not_fetched"))
    if not count:
        return None
    urls = list(map(str, as_list(summary.get("children_not_read"))))
    more = count - len(urls)
    which = ", ".join(urls) + (f" and {more:,} more" if more > 0 else "")
    return (
        f"not read: {counted(count, 'sitemap')} the index on disk lists"
        + (f" ({which})" if which else "")
        + ": a file on disk is read from disk only; give --base-url with the index's public "
        "URL to read them from the files beside it, or --online to fetch them"
    )
