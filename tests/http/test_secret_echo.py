"""Issue 22.5: credentials never echo back. A staging server that echoes a cookie
percent-encoded into a redirect, or the token of `--header 'X-Token: Bearer T'` into a
Location or a canonical Link header, must not put it into any record; --cookie and
--header have environment-variable forms (SITEMAP_AUDIT_COOKIE, SITEMAP_AUDIT_HEADER)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from audit.cli.main import main
from audit.http.access import cookies_from, headers_from, secret_forms
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

COOKIE = "s3ss/ion+value=="  # characters that percent-encoding changes
TOKEN = "tok-9f8e7d6c5b4a"


def _echoing_site(base_holder: list[str]) -> Site:
    async def page(request: web.Request) -> web.StreamResponse:
        cookie = request.cookies.get("sid", "")
        token = (request.headers.get("X-Token") or "none").split()[-1]
        location = f"/landing?c={quote(cookie, safe='')}&t={token}"
        location += f"&b={base64.b64encode(cookie.encode()).decode()}"
        return web.Response(status=301, headers={"Location": location})

    async def landing(request: web.Request) -> web.StreamResponse:
        token = (request.headers.get("X-Token") or "none").split()[-1]
        link = f'<{base_holder[0]}/canonical?t={token}>; rel="canonical"'
        return web.Response(text="<html><head></head></html>", headers={**HTML, "Link": link})

    site = Site()
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/page": page,
        "/landing": landing,
        "/canonical": (200, HTML, "c"),
    }
    return site


def _leaks(text: str) -> list[str]:
    forms = [COOKIE, quote(COOKIE, safe=""), base64.b64encode(COOKIE.encode()).decode(), TOKEN]
    return [f for f in forms if f in text]


async def test_echoed_cookie_and_header_token_are_redacted(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    holder: list[str] = []
    site = _echoing_site(holder)
    base = await serve(site)
    holder.append(base)
    site.routes["/sitemap.xml"] = (200, XML, urlset(f"{base}/page"))
    run = await audit(
        f"{base}/sitemap.xml",
        cookies=(("sid", COOKIE),),
        extra_headers=(("X-Token", f"Bearer {TOKEN}"),),
        credential_origins=(base,),
        page_checks=True,
    )
    assert any("/landing" in h.path and "t=" in h.path for h in site.hits)  # it did echo
    assert _leaks(json.dumps(run.records)) == []


def test_secret_forms_cover_encodings_and_token_part() -> None:
    forms = secret_forms([f"Bearer {TOKEN}", COOKIE])
    assert TOKEN in forms and quote(COOKIE, safe="") in forms
    assert base64.b64encode(COOKIE.encode()).decode() in forms
    assert "s3ss%2fion%2bvalue%3d%3d" in forms


def test_cookie_and_header_from_the_environment() -> None:
    env = {
        "SITEMAP_AUDIT_COOKIE": "a=1234; sid=xyz9",
        "SITEMAP_AUDIT_HEADER": "X-Token: Bearer T\n",
    }
    assert cookies_from([("c", "3")], env) == (("c", "3"), ("a", "1234"), ("sid", "xyz9"))
    assert headers_from([], env) == (("X-Token", "Bearer T"),)
    with pytest.raises(ValueError, match="SITEMAP_AUDIT_HEADER") as info:
        headers_from([], {"SITEMAP_AUDIT_HEADER": "no colon secretvalue"})
    assert "secretvalue" not in str(info.value)


async def test_cli_takes_cookie_and_header_from_the_environment(
    serve: Callable[[Site], Awaitable[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder: list[str] = []
    site = _echoing_site(holder)
    base = await serve(site)
    holder.append(base)
    site.routes["/sitemap.xml"] = (200, XML, urlset(f"{base}/page"))
    monkeypatch.setenv("SITEMAP_AUDIT_COOKIE", f"sid={COOKIE}")
    monkeypatch.setenv("SITEMAP_AUDIT_HEADER", f"X-Token: Bearer {TOKEN}")
    out = tmp_path / "report.jsonl"
    argv = ["crawl", f"{base}/sitemap.xml", "--format", "jsonl", "-o", str(out), "--rate", "100"]
    code = await asyncio.to_thread(main, argv)
    assert code in (0, 1), (code, [h.path for h in site.hits])
    page_hits = [h for h in site.hits if h.path == "/page"]
    assert page_hits and page_hits[0].headers.get("X-Token") == f"Bearer {TOKEN}"
    assert f"sid={COOKIE}" in page_hits[0].headers.get("Cookie", "")
    assert _leaks(out.read_text()) == []
