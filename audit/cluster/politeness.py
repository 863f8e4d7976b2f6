"""Per-host politeness across the cluster, held by the driver: each host's URL checks wait
here and go out as batches, on at most `lanes` lanes of one host (one, unless --rate is
above what one worker sends: LANE_RATE), each lane at rate/lanes.

A lane may have `ahead` batches out: the next one waits on the lane's worker while the
previous one runs (the driver pins a lane to one worker, which runs its batches one at a
time), so a group's next batch starts without waiting for the driver to see the previous
one's answer. A batch goes out ahead once a full batch is waiting, or a short one once
SHORT_AHEAD s have passed since the lane's last batch went out (a group's last URLs:
they would otherwise wait for the lane to be idle, a driver round trip with no request
to the group, measured as the last gap of each host); the lane's first batch goes out
with what there is.

A Dask lock or semaphore would be held by a dead worker until the scheduler notices
(measured: a host blocked 31 s); a count kept by the driver is released as soon as the
batch's future answers or fails, whatever happened to its worker.

Until the cluster is up (`serve_here`, then `go_remote`), a group's checks are made here,
by the driver, one by one in their order, at most `cap` at once, through the driver's own
politeness (its group's rate limiter): a cluster that takes a second or more to start (or
a first batch that waits on Dask to reach a worker) no longer holds back every group's
first request. Never a batch beside checks made here: a group's first batch goes out once
its last check made here has answered, and it carries `after`, the seconds its worker
waits before its first request, so that request comes at least one interval (1/rate)
after the last one made here: the worker counts `after` from the batch's arrival, which
comes after it was sent.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from audit.http.pace import next_due

__all__ = [
    "BATCH_MAX",
    "BATCH_SECONDS",
    "LANE_RATE",
    "SHORT_AHEAD",
    "HostLanes",
    "batch_size",
    "lanes_for",
]

LANE_RATE = 500.0  # requests/second one worker lane sends to a host without trouble
BATCH_SECONDS = 2.0  # a batch holds about this many seconds of a lane's requests
BATCH_MAX = 500  # and never more URLs than this (an unlimited rate)
SHORT_AHEAD = BATCH_SECONDS / 2  # s after a lane's last batch: a short one may go ahead
# The default batch of the k-th group is sized (1 - SPREAD/2 + SPREAD * frac(k * PHI)) of
# BATCH_SECONDS: groups that start together at one rate would otherwise end their batches
# together, every group of a worker at once (measured on a `dask worker`: a stall of 60-200
# ms for all its groups every 2.3 s, their answers packed and their tasks completed at
# once); spread, the boundaries fall evenly over the period
SPREAD = 0.5
PHI = 0.6180339887498949

Item = dict[str, Any]
# send(group, items, lane rate, lane, after): one batch on the cluster, its answers
Send = Callable[[str, list[Item], float, int, float], Awaitable[list[Item]]]
Here = Callable[[Item], Awaitable[Item]]  # one check made by the driver itself


def lanes_for(rate: float, workers: int) -> int:
    """Batches of one host in flight at once: one unless the rate is above one lane's."""
    if math.isinf(rate):
        return max(1, workers)
    return max(1, min(workers, math.ceil(rate / LANE_RATE)))


def batch_size(lane_rate: float, given: int | None = None) -> int:
    """URLs per batch: --cluster-batch, else BATCH_SECONDS of the lane's rate."""
    if given:
        return given
    if math.isinf(lane_rate):
        return BATCH_MAX
    return max(1, min(BATCH_MAX, math.ceil(lane_rate * BATCH_SECONDS)))


@dataclass(slots=True)
class _Host:
    rate: float  # its group's requests a second: above 0, math.inf when unlimited (hosts.py)
    busy: Counter[int] = field(default_factory=Counter)  # its lanes' batches out (0, 1, ...)
    waiting: deque[tuple[Item, asyncio.Future[Item]]] = field(default_factory=deque)
    here: int = 0  # its checks being made here (before the cluster is up)
    next_here: float = 0.0  # loop time its next check made here may start
    timer: asyncio.TimerHandle | None = None  # waking it then
    not_before: float = 0.0  # loop time: no batch request before this (one interval after)
    sent_at: float = 0.0  # loop time its last batch went out
    short: bool = False  # a short batch may go ahead now (SHORT_AHEAD passed)
    short_timer: asyncio.TimerHandle | None = None
    spread: float = 1.0  # its default batch size's factor (SPREAD)
    remote: bool = False  # its checks go out in batches now (never made here again)


class HostLanes:
    """The driver's queue of URL checks per host; `send` runs one batch on the cluster."""

    def __init__(
        self, send: Send, *, workers: int, batch: int | None = None, ahead: int = 1
    ) -> None:
        self._send = send
        self.workers = workers
        self._batch = batch
        self._ahead = max(1, ahead)  # batches out per lane: one running, the rest waiting
        self._hosts: dict[str, _Host] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._here: Here | None = None  # checks made here until go_remote()
        self._here_cap = 1
        self._remote = False
        self._up_at = 0.0  # loop time the cluster was up

    def serve_here(self, here: Here, cap: int) -> None:
        """Make the checks here (`here(item)`, at most `cap` of a group at once) until
        the cluster is up (go_remote) and, from then on, until the group has a full
        batch waiting or SHORT_AHEAD has passed."""
        self._here, self._here_cap = here, max(1, cap)

    def go_remote(self) -> None:
        """The cluster is up: a group's checks go out in batches from its first full
        batch waiting, and every group's from SHORT_AHEAD s on (a first batch sent with
        the few checks parked on a busy start waits as long on Dask as it runs)."""
        self._remote, self._up_at = True, asyncio.get_running_loop().time()
        for host, state in list(self._hosts.items()):
            self._pump(host, state)

    def _stays_here(self, state: _Host, size: int) -> bool:
        """Is the group's next check made here (asked once serve_here was called)? Until
        the cluster is up, and then until it has a full batch waiting or SHORT_AHEAD has
        passed; never again after."""
        if state.remote:
            return False
        if self._remote and (
            len(state.waiting) >= size
            or asyncio.get_running_loop().time() >= self._up_at + SHORT_AHEAD
        ):
            state.remote = True
            return False
        return True

    async def check(self, host: str, rate: float, item: Item) -> Item:
        """The answer to one URL check of `host` (whose rate is `rate` now)."""
        state = self._hosts.get(host)
        if state is None:
            spread = 1 - SPREAD / 2 + SPREAD * ((len(self._hosts) * PHI) % 1.0)
            state = self._hosts[host] = _Host(rate, spread=spread)
        state.rate = rate
        future: asyncio.Future[Item] = asyncio.get_running_loop().create_future()
        state.waiting.append((item, future))
        self._pump(host, state)
        return await future

    def _pump(self, host: str, state: _Host) -> None:
        if self._closed:
            return
        lanes = lanes_for(state.rate, self.workers)
        lane_rate = state.rate / lanes
        size = self._batch or max(1, round(batch_size(lane_rate) * state.spread))
        if self._here is not None and self._stays_here(state, size):
            self._pump_here(host, state, self._here)
            return
        if state.here:
            return  # its last checks made here answer first: never a batch beside them
        while state.waiting:
            # an idle lane first, else (a full batch waiting, or a short one after
            # SHORT_AHEAD) the least busy one below ahead
            lane = min(range(lanes), key=state.busy.__getitem__)  # (the first of the least)
            out = state.busy[lane]
            if out >= self._ahead:  # (at least 1)
                return  # every lane has what it may have
            if out and len(state.waiting) < size and not state.short:
                self._arm_short(host, state)
                return
            batch = [state.waiting.popleft() for _ in range(min(size, len(state.waiting)))]
            batch = [(item, fut) for item, fut in batch if not fut.done()]
            if not batch:
                continue
            state.busy[lane] += 1
            loop = asyncio.get_running_loop()
            state.sent_at, state.short = loop.time(), False
            after = max(0.0, state.not_before - loop.time())
            self._start(self._run(host, state, batch, lane_rate, lane, after))

    def _arm_short(self, host: str, state: _Host) -> None:
        """Let a short batch of the group go ahead SHORT_AHEAD s after its last batch."""
        if state.short_timer is None:
            loop = asyncio.get_running_loop()
            state.short_timer = loop.call_at(
                state.sent_at + SHORT_AHEAD, self._short_due, host, state
            )

    def _short_due(self, host: str, state: _Host) -> None:
        state.short_timer = None
        if asyncio.get_running_loop().time() < state.sent_at + SHORT_AHEAD:
            self._arm_short(host, state)  # a batch went out since: count from it
            return
        state.short = True
        self._pump(host, state)

    def _start(self, run: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(run)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _pump_here(self, host: str, state: _Host, here: Here) -> None:
        """Start the group's next checks here, one per interval of its rate (the
        request still takes its turn at the driver's limiter): never more than a turn or
        two queued there, so that the handover to the cluster waits for little."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        interval = 1.0 / state.rate  # between two requests (0.0 at an unlimited math.inf)
        while state.waiting and state.here < self._here_cap:
            if state.next_here > now:
                if state.timer is None:
                    state.timer = loop.call_at(state.next_here, self._ring, host, state)
                return
            item, future = state.waiting.popleft()
            if not future.done():
                state.here += 1
                state.next_here = next_due(state.next_here, now, interval)
                self._start(self._run_here(host, state, here, item, future))

    def _ring(self, host: str, state: _Host) -> None:
        state.timer = None
        self._pump(host, state)

    async def _run_here(
        self, host: str, state: _Host, here: Here, item: Item, future: asyncio.Future[Item]
    ) -> None:
        async def one() -> list[Item]:
            return [await here(item)]

        try:
            await _settle([(item, future)], one())
        finally:
            state.here -= 1
            # the next batch's first request: one interval after this one's answer at least
            state.not_before = asyncio.get_running_loop().time() + 1.0 / state.rate
            self._pump(host, state)

    async def _run(
        self,
        host: str,
        state: _Host,
        batch: list[tuple[Item, asyncio.Future[Item]]],
        lane_rate: float,
        lane: int,
        after: float = 0.0,
    ) -> None:
        items = [item for item, _ in batch]
        try:
            await _settle(batch, self._send(host, items, lane_rate, lane, after))
        finally:
            state.busy[lane] -= 1  # (a lane at 0 stays: at most `lanes` of them)
            self._pump(host, state)

    async def aclose(self) -> None:
        """Cancel the batches still out (an interrupted run); send nothing more."""
        self._closed = True
        for state in self._hosts.values():
            for timer in (state.timer, state.short_timer):
                if timer is not None:
                    timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class ClusterStopped(Exception):
    """The cluster run stopped before this URL's batch answered."""


async def _settle(
    batch: list[tuple[Item, asyncio.Future[Item]]], answers: Awaitable[list[Item]]
) -> None:
    """The checks waiting on a batch (or on a check made here) answered, in order, with
    what `answers` gives; when it raises, the checks still waiting raise it too, or
    ClusterStopped when the run was cancelled (the cancel goes on)."""
    try:
        for (_, future), answer in zip(batch, await answers, strict=True):
            if not future.done():
                future.set_result(answer)
    except BaseException as exc:
        error = exc if isinstance(exc, Exception) else ClusterStopped()
        for _, future in batch:
            if not future.done():
                future.set_exception(error)
        if not isinstance(exc, Exception):
            raise
