"""The lastmod comparisons of audit.features.lastmod, on their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from audit.features.lastmod import lastmod_moved, page_date_gap


def test_lastmod_moved_and_gap() -> None:
    assert not lastmod_moved("2024-05-01T10:00:00+00:00", "2024-05-01T12:00:00+02:00")
    assert lastmod_moved("2024-05-01", "2024-05-02")
    day = datetime(2024, 5, 1, 23, tzinfo=UTC)
    assert page_date_gap(day, "2024-05-01") == timedelta(0)  # inside the day
    assert page_date_gap(day + timedelta(days=2), "2024-05-01") == timedelta(days=1, hours=23)
    assert page_date_gap(day, "not a date") is None
