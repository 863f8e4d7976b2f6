"""URL checks: every code of the 'URL checks' table from FetchResult values, the
silent cases, and a few through real loopback HTTP (aiohttp_server + ClientSession)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import aiohttp
import pytest
from aiohttp import web

from audit.checks.botsigs import detect_bot_challenge
from audit.checks.response import (
    body_excerpt,
    canonical_links,
    judge_answer,
    noindex_directive,
    robots_blocked_finding,
    url_record,
)
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, Hop, Severity
from audit.fixtures.server import make_app
from tests.crawlkit import Serve

URL = "http://example.com/a"
SITEMAP = "http://example.com/sitemap.xml"
AGENT = "sitemap-audit"
NOW = datetime(2026, 6, 1, tzinfo=UTC)
CFG = CrawlConfig()


def fr(
    status: int | None = 200,
    headers: Iterable[tuple[str, str]] = (),
    *,
    url: str = URL,
    final_url: str | None = None,
    **kw: Any,
) -> FetchResult:
    return FetchResult(
        url=url,
        final_url=final_url or url,
        status=status,
        headers=tuple((k.lower(), v) for k, v in headers),
        **kw,
    )


def run(
    result: FetchResult,
    lastmod: str | None = None,
    *,
    config: CrawlConfig = CFG,
    agent: str = AGENT,
    now: datetime = NOW,
) -> list[Finding]:
    return judge_answer(
        result,
        lastmod=lastmod,
        sitemap=SITEMAP,
        line=7,
        config=config,
        agent_token=agent,
        now=now,
    ).findings


def codes(result: FetchResult, lastmod: str | None = None, **kw: Any) -> list[str]:
    return [f.code for f in run(result, lastmod, **kw)]


# --- status classes ----------------------------------------------------------


def test_plain_200_is_silent() -> None:
    assert codes(fr(200)) == []


def test_findings_carry_sitemap_line_url_and_severity() -> None:
    (f,) = run(fr(404))
    assert (f.code, f.severity, f.sitemap, f.line, f.url) == (
        "url-not-found",
        Severity.ERROR,
        SITEMAP,
        7,
        URL,
    )
    assert "404" in f.message and "remove the URL" in f.message


@pytest.mark.parametrize("status", [404, 410])
def test_not_found(status: int) -> None:
    assert codes(fr(status)) == ["url-not-found"]


@pytest.mark.parametrize("status", [400, 401, 403, 451])
def test_client_error(status: int) -> None:
    assert codes(fr(status)) == ["url-client-error"]


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_error(status: int) -> None:
    (f,) = run(fr(status, attempts=3))
    assert f.code == "url-server-error" and "3 attempt" in f.message


def test_rate_limited_mentions_retry_after() -> None:
    (f,) = run(fr(429, [("Retry-After", "120")], attempts=3))
    assert f.code == "url-rate-limited" and f.severity is Severity.WARNING
    assert "Retry-After: 120" in f.message


@pytest.mark.parametrize("kind", ["timeout", "connect", "dns", "tls", "reset", "other"])
def test_unreachable(kind: str) -> None:
    (f,) = run(fr(None, error=f"{kind}: it broke", error_kind=kind, attempts=3))
    assert f.code == "url-unreachable" and f"{kind}: it broke" in f.message


def test_permanent_redirect_names_final_url() -> None:
    res = fr(200, final_url="http://example.com/b", redirects=(Hop(URL, 301),))
    (f,) = run(res)
    assert f.code == "url-redirect"
    assert "permanent" in f.message and "list the final URL http://example.com/b" in f.message


@pytest.mark.parametrize("status", [302, 303, 307])
def test_temporary_redirect(status: int) -> None:
    (f,) = run(fr(200, final_url="http://example.com/b", redirects=(Hop(URL, status),)))
    assert f.code == "url-redirect" and "temporary" in f.message


def test_redirect_chain() -> None:
    hops = (Hop(URL, 301), Hop("http://example.com/b", 308))
    found = run(fr(200, final_url="http://example.com/c", redirects=hops))
    assert [f.code for f in found] == ["url-redirect", "url-redirect-chain"]
    assert "permanent" in found[0].message
    assert (
        "2 redirect hops" in found[1].message and "http://example.com/c (200)" in found[1].message
    )


def test_slow_redirected_page_reported_once_after_the_redirect() -> None:
    cfg = CrawlConfig(slow_ms=100)
    res = fr(200, final_url="http://example.com/b", redirects=(Hop(URL, 301),), elapsed_ms=150.0)
    assert codes(res, config=cfg) == ["url-redirect", "url-slow"]


def test_repeated_headers_on_a_clean_answer() -> None:
    # the first Last-Modified counts; every X-Robots-Tag and Link value is read
    found = run(
        fr(
            200,
            [
                ("Last-Modified", "Mon, 15 Jan 2024 12:00:00 GMT"),
                ("X-Robots-Tag", "otherbot: noindex"),
                ("Link", "<http://example.com/a>; rel=canonical"),
                ("X-Robots-Tag", "noindex"),
                ("Last-Modified", "Wed, 01 May 2024 12:00:00 GMT"),
                ("Link", "<http://example.com/other>; rel=canonical"),
            ],
        ),
        "2024-01-15T12:00:00Z",
    )
    assert [f.code for f in found] == ["url-noindex", "url-canonical-mismatch"]
    assert "'noindex'" in found[0].message and "conflicting" in found[1].message


@pytest.mark.parametrize("kind", ["redirect-loop", "redirect-limit"])
def test_redirect_loop(kind: str) -> None:
    hops = (Hop(URL, 301), Hop("http://example.com/b", 301))
    res = fr(301, final_url="http://example.com/b", redirects=hops, error_kind=kind, error="loop")
    (f,) = run(res)
    assert f.code == "url-redirect-loop"
    assert f.message.count("http://example.com/b (301)") == 1


@pytest.mark.parametrize("kind", ["redirect-invalid", "redirect-scheme"])
def test_redirect_without_usable_location(kind: str) -> None:
    res = fr(301, error_kind=kind, error="Location: javascript:alert(1)")
    (f,) = run(res)
    assert f.code == "url-redirect-error" and "javascript:alert(1)" in f.message


@pytest.mark.parametrize("status", [404, 410, 403, 500])
def test_redirect_ending_in_error(status: int) -> None:
    res = fr(status, final_url="http://example.com/b", redirects=(Hop(URL, 301),))
    (f,) = run(res)
    assert f.code == "url-redirect-error" and f"({status})" in f.message


def test_final_3xx_without_hops_is_redirect_error() -> None:
    assert codes(fr(302)) == ["url-redirect-error"]


# --- bot challenges ------------------------------------------------------------

CF = [("Server", "cloudflare"), ("CF-RAY", "8c1f2a3b4d5e6f70-AMS")]


@pytest.mark.parametrize(
    ("status", "headers", "body"),
    [
        (403, [("cf-mitigated", "challenge")], b""),
        (503, CF, b"<html><head><title>Just a moment...</title></head></html>"),
        (403, CF, b'<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/cf-chl"></script>'),
        (403, CF, b"<title>Attention Required! | Cloudflare</title>"),
        (403, [("Server", "AkamaiGHost")], b"<H1>Access Denied</H1> Reference #18.5f3e"),
        (403, [], b"<TITLE>Access Denied</TITLE> ... Reference&#32;#18 Reference #18.1"),
        (403, [("X-DataDome", "protected")], b""),
        (403, [], b'<script src="https://geo.captcha-delivery.com/captcha/"></script>'),
        (403, [("Set-Cookie", "datadome=abc; Path=/")], b""),
        (403, [("X-Iinfo", "12-3456-0 0NNN RT(1 2) q(0 -1 -1 0) r(0 -1)")], b""),
        (403, [], b"Request unsuccessful. Incapsula incident ID: 123000450"),
        (403, [("X-Sucuri-ID", "18017")], b""),
        (403, [], b"<title>Sucuri WebSite Firewall - Access Denied</title>"),
        (403, [("x-amzn-waf-action", "captcha")], b""),
        (403, [], b'<div id="px-captcha"></div>'),
        (403, [("Set-Cookie", "_pxhd=xyz; path=/")], b""),
        (429, [("x-datadome", "protected")], b""),
        (503, [("x-sucuri-block", "1")], b""),
    ],
)
def test_bot_blocked(status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    (f,) = run(fr(status, headers, body_head=body))
    assert f.code == "url-bot-blocked" and f.severity is Severity.WARNING
    assert f"HTTP {status}" in f.message


@pytest.mark.parametrize(
    ("status", "headers", "body", "expected"),
    [
        # an origin 403 passed through Cloudflare, without challenge markers
        (403, CF, b"<h1>Forbidden</h1>", "url-client-error"),
        (503, CF, b"<h1>Maintenance</h1>", "url-server-error"),
        # not a challenge status
        (404, [("cf-mitigated", "challenge")], b"", "url-not-found"),
        (401, [("x-datadome", "1")], b"", "url-client-error"),
    ],
)
def test_bot_signatures_need_a_challenge(
    status: int, headers: list[tuple[str, str]], body: bytes, expected: str
) -> None:
    assert codes(fr(status, headers, body_head=body)) == [expected]


def test_challenge_page_on_200_is_not_a_finding() -> None:
    assert detect_bot_challenge(200, [("cf-mitigated", "challenge")], b"Just a moment...") is None
    assert codes(fr(200, [*CF, ("cf-mitigated", "challenge")])) == []


def test_redirect_to_a_challenge_is_bot_blocked_not_redirect_error() -> None:
    res = fr(
        403,
        [("cf-mitigated", "challenge")],
        final_url="http://example.com/b",
        redirects=(Hop(URL, 301),),
    )
    assert codes(res) == ["url-redirect", "url-bot-blocked"]


# --- X-Robots-Tag --------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        ["noindex"],
        ["NoIndex, NoFollow"],
        ["none"],
        ["nofollow", "noindex"],  # the header repeats
        ["sitemap-audit: noindex"],
        ["Sitemap-Audit: NOINDEX, nofollow"],
        ["googlebot: nofollow, sitemap-audit: noindex"],
        ["otherbot: noindex", "noindex"],
        ["max-snippet: 50, noindex"],
        ["unavailable_after: Wednesday, 03-Nov-27 15:00:00 GMT, noindex"],
        ["unavailable_after: Wed, 03 Nov 2027 15:00:00 GMT, sitemap-audit: none"],
    ],
)
def test_noindex_applies(values: list[str]) -> None:
    found = run(fr(200, [("X-Robots-Tag", v) for v in values]))
    assert [f.code for f in found] == ["url-noindex"]
    assert "X-Robots-Tag" in found[0].message


@pytest.mark.parametrize(
    "values",
    [
        ["googlebot: noindex"],
        ["otherbot: noindex, nofollow"],
        ["otherbot: none", "googlebot: noindex"],
        ["unavailable_after: Wed, 03 Nov 2027 15:00:00 GMT"],
        ["unavailable_after: Wednesday, 03-Nov-27 15:00:00 GMT"],
        ["unavailable_after: 2027-11-03T15:00:00+00:00"],
        ["otherbot: unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"],
        ["nofollow, noarchive", "all"],
        ["max-image-preview: large, max-snippet: -1"],
        [""],
    ],
)
def test_noindex_silent(values: list[str]) -> None:
    assert codes(fr(200, [("X-Robots-Tag", v) for v in values])) == []


def test_noindex_directive_returns_the_header_value() -> None:
    assert noindex_directive(["nofollow", " googlebot: noindex "], "Googlebot") == (
        "googlebot: noindex"
    )
    assert noindex_directive(["googlebot: noindex"], "bingbot") is None


def test_noindex_on_an_error_page_is_not_reported() -> None:
    assert codes(fr(404, [("X-Robots-Tag", "noindex")])) == ["url-not-found"]


# --- Link rel=canonical ----------------------------------------------------------


@pytest.mark.parametrize(
    "links",
    [
        ['<http://example.com/a>; rel="canonical"'],
        ["<HTTP://EXAMPLE.com:80/a>; rel=canonical"],
        ['</a>; rel="canonical"'],
        ['<a>; rel="canonical"'],
        ['<http://example.com/a#top>; rel="canonical"'],
        ['<http://example.com/b>; rel="alternate"; hreflang="de"'],
        ['<http://example.com/a>; rel="canonical", <http://example.com/a>; rel=canonical'],
        ["<http://example.com/other>; rel=preload; as=image"],
    ],
)
def test_canonical_silent(links: list[str]) -> None:
    assert codes(fr(200, [("Link", v) for v in links])) == []


def test_canonical_percent_escape_case_is_silent() -> None:
    url = "http://example.com/caf%c3%a9"
    res = fr(200, [("Link", '<http://example.com/caf%C3%A9>; rel="canonical"')], url=url)
    assert codes(res) == []


def test_canonical_mismatch_names_both_urls() -> None:
    (f,) = run(fr(200, [("Link", '<http://example.com/b>; rel="canonical"')]))
    assert f.code == "url-canonical-mismatch"
    assert "http://example.com/b" in f.message and URL in f.message


def test_a_canonical_urllib_cannot_parse_is_a_mismatch_as_written() -> None:
    (f,) = run(fr(200, [("Link", '<http://[::1>; rel="canonical"')]))
    assert f.code == "url-canonical-mismatch" and "names http://[::1 as canonical" in f.message


def test_relative_canonical_resolves_against_final_url() -> None:
    res = fr(
        200,
        [("Link", "<c>; rel=canonical")],
        final_url="http://example.com/dir/x",
        redirects=(Hop(URL, 301),),
    )
    found = run(res)
    assert [f.code for f in found] == ["url-redirect", "url-canonical-mismatch"]
    assert "http://example.com/dir/c" in found[1].message


@pytest.mark.parametrize(
    "links",
    [
        # several links in one header, the canonical second, a comma inside a quoted title
        [
            '<http://x.test/i.png>; rel="preload"; title="a, <b>", '
            '<http://example.com/b>; rel="canonical"'
        ],
        # several Link headers
        ['<http://x.test/i.png>; rel="preload"', '<http://example.com/b>; rel="canonical"'],
        # rel with several tokens, different case
        ['<http://example.com/b>; REL="Canonical alternate"'],
        ["<http://example.com/b>;rel=canonical"],
    ],
)
def test_canonical_mismatch_forms(links: list[str]) -> None:
    assert codes(fr(200, [("Link", v) for v in links])) == ["url-canonical-mismatch"]


def test_conflicting_canonicals() -> None:
    links = ['<http://example.com/a>; rel="canonical"', '<http://example.com/b>; rel="canonical"']
    (f,) = run(fr(200, [("Link", v) for v in links]))
    assert f.code == "url-canonical-mismatch" and "conflicting" in f.message
    assert "http://example.com/a" in f.message and "http://example.com/b" in f.message


def test_canonical_equal_to_listed_url_after_redirect_is_only_a_redirect() -> None:
    res = fr(
        200,
        [("Link", f'<{URL}>; rel="canonical"')],
        final_url="http://example.com/b",
        redirects=(Hop(URL, 302),),
    )
    assert codes(res) == ["url-redirect"]


def test_canonical_links_parser() -> None:
    assert canonical_links(['<a>; rel="canonical", <b>; rel=next, <c>; rel="x canonical"']) == [
        "a",
        "c",
    ]
    assert canonical_links(["garbage", "<unterminated"]) == []


# --- slow ------------------------------------------------------------------------


def test_slow_default_threshold() -> None:
    (f,) = run(fr(200, elapsed_ms=6000.0))
    assert f.code == "url-slow" and "6000 ms" in f.message and "5000 ms" in f.message
    assert codes(fr(200, elapsed_ms=4999.0)) == []


def test_slow_configured_threshold() -> None:
    cfg = CrawlConfig(slow_ms=100)
    assert codes(fr(200, elapsed_ms=150.0), config=cfg) == ["url-slow"]
    assert codes(fr(404, elapsed_ms=150.0), config=cfg) == ["url-not-found", "url-slow"]


# --- lastmod vs Last-Modified -------------------------------------------------------


def lm(value: str) -> list[tuple[str, str]]:
    return [("Last-Modified", value)]


@pytest.mark.parametrize(
    ("lastmod", "last_modified", "expected"),
    [
        # a date-only lastmod matches any time that UTC day
        ("2024-04-15", "Mon, 15 Apr 2024 18:30:00 GMT", []),
        ("2024-04-15", "Mon, 15 Apr 2024 00:00:00 GMT", []),
        ("2024-04-15", "Mon, 15 Apr 2024 23:59:59 GMT", []),
        ("2024-04-15", "Tue, 16 Apr 2024 00:00:00 GMT", ["lastmod-stale"]),
        ("2024-04-15", "Sun, 14 Apr 2024 23:59:59 GMT", ["lastmod-ahead"]),
        # second precision
        ("2024-04-15T10:00:00Z", "Mon, 15 Apr 2024 10:00:00 GMT", []),
        ("2024-04-15T10:00:00Z", "Mon, 15 Apr 2024 10:00:01 GMT", ["lastmod-stale"]),
        ("2024-04-15T10:00:00Z", "Mon, 15 Apr 2024 09:59:59 GMT", ["lastmod-ahead"]),
        ("2024-04-15T10:00:00.5Z", "Mon, 15 Apr 2024 10:00:00 GMT", []),
        ("2024-04-03T16:45:00+02:00", "Wed, 03 Apr 2024 14:45:00 GMT", []),
        # minute, month and year precision
        ("2024-04-15T10:00+00:00", "Mon, 15 Apr 2024 10:00:59 GMT", []),
        ("2024-04-15T10:00+00:00", "Mon, 15 Apr 2024 10:01:00 GMT", ["lastmod-stale"]),
        ("2024-04", "Tue, 30 Apr 2024 23:00:00 GMT", []),
        ("2024", "Wed, 01 Jan 2025 00:00:00 GMT", ["lastmod-stale"]),
        # skipped: invalid lastmod, no timezone, unparseable header
        ("2024-02-30", "Fri, 10 May 2024 08:00:00 GMT", []),
        ("2024-04-15T10:00:00", "Fri, 10 May 2024 08:00:00 GMT", []),
        ("yesterday", "Fri, 10 May 2024 08:00:00 GMT", []),
        ("2024-04-15", "not a date", []),
    ],
)
def test_lastmod_comparison(lastmod: str, last_modified: str, expected: list[str]) -> None:
    assert codes(fr(200, lm(last_modified)), lastmod) == expected


@pytest.mark.parametrize(
    "form",
    [
        "Fri, 10 May 2024 08:00:00 GMT",  # IMF-fixdate
        "Friday, 10-May-24 08:00:00 GMT",  # RFC 850
        "Fri May 10 08:00:00 2024",  # asctime
    ],
)
def test_all_three_http_date_forms(form: str) -> None:
    assert codes(fr(200, lm(form)), "2024-03-01") == ["lastmod-stale"]
    assert codes(fr(200, lm(form)), "2024-05-10") == []
    assert codes(fr(200, lm(form)), "2024-06-20T12:00:00+00:00") == ["lastmod-ahead"]


def test_stale_and_ahead_messages_carry_the_values() -> None:
    (stale,) = run(fr(200, lm("Fri, 10 May 2024 08:00:00 GMT")), "2024-03-01")
    assert "2024-05-10T08:00:00Z" in stale.message and "2024-03-01" in stale.message
    (ahead,) = run(fr(200, lm("Mon, 01 Apr 2024 10:00:00 GMT")), "2024-06-20")
    assert ahead.code == "lastmod-ahead" and "2024-06-20" in ahead.message


def test_tolerance_widens_the_span_both_ways() -> None:
    later = fr(200, lm("Mon, 15 Apr 2024 10:00:30 GMT"))
    earlier = fr(200, lm("Mon, 15 Apr 2024 09:59:30 GMT"))
    lastmod = "2024-04-15T10:00:00Z"
    assert codes(later, lastmod) == ["lastmod-stale"]
    assert codes(earlier, lastmod) == ["lastmod-ahead"]
    tolerant = CrawlConfig(lastmod_tolerance_s=60)
    assert codes(later, lastmod, config=tolerant) == []
    assert codes(earlier, lastmod, config=tolerant) == []
    day = CrawlConfig(lastmod_tolerance_s=86400)
    assert codes(fr(200, lm("Tue, 16 Apr 2024 12:00:00 GMT")), "2024-04-15", config=day) == []


def test_lastmod_not_compared_on_errors_redirects_or_without_header() -> None:
    assert codes(fr(404, lm("Fri, 10 May 2024 08:00:00 GMT")), "2024-03-01") == ["url-not-found"]
    assert codes(fr(200), "2024-03-01") == []
    # the Last-Modified of another URL says nothing about the listed one
    moved = fr(
        200,
        lm("Fri, 10 May 2024 08:00:00 GMT"),
        final_url="http://example.com/b",
        redirects=(Hop(URL, 301),),
    )
    assert codes(moved, "2024-03-01") == ["url-redirect"]


def test_last_modified_equal_to_date_is_dynamic() -> None:
    stamp = "Fri, 10 May 2024 08:00:00 GMT"
    found = run(fr(200, [("Date", "Fri, 10 May 2024 08:00:01 GMT"), *lm(stamp)]), "2024-03-01")
    assert [f.code for f in found] == ["last-modified-dynamic"]
    assert found[0].severity is Severity.INFO


def test_last_modified_close_to_now_is_dynamic() -> None:
    now = datetime(2024, 5, 10, 8, 0, 2, tzinfo=UTC)
    res = fr(200, lm("Fri, 10 May 2024 08:00:00 GMT"))
    assert codes(res, "2024-03-01", now=now) == ["last-modified-dynamic"]
    assert codes(res, "2024-03-01", now=now + timedelta(seconds=5)) == ["lastmod-stale"]


def test_last_modified_apart_from_date_is_compared() -> None:
    headers = [("Date", "Fri, 10 May 2024 08:00:03 GMT"), *lm("Fri, 10 May 2024 08:00:00 GMT")]
    assert codes(fr(200, headers), "2024-03-01") == ["lastmod-stale"]


# --- robots and records ------------------------------------------------------------


def test_robots_blocked_finding() -> None:
    f = robots_blocked_finding("http://example.com/private/x", SITEMAP, 12)
    assert (f.code, f.severity, f.url, f.sitemap, f.line) == (
        "url-robots-blocked",
        Severity.ERROR,
        "http://example.com/private/x",
        SITEMAP,
        12,
    )
    assert "robots.txt" in f.message


def test_url_record_success_has_no_extra() -> None:
    res = fr(
        200,
        [*lm("Fri, 10 May 2024 08:00:00 GMT"), ("Server", "nginx")],
        final_url="http://example.com/b",
        redirects=(Hop(URL, 301),),
        elapsed_ms=12.345,
    )
    rec = url_record(res, sitemap=SITEMAP, line=3, lastmod="2024-05-10").to_json()
    assert rec == {
        "type": "url",
        "url": URL,
        "sitemap": SITEMAP,
        "line": 3,
        "status": 200,
        "final_url": "http://example.com/b",
        "redirects": [{"url": URL, "status": 301}],
        "lastmod": "2024-05-10",
        "last_modified": "Fri, 10 May 2024 08:00:00 GMT",
        "robots": "allowed",
        "elapsed_ms": 12.3,
        "error": None,
    }


def test_url_record_failure_keeps_headers_and_body_excerpt() -> None:
    body = b"<html><head><title>Down</title></head>\n\n<body>" + b"x" * 1000 + b"</body>"
    res = fr(
        503,
        [
            ("Server", "nginx"),
            ("Content-Type", "text/html; charset=utf-8"),
            ("Retry-After", "60"),
            ("Set-Cookie", "session=secret"),
            ("X-Robots-Tag", "noindex"),
        ],
        body_head=body,
        method="GET",
        attempts=3,
    )
    rec = url_record(res, sitemap=SITEMAP, line=3, lastmod=None).to_json()
    assert rec["headers"] == {
        "server": "nginx",
        "content-type": "text/html; charset=utf-8",
        "retry-after": "60",
        "x-robots-tag": "noindex",
    }
    assert rec["body_excerpt"].startswith("<html><head><title>Down</title></head> <body>xxx")
    assert len(rec["body_excerpt"]) <= 300
    assert rec["method"] == "GET" and rec["attempts"] == 3


def test_url_record_unreachable_and_blocked() -> None:
    res = fr(None, error="connect: refused", error_kind="connect")
    rec = url_record(res, sitemap=None, line=None, lastmod=None).to_json()
    assert rec["status"] is None and rec["final_url"] is None and rec["elapsed_ms"] is None
    assert rec["error"] == "connect: refused" and rec["error_kind"] == "connect"
    blocked = url_record(fr(None), sitemap=None, line=None, lastmod=None, robots="blocked")
    assert blocked.robots == "blocked" and blocked.extra is None


def test_body_excerpt_decodes_safely() -> None:
    assert body_excerpt("caf\xe9".encode("latin-1"), "text/html; charset=iso-8859-1") == "caf\xe9"
    assert body_excerpt(b"caf\xff", "text/html; charset=no-such-codec") == "caf\ufffd"
    assert body_excerpt(b"\x1f\x8b\x08\x00rest") == "<8 bytes of binary data>"


# --- through real loopback HTTP -------------------------------------------------------


async def fetch(session: aiohttp.ClientSession, url: str, retries: int = 0) -> FetchResult:
    """A minimal GET with hand-followed redirects: what the HTTP layer would record."""
    hops: list[Hop] = []
    current = url
    attempts = 0
    while True:
        attempts += 1
        start = time.perf_counter()
        async with session.get(current, allow_redirects=False) as resp:
            body = await resp.content.read(2048)
            elapsed = (time.perf_counter() - start) * 1000
            headers = tuple((k.lower(), v) for k, v in resp.headers.items())
            status = resp.status
        if status in (301, 302, 303, 307, 308) and len(hops) < 10:
            hops.append(Hop(current, status))
            current = urljoin(current, dict(headers)["location"])
            continue
        if status in (429, 503) and retries > 0:
            retries -= 1
            continue
        return FetchResult(
            url=url,
            final_url=current,
            status=status,
            headers=headers,
            redirects=tuple(hops),
            elapsed_ms=elapsed,
            method="GET",
            body_head=body,
            attempts=attempts,
        )


ServerFactory = Callable[..., Any]


async def test_loopback_status_noindex_canonical_and_redirects(
    serve: Serve,
) -> None:
    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=410, text="gone")

    async def robots(request: web.Request) -> web.Response:
        resp = web.Response(text="ok")
        resp.headers.add("X-Robots-Tag", "googlebot: noindex")
        resp.headers.add("X-Robots-Tag", "unavailable_after: Wed, 03 Nov 2027 15:00:00 GMT")
        if request.query.get("mine"):
            resp.headers.add("X-Robots-Tag", "Sitemap-Audit: noindex")
        return resp

    async def canonical(request: web.Request) -> web.Response:
        resp = web.Response(text="ok")
        resp.headers.add("Link", '<https://cdn.test/x.css>; rel="preload"; as="style"')
        resp.headers.add("Link", f'<{request.query.get("to", "/canonical")}>; rel="canonical"')
        return resp

    async def hop(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        target = "/final" if n == 0 else f"/hop/{n - 1}"
        raise web.HTTPFound(target) if n else web.HTTPMovedPermanently(target)

    async def final(request: web.Request) -> web.Response:
        return web.Response(text="final")

    app = web.Application()
    app.router.add_get("/gone", gone)
    app.router.add_get("/robots", robots)
    app.router.add_get("/canonical", canonical)
    app.router.add_get("/hop/{n}", hop)
    app.router.add_get("/final", final)
    base = await serve(app)
    async with aiohttp.ClientSession() as session:
        assert codes(await fetch(session, f"{base}/gone")) == ["url-not-found"]
        assert codes(await fetch(session, f"{base}/robots")) == []
        assert codes(await fetch(session, f"{base}/robots?mine=1")) == ["url-noindex"]
        assert codes(await fetch(session, f"{base}/canonical")) == []
        res = await fetch(session, f"{base}/canonical?to=/final")
        (f,) = run(res)
        assert f.code == "url-canonical-mismatch" and f"{base}/final" in f.message
        res = await fetch(session, f"{base}/hop/1")
        assert res.redirects == (Hop(f"{base}/hop/1", 302), Hop(f"{base}/hop/0", 301))
        assert codes(res) == ["url-redirect", "url-redirect-chain"]


@pytest.mark.parametrize(
    "form",
    ["Fri, 10 May 2024 08:00:00 GMT", "Friday, 10-May-24 08:00:00 GMT", "Fri May 10 08:00:00 2024"],
)
async def test_loopback_last_modified_forms(aiohttp_server: ServerFactory, form: str) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="ok", headers={"Last-Modified": form})

    app = web.Application()
    app.router.add_get("/p", page)
    server = await aiohttp_server(app)
    async with aiohttp.ClientSession() as session:
        res = await fetch(session, str(server.make_url("/p")))
    assert res.header("date") is not None  # aiohttp sends Date: the dynamic check reads it
    assert codes(res, "2024-05-10", now=datetime.now(UTC)) == []
    assert codes(res, "2024-05-09", now=datetime.now(UTC)) == ["lastmod-stale"]
    assert codes(res, "2024-05-11", now=datetime.now(UTC)) == ["lastmod-ahead"]


async def test_loopback_dynamic_last_modified(aiohttp_server: ServerFactory) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(
            text="ok", headers={"Last-Modified": format_datetime(datetime.now(UTC), usegmt=True)}
        )

    app = web.Application()
    app.router.add_get("/p", page)
    server = await aiohttp_server(app)
    async with aiohttp.ClientSession() as session:
        res = await fetch(session, str(server.make_url("/p")))
    assert codes(res, "2024-05-10") == ["last-modified-dynamic"]


async def test_loopback_bot_challenge_and_failure_record(aiohttp_server: ServerFactory) -> None:
    async def challenge(request: web.Request) -> web.Response:
        return web.Response(
            status=403,
            text="<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>",
            content_type="text/html",
            headers={"Server": "cloudflare", "CF-RAY": "8c1f2a3b4d5e6f70-AMS"},
        )

    app = web.Application()
    app.router.add_get("/p", challenge)
    server = await aiohttp_server(app)
    async with aiohttp.ClientSession() as session:
        res = await fetch(session, str(server.make_url("/p")))
    assert codes(res) == ["url-bot-blocked"]
    rec = url_record(res, sitemap=SITEMAP, line=1, lastmod=None).to_json()
    assert rec["headers"]["server"] == "cloudflare" and rec["headers"]["cf-ray"]
    assert "Just a moment..." in rec["body_excerpt"]


# --- the demo site: every planted URL-level code --------------------------------------

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
ENTRY = re.compile(r"<loc>\{base\}([^<]*)</loc>\s*(?:<lastmod>([^<]*)</lastmod>)?")

# path -> codes the URL checks must give (README.md of the demo); robots and
# validator codes belong to other stages.
DEMO_EXPECTED = {
    "/products/discontinued-hose": ["url-not-found"],
    "/blog/2019-spring-sale": ["url-not-found"],
    "/products/old-rake": ["url-redirect"],
    "/shop/tools": ["url-redirect", "url-redirect-chain"],
    "/offers/summer": ["url-redirect-loop"],
    "/products/broken-widget": ["url-server-error"],
    "/blog/draft-post": ["url-noindex"],
    "/products/hedge-shears-blue": ["url-canonical-mismatch"],
    "/products/watering-can": ["lastmod-stale"],
    "/products/garden-gloves": ["lastmod-ahead"],
    "/deals/today": ["last-modified-dynamic"],
    "/products/seed-catalogue": ["url-slow"],
    "/products/limited-edition-trowel": ["url-bot-blocked"],
}


@pytest.mark.slow
async def test_demo_site_planted_url_codes(serve: Serve) -> None:
    entries: dict[str, str | None] = {}
    for name in ("sitemap-pages.xml", "sitemap-products.xml", "_src/sitemap-blog.xml"):
        for path, lastmod in ENTRY.findall((DEMO / name).read_text()):
            entries[path] = lastmod or None
    assert len(entries) == 32
    base = await serve(make_app(DEMO))
    cfg = CrawlConfig(slow_ms=1000)
    got: dict[str, list[str]] = {}
    async with aiohttp.ClientSession() as session:
        for path, lastmod in entries.items():
            if path.startswith("/private/"):
                continue  # robots-blocked: never requested
            res = await fetch(session, base + path, retries=1)
            if len(res.redirects) >= 10:
                res = FetchResult(
                    res.url,
                    res.final_url,
                    res.status,
                    res.headers,
                    res.redirects,
                    error_kind="redirect-loop",
                )
            found = run(res, lastmod, config=cfg, now=datetime.now(UTC))
            got[path] = [f.code for f in found]
    assert {p: c for p, c in got.items() if c} == DEMO_EXPECTED
