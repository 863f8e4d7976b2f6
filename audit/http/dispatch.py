"""Where a plain exchange runs: in this process, or in a fetch worker process once they run.

`WorkerDispatch` is the client's side of the fetch workers (workers.py): it counts the
exchanges run here and starts the workers when `config.fetch_workers_after` of them ran
(with `--fetch-workers auto`, only when the last window of exchanges needed them: they
ran fast, or this process was busy for most of the window), then hands plain exchanges
and remote-sink page reads to them while they are ready. A worker that is gone answers
None and the client runs the exchange itself. Politeness, retries and redirects stay with
the client (client.py): this module only says where one exchange runs.

Imports audit.core.config, audit.http.{addresses, exchange, workers} only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any

from audit.core.config import CrawlConfig
from audit.http.addresses import PrivateGuard
from audit.http.exchange import Exchange, Recipe, exchange, request_url, sendable
from audit.http.workers import FetchWorkers, auto_worker_count

if TYPE_CHECKING:
    import aiohttp
    from yarl import URL

__all__ = ["WorkerDispatch", "needs_workers", "worker_count"]


def needs_workers(
    began: tuple[float, float], now: tuple[float, float], window: int, config: CrawlConfig
) -> bool:
    """Did a window of `window` exchanges, from `began` to `now` (wall, CPU seconds), run
    fast enough or keep this process busy enough to want fetch workers?"""
    wall = now[0] - began[0]
    if wall <= window / config.fetch_workers_min_rate:
        return True
    return (now[1] - began[1]) >= config.fetch_workers_min_busy * wall


def worker_count(config: CrawlConfig) -> int:
    """Fetch worker processes of a run: --fetch-workers, or auto's count for this machine."""
    count = config.fetch_workers
    if count is None:
        count = auto_worker_count()
    return max(0, count)


class WorkerDispatch:
    """The fetch workers of one client: started when due, used while ready."""

    def __init__(
        self, config: CrawlConfig, guard: PrivateGuard, user_agent: str, sink_modules: Sequence[str]
    ) -> None:
        self.config = config
        self.count = worker_count(config)
        # started when due (`_counted`), used while `ready`: until then none is ready, none
        # ran an exchange, none has a pid and closing them closes nothing
        self.workers = FetchWorkers(
            self.count,
            {
                "user_agent": user_agent,
                "timeout": config.timeout,
                "concurrency": max(1, config.concurrency),
                "per_host": config.per_host_cap,
                "trusted": sorted(guard.trusted),
                "guarded": guard.active,
                "sink_modules": list(sink_modules),
                "retry_after_cap": config.retry_after_cap,
            },
        )
        self._task: asyncio.Task[bool] | None = None
        self._plain_count = 0
        # workers start once this many plain exchanges ran here: a small audit never
        # pays for a process
        self._after = config.fetch_workers_after if self.count > 0 else -1
        # auto: when the current count window began (loop time, process CPU time)
        self._window_start: tuple[float, float] | None = None

    def _counted(self) -> None:
        """One more exchange runs here. When the count reaches `_after`, start the workers,
        or with `auto`, only if the last window of exchanges needed them (measured over a
        window of the same count; a slower or idler crawl is looked at again a window
        later). (`plain` counts the others itself: no call per URL.)"""
        count, self._plain_count = self._plain_count, self._plain_count + 1
        if count != self._after:
            return
        config = self.config
        loop = asyncio.get_running_loop()
        if config.fetch_workers is None:
            now = (loop.time(), time.process_time())
            began, self._window_start = self._window_start, now
            window = max(1, config.fetch_workers_after)
            if began is None or not needs_workers(began, now, window, config):
                self._after += window
                return
        self._task = loop.create_task(self.workers.start())

    def target(self, url: str) -> URL | None:
        """The URL a request sends, parsed (ValueError for one that cannot be), or None
        while fetch workers run and `url` is one they parse without fail (`sendable`): a
        worker parses it, this process does not parse it too."""
        if self.workers.ready and sendable(url):
            return None
        return request_url(url)

    def plain(
        self,
        session: aiohttp.ClientSession,
        method: str,
        url: str,
        target: URL | None,
        headers: dict[str, str] | None,
        verify: bool,
        body_limit: int,
        retryable: bool,
    ) -> Awaitable[Exchange | None]:
        """Where a plain exchange runs: a fetch worker while they are ready, else here (and
        counted, to start the workers when due). `target`: `self.target(url)`. Returns the
        coroutine to await."""
        workers = self.workers
        if workers.ready:
            return workers.exchange(method, url, headers, verify, body_limit, retryable)
        if self._plain_count == self._after:
            self._counted()  # the workers' start is due (or looked at again)
        else:
            self._plain_count += 1
        target = target or request_url(url)  # None: the workers were ready, and are gone
        return exchange(session, method, url, target, headers, verify, body_limit, retryable)

    async def into_sink(
        self,
        url: str,
        headers: dict[str, str] | None,
        verify: bool,
        body_limit: int,
        retryable: bool,
        recipe: Recipe,
    ) -> tuple[Exchange, list[Any] | None] | None:
        """A fetch worker's read of a remote sink's page while workers are ready (None when
        none could read it); else None, and the page read here counts towards starting
        them (as a plain exchange)."""
        workers = self.workers
        if workers.ready:
            return await workers.exchange_into(url, headers, verify, body_limit, retryable, recipe)
        self._counted()
        return None

    async def wait(self) -> bool:
        """Wait until the workers, once started, are ready; True when they run."""
        task = self._task
        if task is None:
            return False
        return await asyncio.shield(task) and self.workers.ready

    @property
    def exchanges(self) -> int:
        """Exchanges that the worker processes ran (0 without workers)."""
        return self.workers.exchanges

    @property
    def pids(self) -> list[int]:
        """The worker processes started (running or not)."""
        return self.workers.pids

    async def aclose(self) -> None:
        """Stop the start-up if it still runs, then the workers."""
        task, self._task = self._task, None
        if task is not None:  # (cancelling a finished start changes nothing)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self.workers.aclose()
