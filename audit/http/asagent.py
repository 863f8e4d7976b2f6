"""One GET as another agent (`--agents-fetch`): `HttpClient.fetch_as`'s request.

The agent's own User-Agent string, the credentials and extra headers of the origin (by
the run's scope, credentials.py), the body up to a cap (into a `BodySink` if it wants the
page). No redirect followed, no retry, no Retry-After wait. The host's turn and in-flight
slot are taken as for any request, but the answer never changes the host's politeness (a
429 or 503 to an agent is that agent's, not the host's). Its own session, made at its
first request: the run's settings, but aiohttp's own retry of an idempotent request whose
connection drops (RFC 9112 9.3.1) is off, as aiohttp's test client turns it off: an
agent's request is sent exactly once.

Imports aiohttp (lazily), yarl, audit.core and audit.http.{addresses, chain,
credentials, exchange, hosts} only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from audit.core.config import CrawlConfig
from audit.core.errors import FetchError, translate_exception
from audit.core.records import FetchResult
from audit.http.addresses import PrivateGuard
from audit.http.chain import Answer, Chain, fetch_result, private_error
from audit.http.credentials import RequestScope
from audit.http.exchange import (
    BODY_EXCERPT,
    REDIRECT_STATUSES,
    BodySink,
    discard,
    new_session,
    read_for_sink,
    read_head,
    release_if_read,
    request_url,
    response_headers,
)
from audit.http.hosts import HostPool

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AgentSender"]


class AgentSender:
    """`fetch_as` for one client: its hosts, private-address guard and request scope;
    `run_session` is the client's session (made first: outside `async with`, it raises)."""

    def __init__(
        self,
        config: CrawlConfig,
        hosts: HostPool,
        guard: PrivateGuard,
        scope: RequestScope,
        user_agent: str,
        run_session: Callable[[], aiohttp.ClientSession],
    ) -> None:
        self.config = config
        self._hosts = hosts
        self._guard = guard
        self._scope = scope
        self._user_agent = user_agent
        self._run_session = run_session
        self._session: aiohttp.ClientSession | None = None
        self._timeout: aiohttp.ClientTimeout | None = None

    async def fetch_as(
        self, url: str, user_agent: str, *, sink: BodySink | None = None, cap: int
    ) -> FetchResult:
        """One GET of `url` as `user_agent`; see the module. Never raises for a per-URL
        failure."""
        chain = Chain(Answer(url), attempts=1)
        try:
            host = self._hosts.get(url)
            target = request_url(url)
        except ValueError:
            chain.error = FetchError(f"not an absolute http(s) URL: {url}", kind="other", url=url)
            return fetch_result(url, "GET", chain)
        if self._guard.refuses(url):
            chain.error = private_error(url)
            return fetch_result(url, "GET", chain)
        headers, verify = self._scope.prepare(host, False, {"User-Agent": user_agent}, None)
        headers = {k: v for k, v in (headers or {}).items() if k.lower() != "user-agent"}
        headers["User-Agent"] = user_agent
        session = self.session()
        answer = chain.final
        if not host.try_acquire():
            await host.acquire()  # holds a slot too (hold_slot): released below
        started = time.monotonic()
        resp: aiohttp.ClientResponse | None = None
        try:
            resp = await session.request(
                "GET",
                target,
                allow_redirects=False,
                timeout=self._timeout,
                headers=headers,
                ssl=verify,
            )
            answer.status, answer.headers = resp.status, response_headers(resp)
            if resp.status not in REDIRECT_STATUSES:
                limit = max(1, cap)
                answer.body = await (
                    read_for_sink(resp, answer.headers, sink, limit)
                    if sink is not None
                    else read_head(resp, min(limit, BODY_EXCERPT))
                )
            if not release_if_read(resp):
                await discard(resp)
        except Exception as exc:
            answer.error = translate_exception(exc, answer.url)
            answer.status, answer.headers, answer.body = None, (), b""
            if resp is not None and not resp.closed:
                resp.close()
        finally:
            answer.elapsed_ms = (time.monotonic() - started) * 1000.0
            host.release()
        chain.error = answer.error
        return fetch_result(url, "GET", chain)

    def session(self) -> aiohttp.ClientSession:
        """The agents' session, made at the first request (after the run's, which checks
        that the client is used inside `async with`)."""
        session = self._session
        if session is None:
            import aiohttp

            self._run_session()
            config = self.config
            self._timeout = aiohttp.ClientTimeout(total=config.timeout)
            session = self._session = new_session(
                self._user_agent,
                self._timeout,
                limit=max(1, config.concurrency),
                per_host=config.per_host_cap,
                guard=self._guard,
            )
            session._retry_connection = False
        return session

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
