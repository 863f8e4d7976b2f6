"""Verdicts on how a sitemap and its host's robots.txt answered (audit/checks/sitemaps.py):
each names a registered code and says what to do."""

from __future__ import annotations

import pytest

from audit.checks.sitemaps import (
    content_type_ok,
    index_loop,
    index_nested,
    robots_unreachable,
    robots_verdict,
    sitemap_answer,
    sitemap_broke_off,
    sitemap_content_type,
    sitemap_redirected,
    sitemap_robots_blocked,
    sitemap_unreadable,
)
from audit.core.codes import CODES
from audit.core.records import Hop


@pytest.mark.parametrize(
    "ctype",
    ["text/xml", "application/xml", "text/plain", "application/rss+xml", "application/atom+xml",
     "application/gzip", "application/x-gzip"],
)  # fmt: skip
def test_content_types_a_sitemap_may_have(ctype: str) -> None:
    assert content_type_ok(ctype)


@pytest.mark.parametrize("ctype", ["text/html", "", "application/json", "text/xml2", "xml"])
def test_content_types_it_may_not(ctype: str) -> None:
    assert not content_type_ok(ctype)
    code, message = sitemap_content_type(ctype)
    assert code == "sitemap-content-type" and (ctype or "no Content-Type") in message


@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (200, None, None),
        (204, None, None),
        (404, None, "sitemap-not-found"),
        (410, None, "sitemap-not-found"),
        (500, None, "sitemap-http-error"),
        (301, None, "sitemap-http-error"),
        (None, "connection refused", "sitemap-http-error"),
    ],
)
def test_the_final_answer(status: int | None, error: str | None, code: str | None) -> None:
    verdict = sitemap_answer(status, error)
    if code is None:
        assert verdict is None
        return
    assert verdict is not None and verdict[0] == code
    assert str(status) in verdict[1] if status is not None else str(error) in verdict[1]


def test_each_verdict_is_a_registered_code_with_a_message() -> None:
    hops = [Hop("http://e.example/s.xml", 301), Hop("https://e.example/s.xml", 302)]
    verdicts = [
        sitemap_redirected(hops, "https://e.example/sitemap.xml"),
        sitemap_robots_blocked("Googlebot"),
        sitemap_broke_off(4096, "reset"),
        sitemap_unreadable("not gzip"),
        index_nested(),
        index_loop(),
        robots_unreachable("503", 7),
    ]
    for code, message in verdicts:
        assert code in CODES and message and "\n" not in message
    assert "http://e.example/s.xml (301) -> https://e.example/s.xml (302) -> " in verdicts[0][1]
    assert "Googlebot" in verdicts[1][1] and "4096 bytes" in verdicts[2][1]


def test_robots_txt_missing_allows_everything_and_unreachable_counts_what_it_held() -> None:
    assert robots_verdict("missing", None, 404) == (
        "robots-missing",
        "robots.txt answers 404: everything is allowed",
    )
    assert robots_verdict("ok", None, 200) is None
    assert "1 listed URL was not checked" in robots_unreachable("timeout", 1)[1]
    many = robots_unreachable("timeout", 1234)[1]
    assert "listed URLs were not checked" in many and ("1234" in many or "1,234" in many)
