"""Fetch worker processes: a crawl's plain HTTP exchanges on another CPU core.

Why: a large crawl is bound by one core, and most of that core is aiohttp's own
per-request work (building the request, parsing the answer, the event loop). A worker
process runs only `exchange.exchange()`, one request and its answer; the parent keeps
everything that decides: politeness (the in-flight slot and rate are taken in the parent
before an exchange is sent, so a worker never adds requests the host would not get
anyway), retries and backoff, Retry-After, redirects, robots.txt and every check. So a run
with workers sends the same requests, under the same per-host limits, as one without.

What goes to a worker: plain exchanges (HEAD, and GET with a bounded body excerpt), and
page GETs whose body sink is a `RemoteSink` (exchange.py): the worker rebuilds the sink
from its recipe, reads and parses the page there, and answers with the sink's outcome
(and the body's first BODY_EXCERPT bytes), which the parent's sink accepts. Sitemap streams and pages for a sink
that is not remote stay in the parent. A worker builds sinks only from the modules the
parent allows (settings "sink_modules"); a recipe it will not or cannot build is refused
before any request is sent, and the parent reads that page itself (one warning per reason).

Protocol, over the worker's stdin and stdout: frames of a 4-byte big-endian length and a
`marshal`ed list (marshal: core types only, no code, fast; a request's headers are a dict
or None, as the client's send path makes them). Parent to worker: a request
`(id, method, url, headers, verify, body_limit, retryable)`, a page request
`(id, "GET", url, headers, verify, body_limit, retryable, recipe)` or a cancel
`(id,)`. Worker to parent: `(id, *Exchange)` for a request, `(id, *Exchange, accepted)` for
a page request, where `accepted` is None (the sink was not started), `[outcome]`, or a
string: the refusal's reason. Its first frame, an empty list, says it is ready. Messages
are batched per event-loop turn. The worker exits at the end of its stdin.

A worker that dies or never starts costs nothing but speed: its pending exchanges answer
None and the client runs them, and the rest of the run, in its own process.

Imports the standard library and audit.http.exchange (the `Exchange` shape) only; never
the client, which imports this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import marshal
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, cast

from audit.http.exchange import Exchange, Recipe, module_allowed, recipe_modules

__all__ = ["FetchWorkers", "auto_worker_count"]

log = logging.getLogger("audit.http")

_LEN: Final = 4  # bytes of a frame's length prefix
START_TIMEOUT: Final = 30.0  # seconds for a worker to import and say it is ready
STOP_TIMEOUT: Final = 5.0  # seconds for a worker to exit after its stdin closes
HANG_GRACE: Final = 2.0  # seconds beyond two timeouts before a silent worker is killed
_STDERR_KEEP: Final = 2048  # bytes of a worker's stderr kept for the message if it dies


AUTO_MAX: Final = 4


def auto_worker_count() -> int:
    """Workers for `--fetch-workers auto`: one per core this process may use, up to
    AUTO_MAX, and none on one core (there a worker would only add its pipe to the work).

    One per core, not one in all: measured on 2 cores (bench/RESULTS.md), one worker
    leaves both processes waiting on each other half the time, while two keep the HTTP
    work on both cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, AUTO_MAX) if cores >= 2 else 0


def frame(messages: list[Any]) -> bytes:
    payload = marshal.dumps(messages)
    return len(payload).to_bytes(_LEN, "big") + payload


def split_frames(buf: bytearray) -> list[Any]:
    """The messages of the complete frames at the start of `buf`, removed from it."""
    messages: list[Any] = []
    pos, end = 0, len(buf)
    while end - pos >= _LEN:
        size = int.from_bytes(buf[pos : pos + _LEN], "big")
        if end - pos - _LEN < size:
            break
        messages.extend(marshal.loads(buf[pos + _LEN : pos + _LEN + size]))
        pos += _LEN + size
    del buf[:pos]
    return messages


class _Worker(asyncio.SubprocessProtocol):
    """The parent's end of one worker process."""

    # Set by connection_made, which asyncio calls before loop.subprocess_exec returns: a
    # worker whose exec failed is dropped (FetchWorkers._spawn), so every worker kept has them
    _transport: asyncio.SubprocessTransport
    _stdin: asyncio.WriteTransport

    def __init__(self, loop: asyncio.AbstractEventLoop, on_gone: Callable[[_Worker], None]) -> None:
        self.loop = loop
        self._on_gone = on_gone
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.ready = loop.create_future()  # True at the worker's first frame, False if it dies
        self.alive = True
        self.exchanges = 0
        self.last_heard = loop.time()
        self.hung = False
        self._buf = bytearray()
        self._stderr = bytearray()
        self._outbox: list[Any] = []
        self.exited = asyncio.Event()  # set when the process ended (asyncio says so once)

    # --- asyncio.SubprocessProtocol -------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not subclass asyncio's; they have the same methods
        self._transport = cast(asyncio.SubprocessTransport, transport)
        self._stdin = cast(asyncio.WriteTransport, self._transport.get_pipe_transport(0))

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self._stderr += data
            del self._stderr[:-_STDERR_KEEP]
            return
        self.last_heard = self.loop.time()
        self._buf += data
        try:
            replies = split_frames(self._buf)
        except (ValueError, EOFError, TypeError):  # a garbled pipe: treat the worker as gone
            self.gone()
            return
        if not self.ready.done():
            self.ready.set_result(True)
        self._deliver(replies)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.gone()

    def process_exited(self) -> None:
        self.gone()
        self.exited.set()

    # --- the parent's side ------------------------------------------------------------

    def _deliver(self, replies: list[Any]) -> None:
        """Answer the requests still waiting (a cancelled one's late reply is dropped)."""
        pending = self.pending
        for reply in replies:
            future = pending.pop(reply[0], None)
            if future is not None and not future.done():
                self.exchanges += 1
                future.set_result(reply[1:])

    def cancel(self, rid: int) -> None:
        """The parent no longer waits for `rid`: the worker drops it (the slot is released
        in the parent)."""
        if self.pending.pop(rid, None) is not None:
            self.send((rid,))

    def gone(self) -> None:
        """The worker ended (or is treated as ended): its waiting requests answer None."""
        if not self.alive:
            return
        self.alive = False
        if not self.ready.done():
            self.ready.set_result(False)
        for future in self.pending.values():
            if not future.done():
                future.set_result(None)
        self.pending.clear()
        self._on_gone(self)

    def send(self, message: tuple[Any, ...]) -> None:
        if not self._outbox:
            self.loop.call_soon(self._flush)  # one frame per event-loop turn
        self._outbox.append(message)

    def _flush(self) -> None:
        outbox, self._outbox = self._outbox, []
        if self.alive and not self._stdin.is_closing():
            self._stdin.write(frame(outbox))

    def why_gone(self) -> str:
        if self.hung:
            return "it answered nothing for too long and was stopped"
        lines = bytes(self._stderr).decode("utf-8", "replace").strip().splitlines()
        if lines:  # its last words (not blank: the text was stripped)
            return lines[-1]
        code = self._transport.get_returncode()
        return "it stopped answering" if code is None else f"exit code {code}"

    def close_input(self) -> None:
        if not self._stdin.is_closing():
            self._stdin.close()

    async def stop(self) -> None:
        """After `close_input()`: wait a little for the process to exit, else kill it."""
        try:
            await asyncio.wait_for(self.exited.wait(), STOP_TIMEOUT)
        except TimeoutError:
            self.kill()
        self.gone()
        self.close()

    def kill(self) -> None:
        if self._transport.get_returncode() is None:
            self._transport.kill()

    def close(self) -> None:
        self._transport.close()

    @property
    def pid(self) -> int:
        return self._transport.get_pid()


class FetchWorkers:
    """`count` worker processes for one HttpClient. `start()` them (in a task: it waits for
    imports), then `exchange()` while `ready`; `aclose()` at the end."""

    def __init__(self, count: int, settings: Mapping[str, Any]) -> None:
        self.count = max(1, count)
        self.settings = dict(settings)
        self._workers: list[_Worker] = []
        self._live: list[_Worker] = []
        self._next_id = 0
        self._turn = 0
        self._watchdog: asyncio.Task[None] | None = None
        self._sink_modules: list[str] = list(self.settings.get("sink_modules", ()))
        self._refusals: set[str] = set()  # reasons already warned about
        # a worker that answers nothing for this long while requests wait is hung (SIGSTOP,
        # a stuck interpreter): every exchange ends within the timeout, failed or not
        self.hang_after = 2.0 * float(self.settings.get("timeout", 30.0)) + HANG_GRACE
        self.ready = False

    async def start(self) -> bool:
        """Spawn the workers and wait until each says it is ready; True if any is."""
        loop = asyncio.get_running_loop()
        await self._spawn(loop)
        for worker in self._workers:
            if await self._started(worker):
                self._live.append(worker)
        self.ready = bool(self._live)
        self._watchdog = loop.create_task(self._watch())  # (while any lives: none, it ends)
        return self.ready

    async def _spawn(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start `count` processes, fewer if the system refuses one."""
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        # the worker imports this very package, wherever it was imported from
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (package_root, env.get("PYTHONPATH"))))
        args = json.dumps(self.settings)
        for _ in range(self.count):
            worker = _Worker(loop, self._lost)
            try:
                await loop.subprocess_exec(
                    lambda w=worker: w,  # type: ignore[misc]
                    sys.executable,
                    "-m",
                    "audit.http.fetchworker",
                    args,
                    env=env,
                )
            except OSError as exc:
                log.warning("sitemap-audit: cannot start a fetch worker (%s); fetching here", exc)
                break
            self._workers.append(worker)

    @staticmethod
    async def _started(worker: _Worker) -> bool:
        """Wait for the worker's first frame; one that does not send it in time is killed."""
        ok = False  # (not in time: TimeoutError)
        with contextlib.suppress(TimeoutError):
            ok = await asyncio.wait_for(asyncio.shield(worker.ready), START_TIMEOUT)
        if not ok:
            worker.kill()
            log.warning(
                "sitemap-audit: a fetch worker did not start (%s); fetching here",
                worker.why_gone(),
            )
        return bool(ok)

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while self._live:
            await asyncio.sleep(min(1.0, self.hang_after / 4))
            now = loop.time()
            for worker in list(self._live):
                if worker.pending and now - worker.last_heard > self.hang_after:
                    worker.hung = True
                    worker.kill()  # its exit hands its pending requests back (gone)

    @property
    def exchanges(self) -> int:
        """Exchanges answered by the workers so far."""
        return sum(w.exchanges for w in self._workers)

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    def _lost(self, worker: _Worker) -> None:
        if worker not in self._live:
            return  # still starting (start() reports it), or closed: aclose empties _live first
        self._live.remove(worker)
        self.ready = bool(self._live)
        log.warning(
            "sitemap-audit: a fetch worker stopped (%s); its requests go on in this process",
            worker.why_gone(),
        )

    def exchange(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None,
        verify: bool,
        body_limit: int,
        retryable: bool,
    ) -> Awaitable[Exchange | None]:
        """`exchange.exchange()` in a worker; None when no worker can run it (then the caller
        runs it itself). Returns the coroutine to await: no frame more per exchange."""
        return self._ask((method, url, headers, verify, body_limit, retryable))

    async def exchange_into(
        self,
        url: str,
        headers: dict[str, str] | None,
        verify: bool,
        body_limit: int,
        retryable: bool,
        recipe: Recipe,
    ) -> tuple[Exchange, list[Any] | None] | None:
        """`exchange.exchange_into()` in a worker, into the sink `recipe` builds there:
        (the Exchange, None or [the sink's outcome]); None when no worker can run it or
        the recipe is refused (then the caller reads the page itself)."""
        # checked here too, so that a refused recipe never costs a round trip
        for module in recipe_modules(recipe):
            if not module_allowed(module, self._sink_modules):
                self._refused(
                    f"body sink module {module!r} is not among the allowed sink modules "
                    f"{self._sink_modules}"
                )
                return None
        reply = await self._ask(("GET", url, headers, verify, body_limit, retryable, recipe))
        if reply is None:
            return None
        *outcome, accepted = reply
        if isinstance(accepted, str):
            self._refused(accepted)
            return None
        return cast(Exchange, tuple(outcome)), accepted

    def _refused(self, reason: str) -> None:
        if reason not in self._refusals:
            self._refusals.add(reason)
            log.warning(
                "sitemap-audit: a fetch worker refused a page's body sink (%s); such pages "
                "are read in this process",
                reason,
            )

    async def _ask(self, request: tuple[Any, ...]) -> Any:
        """Send `request` (without its id) to the next worker and wait for its reply (after
        the id); None when no worker can run it."""
        live = self._live
        if not live:
            return None
        self._turn = (self._turn + 1) % len(live)  # the next worker, in turn
        worker = live[self._turn]
        self._next_id += 1
        rid = self._next_id
        future: asyncio.Future[Any] = worker.loop.create_future()
        if not worker.pending:  # the hang clock runs only while requests wait
            worker.last_heard = worker.loop.time()
        worker.pending[rid] = future  # the reply (after the id) or None if the worker dies
        worker.send((rid, *request))
        try:
            return await future
        except asyncio.CancelledError:
            worker.cancel(rid)
            raise

    async def aclose(self) -> None:
        """End every worker: close its input, wait a little, then kill it."""
        self.ready = False
        if self._watchdog is not None:
            self._watchdog.cancel()
        workers, self._live = self._workers, []  # _workers stay: their counts are the stats
        if workers:
            log.debug(
                "sitemap-audit: %d fetch worker(s) ran %d exchanges", len(workers), self.exchanges
            )
        for worker in workers:
            worker.close_input()
        for worker in workers:
            await worker.stop()
