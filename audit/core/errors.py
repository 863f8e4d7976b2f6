"""The package's exception tree, and the one place third-party errors are translated.

    AuditError                 base of everything this package raises on purpose
    +-- TargetError            the user's own target cannot be audited at all (exit 2):
    |                          a bad TARGET, an unreadable local file, a site with nothing to audit
    +-- FetchError             one request failed at network or redirect level; `kind` says how:
                               timeout | connect | dns | tls | reset | redirect-loop |
                               redirect-limit | redirect-invalid | redirect-scheme |
                               redirect-private | other

Outcomes are values (STYLE lesson 2): `HttpClient.fetch()` never raises a FetchError, it
returns a `FetchResult` whose `error`/`error_kind` carry the same message and kind.
A FetchError escapes only from `StreamResponse.iter_chunks()`, when a sitemap body breaks
after it has started, so that the caller keeps what it already parsed.

`translate_exception()` is the single translation point for aiohttp, asyncio timeout,
ssl and OS errors; callers write `raise translate_exception(exc, url) from exc`.

This module imports nothing from the rest of the package and no third-party code
except aiohttp, imported when an exception is translated (a run that requests nothing
never loads it).
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from typing import Final, Literal, get_args

FetchErrorKind = Literal[
    "timeout",
    "connect",
    "dns",
    "tls",
    "reset",
    "redirect-loop",
    "redirect-limit",
    "redirect-invalid",
    "redirect-scheme",
    "redirect-private",
    "other",
]

FETCH_ERROR_KINDS: Final[frozenset[str]] = frozenset(get_args(FetchErrorKind))

__all__ = [
    "FETCH_ERROR_KINDS",
    "AuditError",
    "FetchError",
    "FetchErrorKind",
    "TargetError",
    "translate_exception",
]


class AuditError(Exception):
    """Base of every exception this package raises on purpose."""


class TargetError(AuditError):
    """The user's own target cannot be audited at all: the CLI exits with status 2."""


class FetchError(AuditError):
    """A request failed at network or redirect level.

    `kind` is one of FETCH_ERROR_KINDS; `url` is the URL that was being requested.
    The message is one line, fit for a report.
    """

    def __init__(self, message: str, *, kind: FetchErrorKind, url: str | None = None) -> None:
        super().__init__(message)
        self.kind: FetchErrorKind = kind
        self.url = url

    @property
    def message(self) -> str:
        return str(self.args[0])  # (every FetchError is made with its message)


# An OSError's kind (a row's None) by its class, the most specific first; else by its errno
# (a reset, else a failure to connect)
_ERRNO_KINDS: Final[dict[int, FetchErrorKind]] = dict.fromkeys(
    (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED), "reset"
)
_OS_KINDS: Final[tuple[tuple[tuple[type[BaseException], ...], FetchErrorKind], ...]] = (
    ((socket.gaierror,), "dns"),
    ((ssl.SSLError, ssl.CertificateError), "tls"),
    ((ConnectionResetError, BrokenPipeError, ConnectionAbortedError), "reset"),
)
# aiohttp's connector errors say what failed by their OS error's kind (else: cannot connect):
# the connector row's template and the kind found -> the message
_CANNOT_CONNECT: Final = "cannot connect to {host}:{port}: {detail}"
_CONNECTOR: Final = {
    (_CANNOT_CONNECT, "dns"): "DNS lookup failed for {host}: {detail}",
    (_CANNOT_CONNECT, "tls"): "TLS error for {url}: {detail}",
}


def translate_exception(exc: BaseException, url: str) -> FetchError:
    """Translate one aiohttp / asyncio / ssl / OS exception into a FetchError.

    Order matters: aiohttp's timeout errors subclass asyncio.TimeoutError and its
    connection errors subclass OSError, and its TLS errors subclass both its connector
    error and ssl.SSLError, so the rows below test the most specific classes first; the
    first row whose classes `exc` is an instance of says the message and the kind (None:
    the kind of the OS error underneath).
    """
    if isinstance(exc, FetchError):
        return exc
    import aiohttp  # here, not at the top: a local `validate` never loads the HTTP stack

    connector = aiohttp.ClientConnectorError
    rows: tuple[tuple[tuple[type[BaseException], ...], str, FetchErrorKind | None], ...] = (
        # aiohttp.ServerTimeoutError (and ConnectionTimeoutError, SocketTimeoutError)
        # subclass asyncio.TimeoutError, which is the builtin TimeoutError on 3.11 (an OSError)
        (
            (asyncio.TimeoutError, aiohttp.ServerTimeoutError),
            "timed out requesting {url}",
            "timeout",
        ),
        # before ClientConnectorError: aiohttp's TLS errors subclass it
        (
            (aiohttp.ClientSSLError, ssl.SSLError, ssl.CertificateError),
            "TLS error for {url}: {detail}",
            "tls",
        ),
        ((connector,), _CANNOT_CONNECT, None),
        ((aiohttp.ServerDisconnectedError,), "server closed the connection for {url}", "reset"),
        ((aiohttp.ClientPayloadError,), "response body broken off for {url}: {detail}", "reset"),
        ((aiohttp.ClientOSError,), "network error for {url}: {detail}", None),
        ((aiohttp.ServerFingerprintMismatch,), "TLS fingerprint mismatch for {url}", "tls"),
        ((aiohttp.InvalidURL,), "cannot request {url}: invalid URL", "other"),
        # malformed status line, oversized headers and the like
        ((aiohttp.ClientResponseError,), "bad HTTP response from {url}: {detail}", "other"),
        ((aiohttp.ClientConnectionError,), "connection error for {url}: {detail}", "connect"),
        ((aiohttp.ClientError,), "HTTP error for {url}: {detail}", "other"),
        ((OSError,), "network error for {url}: {detail}", None),
        ((BaseException,), "request to {url} failed: {detail}", "other"),
    )
    types, template, kind = next(row for row in rows if isinstance(exc, row[0]))
    # a connector error (not a TLS one) is judged by the OS error it wraps, named by its host
    cause = getattr(exc, "os_error", exc) if types == (connector,) else exc
    by_errno: FetchErrorKind = _ERRNO_KINDS.get(getattr(cause, "errno", 0), "connect")
    by_class = (k for t, k in _OS_KINDS if isinstance(cause, t))
    found = kind if kind is not None else next(by_class, by_errno)
    template = _CONNECTOR.get((template, found), template)
    host, port = getattr(exc, "host", ""), getattr(exc, "port", "")
    detail = " ".join(str(cause).split()) or type(cause).__name__  # one line, whatever it said
    message = template.format(url=url, detail=detail, host=host, port=port)
    return FetchError(message, kind=found, url=url)
