"""audit.http.asagent: one GET as another agent (`--agents-fetch`), over a real loopback
server: the agent's User-Agent, no redirect followed, no retry, and the host's politeness
untouched by the answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from audit.core.config import CrawlConfig
from audit.http.addresses import PrivateGuard
from audit.http.asagent import AgentSender
from audit.http.credentials import RequestScope
from audit.http.exchange import new_session
from audit.http.hosts import HostPool

Server = Any
ServerFactory = Callable[[web.Application], Awaitable[Server]]


def _app(seen: list[tuple[str, str, str]]) -> web.Application:
    def note(request: web.Request) -> None:
        agent = request.headers.get("User-Agent", "")
        seen.append((request.path, agent, request.headers.get("X-Key", "")))

    async def page(request: web.Request) -> web.Response:
        note(request)
        return web.Response(text="<html>" + "x" * 5000 + "</html>")

    async def moved(request: web.Request) -> web.Response:
        note(request)
        raise web.HTTPMovedPermanently("/page")

    async def limited(request: web.Request) -> web.Response:
        note(request)
        return web.Response(status=429, headers={"Retry-After": "30"})

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/moved", moved)
    app.router.add_get("/limited", limited)
    return app


@pytest.fixture
async def run_session() -> AsyncIterator[aiohttp.ClientSession]:
    session = new_session("run-agent", aiohttp.ClientTimeout(total=5), limit=4, per_host=4)
    yield session
    await session.close()


def _sender(
    config: CrawlConfig, hosts: HostPool, session: aiohttp.ClientSession, made: list[int]
) -> AgentSender:
    def run() -> aiohttp.ClientSession:
        made.append(1)
        return session

    return AgentSender(config, hosts, PrivateGuard(), RequestScope(config), "run-agent", run)


async def test_one_get_with_the_agents_user_agent_and_the_origins_headers(
    aiohttp_server: ServerFactory, run_session: aiohttp.ClientSession
) -> None:
    seen: list[tuple[str, str, str]] = []
    server = await aiohttp_server(_app(seen))
    url = str(server.make_url("/page"))
    config = CrawlConfig(extra_headers=(("X-Key", "k1"),), timeout=5.0)
    made: list[int] = []
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=30.0)
    sender = _sender(config, hosts, run_session, made)
    try:
        result = await sender.fetch_as(url, "Bingbot/2.0", cap=100)
    finally:
        await sender.aclose()
    assert seen == [("/page", "Bingbot/2.0", "k1")]
    assert (result.status, result.method, result.attempts) == (200, "GET", 1)
    assert result.body_head == (b"<html>" + b"x" * 5000)[:100]
    assert made == [1]  # the run's session was made first


async def test_a_redirect_is_not_followed_and_a_429_leaves_the_host_alone(
    aiohttp_server: ServerFactory, run_session: aiohttp.ClientSession
) -> None:
    seen: list[tuple[str, str, str]] = []
    server = await aiohttp_server(_app(seen))
    config = CrawlConfig(timeout=5.0)
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=30.0)
    sender = _sender(config, hosts, run_session, [])
    try:
        moved = await sender.fetch_as(str(server.make_url("/moved")), "A/1", cap=100)
        limited = await sender.fetch_as(str(server.make_url("/limited")), "A/1", cap=100)
    finally:
        await sender.aclose()
    assert [path for path, _, _ in seen] == ["/moved", "/limited"]  # once each
    assert moved.status == 301 and moved.redirects == () and moved.final_url == moved.url
    assert limited.status == 429 and limited.attempts == 1
    stats = hosts.get(str(server.make_url("/"))).stats()
    assert stats.rate_limited == 0 and stats.backoff_s == 0.0


async def test_an_unusable_or_private_url_is_a_value(
    run_session: aiohttp.ClientSession,
) -> None:
    config = CrawlConfig(credential_origins=("https://public.example",))
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    guard = PrivateGuard.of(config.credential_origins, allow_private=False)
    sender = AgentSender(
        config, hosts, guard, RequestScope(config), "run-agent", lambda: run_session
    )
    bad = await sender.fetch_as("mailto:x@example.com", "A/1", cap=10)
    assert bad.status is None and bad.error_kind == "other"
    private = await sender.fetch_as("http://127.0.0.1:9/x", "A/1", cap=10)
    assert private.status is None and private.error_kind == "redirect-private"
    await sender.aclose()
