"""W3C Datetime, HTTP date and RSS date parsing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from audit.rules.dates import parse_http_date, parse_rss_date, parse_w3c_datetime


@pytest.mark.parametrize(
    ("text", "start", "end", "precision", "xsd_valid"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC), "year", False),
        (
            "2024-12",
            datetime(2024, 12, 1, tzinfo=UTC),
            datetime(2025, 1, 1, tzinfo=UTC),
            "month",
            False,
        ),
        (
            "2024-02",
            datetime(2024, 2, 1, tzinfo=UTC),
            datetime(2024, 3, 1, tzinfo=UTC),
            "month",
            False,
        ),
        (
            "2024-02-29",
            datetime(2024, 2, 29, tzinfo=UTC),
            datetime(2024, 3, 1, tzinfo=UTC),
            "day",
            True,
        ),
        (
            "2024-05-06T07:08Z",
            datetime(2024, 5, 6, 7, 8, tzinfo=UTC),
            datetime(2024, 5, 6, 7, 9, tzinfo=UTC),
            "minute",
            False,
        ),
        (
            "2024-05-06T07:08:09+05:30",
            datetime(2024, 5, 6, 1, 38, 9, tzinfo=UTC),
            datetime(2024, 5, 6, 1, 38, 10, tzinfo=UTC),
            "second",
            True,
        ),
        (
            "2024-05-06T23:30:00-02:00",
            datetime(2024, 5, 7, 1, 30, tzinfo=UTC),
            datetime(2024, 5, 7, 1, 30, 1, tzinfo=UTC),
            "second",
            True,
        ),
        (
            "2024-05-06T07:08:09.1234567Z",
            datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
            datetime(2024, 5, 6, 7, 8, 10, 123456, tzinfo=UTC),
            "second",
            True,
        ),
        ("9999", datetime(9999, 1, 1, tzinfo=UTC), datetime.max.replace(tzinfo=UTC), "year", False),
    ],
)
def test_w3c_valid(
    text: str, start: datetime, end: datetime, precision: str, xsd_valid: bool
) -> None:
    d = parse_w3c_datetime(text)
    assert (d.start, d.end, d.precision, d.xsd_valid) == (start, end, precision, xsd_valid)
    assert d.start.tzinfo is UTC and d.end.tzinfo is not None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "not a W3C"),
        ("2024-1-05", "not a W3C"),
        ("2024/01/05", "not a W3C"),
        ("24-01-05", "not a W3C"),
        ("2024-01-05 10:00:00Z", "not a W3C"),
        ("2024-01-05T10Z", "not a W3C"),
        ("2024-01-05T10:00:00.Z", "not a W3C"),
        ("2024-01-05T10:00:00+0530", "not a W3C"),
        ("2024-01-05T10:00:00z", "not a W3C"),
        (" 2024-01-05", "not a W3C"),
        ("٢٠٢٤-01-05", "not a W3C"),
        ("0000-01-01", "0000"),
        ("2024-13", "month"),
        ("2024-00-10", "month"),
        ("2024-02-30", "day"),
        ("2023-02-29", "day"),
        ("1900-02-29", "day"),
        ("2024-04-31", "day"),
        ("2024-01-00", "day"),
        ("2024-01-05T24:00:00Z", "time"),
        ("2024-01-05T25:00Z", "time"),
        ("2024-01-05T10:60:00Z", "time"),
        ("2024-01-05T10:00:60Z", "second"),
        ("2024-01-05T10:00:00", "timezone designator"),
        ("2024-01-05T10:00", "timezone designator"),
        ("2024-01-05T10:00:00+15:00", "offset"),
        ("2024-01-05T10:00:00+05:60", "offset"),
        ("9999-12-31T23:00:00-05:00", "range"),
    ],
)
def test_w3c_invalid(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_w3c_datetime(text)


def test_w3c_leap_year_2000() -> None:
    assert parse_w3c_datetime("2000-02-29").precision == "day"


def test_w3c_offset_extremes() -> None:
    assert parse_w3c_datetime("2024-01-05T10:00:00+14:00").start == datetime(
        2024, 1, 4, 20, tzinfo=UTC
    )
    assert parse_w3c_datetime("2024-01-05T10:00:00-00:00").start == datetime(
        2024, 1, 5, 10, tzinfo=UTC
    )


@pytest.mark.parametrize(
    "text",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 +0000",
    ],
)
def test_http_date_forms(text: str) -> None:
    assert parse_http_date(text) == datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)


def test_http_date_rfc850_century() -> None:
    d = parse_http_date("Thursday, 01-Jan-04 00:00:00 GMT")
    assert d == datetime(2004, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "yesterday",
        "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "1994-11-06",
    ],
)
def test_http_date_unparseable(text: str) -> None:
    assert parse_http_date(text) is None


def test_rss_date() -> None:
    assert parse_rss_date("Tue, 10 Jun 2003 04:00:00 GMT") == datetime(2003, 6, 10, 4, tzinfo=UTC)
    assert parse_rss_date("Tue, 10 Jun 2003 09:30:00 +0530") == datetime(2003, 6, 10, 4, tzinfo=UTC)
    assert parse_rss_date("Tue, 10 Jun 2003 04:00:00 -0000") == datetime(2003, 6, 10, 4, tzinfo=UTC)
    assert parse_rss_date("Tue, 10 Jun 2003 04:00:00 EST") == datetime(
        2003, 6, 10, 4, tzinfo=UTC
    ) + timedelta(hours=5)
    assert parse_rss_date("not a date") is None
    assert parse_rss_date("") is None
