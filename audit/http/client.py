"""The HTTP client: one aiohttp session, per-host politeness, hand-followed redirects, retries.

`HttpClient.fetch()` checks one URL and returns a `FetchResult`; it never raises for a
per-URL failure (STYLE lesson 2). `HttpClient.stream()` opens a sitemap body and yields a
`StreamResponse` whose `iter_chunks()` gives the RAW bytes as they arrive.

Choices, and why:

- One `ClientSession`, one `TCPConnector` (keep-alive, DNS cache). `limit` is
  `concurrency + STREAM_HEADROOM` and `limit_per_host` is `max_per_host + STREAM_HEADROOM`,
  so a URL check never queues inside aiohttp behind sitemap streams: aiohttp counts the wait
  for a pooled connection against the request's own deadline. The real per-host in-flight
  cap is the `Host` semaphore, taken before the request and its deadline start.
- Pages are decompressed (session default `auto_decompress=True`); sitemap streams pass
  `auto_decompress=False` per request (aiohttp >= 3.9) and ask for `Accept-Encoding: identity`,
  so the bytes are the file as published: a `.xml.gz` arrives as gzip bytes and the parser
  sniffs and inflates them itself, even if a server adds `Content-Encoding: gzip`.
- Streams take the host's rate limiter and Retry-After deadline but not an in-flight slot:
  a stream is held open while its entries are pushed into the bounded frontier, and holding
  slots there could starve the workers that drain the frontier.
- Redirects are followed by hand (`allow_redirects=False`), every 3xx hop is recorded, each hop
  is a request of its own through its host's politeness. No cookie jar: search engine crawlers
  are stateless, so a redirect that only ends with a cookie is reported as the crawler sees it.
- Timeouts: `ClientTimeout(total=config.timeout)` per request, body excerpt included, so a
  server that trickles bytes still times out. A sitemap stream has `total=stream_timeout`
  (default `STREAM_TIMEOUT_FACTOR x timeout`) for headers and whole body, and
  `sock_read=timeout` so a stalled socket fails sooner.
- One retry predicate, `should_retry()` (retry.py), for fetches, page GETs and streams
  (STYLE lesson 6).
- `fetch_page()` (page checks) is one GET whose final answer's decompressed body goes to a
  `BodySink` chunk by chunk until the sink has seen enough or `cap` bytes were read; then the
  connection is closed unless the little that is left can be drained (never the rest of a
  large body). A retried attempt restarts the sink (`start()` again).
- Staging credentials (`config.auth`, `cookies`, `extra_headers`) are added per request in
  `_send` (credentials.py `RequestScope`), the one place every request passes, and only
  when its origin is in `config.credential_origins` (without a scope: the origin its
  redirect chain started at).
  So they never follow a redirect to another host, and a robots.txt or a listed URL elsewhere
  never sees them. `config.insecure_hosts` turns TLS verification off per request, for those
  host names only.
- One send path per request (`HttpClient._send`, STYLE lesson 18): the host's politeness
  slot, ONE retry loop with one predicate (retry.py) for plain, streamed and page-check
  requests, then the exchange: a plain one (`exchange.exchange()`, in this process or in a
  fetch worker: dispatch.py) or an opened one (opened.py `Opened.attempt`: a stream, or a
  body for a `BodySink`). The redirect loop (`_follow`, with chain.py's rules, after a
  first answer that redirects) calls it once per hop.
- A page GET whose sink is a `RemoteSink` (exchange.py) goes to a fetch worker while they
  run (opened.py): the worker rebuilds the sink from its recipe, reads the body into
  it and answers with the sink's outcome, which the parent's sink accepts; everything else
  (the slot, retries, Retry-After, redirects) is this send path's, as for any request. A
  sink that is not remote, or no worker, and the page is read here.

- `fetch_as()` (`--agents-fetch`) is asagent.py's: one GET as another agent, on its own
  session.

The parts, one module a concern: chain.py (an answer and a redirect chain as values, the
redirect rules), credentials.py (what a request carries), dispatch.py (where a plain
exchange runs: here or in a fetch worker), opened.py (a request whose response is read
here: streams and body sinks), asagent.py (`fetch_as`); this module holds the client, its
session, its send path and its redirect loop.

Knows nothing of sitemaps or robots.txt rules. Imports aiohttp and yarl (lazily) and
audit.core, audit.http.{addresses, asagent, chain, credentials, dispatch, exchange, hosts,
opened, retry} only.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Final

from audit.core.config import STREAM_TIMEOUT_FACTOR, CrawlConfig
from audit.core.errors import FetchError
from audit.core.records import FetchResult, Hop
from audit.http.addresses import PrivateGuard
from audit.http.asagent import AgentSender
from audit.http.chain import (
    Answer,
    Chain,
    answer_result,
    fetch_result,
    next_hop,
    private_error,
    take_exchange,
)
from audit.http.credentials import RequestScope, user_agent_of
from audit.http.dispatch import WorkerDispatch
from audit.http.exchange import (
    BODY_EXCERPT,
    REDIRECT_STATUSES,
    SINK_MODULES,
    BodySink,
    exchange,
    new_session,
    recipe_of,
    request_url,
)
from audit.http.hosts import Host, HostPool, HostStats, address_id
from audit.http.opened import Opened, StreamResponse
from audit.http.retry import (
    BACKOFF,
    DONE,
    backoff_delay,
    parse_retry_after,
    should_retry,
)

if TYPE_CHECKING:  # loaded by HttpClient._open: a run that requests nothing never imports it
    import aiohttp
    from yarl import URL

STREAM_HEADROOM: Final = 8  # connections beyond the worker count, for sitemap streams
# The statuses of a plain answer that is final at once: not retried, no Retry-After, not
# counted as a 429 or a server error (retry.after_status decides the others).
_FINAL_STATUSES: Final = frozenset(range(100, 429)) - {408}
# The answers to a HEAD that a GET confirms: 4xx, 5xx and any other status from 400 up (a
# status has three digits: aiohttp refuses any other status line, so a failure's None too
# is in no set of statuses).
_CONFIRMED_STATUSES: Final = frozenset(range(400, 1000))

__all__ = [
    "BODY_EXCERPT",
    "BodySink",
    "HttpClient",
    "StreamResponse",
    "backoff_delay",
    "parse_retry_after",
    "should_retry",
]


class HttpClient:
    """The run's HTTP client. Use as `async with HttpClient(config) as client:`."""

    _fetch_timeout: aiohttp.ClientTimeout  # both set by _open
    _stream_timeout: aiohttp.ClientTimeout
    _loop: asyncio.AbstractEventLoop

    def __init__(self, config: CrawlConfig, *, sink_modules: Sequence[str] = SINK_MODULES) -> None:
        """`sink_modules`: the modules whose remote body sinks a fetch worker may build
        (exchange.SINK_MODULES: this package's)."""
        self.config = config
        self.hosts = HostPool(
            rate=config.rate,
            max_in_flight=config.per_host_cap,
            retry_after_cap=config.retry_after_cap,
            key=config.politeness_key,
            address_of=self._address_of,
        )
        self._session: aiohttp.ClientSession | None = None
        self._entered = False
        self._retries = max(0, config.retries)
        self._scope = RequestScope(config)  # credentials and insecure hosts, per request
        self._adds = self._scope.adds  # (the per-URL test in _send: one attribute)
        # the targets (credential_origins: the origins the user gave) are trusted as given;
        # from a public target, nothing else on a private address is requested
        self._guard = PrivateGuard.of(config.credential_origins, config.allow_private)
        user_agent = user_agent_of(config)
        # fetch worker processes (dispatch.py, workers.py), started when due
        self._workers = WorkerDispatch(config, self._guard, user_agent, sink_modules)
        self._agents = AgentSender(  # fetch_as (--agents-fetch), its own session
            config, self.hosts, self._guard, self._scope, user_agent, lambda: self.session
        )

    async def __aenter__(self) -> HttpClient:
        self._entered = True
        return self

    def _open(self) -> aiohttp.ClientSession:
        """The session, made at the first request (inside the running loop): aiohttp and
        its TLS context load only in a run that requests something, so a `validate` of
        local files never pays for them."""
        import aiohttp

        self._loop = asyncio.get_running_loop()
        config = self.config
        self._fetch_timeout = aiohttp.ClientTimeout(total=config.timeout)
        stream_total = config.stream_timeout or config.timeout * STREAM_TIMEOUT_FACTOR
        self._stream_timeout = aiohttp.ClientTimeout(total=stream_total, sock_read=config.timeout)
        self._session = new_session(
            user_agent_of(config),
            self._fetch_timeout,
            limit=max(1, config.concurrency) + STREAM_HEADROOM,
            per_host=config.per_host_cap + STREAM_HEADROOM,
            guard=self._guard,
        )
        return self._session

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def wait_fetch_workers(self) -> bool:
        """Wait until the fetch workers, once started, are ready; True when they run. For
        callers that want every later exchange in a worker (tests, benchmarks)."""
        return await self._workers.wait()

    @property
    def worker_exchanges(self) -> int:
        """Exchanges that fetch worker processes ran for this client (0 without workers)."""
        return self._workers.exchanges

    @property
    def worker_pids(self) -> list[int]:
        """The fetch worker processes started (running or not)."""
        return self._workers.pids

    async def aclose(self) -> None:
        self._entered = False
        await self._workers.aclose()
        session, self._session = self._session, None
        if session is not None:
            await session.close()
        await self._agents.aclose()

    @property
    def session(self) -> aiohttp.ClientSession:
        session = self._session
        if session is None:
            if not self._entered:
                raise RuntimeError("HttpClient used outside `async with`")
            session = self._open()
        return session

    def host(self, url: str) -> Host:
        """The politeness object of the URL's scheme://host:port (ValueError if not http(s))."""
        return self.hosts.get(url)

    def host_stats(self) -> list[HostStats]:
        return self.hosts.stats()

    async def _address_of(self, name: str) -> str | None:
        """--politeness-key ip: the first address a name resolves to that the run's
        private-address rule lets it connect to (as the connector's resolver judges);
        None when there is none. A name that does not resolve raises (OSError, or
        UnicodeError for one IDNA refuses): the pool's `_resolve`, which asks this,
        takes any error as no address."""
        loop = asyncio.get_running_loop()
        answers = await loop.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        for answer in answers:
            address = str(answer[4][0])
            if self._guard.keeps(name, address):
                return address_id(address)
        return None

    # --- one URL, with retries ---------------------------------------------------

    async def _send(
        self,
        url: str,
        method: str,
        *,
        body_limit: int,
        stream: bool,
        status_retries: bool = True,
        headers: Mapping[str, str] | None = None,
        chain_origin: str | None = None,
        sink: BodySink | None = None,
        host: Host | None = None,
    ) -> Answer:
        """Request `url` once plus retries. With `stream`, a final non-3xx answer stays open;
        otherwise up to `body_limit` bytes of a final GET answer are read and it is closed.
        `chain_origin` is the host key the redirect chain started at (default: url's own);
        `host` is url's host when the caller has it (a listed URL's, looked up when listed).

        The one retry loop of every request: take the host's turn, one attempt, then what
        the attempt asks (retry.py). A retryable answer is discarded only when a retry will
        follow; the last one is kept. Every request of a run passes through here, once per
        attempt (one frame: this is the per-URL path; a plain attempt is the exchange's own
        coroutine, no other)."""
        session = self._session or self.session  # outside `async with`: a bug, raised
        answer = Answer(url)
        try:
            target = self._workers.target(url)  # None: a fetch worker parses it
            host = host or self.hosts.get(url)
        except ValueError:
            answer.error = FetchError(f"not an absolute http(s) URL: {url}", kind="other", url=url)
            return answer
        request_headers: dict[str, str] | None = None
        verify = True
        if stream or headers or self._adds:  # a listed URL's HEAD: nothing to add
            request_headers, verify = self._scope.prepare(host, stream, headers, chain_origin)
        opened = None
        if stream or sink is not None:
            opened = self._opened(
                session, method, url, target, request_headers, verify, body_limit, sink
            )
        retries = self._retries
        while True:
            answer.attempts += 1
            retryable = status_retries and answer.attempts <= retries
            # a stream takes the host's turn but no in-flight slot
            held = (not stream and host.try_acquire()) or await host.acquire(hold_slot=not stream)
            group = host.group  # the slot's and the rate's (known once acquired)
            try:
                if opened is None:
                    # None from a worker: every worker is gone, so this run goes on here
                    outcome = await self._workers.plain(
                        session, method, url, target, request_headers, verify, body_limit,
                        retryable,
                    ) or await exchange(
                        session, method, url, request_url(url), request_headers, verify,
                        body_limit, retryable,
                    )  # fmt: skip
                    status = outcome[0]  # None for a failure
                    if status in _FINAL_STATUSES:
                        # the common answer: final, no retry, no Retry-After (after_status),
                        # nothing the host counts (Host.record_status): the group's alone
                        group.good_answer()
                        answer.status, answer.headers, answer.body = outcome[:3]
                        answer.elapsed_ms = outcome[5]
                        return answer
                    step = take_exchange(answer, host, outcome, retryable)
                else:
                    step = await opened.attempt(answer, host, retryable, self._workers)
            finally:
                if held:
                    group.release()  # never hold a slot through a backoff sleep
            if step == DONE or answer.attempts > retries:
                return answer
            if step == BACKOFF:
                config = self.config
                delay = backoff_delay(answer.attempts - 1, config.backoff_base, config.backoff_cap)
                host.backed_off(delay)
                await asyncio.sleep(delay)
            host.retries += 1
            answer.status, answer.headers, answer.body, answer.error = None, (), b"", None

    def _opened(
        self,
        session: aiohttp.ClientSession,
        method: str,
        url: str,
        target: URL | None,
        headers: dict[str, str] | None,
        verify: bool,
        body_limit: int,
        sink: BodySink | None,
    ) -> Opened:
        """The fixed parts of a stream or a body-sink request; `target`: url's, None: unparsed."""
        target = target or request_url(url)
        # a worker may read the page only if workers may run and the sink can be rebuilt
        recipe = recipe_of(sink) if self._workers.count else None
        return Opened(
            session, method, target, headers, verify, self._stream_timeout, body_limit, sink,
            self._loop, self.config.retry_after_cap, recipe,
        )  # fmt: skip

    # --- redirect chains ----------------------------------------------------------

    def _start(
        self,
        url: str,
        method: str,
        body_limit: int,
        stream: bool,
        status_retries: bool,
        headers: Mapping[str, str] | None,
        sink: BodySink | None,
        host: Host | None = None,
    ) -> Awaitable[Answer]:
        """A chain's first hop: `_send`'s coroutine for `url` (awaited by the caller: no frame
        more), or the refusal of a private URL a public target lists; `host`: url's if known."""
        if self._guard.active and self._guard.refuses(url):
            refused: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
            refused.set_result(Answer(url, error=private_error(url)))
            return refused
        start = self._scope.chain_origin(url) if self._scope.credentials else None
        return self._send(
            url, method, body_limit=body_limit, stream=stream, status_retries=status_retries,
            headers=headers, chain_origin=start, sink=sink, host=host,
        )  # fmt: skip

    async def _follow(
        self,
        first: Answer,
        method: str,
        body_limit: int,
        stream: bool,
        max_redirects: int | None,
        status_retries: bool,
        headers: Mapping[str, str] | None,
        sink: BodySink | None,
    ) -> Chain:
        """The redirect loop from a chain's first answer (`_start`'s): one `_send` per hop,
        every 3xx hop recorded, until a final answer, a failure or a redirect that is not
        followed (chain.py `next_hop`). `max_redirects` None: config.max_redirects."""
        most = self.config.max_redirects if max_redirects is None else max_redirects
        chain, answer = Chain(first, attempts=first.attempts), first
        url = current = first.url
        start = self._scope.chain_origin(url) if self._scope.credentials else None
        while answer.status in REDIRECT_STATUSES:  # (a failed answer has no status)
            chain.redirects.append(Hop(current, answer.status))  # (narrowed by the `in` test)
            target = next_hop(
                url, current, answer.headers, chain, most,
                allow_private=self.config.allow_private,
            )  # fmt: skip
            if isinstance(target, FetchError):
                chain.error = target
                return chain
            current = target
            answer = chain.final = await self._send(
                current, method, body_limit=body_limit, stream=stream,
                status_retries=status_retries, headers=headers, chain_origin=start, sink=sink,
            )  # fmt: skip
            chain.attempts += answer.attempts
        chain.error = answer.error
        return chain

    # --- public API ---------------------------------------------------------------

    async def fetch(
        self,
        url: str,
        *,
        method: str = "HEAD",
        body_bytes: int = 0,
        confirm_with_get: bool = True,
        max_redirects: int | None = None,
        headers: Mapping[str, str] | None = None,
        host: Host | None = None,
    ) -> FetchResult:
        """Check one URL; never raises for a per-URL failure.

        HEAD first (by default); a HEAD answer >= 400 is confirmed with GET and the GET answer
        is the result (`method` "GET", attempts of both counted). A GET keeps up to
        `body_bytes` of the body in `body_head` (0 = BODY_EXCERPT) and drops the rest.
        `max_redirects` defaults to config.max_redirects. `headers` are added to every
        request of this check (e.g. If-None-Match for an incremental run); `host` is the
        URL's when the caller has it (a listed URL's)."""
        method = method.upper()
        # A HEAD error is confirmed with GET anyway, so its status is not retried:
        # the GET's own retries decide (half the requests to a failing page).
        confirm = method == "HEAD" and confirm_with_get
        limit = (body_bytes if body_bytes > 0 else BODY_EXCERPT) if method == "GET" else 0
        # the first hop here, the redirect loop only after a redirect (most URLs have none)
        answer = await self._start(url, method, limit, False, not confirm, headers, None, host)
        if answer.status in REDIRECT_STATUSES:  # (a failed answer has no status)
            retry = not confirm
            chain = await self._follow(
                answer, method, limit, False, max_redirects, retry, headers, None
            )
            result = fetch_result(url, method, chain)
        else:
            result = answer_result(url, method, answer, (), answer.error, answer.attempts)
        if confirm and result.status in _CONFIRMED_STATUSES:
            confirmed = await self._fetch_get(url, body_bytes, max_redirects, headers, None)
            return replace(confirmed, attempts=confirmed.attempts + result.attempts)
        return result

    async def _fetch_get(
        self,
        url: str,
        body_bytes: int,
        max_redirects: int | None,
        headers: Mapping[str, str] | None,
        sink: BodySink | None,
    ) -> FetchResult:
        """A GET with its redirects and retries: a HEAD's confirmation, a page's read."""
        limit = body_bytes if body_bytes > 0 else BODY_EXCERPT
        first = await self._start(url, "GET", limit, False, True, headers, sink)
        chain = await self._follow(first, "GET", limit, False, max_redirects, True, headers, sink)
        return fetch_result(url, "GET", chain)

    async def fetch_page(
        self, url: str, sink: BodySink, *, cap: int, headers: Mapping[str, str] | None = None
    ) -> FetchResult:
        """GET one page: one request (no HEAD first), redirects, retries and politeness as
        for every fetch. The final answer's decompressed body goes to `sink` (if its
        `start()` wants it) until the sink has enough or `cap` bytes were read; `body_head`
        is the first BODY_EXCERPT bytes of it (the sink keeps what it wants). The rest of
        the body is never downloaded. Never raises for a per-URL failure.

        A `RemoteSink` is read in a fetch worker while they run (with the same result and
        the same sink state as here): its `accept()` gets the worker's outcome of each hop
        whose answer started the sink, in order."""
        return await self._fetch_get(url, max(1, cap), None, headers, sink)

    async def fetch_as(
        self, url: str, user_agent: str, *, sink: BodySink | None = None, cap: int
    ) -> FetchResult:
        """One GET of `url` as another agent (`--agents-fetch`): its User-Agent string, the
        credentials and extra headers of the origin, the body up to `cap` (into `sink` if
        it wants the page). No redirect followed, no retry, no Retry-After wait. The host's
        turn and in-flight slot are taken as for any request, but the answer never changes
        the host's politeness (asagent.py). Never raises for a per-URL failure."""
        return await self._agents.fetch_as(url, user_agent, sink=sink, cap=cap)

    @asynccontextmanager
    async def stream(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[StreamResponse]:
        """Open a sitemap body (GET, raw bytes, redirects followed and recorded, retried
        before the body starts). The response is closed when the block exits."""
        # no body limit: a stream's body is its reader's
        first = await self._start(url, "GET", 0, True, True, headers, None)
        chain = await self._follow(first, "GET", 0, True, None, True, headers, None)
        result = fetch_result(url, "GET", chain)  # the chain's end as for any fetch
        response = StreamResponse(
            url=url,
            final_url=result.final_url,
            # for a sitemap any failure, redirect errors included, is "no usable answer"
            status=None if chain.error else result.status,
            headers=result.headers,
            redirects=result.redirects,
            error=result.error,
            error_kind=result.error_kind,
            attempts=result.attempts,
            elapsed_ms=result.elapsed_ms,
            resp=chain.final.resp,
        )
        try:
            yield response
        finally:
            response._close()
