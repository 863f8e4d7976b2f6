"""One HTTP exchange and reading its body: the part of a request that may run anywhere.

`exchange()` sends one plain request (HEAD, or GET with a bounded body excerpt) and returns
its answer as an `Exchange`, a tuple that crosses a process pipe; the client runs it in its
own process or hands it to a fetch worker (workers.py, fetchworker.py), which imports this
module and not the client. `new_session()` is the session both make. The body readers
(`read_head`, `read_into` for a `BodySink`, `release_if_read`, `discard`) serve the client's
streamed and page-check requests too.

No retries and no politeness here: the client's send path decides those. Imports yarl,
audit.core, audit.http.retry and (when a session is made) audit.http.resolver; aiohttp only when a session is made (a run that requests
nothing never loads it). Must not import audit.http.client or audit.http.workers.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, Protocol

from yarl import URL

from audit.core.errors import FetchErrorKind, translate_exception
from audit.http.retry import should_retry

if TYPE_CHECKING:
    import aiohttp

    from audit.http.addresses import PrivateGuard

__all__ = [
    "DRAIN_LIMIT",
    "PAGE_READ",
    "REDIRECT_STATUSES",
    "BodySink",
    "Exchange",
    "discard",
    "exchange",
    "new_session",
    "read_head",
    "read_into",
    "release_if_read",
    "request_url",
    "response_headers",
    "wants_body",
]

REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
DRAIN_LIMIT: Final = 16 * 1024  # a small unwanted body is read so the connection is reused
PAGE_READ: Final = 64 * 1024  # bytes asked of the socket at once for a BodySink

# One plain exchange's outcome, in a shape that crosses a process pipe (marshal):
# (status or None, lower-cased headers, body, error message or None, error kind or None,
# elapsed ms).
Exchange = tuple[
    int | None, tuple[tuple[str, str], ...], bytes, str | None, FetchErrorKind | None, float
]

# For ASCII text, str.isspace() and the C0 controls are exactly \x00-\x20.
_RAW_SPACE_OR_CONTROL = re.compile(r"[\x00-\x20]").search


def request_url(url: str) -> URL:
    # Send a well-formed URL exactly as listed (no re-quoting of its escapes); let yarl
    # percent-encode one with raw non-ASCII or spaces, as browsers do.
    if url.isascii() and _RAW_SPACE_OR_CONTROL(url) is None:
        return URL(url, encoded=True)
    return URL(url)


def new_session(
    user_agent: str,
    timeout: aiohttp.ClientTimeout,
    *,
    limit: int,
    per_host: int,
    guard: PrivateGuard | None = None,
) -> aiohttp.ClientSession:
    """The run's session settings, for the client and its fetch workers alike: keep-alive
    pool, DNS cache, no cookie jar (crawlers are stateless), decompressed bodies, and DNS
    answers judged by the run's private-address `guard` (resolver.py)."""
    import aiohttp

    from audit.http.resolver import guarded_resolver

    connector = aiohttp.TCPConnector(
        limit=limit,
        limit_per_host=per_host,
        ttl_dns_cache=300,
        keepalive_timeout=30,
        resolver=guarded_resolver(guard) if guard is not None else None,
    )
    return aiohttp.ClientSession(
        connector=connector,
        headers=[("User-Agent", user_agent)],
        cookie_jar=aiohttp.DummyCookieJar(),
        timeout=timeout,
        auto_decompress=True,
    )


def wants_body(method: str, status: int, body_limit: int | None) -> bool:
    """Whether a final answer's body is read: a GET's, not a redirect's, when asked for."""
    return bool(body_limit) and method == "GET" and status not in REDIRECT_STATUSES


def response_headers(resp: aiohttp.ClientResponse) -> tuple[tuple[str, str], ...]:
    """An answer's headers as lower-cased (name, value) pairs, repeats kept."""
    return tuple([(k.lower(), v) for k, v in resp.headers.items()])


# --- reading a body ---------------------------------------------------------------


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


async def read_head(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """Up to `limit` bytes of the body."""
    buf = bytearray()
    while len(buf) < limit:
        chunk = await resp.content.read(limit - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


async def read_into(resp: aiohttp.ClientResponse, sink: BodySink, cap: int) -> bytes:
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


def release_if_read(resp: aiohttp.ClientResponse) -> bool:
    """Give the connection back if nothing is left to read (a HEAD answer, a body already
    read: the common case, with no coroutine); False otherwise."""
    if resp.content.at_eof():
        resp.release()
        return True
    return False


async def discard(resp: aiohttp.ClientResponse) -> None:
    """Give the connection back: read a small leftover body for keep-alive, else close."""
    if release_if_read(resp):
        return
    try:
        length = resp.content_length
        if length is not None and length <= DRAIN_LIMIT:
            await resp.content.read(DRAIN_LIMIT + 1)
    except Exception:  # a broken leftover body only costs the connection
        resp.close()
        return
    if not release_if_read(resp):
        resp.close()  # never download a body nobody wants


# --- one plain exchange -----------------------------------------------------------


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
        answer_headers = response_headers(resp)
        body = b""
        if retryable and should_retry(status, None):
            await discard(resp)
        else:
            if wants_body(method, status, body_limit):
                body = await read_head(resp, body_limit)
            if not release_if_read(resp):
                await discard(resp)
        return status, answer_headers, body, None, None, (loop.time() - started) * 1000.0
    except Exception as exc:
        err = translate_exception(exc, url)
        return None, (), b"", err.message, err.kind, (loop.time() - started) * 1000.0
    finally:
        if resp is not None and not resp.closed:
            resp.close()  # cancelled or failed half-way: never reuse the connection
