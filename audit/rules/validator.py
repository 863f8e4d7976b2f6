"""Protocol validator: entries in, findings out (RULES.md 'Entries' and counts).

Pure and synchronous: imports nothing of HTTP or asyncio, and nothing of the
parser (it reads plain `Entry` records and plain counts).

    seen = SeenUrls()                               # one per run: loc-duplicate across sitemaps
    hreflang = HreflangGraph()                      # one per run: reciprocity across sitemaps
    v = SitemapValidator(source, sitemap_url=url_or_None, now=datetime_utc,
                         seen=seen, hreflang=hreflang,
                         cross_submitted=lambda loc: False, kind=parser.kind)
    v.check(entry) -> list[Finding]                 # per entry, as it streams past
    v.finish(kind, entries, uncompressed_bytes) -> list[Finding]   # per sitemap
    hreflang.finish() -> list[Finding]              # end of run: hreflang-not-reciprocal

Memory: run-wide state holds 64-bit fingerprints of normalised URLs, never the
URL strings (SeenUrls: about 8.3 MiB for 1,000,000 URLs). Per-sitemap state is
a handful of counters and a per-day lastmod counter.

Chosen thresholds: lastmod-future allows 1 minute of clock skew for a value
with a time, 14 hours for a date (a UTC+14 site's "today"); lastmod-uniform
fires at >= 20 lastmods with >= 90% on one UTC day, or >= 5 timed lastmods all
within 10 minutes before the audit (stamped with the serving time); news-stale
when the whole publication_date span ends more than 2 days before the audit.

The URL fingerprint table (`SeenUrls`, `fingerprint`) lives in audit.rules.fingerprints
and the sitemap-only hreflang graph (`HreflangGraph`) in audit.rules.hreflang; both stay
importable from here.

Video and news extension values come as `fields` dicts of local name -> text;
attributes, where the parser records them, as "element@attribute"
(`restriction@relationship`, `platform@relationship`, `player_loc@allow_embed`,
`price@currency`, `price@type`, `price@resolution`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from audit.core.records import Alternate, Entry, Finding, Image, News, Video, finding
from audit.rules.dates import (
    Precision,
    W3CDate,
    parse_rss_date,
    parse_w3c_datetime,
    parse_w3c_start,
)
from audit.rules.fingerprints import SeenUrls, fingerprint
from audit.rules.hreflang import HreflangGraph
from audit.rules.indexlastmod import SERVED_NOW_WINDOW_S, lastmod_now
from audit.rules.langtags import check_hreflang, check_news_language
from audit.rules.urls import (
    LocScope,
    check_loc,
    is_absolute_http,
    is_plain_url,
    normalize_url,
    origin,
)

__all__ = [
    "FUTURE_TOLERANCE",
    "FUTURE_TOLERANCE_DATE",
    "MAX_ENTRIES",
    "MAX_IMAGES",
    "MAX_NEWS",
    "MAX_UNCOMPRESSED_BYTES",
    "NEWS_MAX_AGE",
    "HreflangGraph",
    "SeenUrls",
    "SitemapValidator",
    "fingerprint",
]

MAX_ENTRIES = 50_000  # sitemaps.org: 50,000 URLs per sitemap (and sitemaps per index)
MAX_UNCOMPRESSED_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed
NEAR_LIMIT = 0.9  # RULES.md sitemap-near-limit: over 90% of either limit
MAX_IMAGES = 1000  # Google image sitemaps: up to 1,000 images per page
MAX_NEWS = 1000  # Google news sitemaps: up to 1,000 news:news URLs per sitemap
NEWS_MAX_AGE = timedelta(days=2)  # Google News: articles from the last two days
UNIFORM_MIN = 20  # lastmod-uniform: at least 20 entries with a lastmod ...
UNIFORM_SHARE = 0.9  # ... of which 90% share one UTC day
SERVED_NOW_MIN = 5  # lastmod-uniform: every one of at least 5 lastmods is "now" ...
SERVED_NOW_WINDOW = timedelta(minutes=10)  # ... within this window before the audit
# lastmod-future: a time-of-day value may run ahead of our clock by clock skew only;
# a date (or year/month) is written in the site's local time, which can be up to
# UTC+14, so that day may start up to 14 hours before midnight UTC.
FUTURE_TOLERANCE = timedelta(minutes=1)
FUTURE_TOLERANCE_DATE = timedelta(hours=14)
VIDEO_MAX_DESCRIPTION = 2048  # video.xsd maxLength
VIDEO_MAX_TITLE = 100  # video.xsd maxLength
VIDEO_MAX_CATEGORY = 256  # video.xsd maxLength
VIDEO_MAX_DURATION = 28_800  # video.xsd and Google: 1 to 28,800 seconds (8 hours)

CHANGEFREQS = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
DEPRECATED_IMAGE_TAGS = ("caption", "title", "geo_location", "license")

_XML_SPACE = " \t\r\n"
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)", re.ASCII)  # xsd:decimal lexical form
_NON_NEG_INT = re.compile(r"\+?\d+", re.ASCII)  # xsd:nonNegativeInteger lexical form
_YES_NO = frozenset({"yes", "Yes", "YES", "no", "No", "NO"})  # video.xsd tYesNo
_COUNTRY_LIST = re.compile(r"(?:[A-Z]{2}(?: +[A-Z]{2})*)?", re.ASCII)  # video.xsd tCountryList
_PLATFORM_LIST = re.compile(r"(?:(?:web|mobile|tv)(?: (?:web|mobile|tv))*)?")  # tPlatformList
_CURRENCY = re.compile(r"[A-Z]{3}", re.ASCII)
_RELATIONSHIPS = frozenset({"allow", "deny"})
_PRICE_TYPES = frozenset({"purchase", "PURCHASE", "rent", "RENT"})
_RESOLUTIONS = frozenset({"sd", "SD", "hd", "HD"})
_ZERO, _ONE, _FIVE = Decimal(0), Decimal(1), Decimal(5)
_CACHE_SIZE = 4096  # parsed priority values kept per sitemap (lastmod: the previous one)
# What check() returns for a clean entry: shared, so never mutated (tests guard it).
_NO_FINDINGS: list[Finding] = []


def _writable(out: list[Finding]) -> list[Finding]:
    """`out`, or a new list instead of the shared empty one, before a finding is added."""
    return [] if out is _NO_FINDINGS else out


# A parsed lastmod: start as whole seconds since 0001-01-01T00:00:00Z (proleptic
# Gregorian, so start // 86400 is the UTC day's ordinal), precision, xsd_valid.
_Lastmod = tuple[int, Precision, bool]
_DAY_S = 86_400
# The two forms nearly every sitemap uses, decided without building datetimes.
_LM_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_LM_FULL = re.compile(
    r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})", re.ASCII
)
# Tables of valid pieces: a key's presence vouches for its syntax (check() relies on it).
_DAY_ORDINALS: dict[str, int] = {}  # valid "YYYY-MM-DD" -> ordinal (sites reuse few days)
_TZ_SECONDS: dict[str, int] = {"Z": 0}  # valid TZD -> seconds east of UTC
_HOUR_MINUTE = {f"{h:02d}:{m:02d}": h * 3600 + m * 60 for h in range(24) for m in range(60)}
_T_HOUR_MINUTE = {"T" + hm: seconds for hm, seconds in _HOUR_MINUTE.items()}  # "Thh:mm"
_COLON_SECONDS = frozenset(f":{s:02d}" for s in range(60))  # ":ss", 00 to 59


def _day_ordinal(text: str) -> int | None:
    ordinal = _DAY_ORDINALS.get(text)
    if ordinal is None:
        try:
            ordinal = date(int(text[:4]), int(text[5:7]), int(text[8:10])).toordinal()
        except ValueError:
            return None  # the slow path explains what is wrong
        if len(_DAY_ORDINALS) >= 65_536:
            _DAY_ORDINALS.clear()
        _DAY_ORDINALS[text] = ordinal
    return ordinal


def _tz_seconds(tzd: str) -> int | None:
    seconds = _TZ_SECONDS.get(tzd)
    if seconds is None:
        oh, om = int(tzd[1:3]), int(tzd[4:6])
        if om > 59 or oh > 14 or (oh == 14 and om):
            return None
        seconds = (oh * 3600 + om * 60) * (-1 if tzd[0] == "-" else 1)
        if len(_TZ_SECONDS) < 1024:
            _TZ_SECONDS[tzd] = seconds
    return seconds


def _lastmod_fast(value: str) -> _Lastmod | None:
    """YYYY-MM-DD and YYYY-MM-DDThh:mm:ss[.s]TZD when valid; None means "ask the full parser"."""
    if len(value) == 10:
        return _fast_date(value)
    return _fast_timestamp(value)


def _fast_date(value: str) -> _Lastmod | None:
    """A valid YYYY-MM-DD, else None."""
    if _LM_DATE.fullmatch(value) is None:
        return None
    ordinal = _DAY_ORDINALS.get(value) or _day_ordinal(value)
    return None if ordinal is None else (ordinal * _DAY_S, "day", True)


def _fast_timestamp(value: str) -> _Lastmod | None:
    """A valid YYYY-MM-DDThh:mm:ss[.s]TZD, else None."""
    m = _LM_FULL.fullmatch(value)
    if m is None:
        return None
    day, hour_minute, second, tzd = m.groups()
    ordinal = _DAY_ORDINALS.get(day) or _day_ordinal(day)
    seconds = _HOUR_MINUTE.get(hour_minute)
    tz = _TZ_SECONDS.get(tzd)
    if tz is None:
        tz = _tz_seconds(tzd)
    if ordinal is None or seconds is None or tz is None or second > "59":
        return None
    return ordinal * _DAY_S + seconds + int(second) - tz, "second", True


def _utc(now: datetime | None) -> datetime:
    """`now` in UTC (a naive one taken as UTC); None: the current time."""
    if now is None:
        now = datetime.now(UTC)
    elif now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC)


def _share_seen(hreflang: HreflangGraph | None, seen: SeenUrls | None) -> None:
    """Give the hreflang graph the run's URL table when it has none of its own."""
    if hreflang is not None and hreflang.seen is None and seen is not None:
        hreflang.seen = seen


def _seconds(dt: datetime) -> int:
    """An aware UTC datetime as whole seconds since 0001-01-01T00:00:00Z."""
    return dt.toordinal() * _DAY_S + dt.hour * 3600 + dt.minute * 60 + dt.second


def _imprecision(timed: bool, precision: Precision) -> tuple[str, str]:
    """(why, fix) for a lastmod the XSD rejects as too imprecise."""
    if timed:
        return "has a time without seconds", "add seconds (hh:mm:ss)"
    return f"gives only a {precision}", "give the full date (YYYY-MM-DD)"


def _show(value: str, limit: int = 100) -> str:
    """A value for a message: repr-quoted so whitespace shows, truncated."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return repr(value)


# --- per-sitemap validation -------------------------------------------------


class SitemapValidator:
    """Checks the entries of one sitemap as they stream past, then its totals.

    `source` names the sitemap in findings; `sitemap_url` (None for a local file
    without a public URL) enables loc-cross-host and loc-outside-path;
    `cross_submitted(loc)` True lets a URL on another host pass (its robots.txt
    lists this sitemap). `seen` is the run's duplicate table for `<url>`
    entries; `seen_sitemaps` the one for an index's `<sitemap>` entries
    (default: a table of this sitemap's own).
    """

    __slots__ = (
        "_days",
        "_future_date",
        "_future_time",
        "_index_now",
        "_lastmods",
        "_lm_text",
        "_lm_value",
        "_news",
        "_news_locs",
        "_news_oldest",
        "_no_lastmod",
        "_non_urls",
        "_old_day",
        "_plain_loc",
        "_pr_cache",
        "_prio_count",
        "_prio_first",
        "_prio_same",
        "_prio_text",
        "_scope",
        "_served_from",
        "_served_now",
        "_src_sm",
        "_src_url",
        "checked",
        "cross_submitted",
        "hreflang",
        "kind",
        "now",
        "seen",
        "seen_sitemaps",
        "served_at",
        "sitemap_url",
        "source",
        "tolerance_s",
    )

    def __init__(
        self,
        source: str,
        *,
        sitemap_url: str | None = None,
        now: datetime | None = None,
        seen: SeenUrls | None = None,
        hreflang: HreflangGraph | None = None,
        cross_submitted: Callable[[str], bool] | None = None,
        kind: str | None = None,
        seen_sitemaps: SeenUrls | None = None,
        served_at: datetime | None = None,
        tolerance_s: float = 0.0,
    ) -> None:
        self.source = source
        # when the sitemap's answer arrived (None: a local file), for index-lastmod-now;
        # --lastmod-tolerance widens its window
        self.served_at = served_at
        self.tolerance_s = tolerance_s
        self.sitemap_url = sitemap_url
        self.now = _utc(now)
        self.seen = seen
        self.seen_sitemaps = seen_sitemaps if seen_sitemaps is not None else SeenUrls()
        self.hreflang = hreflang
        _share_seen(hreflang, seen)
        self.cross_submitted = cross_submitted
        self.kind = kind
        self._scope = LocScope(sitemap_url) if sitemap_url else None
        # The <loc> fast path: a plain URL (in scope, with a sitemap URL) is valid and
        # already normalised.
        self._plain_loc = self._scope.is_plain if self._scope is not None else is_plain_url
        self._src_url = seen.source_id(source) if seen is not None else 0
        self._src_sm = self.seen_sitemaps.source_id(source)
        self._set_thresholds()
        # counters for finish()
        self.checked = 0
        self._non_urls = 0  # entries that are not <url> (an index's <sitemap>)
        self._index_now = 0  # <sitemap> entries whose <lastmod> is the time of serving
        self._no_lastmod = 0
        self._lastmods = 0
        self._days: dict[int, int] = {}
        self._served_now = 0
        self._prio_count = 0
        self._prio_first: Decimal | None = None
        self._prio_text = ""
        self._prio_same = True
        self._news = 0
        self._news_locs: set[str] = set()  # normalised news listings of this sitemap
        # small caches: sitemaps repeat lastmod and priority values verbatim
        self._lm_text = ""  # the previous lastmod: runs of equal values are common
        self._lm_value: _Lastmod | str = "empty"
        self._pr_cache: dict[str, Decimal | str] = {}

    def _set_thresholds(self) -> None:
        """The time limits of the lastmod and news rules, from `now`."""
        now_s = _seconds(self.now)
        self._future_time = now_s + int(FUTURE_TOLERANCE.total_seconds())
        self._future_date = now_s + int(FUTURE_TOLERANCE_DATE.total_seconds())
        self._served_from = now_s - int(SERVED_NOW_WINDOW.total_seconds())
        # A lastmod on a day before this one is in the past and outside the "served now"
        # window whatever its time and zone (zones reach 14 hours): check() counts it inline.
        self._old_day = self._served_from // _DAY_S - 2
        self._news_oldest = self.now - NEWS_MAX_AGE

    # -- per entry ----------------------------------------------------------

    def check(self, entry: Entry) -> list[Finding]:
        """Findings for one entry (empty for a clean one; never mutate the list returned).

        The per-entry path of the audit: the common case of each field (a plain <loc>, a
        past lastmod, a known priority) is decided by one call at most, and a clean entry
        gets the shared empty list (no allocation). Every step that reports swaps the
        shared list for one of its own first (_writable).
        """
        self.checked += 1
        is_url = entry.kind == "url"
        if not is_url:
            self._count_index_entry(entry.lastmod)
        out = _NO_FINDINGS
        raw = entry.loc
        if raw is not None and self._plain_loc(raw):
            loc: str | None = raw
            norm: str | None = raw
        else:
            out = []
            loc, norm = self._check_loc_slow(entry, out)
        if norm is not None:
            seen = self.seen
            if is_url and seen is not None and entry.news is None:  # _check_duplicate's usual
                first = seen.add_normalized(norm, self._src_url)
                if first >= 0:
                    out = _writable(out)
                    self._report_duplicate(entry, seen, first, loc or norm, norm, out)
            else:
                out = self._check_duplicate(entry, is_url, loc, norm, out)
        lastmod = entry.lastmod
        if lastmod is None:
            self._no_lastmod += 1
        else:
            out = self._count_lastmod(lastmod, entry.line, loc, out)
        changefreq = entry.changefreq
        if changefreq is not None and changefreq not in CHANGEFREQS:
            out = _writable(out)
            self._check_changefreq(changefreq, entry.line, loc, out)
        if entry.priority is not None:
            out = self._count_priority(entry.priority, entry.line, loc, is_url, out)
        if (
            entry.images is not None
            or entry.videos is not None
            or entry.news is not None
            or entry.alternates is not None
        ):
            out = _writable(out)
            self._check_extensions(entry, loc, norm, out)
        return out if out else _NO_FINDINGS

    def _check_duplicate(
        self, entry: Entry, is_url: bool, loc: str | None, norm: str, out: list[Finding]
    ) -> list[Finding]:
        """loc-duplicate: a <url> against the run's table, a <sitemap> against the index's."""
        if entry.news is not None:
            return self._check_news_duplicate(entry, loc, norm, out)
        table = self.seen if is_url else self.seen_sitemaps
        if table is None:
            return out
        first = table.add_normalized(norm, self._src_url if is_url else self._src_sm)
        if first < 0:
            return out
        out = _writable(out)
        self._report_duplicate(entry, table, first, loc or norm, norm, out)
        return out

    def _check_news_duplicate(
        self, entry: Entry, loc: str | None, norm: str, out: list[Finding]
    ) -> list[Finding]:
        """A news listing (a <url> with <news:news>) is never a duplicate of a listing in
        another sitemap, and never makes one (RULES.md loc-duplicate: Google News asks for
        a separate news sitemap whose articles may also stand in the regular ones). Listed
        twice in the same news sitemap, it is one."""
        if norm not in self._news_locs:
            self._news_locs.add(norm)  # at most 1,000 news URLs per sitemap
            return out
        out = _writable(out)
        self._add_duplicate(entry, "earlier in this sitemap", loc or norm, norm, out)
        return out

    def _count_lastmod(
        self, lastmod: str, line: int, loc: str | None, out: list[Finding]
    ) -> list[Finding]:
        """Count a <lastmod>; the full checks only when it is not the common case.

        The common case: a valid date, or date and time (whole seconds) with a zone, on a
        day well before the audit (so neither "future" nor "served now" can apply); only
        its UTC day is counted. Decided by length, slices and lookups in tables of valid
        parts (no regex).
        """
        n = len(lastmod)
        day = None
        if n == 20 or n == 25:  # YYYY-MM-DDThh:mm:ssZ, YYYY-MM-DDThh:mm:ss+hh:mm
            ordinal = _DAY_ORDINALS.get(lastmod[:10])
            if ordinal is not None and ordinal < self._old_day:
                seconds = _T_HOUR_MINUTE.get(lastmod[10:16])
                tz = _TZ_SECONDS.get(lastmod[19:])
                if seconds is not None and tz is not None and lastmod[16:19] in _COLON_SECONDS:
                    # hh:mm and the zone are whole minutes: seconds never change the day
                    day = ordinal + (seconds - tz) // _DAY_S
        elif n == 10:  # YYYY-MM-DD
            ordinal = _DAY_ORDINALS.get(lastmod)
            if ordinal is not None and ordinal < self._old_day:
                day = ordinal
        if day is None:
            out = _writable(out)
            self._lastmod_full(lastmod, line, loc, out)
            return out
        self._lastmods += 1
        days = self._days
        days[day] = days.get(day, 0) + 1
        return out

    def _count_priority(
        self, priority: str, line: int, loc: str | None, is_url: bool, out: list[Finding]
    ) -> list[Finding]:
        """Count a <priority>; the full checks unless it is a valid value seen before."""
        number = self._pr_cache.get(priority)
        if is_url and number.__class__ is Decimal and self._prio_first is not None:
            self._prio_count += 1
            if self._prio_same and number != self._prio_first:
                self._prio_same = False
            return out
        out = _writable(out)
        self._check_priority(priority, line, loc, is_url, out)
        return out

    def _check_extensions(
        self, entry: Entry, loc: str | None, norm: str | None, out: list[Finding]
    ) -> None:
        if entry.images:
            self._check_images(entry.images, entry.line, loc, out)
        if entry.videos:
            for video in entry.videos:
                self._check_video(video, loc, out)
        if entry.news:
            self._check_news_list(entry.news, loc, out)
        if entry.alternates:
            self._check_alternates(entry, loc, norm, out)

    def _check_news_list(self, news_list: list[News], loc: str | None, out: list[Finding]) -> None:
        """A <url>'s <news:news> elements (counted once per URL for news-too-many)."""
        self._news += 1
        for news in news_list:
            self._check_news(news, loc, out)

    def _lastmod_value(self, lastmod: str) -> _Lastmod | str:
        """The parsed lastmod (or why it is invalid); the previous one is remembered."""
        if lastmod == self._lm_text:
            return self._lm_value
        value = _lastmod_fast(lastmod) or self._parse_lastmod(lastmod)
        self._lm_text, self._lm_value = lastmod, value
        return value

    def _lastmod_full(self, lastmod: str, line: int, loc: str | None, out: list[Finding]) -> None:
        value = self._lastmod_value(lastmod)
        # The common cases: a full timestamp older than "now", or a past date.
        if isinstance(value, tuple) and (
            value[0] < self._served_from
            if value[1] == "second"
            else value[1] == "day" and value[0] <= self._future_date
        ):
            self._lastmods += 1
            day = value[0] // _DAY_S
            days = self._days
            days[day] = days.get(day, 0) + 1
        else:
            self._check_lastmod(lastmod, value, line, loc, out)

    def _add(
        self, out: list[Finding], code: str, message: str, line: int | None, url: str | None
    ) -> None:
        out.append(finding(code, message, sitemap=self.source, line=line, url=url))

    def _check_loc_slow(self, entry: Entry, out: list[Finding]) -> tuple[str | None, str | None]:
        """Full <loc> checks; returns (loc as stripped, normalised URL or None if unusable)."""
        loc = self._report_loc_problems(entry.loc, entry.line, out)
        if not loc or origin(loc) is None:
            return loc or None, None  # not an http(s) URL with a host: nothing to compare
        norm = normalize_url(loc)
        if self._scope is not None:
            self._check_scope(self._scope, loc, norm, entry.line, out)
        return loc, norm

    def _report_loc_problems(self, raw: str | None, line: int, out: list[Finding]) -> str:
        """check_loc's findings for a <loc> as written; returns it stripped ("" if none)."""
        loc = raw.strip(_XML_SPACE) if raw is not None else ""
        for code, message in check_loc(raw):
            self._add(out, code, message, line, loc or None)
        return loc

    def _check_scope(
        self, scope: LocScope, loc: str, norm: str, line: int, out: list[Finding]
    ) -> None:
        """loc-cross-host (unless the other host's robots.txt submits this sitemap) and
        loc-outside-path."""
        scope_code = scope.classify(loc, norm)
        if scope_code == "loc-cross-host":
            if self.cross_submitted is None or not self.cross_submitted(loc):
                self._report_cross_host(scope, loc, line, out)
        elif scope_code == "loc-outside-path":
            self._report_outside_path(scope, loc, line, out)

    def _report_cross_host(self, scope: LocScope, loc: str, line: int, out: list[Finding]) -> None:
        self._add(
            out,
            "loc-cross-host",
            f"<loc> {_show(loc)} is on another host, scheme or port than the "
            f"sitemap {_show(scope.sitemap_url)}: list it in a sitemap on its own "
            "host, or declare this sitemap in that host's robots.txt",
            line,
            loc,
        )

    def _report_outside_path(
        self, scope: LocScope, loc: str, line: int, out: list[Finding]
    ) -> None:
        self._add(
            out,
            "loc-outside-path",
            f"<loc> {_show(loc)} is outside {_show(scope.prefix or '')}, the directory "
            f"of the sitemap: move the sitemap up to the site root or list the URL "
            "in a sitemap in its directory",
            line,
            loc,
        )

    def _report_duplicate(
        self, entry: Entry, table: SeenUrls, first: int, loc: str, norm: str, out: list[Finding]
    ) -> None:
        where = table.source_name(first)
        if where == self.source:
            place = "earlier in this sitemap"
        elif where is not None:
            place = f"already in {_show(where)}"
        else:
            place = "already, in a sitemap of this audit"
        self._add_duplicate(entry, place, loc, norm, out)

    def _add_duplicate(
        self, entry: Entry, place: str, loc: str, norm: str, out: list[Finding]
    ) -> None:
        same = "" if norm == loc else f" (normalised: {_show(norm)})"
        self._add(
            out,
            "loc-duplicate",
            f"{_show(loc)}{same} is listed again; it was listed {place}: keep one entry",
            entry.line,
            loc,
        )

    def _parse_lastmod(self, text: str) -> _Lastmod | str:
        value = text.strip(_XML_SPACE)
        if value != text:
            fast = _lastmod_fast(value)
            if fast is not None:
                return fast
        if not value:
            return "empty"
        try:
            start, precision, xsd_valid = parse_w3c_start(value)
            return _seconds(start), precision, xsd_valid
        except ValueError as exc:
            return self._not_w3c(value, str(exc))

    def _not_w3c(self, value: str, why: str) -> _Lastmod | str:
        """A lastmod that is no W3C Datetime: an RSS pubDate (RFC 822) in an RSS feed,
        else `why` it is invalid."""
        if self.kind == "rss":
            dt = parse_rss_date(value)
            if dt is not None:
                return _seconds(dt), "second", True
        return why

    def _check_lastmod(
        self, text: str, value: _Lastmod | str, line: int, loc: str | None, out: list[Finding]
    ) -> None:
        if isinstance(value, str):
            self._add(
                out,
                "lastmod-invalid",
                f"<lastmod> {_show(text)} is invalid ({value}); use a W3C Datetime such as "
                "2024-05-06 or 2024-05-06T07:08:09+00:00",
                line,
                loc,
            )
            return
        self._check_lastmod_time(text, value, line, loc, out)

    def _check_lastmod_time(
        self, text: str, value: _Lastmod, line: int, loc: str | None, out: list[Finding]
    ) -> None:
        """Count a valid lastmod that is not a plain past one; lastmod-imprecise and
        lastmod-future."""
        self._lastmods += 1
        start, precision, xsd_valid = value
        day = start // _DAY_S
        days = self._days
        days[day] = days.get(day, 0) + 1
        timed = precision == "second" or precision == "minute"
        if timed and start >= self._served_from:
            self._served_now += 1
        if not xsd_valid:
            why, fix = _imprecision(timed, precision)
            self._add(
                out,
                "lastmod-imprecise",
                f"<lastmod> {_show(text)} {why}, which the sitemap XSD rejects: {fix}",
                line,
                loc,
            )
        if start > (self._future_time if timed else self._future_date):
            self._report_future(text, line, loc, out)

    def _report_future(self, text: str, line: int, loc: str | None, out: list[Finding]) -> None:
        self._add(
            out,
            "lastmod-future",
            f"<lastmod> {_show(text)} is later than the time of the audit "
            f"({self.now:%Y-%m-%dT%H:%M:%SZ}): give the time the page last changed",
            line,
            loc,
        )

    def _check_changefreq(self, text: str, line: int, loc: str | None, out: list[Finding]) -> None:
        value = text.strip(_XML_SPACE)
        if value in CHANGEFREQS:
            return
        hint = f"write {value.lower()!r}" if value.lower() in CHANGEFREQS else "use one of"
        self._add(
            out,
            "changefreq-invalid",
            f"<changefreq> {_show(text)} is not a valid value: {hint} "
            + ("(lower-case)" if value.lower() in CHANGEFREQS else ", ".join(sorted(CHANGEFREQS)))
            + " or remove it (Google ignores changefreq)",
            line,
            loc,
        )

    def _parse_priority(self, text: str) -> Decimal | str:
        value = text.strip(_XML_SPACE)
        if not _DECIMAL.fullmatch(value):
            return "is not a decimal number"
        try:
            number = Decimal(value)
        except InvalidOperation:  # pragma: no cover - the regex admits only decimals
            return "is not a decimal number"
        if not _ZERO <= number <= _ONE:
            return "is outside 0.0 to 1.0"
        return number

    def _priority_value(self, text: str) -> Decimal | str:
        """The parsed priority (or why it is invalid), from the cache when seen before."""
        cache = self._pr_cache
        value = cache.get(text)
        if value is None:
            value = self._parse_priority(text)
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[text] = value
        return value

    def _check_priority(
        self, text: str, line: int, loc: str | None, is_url: bool, out: list[Finding]
    ) -> None:
        value = self._priority_value(text)
        if isinstance(value, str):
            self._add(
                out,
                "priority-invalid",
                f"<priority> {_show(text)} {value}: use a decimal from 0.0 to 1.0 such as 0.5, "
                "or remove it (Google ignores priority)",
                line,
                loc,
            )
            return
        if is_url:
            self._prio_count += 1
            if self._prio_first is None:
                self._prio_first, self._prio_text = value, text.strip(_XML_SPACE)
            elif value != self._prio_first:
                self._prio_same = False

    def _check_images(
        self, images: list[Image], line: int, loc: str | None, out: list[Finding]
    ) -> None:
        if len(images) > MAX_IMAGES:
            self._add(
                out,
                "image-too-many",
                f"{len(images):,} <image:image> elements for one URL, over Google's limit of "
                f"{MAX_IMAGES:,}: keep the {MAX_IMAGES:,} most important images",
                line,
                loc,
            )
        for image in images:
            if image.loc is None or not image.loc.strip(_XML_SPACE):
                self._report_image_loc_missing(image, loc, out)
        with_deprecated = [image for image in images if image.deprecated]
        if with_deprecated:
            self._report_deprecated_images(with_deprecated, loc, out)

    def _report_image_loc_missing(self, image: Image, loc: str | None, out: list[Finding]) -> None:
        self._add(
            out,
            "image-loc-missing",
            "<image:image> has no <image:loc>"
            + (" (it is empty)" if image.loc is not None else "")
            + ": add the image's URL in <image:loc> or remove the <image:image>",
            image.line,
            loc,
        )

    def _report_deprecated_images(
        self, images: list[Image], loc: str | None, out: list[Finding]
    ) -> None:
        """image-deprecated-tag, once for the <image:image> elements that have such tags."""
        deprecated = dict.fromkeys(tag for image in images for tag in image.deprecated)
        tags = ", ".join(f"<image:{t.removeprefix('image:')}>" for t in deprecated)
        self._add(
            out,
            "image-deprecated-tag",
            f"{tags} in {len(images)} <image:image> element(s): Google deprecated "
            "these tags in 2022 and ignores them; remove them",
            images[0].line,
            loc,
        )

    def _check_video(self, video: Video, loc: str | None, out: list[Finding]) -> None:
        f = video.fields
        line = video.line
        values = {k: v.strip(_XML_SPACE) for k, v in f.items() if v is not None}
        missing = _video_missing(values)
        if missing:
            self._report_video_missing(missing, line, loc, out)
        for name, shown, why, fix in _video_problems(f, values):
            self._add(
                out,
                "video-invalid-value",
                f"<video:{name}> {_show(shown, 60)} {why}: {fix}",
                line,
                loc,
            )

    def _report_video_missing(
        self, missing: list[str], line: int, loc: str | None, out: list[Finding]
    ) -> None:
        self._add(
            out,
            "video-required-missing",
            f"<video:video> lacks {', '.join(missing)}: add {'it' if len(missing) == 1 else 'them'}"
            " (Google needs them to "
            "index the video)",
            line,
            loc,
        )

    def _check_news(self, news: News, loc: str | None, out: list[Finding]) -> None:
        f = news.fields
        line = news.line
        values = {k: v.strip(_XML_SPACE) for k, v in f.items() if v is not None}
        missing = _news_missing(values)
        if missing:
            self._add(
                out,
                "news-required-missing",
                f"<news:news> lacks {', '.join(missing)}: add {'it' if len(missing) == 1 else 'them'}"
                " (<news:publication> needs "
                "<news:name> and <news:language>)",
                line,
                loc,
            )
        language = values.get("language")
        if language:
            self._check_news_language(language, line, loc, out)
        published = values.get("publication_date")
        if published:
            self._check_news_date(published, line, loc, out)

    def _check_news_language(
        self, language: str, line: int, loc: str | None, out: list[Finding]
    ) -> None:
        why = check_news_language(language)
        if why is not None:
            self._add(
                out,
                "news-invalid-value",
                f"<news:language> {_show(language)} {why}: use e.g. en, de, zh-cn",
                line,
                loc,
            )

    def _check_news_date(
        self, published: str, line: int, loc: str | None, out: list[Finding]
    ) -> None:
        parsed = _publication_date(published)
        if isinstance(parsed, str):
            self._add(
                out,
                "news-invalid-value",
                f"<news:publication_date> {_show(published)} is invalid ({parsed}); use "
                "YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm",
                line,
                loc,
            )
        elif parsed.end <= self._news_oldest:
            self._add(
                out,
                "news-stale",
                f"<news:publication_date> {_show(published)} is more than two days before "
                f"the audit ({self.now:%Y-%m-%d}): news sitemaps should list only articles "
                "of the last two days; drop the <news:news> of older ones",
                line,
                loc,
            )

    def _check_alternates(
        self, entry: Entry, loc: str | None, norm: str | None, out: list[Finding]
    ) -> None:
        alternates = entry.alternates or []
        hrefs = [href for alt in alternates if (href := self._check_alternate(alt, loc, out))]
        if norm is None or loc is None:
            return
        # a broken href may be the self link: said already
        if len(hrefs) == len(alternates) and not _lists_itself(hrefs, norm):
            self._report_missing_self(loc, entry.line, out)
        if self.hreflang is not None and hrefs:
            self.hreflang.add(loc, hrefs, sitemap=self.source, line=entry.line)

    def _report_missing_self(self, loc: str, line: int, out: list[Finding]) -> None:
        self._add(
            out,
            "hreflang-missing-self",
            f"{_show(loc)} lists hreflang alternates but not itself: add an xhtml:link "
            "with its own language and href (each version must list itself and all others)",
            line,
            loc,
        )

    def _check_alternate(self, alt: Alternate, loc: str | None, out: list[Finding]) -> str | None:
        """hreflang-invalid for one xhtml:link; its href (stripped), None when unusable."""
        code = alt.hreflang
        why = "is missing" if code is None else check_hreflang(code)
        if why is not None:
            shown = f"hreflang {_show(code)}" if code is not None else "the hreflang attribute"
            self._add(
                out,
                "hreflang-invalid",
                f"{shown} {why}: use an ISO 639-1 language with an optional ISO 3166-1 "
                "region (en, en-GB) or x-default",
                alt.line,
                loc,
            )
        href = (alt.href or "").strip(_XML_SPACE)
        if href and is_absolute_http(href):
            return href
        self._add(
            out,
            "hreflang-invalid",
            f"xhtml:link href {_show(href)} is not an absolute http(s) URL: "
            "give the full URL of the alternate page",
            alt.line,
            loc,
        )
        return None

    # -- per sitemap --------------------------------------------------------

    def finish(self, kind: str | None, entries: int, uncompressed_bytes: int) -> list[Finding]:
        """Per-sitemap findings, once the document is done; `entries` and
        `uncompressed_bytes` are the parser's totals, `kind` the document kind."""
        kind = kind if kind is not None else self.kind
        problems = [
            *_size_problems(kind, entries, uncompressed_bytes),
            *self._lastmod_problems(kind),
            *self._priority_problems(),
            *_news_count_problems(self._news),
        ]
        return [finding(code, message, sitemap=self.source) for code, message in problems]

    def _lastmod_problems(self, kind: str | None) -> list[tuple[str, str]]:
        """lastmod-missing and lastmod-uniform, from the counts check() kept."""
        problems: list[tuple[str, str]] = []
        if self._no_lastmod and kind != "text":
            problems.append(
                (
                    "lastmod-missing",
                    f"{self._no_lastmod:,} of {self.checked:,} entries have no <lastmod>: add "
                    "the date each page last changed significantly (search engines use it to "
                    "schedule crawls)",
                )
            )
        if kind == "sitemapindex" and self.index_served_now:
            n = self._non_urls
            problems.append(
                (
                    "index-lastmod-now",
                    f"all {n:,} <lastmod> values of the index are within "
                    f"{SERVED_NOW_WINDOW_S} s of the time it was served: it is generated on "
                    "the fly and says nothing of when each child changed; give each entry "
                    "its child's last change",
                )
            )
        elif self._news == 0 and self._lastmods:
            uniform = self._uniform_lastmod()
            if uniform is not None:
                problems.append(("lastmod-uniform", uniform))
        return problems

    def _count_index_entry(self, lastmod: str | None) -> None:
        """An index's <sitemap> entry: counted, and whether its <lastmod> is the time the
        index was served (index-lastmod-now)."""
        self._non_urls += 1
        if self.served_at is not None and lastmod_now(lastmod, self.served_at, self.tolerance_s):
            self._index_now += 1

    @property
    def index_served_now(self) -> bool:
        """An index of 2 entries or more whose every <lastmod> has a time within 60 s of
        the moment it was served (index-lastmod-now, in place of lastmod-uniform)."""
        return self._non_urls >= 2 and self._index_now == self._non_urls

    def _uniform_lastmod(self) -> str | None:
        """Why the lastmods look generated (one day, or the time of serving), or None."""
        n = self._lastmods
        day, top = max(self._days.items(), key=lambda kv: kv[1])
        if n >= UNIFORM_MIN and top >= n * UNIFORM_SHARE:
            return (
                f"{top:,} of {n:,} <lastmod> values are on {datetime.fromordinal(day):%Y-%m-%d}"
                " (UTC): search engines distrust a lastmod that is not the real date each "
                "page changed; generate it from the content's modification time"
            )
        if n >= SERVED_NOW_MIN and self._served_now == n:
            return (
                f"all {n:,} <lastmod> values are within "
                f"{int(SERVED_NOW_WINDOW.total_seconds() // 60)} minutes of the audit: the "
                "sitemap seems to stamp the time it is served; give each page's real "
                "modification time"
            )
        return None

    def _priority_problems(self) -> list[tuple[str, str]]:
        """priority-uniform: every <url> has the same <priority> (at least two)."""
        count = self._prio_count
        if not self._prio_same or count < 2 or count != self.checked - self._non_urls:
            return []
        return [
            (
                "priority-uniform",
                f"all {count:,} URLs have <priority> {_show(self._prio_text)}: a uniform "
                "priority says nothing (Google ignores priority); vary it or remove it",
            )
        ]


def _news_count_problems(news: int) -> list[tuple[str, str]]:
    """news-too-many, for `news` URLs with <news:news> in one sitemap."""
    if news <= MAX_NEWS:
        return []
    return [
        (
            "news-too-many",
            f"{news:,} URLs with <news:news>, over Google's limit of {MAX_NEWS:,} "
            "per news sitemap: split the news sitemap",
        )
    ]


def _size_problems(
    kind: str | None, entries: int, uncompressed_bytes: int
) -> list[tuple[str, str]]:
    """sitemap-too-many-urls, sitemap-near-limit and sitemap-empty."""
    what = "<sitemap> entries" if kind == "sitemapindex" else "URLs"
    problems: list[tuple[str, str]] = []
    if entries > MAX_ENTRIES:
        problems.append(
            (
                "sitemap-too-many-urls",
                f"{entries:,} {what}, over the limit of {MAX_ENTRIES:,} per sitemap: split it "
                "into several sitemaps listed in a sitemap index",
            )
        )
    near = _near_limits(what, entries, uncompressed_bytes)
    if near:
        problems.append(
            (
                "sitemap-near-limit",
                f"the sitemap is over 90% of a limit ({'; '.join(near)}): split it before it "
                "grows past the limit",
            )
        )
    # The caller skips finish() for a document it already reported as unreadable,
    # so no entries here means an empty file or an empty root element.
    if entries == 0:
        problems.append(
            (
                "sitemap-empty",
                "the sitemap has no entries: add the site's URLs or stop declaring it",
            )
        )
    return problems


def _near_limits(what: str, entries: int, uncompressed_bytes: int) -> list[str]:
    """The limits a sitemap is over 90% of (and not over), in words."""
    near: list[str] = []
    if MAX_ENTRIES * NEAR_LIMIT < entries <= MAX_ENTRIES:
        near.append(f"{entries:,} {what} of the {MAX_ENTRIES:,} allowed")
    if MAX_UNCOMPRESSED_BYTES * NEAR_LIMIT < uncompressed_bytes <= MAX_UNCOMPRESSED_BYTES:
        near.append(
            f"{uncompressed_bytes:,} bytes uncompressed of the {MAX_UNCOMPRESSED_BYTES:,} allowed"
        )
    return near


# --- video values (video.xsd), one rule per element or attribute -------------------------


def _lists_itself(hrefs: list[str], norm: str) -> bool:
    """Whether one of the alternates' `hrefs` is the URL normalised as `norm`."""
    return any(normalize_url(href) == norm for href in hrefs)


def _publication_date(text: str) -> W3CDate | str:
    """A <news:publication_date> parsed, or why it is invalid (a full date at least)."""
    try:
        parsed = parse_w3c_datetime(text)
    except ValueError as exc:
        return str(exc)
    if parsed.precision in ("year", "month"):
        return f"only a {parsed.precision}, not a full date"
    return parsed


def _news_missing(values: dict[str, str]) -> list[str]:
    """The required children a <news:news> lacks (empty counts as absent)."""
    return [
        f"<news:{name}>"
        for name in ("name", "language", "publication_date", "title")
        if not values.get(name)
    ]


def _video_missing(values: dict[str, str]) -> list[str]:
    """The required children a <video:video> lacks (empty counts as absent)."""
    missing = [
        f"<video:{name}>"
        for name in ("thumbnail_loc", "title", "description")
        if not values.get(name)
    ]
    if not values.get("content_loc") and not values.get("player_loc"):
        missing.append("<video:content_loc> or <video:player_loc>")
    return missing


def _bad_duration(v: str) -> bool:
    return not _NON_NEG_INT.fullmatch(v) or not 1 <= int(v) <= VIDEO_MAX_DURATION


def _bad_rating(v: str) -> bool:
    return not _DECIMAL.fullmatch(v) or not _ZERO <= Decimal(v) <= _FIVE


def _bad_price(v: str) -> bool:
    # An empty <video:price> is allowed: the price may live in its attributes.
    return bool(v) and (not _DECIMAL.fullmatch(v) or Decimal(v) < _ZERO)


def _not_in(allowed: frozenset[str]) -> Callable[[str], bool]:
    return lambda v: v not in allowed


def _not_matching(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda v: pattern.fullmatch(v) is None


_YES_NO_RULE = (_not_in(_YES_NO), "is not yes or no", "write yes or no")
_RELATIONSHIP_RULE = (_not_in(_RELATIONSHIPS), "is not allow or deny", "write allow or deny")
# (element or element@attribute, is the stripped value bad?, why, fix), in report order
_VIDEO_VALUE_RULES: tuple[tuple[str, Callable[[str], bool], str, str], ...] = (
    (
        "duration",
        _bad_duration,
        "is not a whole number of seconds from 1 to 28,800",
        "fix it",
    ),
    ("rating", _bad_rating, "is not a number from 0.0 to 5.0", "fix it"),
    (
        "view_count",
        _not_matching(_NON_NEG_INT),
        "is not a non-negative whole number",
        "fix it",
    ),
)
_VIDEO_FLAG_RULES: tuple[tuple[str, Callable[[str], bool], str, str], ...] = (
    ("family_friendly", *_YES_NO_RULE),
    ("live", *_YES_NO_RULE),
    ("requires_subscription", *_YES_NO_RULE),
    ("player_loc@allow_embed", *_YES_NO_RULE),
    (
        "restriction",
        _not_matching(_COUNTRY_LIST),
        "is not a space-separated list of ISO 3166 country codes",
        "write upper-case two-letter codes such as 'US CA'",
    ),
    (
        "platform",
        _not_matching(_PLATFORM_LIST),
        "is not a list of web, mobile, tv",
        "write e.g. 'web mobile'",
    ),
    ("restriction@relationship", *_RELATIONSHIP_RULE),
    ("platform@relationship", *_RELATIONSHIP_RULE),
    (
        "price@currency",
        _not_matching(_CURRENCY),
        "is not an ISO 4217 code",
        "write e.g. EUR or USD",
    ),
    ("price@type", _not_in(_PRICE_TYPES), "is not purchase or rent", "write purchase or rent"),
    ("price@resolution", _not_in(_RESOLUTIONS), "is not sd or hd", "write sd or hd"),
    ("price", _bad_price, "is not a non-negative decimal", "write e.g. 1.99"),
)
_VIDEO_MAX_LENGTHS = (
    ("title", VIDEO_MAX_TITLE),
    ("description", VIDEO_MAX_DESCRIPTION),
    ("category", VIDEO_MAX_CATEGORY),
)


def _video_problems(
    fields: dict[str, str], values: dict[str, str]
) -> list[tuple[str, str, str, str]]:
    """(name, value, why, fix) for every invalid video value, in report order.

    `fields` are the values as written (lengths count them), `values` the same stripped.
    """
    problems: list[tuple[str, str, str, str]] = []
    _video_length_problems(fields, problems)
    _video_rule_problems(_VIDEO_VALUE_RULES, values, problems)
    _video_date_problems(values, problems)
    _video_rule_problems(_VIDEO_FLAG_RULES, values, problems)
    return problems


def _video_length_problems(
    fields: dict[str, str], problems: list[tuple[str, str, str, str]]
) -> None:
    for name, limit in _VIDEO_MAX_LENGTHS:
        v = fields.get(name)
        if v is not None and len(v) > limit:
            problems.append(
                (name, v, f"is {len(v):,} characters long", f"shorten it to {limit:,} at most")
            )


def _video_date_problems(values: dict[str, str], problems: list[tuple[str, str, str, str]]) -> None:
    for name in ("publication_date", "expiration_date"):
        v = values.get(name)
        why = None if v is None else _xsd_date_problem(v)
        if v is not None and why is not None:
            problems.append(
                (name, v, f"is invalid ({why})", "use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm")
            )


def _video_rule_problems(
    rules: tuple[tuple[str, Callable[[str], bool], str, str], ...],
    values: dict[str, str],
    problems: list[tuple[str, str, str, str]],
) -> None:
    for name, is_bad, why, fix in rules:
        v = values.get(name)
        if v is not None and is_bad(v):
            problems.append((name, v, why, fix))


def _xsd_date_problem(text: str) -> str | None:
    """Why `text` is not an xsd:date or xsd:dateTime with a timezone (video dates), or None."""
    try:
        parsed = parse_w3c_datetime(text)
    except ValueError as exc:
        return str(exc)
    if parsed.precision == "minute":
        return "a time without seconds"
    if not parsed.xsd_valid:
        return f"only a {parsed.precision}, not a full date"
    return None
