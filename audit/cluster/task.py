"""What a Dask worker runs: one batch of one group's URL requests, with the same code as a
local run (HttpClient.fetch, fetch_page with the driver's facts sinks), returning each
answer and what its page said as plain data: the driver judges them.

The batch runs on the run's HttpClient of this process at the rate the driver gave its
lane (kept open between batches: its connections and the lane's rate limiter). The
driver pins a lane to one worker and sends its next batch while the previous one runs:
the batches of a lane run here one after the other (a lock per lane), the next one on the
limiter's next turn. Dask never moves a pinned batch to another worker (the driver sends
it again elsewhere when its worker is gone), so one lane's batches never run on two
workers at once. Before each request, at most every FENCE_EVERY seconds, it asks
the scheduler whether its run still owns the fence: a resumed run claims it, so the tasks
of a killed driver stop instead of doubling the host's rate; a scheduler that cannot be
asked stops the batch too.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

from audit.cluster.codec import answer_to, pack, unpack
from audit.core.config import CrawlConfig
from audit.core.eventloop import NO_UVLOOP_ENV, loop_name, new_event_loop
from audit.http import HttpClient
from audit.http.exchange import SINK_MODULES, build_sink

__all__ = [
    "FENCED",
    "FENCE_EVERY",
    "FENCE_KEY",
    "Fence",
    "answer_job",
    "check_job",
    "loop_kind",
    "run_batch",
    "tune_process",
    "warm",
]

FENCE_KEY = "sitemap-audit-fence"
FENCED = {"fenced": True}  # the answer of a job its batch left: the run lost its fence
FENCE_EVERY = 0.5  # seconds between two looks at the fence (one per run and process)
FENCE_TIMEOUT = 30.0  # a look unanswered this long: the scheduler is gone, the batch stops
IDLE_CLOSE = 30.0  # a run's client closes after this many seconds without a batch
WORKER_CONNECTIONS = 1024  # connections of one run's client: every group it serves here
SWITCH_INTERVAL = 0.0005  # s: a local worker's GIL switch interval (Python's default: 0.005)
GC_THRESHOLD = (50_000, 20, 100)  # a tuned worker's collector thresholds (Python's: 700, 10, 10)


class Fence:
    """Does this batch's run still own the fence? `ask()` answers the owner's run id.

    One per run and worker process, shared by the run's batches there. The first look
    waits for the scheduler's answer; after that a look older than FENCE_EVERY is renewed
    in the background while the batches go on with the last answer, so a scheduler round
    trip never stalls every group of the process at once."""

    def __init__(self, run: str, ask: Callable[[], Any]) -> None:
        self.run = run
        self._ask = ask
        self._checked = -math.inf
        self._owned = True
        self._looking: asyncio.Future[bool] | None = None

    async def owned(self) -> bool:
        if self._owned and time.monotonic() - self._checked >= FENCE_EVERY:
            if self._looking is None:
                self._looking = asyncio.ensure_future(self._renew())
            if self._checked == -math.inf:  # never looked yet: wait for the answer
                await asyncio.shield(self._looking)
        return self._owned

    async def _renew(self) -> bool:
        try:
            self._owned = await asyncio.to_thread(self._look)
            self._checked = time.monotonic()
            return self._owned
        finally:
            self._looking = None

    def _look(self) -> bool:
        try:
            return bool(self._ask() == self.run)
        except Exception:  # the scheduler is gone: the driver that wants these answers too
            return False


def _scheduler_fence(name: str) -> Callable[[], Any]:
    """The scheduler's answer, asked through the worker's own connection to it (on the
    worker's loop; a worker client would be one connection more, opened at the first
    batch)."""
    from distributed import get_worker  # in a worker task

    worker = get_worker()
    loop = worker.loop.asyncio_loop

    def ask() -> Any:
        look = worker.scheduler.get_metadata(keys=[FENCE_KEY, name], default=None)
        return asyncio.run_coroutine_threadsafe(look, loop).result(timeout=FENCE_TIMEOUT)

    return ask


# The event loop of this worker process on which every batch runs: the worker's own when
# it is the kind of loop a run makes (local:N's workers run on uvloop: Cluster asks Dask
# for it), else one of its own in a thread, started by the first batch (a worker started
# by hand, on Dask's default loop). Measured on local:2 (server stamps, two rounds): on
# the worker's loop the hosts' median rate went from 41 and 36 requests a second to 45
# and 40 (a limit of 50), the time lost in gaps over 40 ms halved, and the run's CPU
# fell, the batches no longer taking the GIL in turns with the thread of Dask's loop
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def loop_kind() -> str:
    """The loop a run makes here ('uvloop' or 'asyncio'), without making one
    (audit.core.eventloop.new_event_loop's choice)."""
    if os.environ.get(NO_UVLOOP_ENV) or importlib.util.find_spec("uvloop") is None:
        return "asyncio"
    return "uvloop"


def _batches_loop(worker_loop: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop:
    global _loop
    if loop_name(worker_loop) == loop_kind():
        return worker_loop
    with _loop_lock:
        if _loop is None:
            _loop = new_event_loop()
            threading.Thread(target=_loop.run_forever, name="sitemap-audit", daemon=True).start()
        return _loop


def run_batch(blob: bytes) -> bytes:
    """Dask task: check every job of the batch packed in `blob` (one group); its answers
    in the jobs' order, packed (codec.pack: one frame each way, which Dask neither walks
    nor sizes)."""
    from distributed import get_worker, secede

    batch = unpack(blob)
    worker = get_worker()
    address = worker.address
    ask = _scheduler_fence(batch["fence"])
    loop = _batches_loop(worker.loop.asyncio_loop)
    secede()  # a batch waits on its group's rate, not on a thread: its slot goes to the next
    out = asyncio.run_coroutine_threadsafe(_on_loop(batch, ask), loop).result()
    out["worker"] = address
    return pack(out)


def warm(own: bool = False) -> None:
    """Run on every worker when a run starts: unpickling it has imported this module and
    the HTTP layer, so the run's first batches do not wait for the imports.

    `own`: the worker is this run's alone (local:N), so its process is tuned as the CLI
    tunes its own (audit/cli/main.py): the cyclic collector's passes rarer, with what is
    loaded now frozen out of them (measured: full collections every few hundred requests,
    each walking Dask's heap, with Dask's GC diagnosis reading /proc at each), and a
    shorter GIL switch interval, so that the batches' loop takes its turn within 0.5 ms
    of the worker's other threads (a batch's task thread, a fence look) rather than 5 ms
    (a lane's turn that comes late is lost: the limiter lets no burst).

    An own worker's Dask logs are silenced as LocalCluster's `silence_logs` silences the
    run's process (its nanny's logger is all Dask silences in the worker process): at the
    end of a run a worker's heartbeat to the closing scheduler can fail, and its logged
    traceback would be the run's stderr (contracts/manysites.md: no Dask warnings)."""
    if own:
        import logging

        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        tune_process()


def tune_process() -> None:
    """A worker process that serves audits tuned as the CLI tunes its own: the cyclic
    collector's passes rarer, what is loaded now frozen out of them, and the GIL's switch
    interval SWITCH_INTERVAL (see `warm`). For local:N's workers and for those started by
    `sitemap-audit worker` (audit.cluster.worker's preload); never a caller's process."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    sys.setswitchinterval(SWITCH_INTERVAL)


class _WhileBatches:
    """A plain `dask worker` (started without audit.cluster.worker's preload) tuned while
    this process runs batches, and given its own settings back when the last one ends.

    The batches there run on a loop of their own in a thread, taking the GIL in turns with
    Dask's loop; at Python's 5 ms switch interval a group's turn comes late and is lost.
    With the preload's two settings (GIL switch interval, collector thresholds), measured
    on the 100-host bench's workers: 11.42 s against 12.17 s and 4.8 CPU s against 5.8
    (bench/results/CLUSTER.md). Scoped to the batches, so the worker's other work runs
    with its own settings between runs; a tuned worker (preload, local:N) is left alone.
    On the batches loop only."""

    def __init__(self) -> None:
        self.batches = 0
        self.saved: tuple[float, tuple[int, int, int]] | None = None

    def enter(self) -> None:
        self.batches += 1
        if self.batches == 1 and sys.getswitchinterval() > SWITCH_INTERVAL:
            self.saved = (sys.getswitchinterval(), gc.get_threshold())
            sys.setswitchinterval(SWITCH_INTERVAL)
            gc.set_threshold(*GC_THRESHOLD)

    def leave(self) -> None:
        self.batches -= 1
        if not self.batches and self.saved is not None:
            switch, threshold = self.saved
            self.saved = None
            sys.setswitchinterval(switch)
            gc.set_threshold(*threshold)


_while_batches = _WhileBatches()


@dataclass(slots=True)
class _Open:
    """A run's HttpClient kept open on this worker between batches: the connections to
    each host stay, and each group's limiter."""

    client: HttpClient
    busy: int = 0
    used: float = 0.0


# On the batches loop only: the run's clients, by (run, lane rate, lane); its fence; the
# lock each lane's batches take in turn, by (run, group, lane)
_clients: dict[tuple[str, float, int], _Open] = {}
_fences: dict[str, Fence] = {}
_turns: dict[tuple[str, str, int], _Turn] = {}


@dataclass(slots=True)
class _Turn:
    """A lane's batches on this worker, one at a time in the order they came."""

    lock: asyncio.Lock
    users: int = 0


_sweep: asyncio.TimerHandle | None = None


async def _on_loop(batch: dict[str, Any], ask: Callable[[], Any]) -> dict[str, Any]:
    """The batch on this process's client of its run (opened by the run's first batch)."""
    config: CrawlConfig = batch["config"]
    run = batch["run"]
    fence = _fences.setdefault(run, Fence(run, ask))
    key = (run, config.rate, batch.get("lane", 0))
    held = _clients.get(key)
    if held is None:  # every group of the run on this worker: many more connections
        concurrency = max(config.concurrency, WORKER_CONNECTIONS)
        held = _clients[key] = _Open(HttpClient(replace(config, concurrency=concurrency)))
        await held.client.__aenter__()
        _arm_sweep()
    lane = (run, batch.get("group", ""), batch.get("lane", 0))
    turn = _turns.setdefault(lane, _Turn(asyncio.Lock()))
    held.busy += 1
    turn.users += 1
    _while_batches.enter()
    try:
        async with turn.lock:
            if batch.get("after"):  # the group's last request made by the driver: an interval
                await asyncio.sleep(batch["after"])
            return await check_batch(batch, fence, held.client)
    finally:
        _while_batches.leave()
        held.busy -= 1
        held.used = time.monotonic()
        turn.users -= 1
        if not turn.users:
            del _turns[lane]


def _arm_sweep() -> None:
    global _sweep
    if _sweep is None:
        _sweep = asyncio.get_running_loop().call_later(IDLE_CLOSE, _swept)


def _swept() -> None:
    """Close the clients no batch has used for IDLE_CLOSE s, and the fences of runs gone."""
    global _sweep
    _sweep = None
    now = time.monotonic()
    for key, held in list(_clients.items()):
        if not held.busy and now - held.used >= IDLE_CLOSE:
            del _clients[key]
            asyncio.get_running_loop().create_task(held.client.aclose())
    for run in _fences.keys() - {run for run, _, _ in _clients}:
        del _fences[run]
    if _clients:
        _arm_sweep()


_COUNTERS = ("requests", "retries", "rate_limited", "server_errors", "backoff_s")
_counters = attrgetter(*_COUNTERS)  # a host's counters, in that order


async def check_batch(batch: dict[str, Any], fence: Fence, client: HttpClient) -> dict[str, Any]:
    """The batch's checks on the run's client: up to the group's in-flight cap at once.
    Returns the answers and, per host of the batch, what it counted in this batch."""
    config: CrawlConfig = batch["config"]
    jobs: list[dict[str, Any]] = batch["jobs"]
    answers: list[Any] = [FENCED] * len(jobs)
    hosts = {client.host(job["checked"]) for job in jobs}
    before = {host: _counters(host) for host in hosts}
    pending = iter(enumerate(jobs))
    lanes = min(len(jobs), config.per_host_cap)
    await asyncio.gather(*(_drain(client, config, pending, answers, fence) for _ in range(lanes)))
    stats = []
    for host, counts in before.items():
        now = host.stats().to_json()
        stats.append(
            now | {n: getattr(host, n) - c for n, c in zip(_COUNTERS, counts, strict=True)}
        )
    return {"answers": answers, "stats": stats}


async def _drain(
    client: HttpClient,
    config: CrawlConfig,
    pending: Iterator[tuple[int, dict[str, Any]]],
    answers: list[Any],
    fence: Fence,
) -> None:
    for index, job in pending:
        if not await fence.owned():
            return  # the rest stay fenced: their run is over or resumed elsewhere
        answers[index] = await answer_job(client, config, job)


async def answer_job(client: HttpClient, config: CrawlConfig, job: dict[str, Any]) -> Any:
    """check_job's answer, or the error that stopped it: one URL's failure never stops
    a batch (or the driver's checks made before the cluster is up)."""
    try:
        return await check_job(client, config, job)
    except Exception as exc:
        return {"error": f"internal error: {type(exc).__name__}: {exc}"}


async def check_job(
    client: HttpClient, config: CrawlConfig, job: dict[str, Any]
) -> tuple[Any, ...]:
    """One URL's request, as a local run makes it: a plain request, or with `recipe` (the
    driver's facts sinks, joined) one GET whose body the sink built from it reads and
    parses here. The answer and what the page said go back as evidence (codec.answer_to);
    the driver judges them with the local checks and hooks (one more transport)."""
    recipe = job.get("recipe")
    if recipe is None:
        result = await client.fetch(job["checked"], headers=job["headers"])
        return answer_to(result)
    sink = build_sink(recipe, SINK_MODULES)
    result = await client.fetch_page(job["checked"], sink, cap=job["cap"], headers=job["headers"])
    return answer_to(result, sink.outcome())
