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

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from audit.core.config import CrawlConfig
from audit.core.errors import FetchError
from audit.core.records import FetchResult
from audit.http.addresses import PrivateGuard
from audit.http.chain import Answer, Chain, fetch_result, private_error
from audit.http.credentials import RequestScope
from audit.http.exchange import (
    BODY_EXCERPT,
    BodySink,
    exchange,
    exchange_into,
    new_session,
    request_url,
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
        # the agent's User-Agent, and the origin's credentials (never a User-Agent of theirs)
        headers, verify = self._scope.prepare(host, False, {"User-Agent": user_agent}, None)
        session = self.session()
        limit = max(1, cap)
        await host.acquire()  # the turn and a slot (hold_slot), released below
        try:  # one exchange, as a fetch worker runs it: not retryable, no redirect followed
            if sink is None:
                outcome = await exchange(
                    session, "GET", url, target, headers, verify, min(limit, BODY_EXCERPT), False
                )
            else:
                outcome, _ = await exchange_into(
                    session, url, target, headers, verify, limit, False, math.inf, sink
                )
        finally:
            host.release()
        answer = chain.final
        answer.status, answer.headers, answer.body, message, kind, answer.elapsed_ms = outcome
        if kind is not None:  # the answer is never the host's (no after_status)
            chain.error = FetchError(message, kind=kind, url=url)
        return fetch_result(url, "GET", chain)

    def session(self) -> aiohttp.ClientSession:
        """The agents' session, made at the first request (after the run's, which checks
        that the client is used inside `async with`)."""
        session = self._session
        if session is None:
            import aiohttp

            self._run_session()
            config = self.config
            session = self._session = new_session(
                self._user_agent,
                aiohttp.ClientTimeout(total=config.timeout),
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
