"""A fetch worker process: runs `exchange.exchange()` and, for a page with a remote body
sink, `exchange.exchange_into()`, for its parent (see workers.py).

    python -m audit.http.fetchworker SETTINGS_JSON

SETTINGS_JSON: {"user_agent", "timeout", "concurrency", "per_host", "trusted", "guarded",
"sink_modules", "retry_after_cap"}. Requests arrive on stdin and answers leave on stdout, as
frames (workers.py). A page request's sink is built from its recipe, only from the
"sink_modules" (exchange.build_sink); one that cannot be built is refused before anything is
sent. Ctrl-C is the parent's to handle: the worker ignores SIGINT and ends when its stdin
does, cancelling what is in flight. Anything unexpected is one line on stderr, which the
parent reports.
"""

from __future__ import annotations

import asyncio
import json
import marshal
import signal
import sys
from typing import Any

from audit.http.addresses import PrivateGuard
from audit.http.exchange import (
    BuiltSink,
    Recipe,
    build_sink,
    exchange,
    exchange_into,
    new_session,
    request_url,
)
from audit.http.workers import frame, split_frames

_PREFIX = "sitemap-audit fetch worker"


async def serve(settings: dict[str, Any]) -> None:
    import aiohttp

    loop = asyncio.get_running_loop()
    session = new_session(
        str(settings["user_agent"]),
        aiohttp.ClientTimeout(total=float(settings["timeout"])),
        limit=max(1, int(settings["concurrency"])),
        per_host=max(1, int(settings["per_host"])),
        guard=PrivateGuard(frozenset(settings.get("trusted", ())), bool(settings.get("guarded"))),
    )
    tasks: dict[int, asyncio.Task[None]] = {}
    outbox: list[Any] = []
    ended = loop.create_future()

    out_transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
    allowed = [str(m) for m in settings.get("sink_modules", ())]
    retry_after_cap = float(settings.get("retry_after_cap", 0.0))

    def flush() -> None:
        batch = outbox[:]
        outbox.clear()
        if not out_transport.is_closing():
            out_transport.write(frame(batch))

    def reply(message: tuple[Any, ...]) -> None:
        if not outbox:
            loop.call_soon(flush)  # one frame per event-loop turn
        outbox.append(message)

    async def run(rid: int, method: str, url: str, headers: Any, verify: bool, body_limit: int,
                  retryable: bool) -> None:  # fmt: skip
        try:
            outcome = await exchange(
                session, method, url, request_url(url), headers, verify, body_limit, retryable,
            )  # fmt: skip
        except Exception as exc:  # never lose an answer: the parent is waiting for it
            outcome = (None, (), b"", f"fetch worker failed on {url}: {exc!r}", "other", 0.0)
        finally:
            tasks.pop(rid, None)
        reply((rid, *outcome))

    async def run_into(rid: int, method: str, url: str, headers: Any, verify: bool,
                       body_limit: int, retryable: bool, recipe: Recipe) -> None:  # fmt: skip
        try:
            sink = build_sink(recipe, allowed)
        except Exception as exc:  # refused before anything is sent: the parent reads it
            tasks.pop(rid, None)
            reply((rid, None, (), b"", "", None, 0.0, _refusal(recipe, exc)))
            return
        try:
            outcome, fed = await exchange_into(
                session, url, request_url(url), headers, verify, body_limit,
                retryable, retry_after_cap, sink,
            )  # fmt: skip
            accepted = _outcome_of(sink, recipe) if fed else None
        except Exception as exc:  # never lose an answer: the parent is waiting for it
            outcome = (None, (), b"", f"fetch worker failed on {url}: {exc!r}", "other", 0.0)
            accepted = None
        finally:
            tasks.pop(rid, None)
        reply((rid, *outcome, accepted))

    class Input(asyncio.Protocol):
        def __init__(self) -> None:
            self.buf = bytearray()

        def data_received(self, data: bytes) -> None:
            self.buf += data
            for message in split_frames(self.buf):
                if len(message) == 1:  # a cancel: the parent no longer waits for it
                    task = tasks.pop(message[0], None)
                    if task is not None:
                        task.cancel()
                elif len(message) == 8:  # a page for a remote body sink
                    tasks[message[0]] = loop.create_task(run_into(*message))
                else:
                    tasks[message[0]] = loop.create_task(run(*message))

        def eof_received(self) -> bool | None:
            if not ended.done():
                ended.set_result(None)
            return None

        def connection_lost(self, exc: Exception | None) -> None:
            if not ended.done():
                ended.set_result(None)

    await loop.connect_read_pipe(Input, sys.stdin.buffer)
    sys.stdout = sys.stderr  # the pipe carries frames only: a stray print must not garble it
    out_transport.write(frame([]))  # an empty first frame: ready
    try:
        await ended
    finally:
        for task in list(tasks.values()):
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        await session.close()
        out_transport.close()


def _refusal(recipe: Recipe, exc: Exception) -> str:
    """Why a recipe was not built, in one line for the parent's warning."""
    return f"cannot build {recipe[0]!r}: {exc}" if str(exc) else f"{recipe[0]!r}: {exc!r}"


def _outcome_of(sink: BuiltSink, recipe: Recipe) -> list[Any] | str:
    """[the sink's outcome], or a refusal when it has none that can cross the pipe (a bug
    in the sink: the parent then reads the page again itself)."""
    try:
        outcome = sink.outcome()
        marshal.dumps(outcome)  # checked here: one bad outcome must not garble a batch
    except Exception as exc:
        return _refusal(recipe, exc)
    return [outcome]


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        settings = json.loads(argv[1])
        from audit.core.eventloop import new_event_loop

        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(serve(settings))
    except Exception as exc:
        print(f"{_PREFIX}: error: {exc!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
