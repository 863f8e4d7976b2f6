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
        return str(self.args[0]) if self.args else ""


_RESET_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})
_CONNECT_ERRNOS = frozenset(
    {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}
)


def _detail(exc: BaseException) -> str:
    text = " ".join(str(exc).split())  # one line, whatever the library put in
    return text or type(exc).__name__


def _os_kind(exc: OSError) -> FetchErrorKind:
    if isinstance(exc, socket.gaierror):
        return "dns"
    if isinstance(exc, ssl.SSLError | ssl.CertificateError):
        return "tls"
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "reset"
    if exc.errno in _RESET_ERRNOS:
        return "reset"
    return "connect"


def translate_exception(exc: BaseException, url: str) -> FetchError:
    """Translate one aiohttp / asyncio / ssl / OS exception into a FetchError.

    Order matters: aiohttp's timeout errors subclass asyncio.TimeoutError and its
    connection errors subclass OSError, and its TLS errors subclass both its connector
    error and ssl.SSLError, so the most specific classes are tested first.
    """
    if isinstance(exc, FetchError):
        return exc
    import aiohttp  # here, not at the top: a local `validate` never loads the HTTP stack

    kind: FetchErrorKind
    # aiohttp.ServerTimeoutError (and ConnectionTimeoutError, SocketTimeoutError) subclass
    # asyncio.TimeoutError, which is the builtin TimeoutError on 3.11 (an OSError).
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return FetchError(f"timed out requesting {url}", kind="timeout", url=url)
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError | ssl.CertificateError):
        # before ClientConnectorError: aiohttp's TLS errors subclass it
        return FetchError(f"TLS error for {url}: {_detail(exc)}", kind="tls", url=url)
    if isinstance(exc, aiohttp.ClientConnectorError):
        os_error = exc.os_error
        kind = _os_kind(os_error)
        if kind == "dns":
            return FetchError(
                f"DNS lookup failed for {exc.host}: {_detail(os_error)}", kind="dns", url=url
            )
        if kind == "tls":
            return FetchError(f"TLS error for {url}: {_detail(os_error)}", kind="tls", url=url)
        return FetchError(
            f"cannot connect to {exc.host}:{exc.port}: {_detail(os_error)}",
            kind="reset" if kind == "reset" else "connect",
            url=url,
        )
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return FetchError(f"server closed the connection for {url}", kind="reset", url=url)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return FetchError(
            f"response body broken off for {url}: {_detail(exc)}", kind="reset", url=url
        )
    if isinstance(exc, aiohttp.ClientOSError):
        kind = _os_kind(exc)
        return FetchError(f"network error for {url}: {_detail(exc)}", kind=kind, url=url)
    if isinstance(exc, aiohttp.ServerFingerprintMismatch):
        return FetchError(f"TLS fingerprint mismatch for {url}", kind="tls", url=url)
    if isinstance(exc, aiohttp.InvalidURL):
        return FetchError(f"cannot request {url}: invalid URL", kind="other", url=url)
    if isinstance(exc, aiohttp.ClientResponseError):
        # malformed status line, oversized headers and the like
        return FetchError(f"bad HTTP response from {url}: {_detail(exc)}", kind="other", url=url)
    if isinstance(exc, aiohttp.ClientConnectionError):
        return FetchError(f"connection error for {url}: {_detail(exc)}", kind="connect", url=url)
    if isinstance(exc, aiohttp.ClientError):
        return FetchError(f"HTTP error for {url}: {_detail(exc)}", kind="other", url=url)
    if isinstance(exc, OSError):
        kind = _os_kind(exc)
        return FetchError(f"network error for {url}: {_detail(exc)}", kind=kind, url=url)
    return FetchError(f"request to {url} failed: {_detail(exc)}", kind="other", url=url)
