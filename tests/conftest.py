"""Shared, generic test fixtures. Keep small; tests write their handlers inline.

Slow tests (over about half a second each) carry `@pytest.mark.slow`. `make test` runs
everything; `.venv/bin/pytest -m 'not slow'` is the quick run while working.

- `serve(site, **kwargs)`: starts a loopback aiohttp server (pytest-aiohttp's
  `aiohttp_server`, closed at the end of the test) for a `tests.crawlkit.Site`, anything
  else with an `.app()`, or an `aiohttp.web.Application` such as the fixture server's
  `make_app(dir)`; kwargs go to `aiohttp_server` (e.g. `ssl=`). Returns the base URL
  without a trailing slash, "http://127.0.0.1:PORT".
- `fast_config(**overrides)`: a CrawlConfig with tiny timeouts, backoff and Retry-After cap.
- `raw_server(handler)`: a plain TCP server on 127.0.0.1 for behaviour aiohttp's test
  server cannot produce (never answering, trickling, cutting a response off). The handler
  gets asyncio (reader, writer); returns the base URL "http://127.0.0.1:PORT".

A suite started in the background by a script (`pytest ... &` without job control)
starts with SIGINT ignored, and every CLI it spawns inherits that: the Ctrl-C tests
would then see a run that cannot be interrupted (exit 0, nothing on stderr) and fail for
how the suite was started. `pytest_configure` gives the suite Python's own SIGINT handler
back, so its children start with the default one.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from audit.core.config import CrawlConfig
from tests.crawlkit import Serve


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture
def serve(aiohttp_server: Any) -> Serve:
    async def start(site: Any, **kwargs: Any) -> str:
        app = site if isinstance(site, web.Application) else site.app()
        server = await aiohttp_server(app, **kwargs)
        return str(server.make_url("")).rstrip("/")

    return start


@pytest.fixture
def fast_config() -> Callable[..., CrawlConfig]:
    def make(**overrides: Any) -> CrawlConfig:
        base: dict[str, Any] = {
            "rate": 0.0,  # unlimited unless a test is about rate
            "timeout": 2.0,
            "retries": 2,
            "backoff_base": 0.01,
            "backoff_cap": 0.05,
            "retry_after_cap": 2.0,
            "user_agent": "sitemap-audit/0.1.0",
        }
        base.update(overrides)
        return CrawlConfig(**base)

    return make


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[RawHandler], Awaitable[str]]]:
    servers: list[asyncio.Server] = []
    tasks: set[asyncio.Task[None]] = set()

    async def start(handler: RawHandler) -> str:
        async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            tasks.add(task)  # type: ignore[arg-type]
            try:
                await handler(reader, writer)
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.close()
                tasks.discard(task)  # type: ignore[arg-type]

        server = await asyncio.start_server(guarded, "127.0.0.1", 0)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.close()
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for server in servers:
        await server.wait_closed()
