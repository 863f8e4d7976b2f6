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
- One retry predicate, `should_retry()`, for fetches and streams (STYLE lesson 6).
- `fetch_page()` (page checks) is one GET whose final answer's decompressed body goes to a
  `BodySink` chunk by chunk until the sink has seen enough or `cap` bytes were read; then the
  connection is closed unless the little that is left can be drained (never the rest of a
  large body). A retried attempt restarts the sink (`start()` again).
- Staging credentials (`config.auth`, `cookies`, `extra_headers`) are added per request in
  `_send`, the one place every request passes, and only when the request's origin is in
  `config.credential_origins` (without a scope: the origin its redirect chain started at).
  So they never follow a redirect to another host, and a robots.txt or a listed URL elsewhere
  never sees them. `config.insecure_hosts` turns TLS verification off per request, for those
  host names only.

Knows nothing of sitemaps or robots.txt rules. Imports aiohttp, yarl and audit.{config,
errors, records, http.hosts, http.addresses} only.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import random
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Final, Protocol
from urllib.parse import urljoin, urlsplit

from yarl import URL

from audit.core.config import STREAM_TIMEOUT_FACTOR, CrawlConfig
from audit.core.errors import FetchError, FetchErrorKind, translate_exception
from audit.core.records import FetchResult, Hop, header_value, header_values
from audit.http.addresses import redirect_to_private
from audit.http.hosts import Host, HostPool, HostStats, origin_of

if TYPE_CHECKING:  # loaded by HttpClient._open: a run that requests nothing never imports it
    import aiohttp

    from audit.http.workers import FetchWorkers

BODY_EXCERPT: Final = 2048  # bytes of a GET body kept by default (diagnosis, sniffing)
STREAM_HEADROOM: Final = 8  # connections beyond the worker count, for sitemap streams
REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
# 408 request timeout, 429 too many requests, 500/502/503/504 transient server trouble
RETRY_STATUSES: Final = frozenset({408, 429, 500, 502, 503, 504})
# DNS and TLS failures do not heal in seconds; a refused or reset connection may
RETRY_ERROR_KINDS: Final = frozenset({"timeout", "connect", "reset"})
DRAIN_LIMIT: Final = 16 * 1024  # a small unwanted body is read so the connection is reused
PAGE_READ: Final = 64 * 1024  # bytes asked of the socket at once for a BodySink

__all__ = [
    "BODY_EXCERPT",
    "BodySink",
    "HttpClient",
    "StreamResponse",
    "backoff_delay",
    "parse_retry_after",
    "should_retry",
]


def should_retry(status: int | None, error_kind: str | None) -> bool:
    """The one retry predicate: transient statuses and transient network failures."""
    if error_kind is not None:
        return error_kind in RETRY_ERROR_KINDS
    return status is not None and status in RETRY_STATUSES


def backoff_delay(retry: int, base: float, cap: float, rand: float | None = None) -> float:
    """Exponential backoff with jitter for the `retry`-th retry (0-based): in [d/2, d],
    d = min(cap, base * 2**retry)."""
    ceiling = min(cap, base * (2.0**retry))
    r = random.random() if rand is None else rand
    return max(0.0, ceiling / 2 + r * ceiling / 2)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delay-seconds or HTTP date); None if unusable.

    A date in the past means "now" (0.0). The cap is applied by the host, not here.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # asctime and RFC 850 forms carry no zone: HTTP dates are GMT
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


# For ASCII text, str.isspace() and the C0 controls are exactly \x00-\x20.
_RAW_SPACE_OR_CONTROL = re.compile(r"[\x00-\x20]").search


def request_url(url: str) -> URL:
    # Send a well-formed URL exactly as listed (no re-quoting of its escapes); let yarl
    # percent-encode one with raw non-ASCII or spaces, as browsers do.
    if url.isascii() and _RAW_SPACE_OR_CONTROL(url) is None:
        return URL(url, encoded=True)
    return URL(url)


def _loop_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path or '/'}?{parts.query}"


def _next_location(current: str, location: str | None) -> tuple[str | None, FetchError | None]:
    """Resolve a Location header against the current URL, or say why it cannot be followed."""
    if location is None or not location.strip():
        return None, FetchError(
            f"{current} redirects without a Location header", kind="redirect-invalid", url=current
        )
    location = location.strip()
    try:
        target = urljoin(current, location)
        parts = urlsplit(target)
        scheme = parts.scheme.lower()
        if scheme and scheme not in ("http", "https"):
            return None, FetchError(
                f"{current} redirects to a {scheme}: URL ({location[:200]}); not followed",
                kind="redirect-scheme",
                url=current,
            )
        if not parts.hostname:
            raise ValueError("no host")
        _ = parts.port  # ValueError for a bad port
    except ValueError:
        return None, FetchError(
            f"{current} redirects to an invalid Location: {location[:200]!r}",
            kind="redirect-invalid",
            url=current,
        )
    return target, None


_IDENTITY: Final = {"Accept-Encoding": "identity"}


def _request_headers(stream: bool, extra: Mapping[str, str] | None) -> dict[str, str] | None:
    """Per-request headers: the raw bytes of a stream, plus a caller's extra headers."""
    if not extra:
        return _IDENTITY if stream else None
    return {**_IDENTITY, **extra} if stream else dict(extra)


def _credential_headers(config: CrawlConfig) -> dict[str, str]:
    """The headers that carry the run's staging credentials (sent only within their scope)."""
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


def _defer_host(host: Host, retry_after: str | None) -> float | None:
    """A 429/503's Retry-After is a host-wide signal: every request to the host waits,
    retried or not. The delay in seconds, or None without a usable value."""
    delay = parse_retry_after(retry_after)
    if delay is not None:
        host.defer(delay)
    return delay


def _worker_count(config: CrawlConfig) -> int:
    """Fetch worker processes of a run: --fetch-workers, or auto's count for this machine."""
    count = config.fetch_workers
    if count is None:
        from audit.http.workers import auto_worker_count

        count = auto_worker_count()
    return max(0, count)


def _user_agent(config: CrawlConfig) -> str:
    # --header User-Agent replaces ours everywhere; other extra headers are credentials
    return next(
        (v for k, v in config.extra_headers if k.lower() == "user-agent"), config.user_agent
    )


def new_session(
    user_agent: str, timeout: aiohttp.ClientTimeout, *, limit: int, per_host: int
) -> aiohttp.ClientSession:
    """The run's session settings, for the client and its fetch workers alike: keep-alive
    pool, DNS cache, no cookie jar (crawlers are stateless), decompressed bodies."""
    import aiohttp

    connector = aiohttp.TCPConnector(
        limit=limit, limit_per_host=per_host, ttl_dns_cache=300, keepalive_timeout=30
    )
    return aiohttp.ClientSession(
        connector=connector,
        headers=[("User-Agent", user_agent)],
        cookie_jar=aiohttp.DummyCookieJar(),
        timeout=timeout,
        auto_decompress=True,
    )


def _origin_key(url: str) -> str:
    """A Host key (`scheme://host:port`) of a URL or origin; "" when it has none."""
    try:
        return origin_of(url)
    except ValueError:
        return ""


def _hostname(host_key: str) -> str:
    rest = host_key.split("://", 1)[-1]
    return rest.rsplit(":", 1)[0].strip("[]")


def _headers(resp: aiohttp.ClientResponse) -> tuple[tuple[str, str], ...]:
    return tuple([(k.lower(), v) for k, v in resp.headers.items()])


async def _read_head(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    buf = bytearray()
    while len(buf) < limit:
        chunk = await resp.content.read(limit - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


class BodySink(Protocol):
    """Where `HttpClient.fetch_page()` sends a page's body."""

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        """A final answer arrived (again, after a failed attempt): True to be fed its body."""
        ...

    def feed(self, chunk: bytes) -> bool:
        """The next piece of the decompressed body; True when no more is wanted."""
        ...

    def end(self, *, at_eof: bool) -> None:
        """Reading stopped; `at_eof` when the body ended there."""
        ...


async def _read_into(resp: aiohttp.ClientResponse, sink: BodySink, cap: int) -> bytes:
    """Feed the body to `sink` until it has enough, the body ends or `cap` bytes were read."""
    buf = bytearray()
    at_eof = False
    while len(buf) < cap:
        chunk = await resp.content.read(min(PAGE_READ, cap - len(buf)))
        if not chunk:
            at_eof = True
            break
        buf += chunk
        if sink.feed(chunk):
            break
    sink.end(at_eof=at_eof or resp.content.at_eof())
    return bytes(buf)


def _release_if_read(resp: aiohttp.ClientResponse) -> bool:
    """Give the connection back if nothing is left to read (a HEAD answer, a body already
    read: the common case, with no coroutine); False otherwise."""
    if resp.content.at_eof():
        resp.release()
        return True
    return False


async def _discard(resp: aiohttp.ClientResponse) -> None:
    """Give the connection back: read a small leftover body for keep-alive, else close."""
    if _release_if_read(resp):
        return
    try:
        length = resp.content_length
        if length is not None and length <= DRAIN_LIMIT:
            await resp.content.read(DRAIN_LIMIT + 1)
    except Exception:  # a broken leftover body only costs the connection
        resp.close()
        return
    if not _release_if_read(resp):
        resp.close()  # never download a body nobody wants


# One plain exchange's outcome, in a shape that crosses a process pipe (marshal):
# (status or None, lower-cased headers, body, error message or None, error kind or None,
# elapsed ms).
Exchange = tuple[
    int | None, tuple[tuple[str, str], ...], bytes, str | None, FetchErrorKind | None, float
]


async def exchange(
    session: aiohttp.ClientSession,
    method: str,
    url: str,
    target: URL,
    headers: Mapping[str, str] | None,
    verify: bool,
    body_limit: int,
    retryable: bool,
) -> Exchange:
    """One request and its answer, no retries, no politeness: the part of a plain fetch
    (not a stream, no body sink) that may run in a fetch worker process. `target` is
    `request_url(url)`. A GET's final answer keeps up to `body_limit` bytes of body; the
    answer of a `retryable` attempt with a retry status is discarded. Never raises for a
    network failure (cancellation aside)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    resp: aiohttp.ClientResponse | None = None
    try:
        resp = await session.request(
            method, target, allow_redirects=False, headers=headers, ssl=verify
        )
        status = resp.status
        answer_headers = _headers(resp)
        body = b""
        if retryable and status in RETRY_STATUSES:
            await _discard(resp)
        else:
            if body_limit and method == "GET" and status not in REDIRECT_STATUSES:
                body = await _read_head(resp, body_limit)
            if not _release_if_read(resp):
                await _discard(resp)
        return status, answer_headers, body, None, None, (loop.time() - started) * 1000.0
    except Exception as exc:
        err = translate_exception(exc, url)
        return None, (), b"", err.message, err.kind, (loop.time() - started) * 1000.0
    finally:
        if resp is not None and not resp.closed:
            resp.close()  # cancelled or failed half-way: never reuse the connection


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
        if resp is not None and not _release_if_read(resp):
            resp.close()


class HttpClient:
    """The run's HTTP client. Use as `async with HttpClient(config) as client:`."""

    _fetch_timeout: aiohttp.ClientTimeout  # both set by _open
    _stream_timeout: aiohttp.ClientTimeout
    _loop: asyncio.AbstractEventLoop

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.hosts = HostPool(
            rate=config.rate,
            max_in_flight=config.per_host_cap,
            retry_after_cap=config.retry_after_cap,
        )
        self._session: aiohttp.ClientSession | None = None
        self._entered = False
        self._credentials = _credential_headers(config)
        self._scope: frozenset[str] = frozenset(
            _origin_key(o) for o in config.credential_origins if _origin_key(o)
        )
        self._insecure = frozenset(h.lower().strip("[]") for h in config.insecure_hosts)
        # fetch workers (workers.py) start once this many plain exchanges ran here: a small
        # audit never pays for a process
        self._workers: FetchWorkers | None = None  # once started; used while `ready`
        self._workers_task: asyncio.Task[bool] | None = None
        self._worker_count = _worker_count(config)
        self._plain_count = 0
        self._workers_after = config.fetch_workers_after if self._worker_count > 0 else -1
        self._window_start: float | None = None  # auto: when the current count window began

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
        `auto`, only if the last window of exchanges ran fast enough to need them (measured
        over a window of the same count; a slower crawl is looked at again a window later)."""
        config = self.config
        if config.fetch_workers is None:
            now = self._loop.time()
            began, self._window_start = self._window_start, now
            window = max(1, config.fetch_workers_after)
            if began is None or now - began > window / config.fetch_workers_min_rate:
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

        A retryable answer is discarded only when a retry will follow; the last one is kept.
        Every request of a run passes through here, once per attempt (one frame: this is the
        per-URL path)."""
        session = self.session  # outside `async with` is a bug, not a per-URL failure
        answer = _Answer(url)
        try:
            host = self.hosts.get(url)
            target = request_url(url)
        except ValueError:
            answer.error = FetchError(f"not an absolute http(s) URL: {url}", kind="other", url=url)
            return answer
        if self._credentials and self._may_send_credentials(host.key, chain_origin):
            headers = {**self._credentials, **headers} if headers else self._credentials
        request_headers = _request_headers(stream, headers)
        timeout = self._stream_timeout if stream else self._fetch_timeout
        verify = not (self._insecure and self._is_insecure(host.key))
        retries = max(0, self.config.retries)
        loop = self._loop
        plain = not stream and sink is None
        plain_limit = body_limit or 0
        while True:
            if answer.attempts:
                host.retries += 1
            answer.attempts += 1
            if stream:
                held = await host.acquire(hold_slot=False)
            else:
                held = host.try_acquire() or await host.acquire()
            answer.status, answer.headers, answer.body, answer.error = None, (), b"", None
            if plain:
                # a plain attempt: the exchange itself may run in a fetch worker process
                retryable = status_retries and answer.attempts <= retries
                try:
                    outcome: Exchange | None = None
                    workers = self._workers
                    if workers is not None and workers.ready:
                        # None: every worker is gone, so this run goes on here
                        outcome = await workers.exchange(
                            method, url, request_headers, verify, plain_limit, retryable
                        )
                    else:
                        if self._plain_count == self._workers_after:
                            self._workers_due()
                        self._plain_count += 1
                    if outcome is None:
                        outcome = await exchange(
                            session, method, url, target, request_headers, verify,
                            plain_limit, retryable,
                        )  # fmt: skip
                finally:
                    if held:
                        host.release()  # never hold a slot through a backoff sleep
                status, answer_headers, body, message, kind, answer.elapsed_ms = outcome
                if kind is not None:
                    answer.error = FetchError(message or "", kind=kind, url=url)
                    retry, wait = kind in RETRY_ERROR_KINDS, True
                else:
                    assert status is not None
                    host.record_status(status)
                    retry_after = None
                    if status in (429, 503):
                        retry_after = _defer_host(host, header_value(answer_headers, "retry-after"))
                    retry = retryable and status in RETRY_STATUSES
                    if retry:
                        wait = retry_after is None
                    else:
                        wait = False
                        answer.status, answer.headers, answer.body = status, answer_headers, body
                if not retry or answer.attempts > retries:
                    return answer
                if wait:
                    await self._backoff(host, answer.attempts - 1)
                continue
            resp: aiohttp.ClientResponse | None = None
            keep_open = False
            started = loop.time()
            try:
                resp = await session.request(
                    method,
                    target,
                    allow_redirects=False,
                    timeout=timeout,
                    auto_decompress=not stream,
                    headers=request_headers,
                    ssl=verify,
                )
                status = resp.status
                host.record_status(status)
                retry_after = None
                if status in (429, 503):
                    retry_after = _defer_host(host, resp.headers.get("Retry-After"))
                retry = status_retries and should_retry(status, None)
                if retry and answer.attempts <= retries:
                    await _discard(resp)
                    wait = retry_after is None
                else:
                    wait = False
                    answer.status = status
                    answer.headers = _headers(resp)
                    if stream and status not in REDIRECT_STATUSES:
                        answer.resp = resp
                        keep_open = True
                    elif body_limit and method == "GET" and status not in REDIRECT_STATUSES:
                        if sink is None:
                            answer.body = await _read_head(resp, body_limit)
                        elif sink.start(status, answer.headers):
                            answer.body = await _read_into(resp, sink, body_limit)
                        else:  # not a page the sink wants: an excerpt for diagnosis, as any GET
                            answer.body = await _read_head(resp, min(body_limit, BODY_EXCERPT))
                    if not keep_open and not _release_if_read(resp):
                        await _discard(resp)
            except Exception as exc:
                err = translate_exception(exc, answer.url)
                answer.status, answer.headers, answer.body, answer.error = None, (), b"", err
                if resp is not None:
                    resp.close()
                retry, wait = should_retry(None, err.kind), True
            finally:
                answer.elapsed_ms = (loop.time() - started) * 1000.0
                if resp is not None and not keep_open and not resp.closed:
                    resp.close()  # cancelled or failed half-way: never reuse the connection
                if held:
                    host.release()  # never hold a slot through a backoff sleep
            if not retry or answer.attempts > retries:
                return answer
            if wait:
                await self._backoff(host, answer.attempts - 1)

    def _may_send_credentials(self, host_key: str, chain_origin: str | None) -> bool:
        """Credentials go to their scope's origins only; without a scope, to the origin a
        redirect chain started at, never to another host it redirects to."""
        if self._scope:
            return host_key in self._scope
        return chain_origin is None or host_key == chain_origin

    def _is_insecure(self, host_key: str) -> bool:
        return host_key.startswith("https:") and _hostname(host_key) in self._insecure

    async def _backoff(self, host: Host, retry: int) -> None:
        delay = backoff_delay(retry, self.config.backoff_base, self.config.backoff_cap)
        host.backoff_s += delay
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
        chain = _Chain(_Answer(url))
        current = url
        seen: set[str] | None = None  # built at the first redirect: most URLs have none
        start = _origin_key(url) if self._credentials and not self._scope else None
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
            location = next((v for k, v in answer.headers if k == "location"), None)
            target, error = _next_location(current, location)
            if seen is None:
                seen = {_loop_key(url)}
            if error is None and target is not None:
                if _loop_key(target) in seen:
                    error = FetchError(
                        f"redirect loop: {target} was already visited",
                        kind="redirect-loop",
                        url=url,
                    )
                elif len(chain.redirects) > max_redirects:
                    error = FetchError(
                        f"more than {max_redirects} redirects from {url}",
                        kind="redirect-limit",
                        url=url,
                    )
                elif not self.config.allow_private and redirect_to_private(url, target):
                    # a public host must not steer us into our own network (cloud metadata,
                    # admin ports); a chain that starts there is the user's choice
                    error = FetchError(
                        f"{current} redirects to a private, loopback or link-local address "
                        f"({target[:200]}); not followed (--allow-private follows it)",
                        kind="redirect-private",
                        url=current,
                    )
            if error is not None or target is None:
                chain.error = error
                return chain
            seen.add(_loop_key(target))
            current = target

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
        result = await self._fetch_once(
            url, method, body_bytes, max_redirects, status_retries=not confirm, headers=headers
        )
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

    async def fetch_page(
        self, url: str, sink: BodySink, *, cap: int, headers: Mapping[str, str] | None = None
    ) -> FetchResult:
        """GET one page: one request (no HEAD first), redirects, retries and politeness as
        for every fetch. The final answer's decompressed body goes to `sink` (if its
        `start()` wants it) until the sink has enough or `cap` bytes were read; `body_head`
        is what was read. The rest of the body is never downloaded. Never raises for a
        per-URL failure."""
        return await self._fetch_once(url, "GET", max(1, cap), None, sink=sink, headers=headers)

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
