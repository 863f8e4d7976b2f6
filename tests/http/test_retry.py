"""The retry policy (audit/http/retry.py): the one predicate, backoff, Retry-After's forms,
and what an attempt's status or failure asks of the client's retry loop, on a real Host."""

from __future__ import annotations

from datetime import UTC, datetime

from audit.http.hosts import Host
from audit.http.retry import (
    AGAIN,
    BACKOFF,
    DONE,
    after_error,
    after_status,
    backoff_delay,
    parse_retry_after,
    should_retry,
    unavailable,
)

CAP = 60.0


def _host() -> Host:
    return Host("http://example.com:80", rate=10.0, max_in_flight=4, retry_after_cap=CAP)


def test_parse_retry_after_forms() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("120", now=now) == 120.0
    assert parse_retry_after(" 0 ", now=now) == 0.0
    assert parse_retry_after("Wed, 01 May 2024 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wednesday, 01-May-24 12:01:00 GMT", now=now) == 60.0
    assert parse_retry_after("Wed May  1 12:00:10 2024", now=now) == 10.0
    assert parse_retry_after("Tue, 30 Apr 2024 12:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("-5", now=now) is None
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None, now=now) is None


def test_one_retry_predicate() -> None:
    for status in (408, 429, 500, 502, 503, 504):
        assert should_retry(status, None)
    for status in (200, 301, 400, 403, 404, 410, 501):
        assert not should_retry(status, None)
    for kind in ("timeout", "connect", "reset"):
        assert should_retry(None, kind)
    for kind in ("dns", "tls", "redirect-loop", "redirect-limit", "other"):
        assert not should_retry(None, kind)


def test_backoff_grows_and_is_capped() -> None:
    assert backoff_delay(0, 0.5, 30, rand=0.0) == 0.25
    assert backoff_delay(0, 0.5, 30, rand=1.0) == 0.5
    assert backoff_delay(3, 0.5, 30, rand=1.0) == 4.0
    assert backoff_delay(20, 0.5, 30, rand=1.0) == 30.0


async def test_a_retry_status_backs_off_unless_the_host_was_deferred() -> None:
    host = _host()
    assert after_status(host, 500, (), retryable=True) == BACKOFF
    assert host.not_before == 0.0  # no Retry-After: nothing deferred
    assert after_status(host, 503, (("retry-after", "2"),), retryable=True) == AGAIN
    assert host.not_before > 0.0  # the whole host waits, not only this URL


async def test_no_retries_left_or_a_final_status_is_done() -> None:
    host = _host()
    assert after_status(host, 500, (), retryable=False) == DONE
    assert after_status(host, 404, (), retryable=True) == DONE
    assert after_status(host, 200, (), retryable=True) == DONE


async def test_a_retry_after_over_the_cap_is_final_at_once_and_defers_nothing() -> None:
    host = _host()
    headers = (("retry-after", str(int(CAP) * 10)),)
    assert after_status(host, 429, headers, retryable=True) == DONE
    assert host.not_before == 0.0
    assert any("--max-retry-after" in note for note in host.group.notes)  # said once, host-wide


async def test_an_unusable_retry_after_backs_off_instead() -> None:
    host = _host()
    assert after_status(host, 429, (("retry-after", "soon"),), retryable=True) == BACKOFF
    assert host.not_before == 0.0


async def test_a_retry_after_defers_the_host_with_a_usable_value_only() -> None:
    host = _host()
    assert after_status(host, 429, (), retryable=True) == BACKOFF
    assert after_status(host, 429, (("retry-after", "later"),), retryable=True) == BACKOFF
    assert host.not_before == 0.0
    assert after_status(host, 429, (("retry-after", "3"),), retryable=True) == AGAIN
    assert host.not_before > 0.0


def test_a_transient_failure_backs_off_and_a_lasting_one_is_done() -> None:
    assert after_error("reset") == BACKOFF and after_error("timeout") == BACKOFF
    assert after_error("dns") == DONE and after_error("tls") == DONE


def test_what_is_worth_another_try() -> None:
    """No answer, 429 and 5xx (an IndexNow POST tries again; a robots.txt is unreachable)."""
    assert unavailable(None) and unavailable(429) and unavailable(500)
    assert not any(unavailable(s) for s in (200, 202, 400, 403, 408, 422))
