"""The adaptive rate of one host (issue 22.2): a burst of 429s halves it once, not once per
answer already in flight; good answers bring it back, never past --rate or robots.txt."""

from __future__ import annotations

import asyncio
import bisect
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.http.hosts import MIN_RATE, RECOVER_AFTER, TURN_CREDIT, Host, Pacer


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


# --- the pace of a limited group (Pacer) -------------------------------------------------


def _turns(rate: float, lateness: list[float]) -> list[float]:
    """The times a Pacer's turns are taken when every wait ends `lateness[k]` late (a timer
    of a busy loop), the first turn at 0."""
    pacer, now, taken = Pacer(rate), 0.0, []
    for late in lateness:
        while wait := pacer.turn(now):
            now += wait + late
        taken.append(now)
    return taken


@settings(max_examples=300, deadline=None)
@given(
    rate=st.sampled_from([1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 199.0]),
    late=st.lists(st.floats(0.0, 2.0), min_size=2, max_size=120),
)
def test_any_one_second_window_holds_at_most_rate_plus_one_turns(
    rate: float, late: list[float]
) -> None:
    """However late the timers wake (up to two intervals each), no 1-s window holds more
    than R + 1 turns: what a pacer that never bursts shows (contracts/manysites.md)."""
    taken = _turns(rate, [share / rate for share in late])
    for first, start in enumerate(taken):
        inside = bisect.bisect_left(taken, start + 1.0) - first
        assert inside <= int(rate) + 1


@settings(max_examples=200, deadline=None)
@given(
    rate=st.sampled_from([2.0, 10.0, 50.0]),
    late=st.lists(st.floats(0.0, 0.9 * TURN_CREDIT), min_size=2, max_size=200),
)
def test_turns_taken_a_little_late_keep_the_schedule(rate: float, late: list[float]) -> None:
    """Timers that wake less than TURN_CREDIT of an interval late cost no turns: n turns are
    taken within (n - 1) intervals plus the last lateness. (A bucket that counts from when
    each turn was taken, as aiolimiter's does, loses every lateness: 47.5 turns a second at
    --rate 50 on a busy loop.)"""
    taken = _turns(rate, [share / rate for share in late])
    assert taken[-1] <= (len(taken) - 1 + TURN_CREDIT) / rate + 1e-9


async def test_a_pacer_spaces_the_turns_of_a_real_loop() -> None:
    """acquire() sleeps on the running loop until the turn is due (the first: at once)."""
    pacer = Pacer(20.0)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(6):
        await pacer.acquire()
    assert loop.time() - start >= 5 / 20.0 - 0.005


async def test_a_pacer_serves_its_waiters_in_line() -> None:
    """Many checks waiting on one pace take their turns in the order they came, one every
    interval, with only the first in line on a timer."""
    pacer = Pacer(50.0)
    loop = asyncio.get_running_loop()
    order: list[tuple[int, float]] = []

    async def wait(n: int) -> None:
        await pacer.acquire()
        order.append((n, loop.time()))

    await asyncio.gather(*(wait(n) for n in range(10)))
    assert [n for n, _ in order] == list(range(10))
    times = [t for _, t in order]
    assert times[-1] - times[0] >= 9 / 50.0 - 0.005
