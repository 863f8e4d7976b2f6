"""Running totals over a record stream (audit/report/aggregate.py): the --fail-on decision,
an Aggregate fed the writers' shared stream (counts, examples kept bounded, status classes,
lastmod ages, a summary computed when the run was cut), and UrlJoiner pairing url records
with their findings in a bounded window."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from audit.report.aggregate import (
    AGE_BUCKETS,
    Aggregate,
    UrlJoiner,
    age_bucket,
    at_or_above,
    failing_severities,
    float_or_none,
    host_value,
    int_or_none,
    lastmod_day,
    percent,
    severity_of,
    status_class,
    where,
)
from tests.report.reportkit import (
    ERRORS,
    INFOS,
    URL_RECORDS,
    WARNINGS,
    stream,
    without_summary,
)


@pytest.mark.parametrize(
    ("severity", "fail_on", "fails"),
    [
        ("error", "error", True),
        ("warning", "error", False),
        ("warning", "warning", True),
        ("info", "warning", False),
        ("info", "info", True),
        ("error", "never", False),
        (None, "info", False),
        ("fatal", "info", False),
    ],
)
def test_the_one_fail_on_decision(severity: str | None, fail_on: str, fails: bool) -> None:
    assert at_or_above(severity, fail_on) is fails


def test_failing_severities_worst_first_ignoring_what_is_not_a_count() -> None:
    counts = {"info": 4, "error": 1, "warning": "many"}
    assert failing_severities(counts, "info") == ["error", "info"]
    assert failing_severities(counts, "never") == []


def test_an_aggregate_of_the_shared_stream() -> None:
    agg = Aggregate(examples=1)
    records = stream()
    for record in records:
        agg.add(record)
    assert agg.complete and agg.urls == URL_RECORDS
    assert agg.by_severity == {"error": ERRORS, "warning": WARNINGS, "info": INFOS}
    assert sum(agg.by_code.values()) == ERRORS + WARNINGS + INFOS
    assert all(len(kept) == 1 for kept in agg.examples.values())  # bounded per code
    assert sum(agg.status_classes.values()) == URL_RECORDS
    assert agg.records == len(records)
    rows = agg.codes_sorted()
    ranks = [{"error": 3, "warning": 2, "info": 1}[sev] for _, sev, _ in rows]
    assert ranks == sorted(ranks, reverse=True)


def test_a_cut_stream_gets_a_computed_partial_summary() -> None:
    agg = Aggregate()
    for record in without_summary(stream()):
        agg.add(record)
    summary = agg.summary_dict()
    assert not agg.complete and summary["partial"] is True
    assert summary["urls"] == URL_RECORDS
    assert summary["findings"] == {"error": ERRORS, "warning": WARNINGS, "info": INFOS}


def test_status_classes_count_what_the_listed_url_answered() -> None:
    assert status_class({"status": 200}) == "2xx"
    assert status_class({"status": 200, "redirects": [{"url": "a", "status": 301}]}) == "3xx"
    assert status_class({"status": 200, "redirects": [{"url": "a"}]}) == "3xx"
    assert status_class({"status": None}) == "none" and status_class({"status": 99}) == "none"


def test_lastmod_days_and_their_age() -> None:
    assert lastmod_day("2024-05-01T10:00:00Z") == date(2024, 5, 1)
    assert lastmod_day("2024") == date(2024, 1, 1) and lastmod_day("2024-02") == date(2024, 2, 1)
    assert lastmod_day("2024-02-30") is None and lastmod_day(None) is None
    today = date(2024, 6, 1)
    ages = [age_bucket(date(2024, 6, 2), today), age_bucket(today, today),
            age_bucket(date(2024, 5, 1), today), age_bucket(date(2010, 1, 1), today)]  # fmt: skip
    assert ages == ["future", "< 1 week", "< 6 months", "older"]
    assert set(ages) <= set(AGE_BUCKETS)


def test_the_histogram_is_relative_to_when_the_audit_ran() -> None:
    agg = Aggregate(now=datetime(2030, 1, 1, tzinfo=UTC))
    agg.add({"type": "url", "url": "a", "status": 200, "lastmod": "2024-05-30"})
    agg.add({"type": "url", "url": "b", "status": 200})
    agg.add({"type": "summary", "finished": "2024-06-01T00:00:00Z", "findings": {}})
    histogram = dict(agg.lastmod_histogram())
    assert histogram["< 1 week"] == 1 and histogram["none"] == 1 and "future" not in histogram


def test_the_time_of_the_audit_is_the_first_readable_stamp_of_the_summary() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    agg = Aggregate(now=now)
    assert agg.reference_time() == now  # no summary yet
    # not a string, not a stamp: the next key is read; a stamp without a zone is UTC
    agg.add({"type": "summary", "finished": 17, "finished_at": "soon", "started": None,
             "started_at": "2024-06-01T08:30:00", "findings": {}})  # fmt: skip
    assert agg.reference_time() == datetime(2024, 6, 1, 8, 30, tzinfo=UTC)
    agg.add({"type": "summary", "finished": "2024-06-02T10:00:00Z", "findings": {}})
    assert agg.reference_time() == datetime(2024, 6, 2, 10, 0, tzinfo=UTC)
    agg.add({"type": "summary", "finished": ["2024-06-02"], "findings": {}})
    assert agg.reference_time() == now  # nothing readable


def test_where_a_finding_is() -> None:
    assert where("https://e/s.xml", 4) == "https://e/s.xml:4"
    assert where("https://e/s.xml", None) == "https://e/s.xml" and where(None, 3) == ""


def test_the_joiner_pairs_records_with_their_findings_in_a_bounded_window() -> None:
    emitted: list[tuple[Any, str, list[str]]] = []
    joiner = UrlJoiner(lambda rec, url, found: emitted.append(
        (rec and rec["url"], url, [f["code"] for f in found])), window=2)  # fmt: skip
    joiner.finding("a", {"url": "a", "code": "loc-whitespace"})  # an entry finding comes first
    joiner.url({"url": "a"})
    joiner.finding("a", {"url": "a", "code": "url-not-found"})  # an HTTP finding right after
    joiner.url({"url": "b"})
    joiner.url({"url": "c"})  # the window of 2 lets "a" go
    assert emitted == [("a", "a", ["loc-whitespace", "url-not-found"])]
    joiner.attach("zzz", {"url": "zzz", "code": "page-not-in-sitemap"})  # no record held: dropped
    joiner.finding("never", {"url": "never", "code": "hreflang-not-reciprocal"})
    joiner.close()
    assert emitted[1:] == [
        ("b", "b", []),
        ("c", "c", []),
        (None, "never", ["hreflang-not-reciprocal"]),
    ]


def test_a_share_is_shown_to_one_decimal_or_as_a_dash() -> None:
    # the "may read" of the agents table and the "passed" of the intent table
    assert percent(None) == "—"
    assert percent(100 / 3) == "33.3%"
    assert percent(0.0) == "0.0%"
    assert percent(100) == "100.0%"


def test_a_saved_reports_numbers_and_severities_read_as_they_came_or_not_at_all() -> None:
    # a number of either JSON type converted; a bool, a string, a list or null is none
    assert int_or_none(7) == 7 and int_or_none(7.9) == 7 and int_or_none(-2) == -2
    assert float_or_none(3) == 3.0 and isinstance(float_or_none(3), float)
    for value in (True, False, "7", [7], {"n": 7}, None):
        assert int_or_none(value) is None and float_or_none(value) is None
    # a finding's own known severity, else its code's, else info; never an error for an
    # unhashable value (a saved report is untrusted input)
    assert severity_of({"severity": "warning", "code": "url-not-found"}) == "warning"
    assert severity_of({"severity": ["error"], "code": "url-not-found"}) == "error"
    assert severity_of({"severity": {"a": 1}, "code": "no-such-code"}) == "info"
    assert severity_of({"severity": "fatal"}) == "info"


def test_a_host_statistic_as_the_tables_show_it() -> None:
    assert host_value(None) == "-" and host_value("") == "-"  # nothing to show
    assert host_value(0) == "0" and host_value(0.0) == "0.0" and host_value(False) == "no"
    assert host_value(12345) == "12,345" and host_value(2.25) == "2.2" and host_value(True) == "yes"
    assert host_value("example.com") == "example.com"


def test_findings_waiting_for_their_url_record_are_bounded_oldest_given_up_first() -> None:
    emitted: list[tuple[Any, str, list[str]]] = []
    joiner = UrlJoiner(lambda rec, url, found: emitted.append(
        (rec and rec["url"], url, [f["code"] for f in found])), pending=2)  # fmt: skip
    joiner.finding("x", {"code": "a"})
    joiner.finding("y", {"code": "b"})
    joiner.finding("x", {"code": "c"})  # x waits already: nothing is given up
    assert emitted == []
    joiner.finding("z", {"code": "d"})  # a third URL: the oldest, x, is given up
    assert emitted == [(None, "x", ["a", "c"])]
    joiner.url({"url": "y"})  # y's record takes the findings that waited for it
    joiner.close()
    assert emitted[1:] == [("y", "y", ["b"]), (None, "z", ["d"])]
