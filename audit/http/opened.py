"""A request whose response the client reads itself, and the open sitemap stream it gives.

`Opened` holds the fixed parts of such a request: a sitemap stream (its final answer left
open for the caller as a `StreamResponse`) or a page GET whose body goes to a `BodySink`.
Its `attempt()` is one attempt of the client's retry loop (client.py `_send`). A stream is
read here (`read`: the host counts the status as soon as it arrives). A page is read as a
fetch worker reads it, by `exchange.exchange_into()`: in a worker while they run, for a sink
a worker can rebuild (`RemoteSink`: the sink here accepts the worker's outcome), else here;
the host then counts its status (`chain.take_exchange`). What the attempt asks of the retry
loop is returned.

Imports aiohttp (for types only), yarl, audit.core and audit.http.{chain, dispatch,
exchange, hosts, retry} only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from audit.core.errors import translate_exception
from audit.core.records import Hop, header_value, header_values
from audit.http.chain import Answer, take_exchange
from audit.http.dispatch import WorkerDispatch
from audit.http.exchange import (
    REDIRECT_STATUSES,
    BodySink,
    Recipe,
    RemoteSink,
    discard,
    exchange_into,
    release_if_read,
    response_headers,
)
from audit.http.hosts import Host
from audit.http.retry import DONE, after_error, after_status

if TYPE_CHECKING:
    import aiohttp
    from yarl import URL

__all__ = ["Opened", "StreamResponse"]


@dataclass(slots=True)
class Opened:
    """The fixed parts of a request whose response the client reads itself: a sitemap
    stream (no `sink`: left open for the caller) or a page GET whose body goes to `sink`."""

    session: aiohttp.ClientSession
    method: str
    target: URL
    headers: dict[str, str] | None
    verify: bool
    timeout: aiohttp.ClientTimeout  # a stream's (a page's is the session's own)
    body_limit: int  # 0: no body (a stream's is read by its caller)
    sink: BodySink | None
    loop: asyncio.AbstractEventLoop
    retry_after_cap: float  # --max-retry-after: a 429/503 asking longer is final at once
    recipe: Recipe | None = None  # the sink's, when a fetch worker may read the page

    async def attempt(
        self, answer: Answer, host: Host, retryable: bool, workers: WorkerDispatch
    ) -> int:
        """One attempt of this request. A stream is read here (`read`). A page GET whose
        sink a fetch worker rebuilds is read by a worker while they run, and the sink here
        accepts its outcome (if the worker started its sink); with no worker (none ready,
        one that died, a recipe refused), and for any other sink, the page is read here by
        the worker's own exchange."""
        sink = self.sink
        if sink is None:
            return await self.read(answer, host, retryable)
        if self.recipe is not None:
            reply = await workers.into_sink(
                answer.url, self.headers, self.verify, self.body_limit, retryable,
                self.recipe,
            )  # fmt: skip
            if reply is not None:
                outcome, accepted = reply
                step = take_exchange(answer, host, outcome, retryable)
                if accepted is not None:
                    cast(RemoteSink, sink).accept(accepted[0])
                return step
        outcome, _ = await exchange_into(
            self.session, answer.url, self.target, self.headers, self.verify,
            self.body_limit, retryable, self.retry_after_cap, sink,
        )  # fmt: skip
        return take_exchange(answer, host, outcome, retryable)

    async def read(self, answer: Answer, host: Host, retryable: bool) -> int:
        """One attempt of a stream: its final answer is kept open in `answer.resp` (the
        caller reads and closes it), a redirect's is given back. The host counts the status
        as soon as it arrives; what the attempt asks of the retry loop is returned."""
        loop = self.loop
        started = loop.time()
        resp: aiohttp.ClientResponse | None = None
        try:
            resp = await self.session.request(
                self.method,
                self.target,
                allow_redirects=False,
                timeout=self.timeout,
                auto_decompress=False,
                headers=self.headers,
                ssl=self.verify,
            )
            headers = response_headers(resp)
            step = after_status(host, resp.status, headers, retryable)
            if step == DONE:
                answer.status, answer.headers = resp.status, headers
                if resp.status not in REDIRECT_STATUSES:
                    answer.resp, resp = resp, None  # the caller reads and closes it
                    return DONE
            await discard(resp)
            resp = None  # given back: released, or closed
            return step
        except Exception as exc:
            err = translate_exception(exc, answer.url)
            answer.status, answer.headers, answer.body, answer.error = None, (), b"", err
            return after_error(err.kind)
        finally:
            answer.elapsed_ms = (loop.time() - started) * 1000.0
            if resp is not None:  # neither handed over nor given back
                resp.close()  # cancelled or failed half-way: never reuse the connection


class StreamResponse:
    """An open sitemap response. A failed fetch is a value: `status` None and `error` set.

    `iter_chunks()` yields the raw body (no decompression) as it arrives; a failure after the
    body started raises `FetchError` from it, so the caller keeps what it already parsed.
    """

    def __init__(
        self,
        url: str,
        final_url: str,
        status: int | None,
        headers: tuple[tuple[str, str], ...],
        redirects: tuple[Hop, ...],
        error: str | None,
        error_kind: str | None,  # as FetchResult.error_kind
        attempts: int,
        elapsed_ms: float,
        resp: aiohttp.ClientResponse | None,
    ) -> None:
        self.url = url
        self.final_url = final_url
        self.status = status
        self.headers = headers
        self.redirects = redirects
        self.error = error
        self.error_kind = error_kind
        self.attempts = attempts
        self.elapsed_ms = elapsed_ms  # until the headers arrived
        self.bytes_read = 0
        self._resp = resp

    def header(self, name: str) -> str | None:
        return header_value(self.headers, name)

    def header_all(self, name: str) -> list[str]:
        return header_values(self.headers, name)

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        """The raw body, chunk by chunk, as the socket delivers it. Raises FetchError mid-body."""
        resp = self._resp
        if resp is None:
            return
        try:  # (a failure of the reader's own code is not thrown in here: only the read's)
            async for chunk in resp.content.iter_any():  # readany() until b"": the end
                self.bytes_read += len(chunk)
                yield chunk
        except Exception as exc:
            raise translate_exception(exc, self.final_url) from exc

    def _close(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None and not release_if_read(resp):
            resp.close()
