"""The exception tree and the one translation point (audit/core/errors.py): every
third-party failure becomes a FetchError of a known kind with a one-line message."""

from __future__ import annotations

import socket
import ssl

import aiohttp
import pytest

from audit.core.errors import (
    FETCH_ERROR_KINDS,
    AuditError,
    FetchError,
    TargetError,
    translate_exception,
)


def test_translation_of_builtin_errors() -> None:
    u = "http://example.test/"
    cases: list[tuple[BaseException, str]] = [
        (TimeoutError(), "timeout"),
        (aiohttp.ServerTimeoutError("slow"), "timeout"),
        (socket.gaierror(-2, "Name or service not known"), "dns"),
        (ssl.SSLError(1, "bad handshake"), "tls"),
        (ConnectionResetError(104, "reset"), "reset"),
        (ConnectionRefusedError(111, "refused"), "connect"),
        (aiohttp.ServerDisconnectedError(), "reset"),
        (aiohttp.ClientPayloadError("cut"), "reset"),
        (ValueError("weird"), "other"),
    ]
    for exc, kind in cases:
        err = translate_exception(exc, u)
        assert isinstance(err, FetchError)
        assert err.kind == kind, (exc, err.kind)
        assert "\n" not in str(err)


def test_the_tree() -> None:
    assert issubclass(TargetError, AuditError) and issubclass(FetchError, AuditError)
    err = FetchError("timed out", kind="timeout", url="https://e.example/")
    assert (err.message, err.kind, err.url) == ("timed out", "timeout", "https://e.example/")
    assert err.kind in FETCH_ERROR_KINDS
    assert translate_exception(err, "https://other.example/") is err  # already translated


def test_a_multi_line_library_message_is_one_line() -> None:
    err = translate_exception(OSError("first line\n  second line\tend"), "http://e.test/")
    assert str(err) == "network error for http://e.test/: first line second line end"
    assert translate_exception(RuntimeError(), "http://e.test/").message.endswith("RuntimeError")


async def test_a_refused_connection_over_loopback_is_connect() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientError) as caught:
            async with session.get(url):
                pass
    err = translate_exception(caught.value, url)
    assert err.kind == "connect" and err.url == url
    assert f"cannot connect to 127.0.0.1:{port}" in str(err) and "\n" not in str(err)


def test_tls_errors_inside_a_connector_error_are_tls() -> None:
    assert translate_exception(ssl.CertificateError("bad name"), "https://e.test/").kind == "tls"
