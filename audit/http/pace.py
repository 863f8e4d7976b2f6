"""The pace of a politeness group: when its next request may go.

Below BURST_FROM requests a second, an even pace (`Pacer`) of one turn every 1/rate s
that keeps its schedule when a turn is taken a little late; above it, aiolimiter's bucket
with BURST_WINDOW seconds' worth of requests at once (the same average rate; at 100,000/s
a burst of one would park nearly every request on a 10-microsecond timer). Built inside
the running loop by audit.http.hosts.Group, which holds one per group.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded by limiter_for when a rate needs it: importing aiolimiter costs
    # about 13 ms of start-up (its importlib.metadata), which a run that requests nothing,
    # or only at a low rate, never pays
    from aiolimiter import AsyncLimiter

__all__ = ["BURST_FROM", "BURST_WINDOW", "TURN_CREDIT", "Pacer", "limiter_for", "next_due"]

BURST_WINDOW = 0.01  # seconds of requests a fast limiter lets through at once
BURST_FROM = 2 / BURST_WINDOW  # below this rate the burst is one request
# How late (a share of the interval) a turn may be taken and the pace still keep its
# schedule. Under one interval, any 1-s window still holds at most R + 1 turns (the gap
# between turns k and k+m is at least m/R - TURN_CREDIT/R); the rest of the interval is
# left for the time between taking a turn and writing the request (contracts/manysites.md).
TURN_CREDIT = 0.25


def next_due(due: float, now: float, interval: float) -> float:
    """When the turn after one due at `due` and taken at `now` is due: one interval after
    `due` if the turn was taken at most TURN_CREDIT of an interval late (or early), else
    (later, or the first turn after idling) one interval after `now`."""
    return (due if now - due <= TURN_CREDIT * interval else now) + interval


class Pacer:
    """An even pace of `rate` turns a second, one at a time, that keeps its schedule.

    The next turn is due one interval after the previous turn was due, or, if that one
    was taken more than TURN_CREDIT of an interval late, one interval after it was taken.
    A leaky bucket of one (aiolimiter's) counts from when each turn was taken, so every
    timer that wakes late pushes all later turns back: measured, 47.5 turns a second at
    --rate 50.
    """

    __slots__ = ("_due", "_interval", "_line")

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate
        self._due = -math.inf  # loop time of the next turn (the first: at once)
        self._line = asyncio.Lock()

    def turn(self, now: float) -> float:
        """Take the turn at time `now` if it is due (0.0), else the seconds until it is."""
        due = self._due
        if due > now:
            return due - now
        self._due = next_due(due, now, self._interval)
        return 0.0

    async def acquire(self) -> None:
        """Wait for the next turn and take it, first come first served."""
        loop = asyncio.get_running_loop()
        # only the lock's holder sleeps on a timer: the others wait in line, woken one at
        # a time (a batch's 100 checks all sleeping to the same turn woke 99 for nothing)
        async with self._line:
            while wait := self.turn(loop.time()):
                await asyncio.sleep(wait)


def limiter_for(rate: float) -> Pacer | AsyncLimiter:
    """The limiter of a finite rate: an even pace below BURST_FROM/s, BURST_WINDOW's worth
    of requests at once above."""
    if rate < BURST_FROM:
        return Pacer(rate)
    from aiolimiter import AsyncLimiter  # once per host (see the import above)

    burst = max(1, int(rate * BURST_WINDOW))
    return AsyncLimiter(burst, burst / rate)
