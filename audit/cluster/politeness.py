"""Per-host politeness across the cluster, held by the driver: each host's URL checks wait
here and go out as batches, on at most `lanes` lanes of one host (one, unless --rate is
above what one worker sends: LANE_RATE), each lane at rate/lanes.

A lane may have `ahead` batches out: the next one waits on the lane's worker while the
previous one runs (the driver pins a lane to one worker, which runs its batches one at a
time), so a group's next batch starts without waiting for the driver to see the previous
one's answer. A batch goes out ahead only once a full batch is waiting; the lane's
first batch goes out with what there is.

A Dask lock or semaphore would be held by a dead worker until the scheduler notices
(measured: a host blocked 31 s); a count kept by the driver is released as soon as the
batch's future answers or fails, whatever happened to its worker.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BATCH_MAX", "BATCH_SECONDS", "LANE_RATE", "HostLanes", "batch_size", "lanes_for"]

LANE_RATE = 500.0  # requests/second one worker lane sends to a host without trouble
BATCH_SECONDS = 2.0  # a batch holds about this many seconds of a lane's requests
BATCH_MAX = 500  # and never more URLs than this (an unlimited rate)

Item = dict[str, Any]
Send = Callable[[str, list[Item], float, int], Awaitable[list[Item]]]


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
    rate: float
    busy: dict[int, int] = field(default_factory=dict)  # its lanes' batches out (0, 1, ...)
    waiting: deque[tuple[Item, asyncio.Future[Item]]] = field(default_factory=deque)


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

    async def check(self, host: str, rate: float, item: Item) -> Item:
        """The answer to one URL check of `host` (whose rate is `rate` now)."""
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = _Host(rate)
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
        size = batch_size(lane_rate, self._batch)
        while state.waiting:
            # an idle lane first, else (a full batch waiting) the least busy one below ahead
            out, lane = min((state.busy.get(lane, 0), lane) for lane in range(lanes))
            if out and (out >= self._ahead or len(state.waiting) < size):
                return  # every lane has what it may have
            batch = [state.waiting.popleft() for _ in range(min(size, len(state.waiting)))]
            batch = [(item, fut) for item, fut in batch if not fut.done()]
            if not batch:
                continue
            state.busy[lane] = state.busy.get(lane, 0) + 1
            run = self._run(host, state, batch, lane_rate, lane)
            task = asyncio.get_running_loop().create_task(run)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(
        self,
        host: str,
        state: _Host,
        batch: list[tuple[Item, asyncio.Future[Item]]],
        lane_rate: float,
        lane: int,
    ) -> None:
        try:
            answers = await self._send(host, [item for item, _ in batch], lane_rate, lane)
            for (_, future), answer in zip(batch, answers, strict=True):
                if not future.done():
                    future.set_result(answer)
        except BaseException as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc if isinstance(exc, Exception) else ClusterStopped())
            if not isinstance(exc, Exception):
                raise
        finally:
            state.busy[lane] -= 1
            if not state.busy[lane]:
                del state.busy[lane]
            self._pump(host, state)

    async def aclose(self) -> None:
        """Cancel the batches still out (an interrupted run); send nothing more."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class ClusterStopped(Exception):
    """The cluster run stopped before this URL's batch answered."""
