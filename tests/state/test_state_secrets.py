"""Issue 22.5: the state file keeps no credentials either. A staging server echoes the
--cookie value and the --header token into redirect Locations and validators (ETag) in
their raw, percent-encoded and base64 forms; after a crawl and a migrate with --state,
no table of the state file holds any of them (read with sqlite3, every table dumped,
and the file's bytes after a checkpoint)."""

from __future__ import annotations

import asyncio
import base64
import sqlite3
from pathlib import Path
from urllib.parse import quote

from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

COOKIE = "s3ss/ion+value=="  # characters that percent-encoding changes
TOKEN = "tok-9f8e7d6c5b4a"
FORMS = (
    COOKIE,
    quote(COOKIE, safe=""),
    base64.b64encode(COOKIE.encode()).decode(),
    TOKEN,
    quote(TOKEN, safe=""),
    base64.b64encode(TOKEN.encode()).decode(),
)


def _echo(request: web.Request) -> tuple[str, str]:
    return request.cookies.get("sid", ""), (request.headers.get("X-Token") or "none").split()[-1]


async def _page(request: web.Request) -> web.StreamResponse:
    cookie, token = _echo(request)
    b64 = base64.b64encode(cookie.encode()).decode()
    location = f"/landing?c={quote(cookie, safe='')}&t={token}&b={b64}&r={cookie}"
    tag = base64.b64encode(token.encode()).decode()
    return web.Response(status=301, headers={"Location": location, "ETag": f'"{tag}"'})


async def _landing(request: web.Request) -> web.StreamResponse:
    cookie, token = _echo(request)
    return web.Response(text="<html></html>", headers={**HTML, "ETag": f'"{cookie}-{token}"'})


def _echoing_site() -> Site:
    site = Site()
    site.routes = {"/robots.txt": (404, TEXT, ""), "/page": _page, "/landing": _landing}
    return site


async def _sitemap_echo(site: Site, base: str) -> None:
    body = urlset(f"{base}/page")

    async def sitemap(request: web.Request) -> web.StreamResponse:
        _, token = _echo(request)
        return web.Response(text=body, headers={**XML, "ETag": f'"{token}"'})

    site.routes["/sitemap.xml"] = sitemap


def _leaks(state: Path) -> list[str]:
    con = sqlite3.connect(state)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        dump = "\n".join(con.iterdump())
    finally:
        con.close()
    assert "INSERT INTO" in dump  # the state holds the run
    raw = state.read_bytes()
    return [f for f in FORMS if f in dump or f.encode() in raw]


SECRETS = ["--cookie", f"sid={COOKIE}", "--header", f"X-Token: Bearer {TOKEN}"]


async def test_a_crawl_state_holds_no_echoed_secret(serve: Serve, tmp_path: Path) -> None:
    site = _echoing_site()
    base = await serve(site)
    await _sitemap_echo(site, base)
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    argv = ["crawl", f"{base}/sitemap.xml", "--state", str(state), "--format", "jsonl"]
    argv += ["-o", str(out), "--no-progress", *SECRETS]
    assert await asyncio.to_thread(main, argv) in (0, 1)
    assert any(h.path.startswith("/landing?") and TOKEN in h.path for h in site.hits)  # echoed
    assert _leaks(state) == []


async def test_a_migrate_state_holds_no_echoed_secret(serve: Serve, tmp_path: Path) -> None:
    old = Site()
    old_base = await serve(old)
    old.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, "")}
    old.routes["/sitemap.xml"] = (200, XML, urlset(f"{old_base}/page"))
    new = _echoing_site()
    new_base = await serve(new)
    state, out = tmp_path / "m.sqlite", tmp_path / "m.jsonl"
    argv = ["migrate", f"{old_base}/sitemap.xml", new_base, "--state", str(state)]
    argv += ["--format", "jsonl", "-o", str(out), "--no-progress", *SECRETS]
    assert await asyncio.to_thread(main, argv) in (0, 1)
    assert any(h.path.startswith("/landing?") and TOKEN in h.path for h in new.hits)
    assert _leaks(state) == []
