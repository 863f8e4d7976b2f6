"""Staging access: --auth, --cookie, --header scoped to their origins; --rewrite;
--insecure-host; and no secret in any report. Real HTTP over loopback servers."""

from __future__ import annotations

import asyncio
import base64
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from audit.core.config import CrawlConfig
from audit.http import HttpClient
from audit.http.access import credential_scope, parse_host
from audit.http.credentials import RequestScope, credential_headers, request_headers, user_agent_of
from audit.http.hosts import HostPool
from audit.http.rewrite import Rewriter, parse_rewrite
from tests.crawlkit import FAST, HTML, TEXT, XML, Serve, Site, audit, urlset

PASSWORD = "s3cret-pa55word"
TOKEN = base64.b64encode(f"stage:{PASSWORD}".encode()).decode()
COOKIE = "session-cookie-value-123"
HEADER = "header-secret-456"
CREDS: dict[str, Any] = {
    "auth": ("stage", PASSWORD),
    "cookies": (("sid", COOKIE),),
    "extra_headers": (("X-Staging-Key", HEADER),),
}


def _secret_headers(hit: Any) -> dict[str, str]:
    keep = ("authorization", "cookie", "x-staging-key")
    return {k.lower(): v for k, v in hit.headers.items() if k.lower() in keep}


# --- scoping in the HTTP client -------------------------------------------------


async def test_credentials_never_follow_a_redirect_to_another_host(serve: Any) -> None:
    staging, other = Site(), Site()
    s = await serve(staging)
    o = await serve(other)
    staging.routes = {
        "/p": (301, {"Location": o + "/landing"}, ""),
        "/back": (302, {"Location": o + "/hop"}, ""),
    }
    other.routes = {
        "/landing": (200, HTML, "x"),
        "/hop": (301, {"Location": s + "/final"}, ""),
    }
    staging.routes["/final"] = (200, HTML, "x")
    config = CrawlConfig(**{**FAST, **CREDS, "credential_origins": (s,)})
    async with HttpClient(config) as client:
        first = await client.fetch(s + "/p", method="GET")
        second = await client.fetch(s + "/back", method="GET")
    assert first.status == 200 and first.final_url == o + "/landing"
    assert second.status == 200 and second.final_url == s + "/final"
    assert other.hits and all(_secret_headers(h) == {} for h in other.hits)
    sent = [_secret_headers(h) for h in staging.hits]
    assert sent and all(
        h == {"authorization": f"Basic {TOKEN}", "cookie": f"sid={COOKIE}", "x-staging-key": HEADER}
        for h in sent
    )
    # back on the credential origin after a hop elsewhere: sent again (it is their origin)
    assert [h.path for h in staging.hits] == ["/p", "/back", "/final"]


async def test_without_a_scope_only_the_origin_a_chain_starts_at(serve: Any) -> None:
    first, second = Site(), Site()
    a = await serve(first)
    b = await serve(second)
    first.routes = {"/p": (307, {"Location": b + "/q"}, "")}
    second.routes = {"/q": (200, HTML, "x"), "/direct": (200, HTML, "x")}
    config = CrawlConfig(**{**FAST, **CREDS})
    async with HttpClient(config) as client:
        await client.fetch(a + "/p", method="GET")
    assert _secret_headers(first.hits[0])["authorization"] == f"Basic {TOKEN}"
    assert _secret_headers(second.hits[0]) == {}


async def test_crawl_sends_credentials_to_the_target_only(serve: Any) -> None:
    staging, other = Site(), Site()
    s = await serve(staging)
    o = await serve(other)
    staging.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nAllow: /\n"),
        "/sitemap.xml": (200, XML, urlset(s + "/a", s + "/moved", o + "/listed-elsewhere")),
        "/a": (200, HTML, "a"),
        "/moved": (301, {"Location": o + "/b"}, ""),
    }
    other.routes = {"/b": (200, HTML, "b"), "/listed-elsewhere": (200, HTML, "c")}
    scope = credential_scope([s + "/sitemap.xml"])
    run = await audit(s + "/sitemap.xml", **CREDS, credential_origins=scope)
    assert run.url(s + "/moved")["final_url"] == o + "/b"
    assert {h.path for h in other.hits} >= {"/robots.txt", "/b", "/listed-elsewhere"}
    assert all(_secret_headers(h) == {} for h in other.hits)
    assert all(_secret_headers(h).get("authorization") for h in staging.hits)


# --- no secret in any report ------------------------------------------------------


async def test_report_never_contains_the_password(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = Site()
    base = await serve(site)

    async def echo(request: web.Request) -> web.Response:
        # a hostile or debugging server that echoes what it was sent
        seen = f"{request.headers.get('Authorization')} {request.headers.get('Cookie')}"
        return web.Response(
            status=500,
            text=f"<html>error; you sent {seen} {request.headers.get('X-Staging-Key')}</html>",
            headers={"Content-Type": "text/html", "X-Debug": seen, "Via": seen},
        )

    site.routes = {
        "/sitemap.xml": (200, XML, urlset(base + "/echo", base + "/ok")),
        "/echo": echo,
        "/ok": (200, HTML, "fine"),
    }
    monkeypatch.setenv("SITEMAP_AUDIT_AUTH", f"stage:{PASSWORD}")
    for fmt in ("jsonl", "text", "json", "csv", "html"):
        out = tmp_path / f"report.{fmt}"
        argv = [
            "crawl",
            base + "/sitemap.xml",
            "--cookie",
            f"sid={COOKIE}",
            "--header",
            f"X-Staging-Key: {HEADER}",
            "--format",
            fmt,
            "-o",
            str(out),
            "--no-progress",
            "--retries",
            "0",
            "--rate",
            "inf",
        ]
        code = await asyncio.to_thread(main, argv)
        assert code == 1
        text = out.read_text()
        assert "/echo" in text
        for secret in (PASSWORD, TOKEN, COOKIE, HEADER):
            assert secret not in text, (fmt, secret)
    # the env var's credentials were really sent
    assert any(h.headers.get("Authorization") == f"Basic {TOKEN}" for h in site.hits)
    assert "***" in (tmp_path / "report.jsonl").read_text()


def test_config_echo_and_usage_errors_mask_secrets(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = CrawlConfig(**CREDS)
    shown = repr(config)
    for secret in (PASSWORD, COOKIE, HEADER):
        assert secret not in shown
    assert config.secrets()[0] == TOKEN  # longest first
    assert set(config.secrets()) == {PASSWORD, TOKEN, COOKIE, HEADER}

    assert main(["crawl", "https://example.com/s.xml", "--auth", PASSWORD]) == 2
    err = capsys.readouterr().err
    assert "--auth: expected user:password" in err and PASSWORD not in err
    monkeypatch.setenv("SITEMAP_AUDIT_AUTH", PASSWORD)
    assert main(["crawl", "https://example.com/s.xml"]) == 2
    err = capsys.readouterr().err
    assert "SITEMAP_AUDIT_AUTH: expected user:password" in err and PASSWORD not in err
    assert main(["crawl", "https://example.com/s.xml", "--cookie", f"{COOKIE}"]) == 2
    err = capsys.readouterr().err
    assert "--cookie: expected name=value" in err
    code = main(
        [
            "crawl",
            "https://example.com/s.xml",
            "--rewrite",
            f"https://u:{PASSWORD}@a.example=https://b.example",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "no credentials in URLs" in err and PASSWORD not in err


async def test_migrate_sends_credentials_to_the_new_site_only(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = Site(), Site()
    o = await serve(old)
    n = await serve(new)
    old.routes = {"/s.xml": (200, XML, urlset(o + "/a", o + "/b"))}
    new.routes = {
        "/a": (301, {"Location": "/new-a"}, ""),
        "/new-a": (200, HTML, "x"),
        "/b": (301, {"Location": o + "/b-on-old"}, ""),  # leaves the new site
    }
    old.routes["/b-on-old"] = (200, HTML, "x")
    monkeypatch.setenv("SITEMAP_AUDIT_AUTH", f"stage:{PASSWORD}")
    out = tmp_path / "m.jsonl"
    argv = ["migrate", o + "/s.xml", n, "--cookie", f"sid={COOKIE}", "--format", "jsonl"]
    code = await asyncio.to_thread(main, [*argv, "-o", str(out), "--no-progress"])
    assert code == 1  # /b is lost: it leaves the new origin
    assert "/b-on-old" in old.paths()
    assert old.hits and all(_secret_headers(h) == {} for h in old.hits)
    assert new.hits and all(
        _secret_headers(h) == {"authorization": f"Basic {TOKEN}", "cookie": f"sid={COOKIE}"}
        for h in new.hits
    )
    text = out.read_text()
    assert PASSWORD not in text and TOKEN not in text and COOKIE not in text


def test_credentials_with_a_local_file_need_an_origin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sitemap = tmp_path / "s.xml"
    sitemap.write_text(urlset("https://a.example/x"))
    assert main(["crawl", str(sitemap), "--auth", f"u:{PASSWORD}"]) == 2
    assert "give --base-url or --rewrite" in capsys.readouterr().err


# --- rewriting ----------------------------------------------------------------------


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


# --- self-signed certificates --------------------------------------------------------


def _self_signed(tmp_path: Path) -> ssl.SSLContext:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed: cannot make a self-signed certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


async def test_insecure_host_accepts_a_self_signed_certificate_for_that_host_only(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    site.routes = {"/p": (200, HTML, "x")}
    url = await serve(site, ssl=_self_signed(tmp_path)) + "/p"
    assert url.startswith("https://127.0.0.1:")
    async with HttpClient(CrawlConfig(**FAST)) as client:
        refused = await client.fetch(url)
    assert refused.status is None and refused.error_kind == "tls"
    async with HttpClient(CrawlConfig(**{**FAST, "insecure_hosts": ("localhost",)})) as client:
        other = await client.fetch(url)
    assert other.status is None and other.error_kind == "tls"
    async with HttpClient(CrawlConfig(**{**FAST, "insecure_hosts": ("127.0.0.1",)})) as client:
        accepted = await client.fetch(url)
    assert accepted.status == 200


# --- RequestScope (audit.http.credentials), the rule the client applies per request -----


def test_request_scope_sends_credentials_to_the_scope_only() -> None:
    config = CrawlConfig(**CREDS, credential_origins=("https://stage.test",))
    scope = RequestScope(config)
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    inside, outside = hosts.get("https://stage.test/p"), hosts.get("https://other.test/p")
    headers, verify = scope.prepare(inside, False, {"If-None-Match": '"x"'}, None)
    assert verify and headers is not None
    assert headers["Authorization"] == f"Basic {TOKEN}"
    assert headers["Cookie"] == f"sid={COOKIE}" and headers["X-Staging-Key"] == HEADER
    assert headers["If-None-Match"] == '"x"'
    assert scope.prepare(outside, False, None, None) == (None, True)
    # a stream asks for the raw bytes, with or without credentials
    assert scope.prepare(outside, True, None, None) == ({"Accept-Encoding": "identity"}, True)
    # with a scope, the chain's origin does not matter
    assert scope.chain_origin("https://stage.test/p") is None
    assert credential_headers(config) == scope.credentials
    assert request_headers(False, None) is None


def test_request_scope_without_a_scope_binds_to_the_chain_origin() -> None:
    scope = RequestScope(CrawlConfig(**CREDS))
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    start = scope.chain_origin("http://a.test/x")
    assert start is not None
    own, _ = scope.prepare(hosts.get("http://a.test/y"), False, None, start)
    assert own is not None and "Authorization" in own
    other, _ = scope.prepare(hosts.get("http://b.test/y"), False, None, start)
    assert other is None


def test_request_scope_turns_verification_off_for_insecure_https_hosts_only() -> None:
    config = CrawlConfig(insecure_hosts=("Stage.Test",))
    scope = RequestScope(config)
    assert scope.adds and not scope.credentials
    hosts = HostPool(rate=0.0, max_in_flight=4, retry_after_cap=1.0)
    assert scope.prepare(hosts.get("https://stage.test/"), False, None, None) == (None, False)
    assert scope.prepare(hosts.get("http://stage.test/"), False, None, None) == (None, True)
    assert scope.prepare(hosts.get("https://other.test/"), False, None, None) == (None, True)
    assert not RequestScope(CrawlConfig()).adds
    agent = CrawlConfig(extra_headers=(("user-agent", "Mine/1"), ("X-A", "b")))
    assert user_agent_of(agent) == "Mine/1"
    assert "user-agent" not in {k.lower() for k in RequestScope(agent).credentials}
