"""Origin rewriting (audit/http/rewrite.py, `--rewrite FROM=TO`): the parse, the rewriter,
and a crawl of a live sitemap's URLs checked on a loopback staging server."""

from __future__ import annotations

from typing import Any

import pytest

from audit.http.access import credential_scope, parse_host
from audit.http.rewrite import Rewriter, parse_rewrite
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset
from tests.http.test_access import CREDS, _secret_headers


def test_rewriter_and_parsing() -> None:
    assert parse_rewrite("https://WWW.example.com:443/=http://127.0.0.1:8080") == (
        "https://www.example.com",
        "http://127.0.0.1:8080",
    )
    r = Rewriter([parse_rewrite("https://www.example.com=http://127.0.0.1:8080")])
    assert r("https://www.example.com/a/b?x=1#f") == "http://127.0.0.1:8080/a/b?x=1#f"
    assert r("https://www.example.com") == "http://127.0.0.1:8080"
    assert r("http://www.example.com/a") == "http://www.example.com/a"  # another origin
    assert r("https://other.example/a") == "https://other.example/a"
    for bad, why in [
        ("https://a.example", "expected FROM=TO"),
        ("https://a.example=ftp://b", "not an http\\(s\\) origin"),
        ("https://a.example/x=https://b.example", "an origin has no path"),
        ("https://a.example=https://a.example/", "the same origin"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_rewrite(bad)
    assert credential_scope(
        ["https://www.example.com/sitemap.xml"],
        [("https://www.example.com", "https://staging.example.com")],
    ) == ("https://staging.example.com",)
    assert parse_host("https://Staging.Example.com:8443/x") == "staging.example.com"
    assert parse_host("staging.example.com:8443") == "staging.example.com"


async def test_rewrite_checks_listed_urls_on_staging(serve: Any) -> None:
    staging = Site()
    s = await serve(staging)
    live = "https://www.live-site.example"
    staging.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /secret\n"),
        "/sitemap.xml": (200, XML, urlset(live + "/a", live + "/gone", live + "/secret")),
        "/a": (200, HTML, "a"),
        "/gone": (404, HTML, "gone"),
        "/secret": (200, HTML, "x"),
    }
    run = await audit(
        live + "/sitemap.xml",
        rewrites=((live, s),),
        credential_origins=credential_scope([live + "/sitemap.xml"], [(live, s)]),
        **CREDS,
    )
    assert run.outcome == {}
    a = run.url(live + "/a")
    assert a["status"] == 200 and a["checked_url"] == s + "/a" and a["rewritten"] is True
    (nf,) = run.findings("url-not-found")
    assert nf["url"] == live + "/gone" and f"checked at {s}/gone" in nf["message"]
    # robots.txt of the rewritten host applies, and the blocked URL is never requested
    (blocked,) = run.findings("url-robots-blocked")
    assert blocked["url"] == live + "/secret"
    assert "/secret" not in staging.paths()
    # the sitemap itself was read from staging, with the credentials
    assert "/sitemap.xml" in staging.paths()
    assert all(_secret_headers(h).get("authorization") for h in staging.hits)
    (sm,) = run.of("sitemap")
    assert sm["url"] == live + "/sitemap.xml"
