"""The frontier: one queue per politeness group, and workers on whichever group is ready.

The expanders put listed URLs in; the workers take them out. Each job goes into the queue
of its host, and each host belongs to a group (its politeness object: `Host.group` of
audit.http.hosts, the host itself by default). A worker takes the next job of a group
that three things allow now: the group's rate (the frontier paces each group's dispatches
at its current rate: one at a time, or BURST_WINDOW's worth above BURST_FROM/s, as the
group's limiter does), its "not before" deadline (Retry-After) and its
in-flight cap (URL checks of the group in flight). A group that waits for its turn sleeps
on a timer and holds no worker; a group at its cap waits until one of its checks is done.
So a slow, backed-off or rate-limited group never delays the URLs of another group.

The hosts of one group take turns (round robin); each host's jobs leave in the order they
came in, and groups ready at once take turns too.

Back-pressure: a producer waits when a host's queue holds `per_lane` jobs and all
queues `soft` (until that host's queue is drained to the low-water mark, then it fills up
in one go), or when all queues hold `total`. Below `soft`, a full host's queue takes more,
so that one sitemap listing many hosts one after the other (or many targets at once)
starts every host early rather than one by one. Memory stays flat whatever the size of
the site.

`close()` says no more jobs come; `get()` then answers None once every queue is empty.
`idle()` waits until no job is queued or being checked (every job put so far is done):
the run's listed URLs are all checked, and a stage that adds jobs of its own (the link
crawl's pages) may begin; their jobs go through the same queues and workers.

The pacing here spaces the *dispatches*; the request still takes its turn at the group's
limiter (retries, sitemaps and robots.txt take turns there too), so politeness never
depends on this module. Without pacing (a cluster: the batches are paced on the workers;
validate), only the caps and the order apply.

Of the HTTP layer it reads only the group's `rate` and `not_before`, and the burst the
group's limiter allows above BURST_FROM requests a second (audit.http.pace).
"""

from __future__ import annotations

import asyncio
import heapq
import math
from collections import deque
from typing import Any, Final, Generic, Protocol, TypeVar

from audit.http.pace import BURST_FROM, BURST_WINDOW, next_due

__all__ = ["LANE_LOW", "LANE_MAX", "TOTAL_MAX", "GroupFrontier", "Pace"]

LANE_MAX: Final = 1000  # jobs queued for one host before its producer may wait...
LANE_LOW: Final = 750  # ... till the host's queue is drained to this
TOTAL_SOFT: Final = 50_000  # ... which it does only once this many are queued in all
TOTAL_MAX: Final = 200_000  # jobs queued over every host: past this, every producer waits

T = TypeVar("T")


class Pace(Protocol):
    """What the frontier reads of a politeness group (audit.http.hosts.Group)."""

    @property
    def rate(self) -> float: ...  # requests/second now; math.inf: unlimited

    @property
    def not_before(self) -> float: ...  # loop time before which it sends nothing


class _Group:
    __slots__ = ("cap", "in_flight", "lanes", "next_at", "pace", "queued", "state")

    def __init__(self, pace: Pace | None, cap: float) -> None:
        self.pace = pace
        self.cap = cap
        self.in_flight = 0
        self.next_at = 0.0  # loop time of the group's next dispatch
        self.lanes: deque[_Lane[Any]] = deque()  # its hosts with jobs queued, in turn
        self.queued = 0
        self.state = _IDLE


class _Lane(Generic[T]):
    __slots__ = ("group", "jobs", "putters", "queued")

    def __init__(self, group: _Group) -> None:
        self.group = group
        self.jobs: deque[T] = deque()
        self.queued = False  # in its group's `lanes`
        self.putters: deque[asyncio.Future[None]] = deque()


_IDLE, _READY, _TIMED, _FULL = 0, 1, 2, 3  # a group: no jobs, ready, on a timer, at its cap


class GroupFrontier(Generic[T]):
    """Per-host queues of jobs, grouped for politeness; see the module docstring."""

    def __init__(
        self,
        *,
        cap: float = math.inf,
        pacing: bool = True,
        per_lane: int = LANE_MAX,
        low: int = LANE_LOW,
        soft: int = TOTAL_SOFT,
        total: int = TOTAL_MAX,
    ) -> None:
        self._cap = cap
        self._pacing = pacing
        self._per_lane = max(1, per_lane)
        self._low = min(max(0, low), self._per_lane - 1)
        self._total_max = max(1, total)
        self._soft = min(max(0, soft), self._total_max)
        self._groups: dict[object, _Group] = {}
        self._lanes: dict[object, _Lane[T]] = {}
        self._ready: deque[_Group] = deque()
        self._timed: list[tuple[float, int, _Group]] = []  # (loop time, seq, group)
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf
        self._getters: deque[asyncio.Future[None]] = deque()
        self._putters: deque[asyncio.Future[None]] = deque()  # waiting on `total`
        self._idlers: deque[asyncio.Future[None]] = deque()  # waiting for `idle()`
        self._loop: asyncio.AbstractEventLoop | None = None
        self.total = 0  # jobs queued now
        self.busy = 0  # jobs taken and not done yet
        self.closed = False

    def __len__(self) -> int:
        return self.total

    # --- in -------------------------------------------------------------------------

    def lane(self, host: object, group: object, pace: Pace | None) -> _Lane[T]:
        """The queue of `host` (any hashable key), in the group `group` paced by `pace`
        (None: no pacing, only the cap)."""
        lane = self._lanes.get(host)
        if lane is None:
            g = self._groups.setdefault(group, _Group(pace, self._cap))
            lane = self._lanes[host] = _Lane(g)
        return lane

    def try_put(self, lane: _Lane[T], job: T) -> bool:
        """Queue `job` when its lane and the frontier have room (no coroutine)."""
        total = self.total
        if total >= self._total_max or (len(lane.jobs) >= self._per_lane and total >= self._soft):
            return False
        self._append(lane, job)
        return True

    async def put(self, lane: _Lane[T], job: T) -> None:
        while not self.try_put(lane, job):
            full = self.total >= self._total_max
            waiters = self._putters if full else lane.putters
            await self._wait(waiters)

    def _append(self, lane: _Lane[T], job: T) -> None:
        lane.jobs.append(job)
        self.total += 1
        group = lane.group
        group.queued += 1
        if not lane.queued:
            lane.queued = True
            group.lanes.append(lane)
        if group.state == _IDLE:
            group.state = _READY
            self._ready.append(group)
            _wake_one(self._getters)  # (none waiting: it returns at once)

    def close(self) -> None:
        """No more jobs: idle workers are told so once every queue is empty."""
        self.closed = True
        _wake_all(self._getters)

    # --- out ------------------------------------------------------------------------

    def take(self) -> T | None:
        """The next job a group allows now, or None (without waiting)."""
        ready = self._ready
        if self._timed and self._timed[0][0] <= self._now():
            self._due()  # groups whose turn came go after those already ready
        while True:
            if not ready and not (self._timed and self._due()):
                return None
            group = ready.popleft()
            if group.in_flight >= group.cap:
                group.state = _FULL
                continue
            pace = group.pace
            if self._pacing and pace is not None:
                rate = pace.rate
                not_before = pace.not_before
                if rate != math.inf or not_before:
                    now = self._now()
                    # a fast group may go BURST_WINDOW ahead, as its limiter lets it
                    slack = BURST_WINDOW if rate >= BURST_FROM else 0.0
                    at = max(group.next_at - slack, not_before)
                    if at > now:
                        self._sleep(group, at)
                        continue
                    if rate == math.inf:
                        group.next_at = 0.0
                    else:
                        # the rule of the group's Pacer: a turn a little late keeps the
                        # schedule, a later one starts it again
                        group.next_at = next_due(group.next_at, now, 1.0 / rate)
            return self._pop(group)

    def _pop(self, group: _Group) -> T:
        lanes = group.lanes
        lane: _Lane[T] = lanes.popleft()
        job = lane.jobs.popleft()
        if lane.jobs:
            lanes.append(lane)  # the group's hosts take turns
        else:
            lane.queued = False
        self.total -= 1
        self.busy += 1
        group.queued -= 1
        group.in_flight += 1
        if group.queued:
            self._ready.append(group)  # groups take turns
        else:
            group.state = _IDLE
        n = len(lane.jobs)
        if lane.putters and n <= self._low:
            _wake_all(lane.putters)
        if self._putters and self.total <= self._total_max - (self._per_lane - self._low):
            _wake_all(self._putters)
        if self._getters and (self._ready or (self.closed and not self.total)):
            _wake_one(self._getters)  # more work is ready: another idle worker takes it
        return job

    def starved(self) -> bool:
        """Jobs are queued and no worker waits for one: another worker would take one."""
        return bool(self.total) and not self._getters

    async def get(self) -> T | None:
        """The next job a group allows, waiting for one; None once closed and empty."""
        while True:
            job = self.take()
            if job is not None:
                return job
            if self.closed and not self.total:
                _wake_one(self._getters)  # every idle worker is told, one by the other
                return None
            self._arm()  # an idle worker never waits on a sleeping group without a timer
            await self._wait(self._getters)

    def done(self, lane: _Lane[T]) -> None:
        """A job of `lane` is checked: its group's in-flight slot is free again."""
        group = lane.group
        group.in_flight -= 1
        self.busy -= 1
        if group.state == _FULL:
            group.state = _READY
            self._ready.append(group)
            _wake_one(self._getters)  # (none waiting: it returns at once)
        if self._idlers and not self.busy and not self.total:
            _wake_all(self._idlers)

    async def idle(self) -> None:
        """Wait until no job is queued or being checked."""
        while self.busy or self.total:
            await self._wait(self._idlers)

    # --- timers ---------------------------------------------------------------------

    def _now(self) -> float:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop.time()

    def _sleep(self, group: _Group, at: float) -> None:
        group.state = _TIMED
        self._seq += 1
        heapq.heappush(self._timed, (at, self._seq, group))
        self._arm()

    def _arm(self) -> None:
        """A timer at the first sleeping group's time, unless one rings by then."""
        if self._timed:
            at = self._timed[0][0]
            if at < self._timer_at:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer_at = at
                self._timer = asyncio.get_running_loop().call_at(at, self._ring)

    def _ring(self) -> None:
        """A timer: an idle worker takes the groups whose turn came (a busy one takes them
        at its next `take()`, and arms the timer again when it goes idle); the timer is
        set again for the next group still asleep. The loop's clock may lag the timer
        (uvloop reads it once an iteration): then it rings again at the next one."""
        self._timer, self._timer_at = None, math.inf
        if self._getters:
            if self._due():
                _wake_one(self._getters)
            self._arm()
        elif self._timed and self._timed[0][0] > self._now():
            self._arm()

    def _due(self) -> bool:
        """Move the groups whose time has come to the ready queue; True if any did."""
        now = self._now()
        timed = self._timed
        moved = False
        while timed and timed[0][0] <= now:
            group = heapq.heappop(timed)[2]
            group.state = _READY
            self._ready.append(group)
            moved = True
        return moved

    # --- waiting --------------------------------------------------------------------

    @staticmethod
    async def _wait(waiters: deque[asyncio.Future[None]]) -> None:
        fut = asyncio.get_running_loop().create_future()
        waiters.append(fut)
        try:
            await fut
        except BaseException:
            fut.cancel()
            if fut in waiters:
                waiters.remove(fut)
            else:  # woken, then cancelled: pass the wake-up on (to none, if none waits)
                _wake_one(waiters)
            raise


def _wake_all(waiters: deque[asyncio.Future[None]]) -> None:
    for fut in waiters:
        if not fut.done():
            fut.set_result(None)
    waiters.clear()


def _wake_one(waiters: deque[asyncio.Future[None]]) -> None:
    while waiters:
        fut = waiters.popleft()
        if not fut.done():
            fut.set_result(None)
            return
