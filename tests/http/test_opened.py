"""audit.http.opened: one attempt of a request whose response is read here (a sitemap
stream, a page for a body sink), and the open stream it gives. Real loopback servers."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from audit.core.config import CrawlConfig
from audit.http.addresses import PrivateGuard
from audit.http.chain import Answer
from audit.http.dispatch import WorkerDispatch
from audit.http.exchange import new_session
from audit.http.hosts import HostPool
from audit.http.opened import Opened, StreamResponse
from audit.http.retry import DONE

Server = Any
ServerFactory = Callable[[web.Application], Awaitable[Server]]
BODY = gzip.compress(b"<urlset/>" * 100)


class Collect:
    """A body sink that keeps every chunk (audit.http.exchange.BodySink)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.starts = 0
        self.ended: bool | None = None

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        self.starts += 1
        return status == 200

    def feed(self, chunk: bytes) -> bool:
        self.chunks.append(chunk)
        return True

    def end(self, *, at_eof: bool) -> None:
        self.ended = at_eof


def _app(hits: list[str]) -> web.Application:
    async def gz(request: web.Request) -> web.Response:
        hits.append(request.headers.get("Accept-Encoding", ""))
        return web.Response(
            body=BODY, headers={"Content-Type": "application/gzip", "Content-Encoding": "gzip"}
        )

    async def busy(_: web.Request) -> web.Response:
        return web.Response(status=503, text="busy")

    async def page(_: web.Request) -> web.Response:
        return web.Response(text="<html>page</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/s.xml.gz", gz)
    app.router.add_get("/busy", busy)
    app.router.add_get("/page", page)
    return app


def _opened(session: aiohttp.ClientSession, url: str, *, stream: bool, sink: Any = None) -> Opened:
    timeout = aiohttp.ClientTimeout(total=5.0)
    headers = {"Accept-Encoding": "identity"} if stream else None
    limit = 0 if stream else 1000  # a stream's body is its reader's
    return Opened(
        session,
        "GET",
        URL(url),
        headers,
        True,
        timeout,
        limit,
        sink,
        asyncio.get_running_loop(),
        1.0,  # the hosts' --max-retry-after in these tests
    )


@pytest.fixture
def dispatch() -> WorkerDispatch:
    return WorkerDispatch(CrawlConfig(fetch_workers=0), PrivateGuard(), "t", ())


async def test_a_stream_stays_open_and_gives_the_raw_bytes(
    aiohttp_server: ServerFactory, dispatch: WorkerDispatch
) -> None:
    hits: list[str] = []
    server = await aiohttp_server(_app(hits))
    url = str(server.make_url("/s.xml.gz"))
    host = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0).get(url)
    async with new_session("t", aiohttp.ClientTimeout(total=5), limit=4, per_host=4) as session:
        answer = Answer(url)
        step = await _opened(session, url, stream=True).attempt(answer, host, True, dispatch)
        assert step == DONE
        assert answer.status == 200 and answer.resp is not None and answer.elapsed_ms > 0
        response = StreamResponse(
            url, url, 200, answer.headers, (), None, None, 1, answer.elapsed_ms, answer.resp
        )
        body = b"".join([chunk async for chunk in response.iter_chunks()])
        assert body == BODY  # not inflated: the parser sniffs the gzip itself
        assert response.bytes_read == len(BODY)
        assert response.header("content-encoding") == "gzip"
        assert response.header_all("Content-Type") == ["application/gzip"]
        response._close()
    assert hits == ["identity"]


async def test_a_retryable_answer_is_discarded_and_the_last_one_kept(
    aiohttp_server: ServerFactory, dispatch: WorkerDispatch
) -> None:
    server = await aiohttp_server(_app([]))
    url = str(server.make_url("/busy"))
    host = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0).get(url)
    async with new_session("t", aiohttp.ClientTimeout(total=5), limit=4, per_host=4) as session:
        opened = _opened(session, url, stream=True)
        retried = Answer(url)
        assert await opened.attempt(retried, host, True, dispatch) != DONE
        assert retried.status is None and retried.resp is None
        last = Answer(url)
        assert await opened.attempt(last, host, False, dispatch) == DONE
        assert last.status == 503  # the last attempt's answer is kept, as a value
        assert last.resp is not None
        last.resp.close()
    assert host.stats().server_errors == 2


async def test_a_page_goes_to_its_sink(
    aiohttp_server: ServerFactory, dispatch: WorkerDispatch
) -> None:
    server = await aiohttp_server(_app([]))
    url = str(server.make_url("/page"))
    host = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0).get(url)
    sink = Collect()
    async with new_session("t", aiohttp.ClientTimeout(total=5), limit=4, per_host=4) as session:
        answer = Answer(url)
        step = await _opened(session, url, stream=False, sink=sink).attempt(
            answer, host, False, dispatch
        )
    assert step == DONE and answer.status == 200 and answer.resp is None
    assert sink.starts == 1 and b"".join(sink.chunks) == b"<html>page</html>"
    assert sink.ended is True
    assert answer.body == b"<html>page</html>"


async def test_a_connection_failure_is_a_value(dispatch: WorkerDispatch) -> None:
    url = "http://127.0.0.1:9/never"  # the discard port: nothing listens
    host = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0).get(url)
    async with new_session("t", aiohttp.ClientTimeout(total=5), limit=4, per_host=4) as session:
        answer = Answer(url)
        await _opened(session, url, stream=True).attempt(answer, host, False, dispatch)
    assert answer.status is None and answer.error is not None
    assert answer.error.kind == "connect"
