"""The run's browser (audit/http/browser.py) in real headless Chromium against loopback
pages: a bounded resource (restart every N pages, one more try after a crash, a timed-out
tab closed at once, every process and the profile gone at close), requests with the
audit's User-Agent and the credentials only where they belong, and the private-address
rule on the browser's requests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from typing import Any

import pytest
from aiohttp import web

from audit.core.config import CrawlConfig
from audit.http.browser import (
    Access,
    Renderer,
    RendererOptions,
    StartError,
    find_browser,
    run_access,
)
from audit.http.browserguard import profile_processes
from audit.http.cdp import CdpError
from tests.crawlkit import HTML, Serve, Site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# CI sets REQUIRE_CHROMIUM so that a missing browser fails instead of skipping
NO_CHROMIUM = CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM")
pytestmark = [
    pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium installed (Debian package chromium)"),
    pytest.mark.slow,
]


async def _everything(url: str) -> bool:
    return True


def _no_credentials(url: str, page: str) -> dict[str, str]:
    return {}


def renderer(access: Access | None = None, **options: Any) -> Renderer:
    assert CHROMIUM is not None
    return Renderer(
        RendererOptions(
            CHROMIUM,
            "sitemap-audit/test",
            access or Access(_everything, _no_credentials),
            sandbox=os.geteuid() != 0,
            **options,
        )
    )


def document_hits(site: Site, path: str) -> list[dict[str, str]]:
    """The browser's requests for `path` as a document (not the audit's own)."""
    return [
        h.headers
        for h in site.hits
        if h.path == path and h.headers.get("Sec-Fetch-Dest") == "document"
    ]


async def test_restarted_after_every_n_pages_and_nothing_left_at_close(serve: Serve) -> None:
    site = Site({f"/p{i}": (200, HTML, f"<title>p{i}</title><p>page {i}</p>") for i in range(5)})
    base = await serve(site)
    r = renderer(restart_every=2, tabs=2)
    profiles: set[str] = set()
    try:
        for i in range(5):
            out = await r.render(f"{base}/p{i}")
            assert out.failure is None and out.html is not None and f"page {i}" in out.html
            assert r._browser is not None
            profiles.add(r._browser.profile)
    finally:
        await r.close()
    assert r.starts == 3  # pages 1-2, 3-4, 5
    assert len(profiles) == 3
    for profile in profiles:
        assert not os.path.exists(profile)
        assert profile_processes(profile) == []


async def test_a_page_that_never_loads_fails_and_its_tab_is_closed_at_once(serve: Serve) -> None:
    closed = asyncio.Event()
    order: list[str] = []

    async def never(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/javascript"})
        await resp.prepare(request)
        try:
            while True:  # a script that never finishes: the load event never fires
                await resp.write(b"/* still coming */\n")
                await asyncio.sleep(0.05)
        except (ConnectionError, RuntimeError, asyncio.CancelledError):
            # the server sees the client go away (aiohttp cancels the handler)
            order.append("hang closed")
            closed.set()
            raise

    async def after(request: web.Request) -> web.StreamResponse:
        order.append("next page")
        return web.Response(headers=HTML, text="<title>next</title><p>fine</p>")

    site = Site(
        {
            "/hang": (200, HTML, '<title>h</title><script src="/never.js"></script>'),
            "/never.js": never,
            "/next": after,
        }
    )
    base = await serve(site)
    r = renderer(tabs=1, timeout=1.5)
    try:
        out = await r.render(f"{base}/hang")
        assert out.html is None and out.failure == "no load event after 1.5 s"
        nxt = await r.render(f"{base}/next")
        assert nxt.html is not None and "fine" in nxt.html
    finally:
        await r.close()
    # the hanging request ended with its tab, before the next page was asked for
    assert closed.is_set()
    assert order.index("hang closed") < order.index("next page")


async def test_a_crash_costs_one_more_try_in_a_new_browser(serve: Serve) -> None:
    asked = asyncio.Event()
    calls = 0

    async def page(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        if request.headers.get("Sec-Fetch-Dest") == "document":
            calls += 1
            if calls == 1:  # the first browser dies while this answer is awaited
                asked.set()
                await asyncio.sleep(30)
        return web.Response(headers=HTML, text="<title>ok</title><p>second try</p>")

    base = await serve(Site({"/p": page}))
    r = renderer(tabs=1, timeout=20)
    try:
        task = asyncio.create_task(r.render(f"{base}/p"))
        await asyncio.wait_for(asked.wait(), 15)
        assert r._browser is not None and r._browser.pid is not None
        os.killpg(r._browser.pid, signal.SIGKILL)  # the browser crashes
        out = await asyncio.wait_for(task, 30)
    finally:
        await r.close()
    assert out.failure is None and out.html is not None and "second try" in out.html
    assert r.starts == 2 and calls == 2


async def test_browser_requests_carry_the_audit_user_agent_and_credentials_in_scope(
    serve: Serve,
) -> None:
    other = Site({"/x.js": (200, {"Content-Type": "text/javascript"}, "var x = 1;")})
    other_base = await serve(other)
    site = Site(
        {
            "/p": (
                200,
                HTML,
                f'<title>p</title><script src="{other_base}/x.js"></script>'
                '<script src="/own.js"></script>',
            ),
            "/own.js": (200, {"Content-Type": "text/javascript"}, "var y = 2;"),
        }
    )
    base = await serve(site)
    config = CrawlConfig(
        extra_headers=(("X-Staging", "letmein"),), credential_origins=(base,), cookies=()
    )
    r = renderer(run_access(config))
    try:
        out = await r.render(f"{base}/p")
    finally:
        await r.close()
    assert out.html is not None
    (doc,) = document_hits(site, "/p")
    assert doc["User-Agent"] == "sitemap-audit/test"
    assert doc["X-Staging"] == "letmein"
    own = [h.headers for h in site.hits if h.path == "/own.js"]
    assert own and own[0]["X-Staging"] == "letmein"
    theirs = [h.headers for h in other.hits if h.path == "/x.js"]
    assert theirs and "X-Staging" not in theirs[0]  # another origin: no credentials
    assert theirs[0]["User-Agent"] == "sitemap-audit/test"


async def test_private_addresses_are_refused_to_the_browser_of_a_public_target(
    serve: Serve,
) -> None:
    site = Site({"/x.js": (200, {"Content-Type": "text/javascript"}, "var x = 1;")})
    base = await serve(site)
    access = run_access(CrawlConfig(credential_origins=("https://example.com",)))
    assert await access.allows("https://example.com/page")  # the target, as given
    assert not await access.allows(f"{base}/x.js")  # loopback, from a public target
    assert not await access.allows("http://169.254.169.254/latest/meta-data/")
    assert not await access.allows("http://localhost:9/")
    # an audit of the loopback site itself requests it (the user's own choice)
    local = run_access(CrawlConfig(credential_origins=(base,)))
    assert await local.allows(f"{base}/x.js")
    # the rule holds in the browser: a refused sub-resource never reaches the server
    page = Site({"/p": (200, HTML, f'<title>p</title><script src="{base}/x.js"></script>')})
    page_base = await serve(page)
    guarded = run_access(CrawlConfig(credential_origins=("https://example.com",)))

    async def allows(url: str) -> bool:  # the page itself is let through as a target would be
        return url.startswith(page_base) or await guarded.allows(url)

    r = renderer(Access(allows, guarded.headers_for))
    try:
        out = await r.render(f"{page_base}/p")
    finally:
        await r.close()
    assert out.html is not None
    assert site.hits == []


def test_find_browser_names_what_is_missing(tmp_path: Any) -> None:
    with pytest.raises(StartError, match="--browser /nowhere/chrome: no such browser"):
        find_browser("/nowhere/chrome")
    with pytest.raises(StartError, match="apt-get install chromium"):
        find_browser(None, {"PATH": str(tmp_path)})
    with pytest.raises(StartError, match=r"\$SITEMAP_AUDIT_BROWSER /no/such: no such browser"):
        find_browser(None, {"PATH": str(tmp_path), "SITEMAP_AUDIT_BROWSER": "/no/such"})
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_browser(None, {"PATH": str(tmp_path)}) == str(fake)
    fake.chmod(0o644)
    with pytest.raises(StartError, match="not executable"):
        find_browser(str(fake))


async def test_navigations_away_and_error_answers_end_the_render(serve: Serve) -> None:
    async def refused(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Sec-Fetch-Dest") == "document":  # the browser's request
            return web.Response(status=503, headers=HTML, text="<title>busy</title>")
        return web.Response(headers=HTML, text="<title>ok</title>")

    site = Site(
        {
            "/refresh": (
                200,
                HTML,
                '<meta http-equiv="refresh" content="0; url=/target"><title>r</title>',
            ),
            "/form": (
                200,
                HTML,
                '<title>f</title><form id="f" action="/target" method="get"></form>'
                '<script>document.getElementById("f").submit()</script>',
            ),
            "/fragment": (
                200,
                HTML,
                '<title>x</title><p>x</p><script>location.hash = "#a";'
                'history.pushState({}, "", "/pushed")</script>',
            ),
            "/target": (200, HTML, "<title>t</title><p>target</p>"),
            "/alert": (200, HTML, '<title>a</title><script>alert("hi")</script><p>after</p>'),
            "/refused": refused,
        }
    )
    base = await serve(site)
    r = renderer(tabs=2)
    try:
        refresh, form, fragment, refused_out, alert = await asyncio.gather(
            r.render(f"{base}/refresh"),
            r.render(f"{base}/form"),
            r.render(f"{base}/fragment"),
            r.render(f"{base}/refused"),
            r.render(f"{base}/alert"),
        )
    finally:
        await r.close()
    assert refresh.navigated_to == f"{base}/target" and refresh.html is None
    assert form.navigated_to is not None and form.navigated_to.startswith(f"{base}/target")
    assert fragment.navigated_to is None and fragment.html is not None
    assert fragment.final_url == f"{base}/pushed"  # the document's URL when it was read
    assert refused_out.failure == "the browser's request for the page got HTTP 503"
    assert alert.html is not None and "after" in alert.html  # a dialog does not hold it


async def test_a_tab_crash_costs_one_more_try_in_a_new_browser(serve: Serve) -> None:
    asked = asyncio.Event()
    calls = 0

    async def script(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        calls += 1
        if calls == 1:  # the first tab crashes while it waits for this script
            asked.set()
            await asyncio.sleep(30)
        return web.Response(headers={"Content-Type": "text/javascript"}, text="var ok = 1;")

    site = Site({"/p": (200, HTML, '<title>p</title><script src="/s.js"></script><p>body</p>')})
    site.routes["/s.js"] = script
    base = await serve(site)
    r = renderer(tabs=1, timeout=20)
    try:
        task = asyncio.create_task(r.render(f"{base}/p"))
        await asyncio.wait_for(asked.wait(), 15)
        first = r._browser
        assert first is not None
        targets = await first.conn.send("Target.getTargets")
        (page,) = [
            t for t in targets["targetInfos"] if t["type"] == "page" and t["url"] == f"{base}/p"
        ]
        attached = await first.conn.send(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
        )
        with contextlib.suppress(CdpError):  # the renderer dies before it answers
            await first.conn.send("Page.crash", session=attached["sessionId"])
        out = await asyncio.wait_for(task, 30)
    finally:
        await r.close()
    assert out.failure is None and out.html is not None and "body" in out.html
    assert r.starts == 2 and calls == 2
    assert profile_processes(first.profile) == []
