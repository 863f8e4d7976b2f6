"""The pace of a politeness group (audit.http.pace): an even pace that keeps its schedule
when a turn is taken a little late, within R + 1 requests in any 1-s window."""

from __future__ import annotations

import asyncio
import bisect

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.http.pace import TURN_CREDIT, Pacer, next_due


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


def test_next_due_keeps_the_schedule_for_a_turn_a_little_late_and_restarts_after() -> None:
    """The one pacing rule (the Pacer's, the frontier's dispatches', the cluster driver's
    own checks): late by at most TURN_CREDIT of an interval, or early (a fast group's
    burst), the next turn is one interval after the due one; later, after the turn taken."""
    assert next_due(10.0, 10.0 + 0.9 * TURN_CREDIT, 1.0) == 11.0
    assert next_due(10.0, 9.99, 1.0) == 11.0
    assert next_due(10.0, 10.0 + 2 * TURN_CREDIT, 1.0) == 10.0 + 2 * TURN_CREDIT + 1.0
    assert next_due(0.0, 500.0, 0.1) == 500.1  # the first turn after idling
