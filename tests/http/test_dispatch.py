"""audit.http.dispatch: where a plain exchange runs, over a real loopback server and real
fetch worker processes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from yarl import URL

from audit.core.config import CrawlConfig
from audit.http.addresses import PrivateGuard
from audit.http.dispatch import WorkerDispatch, needs_workers, worker_count
from audit.http.exchange import new_session, request_url, sendable
from audit.http.workers import auto_worker_count

Server = Any
ServerFactory = Callable[[web.Application], Awaitable[Server]]


def test_needs_workers_when_the_window_ran_fast_or_kept_the_process_busy() -> None:
    config = CrawlConfig(fetch_workers_min_rate=100.0, fetch_workers_min_busy=0.5)
    # 200 exchanges in 1 s: 200/s, faster than 100/s
    assert needs_workers((0.0, 0.0), (1.0, 0.1), 200, config)
    # 200 in 10 s (20/s) with the process busy 1 s of 10: not wanted
    assert not needs_workers((0.0, 0.0), (10.0, 1.0), 200, config)
    # the same pace, busy 6 s of 10: wanted
    assert needs_workers((0.0, 0.0), (10.0, 6.0), 200, config)


def test_worker_count_of_the_option() -> None:
    assert worker_count(CrawlConfig(fetch_workers=2)) == 2
    assert worker_count(CrawlConfig(fetch_workers=0)) == 0
    assert worker_count(CrawlConfig(fetch_workers=None)) == auto_worker_count()


def _app(seen: list[str]) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        seen.append(request.method)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/p", page)
    return app


async def _session() -> aiohttp.ClientSession:
    return new_session("dispatch-test", aiohttp.ClientTimeout(total=5.0), limit=4, per_host=4)


async def test_exchanges_run_here_until_the_workers_are_due_then_in_a_worker(
    aiohttp_server: ServerFactory,
) -> None:
    seen: list[str] = []
    server = await aiohttp_server(_app(seen))
    url = str(server.make_url("/p"))
    config = CrawlConfig(fetch_workers=1, fetch_workers_after=2, timeout=5.0)
    dispatch = WorkerDispatch(config, PrivateGuard(), "dispatch-test", ())
    session = await _session()
    try:
        for _ in range(2):  # the first two run here; none is due yet
            outcome = await dispatch.plain(session, "HEAD", url, URL(url), None, True, 0, False)
            assert outcome is not None and outcome[0] == 200
            assert not await dispatch.wait()  # no start due: False at once, nothing started
        # the third is counted as the one that makes the workers due; it still runs here
        outcome = await dispatch.plain(session, "HEAD", url, URL(url), None, True, 0, False)
        assert outcome is not None and outcome[0] == 200
        assert await dispatch.wait()
        assert len(dispatch.pids) == 1
        outcome = await dispatch.plain(session, "GET", url, URL(url), None, True, 100, False)
        assert outcome is not None
        assert (outcome[0], outcome[2]) == (200, b"ok")
        assert dispatch.exchanges == 1  # that one ran in the worker
        assert seen == ["HEAD", "HEAD", "HEAD", "GET"]
    finally:
        await dispatch.aclose()
        await session.close()


async def test_without_workers_everything_runs_here(aiohttp_server: ServerFactory) -> None:
    seen: list[str] = []
    server = await aiohttp_server(_app(seen))
    url = str(server.make_url("/p"))
    dispatch = WorkerDispatch(
        CrawlConfig(fetch_workers=0, fetch_workers_after=0), PrivateGuard(), "t", ()
    )
    session = await _session()
    try:
        for _ in range(3):
            outcome = await dispatch.plain(session, "HEAD", url, URL(url), None, True, 0, False)
            assert outcome is not None and outcome[0] == 200
        # a remote sink's page is read here too: no worker takes it
        assert await dispatch.into_sink(url, None, True, 100, False, ("mod", ("Sink",))) is None
        assert not await dispatch.wait()
        assert (dispatch.count, dispatch.exchanges, dispatch.pids) == (0, 0, [])
        assert seen == ["HEAD"] * 3
    finally:
        await dispatch.aclose()
        await session.close()


async def test_auto_starts_no_worker_for_a_slow_idle_window(
    aiohttp_server: ServerFactory,
) -> None:
    """--fetch-workers auto: a window that ran slower than the rate and left this process
    idle starts nothing; the count is looked at again a window later."""
    seen: list[str] = []
    server = await aiohttp_server(_app(seen))
    url = str(server.make_url("/p"))
    config = CrawlConfig(
        fetch_workers=None,
        fetch_workers_after=1,
        fetch_workers_min_rate=1e9,  # no window is ever fast enough
        fetch_workers_min_busy=2.0,  # and none busy enough
    )
    dispatch = WorkerDispatch(config, PrivateGuard(), "t", ())
    session = await _session()
    try:
        for _ in range(4):
            await dispatch.plain(session, "HEAD", url, URL(url), None, True, 0, False)
        assert not dispatch.workers.ready and not dispatch.pids
        assert not await dispatch.wait()
        assert len(seen) == 4
    finally:
        await dispatch.aclose()
        await session.close()


async def test_a_url_a_worker_sends_is_parsed_there_only(aiohttp_server: ServerFactory) -> None:
    seen: list[str] = []
    server = await aiohttp_server(_app(seen))
    url = str(server.make_url("/p"))
    config = CrawlConfig(fetch_workers=1, fetch_workers_after=0, timeout=5.0)
    dispatch = WorkerDispatch(config, PrivateGuard(), "dispatch-test", ())
    session = await _session()
    try:
        assert dispatch.target(url) == URL(url)  # no worker yet: parsed here
        first = await dispatch.plain(session, "HEAD", url, URL(url), None, True, 0, False)
        assert first is not None and first[0] == 200
        assert await dispatch.wait()
        assert dispatch.target(url) is None  # the worker parses it
        outcome = await dispatch.plain(session, "GET", url, None, None, True, 100, False)
        assert outcome is not None and (outcome[0], outcome[2]) == (200, b"ok")
        assert dispatch.exchanges == 1 and seen == ["HEAD", "GET"]
        # a URL yarl may refuse is parsed here, and refused here as without workers
        with pytest.raises(ValueError):
            dispatch.target("http://[::1/p")
        assert dispatch.target("http://[::1]:8/p") == URL("http://[::1]:8/p")
    finally:
        await dispatch.aclose()
        await session.close()


@given(
    st.text(alphabet="ab:/?#[]\\@%. \t\x7fé1", max_size=20),
    st.sampled_from(["http://", "https://h", "http://127.0.0.1:8", "", "//"]),
)
def test_a_sendable_url_is_one_request_url_takes(rest: str, start: str) -> None:
    url = start + rest
    if sendable(url):
        assert request_url(url) == URL(url, encoded=True)


def test_what_is_not_sendable_without_parsing() -> None:
    assert sendable("http://example.com/a?b=1#c")
    for url in ("http://[::1]/", "http://a\\b/", "http://a b/", "http://é.com/", "http://a/\t"):
        assert not sendable(url), url
