"""What a Dask worker runs: one batch of one group's URL requests, with the same code as a
local run (HttpClient.fetch, fetch_page with the driver's facts sinks), returning each
answer and what its page said as plain data: the driver judges them.

The batch opens its own HttpClient at the rate the driver gave its lane. When the last
check is done it waits for the host's next turn (the rate limiter, a Retry-After), so the
driver's next batch for the host, which starts only after this one returned, keeps the
spacing across workers. Before each request, at most every FENCE_EVERY seconds, it asks
the scheduler whether its run still owns the fence: a resumed run claims it, so the tasks
of a killed driver stop instead of doubling the host's rate; a scheduler that cannot be
asked stops the batch too.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from audit.cluster.codec import fetch_to
from audit.core.config import CrawlConfig
from audit.http import HttpClient
from audit.http.exchange import SINK_MODULES, build_sink

__all__ = ["FENCE_EVERY", "FENCE_KEY", "Fence", "run_batch"]

FENCE_KEY = "sitemap-audit-fence"
FENCE_EVERY = 0.5  # seconds between two looks at the fence within one batch


class Fence:
    """Does this batch's run still own the fence? `ask()` answers the owner's run id."""

    def __init__(self, run: str, ask: Callable[[], Any]) -> None:
        self.run = run
        self._ask = ask
        self._checked = -FENCE_EVERY
        self._owned = True
        self._lock = asyncio.Lock()

    async def owned(self) -> bool:
        async with self._lock:
            now = time.monotonic()
            if self._owned and now - self._checked >= FENCE_EVERY:
                self._owned = await asyncio.to_thread(self._look)
                self._checked = time.monotonic()
            return self._owned

    def _look(self) -> bool:
        try:
            return bool(self._ask() == self.run)
        except Exception:  # the scheduler is gone: the driver that wants these answers too
            return False


def _scheduler_fence(name: str) -> Callable[[], Any]:
    from distributed import get_client  # in a worker task: the worker's own client

    client = get_client()
    return lambda: client.get_metadata([FENCE_KEY, name], None)


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _batches_loop() -> asyncio.AbstractEventLoop:
    """The one event loop of this worker process on which every batch runs (a thread of
    its own, started by the first batch)."""
    global _loop
    with _loop_lock:
        if _loop is None:
            from audit.core.eventloop import new_event_loop

            loop = new_event_loop()
            threading.Thread(target=loop.run_forever, name="sitemap-audit", daemon=True).start()
            _loop = loop
        return _loop


def run_batch(batch: dict[str, Any]) -> dict[str, Any]:
    """Dask task: check every job of `batch` (one group), answers in the jobs' order."""
    from distributed import get_worker, secede

    started = time.time()
    address = get_worker().address
    fence = Fence(batch["run"], _scheduler_fence(batch["fence"]))
    secede()  # a batch waits on its group's rate, not on a thread: its slot goes to the next
    done = asyncio.run_coroutine_threadsafe(check_batch(batch, fence), _batches_loop())
    out = done.result()
    out["stats"]["worker"] = address
    out["stats"]["t_start"], out["stats"]["t_end"] = started, time.time()
    return out


async def check_batch(batch: dict[str, Any], fence: Fence) -> dict[str, Any]:
    """The batch's checks on one HttpClient: up to the host's in-flight cap at once."""
    config: CrawlConfig = batch["config"]
    jobs: list[dict[str, Any]] = batch["jobs"]
    answers: list[dict[str, Any]] = [{"fenced": True}] * len(jobs)
    async with HttpClient(config) as client:
        pending = iter(enumerate(jobs))
        lanes = min(len(jobs), config.per_host_cap)
        await asyncio.gather(
            *(_drain(client, config, pending, answers, fence) for _ in range(lanes))
        )
        host = client.host(jobs[0]["checked"])
        await host.acquire(hold_slot=False)  # the host's next turn: the next batch's first
        stats = host.stats()
    return {"answers": answers, "stats": stats.to_json() | {"requests": host.requests - 1}}


async def _drain(
    client: HttpClient,
    config: CrawlConfig,
    pending: Iterator[tuple[int, dict[str, Any]]],
    answers: list[dict[str, Any]],
    fence: Fence,
) -> None:
    for index, job in pending:
        if not await fence.owned():
            return  # the rest stay fenced: their run is over or resumed elsewhere
        try:
            answers[index] = await check_job(client, config, job)
        except Exception as exc:  # one URL's failure never stops the batch
            answers[index] = {"error": f"internal error: {type(exc).__name__}: {exc}"}


async def check_job(client: HttpClient, config: CrawlConfig, job: dict[str, Any]) -> dict[str, Any]:
    """One URL's request, as a local run makes it: a plain request, or with `recipe` (the
    driver's facts sinks, joined) one GET whose body the sink built from it reads and
    parses here. The answer and what the page said go back as evidence; the driver judges
    them with the local checks and hooks (the cluster is one more transport)."""
    recipe = job.get("recipe")
    if recipe is None:
        result = await client.fetch(job["checked"], headers=job["headers"])
        return {"result": fetch_to(result), "facts": None}
    sink = build_sink(recipe, SINK_MODULES)
    result = await client.fetch_page(job["checked"], sink, cap=job["cap"], headers=job["headers"])
    return {"result": fetch_to(result), "facts": sink.outcome()}
