"""Bot-challenge signatures of CDNs and WAFs (audit/checks/botsigs.py): a 403, 429 or 503
that names its blocker by a header, a cookie or a page marker; Cloudflare's generic page
words only with its headers; never on another status."""

from __future__ import annotations

import pytest

from audit.checks.botsigs import CHALLENGE_STATUSES, detect_bot_challenge


@pytest.mark.parametrize(
    ("headers", "vendor"),
    [
        ([("cf-mitigated", "challenge")], "Cloudflare challenge"),
        ([("cf-chl-bypass", "1")], "Cloudflare challenge"),
        ([("x-datadome", "protected")], "DataDome"),
        ([("x-iinfo", "7-123")], "Imperva/Incapsula"),
        ([("x-sucuri-id", "1")], "Sucuri WebSite Firewall"),
        ([("x-amzn-waf-action", "captcha")], "AWS WAF"),
        ([("x-vercel-mitigated", "challenge")], "Vercel challenge"),
        ([("set-cookie", "_pxhd=abc; path=/")], "PerimeterX"),
        ([("set-cookie", "datadome=xyz")], "DataDome"),
        ([("set-cookie", "incap_ses_123=q")], "Imperva/Incapsula"),
    ],
)
@pytest.mark.parametrize("status", sorted(CHALLENGE_STATUSES))
def test_headers_and_cookies_name_the_blocker(
    status: int, headers: list[tuple[str, str]], vendor: str
) -> None:
    named = detect_bot_challenge(status, [("content-type", "text/html"), *headers])
    assert named is not None and named.startswith(vendor)


@pytest.mark.parametrize("status", [200, 301, 404, 500, None])
def test_no_challenge_on_another_status(status: int | None) -> None:
    assert (
        detect_bot_challenge(status, [("cf-mitigated", "challenge")], b"Just a moment...") is None
    )


def test_cloudflare_s_page_words_count_only_with_its_headers() -> None:
    page = b"<html><title>Just a moment...</title></html>"
    assert detect_bot_challenge(403, [], page) is None  # the words alone are too generic
    named = detect_bot_challenge(403, [("cf-ray", "8a1b-AMS")], page)
    assert named == "Cloudflare challenge (page marker 'just a moment...')"
    assert detect_bot_challenge(503, [("server", "cloudflare")], page) is not None
    assert detect_bot_challenge(429, [("cf-ray", "8a1b")], page) is None  # 403/503 only


def test_vendor_and_akamai_pages() -> None:
    incapsula = b"<p>Request unsuccessful. Incapsula incident ID: 123</p>"
    assert detect_bot_challenge(403, [], incapsula) == (
        "Imperva/Incapsula (page marker 'incapsula incident id')"
    )
    denied = b"<h1>Access Denied</h1> Reference #18.abc"
    assert detect_bot_challenge(403, [], denied).startswith("Akamai")  # type: ignore[union-attr]
    ghost = b"<p>Something went wrong. Reference #18.abc</p>"
    assert detect_bot_challenge(503, [], ghost) is None
    assert detect_bot_challenge(503, [("server", "AkamaiGHost")], ghost).startswith("Akamai")  # type: ignore[union-attr]


def test_a_plain_forbidden_page_is_no_challenge() -> None:
    assert detect_bot_challenge(403, [("server", "nginx")], b"<h1>403 Forbidden</h1>") is None
    assert detect_bot_challenge(403, []) is None


def test_a_long_header_value_is_cut_in_the_name() -> None:
    named = detect_bot_challenge(403, [("x-datadome", "v" * 500)])
    assert named is not None and len(named) < 100
