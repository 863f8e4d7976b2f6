"""The adaptive rate of one host (issue 22.2): a burst of 429s halves it once, not once per
answer already in flight; good answers bring it back, never past --rate or robots.txt."""

from __future__ import annotations

import math

from audit.http.hosts import MIN_RATE, RECOVER_AFTER, Host


def _host(rate: float = 100.0) -> Host:
    return Host("http://example.com:80", rate=rate, max_in_flight=8, retry_after_cap=120.0)


def test_a_burst_of_429s_halves_the_rate_once() -> None:
    host = _host(100.0)
    for _ in range(2):  # answers to requests that were in flight when the first 429 came
        host.record_status(429)
    assert host.rate == 50.0
    host.record_status(200)  # the burst is over
    host.record_status(429)  # a new burst
    assert host.rate == 25.0


def test_good_answers_restore_the_rate_up_to_the_configured_one() -> None:
    host = _host(100.0)
    host.record_status(429)
    host.record_status(429)
    host.record_status(429)  # a streak: marked slow, halved once more
    assert host.slow and host.rate == 25.0
    for _ in range(RECOVER_AFTER):
        host.record_status(200)
    assert host.rate == 50.0 and not host.slow
    for _ in range(5 * RECOVER_AFTER):
        host.record_status(200)
    assert host.rate == 100.0  # never above --rate


def test_recovery_stops_at_the_crawl_delay() -> None:
    host = _host(100.0)
    host.set_min_interval(0.5)  # Crawl-delay: at most 2 requests a second
    host.record_status(429)
    assert host.rate == 1.0
    for _ in range(10 * RECOVER_AFTER):
        host.record_status(200)
    assert host.rate == 2.0


def test_an_unlimited_host_recovers_to_unlimited() -> None:
    host = _host(math.inf)
    host.record_status(429)
    assert host.rate == 2.5  # halved from UNLIMITED_429_RATE
    for _ in range(20 * RECOVER_AFTER):
        host.record_status(200)
    assert math.isinf(host.rate)


def test_the_floor_holds() -> None:
    host = _host(0.3)
    host.record_status(429)
    assert host.rate == MIN_RATE
    host.record_status(200)
    host.record_status(429)
    assert host.rate == MIN_RATE


def test_a_429_that_says_when_to_come_back_does_not_halve_the_rate() -> None:
    host = _host(50.0)
    for _ in range(10):  # scattered: each one alone, its Retry-After deferred the host
        host.record_status(429, deferred=True)
        for _ in range(5):
            host.record_status(200)
    assert host.rate == 50.0 and host.rate_limited == 10
    for _ in range(3):  # a streak still slows the host down, Retry-After or not
        host.record_status(429, deferred=True)
    assert host.slow and host.rate == 25.0


def test_the_climb_back_from_the_floor_is_bounded_in_time() -> None:
    host = _host(50.0)
    while host.rate > 1.0:  # 429s without Retry-After, each one after a good answer
        host.record_status(429)
        host.record_status(200)
    host.record_status(429)
    assert host.rate < 0.5
    seconds = 0.0
    while host.rate < 50.0:  # good answers, each at the rate of its time
        seconds += 1.0 / host.rate
        host.record_status(200)
    # eight doublings, each within about RECOVER_S (2 s) of answers: not minutes
    assert seconds <= 25.0 and host.rate == 50.0 and not host.slow
