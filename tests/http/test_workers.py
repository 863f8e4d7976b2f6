"""Fetch worker processes (audit/http/workers.py): the same answers as in-process fetching,
the same politeness, and a worker that dies, never starts or is interrupted loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.core.config import CrawlConfig
from audit.core.records import FetchResult
from audit.http import HttpClient
from audit.http.workers import auto_worker_count
from tests.crawlkit import HTML, XML, Serve, Site, audit, urlset

Server = Any  # pytest-aiohttp's TestServer
ServerFactory = Callable[[web.Application], Awaitable[Server]]

WORKER = {"fetch_workers": 1, "fetch_workers_after": 0}
IN_PROCESS = {"fetch_workers": 0}


def comparable(result: FetchResult) -> dict[str, Any]:
    out = asdict(result)
    out.pop("elapsed_ms")
    out["headers"] = sorted((k, v) for k, v in result.headers if k not in ("date", "server"))
    return out


class Scenario:
    """A site whose answers depend only on the request (and per-run counters), so two runs,
    one in-process and one through a worker, must give the same results."""

    def __init__(self) -> None:
        self.tries: dict[str, int] = {}
        self.seen: list[tuple[str, str, str | None]] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append((request.method, request.raw_path, request.headers.get("Authorization")))
        path = request.path
        key = f"{request.query.get('run')}:{path}"
        self.tries[key] = self.tries.get(key, 0) + 1
        if path == "/ok":
            return web.Response(
                text="<html>ok</html>",
                headers={
                    "Last-Modified": "Tue, 03 Nov 2026 10:00:00 GMT",
                    "X-Robots-Tag": "noindex",
                },
            )
        if path == "/gone":
            return web.Response(status=404, text="gone " * 1000)
        if path == "/moved":
            raise web.HTTPMovedPermanently(f"/ok?run={request.query.get('run')}")
        if path == "/loop-a":
            raise web.HTTPFound(f"/loop-b?run={request.query.get('run')}")
        if path == "/loop-b":
            raise web.HTTPFound(f"/loop-a?run={request.query.get('run')}")
        if path == "/flaky":  # 503 twice, then fine
            if self.tries[key] <= 2:
                return web.Response(status=503, text="busy")
            return web.Response(text="fine")
        if path == "/later":  # 429 with Retry-After once
            if self.tries[key] == 1:
                return web.Response(status=429, headers={"Retry-After": "0"})
            return web.Response(text="now")
        if path == "/no-head":
            if request.method == "HEAD":
                return web.Response(status=405)
            return web.Response(text="get only")
        if path == "/zipped":
            body = gzip.compress(b"<html>" + b"z" * 5000 + b"</html>")
            return web.Response(body=body, headers={"Content-Encoding": "gzip"})
        if path == "/slow":
            await asyncio.sleep(3)
            return web.Response(text="late")
        if path == "/broken":  # headers promise more body than comes: a reset mid-body
            resp = web.StreamResponse(headers={"Content-Length": "100000"})
            await resp.prepare(request)
            await resp.write(b"x" * 10)
            assert request.transport is not None
            request.transport.close()
            return resp
        return web.Response(status=404, text="no such page")


PATHS = [
    "/ok",
    "/gone",
    "/moved",
    "/loop-a",
    "/flaky",
    "/later",
    "/no-head",
    "/zipped",
    "/slow",
    "/caf%C3%A9/x",  # escapes kept as listed
    "/café/y z",  # raw non-ASCII and a space: quoted as a browser does
]


async def fetch_all(client: HttpClient, base: str, run: str) -> dict[str, dict[str, Any]]:
    results = await asyncio.gather(
        *(client.fetch(f"{base}{p}?run={run}") for p in PATHS),
        client.fetch(f"{base}/gone?run={run}", method="GET", body_bytes=100),
        client.fetch(f"{base}/broken?run={run}", method="GET"),
    )
    return {
        path: _untag(comparable(result), f"run={run}")
        for path, result in zip([*PATHS, "/gone-get", "/broken-get"], results, strict=True)
    }


def _untag(value: Any, tag: str) -> Any:
    """The run's tag, in URLs, Location headers and messages, is the one expected difference."""
    if isinstance(value, str):
        return value.replace(tag, "run=*")
    if isinstance(value, dict):
        return {k: _untag(v, tag) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_untag(v, tag) for v in value]
    return value


@pytest.mark.slow
async def test_a_worker_gives_the_answers_of_in_process_fetching(
    serve: Serve, fast_config: Callable[..., CrawlConfig]
) -> None:
    scenario = Scenario()
    base = await serve(scenario)
    async with HttpClient(fast_config(timeout=1.0, **IN_PROCESS)) as client:
        here = await fetch_all(client, base, "here")
        assert client.worker_exchanges == 0 and client.worker_pids == []
    async with HttpClient(fast_config(timeout=1.0, **WORKER)) as client:
        await client.fetch(f"{base}/ok?run=warmup")  # starts the worker
        assert await client.wait_fetch_workers()
        remote = await fetch_all(client, base, "remote")
        served = client.worker_exchanges
    assert remote == here
    # every request of the second batch went through the worker (the warm-up did not)
    remote_requests = sum(1 for _, path, _ in scenario.seen if "run=remote" in path)
    assert remote_requests > len(PATHS)
    assert served == remote_requests
    statuses = {path: row["status"] for path, row in remote.items()}
    assert statuses["/ok"] == 200 and statuses["/flaky"] == 200 and statuses["/later"] == 200
    assert remote["/slow"]["error_kind"] == "timeout"
    assert remote["/loop-a"]["error_kind"] == "redirect-loop"
    assert remote["/zipped"]["status"] == 200
    assert remote["/gone-get"]["body_head"] == (b"gone " * 20)[:100]
    assert remote["/broken-get"]["error_kind"] is not None
    # the quoting of the request line is the client's, wherever the request was sent from
    raw = [path.split("?")[0] for _, path, _ in scenario.seen if "/caf" in path]
    assert sorted(raw[: len(raw) // 2]) == sorted(raw[len(raw) // 2 :])


@pytest.mark.slow
async def test_credentials_reach_only_their_origin_through_a_worker(
    serve: Serve, fast_config: Callable[..., CrawlConfig]
) -> None:
    scenario = Scenario()
    other = Scenario()
    elsewhere = await serve(other)

    async def away(request: web.Request) -> web.StreamResponse:
        if request.path == "/away":
            scenario.seen.append(("GET", "/away", request.headers.get("Authorization")))
            raise web.HTTPFound(elsewhere + "/ok")
        return await scenario.handle(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", away)
    origin = await serve(app)
    config = fast_config(auth=("staff", "s3cret-pass"), credential_origins=(origin,), **WORKER)
    async with HttpClient(config) as client:
        await client.fetch(f"{origin}/ok")
        assert await client.wait_fetch_workers()
        result = await client.fetch(f"{origin}/away")
        assert client.worker_exchanges >= 2
    assert result.status == 200 and len(result.redirects) == 1
    auth_at_start = [a for m, p, a in scenario.seen if p == "/away"]
    assert auth_at_start and all(a and a.startswith("Basic ") for a in auth_at_start)
    assert [a for _, _, a in other.seen] == [None]  # the redirect's other host: no credentials


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs /proc")
async def test_politeness_is_the_parents_with_a_worker(serve: Serve, caplog: Any) -> None:
    """The in-flight cap is taken in the parent, so a worker never exceeds it.

    Judged on what the server saw, whatever the machine's load: the sitemap is streamed,
    paced by the page requests that arrive, and ends only `tail` entries after the first page
    request that came from the worker process (told apart server-side by the process that
    owns the client socket), so the worker always runs part of the crawl however late it
    starts; the server counts the page requests it holds at once."""
    tail, lag, limit = 60, 8, 5000  # limit: a worker that never starts ends the sitemap too
    site = Site()
    pages: list[str] = []  # listed so far
    arrived: list[str] = []  # page requests, in the order the server got them
    from_worker: list[str] = []
    changed = asyncio.Condition()
    in_flight = most_in_flight = 0

    async def page(request: web.Request) -> web.Response:
        nonlocal in_flight, most_in_flight
        if not _sent_by_this_process(request):
            from_worker.append(request.path)
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        async with changed:
            arrived.append(request.path)
            changed.notify_all()
        try:
            await asyncio.sleep(0.02)  # long enough for requests to overlap at the server
            return web.Response(text="ok", headers=HTML)
        finally:
            in_flight -= 1

    async def sitemap(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers=XML)
        await resp.prepare(request)
        head, close = urlset().encode().split(b"</urlset>")
        await resp.write(head)
        end: int | None = None
        while end is None or len(pages) < end:
            if end is None and (from_worker or len(pages) >= limit):
                end = len(pages) + tail
            pages.append(f"/s{len(pages)}")
            await resp.write(f"<url><loc>{base}{pages[-1]}</loc></url>\n".encode())
            async with changed:  # keep `lag` entries ahead of the requests: the frontier is fed
                await changed.wait_for(lambda: len(arrived) >= len(pages) - lag)
        await resp.write(b"</urlset>" + close)
        return resp

    base = await serve(site)
    site.routes = {"/sitemap.xml": sitemap, **{f"/s{i}": page for i in range(limit + tail)}}
    caplog.set_level(logging.DEBUG, logger="audit.http")
    run = await audit(f"{base}/sitemap.xml", concurrency=16, max_per_host=3, **WORKER)
    assert len(run.of("url")) == len(pages)
    assert all(r["status"] == 200 for r in run.of("url"))
    assert sorted(arrived) == sorted(pages)  # one request per page, HEAD answered
    assert from_worker, f"no page request came from the worker among {len(pages)}"
    assert most_in_flight <= 3
    messages = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    served = [int(m.split(" ran ")[1].split()[0]) for m in messages if "worker(s) ran" in m]
    assert served and served[0] > 0, messages


@pytest.mark.slow
async def test_a_crawl_with_workers_reports_what_one_without_does(serve: Serve) -> None:
    site = Site()
    pages = []
    for i in range(80):
        kind = i % 8
        path = f"/page/{i}"
        pages.append(path)
        if kind == 0:
            site.routes[path] = (404, HTML, "missing")
        elif kind == 1:
            site.routes[path] = (301, {"Location": f"/page/{i + 1}"}, "")
        elif kind == 2:
            site.routes[path] = (200, {**HTML, "X-Robots-Tag": "noindex"}, "x")
        elif kind == 3:
            site.routes[path] = (
                200,
                {**HTML, "Last-Modified": "Mon, 02 Nov 2026 00:00:00 GMT"},
                "",
            )
        else:
            site.routes[path] = (200, HTML, "<html></html>")
    base = await serve(site)
    lastmod = "<lastmod>2026-11-05</lastmod>"
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in pages), extra=lastmod))
    site.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, "User-agent: *\nDisallow:")

    def view(run: Any) -> list[Any]:
        rows = []
        for record in run.records:
            record = {k: v for k, v in record.items() if k not in ("elapsed_ms", "ms")}
            if record["type"] in ("url", "finding"):
                rows.append(sorted((k, repr(v)) for k, v in record.items()))
        return sorted(rows)

    here = await audit(f"{base}/sitemap.xml", **IN_PROCESS)
    remote = await audit(f"{base}/sitemap.xml", **WORKER)
    assert len(here.of("url")) == len(pages)
    assert view(remote) == view(here)
    assert remote.summary["findings"] == here.summary["findings"]


async def test_a_worker_that_dies_loses_no_request(
    serve: Serve, fast_config: Callable[..., CrawlConfig], caplog: Any
) -> None:
    release = asyncio.Event()
    arrived = 0

    async def held(_: web.Request) -> web.Response:
        nonlocal arrived
        arrived += 1
        await release.wait()
        return web.Response(text="held")

    async def ok(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/held/{n}", held)
    app.router.add_route("*", "/ok/{n}", ok)
    base = await serve(app)
    caplog.set_level(logging.WARNING, logger="audit.http")
    async with HttpClient(fast_config(timeout=10.0, **WORKER)) as client:
        await client.fetch(f"{base}/ok/0")
        assert await client.wait_fetch_workers()
        (pid,) = client.worker_pids
        pending = [asyncio.ensure_future(client.fetch(f"{base}/held/{n}")) for n in range(5)]
        for _ in range(200):  # bounded: until the worker has sent all five
            if arrived >= 5:
                break
            await asyncio.sleep(0.02)
        assert arrived == 5
        os.kill(pid, signal.SIGKILL)
        for _ in range(200):  # bounded: until this process has sent them again
            if arrived >= 10:
                break
            await asyncio.sleep(0.02)
        release.set()
        results = await asyncio.gather(*pending)
        later = [await client.fetch(f"{base}/ok/{n}") for n in range(1, 4)]
    assert [r.status for r in results] == [200] * 5
    assert all(r.error is None for r in results)
    assert [r.status for r in later] == [200] * 3
    assert arrived == 10  # each held request sent twice: once by the worker, once here
    warnings = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    assert len(warnings) == 1 and "fetch worker stopped" in warnings[0], warnings


async def test_a_worker_that_cannot_start_leaves_the_fetching_here(
    serve: Serve,
    fast_config: Callable[..., CrawlConfig],
    caplog: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'ImportError: no module named aiohttp' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(broken))
    base = await serve(Scenario())
    caplog.set_level(logging.WARNING, logger="audit.http")
    async with HttpClient(fast_config(**WORKER)) as client:
        first = await client.fetch(f"{base}/ok")
        assert await client.wait_fetch_workers() is False
        rest = [await client.fetch(f"{base}/ok?n={n}") for n in range(3)]
        assert client.worker_exchanges == 0
    assert first.status == 200 and [r.status for r in rest] == [200] * 3
    warnings = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    assert len(warnings) == 1, warnings
    assert "did not start" in warnings[0] and "no module named aiohttp" in warnings[0]


async def test_a_cancelled_check_is_dropped_by_the_worker(
    raw_server: Any, fast_config: Callable[..., CrawlConfig]
) -> None:
    """A check cancelled in the parent (its slot already given back) must not stay in
    flight in the worker: the worker cancels it and closes the connection."""
    started = asyncio.Event()
    closed = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if b" /ok " in head:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        started.set()  # never answer: only the client can end this exchange
        if await reader.read() == b"":
            closed.set()

    base = await raw_server(handler)
    async with HttpClient(fast_config(timeout=10.0, **WORKER)) as client:
        assert (await client.fetch(f"{base}/ok")).status == 200
        assert await client.wait_fetch_workers()
        check = asyncio.ensure_future(client.fetch(f"{base}/hang"))
        await asyncio.wait_for(started.wait(), 5)
        check.cancel()
        await asyncio.wait_for(closed.wait(), 5)  # before the client closes the worker
        assert check.cancelled()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(t) for t in text)
    return found


async def _crawl_until_workers_run(
    serve: Serve, tmp_path: Path
) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A CLI crawl of a slow 3,000-page site, once its fetch worker runs: (process, workers)."""
    site, base, _ = await _slow_site(serve, 3000, 0.05)
    proc = subprocess.Popen(
        [sys.executable, "-m", "audit", "crawl", f"{base}/sitemap.xml", "--no-progress",
         "--rate", "unlimited", "--concurrency", "8", "--fetch-workers", "1",
         "--format", "jsonl", "--output", str(tmp_path / "report.jsonl")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    workers: list[int] = []
    for _ in range(600):  # bounded: 30 s for 500 checks and a worker start
        await asyncio.sleep(0.05)
        workers = _children(proc.pid)
        if workers and len(site.hits) > 700:
            return proc, workers
    proc.kill()
    pytest.fail(f"no fetch worker started; {len(site.hits)} requests; {proc.communicate()[1]!r}")


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's exit may wait for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def _gone(pids: list[int]) -> bool:
    for _ in range(200):  # bounded: 10 s
        if not any(_running(p) for p in pids):
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
async def test_ctrl_c_ends_the_workers_with_the_run(serve: Serve, tmp_path: Path) -> None:
    proc, workers = await _crawl_until_workers_run(serve, tmp_path)
    try:
        proc.send_signal(signal.SIGINT)
        loop = asyncio.get_running_loop()
        _, err = await loop.run_in_executor(None, lambda: proc.communicate(timeout=30))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert await _gone(workers)
    report = (tmp_path / "report.jsonl").read_text()
    assert report.count('"type":"url"') + report.count('"type": "url"') > 500


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
async def test_workers_end_when_the_run_is_killed(serve: Serve, tmp_path: Path) -> None:
    """SIGKILL gives the parent no chance to close anything: a worker ends at the end of
    its input, so none is left behind."""
    proc, workers = await _crawl_until_workers_run(serve, tmp_path)
    proc.kill()
    proc.communicate()
    try:
        assert await _gone(workers)
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# --- helpers -----------------------------------------------------------------------------


def _sent_by_this_process(request: web.Request) -> bool:
    """Server side: whether the client end of the request's connection is a socket of this
    process (the crawl's parent) rather than of another one (a fetch worker). Linux: the
    socket bound to the request's peer address, from /proc/net/tcp, among this process's fds."""
    transport = request.transport
    assert transport is not None
    host, port = transport.get_extra_info("peername")[:2]
    assert host == "127.0.0.1", host
    local = f"0100007F:{port:04X}"  # 127.0.0.1 as /proc/net/tcp writes it (little-endian)
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    inodes = {f"socket:[{row.split()[9]}]" for row in rows if row.split()[1] == local}
    assert inodes, f"no socket for 127.0.0.1:{port} in /proc/net/tcp"
    ours = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # an fd closed while we look
            ours.add(os.readlink(f"/proc/self/fd/{fd}"))
    return bool(inodes & ours)


async def _slow_site(serve: Serve, count: int, delay: float) -> tuple[Site, str, list[str]]:
    """A served site of `count` pages that each answer after `delay` seconds, listed in
    /sitemap.xml: (site, base URL, page paths)."""
    site = Site()

    async def slow(_: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.Response(text="ok", headers=HTML)

    pages = [f"/s{i}" for i in range(count)]
    for page in pages:
        site.routes[page] = slow
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in pages)))
    return site, base, pages


@pytest.mark.slow
async def test_a_hung_worker_is_stopped_and_its_requests_go_on_here(
    serve: Serve, fast_config: Callable[..., CrawlConfig], caplog: Any
) -> None:
    """A stopped worker (SIGSTOP) answers nothing: after two timeouts and a grace it is
    killed, and its pending requests are sent from the parent, so the run never stalls."""
    base = await serve(Scenario())
    caplog.set_level(logging.WARNING, logger="audit.http")
    async with HttpClient(fast_config(timeout=0.5, **WORKER)) as client:
        await client.fetch(f"{base}/ok")
        assert await client.wait_fetch_workers()
        (pid,) = client.worker_pids
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            result = await asyncio.wait_for(client.fetch(f"{base}/ok?after=stop"), 20)
            waited = time.monotonic() - started
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert result.status == 200 and result.error is None
    assert waited >= 2 * 0.5  # not before the worker could have answered
    warnings = [r.getMessage() for r in caplog.records if r.name == "audit.http"]
    assert len(warnings) == 1 and "answered nothing for too long" in warnings[0], warnings


@pytest.mark.slow
@pytest.mark.skipif(auto_worker_count() == 0, reason="auto starts no worker on one core")
@pytest.mark.parametrize(
    ("min_rate", "min_busy", "started"),
    [(1e-6, 2.0, True), (1e12, 2.0, False), (1e12, 0.0, True)],
)
async def test_auto_starts_workers_only_for_a_fast_or_busy_crawl(
    serve: Serve,
    fast_config: Callable[..., CrawlConfig],
    min_rate: float,
    min_busy: float,
    started: bool,
) -> None:
    """`auto` measures a window of exchanges and starts workers only when one process
    runs them that fast, or is that busy running them (a share of one core above 1.0
    cannot be reached; 0.0 always is): a polite --rate never gets a second process."""
    base = await serve(Scenario())
    config = fast_config(
        fetch_workers=None,
        fetch_workers_after=5,
        fetch_workers_min_rate=min_rate,
        fetch_workers_min_busy=min_busy,
    )
    async with HttpClient(config) as client:
        for n in range(12):  # past the first window (5) and its measured one (10)
            assert (await client.fetch(f"{base}/ok?n={n}")).status == 200
        assert await client.wait_fetch_workers() is started
        assert len(client.worker_pids) == (auto_worker_count() if started else 0)
