"""<lastmod> of each entry and of the sitemap as a whole (RULES.md "Entries", counts).

Per entry: lastmod-invalid, lastmod-imprecise, lastmod-future; counted per UTC day for
the sitemap's lastmod-missing, lastmod-uniform and (an index) index-lastmod-now.

    dates = LastmodCheck(source, now=utc_now, kind=kind, served_at=dt_or_None, tolerance_s=0)
    dates.check_all(entries, locs, outs)        # a batch: findings into outs[i]
    dates.index_entry(lastmod)                  # an index's <sitemap> entry (check_all calls it)
    dates.problems(kind, checked, news) -> [(code, message)]    # once per sitemap

Chosen thresholds: lastmod-future allows 1 minute of clock skew for a value with a time,
14 hours for a date (a UTC+14 site's "today"); lastmod-uniform fires at >= 20 lastmods
with >= 90% on one UTC day, or >= 5 timed lastmods all within 10 minutes before the
audit (stamped with the serving time).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from audit.core.records import Entry, Finding
from audit.rules.dates import Precision, parse_rss_date, parse_w3c_start
from audit.rules.findings import XML_SPACE, add, show, writable
from audit.rules.indexlastmod import (
    DAYS,
    HOUR_MINUTE,
    SERVED_NOW_WINDOW_S,
    TWO_DIGITS,
    ZONES,
    fast_span,
    lastmod_now,
    seconds_since_epoch,
)

__all__ = [
    "FUTURE_TOLERANCE",
    "FUTURE_TOLERANCE_DATE",
    "SERVED_NOW_MIN",
    "SERVED_NOW_WINDOW",
    "UNIFORM_MIN",
    "UNIFORM_SHARE",
    "LastmodCheck",
    "seconds_since_epoch",
]

UNIFORM_MIN = 20  # lastmod-uniform: at least 20 entries with a lastmod ...
UNIFORM_SHARE = 0.9  # ... of which 90% share one UTC day
SERVED_NOW_MIN = 5  # lastmod-uniform: every one of at least 5 lastmods is "now" ...
SERVED_NOW_WINDOW = timedelta(minutes=10)  # ... within this window before the audit
# lastmod-future: a time-of-day value may run ahead of our clock by clock skew only;
# a date (or year/month) is written in the site's local time, which can be up to
# UTC+14, so that day may start up to 14 hours before midnight UTC.
FUTURE_TOLERANCE = timedelta(minutes=1)
FUTURE_TOLERANCE_DATE = timedelta(hours=14)

# A parsed lastmod: start as whole seconds since 0001-01-01T00:00:00Z (proleptic
# Gregorian, so start // 86400 is the UTC day's ordinal), precision, xsd_valid.
_Lastmod = tuple[int, Precision, bool]
_DAY_S = 86_400
# Tables of valid pieces (indexlastmod.py's DAYS and ZONES, filled as values are parsed):
# a key's presence vouches for its syntax (check_all() relies on it). Bound to names of this
# module: CPython 3.11 calls a method of a name bound by an import through a bound method
# object (LOAD_ATTR, not LOAD_METHOD), about 870 instructions more per entry in check_all().
_DAYS, _ZONES = DAYS, ZONES
_NOT_A_DAY = 1 << 62  # what check_all() looks up for a day not in _DAYS: before no day
# "hh:mm" -> seconds (HOUR_MINUTE) and "00" to "59" (TWO_DIGITS): indexlastmod.py's tables
_T_HOUR_MINUTE = {"T" + hm: seconds for hm, seconds in HOUR_MINUTE.items()}  # "Thh:mm"
_COLON_SECONDS = frozenset(":" + ss for ss in TWO_DIGITS)  # ":ss", 00 to 59


def _lastmod_fast(value: str) -> _Lastmod | None:
    """YYYY-MM-DD and YYYY-MM-DDThh:mm:ss[.s]TZD when valid; None means "ask the full parser"."""
    span = fast_span(value)
    if span is None:
        return None
    start, end = span  # a second long: a value with a time; else a day
    return start, ("second" if end - start == 1 else "day"), True


class LastmodCheck:
    """The <lastmod> checks and counts of one sitemap. `now` is the aware UTC time of
    the audit; `kind` "rss" admits RFC 822 dates; `served_at` is when the sitemap's
    answer arrived (None: a local file), for index-lastmod-now, whose window
    `tolerance_s` (--lastmod-tolerance) widens."""

    __slots__ = (
        "_future_date",
        "_future_time",
        "_index_now",
        "_lm_text",
        "_lm_value",
        "_old_day",
        "_served_from",
        "count",
        "days",
        "index_entries",
        "kind",
        "missing",
        "now",
        "served_at",
        "served_now",
        "source",
        "tolerance_s",
    )

    def __init__(
        self,
        source: str,
        *,
        now: datetime,
        kind: str | None,
        served_at: datetime | None,
        tolerance_s: float,
    ) -> None:
        self.source = source
        self.now = now
        self.kind = kind
        self.served_at = served_at
        self.tolerance_s = tolerance_s
        now_s = seconds_since_epoch(now)
        self._future_time = now_s + int(FUTURE_TOLERANCE.total_seconds())
        self._future_date = now_s + int(FUTURE_TOLERANCE_DATE.total_seconds())
        self._served_from = now_s - int(SERVED_NOW_WINDOW.total_seconds())
        # A lastmod on a day before this one is in the past and outside the "served now"
        # window whatever its time and zone (zones reach 14 hours): counted inline.
        self._old_day = self._served_from // _DAY_S - 2
        self.missing = 0  # entries without <lastmod>: counted by check_all
        self.count = 0  # valid lastmods
        self.days: dict[int, int] = {}  # valid lastmods per UTC day ordinal
        self.served_now = 0
        self.index_entries = 0  # entries that are not <url> (an index's <sitemap>)
        self._index_now = 0  # <sitemap> entries whose <lastmod> is the time of serving
        # sitemaps repeat lastmod values verbatim: runs of equal values are common
        self._lm_text = ""
        self._lm_value: _Lastmod | str = "empty"

    # -- per entry ----------------------------------------------------------

    def check_all(
        self, entries: Sequence[Entry], locs: Sequence[str | None], outs: list[list[Finding]]
    ) -> None:
        """Count the <lastmod> of each entry of a batch (and an index's <sitemap> entries,
        index_entry); the full checks, their findings into `outs[i]`, only for a value
        that is not the common case.

        The common case: a valid date, or date and time (whole seconds) with a zone, on a
        day well before the audit (so neither "future" nor "served now" can apply); only
        its UTC day is counted. Decided by length, slices and lookups in tables of valid
        parts (no regex, no call).
        """
        old_day, days = self._old_day, self.days
        common = 0
        for i, entry in enumerate(entries):
            lastmod = entry.lastmod
            if entry.kind != "url":
                self.index_entry(lastmod)
            if lastmod is None:
                self.missing += 1
                continue
            n = len(lastmod)
            day = None
            if n == 25 or n == 20:  # YYYY-MM-DDThh:mm:ss+hh:mm, YYYY-MM-DDThh:mm:ssZ
                ordinal = _DAYS.get(lastmod[:10], _NOT_A_DAY)
                if ordinal < old_day:
                    seconds = _T_HOUR_MINUTE.get(lastmod[10:16])
                    tz = _ZONES.get(lastmod[19:])
                    if seconds is not None and tz is not None and lastmod[16:19] in _COLON_SECONDS:
                        # hh:mm and the zone are whole minutes: seconds never change the day
                        day = ordinal + (seconds - tz) // _DAY_S
            elif n == 10:  # YYYY-MM-DD
                ordinal = _DAYS.get(lastmod, _NOT_A_DAY)
                if ordinal < old_day:
                    day = ordinal
            if day is None:
                outs[i] = out = writable(outs[i])
                self.full(lastmod, entry.line, locs[i], out)
            else:
                common += 1
                days[day] = days.get(day, 0) + 1
        self.count += common

    def index_entry(self, lastmod: str | None) -> None:
        """An index's <sitemap> entry: counted, and whether its <lastmod> is the time the
        index was served (index-lastmod-now)."""
        self.index_entries += 1
        if self.served_at is not None and lastmod_now(lastmod, self.served_at, self.tolerance_s):
            self._index_now += 1

    def full(self, lastmod: str, line: int, loc: str | None, out: list[Finding]) -> None:
        """The full checks of a <lastmod>, which check_all() skips for the common case."""
        # the parsed lastmod (or why it is invalid); the previous one is remembered
        value = self._lm_value
        if lastmod != self._lm_text:
            value = _lastmod_fast(lastmod) or self._parse(lastmod)
            self._lm_text, self._lm_value = lastmod, value
        if isinstance(value, str):
            add(
                out,
                self.source,
                "lastmod-invalid",
                f"<lastmod> {show(lastmod)} is invalid ({value}); use a W3C Datetime such as "
                "2024-05-06 or 2024-05-06T07:08:09+00:00",
                line,
                loc,
            )
            return
        # a valid lastmod: counted; lastmod-imprecise and lastmod-future
        self.count += 1
        start, precision, xsd_valid = value
        day = start // _DAY_S
        days = self.days
        days[day] = days.get(day, 0) + 1
        timed = precision in ("second", "minute")
        if timed and start >= self._served_from:
            self.served_now += 1
        if not xsd_valid:  # too imprecise for the XSD
            why, fix = (
                ("has a time without seconds", "add seconds (hh:mm:ss)")
                if timed
                else (f"gives only a {precision}", "give the full date (YYYY-MM-DD)")
            )
            add(
                out,
                self.source,
                "lastmod-imprecise",
                f"<lastmod> {show(lastmod)} {why}, which the sitemap XSD rejects: {fix}",
                line,
                loc,
            )
        if start > (self._future_time if timed else self._future_date):
            add(
                out,
                self.source,
                "lastmod-future",
                f"<lastmod> {show(lastmod)} is later than the time of the audit "
                f"({self.now:%Y-%m-%dT%H:%M:%SZ}): give the time the page last changed",
                line,
                loc,
            )

    def _parse(self, text: str) -> _Lastmod | str:
        value = text.strip(XML_SPACE)
        if value != text:
            fast = _lastmod_fast(value)
            if fast is not None:
                return fast
        if not value:
            return "empty"
        try:
            start, precision, xsd_valid = parse_w3c_start(value)
            return seconds_since_epoch(start), precision, xsd_valid
        except ValueError as exc:
            why = str(exc)
        # no W3C Datetime: an RSS pubDate (RFC 822) in an RSS feed, else why it is invalid
        dt = parse_rss_date(value) if self.kind == "rss" else None
        return why if dt is None else (seconds_since_epoch(dt), "second", True)

    # -- per sitemap --------------------------------------------------------

    def problems(self, kind: str | None, checked: int, news: int) -> list[tuple[str, str]]:
        """lastmod-missing, index-lastmod-now and lastmod-uniform, from the counts, for a
        sitemap of `checked` entries of which `news` carry <news:news>."""
        problems: list[tuple[str, str]] = []
        if self.missing and kind != "text":
            problems.append(
                (
                    "lastmod-missing",
                    f"{self.missing:,} of {checked:,} entries have no <lastmod>: add "
                    "the date each page last changed significantly (search engines use it to "
                    "schedule crawls)",
                )
            )
        if kind == "sitemapindex" and self.index_served_now:
            n = self.index_entries
            problems.append(
                (
                    "index-lastmod-now",
                    f"all {n:,} <lastmod> values of the index are within "
                    f"{SERVED_NOW_WINDOW_S} s of the time it was served: it is generated on "
                    "the fly and says nothing of when each child changed; give each entry "
                    "its child's last change",
                )
            )
        elif news == 0:
            problems += self._uniform()
        return problems

    @property
    def index_served_now(self) -> bool:
        """An index of 2 entries or more whose every <lastmod> has a time within 60 s of
        the moment it was served (index-lastmod-now, in place of lastmod-uniform)."""
        return self.index_entries >= 2 and self._index_now == self.index_entries

    def _uniform(self) -> list[tuple[str, str]]:
        """lastmod-uniform, when the lastmods look generated (one day, or the time of
        serving), as problems() gives it; else none."""
        n = self.count
        day, top = max(self.days.items(), key=lambda kv: kv[1], default=(0, 0))  # 0: none
        if n >= UNIFORM_MIN and top >= n * UNIFORM_SHARE:
            why = (
                f"{top:,} of {n:,} <lastmod> values are on {datetime.fromordinal(day):%Y-%m-%d}"
                " (UTC): search engines distrust a lastmod that is not the real date each "
                "page changed; generate it from the content's modification time"
            )
        elif n >= SERVED_NOW_MIN and self.served_now == n:
            why = (
                f"all {n:,} <lastmod> values are within "
                f"{int(SERVED_NOW_WINDOW.total_seconds() // 60)} minutes of the audit: the "
                "sitemap seems to stamp the time it is served; give each page's real "
                "modification time"
            )
        else:
            return []
        return [("lastmod-uniform", why)]
