"""Date parsing for sitemaps and HTTP: W3C Datetime, HTTP dates, RSS dates.

Pure functions over strings; imports nothing beyond the standard library (no
HTTP, no asyncio, nothing else of the package). `parse_w3c_datetime` runs once
per sitemap entry, so it is one compiled regex plus integer checks.

W3C Datetime (https://www.w3.org/TR/NOTE-datetime) forms:
    YYYY | YYYY-MM | YYYY-MM-DD | YYYY-MM-DDThh:mmTZD | YYYY-MM-DDThh:mm:ssTZD
    | YYYY-MM-DDThh:mm:ss.sTZD          TZD = Z | +hh:mm | -hh:mm
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

__all__ = [
    "W3CDate",
    "parse_http_date",
    "parse_rss_date",
    "parse_w3c_datetime",
    "parse_w3c_start",
    "tz_offset",
]

Precision = Literal["year", "month", "day", "minute", "second"]

_MAX = datetime.max.replace(tzinfo=UTC)

_W3C = re.compile(
    r"(\d{4})"
    r"(?:-(\d{2})"
    r"(?:-(\d{2})"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?"
    r"(Z|[+-]\d{2}:\d{2})?"
    r")?)?)?",
    re.ASCII,  # \d must not match other scripts' digits
)


@dataclass(frozen=True, slots=True)
class W3CDate:
    """A parsed W3C Datetime: the span of time the value denotes, in UTC.

    `start` is the instant given (a date means midnight UTC of that day, which
    is how Google reads a date-only lastmod); `end` is exclusive: start plus
    one unit of the precision given. `xsd_valid` is False for the forms the
    official sitemap XSD rejects (YYYY, YYYY-MM, a time without seconds).
    """

    start: datetime
    end: datetime
    precision: Precision
    xsd_valid: bool


_OFFSETS: dict[str, timedelta] = {"Z": timedelta(0)}  # TZD -> offset to subtract; few a site
_SPAN = {"day": timedelta(days=1), "minute": timedelta(minutes=1)}
_MONTHS_IN = {"year": 12, "month": 1}  # the spans not of fixed length
_SECOND = timedelta(seconds=1)


def tz_offset(tzd: str) -> timedelta:
    """The offset a W3C Datetime's TZD (Z, +hh:mm or -hh:mm, as matched) says, east of UTC;
    ValueError when no such offset exists."""
    off = _OFFSETS.get(tzd)
    if off is None:
        oh, om = int(tzd[1:3]), int(tzd[4:6])
        # xsd:dateTime allows offsets from -14:00 to +14:00.
        if om > 59 or oh * 60 + om > 14 * 60:
            raise ValueError(f"timezone offset {tzd} does not exist")
        off = timedelta(hours=oh, minutes=om)
        if tzd[0] == "-":
            off = -off
        if len(_OFFSETS) < 256:
            _OFFSETS[tzd] = off
    return off


def parse_w3c_start(text: str) -> tuple[datetime, Precision, bool]:
    """The fast core of parse_w3c_datetime: (start, precision, xsd_valid), no end.

    Raises ValueError(reason) exactly as parse_w3c_datetime does.
    """
    m = _W3C.fullmatch(text)
    if m is None:
        raise ValueError("not a W3C Datetime")
    ys, mos, ds, hs = m.group(1, 2, 3, 4)
    year = int(ys)
    if year == 0:
        raise ValueError("year 0000 does not exist")
    if mos is None:
        return datetime(year, 1, 1, tzinfo=UTC), "year", False
    month = int(mos)
    if not 1 <= month <= 12:
        raise ValueError(f"month {mos} does not exist")
    if ds is None:
        return datetime(year, month, 1, tzinfo=UTC), "month", False
    if hs is None:
        try:
            return datetime(year, month, int(ds), tzinfo=UTC), "day", True
        except ValueError:
            raise ValueError(f"day {ys}-{mos}-{ds} does not exist") from None
    return _timed_start(year, month, m)


def _timed_start(year: int, month: int, m: re.Match[str]) -> tuple[datetime, Precision, bool]:
    """parse_w3c_start for a value with a time (year and month checked): minute or second
    precision."""
    ys, mos, ds, hs, mis, ss, frac, tzd = m.groups()
    if tzd is None:
        raise ValueError("a time without a timezone designator (add Z or +hh:mm)")
    hour, minute = int(hs), int(mis)
    # 24:00:00 is legal in ISO 8601 but not in W3C Datetime nor in Google's parser.
    if hour > 23 or minute > 59:
        raise ValueError(f"time {hs}:{mis} does not exist")
    second = micro = 0
    if ss is not None:
        second = int(ss)
        if second > 59:
            raise ValueError(f"second {ss} does not exist")
        if frac is not None:
            micro = int(frac[:6].ljust(6, "0"))
    try:
        start = datetime(year, month, int(ds), hour, minute, second, micro, tzinfo=UTC)
    except ValueError:
        raise ValueError(f"day {ys}-{mos}-{ds} does not exist") from None
    try:
        start -= tz_offset(tzd)
    except OverflowError:
        raise ValueError("date out of range") from None
    if ss is None:
        return start, "minute", False
    return start, "second", True


def parse_w3c_datetime(text: str) -> W3CDate:
    """Parse a W3C Datetime; raise ValueError(reason) when it is not one.

    Invalid: bad syntax, an impossible date or time (2024-02-30, 24:00:00,
    25:00), and a time without a timezone designator (the XSD allows that,
    Google reports 'Invalid date' because the instant is ambiguous).
    """
    start, precision, xsd_valid = parse_w3c_start(text)
    months = _MONTHS_IN.get(precision)
    if months is not None:  # the start of the next year or month, in months from year 0
        year, month = divmod(start.year * 12 + start.month - 1 + months, 12)
        end = _MAX if year > 9999 else start.replace(year=year, month=month + 1)
    else:
        try:
            end = start + _SPAN.get(precision, _SECOND)
        except OverflowError:
            end = _MAX
    return W3CDate(start, end, precision, xsd_valid)


_MONTHS = {
    m: i
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}
_TIME = r"(\d{2}):(\d{2}):(\d{2})"
# RFC 9110 section 5.6.7: the preferred form and the two obsolete ones.
_IMF = re.compile(r"[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) " + _TIME + r" GMT", re.ASCII)
_RFC850 = re.compile(
    r"[A-Z][a-z]{5,8}, (\d{2})-([A-Z][a-z]{2})-(\d{2}) " + _TIME + r" GMT", re.ASCII
)
_ASCTIME = re.compile(r"[A-Z][a-z]{2} ([A-Z][a-z]{2}) ([ \d]\d) " + _TIME + r" (\d{4})", re.ASCII)


def _build(y: int, mon: str, d: int, hh: str, mm: str, ss: str) -> datetime | None:
    month = _MONTHS.get(mon)
    if month is None:
        return None
    try:
        # A leap second (60) is allowed by RFC 9110's grammar; clamp it.
        return datetime(y, month, d, int(hh), int(mm), min(int(ss), 59), tzinfo=UTC)
    except ValueError:
        return None


def parse_http_date(text: str) -> datetime | None:
    """Parse an HTTP date (IMF-fixdate, RFC 850 or asctime) to aware UTC; None if not one."""
    text = text.strip()
    m = _IMF.fullmatch(text)
    if m:
        return _build(int(m[3]), m[2], int(m[1]), m[4], m[5], m[6])
    m = _RFC850.fullmatch(text)
    if m:
        # RFC 9110: a two-digit year more than 50 years in the future is in the past century.
        yy = int(m[3])
        now_year = datetime.now(UTC).year
        year = (now_year // 100) * 100 + yy
        if year > now_year + 50:
            year -= 100
        return _build(year, m[2], int(m[1]), m[4], m[5], m[6])
    m = _ASCTIME.fullmatch(text)
    if m:
        return _build(int(m[6]), m[1], int(m[2]), m[3], m[4], m[5])
    # Servers that send near-misses ("+0000" instead of GMT): accept with a timezone only.
    return _parse_email_date(text, assume_utc=False)


def _parse_email_date(text: str, *, assume_utc: bool) -> datetime | None:
    try:
        dt = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt.tzinfo is None:
        if not assume_utc:
            return None
        dt = dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        return None


def parse_rss_date(text: str) -> datetime | None:
    """Parse an RFC 822/2822 date as RSS pubDate uses it, to aware UTC; None if not one.

    A date without a zone (or "-0000") is taken as UTC.
    """
    return _parse_email_date(text.strip(), assume_utc=True)
