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
  `_send` (`_prepare`), the one place every request passes, and only when its origin is in
  `config.credential_origins` (without a scope: the origin its redirect chain started at).
  So they never follow a redirect to another host, and a robots.txt or a listed URL elsewhere
  never sees them. `config.insecure_hosts` turns TLS verification off per request, for those
  host names only.
- One send path per request (`HttpClient._send`, STYLE lesson 18): the host's politeness
  slot, ONE retry loop with one predicate (retry.py) for plain, streamed and page-check
  requests, then the exchange: a plain one (`exchange.exchange()`, in this process or in a
  fetch worker, `_dispatch`) or an opened one (`_attempt_open`: a stream, or a body for a
  `BodySink`). The redirect loop (`_chain`) calls it once per hop.
- A page GET whose sink is a `RemoteSink` (exchange.py) goes to a fetch worker while they
  run (`_attempt_remote`): the worker rebuilds the sink from its recipe, reads the body into
  it and answers with the sink's outcome, which the parent's sink accepts; everything else
  (the slot, retries, Retry-After, redirects) is this send path's, as for any request. A
  sink that is not remote, or no worker, and the page is read here.

Knows nothing of sitemaps or robots.txt rules. Imports aiohttp (lazily), yarl and
audit.core, audit.http.{addresses, exchange, hosts, retry, workers} only.
"""

from __future__ import annotations

import asyncio
import base64
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import urljoin, urlsplit

from yarl import URL

from audit.core.config import STREAM_TIMEOUT_FACTOR, CrawlConfig
from audit.core.errors import FetchError, FetchErrorKind, translate_exception
from audit.core.records import FetchResult, Hop, header_value, header_values
from audit.http.addresses import PrivateGuard, redirect_to_private
from audit.http.exchange import (
    BODY_EXCERPT,
    REDIRECT_STATUSES,
    SINK_MODULES,
    BodySink,
    Exchange,
    Recipe,
    RemoteSink,
    discard,
    exchange,
    new_session,
    read_for_sink,
    read_head,
    recipe_of,
    release_if_read,
    request_url,
    response_headers,
    wants_body,
)
from audit.http.hosts import Host, HostPool, HostStats, address_id, origin_key
from audit.http.retry import (
    BACKOFF,
    DONE,
    after_error,
    after_status,
    backoff_delay,
    parse_retry_after,
    should_retry,
)
from audit.http.workers import FetchWorkers, auto_worker_count

if TYPE_CHECKING:  # loaded by HttpClient._open: a run that requests nothing never imports it
    import aiohttp

STREAM_HEADROOM: Final = 8  # connections beyond the worker count, for sitemap streams

__all__ = [
    "BODY_EXCERPT",
    "BodySink",
    "HttpClient",
    "StreamResponse",
    "backoff_delay",
    "parse_retry_after",
    "should_retry",
]


def _loop_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path or '/'}?{parts.query}"


def _next_location(current: str, location: str | None) -> str | FetchError:
    """Resolve a Location header against the current URL, or say why it cannot be followed."""
    if location is None or not location.strip():
        return FetchError(
            f"{current} redirects without a Location header", kind="redirect-invalid", url=current
        )
    location = location.strip()
    try:
        target = urljoin(current, location)
        parts = urlsplit(target)
        scheme = parts.scheme.lower()
        if scheme and scheme not in ("http", "https"):
            return FetchError(
                f"{current} redirects to a {scheme}: URL ({location[:200]}); not followed",
                kind="redirect-scheme",
                url=current,
            )
        if not parts.hostname:
            raise ValueError("no host")
        _ = parts.port  # ValueError for a bad port
    except ValueError:
        return FetchError(
            f"{current} redirects to an invalid Location: {location[:200]!r}",
            kind="redirect-invalid",
            url=current,
        )
    return target


def _private_error(url: str) -> FetchError:
    """A URL on a private address that a public target lists or declares: not requested."""
    return FetchError(
        f"{url[:200]} is on a private, loopback or link-local address and the target is "
        "public; not requested (--allow-private requests it)",
        kind="redirect-private",
        url=url,
    )


_IDENTITY: Final = {"Accept-Encoding": "identity"}
# The statuses of a plain answer that is final at once: not retried, no Retry-After, not
# counted as a 429 or a server error (retry.after_status decides the others).
_FINAL_STATUSES: Final = frozenset(range(100, 429)) - {408}


def _request_headers(stream: bool, extra: Mapping[str, str] | None) -> dict[str, str] | None:
    """Per-request headers: the raw bytes of a stream, plus a caller's extra headers."""
    if not extra:
        return _IDENTITY if stream else None
    return {**_IDENTITY, **extra} if stream else dict(extra)


def credential_headers(config: CrawlConfig) -> dict[str, str]:
    """The headers that carry the run's staging credentials (sent only within their scope;
    the browser of --render sends them by the same rule)."""
    out: dict[str, str] = {}
    for name, value in config.extra_headers:
        if name.lower() != "user-agent":
            out[name] = value
    if config.cookies:
        out["Cookie"] = "; ".join(f"{k}={v}" for k, v in config.cookies)
    if config.auth is not None:
        user, password = config.auth
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        out["Authorization"] = f"Basic {token}"
    return out


def _needs_workers(
    began: tuple[float, float], now: tuple[float, float], window: int, config: CrawlConfig
) -> bool:
    """Did a window of `window` exchanges, from `began` to `now` (wall, CPU seconds), run
    fast enough or keep this process busy enough to want fetch workers?"""
    wall = now[0] - began[0]
    if wall <= window / config.fetch_workers_min_rate:
        return True
    return (now[1] - began[1]) >= config.fetch_workers_min_busy * wall


def _worker_count(config: CrawlConfig) -> int:
    """Fetch worker processes of a run: --fetch-workers, or auto's count for this machine."""
    count = config.fetch_workers
    if count is None:
        count = auto_worker_count()
    return max(0, count)


def _user_agent(config: CrawlConfig) -> str:
    # --header User-Agent replaces ours everywhere; other extra headers are credentials
    return next(
        (v for k, v in config.extra_headers if k.lower() == "user-agent"), config.user_agent
    )


def _take_exchange(answer: _Answer, host: Host, outcome: Exchange, retryable: bool) -> int:
    """Put a plain exchange's outcome into `answer`; what it asks of the retry loop."""
    status, headers, body, message, kind, answer.elapsed_ms = outcome
    if kind is not None:
        answer.error = FetchError(message or "", kind=kind, url=answer.url)
        return after_error(kind)
    assert status is not None
    step = after_status(host, status, headers, retryable)
    if step == DONE:  # a retried answer was discarded: it is nobody's answer
        answer.status, answer.headers, answer.body = status, headers, body
    return step


def _fetch_result(url: str, method: str, chain: _Chain) -> FetchResult:
    """The FetchResult of a checked URL's redirect chain."""
    final, error = chain.final, chain.error
    # positional, in FetchResult's field order: this runs once per checked URL
    return FetchResult(
        url,
        final.url,
        final.status,
        final.headers,
        tuple(chain.redirects) if chain.redirects else (),
        final.elapsed_ms,
        method,
        None if error is None else str(error),
        None if error is None else error.kind,
        final.body,
        chain.attempts,
    )


@dataclass(slots=True)
class _Opened:
    """The fixed parts of a request whose response the client reads itself: a sitemap
    stream (left open for the caller) or a page GET whose body goes to a `BodySink`."""

    session: aiohttp.ClientSession
    method: str
    target: URL
    headers: Mapping[str, str] | None
    verify: bool
    timeout: aiohttp.ClientTimeout
    stream: bool
    body_limit: int | None
    sink: BodySink | None
    recipe: Recipe | None = None  # the sink's, when a fetch worker may read the page

    def keeps_open(self, status: int) -> bool:
        """A stream's final answer stays open for its reader."""
        return self.stream and status not in REDIRECT_STATUSES

    def read_body(
        self, resp: aiohttp.ClientResponse, headers: tuple[tuple[str, str], ...]
    ) -> Awaitable[bytes] | None:
        """The reader of a final answer's body, or None when no body is wanted (a HEAD,
        a redirect). Returns the coroutine: the caller awaits it, no extra frame."""
        limit = self.body_limit
        if limit is None or not wants_body(self.method, resp.status, limit):
            return None
        sink = self.sink
        if sink is None:
            return read_head(resp, limit)
        return read_for_sink(resp, headers, sink, limit)


@dataclass(slots=True)
class _Answer:
    """One URL's final answer after retries (internal)."""

    url: str
    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    error: FetchError | None = None
    attempts: int = 0
    elapsed_ms: float = 0.0
    resp: aiohttp.ClientResponse | None = None  # still open: only for streams


@dataclass(slots=True)
class _Chain:
    """The end of a redirect chain (internal)."""

    final: _Answer
    redirects: list[Hop] = field(default_factory=list)
    attempts: int = 0
    error: FetchError | None = None


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
        error_kind: FetchErrorKind | None,
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
        while True:
            try:
                chunk = await resp.content.readany()
            except Exception as exc:
                raise translate_exception(exc, self.final_url) from exc
            if not chunk:
                return
            self.bytes_read += len(chunk)
            yield chunk

    def _close(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None and not release_if_read(resp):
            resp.close()


class HttpClient:
    """The run's HTTP client. Use as `async with HttpClient(config) as client:`."""

    _fetch_timeout: aiohttp.ClientTimeout  # both set by _open
    _stream_timeout: aiohttp.ClientTimeout
    _loop: asyncio.AbstractEventLoop

    def __init__(self, config: CrawlConfig, *, sink_modules: Sequence[str] = SINK_MODULES) -> None:
        """`sink_modules`: the modules whose remote body sinks a fetch worker may build
        (exchange.SINK_MODULES: this package's)."""
        self.config = config
        self._sink_modules = tuple(sink_modules)
        self.hosts = HostPool(
            rate=config.rate,
            max_in_flight=config.per_host_cap,
            retry_after_cap=config.retry_after_cap,
            key=config.politeness_key,
            address_of=self._address_of,
        )
        self._session: aiohttp.ClientSession | None = None
        self._agent_session: aiohttp.ClientSession | None = None  # fetch_as's (--agents-fetch)
        self._entered = False
        self._credentials = credential_headers(config)
        self._scope: frozenset[str] = frozenset(
            origin_key(o) for o in config.credential_origins if origin_key(o)
        )
        self._insecure = frozenset(h.lower().strip("[]") for h in config.insecure_hosts)
        self._adds = bool(self._credentials or self._insecure)  # _prepare has work to do
        # the targets (credential_origins: the origins the user gave) are trusted as given;
        # from a public target, nothing else on a private address is requested
        self._guard = PrivateGuard.of(config.credential_origins, config.allow_private)
        # fetch workers (workers.py) start once this many plain exchanges ran here: a small
        # audit never pays for a process
        self._workers: FetchWorkers | None = None  # once started; used while `ready`
        self._workers_task: asyncio.Task[bool] | None = None
        self._worker_count = _worker_count(config)
        self._plain_count = 0
        self._workers_after = config.fetch_workers_after if self._worker_count > 0 else -1
        # auto: when the current count window began (loop time, process CPU time)
        self._window_start: tuple[float, float] | None = None

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
            _user_agent(config),
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

    def _workers_due(self) -> None:
        """The exchange count reached `_workers_after`: start the fetch workers, or with
        `auto`, only if the last window of exchanges needed them: they ran fast, or this
        process was busy for most of the window (measured over a window of the same count;
        a slower or idler crawl is looked at again a window later)."""
        config = self.config
        if config.fetch_workers is None:
            now = (self._loop.time(), time.process_time())
            began, self._window_start = self._window_start, now
            window = max(1, config.fetch_workers_after)
            if began is None or not _needs_workers(began, now, window, config):
                self._workers_after += window
                return
        self._start_workers()

    def _start_workers(self) -> None:
        from audit.http.workers import FetchWorkers

        config = self.config
        self._workers = FetchWorkers(
            self._worker_count,
            {
                "user_agent": _user_agent(config),
                "timeout": config.timeout,
                "concurrency": max(1, config.concurrency),
                "per_host": config.per_host_cap,
                "trusted": sorted(self._guard.trusted),
                "guarded": self._guard.active,
                "sink_modules": list(self._sink_modules),
                "retry_after_cap": config.retry_after_cap,
            },
        )
        self._workers_task = self._loop.create_task(self._workers.start())

    async def wait_fetch_workers(self) -> bool:
        """Wait until the fetch workers, once started, are ready; True when they run. For
        callers that want every later exchange in a worker (tests, benchmarks)."""
        task = self._workers_task
        if task is None:
            return False
        return await asyncio.shield(task) and self._workers is not None and self._workers.ready

    @property
    def worker_exchanges(self) -> int:
        """Exchanges that fetch worker processes ran for this client (0 without workers)."""
        return self._workers.exchanges if self._workers is not None else 0

    @property
    def worker_pids(self) -> list[int]:
        """The fetch worker processes started (running or not)."""
        return self._workers.pids if self._workers is not None else []

    async def aclose(self) -> None:
        self._entered = False
        task, self._workers_task = self._workers_task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._workers is not None:
            await self._workers.aclose()
        session, self._session = self._session, None
        if session is not None:
            await session.close()
        agents, self._agent_session = self._agent_session, None
        if agents is not None:
            await agents.close()

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
        None when there is none."""
        loop = asyncio.get_running_loop()
        try:
            answers = await loop.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return None
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
        body_limit: int | None,
        stream: bool,
        status_retries: bool = True,
        headers: Mapping[str, str] | None = None,
        chain_origin: str | None = None,
        sink: BodySink | None = None,
    ) -> _Answer:
        """Request `url` once plus retries. With `stream`, a final non-3xx answer stays open;
        otherwise up to `body_limit` bytes of a final GET answer are read and it is closed.
        `chain_origin` is the host key the redirect chain started at (default: url's own).

        The one retry loop of every request: take the host's turn, one attempt, then what
        the attempt asks (retry.py). A retryable answer is discarded only when a retry will
        follow; the last one is kept. Every request of a run passes through here, once per
        attempt (one frame: this is the per-URL path; a plain attempt is the exchange's own
        coroutine, no other)."""
        session = self._session or self.session  # outside `async with`: a bug, raised
        answer = _Answer(url)
        try:
            host = self.hosts.get(url)
            target = request_url(url)
        except ValueError:
            answer.error = FetchError(f"not an absolute http(s) URL: {url}", kind="other", url=url)
            return answer
        request_headers: Mapping[str, str] | None = None
        verify = True
        if stream or headers or self._adds:  # a listed URL's HEAD: nothing to add
            request_headers, verify = self._prepare(host, stream, headers, chain_origin)
        opened = None
        if stream or sink is not None:
            opened = self._opened(
                session, method, target, request_headers, verify, stream, body_limit, sink
            )
        retries = max(0, self.config.retries)
        plain_limit = body_limit or 0
        while True:
            answer.attempts += 1
            retryable = status_retries and answer.attempts <= retries
            if stream:  # a stream takes the host's turn but no in-flight slot
                held = await host.acquire(hold_slot=False)
            else:
                held = host.try_acquire() or await host.acquire()
            answer.status, answer.headers, answer.body, answer.error = None, (), b"", None
            try:
                if opened is None:
                    # None from a worker: every worker is gone, so this run goes on here
                    outcome = await self._dispatch(
                        session, method, url, target, request_headers, verify, plain_limit,
                        retryable,
                    ) or await exchange(
                        session, method, url, target, request_headers, verify, plain_limit,
                        retryable,
                    )  # fmt: skip
                    status = outcome[0]  # None for a failure
                    if status in _FINAL_STATUSES:
                        # the common answer: final, no retry, no Retry-After (after_status)
                        host.record_status(status)
                        answer.status, answer.headers, answer.body = outcome[:3]
                        answer.elapsed_ms = outcome[5]
                        return answer
                    step = _take_exchange(answer, host, outcome, retryable)
                else:
                    step = await self._attempt_read(answer, host, opened, retryable)
            finally:
                if held:
                    host.release()  # never hold a slot through a backoff sleep
            if step == DONE or answer.attempts > retries:
                return answer
            if step == BACKOFF:
                await self._backoff(host, answer.attempts - 1)
            host.retries += 1

    def _prepare(
        self,
        host: Host,
        stream: bool,
        headers: Mapping[str, str] | None,
        chain_origin: str | None,
    ) -> tuple[dict[str, str] | None, bool]:
        """A request's headers (credentials within their scope) and TLS verification."""
        if self._credentials and self._may_send_credentials(host.key, chain_origin):
            headers = {**self._credentials, **headers} if headers else self._credentials
        verify = not (self._insecure and self._is_insecure(host))
        return _request_headers(stream, headers), verify

    def _opened(
        self,
        session: aiohttp.ClientSession,
        method: str,
        target: URL,
        headers: Mapping[str, str] | None,
        verify: bool,
        stream: bool,
        body_limit: int | None,
        sink: BodySink | None,
    ) -> _Opened | None:
        """The fixed parts of a stream or a body-sink request; None for a plain exchange."""
        if not stream and sink is None:
            return None
        timeout = self._stream_timeout if stream else self._fetch_timeout
        # a worker may read the page only if workers may run and the sink can be rebuilt
        recipe = recipe_of(sink) if self._worker_count else None
        return _Opened(
            session, method, target, headers, verify, timeout, stream, body_limit, sink, recipe
        )

    def _dispatch(
        self,
        session: aiohttp.ClientSession,
        method: str,
        url: str,
        target: URL,
        headers: Mapping[str, str] | None,
        verify: bool,
        body_limit: int,
        retryable: bool,
    ) -> Awaitable[Exchange | None]:
        """Where a plain exchange runs: a fetch worker while they are ready, else here (and
        counted, to start the workers when due). Returns the coroutine to await."""
        workers = self._workers
        if workers is not None and workers.ready:
            return workers.exchange(method, url, headers, verify, body_limit, retryable)
        if self._plain_count == self._workers_after:
            self._workers_due()
        self._plain_count += 1
        return exchange(session, method, url, target, headers, verify, body_limit, retryable)

    def _attempt_read(
        self, answer: _Answer, host: Host, request: _Opened, retryable: bool
    ) -> Awaitable[int]:
        """The attempt of a request whose response is read: by a fetch worker for a remote
        sink, else here. Returns the coroutine to await."""
        if request.recipe is None:
            return self._attempt_open(answer, host, request, retryable)
        return self._attempt_remote(answer, host, request, retryable)

    async def _attempt_remote(
        self, answer: _Answer, host: Host, request: _Opened, retryable: bool
    ) -> int:
        """One attempt of a page GET whose sink a fetch worker rebuilds: the worker reads
        the page and the sink here accepts its outcome (if the worker started its sink).
        No worker (none ready, one that died, a recipe refused): read here."""
        pending = self._dispatch_sink(answer.url, request, retryable)
        reply = await pending if pending is not None else None
        if reply is None:
            return await self._attempt_open(answer, host, request, retryable)
        outcome, accepted = reply
        step = _take_exchange(answer, host, outcome, retryable)
        if accepted is not None:
            cast(RemoteSink, request.sink).accept(accepted[0])
        return step

    def _dispatch_sink(
        self, url: str, request: _Opened, retryable: bool
    ) -> Awaitable[tuple[Exchange, list[Any] | None] | None] | None:
        """A fetch worker's read of a remote sink's page while workers are ready; else
        None, and the page read here counts towards starting them (as a plain exchange)."""
        workers = self._workers
        if workers is not None and workers.ready:
            return workers.exchange_into(
                url, request.headers, request.verify, request.body_limit or 0, retryable,
                cast(Recipe, request.recipe),
            )  # fmt: skip
        if self._plain_count == self._workers_after:
            self._workers_due()
        self._plain_count += 1
        return None

    async def _attempt_open(
        self, answer: _Answer, host: Host, request: _Opened, retryable: bool
    ) -> int:
        """One attempt whose response is read here: a stream (kept open in `answer.resp`)
        or a GET for a body sink. The host counts the status as soon as it arrives; what
        the attempt asks of the retry loop is returned."""
        loop = self._loop
        started = loop.time()
        resp: aiohttp.ClientResponse | None = None
        try:
            resp = await request.session.request(
                request.method,
                request.target,
                allow_redirects=False,
                timeout=request.timeout,
                auto_decompress=not request.stream,
                headers=request.headers,
                ssl=request.verify,
            )
            headers = response_headers(resp)
            step = after_status(host, resp.status, headers, retryable)
            if step != DONE:
                await discard(resp)
                return step
            answer.status, answer.headers = resp.status, headers
            if request.keeps_open(resp.status):
                answer.resp, resp = resp, None  # the caller reads and closes it
                return DONE
            reading = request.read_body(resp, headers)
            if reading is not None:
                answer.body = await reading
            if not release_if_read(resp):
                await discard(resp)
            return DONE
        except Exception as exc:
            err = translate_exception(exc, answer.url)
            answer.status, answer.headers, answer.body, answer.error = None, (), b"", err
            return after_error(err.kind)
        finally:
            answer.elapsed_ms = (loop.time() - started) * 1000.0
            if resp is not None and not resp.closed:
                resp.close()  # cancelled or failed half-way: never reuse the connection

    def _may_send_credentials(self, host_key: str, chain_origin: str | None) -> bool:
        """Credentials go to their scope's origins only; without a scope, to the origin a
        redirect chain started at, never to another host it redirects to."""
        if self._scope:
            return host_key in self._scope
        return chain_origin is None or host_key == chain_origin

    def _is_insecure(self, host: Host) -> bool:
        return host.scheme == "https" and host.hostname in self._insecure

    async def _backoff(self, host: Host, retry: int) -> None:
        delay = backoff_delay(retry, self.config.backoff_base, self.config.backoff_cap)
        host.backed_off(delay)
        await asyncio.sleep(delay)

    # --- redirect chains ----------------------------------------------------------

    async def _chain(
        self,
        url: str,
        method: str,
        *,
        body_limit: int | None,
        stream: bool,
        max_redirects: int,
        status_retries: bool = True,
        headers: Mapping[str, str] | None = None,
        sink: BodySink | None = None,
    ) -> _Chain:
        """The redirect loop: one `_send` per hop, every 3xx hop recorded, until a final
        answer, a failure or a redirect that is not followed (`_next_hop`)."""
        chain = _Chain(_Answer(url))
        current = url
        seen: set[str] | None = None  # built at the first redirect: most URLs have none
        start = self._chain_origin(url) if self._credentials else None
        if self._guard.active and self._guard.refuses(url):
            chain.error = chain.final.error = _private_error(url)
            return chain
        while True:
            answer = await self._send(
                current,
                method,
                body_limit=body_limit,
                stream=stream,
                status_retries=status_retries,
                headers=headers,
                chain_origin=start,
                sink=sink,
            )
            chain.final = answer
            chain.attempts += answer.attempts
            if answer.error is not None or answer.status not in REDIRECT_STATUSES:
                chain.error = answer.error
                return chain
            assert answer.status is not None
            chain.redirects.append(Hop(current, answer.status))
            if seen is None:
                seen = {_loop_key(url)}
            target = self._next_hop(url, current, answer.headers, seen, chain, max_redirects)
            if isinstance(target, FetchError):
                chain.error = target
                return chain
            seen.add(_loop_key(target))
            current = target

    def _chain_origin(self, url: str) -> str | None:
        """The origin a chain starts at, when credentials without a scope are bound to it."""
        return origin_key(url) if self._credentials and not self._scope else None

    def _next_hop(
        self,
        url: str,
        current: str,
        headers: tuple[tuple[str, str], ...],
        seen: set[str],
        chain: _Chain,
        max_redirects: int,
    ) -> str | FetchError:
        """Where the redirect from `current` goes, or why it is not followed: no usable
        Location, a loop, too many hops, or a public host pointing into a private network."""
        target = _next_location(current, header_value(headers, "location"))
        if isinstance(target, FetchError):
            return target
        if _loop_key(target) in seen:
            return FetchError(
                f"redirect loop: {target} was already visited", kind="redirect-loop", url=url
            )
        if len(chain.redirects) > max_redirects:
            return FetchError(
                f"more than {max_redirects} redirects from {url}", kind="redirect-limit", url=url
            )
        if not self.config.allow_private and redirect_to_private(url, target):
            # a public host must not steer us into our own network (cloud metadata,
            # admin ports); a chain that starts there is the user's choice
            return FetchError(
                f"{current} redirects to a private, loopback or link-local address "
                f"({target[:200]}); not followed (--allow-private follows it)",
                kind="redirect-private",
                url=current,
            )
        return target

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
    ) -> FetchResult:
        """Check one URL; never raises for a per-URL failure.

        HEAD first (by default); a HEAD answer >= 400 is confirmed with GET and the GET answer
        is the result (`method` "GET", attempts of both counted). A GET keeps up to
        `body_bytes` of the body in `body_head` (0 = BODY_EXCERPT) and drops the rest.
        `max_redirects` defaults to config.max_redirects. `headers` are added to every
        request of this check (e.g. If-None-Match for an incremental run).
        """
        method = method.upper()
        # A HEAD error is confirmed with GET anyway, so its status is not retried:
        # the GET's own retries decide (half the requests to a failing page).
        confirm = method == "HEAD" and confirm_with_get
        limit = body_bytes if body_bytes > 0 else BODY_EXCERPT
        chain = await self._chain(
            url,
            method,
            body_limit=limit if method == "GET" else 0,
            stream=False,
            max_redirects=self.config.max_redirects if max_redirects is None else max_redirects,
            status_retries=not confirm,
            headers=headers,
        )
        result = _fetch_result(url, method, chain)
        if confirm and result.status is not None and result.status >= 400:
            confirmed = await self._fetch_once(
                url, "GET", body_bytes, max_redirects, headers=headers
            )
            return replace(confirmed, attempts=confirmed.attempts + result.attempts)
        return result

    async def _fetch_once(
        self,
        url: str,
        method: str,
        body_bytes: int,
        max_redirects: int | None,
        *,
        status_retries: bool = True,
        headers: Mapping[str, str] | None = None,
        sink: BodySink | None = None,
    ) -> FetchResult:
        limit = body_bytes if body_bytes > 0 else BODY_EXCERPT
        chain = await self._chain(
            url,
            method,
            body_limit=limit if method == "GET" else 0,
            stream=False,
            max_redirects=self.config.max_redirects if max_redirects is None else max_redirects,
            status_retries=status_retries,
            headers=headers,
            sink=sink,
        )
        return _fetch_result(url, method, chain)

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
        return await self._fetch_once(url, "GET", max(1, cap), None, sink=sink, headers=headers)

    async def fetch_as(
        self, url: str, user_agent: str, *, sink: BodySink | None = None, cap: int
    ) -> FetchResult:
        """One GET of `url` as another agent (`--agents-fetch`): its User-Agent string, the
        credentials and extra headers of the origin, the body up to `cap` (into `sink` if
        it wants the page). No redirect followed, no retry, no Retry-After wait. The host's
        turn and in-flight slot are taken as for any request, but the answer never changes
        the host's politeness (a 429 or 503 to an agent is that agent's, not the host's).
        Never raises for a per-URL failure."""
        chain = _Chain(_Answer(url), attempts=1)
        try:
            host = self.hosts.get(url)
            target = request_url(url)
        except ValueError:
            chain.error = FetchError(f"not an absolute http(s) URL: {url}", kind="other", url=url)
            return _fetch_result(url, "GET", chain)
        if self._guard.active and self._guard.refuses(url):
            chain.error = _private_error(url)
            return _fetch_result(url, "GET", chain)
        headers, verify = self._prepare(host, False, {"User-Agent": user_agent}, None)
        headers = {k: v for k, v in (headers or {}).items() if k.lower() != "user-agent"}
        headers["User-Agent"] = user_agent
        held = host.try_acquire() or await host.acquire()
        try:
            await self._agent_exchange(chain.final, target, headers, verify, sink, cap)
        finally:
            if held:
                host.release()
        chain.error = chain.final.error
        return _fetch_result(url, "GET", chain)

    def _agents_session(self) -> aiohttp.ClientSession:
        """The session of `fetch_as`, made at its first request: the run's settings, but
        aiohttp's own retry of an idempotent request whose connection drops (RFC 9112
        9.3.1) is off, as aiohttp's test client turns it off: an agent's request is sent
        exactly once."""
        session = self._agent_session
        if session is None:
            self.session  # noqa: B018  (made first: it sets the timeouts)
            config = self.config
            session = self._agent_session = new_session(
                _user_agent(config),
                self._fetch_timeout,
                limit=max(1, config.concurrency),
                per_host=config.per_host_cap,
                guard=self._guard,
            )
            session._retry_connection = False
        return session

    async def _agent_exchange(
        self,
        answer: _Answer,
        target: URL,
        headers: dict[str, str],
        verify: bool,
        sink: BodySink | None,
        cap: int,
    ) -> None:
        """`fetch_as`'s one request, its outcome into `answer` (no host bookkeeping)."""
        session = self._agents_session()
        started = time.monotonic()
        resp: aiohttp.ClientResponse | None = None
        try:
            resp = await session.request(
                "GET",
                target,
                allow_redirects=False,
                timeout=self._fetch_timeout,
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

    @asynccontextmanager
    async def stream(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[StreamResponse]:
        """Open a sitemap body (GET, raw bytes, redirects followed and recorded, retried
        before the body starts). The response is closed when the block exits."""
        chain = await self._chain(
            url,
            "GET",
            body_limit=None,
            stream=True,
            max_redirects=self.config.max_redirects,
            headers=headers,
        )
        final = chain.final
        response = StreamResponse(
            url=url,
            final_url=final.url,
            # for a sitemap any failure, redirect errors included, is "no usable answer"
            status=None if chain.error else final.status,
            headers=final.headers,
            redirects=tuple(chain.redirects),
            error=str(chain.error) if chain.error else None,
            error_kind=chain.error.kind if chain.error else None,
            attempts=chain.attempts,
            elapsed_ms=final.elapsed_ms,
            resp=final.resp,
        )
        try:
            yield response
        finally:
            response._close()
