"""One HTTP exchange and reading its body: the part of a request that may run anywhere.

`exchange()` sends one plain request (HEAD, or GET with a bounded body excerpt) and returns
its answer as an `Exchange`, a tuple that crosses a process pipe; the client runs it in its
own process or hands it to a fetch worker (workers.py, fetchworker.py), which imports this
module and not the client. `new_session()` is the session both make. The body readers
(`read_head`, `read_into` for a `BodySink`, `release_if_read`, `discard`) serve the client's
streamed and page-check requests too.

Remote sinks: a `BodySink` that is also a `RemoteSink` can be rebuilt in a fetch worker
from its `recipe()` ("package.module:callable", marshal-able args). The worker builds it
(`build_sink`, only from the allowed modules), reads the page into it with
`exchange_into()` (the same rules as the client's own page read) and sends back its
`outcome()`; the parent's sink `accept()`s that outcome and is then as if it had read the
body itself. So a page is parsed in the worker and only what the parse found crosses the
pipe. `TeeSink` feeds several sinks one body, and is remote when all its parts are.

No retries and no politeness here: the client's send path decides those. Imports yarl,
audit.core, audit.http.retry and (when a session is made) audit.http.resolver; aiohttp only
when a session is made (a run that requests nothing never loads it); a remote sink's
factory module by name, in a worker, when the allowlist names it. Must not import
audit.http.client or audit.http.workers.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from audit.core.errors import FetchErrorKind, translate_exception
from audit.core.records import header_value
from audit.http.retry import DEFER_STATUSES, parse_retry_after, should_retry

if TYPE_CHECKING:
    import aiohttp
    from yarl import URL

    from audit.http.addresses import PrivateGuard

__all__ = [
    "BODY_EXCERPT",
    "DRAIN_LIMIT",
    "PAGE_READ",
    "REDIRECT_STATUSES",
    "SINK_MODULES",
    "BodySink",
    "BuiltSink",
    "Exchange",
    "Recipe",
    "RemoteSink",
    "SinkRefused",
    "TeeSink",
    "build_sink",
    "discard",
    "exchange",
    "exchange_into",
    "module_allowed",
    "new_session",
    "read_for_sink",
    "read_head",
    "read_into",
    "recipe_modules",
    "recipe_of",
    "release_if_read",
    "request_url",
    "response_headers",
    "sendable",
    "wants_body",
]

REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
DRAIN_LIMIT: Final = 16 * 1024  # a small unwanted body is read so the connection is reused
PAGE_READ: Final = 64 * 1024  # bytes asked of the socket at once for a BodySink
BODY_EXCERPT: Final = 2048  # bytes of a GET body kept by default (diagnosis, sniffing)

# One plain exchange's outcome, in a shape that crosses a process pipe (marshal):
# (status or None, lower-cased headers, body, error message ("" without an error), error
# kind or None, elapsed ms).
Exchange = tuple[int | None, tuple[tuple[str, str], ...], bytes, str, FetchErrorKind | None, float]

# For ASCII text, str.isspace() and the C0 controls are exactly \x00-\x20.
_RAW_SPACE_OR_CONTROL = re.compile(r"[\x00-\x20]").search
# ... and what yarl refuses in a URL it takes as written: a backslash or a bracket (in the
# authority: an IPv6 literal or a mistake)
_NOT_AS_WRITTEN = re.compile(r"[\x00-\x20\[\]\\]").search


# yarl.URL, loaded by the first request_url: importing yarl costs about 7 ms of start-up,
# which a run that requests nothing (a local validate) never pays; aiohttp loads it anyway
_URL: type[URL] | None = None


def request_url(url: str) -> URL:
    # Send a well-formed URL exactly as listed (no re-quoting of its escapes); let yarl
    # percent-encode one with raw non-ASCII or spaces, as browsers do.
    global _URL
    if _URL is None:  # the first request (see _URL)
        from yarl import URL as loaded

        _URL = loaded
    if url.isascii() and _RAW_SPACE_OR_CONTROL(url) is None:
        return _URL(url, encoded=True)
    return _URL(url)


def sendable(url: str) -> bool:
    """Whether `request_url(url)` takes `url` without fail, known without parsing it: an
    ASCII URL without spaces, controls, brackets or backslashes (yarl refuses only those).
    False: parse it to know. A URL sent by a fetch worker is then parsed there only."""
    return url.isascii() and _NOT_AS_WRITTEN(url) is None


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


def wants_body(method: str, status: int) -> bool:
    """Whether a final answer's body is read: a GET's, not a redirect's (asked only when a
    body is wanted: `exchange` with a body limit, `exchange_into`, whose page reads have
    one of at least a byte: fetch_page's max(1, cap), fetch_as's, a worker's of either)."""
    return method == "GET" and status not in REDIRECT_STATUSES


class _LowerNames(dict[str, str]):
    """Header names lower-cased, each once per run: aiohttp's parser gives a known header
    the same name object every time, so an answer's names are dict look-ups (and str
    objects whose hash is known already, for the checks that look them up in turn)."""

    def __missing__(self, name: str) -> str:
        if len(self) >= _LOWER_NAMES_MAX:  # a server inventing names: stays bounded
            self.clear()
        lower = self[name] = name.lower()
        return lower


_LOWER_NAMES_MAX: Final = 1024
_lower_name = _LowerNames().__getitem__


def response_headers(resp: aiohttp.ClientResponse) -> tuple[tuple[str, str], ...]:
    """An answer's headers as lower-cased (name, value) pairs, repeats kept (a multidict's
    keys() drops repeats: items() it is)."""
    lower = _lower_name
    return tuple([(lower(k), v) for k, v in resp.headers.items()])


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


# A remote sink's recipe: ("package.module:callable", marshal-able args).
Recipe = tuple[str, tuple[Any, ...]]

# The modules whose sink factories a fetch worker builds by default: this package's own.
# An entry ending in "." allows every module under it; any other entry is one module.
SINK_MODULES: Final = ("audit.",)


class RemoteSink(BodySink, Protocol):
    """A body sink that a fetch worker can rebuild, so that the page is read and parsed
    there. In the worker, `callable(*args)` of the recipe returns a `BuiltSink` (a sink
    whose `start()` resets it, as for a retried attempt, so a fresh one is the same)."""

    def recipe(self) -> Recipe | None:
        """How to build this sink elsewhere; None: not now (read it in this process)."""
        ...

    def accept(self, outcome: Any) -> None:
        """Take what the worker's sink ended with (`BuiltSink.outcome()`, after its
        start, feeds and end as the exchange went): this sink is then exactly as if it
        had been started and fed the body here (a retried attempt's `start()` included)."""
        ...


class BuiltSink(BodySink, Protocol):
    """A sink built in a fetch worker from a recipe."""

    def outcome(self) -> Any:
        """What the parent's `accept()` needs, made of core types only (marshal)."""
        ...


def recipe_of(sink: BodySink | None) -> Recipe | None:
    """The sink's recipe when it is a `RemoteSink` that can be rebuilt now, else None."""
    make: Callable[[], Recipe | None] | None = getattr(sink, "recipe", None)
    return make() if make is not None else None


class SinkRefused(ValueError):
    """A recipe that a fetch worker will not build (a module not allowed, a bad name)."""


def module_allowed(module: str, allowed: Sequence[str]) -> bool:
    """Whether `module` is on the allowlist (an entry ending in "." allows a package)."""
    return any(module.startswith(a) if a.endswith(".") else module == a for a in allowed)


def recipe_modules(recipe: Recipe) -> Iterator[str]:
    """The modules a recipe imports (a tee's parts' too)."""
    name, args = recipe
    if name == TEE_FACTORY:
        for part in args:
            yield from recipe_modules(part)
    else:
        yield name.partition(":")[0]


_factories: dict[str, Callable[..., BuiltSink]] = {}  # resolved once per worker


def _factory(name: str, allowed: Sequence[str]) -> Callable[..., BuiltSink]:
    found = _factories.get(name)
    if found is not None:
        return found
    module, _, attr = name.partition(":")
    if not module or not attr:
        raise SinkRefused(f"body sink factory {name!r} is not 'package.module:callable'")
    if not module_allowed(module, allowed):
        raise SinkRefused(
            f"body sink factory {name!r} refused: module {module!r} is not among the "
            f"allowed sink modules {list(allowed)}"
        )
    factory: Callable[..., BuiltSink] = getattr(importlib.import_module(module), attr)
    _factories[name] = factory
    return factory


def build_sink(recipe: Recipe, allowed: Sequence[str]) -> BuiltSink:
    """The worker's side: the sink a recipe describes, from allowed modules only
    (SinkRefused otherwise; an import's or the factory's own error as it is)."""
    name, args = recipe
    if name == TEE_FACTORY:
        return TeeSink([build_sink(part, allowed) for part in args])
    return _factory(name, allowed)(*args)


TEE_FACTORY: Final = "audit.http.exchange:TeeSink"


class TeeSink:
    """Several body sinks fed the same body; reading stops when none wants more. A sink
    that had enough early is ended with the others, told `at_eof` only if the body ended
    right where it stopped (as the client would have told it alone).

    Remote when every part is: its recipe lists the parts' recipes, a worker builds the
    same tee of the parts, and its outcome is theirs, which `accept()` hands back."""

    def __init__(self, sinks: list[Any]) -> None:
        self.sinks: list[Any] = sinks  # BodySinks (RemoteSinks or BuiltSinks when remote)
        self._reading: list[BodySink] = []
        self._stopped: list[tuple[BodySink, int]] = []  # (sink, bytes fed when it stopped)
        self._fed = 0

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        self._reading = [s for s in self.sinks if s.start(status, headers)]
        self._stopped = []
        self._fed = 0
        return bool(self._reading)

    def feed(self, chunk: bytes) -> bool:
        self._fed += len(chunk)
        still: list[BodySink] = []
        for sink in self._reading:
            if sink.feed(chunk):
                self._stopped.append((sink, self._fed))
            else:
                still.append(sink)
        self._reading = still
        return not still

    def end(self, *, at_eof: bool) -> None:
        for sink, fed in self._stopped:
            sink.end(at_eof=at_eof and fed == self._fed)
        for sink in self._reading:
            sink.end(at_eof=at_eof)
        self._reading, self._stopped = [], []

    def recipe(self) -> Recipe | None:
        parts = tuple(map(recipe_of, self.sinks))
        # a part that reads only here (no recipe): the whole tee reads here
        return None if None in parts else (TEE_FACTORY, parts)

    def accept(self, outcome: Any) -> None:
        for sink, part in zip(self.sinks, outcome, strict=True):
            sink.accept(part)
        self._reading, self._stopped = [], []

    def outcome(self) -> tuple[Any, ...]:
        return tuple(sink.outcome() for sink in self.sinks)


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
    """Feed the body to `sink` until it has enough, the body ends or `cap` bytes were read.
    Returns the first BODY_EXCERPT bytes, for diagnosis as with any GET: the sink keeps
    what it wants of the page (and a page need not cross a worker's pipe twice)."""
    excerpt = b""
    read = 0
    while read < cap:
        # (b"" only at the end of the body: read(n) waits for data or the end)
        chunk = await resp.content.read(min(PAGE_READ, cap - read))
        if not chunk:
            break
        if read < BODY_EXCERPT:
            excerpt += chunk[: BODY_EXCERPT - read]
        read += len(chunk)
        if sink.feed(chunk):
            break
    sink.end(at_eof=resp.content.at_eof())  # read to its end, or stopped right there
    return excerpt


def read_for_sink(
    resp: aiohttp.ClientResponse, headers: Sequence[tuple[str, str]], sink: BodySink, limit: int
) -> Awaitable[bytes]:
    """The reader of a final answer's body for `sink`: all of it that the sink wants (up
    to `limit`) if its `start()` wants the page, else an excerpt for diagnosis, as for
    any GET. Returns the coroutine: the caller awaits it, no extra frame."""
    if sink.start(resp.status, headers):
        return read_into(resp, sink, limit)
    return read_head(resp, min(limit, BODY_EXCERPT))


def release_if_read(resp: aiohttp.ClientResponse) -> bool:
    """Give the connection back if nothing is left to read (a HEAD answer, a body already
    read: the common case, with no coroutine); False otherwise."""
    if resp.content.at_eof():
        resp.release()
        return True
    return False


async def discard(resp: aiohttp.ClientResponse) -> None:
    """Give the connection back: read a small leftover body for keep-alive, else close.
    (A body read to its end already is released at once after the read, which then
    returns b"" without waiting.)"""
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
    (not a stream, no body sink) that may run in a fetch worker process (and `fetch_as`'s
    request without a sink, asagent.py). `target` is
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
            if body_limit and wants_body(method, status):  # a HEAD: no call
                body = await read_head(resp, body_limit)
            if not release_if_read(resp):
                await discard(resp)
        return status, answer_headers, body, "", None, (loop.time() - started) * 1000.0
    except Exception as exc:
        err = translate_exception(exc, url)
        return None, (), b"", err.message, err.kind, (loop.time() - started) * 1000.0
    finally:
        if resp is not None and not resp.closed:
            resp.close()  # cancelled or failed half-way: never reuse the connection


def takes_answer(
    status: int, headers: tuple[tuple[str, str], ...], retryable: bool, retry_after_cap: float
) -> bool:
    """Whether the client's retry loop (retry.after_status) takes this answer as final, so
    that its body is read: not a retry status of a retryable attempt, unless a Retry-After
    over the cap makes it final at once."""
    if not (retryable and should_retry(status, None)):
        return True
    if status in DEFER_STATUSES:
        delay = parse_retry_after(header_value(headers, "retry-after"))
        return delay is not None and delay > retry_after_cap
    return False


async def exchange_into(
    session: aiohttp.ClientSession,
    url: str,
    target: URL,
    headers: Mapping[str, str] | None,
    verify: bool,
    body_limit: int,
    retryable: bool,
    retry_after_cap: float,
    sink: BodySink,
) -> tuple[Exchange, bool]:
    """One page GET whose final answer's body goes to `sink`, as the client reads a page
    for a sink in its own process (`read_for_sink`, the same cap, the same answers read):
    the part of `fetch_page` that runs in a fetch worker, and `fetch_as`'s request for a
    sink (asagent.py). `target` is `request_url(url)`. The Exchange's body is the first
    BODY_EXCERPT bytes read; True with it when the sink was started. Never raises for a
    network failure."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    resp: aiohttp.ClientResponse | None = None
    fed = False
    try:
        resp = await session.request(
            "GET", target, allow_redirects=False, headers=headers, ssl=verify
        )
        status = resp.status
        answer_headers = response_headers(resp)
        body = b""
        if takes_answer(status, answer_headers, retryable, retry_after_cap) and wants_body(
            "GET", status
        ):
            fed = True
            body = await read_for_sink(resp, answer_headers, sink, body_limit)
        if not release_if_read(resp):
            await discard(resp)
        return (status, answer_headers, body, "", None, (loop.time() - started) * 1000.0), fed
    except Exception as exc:
        err = translate_exception(exc, url)
        return (None, (), b"", err.message, err.kind, (loop.time() - started) * 1000.0), fed
    finally:
        if resp is not None and not resp.closed:
            resp.close()  # cancelled or failed half-way: never reuse the connection
