"""The driver side of --cluster: a Dask client (and a LocalCluster for `local:N`), the
fence of this run, and `ClusterCheck`, the run's URL check that sends each allowed URL
to the cluster through the host lanes and delivers its answer like a local check.

Each batch is one Dask task under a key of its own; its result is taken and the future
released at once, so the scheduler keeps no stored result that a dead worker would make
it compute again. A group's lane is pinned to one worker (the one with the fewest lanes
when it sends its first batch): its batches all go there, the next one while the
previous one runs (HostLanes' `ahead`), and the worker runs them one at a time on the
lane's rate limiter, so the next batch starts on the lane's next turn, not a driver round
trip later. A batch may run on its lane's worker only (Dask's work stealing would run it
beside the batch still running there, doubling the group's rate). A worker killed
mid-batch: its batches wait in Dask for a worker that is gone; the driver sees it gone
(WATCH_EVERY), pins the lane to another worker and sends them again there. One answer per
URL (one url record each); the requests repeated are the killed batch's.

Until the cluster is up (connected, the workers warm), the driver makes each group's
checks itself, through its own politeness (HostLanes.serve_here; measured on 100 hosts at
--rate 50: the first request came 1.1-1.7 s after the launch on a cluster, 0.3-0.6 s in
one process). Not with a fence to take over (--state): a dead run's batches may still be
out, and nothing may go before they stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import math
import secrets
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from audit.cluster.codec import answer_from, pack, unpack
from audit.cluster.politeness import HostLanes
from audit.cluster.spec import INSTALL_HINT, parse_spec
from audit.cluster.task import FENCE_EVERY, FENCE_KEY, answer_job, loop_kind, run_batch, warm
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.core.evidence import Evidence

if TYPE_CHECKING:
    from audit.http.hosts import Host
    from audit.pipeline.context import Extra, RunContext, UrlJob

__all__ = ["DRIVER_WINDOW", "Cluster", "ClusterCheck", "ClusterError"]

# Dask threads of a local worker process: a batch leaves the pool as soon as it starts
# (task.run_batch secedes) and runs on the process's one loop for batches, so these only
# start batches; they do not bound how many groups a worker serves at once
LOCAL_SLOTS = 4
# URL checks the driver keeps out at once (waiting on the cluster): per group about three
# batches, one running, one waiting on its worker and the next filling up, so 100 groups
# at --rate 50 get batches of 2 s (at 4,096: 25 URLs, 2,000 Dask tasks for 50,000 URLs
# instead of about 700)
DRIVER_WINDOW = 32768
# batches of a lane out at once: one running on its worker, one waiting there to go next
AHEAD = 2
CONNECT_TIMEOUT = "10s"
# local:N's workers are this run's alone: no statistical profiler sampling their threads
# every 10 ms, their process monitor every 2 s rather than 0.5 s, the event-loop latency
# tick of each Dask server (scheduler, nannies, workers) every 0.5 s rather than 20 ms,
# and the nannies' memory look at their worker every 1 s rather than 0.1 s. The ticks and
# the nannies run in this process, beside the driver's own loop: measured with py-spy,
# they were an eighth of its busy time (CPU on the machine the run shares with its
# workers; a worker's 50 ticks a second also take the GIL from its batches' loop)
LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "500ms",
    "distributed.worker.memory.monitor-interval": "1s",
}
# seconds between two looks at the scheduler's workers (new ones for new lanes, a lane's
# worker gone) and between two looks of a batch at whether its worker is still there
WORKERS_EVERY = 1.0
WATCH_EVERY = 1.0


class ClusterError(TargetError):
    """The cluster cannot be used (Dask missing, scheduler unreachable): one line."""


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask distributed: {INSTALL_HINT}") from None
    return distributed


class Cluster:
    """`async with Cluster(config) as cluster:` the cluster of one run (every target)."""

    # the cluster's start, set by __aenter__: local:N's runs on while the sitemaps are read,
    # a scheduler's has ended before __aenter__ returns
    _starting: asyncio.Future[None]

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.spec = parse_spec(config.cluster or "")
        self.run = secrets.token_hex(8)
        # the fence a resumed run takes over (--state), else one of this run alone
        self.fence = config.cluster_fence or self.run
        self.batches = 0
        self.here = 0  # checks the driver made itself before the cluster was up
        self.workers_seen: set[str] = set()
        self._keys = itertools.count()
        self._local: Any = None
        self._client: Any = None
        # the hosts' lanes; their `workers` are known once the cluster is asked (__aenter__)
        self.lanes = HostLanes(self._send, workers=1, batch=config.cluster_batch, ahead=AHEAD)
        self._pins: dict[tuple[str, int], str] = {}  # (group, lane): its worker's address
        self._known: dict[str, Any] = {}  # the scheduler's workers, as last asked
        self._known_at = -math.inf
        self._warming: asyncio.Future[Any] | None = None
        self._going: asyncio.Future[None] | None = None  # up: the checks leave the driver
        self.notes: list[dict[str, Any]] = []

    async def __aenter__(self) -> Cluster:
        if self.spec.workers is not None:
            start_forkserver()  # it imports Dask in its own process while this one does
            # local:N starts while this process reads the robots.txt and the sitemaps; the
            # first batch waits for it (Dask missing: one line at once)
            self._starting = asyncio.ensure_future(self._start(_dask()))
            workers = self.spec.workers
        else:  # a scheduler that cannot be reached is one line before anything is read
            self._starting = asyncio.ensure_future(self._start(_dask()))
            await self._starting
            workers = len(self._known) or 1
        self.lanes.workers = workers
        self._going = asyncio.ensure_future(self._go_remote())
        return self

    async def _go_remote(self) -> None:
        """Once the cluster is up and its workers warm (or failed: the batches then fail
        as before), every check goes out in batches."""
        with contextlib.suppress(Exception):
            await asyncio.shield(self._starting)
        if self._warming is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._warming)
        self.lanes.go_remote()

    async def _start(self, distributed: Any) -> None:
        """Connect (a LocalCluster first for local:N), own the fence, know the workers;
        each worker imports the batch code now, while this process reads the sitemaps (a
        worker started without it imports it at its first batch: about a second)."""
        try:
            await self._connect(distributed)
            await self._take_fence()
            await self._workers()
        except BaseException:
            await self._close()
            raise
        own = self.spec.workers is not None  # local:N: the workers are this run's alone
        self._warming = asyncio.ensure_future(self._client.run(warm, own=own))

    async def _connect(self, distributed: Any) -> None:
        if self.spec.workers is not None:
            # the workers' loop: the run's kind (uvloop when installed), the batches run on it
            setting = LOCAL_WORKER_CONFIG | {"distributed.admin.event-loop": loop_kind()}
            with forkserver(distributed), dask_config(distributed, setting):
                self._local = await distributed.LocalCluster(
                    n_workers=self.spec.workers,
                    processes=True,
                    threads_per_worker=LOCAL_SLOTS,
                    dashboard_address=None,
                    # no dashboard, and the scheduler's own HTTP routes on a free port: on 8787
                    # (Dask's default, even without a dashboard) a second run warns on stderr
                    scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                    asynchronous=True,
                    silence_logs=logging.ERROR,
                )
            address = self._local.scheduler_address
        else:
            address = self.spec.address
        with dask_config(distributed, {"distributed.comm.timeouts.connect": CONNECT_TIMEOUT}):
            try:
                self._client = await distributed.Client(address, asynchronous=True)
            except OSError as exc:
                raise ClusterError(
                    f"--cluster {address}: cannot reach the scheduler: {exc}"
                ) from None
        if self.spec.workers is None:
            await self._client.wait_for_workers(1)

    async def _take_fence(self) -> None:
        """Own the fence; taken over from another run (resumed after a kill), wait until
        that run's tasks have looked at it and stopped, before sending anything."""
        before = await self._client.get_metadata([FENCE_KEY, self.fence], None)
        await self._client.set_metadata([FENCE_KEY, self.fence], self.run)
        if before and before != self.run:
            # a dead run's batch looks at the fence every FENCE_EVERY s, but a look is a
            # scheduler round trip from a worker thread: seen taking over a second under
            # load (a 0.7 s overlap at twice the rate with a wait of 2 looks), so six
            await asyncio.sleep(FENCE_EVERY * 6)

    async def __aexit__(self, *exc: object) -> None:
        await _ended(self._going)
        # local:N's start: cancelled when interrupted before the cluster was up
        failed = await _ended(self._starting)
        await _ended(self._warming)
        await self.lanes.aclose()
        if self._local is None:  # local:N's scheduler closes with this run: nothing to release
            await self._release_fence()
        await self._close()
        if isinstance(failed, Exception) and not exc[0]:  # local:N never came up
            raise ClusterError(f"--cluster {self.config.cluster}: {failed}") from None

    async def _release_fence(self) -> None:
        """Stop this run's batches still out (an interrupt), unless a newer run took over."""
        with contextlib.suppress(Exception):
            if await self._client.get_metadata([FENCE_KEY, self.fence], None) == self.run:
                await self._client.set_metadata([FENCE_KEY, self.fence], "")

    async def _close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()
            self._client = None
        if self._local is not None:
            with contextlib.suppress(Exception):
                await self._local.close()
            self._local = None

    def driver_config(self, config: CrawlConfig) -> CrawlConfig:
        """The driver's config: its worker tasks only wait on the cluster, so many more;
        no fetch worker processes of its own (its checks made before the cluster is up
        are a few seconds' worth)."""
        concurrency = max(config.concurrency, DRIVER_WINDOW)
        return dataclasses.replace(config, concurrency=concurrency, fetch_workers=0)

    def url_check(self, ctx: RunContext) -> ClusterCheck:
        """The run's URL check; until the cluster is up, made by the driver (ctx.client),
        unless a fence is to be taken over (a resumed --state run)."""
        if self.config.cluster_fence is None:

            async def here(item: dict[str, Any]) -> Any:
                self.here += 1
                # as a worker makes it: the same answer, judged the same way; its
                # requests are counted by the driver's own hosts
                return await answer_job(ctx.client, self.config, item)

            self.lanes.serve_here(here, self.config.per_host_cap)
        return ClusterCheck(ctx, self)

    def summary(self) -> dict[str, Any]:
        return {
            "spec": self.config.cluster,
            "batches": self.batches,
            "workers": len(self.workers_seen),
            "here": self.here,
        }

    async def _send(
        self, group: str, items: list[dict[str, Any]], lane_rate: float, lane: int, after: float
    ) -> list[Any]:
        """One batch on the lane's worker (again on another one if that one is gone);
        `after`: seconds its worker waits before the first request (HostLanes)."""
        batch = {
            "run": self.run,
            "fence": self.fence,
            "group": group,
            "lane": lane,  # a group's lanes never share a worker's client
            "after": after,
            "config": dataclasses.replace(
                self.config, rate=lane_rate, fetch_workers=0, cluster=None, cluster_fence=None
            ),
            "jobs": items,
        }
        blob = pack(batch)
        await asyncio.shield(self._starting)  # local:N's may still run
        while True:
            worker = await self._pin(group, lane)
            out = await self._submit(blob, worker)
            if out is not None:
                break
            if self._pins.get((group, lane)) == worker:  # its worker is gone: move the lane
                del self._pins[(group, lane)]
        self.batches += 1
        self.workers_seen.add(out["worker"])
        self.notes.extend(out["stats"])
        answers: list[Any] = out["answers"]
        return answers

    async def _workers(self) -> dict[str, Any]:
        """The scheduler's workers (address: info), asked at most every WORKERS_EVERY s."""
        now = time.monotonic()
        if now - self._known_at >= WORKERS_EVERY:
            self._known_at = now
            try:
                info = await self._client.scheduler.identity(n_workers=-1)
            except TypeError:  # a scheduler older than n_workers: it lists every worker
                info = await self._client.scheduler.identity()
            self._known = dict(info.get("workers", {}))
        return self._known

    async def _pin(self, group: str, lane: int) -> str:
        """The worker of a group's lane: the one with the fewest lanes, at its first batch."""
        pinned = self._pins.get((group, lane))
        if pinned is None:
            lanes = Counter(self._pins.values())  # a worker's pinned lanes (0: none)
            least = min(await self._workers(), key=lanes.__getitem__, default="")
            # the lane's other batch may have pinned it while this one asked
            pinned = self._pins.setdefault((group, lane), least)
        return pinned

    async def _submit(self, blob: bytes, worker: str) -> dict[str, Any] | None:
        """The batch's answer, as a Dask task on `worker` and no other; None when that
        worker is gone before it answered. The result is released as soon as taken."""
        key = f"sitemap-audit-{self.run}-{next(self._keys)}"
        future = self._client.submit(
            run_batch, blob, key=key, pure=False, workers=[worker] if worker else None
        )
        answer: asyncio.Future[bytes] = asyncio.ensure_future(future)
        try:
            while True:
                done, _ = await asyncio.wait({answer}, timeout=WATCH_EVERY)
                if done:
                    out: dict[str, Any] = unpack(answer.result())
                    return out
                if worker and worker not in await self._workers():
                    return None
        finally:
            answer.cancel()
            future.release()
            del future


async def _ended(future: asyncio.Future[Any] | None) -> object:
    """`future` cancelled unless done, and awaited: what it ended with (its result, or the
    exception it raised; None for no future)."""
    if future is None:
        return None
    future.cancel()  # (a done future stays as it ended)
    ended: list[object] = await asyncio.gather(future, return_exceptions=True)
    return ended[0]


# what local:N's fork server imports before it forks a worker
PRELOAD = ["distributed", "audit.cluster.task"]


def start_forkserver() -> None:
    """local:N's fork server started at once, before this process imports Dask (about
    0.2 s) and starts the scheduler: the server's own imports (the workers' start-up)
    then run beside those, on the machine's other core, not after them."""
    import importlib.util
    import multiprocessing
    import multiprocessing.forkserver

    if importlib.util.find_spec("distributed") is None:
        return  # _dask() says what is missing
    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    multiprocessing.forkserver.ensure_running()


def forkserver(distributed: Any) -> Any:
    """local:N's worker processes forked from a server that imported Dask and the batch
    code once (measured: four workers up in 0.4-0.5 s, where spawning each took 1.5-3.6 s
    on a busy machine; a crawl at its ideal of 10 s cannot pay that)."""
    import multiprocessing

    import dask

    setting = dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})
    distributed.utils.get_mp_context()  # Dask's own preload, set once per process
    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    return setting


def dask_config(distributed: Any, values: dict[str, Any]) -> Any:
    import dask

    return dask.config.set(values)


class ClusterCheck:
    """The run's URL check on a cluster: robots.txt, hooks and delivery as locally
    (RunContext.check_with: the standard check); the request on a worker."""

    def __init__(self, ctx: RunContext, cluster: Cluster) -> None:
        self.ctx = ctx
        self.cluster = cluster

    async def __call__(self, job: UrlJob) -> None:
        await self.ctx.check_with(job, self._answer)

    async def _answer(
        self, job: UrlJob, checked: str, headers: dict[str, str] | None, extra: Extra
    ) -> Evidence:
        host = self.ctx.client.host(checked)
        item = {
            "checked": checked,
            "headers": headers,
            "recipe": self.ctx.facts_recipe(job),  # what a page read must find
            "cap": self.ctx.config.page_cap,
        }
        answer = await self.cluster.lanes.check(host.group.key, host.rate, item)  # per group
        self._account(host)
        return _decoded(answer)

    def _account(self, host: Host) -> None:
        """Worker counters into the driver's host (the hosts record), the cluster note."""
        for stats in self.cluster.notes:
            _merge(self.ctx.client.host(stats["host"]) if stats.get("host") else host, stats)
        self.cluster.notes.clear()
        self.ctx.recorder.notes["cluster"] = self.cluster.summary()


def _merge(host: Host, stats: dict[str, Any]) -> None:
    host.requests += stats.get("requests", 0)
    host.retries += stats.get("retries", 0)
    for _ in range(stats.get("rate_limited", 0)):
        host.record_status(429)  # counted, and the host's rate halved, as a local run does
    host.server_errors += stats.get("server_errors", 0)
    host.backoff_s += stats.get("backoff_s", 0.0)
    host.notes[:] = dict.fromkeys([*host.notes, *stats.get("notes", ())])  # each once, in order


def _decoded(answer: Any) -> Evidence:
    if type(answer) is tuple:  # codec.answer_to's: the answer, and what its page said
        result, facts = answer_from(answer)
        return Evidence(result, tuple(facts) if facts is not None else None)
    if "error" in answer:
        raise ClusterError(answer["error"])
    raise ClusterError("not checked: this run's cluster fence was taken by another run")
