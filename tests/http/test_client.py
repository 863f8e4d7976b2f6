"""HTTP layer over real loopback servers: redirects, HEAD/GET, retries, timeouts, streams, rate."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from aiohttp import web

from audit.core.errors import FetchError
from audit.core.records import Hop
from audit.http import (
    HostPool,
    HttpClient,
    url_prefix,
)
from audit.http.hosts import Host
from audit.http.pace import Pacer, limiter_for

Server = Any  # pytest-aiohttp's TestServer
ServerFactory = Callable[[web.Application], Awaitable[Server]]


def app_with(
    *routes: tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]],
) -> web.Application:
    app = web.Application()
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    return app


def url(server: Server, path: str) -> str:
    return str(server.make_url(path))


# --- redirects ---------------------------------------------------------------------------


async def test_redirect_chain_is_recorded(aiohttp_server: ServerFactory, fast_config: Any) -> None:
    async def a(_: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/b")

    async def b(_: web.Request) -> web.Response:
        raise web.HTTPFound("/c")

    async def c(_: web.Request) -> web.Response:
        return web.Response(text="ok", headers={"X-Robots-Tag": "noindex"})

    server = await aiohttp_server(app_with(("*", "/a", a), ("*", "/b", b), ("*", "/c", c)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/a"))
    assert result.status == 200
    assert result.method == "HEAD"
    assert result.final_url == url(server, "/c")
    assert result.redirects == (Hop(url(server, "/a"), 301), Hop(url(server, "/b"), 302))
    assert result.error is None and result.error_kind is None
    assert result.attempts == 3  # one request per hop
    assert result.header("X-Robots-Tag") == "noindex"
    assert all(k == k.lower() for k, _ in result.headers)


@pytest.mark.parametrize("workers", [0, 1], ids=["here", "in-a-worker"])
async def test_repeated_answer_headers_are_all_kept_in_order(
    aiohttp_server: ServerFactory, fast_config: Any, workers: int
) -> None:
    async def page(_: web.Request) -> web.Response:
        response = web.Response(text="ok")
        response.headers.add("Content-Usage", "train-ai=y, search=y")
        response.headers.add("X-Robots-Tag", "noarchive")
        response.headers.add("Content-Usage", "train-ai=n")
        return response

    server = await aiohttp_server(app_with(("*", "/p", page)))
    config = fast_config(fetch_workers=workers, fetch_workers_after=0)
    async with HttpClient(config) as client:
        assert (await client.fetch(url(server, "/p"))).status == 200  # starts a worker
        assert await client.wait_fetch_workers() == bool(workers)
        result = await client.fetch(url(server, "/p"))
        assert client.worker_exchanges == workers
    assert result.status == 200 and result.error is None
    named = [(k, v) for k, v in result.headers if k in ("content-usage", "x-robots-tag")]
    assert named == [
        ("content-usage", "train-ai=y, search=y"),
        ("x-robots-tag", "noarchive"),
        ("content-usage", "train-ai=n"),
    ]
    assert result.header_all("Content-Usage") == ["train-ai=y, search=y", "train-ai=n"]


async def test_relative_locations_resolve_against_current_url(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    async def start(_: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": "../up/page?x=1"})

    async def up(_: web.Request) -> web.Response:
        return web.Response(status=307, headers={"Location": "next"})

    async def final(_: web.Request) -> web.Response:
        return web.Response(text="done")

    server = await aiohttp_server(
        app_with(
            ("*", "/dir/sub/start", start), ("*", "/dir/up/page", up), ("*", "/dir/up/next", final)
        )
    )
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/dir/sub/start"))
    assert result.status == 200
    assert [h.url for h in result.redirects] == [
        url(server, "/dir/sub/start"),
        url(server, "/dir/up/page?x=1"),
    ]
    assert result.final_url == url(server, "/dir/up/next")


async def test_redirect_loop(aiohttp_server: ServerFactory, fast_config: Any) -> None:
    async def a(_: web.Request) -> web.Response:
        raise web.HTTPFound("/b")

    async def b(_: web.Request) -> web.Response:
        raise web.HTTPFound("/a")

    server = await aiohttp_server(app_with(("*", "/a", a), ("*", "/b", b)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/a"))
    assert result.error_kind == "redirect-loop"
    assert [h.status for h in result.redirects] == [302, 302]
    assert result.error and "/a" in result.error


async def test_redirect_limit(aiohttp_server: ServerFactory, fast_config: Any) -> None:
    async def hop(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n >= int(request.query.get("end", "99")):
            return web.Response(text="end")
        return web.Response(
            status=301, headers={"Location": f"/r/{n + 1}?end={request.query['end']}"}
        )

    server = await aiohttp_server(app_with(("*", "/r/{n}", hop)))
    async with HttpClient(fast_config()) as client:
        ten = await client.fetch(url(server, "/r/0?end=10"))
        eleven = await client.fetch(url(server, "/r/0?end=11"))
    assert ten.status == 200 and ten.error is None and len(ten.redirects) == 10
    assert eleven.error_kind == "redirect-limit"
    assert len(eleven.redirects) == 11


async def test_redirect_without_location(aiohttp_server: ServerFactory, fast_config: Any) -> None:
    async def bare(_: web.Request) -> web.Response:
        return web.Response(status=302)

    async def blank(_: web.Request) -> web.Response:
        return web.Response(status=301, headers={"Location": "  "})

    server = await aiohttp_server(app_with(("*", "/bare", bare), ("*", "/blank", blank)))
    async with HttpClient(fast_config()) as client:
        for path in ("/bare", "/blank"):
            result = await client.fetch(url(server, path))
            assert result.error_kind == "redirect-invalid", path
            assert result.status in (301, 302)
            assert len(result.redirects) == 1


@pytest.mark.parametrize(
    "location",
    ["file:///etc/passwd", "javascript:alert(1)", "ftp://example.com/x", "data:text/html,hi"],
)
async def test_redirect_to_other_scheme_not_followed(
    aiohttp_server: ServerFactory, fast_config: Any, location: str
) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(status=302, headers={"Location": location})

    server = await aiohttp_server(app_with(("*", "/{tail:.*}", handler)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/start"))
    assert result.error_kind == "redirect-scheme"
    assert seen == ["/start"]
    assert result.redirects == (Hop(url(server, "/start"), 302),)


# --- HEAD and GET ------------------------------------------------------------------------


async def test_head_405_is_confirmed_with_get(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    methods: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        methods.append(request.method)
        if request.method == "HEAD":
            return web.Response(status=405)
        return web.Response(text="x" * 10_000)

    server = await aiohttp_server(app_with(("*", "/p", handler)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/p"))
        small = await client.fetch(url(server, "/p"), method="GET", body_bytes=10)
    assert methods == ["HEAD", "GET", "GET"]
    assert result.status == 200 and result.method == "GET"
    assert result.body_head == b"x" * 2048  # the default excerpt, not the whole body
    assert result.attempts == 2
    assert small.body_head == b"x" * 10


async def test_head_lies_404_but_get_answers_200(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    async def handler(request: web.Request) -> web.Response:
        if request.method == "HEAD":
            return web.Response(status=404)
        return web.Response(text="real page")

    server = await aiohttp_server(app_with(("*", "/p", handler)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/p"))
        unconfirmed = await client.fetch(url(server, "/p"), confirm_with_get=False)
    assert result.status == 200 and result.method == "GET"
    assert result.body_head == b"real page"
    assert unconfirmed.status == 404 and unconfirmed.method == "HEAD"


async def test_pages_are_decompressed_and_headers_sent(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    got: dict[str, str] = {}

    async def handler(request: web.Request) -> web.Response:
        got.update(request.headers)
        body = gzip.compress(b"<html>hello</html>")
        return web.Response(
            body=body, headers={"Content-Encoding": "gzip", "Content-Type": "text/html"}
        )

    server = await aiohttp_server(app_with(("GET", "/p", handler)))
    config = fast_config(extra_headers=(("X-Audit", "yes"),))
    async with HttpClient(config) as client:
        result = await client.fetch(url(server, "/p"), method="GET")
    assert result.body_head == b"<html>hello</html>"
    assert got["User-Agent"] == "sitemap-audit/0.1.0"
    assert got["X-Audit"] == "yes"


async def test_invalid_url_is_a_value(fast_config: Any) -> None:
    async with HttpClient(fast_config()) as client:
        result = await client.fetch("mailto:someone@example.com")
    assert result.status is None and result.error_kind == "other"


# --- retries -----------------------------------------------------------------------------


async def test_503_then_200_succeeds_on_retry(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    calls = 0

    async def handler(_: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.Response(status=503 if calls == 1 else 200)

    server = await aiohttp_server(app_with(("*", "/p", handler)))
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(url(server, "/p"))
        (stats,) = client.host_stats()
    # the HEAD's 503 is not retried: the GET confirmation is the retry
    assert result.status == 200 and result.attempts == 2 and result.method == "GET"
    assert stats.server_errors == 1 and stats.requests == 2


async def test_persistent_500_is_the_answer_after_retries(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    calls: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(request.method)
        return web.Response(status=500, text="broken")

    server = await aiohttp_server(app_with(("*", "/p", handler)))
    async with HttpClient(fast_config(retries=1)) as client:
        result = await client.fetch(url(server, "/p"))
    # HEAD once (its error is confirmed by GET anyway), then the GET and its retry
    assert calls == ["HEAD", "GET", "GET"]
    assert result.status == 500 and result.method == "GET" and result.attempts == 3
    assert result.body_head == b"broken"


@pytest.mark.slow
async def test_429_retry_after_seconds_is_honoured(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    times: list[float] = []

    async def handler(_: web.Request) -> web.Response:
        times.append(asyncio.get_running_loop().time())
        if len(times) == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("GET", "/p", handler)))
    async with HttpClient(fast_config(rate=10)) as client:
        result = await client.fetch(url(server, "/p"), method="GET")
        (stats,) = client.host_stats()
    assert result.status == 200 and result.attempts == 2
    assert times[1] - times[0] >= 0.95  # a lower bound only: the wait cannot be shorter
    assert stats.rate_limited == 1
    assert stats.rate == 10.0  # the Retry-After deferred the host: the rate is not halved
    assert stats.backoff_s >= 0.9


async def test_retry_after_over_the_cap_is_final_at_once(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    """DESIGN (second round): a Retry-After above --max-retry-after is not waited for."""
    calls = 0

    async def handler(_: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=503, headers={"Retry-After": "999999"})
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("GET", "/p", handler)))
    async with HttpClient(fast_config(retry_after_cap=0.2)) as client:
        result = await client.fetch(url(server, "/p"), method="GET")
        (stats,) = client.host_stats()
    assert result.status == 503 and result.attempts == 1 and calls == 1
    assert stats.backoff_s == 0  # neither 999999 s nor the cap
    assert any("--max-retry-after" in note for note in stats.notes)


async def test_retry_after_http_date_in_the_past_means_now(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    calls = 0
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)

    async def handler(_: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=429, headers={"Retry-After": past})
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("GET", "/p", handler)))
    async with HttpClient(fast_config(retry_after_cap=30)) as client:
        result = await client.fetch(url(server, "/p"), method="GET")
        (stats,) = client.host_stats()
    assert result.status == 200 and result.attempts == 2
    assert stats.backoff_s < 1.0  # not a backoff-from-the-date-to-now


# --- network failures over raw sockets ----------------------------------------------------


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


@pytest.mark.slow
async def test_server_that_never_answers_times_out(raw_server: Any, fast_config: Any) -> None:
    connections = 0

    async def silent(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_request(reader)
        await asyncio.sleep(30)

    base = await raw_server(silent)
    async with HttpClient(fast_config(timeout=0.3, retries=1)) as client:
        result = await client.fetch(base + "/p")
    assert result.status is None and result.error_kind == "timeout"
    assert result.attempts == 2 and connections == 2


@pytest.mark.slow
async def test_trickling_server_hits_the_total_deadline(raw_server: Any, fast_config: Any) -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(1000):
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.05)  # each byte well inside any per-read timeout

    async def trickle_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"y" * 200:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.05)

    body_url = await raw_server(trickle) + "/p"
    head_url = await raw_server(trickle_headers) + "/p"
    async with HttpClient(fast_config(timeout=0.4, retries=0)) as client:
        body = await client.fetch(body_url, method="GET", body_bytes=1000)
        head = await client.fetch(head_url)
    assert body.status is None and body.error_kind == "timeout"
    assert head.status is None and head.error_kind == "timeout"


async def test_connection_cut_mid_response_is_retried_then_an_error(
    raw_server: Any, fast_config: Any
) -> None:
    connections = 0

    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\npartial")
        await writer.drain()
        writer.transport.abort()  # RST: the body never completes

    async def closes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()  # no answer at all

    cut_url = await raw_server(cut) + "/p"
    closed_url = await raw_server(closes) + "/p"
    async with HttpClient(fast_config(retries=2)) as client:
        result = await client.fetch(cut_url, method="GET", body_bytes=5000)
        closed = await client.fetch(closed_url, confirm_with_get=False)
    assert result.status is None and result.error_kind == "reset"
    assert connections == 3 and result.attempts == 3
    assert closed.status is None and closed.error_kind == "reset" and closed.attempts == 3


async def test_refused_connection(fast_config: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        async with HttpClient(fast_config(retries=1)) as client:
            result = await client.fetch(f"http://127.0.0.1:{port}/")
    assert result.status is None and result.error_kind == "connect" and result.attempts == 2


async def test_get_excerpt_does_not_download_a_huge_body(raw_server: Any, fast_config: Any) -> None:
    total = 64 * 1024 * 1024
    sent = 0

    async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await _read_request(reader)
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n".encode())
        block = b"z" * 65536
        while sent < total:
            writer.write(block)
            await writer.drain()
            sent += len(block)
            await asyncio.sleep(0.002)

    base = await raw_server(huge)
    async with HttpClient(fast_config()) as client:
        result = await client.fetch(base + "/big", method="GET", body_bytes=100)
        await asyncio.sleep(0.2)  # let the server notice the closed connection
    assert result.status == 200 and result.body_head == b"z" * 100
    assert sent < total // 4


# --- streams -----------------------------------------------------------------------------


async def test_stream_yields_raw_gzip_bytes(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    xml = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + (b"<url><loc>https://example.com/</loc></url>" * 5000)
        + b"</urlset>"
    )
    packed = gzip.compress(xml)
    accept: list[str | None] = []

    async def as_file(request: web.Request) -> web.Response:
        accept.append(request.headers.get("Accept-Encoding"))
        return web.Response(body=packed, content_type="application/gzip")

    async def as_encoding(request: web.Request) -> web.Response:
        accept.append(request.headers.get("Accept-Encoding"))
        return web.Response(
            body=packed, headers={"Content-Type": "application/xml", "Content-Encoding": "gzip"}
        )

    server = await aiohttp_server(
        app_with(("GET", "/sitemap.xml.gz", as_file), ("GET", "/sitemap.xml", as_encoding))
    )
    async with HttpClient(fast_config()) as client:
        for path in ("/sitemap.xml.gz", "/sitemap.xml"):
            async with client.stream(url(server, path)) as resp:
                assert resp.status == 200 and resp.error is None
                chunks = [c async for c in resp.iter_chunks()]
            assert b"".join(chunks) == packed, path
            assert resp.bytes_read == len(packed)
    assert accept == ["identity", "identity"]
    assert resp.header("content-encoding") == "gzip"


async def test_stream_redirects_retries_and_failures_are_values(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    calls = 0

    async def moved(_: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/flaky.xml")

    async def flaky(_: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=502)
        return web.Response(body=b"<urlset/>", content_type="application/xml")

    async def loop(_: web.Request) -> web.Response:
        raise web.HTTPFound("/loop.xml")

    async def missing(_: web.Request) -> web.Response:
        return web.Response(status=404, text="nope")

    server = await aiohttp_server(
        app_with(
            ("GET", "/moved.xml", moved),
            ("GET", "/flaky.xml", flaky),
            ("GET", "/loop.xml", loop),
            ("GET", "/missing.xml", missing),
        )
    )
    async with HttpClient(fast_config()) as client:
        async with client.stream(url(server, "/moved.xml")) as resp:
            body = b"".join([c async for c in resp.iter_chunks()])
            assert resp.status == 200 and body == b"<urlset/>"
            assert resp.redirects == (Hop(url(server, "/moved.xml"), 301),)
            assert resp.final_url == url(server, "/flaky.xml")
            assert resp.attempts == 3
        async with client.stream(url(server, "/loop.xml")) as resp:
            assert resp.status is None and resp.error_kind == "redirect-loop"
            assert [c async for c in resp.iter_chunks()] == []
        async with client.stream(url(server, "/missing.xml")) as resp:
            assert resp.status == 404 and resp.error is None


async def test_stream_body_broken_off_raises_from_iter_chunks(
    raw_server: Any, fast_config: Any
) -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n<urlset>")
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.transport.abort()

    base = await raw_server(cut)
    got = b""
    async with HttpClient(fast_config()) as client, client.stream(base + "/s.xml") as resp:
        assert resp.status == 200
        with pytest.raises(FetchError) as info:
            async for chunk in resp.iter_chunks():
                got += chunk
    assert got == b"<urlset>"
    assert info.value.kind == "reset"


async def test_stream_stalled_body_times_out(raw_server: Any, fast_config: Any) -> None:
    async def stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<url")
        await writer.drain()
        await asyncio.sleep(30)

    base = await raw_server(stall)
    async with HttpClient(fast_config(timeout=0.3)) as client, client.stream(base + "/s") as resp:
        with pytest.raises(FetchError) as info:
            async for _ in resp.iter_chunks():
                pass
    assert info.value.kind == "timeout"


# --- rate and concurrency ----------------------------------------------------------------


@pytest.mark.slow
async def test_rate_limit_spaces_requests_to_one_host(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    times: list[float] = []

    async def handler(_: web.Request) -> web.Response:
        times.append(asyncio.get_running_loop().time())
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("*", "/{n}", handler)))
    async with HttpClient(fast_config(rate=5)) as client:
        results = await asyncio.gather(*(client.fetch(url(server, f"/{n}")) for n in range(20)))
    assert all(r.status == 200 for r in results)
    assert len(times) == 20
    times.sort()
    # structural, generous: any one-second window holds at most rate + burst(1) requests
    for i, start in enumerate(times):
        in_window = sum(1 for t in times[i:] if t < start + 1.0)
        assert in_window <= 5 + 1, (i, in_window)


async def test_unlimited_rate_does_not_serialize(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    in_flight = 0
    peak = 0
    everyone = asyncio.Event()

    async def handler(_: web.Request) -> web.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight == 5:
            everyone.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(everyone.wait(), 3)
        in_flight -= 1
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("*", "/{n}", handler)))
    async with HttpClient(fast_config(rate=0, concurrency=5)) as client:
        results = await asyncio.gather(*(client.fetch(url(server, f"/{n}")) for n in range(5)))
    assert all(r.status == 200 for r in results)
    assert peak == 5


async def test_per_host_in_flight_cap_and_no_deadlock(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    in_flight = 0
    peak = 0

    async def handler(_: web.Request) -> web.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return web.Response(text="ok")

    server = await aiohttp_server(app_with(("*", "/{n}", handler)))
    # 30 callers against one connection per host and a one-worker connector budget
    config = fast_config(rate=0, concurrency=1, max_per_host=2, timeout=5)
    async with HttpClient(config) as client:
        results = await asyncio.gather(*(client.fetch(url(server, f"/{n}")) for n in range(30)))
    assert all(r.status == 200 for r in results)
    assert peak == 2


async def test_crawl_delay_and_429_lower_the_host_rate(fast_config: Any) -> None:
    async with HttpClient(fast_config(rate=10)) as client:
        host = client.host("http://example.test/a")
        assert host is client.host("http://EXAMPLE.test:80/b")  # one object per origin
        host.set_min_interval(0.01)  # would allow 100/s: never above --rate
        assert host.rate == 10
        host.set_min_interval(2)
        assert host.rate == 0.5
        host.record_status(429)
        assert host.rate == 0.25
        for _ in range(5):
            host.record_status(429)
        assert host.rate == 0.2  # the floor
        assert host.stats().slow


async def test_limiter_burst_is_one_at_polite_rates_and_small_at_huge_ones() -> None:
    for rate in (0.2, 5, 10, 199):
        limiter = limiter_for(rate)
        assert isinstance(limiter, Pacer)  # one turn at a time, one every 1/rate s
        assert limiter.turn(100.0) == 0.0 and limiter.turn(100.0) == pytest.approx(1 / rate)
    fast = limiter_for(100_000)  # same average rate, 10 ms worth of requests at once
    assert fast.max_rate == 1000 and fast.time_period == pytest.approx(0.01)


def test_url_prefix_and_host_memo() -> None:
    assert url_prefix("http://Example.test:80/a?b#c") == "http://Example.test:80"
    assert url_prefix("https://h.test?q=1") == "https://h.test"
    assert url_prefix("https://h.test") == "https://h.test"
    assert url_prefix("/relative") is None
    # the edges: the first "://" counts (none before it: no prefix); the authority ends
    # at the first "/", "?" or "#", whichever comes first
    assert url_prefix("://x/y") is None
    assert url_prefix("a://") == "a://"
    assert url_prefix("x://y://z/w") == "x://y:"
    assert url_prefix("http://h#f/g") == "http://h"
    assert url_prefix("http://u@h:1?x/y") == "http://u@h:1"
    pool = HostPool(rate=0, max_in_flight=1, retry_after_cap=1)
    host = pool.get("http://EXAMPLE.test/a")
    assert pool.get("http://EXAMPLE.test/b") is host  # memo hit
    assert pool.get("http://example.test:80/c") is host  # other spelling, same origin
    assert pool.get("https://example.test/a") is not host
    for bad in ("ftp://example.test/a", "http:///a"):
        with pytest.raises(ValueError):
            pool.get(bad)


async def test_host_slots_first_come_first_served_and_cancel_passes_the_slot_on() -> None:
    host = Host("http://h.test:80", rate=0, max_in_flight=1, retry_after_cap=1)
    assert host.try_acquire()  # free slot, no deadline, unlimited rate: taken at once
    assert not host.try_acquire()  # the cap is one
    order: list[str] = []

    async def take(name: str) -> None:
        await host.acquire()
        order.append(name)

    first = asyncio.create_task(take("first"))
    second = asyncio.create_task(take("second"))
    third = asyncio.create_task(take("third"))
    await asyncio.sleep(0)
    first.cancel()  # cancelled while waiting: it must not keep a place in the queue
    await asyncio.sleep(0)
    host.release()  # the slot goes to the oldest live waiter
    await asyncio.sleep(0)
    assert order == ["second"]
    host.release()  # handed to "third", which is cancelled before it runs: passed on
    third.cancel()
    await asyncio.gather(first, third, return_exceptions=True)
    assert order == ["second"]
    assert host.try_acquire()  # the slot "third" never used is free again
    assert not host.try_acquire()
    host.release()
    await second
    assert host.requests == 3  # try_acquire twice plus "second"


async def test_try_acquire_declines_when_a_wait_is_due() -> None:
    limited = Host("http://h.test:80", rate=5, max_in_flight=4, retry_after_cap=1)
    assert not limited.try_acquire()  # a finite rate always goes through the limiter
    deferred = Host("http://h.test:80", rate=0, max_in_flight=4, retry_after_cap=1)
    deferred.defer(0.05)
    assert not deferred.try_acquire()  # a Retry-After deadline is waited for
    assert deferred.requests == 0 and limited.requests == 0
