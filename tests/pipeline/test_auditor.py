"""End-to-end crawl tests: the real pipeline against loopback servers the tests start."""

from __future__ import annotations

import asyncio
import gzip
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from tests.crawlkit import HTML, TEXT, XML, Site, audit, index, urlset


def robots(base: str, extra: str = "") -> tuple[int, dict[str, str], str]:
    return 200, TEXT, f"User-agent: *\n{extra}\nsitemap: {base}/sitemap.xml\n"


# --- discovery ------------------------------------------------------------


async def test_robots_sitemap_line_any_case_and_every_url_checked_once(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (
            200,
            TEXT,
            f"# comment\nSITEMAP: {base}/sm.xml\nUser-agent: *\nDisallow:\n",
        ),
        "/sm.xml": (200, XML, urlset(f"{base}/a", f"{base}/b", f"{base}/c")),
        "/a": (200, HTML, "a"),
        "/b": (200, HTML, "b"),
        "/c": (200, HTML, "c"),
    }
    run = await audit(base + "/")
    assert [r["url"] for r in run.of("discovered")] == [f"{base}/sm.xml"]
    assert sorted(r["url"] for r in run.of("url")) == [f"{base}/a", f"{base}/b", f"{base}/c"]
    assert all(r["status"] == 200 and r["robots"] == "allowed" for r in run.of("url"))
    assert run.url(f"{base}/b")["line"] == 4
    assert [r["url"] for r in run.of("sitemap")] == [f"{base}/sm.xml"]
    assert run.summary["urls"] == 3
    assert site.paths().count("/robots.txt") == 1  # fetched once per host
    assert run.codes() == ["lastmod-missing"]  # info, once per sitemap


async def test_common_path_then_link_rel_and_robots_missing(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap_index.xml": (200, XML, index(f"{base}/child.xml")),
        "/child.xml": (200, XML, urlset(f"{base}/p")),
        "/p": (200, HTML, "p"),
    }
    run = await audit(base)
    assert [(r["url"], r["source"]) for r in run.of("discovered")] == [
        (f"{base}/sitemap_index.xml", "common path")
    ]
    assert "robots-missing" in run.codes()
    assert run.url(f"{base}/p")["status"] == 200

    site2 = Site()
    base2 = await serve(site2)
    site2.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /private/\n"),
        "/": (
            200,
            HTML,
            '<html><head><link rel="sitemap" type="application/xml" href="/maps/s.xml"></head></html>',
        ),
        "/maps/s.xml": (200, XML, urlset(f"{base2}/maps/x")),
        "/maps/x": (200, HTML, "x"),
    }
    run2 = await audit(base2 + "/")
    assert [(r["url"], r["source"]) for r in run2.of("discovered")] == [
        (f"{base2}/maps/s.xml", "home page")
    ]
    assert "robots-no-sitemap" in run2.codes()
    assert run2.url(f"{base2}/maps/x")["status"] == 200


async def test_site_without_sitemap_is_a_finding(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/": (200, HTML, "<html>home</html>"),
        "/sitemap.xml": (200, HTML, "<!DOCTYPE html><html>soft</html>"),
    }
    run = await audit(base + "/")
    assert run.codes().count("sitemap-not-found") == 1
    assert run.of("url") == []


# --- robots ----------------------------------------------------------------


async def test_robots_groups_allow_wins_and_blocked_urls_not_requested(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (
            200,
            TEXT,
            "User-agent: *\nDisallow: /shop\nAllow: /shop/open\n\n"
            "User-agent: otherbot\nDisallow: /\n"
            f"Sitemap: {base}/sitemap.xml\n",
        ),
        "/sitemap.xml": (
            200,
            XML,
            urlset(f"{base}/shop/open/1", f"{base}/shop/closed", f"{base}/free"),
        ),
        "/shop/open/1": (200, HTML, ""),
        "/shop/closed": (200, HTML, ""),
        "/free": (200, HTML, ""),
    }
    run = await audit(base + "/")
    assert run.url(f"{base}/shop/open/1")["robots"] == "allowed"
    assert run.url(f"{base}/shop/closed")["robots"] == "blocked"
    assert [f["url"] for f in run.findings("url-robots-blocked")] == [f"{base}/shop/closed"]
    assert "/shop/closed" not in site.paths()


async def test_robots_unreachable_blocks_host(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (500, TEXT, "oops"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/a")),
        "/a": (200, HTML, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    assert "robots-unreachable" in run.codes()
    # RULES.md (second round): held back by the host's one robots-unreachable, not blocked
    assert run.url(f"{base}/a")["robots"] == "unreachable"
    assert "url-robots-blocked" not in run.codes()
    assert "/a" not in site.paths()


# --- sitemap fetching -----------------------------------------------------


async def test_sitemap_level_codes(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, "User-agent: *\nDisallow: /blocked-sitemap.xml\n"),
        "/index.xml": (
            200,
            XML,
            index(
                f"{base}/moved.xml",
                f"{base}/missing.xml",
                f"{base}/broken.xml",
                f"{base}/html.xml",
                f"{base}/json.xml",
                f"{base}/nested.xml",
                f"{base}/blocked-sitemap.xml",
                f"{base}/gz.xml",
            ),
        ),
        "/moved.xml": (301, {"Location": "/final.xml"}, ""),
        "/final.xml": (200, XML, urlset(f"{base}/p1")),
        "/missing.xml": (404, TEXT, "no"),
        "/broken.xml": (500, TEXT, "boom"),
        "/html.xml": (200, HTML, "<!DOCTYPE html><html><body>Not here</body></html>"),
        "/json.xml": (200, {"Content-Type": "application/json"}, urlset(f"{base}/p2")),
        "/nested.xml": (200, XML, index(f"{base}/leaf.xml")),
        "/leaf.xml": (200, XML, urlset(f"{base}/p3")),
        "/blocked-sitemap.xml": (200, XML, urlset(f"{base}/p4")),
        "/gz.xml": (
            200,
            {"Content-Type": "application/gzip"},
            gzip.compress(urlset(f"{base}/p5").encode())[:-12],
        ),
        **{f"/p{i}": (200, HTML, "") for i in range(1, 6)},
    }
    run = await audit(f"{base}/index.xml")
    by_url = {
        f["url"]: f["code"]
        for f in run.of("finding")
        if f["url"] and f["code"].startswith(("sitemap", "index"))
    }
    assert by_url[f"{base}/moved.xml"] == "sitemap-redirected"
    assert by_url[f"{base}/missing.xml"] == "sitemap-not-found"
    assert by_url[f"{base}/broken.xml"] == "sitemap-http-error"
    assert by_url[f"{base}/json.xml"] == "sitemap-content-type"
    assert by_url[f"{base}/nested.xml"] == "index-nested"
    assert by_url[f"{base}/blocked-sitemap.xml"] == "sitemap-robots-blocked"
    codes = run.codes()
    assert "sitemap-is-html" in codes
    assert "sitemap-gzip-invalid" in codes
    redirected = run.findings("sitemap-redirected")[0]
    assert redirected["sitemap"] == f"{base}/index.xml" and redirected["line"] == 3
    # the redirected, nested and blocked sitemaps are still read: their URLs are checked
    for p in ("/p1", "/p2", "/p3", "/p4"):
        assert run.url(base + p)["status"] == 200


async def test_index_loop_is_reported_and_not_followed(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/a.xml": (200, XML, index(f"{base}/b.xml")),
        "/b.xml": (200, XML, index(f"{base}/a.xml")),
    }
    run = await audit(f"{base}/a.xml", mode="validate")
    assert run.codes().count("index-loop") == 1
    assert site.paths().count("/a.xml") == 1


async def test_urls_checked_while_the_sitemap_is_still_arriving(serve: Any) -> None:
    first_checked = asyncio.Event()
    site = Site()
    base = await serve(site)

    async def slow_sitemap(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers=XML)
        await resp.prepare(request)
        doc = urlset(f"{base}/first", f"{base}/second").encode()
        cut = doc.index(b"<url><loc>" + f"{base}/second".encode())
        await resp.write(doc[:cut])
        # Only a streaming auditor checks /first before the rest of the document arrives.
        await asyncio.wait_for(first_checked.wait(), 20)
        await resp.write(doc[cut:])
        return resp

    async def first(request: web.Request) -> web.Response:
        first_checked.set()
        return web.Response(text="ok")

    site.routes = {"/sm.xml": slow_sitemap, "/first": first, "/second": (200, HTML, "")}
    run = await audit(f"{base}/sm.xml")
    assert run.url(f"{base}/first")["status"] == 200
    assert run.url(f"{base}/second")["status"] == 200


# --- URL checks ------------------------------------------------------------


@pytest.mark.slow
async def test_url_check_codes(serve: Any) -> None:
    site = Site()
    base = await serve(site)

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.3)
        return web.Response(text="slow")

    async def dynamic(request: web.Request) -> web.Response:
        from email.utils import formatdate

        return web.Response(text="d", headers={"Last-Modified": formatdate(usegmt=True)})

    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(text="late")

    closed = f"{base}/hang"
    pages = {
        "/r1": (301, {"Location": "/ok"}, ""),
        "/r2": (302, {"Location": "/r1"}, ""),
        "/loop": (301, {"Location": "/loop"}, ""),
        "/r404": (301, {"Location": "/nope"}, ""),
        "/nolocation": (302, {}, ""),
        "/gone410": (410, TEXT, "gone"),
        "/auth": (401, TEXT, "who"),
        "/cf": (
            403,
            {"Server": "cloudflare", "cf-mitigated": "challenge", **HTML},
            "<title>Just a moment...</title>",
        ),
        "/err": (500, TEXT, "down"),
        "/busy": (429, {"Retry-After": "0"}, "slow down"),
        "/noindex": (200, {"X-Robots-Tag": "noindex"}, ""),
        "/canon": (200, {"Link": '<https://elsewhere.example/page>; rel="canonical"'}, ""),
        "/slow": slow,
        "/stale": (200, {"Last-Modified": "Wed, 15 May 2024 10:00:00 GMT"}, ""),
        "/ahead": (200, {"Last-Modified": "Wed, 01 May 2024 10:00:00 GMT"}, ""),
        "/dynamic": dynamic,
        "/ok": (200, HTML, "fine"),
        "/hang": hang,
    }
    site.routes = {
        "/sitemap.xml": (
            200,
            XML,
            urlset(*[base + p for p in pages if p not in ("/stale", "/ahead", "/dynamic")]).replace(
                "</urlset>",
                "".join(
                    f"<url><loc>{base}{p}</loc><lastmod>2024-05-10</lastmod></url>\n"
                    for p in ("/stale", "/ahead", "/dynamic")
                )
                + "</urlset>",
            ),
        ),
        **pages,
    }
    run = await audit(f"{base}/sitemap.xml", slow_ms=150.0, timeout=1.0, retries=1)
    got = {(f["url"], f["code"]) for f in run.of("finding")}
    expect = {
        ("/r1", "url-redirect"),
        ("/r2", "url-redirect-chain"),
        ("/loop", "url-redirect-loop"),
        ("/r404", "url-redirect-error"),
        ("/nolocation", "url-redirect-error"),
        ("/gone410", "url-not-found"),
        ("/auth", "url-client-error"),
        ("/cf", "url-bot-blocked"),
        ("/err", "url-server-error"),
        ("/busy", "url-rate-limited"),
        ("/noindex", "url-noindex"),
        ("/canon", "url-canonical-mismatch"),
        ("/slow", "url-slow"),
        ("/stale", "lastmod-stale"),
        ("/ahead", "lastmod-ahead"),
        ("/dynamic", "last-modified-dynamic"),
    }
    for path, code in expect:
        assert (base + path, code) in got, (path, code)
    assert (closed, "url-unreachable") in got
    assert not [f for f in run.of("finding") if f["url"] == base + "/ok"]
    assert not [
        f
        for f in run.of("finding")
        if f["url"] == base + "/dynamic" and f["code"].startswith("lastmod-")
    ]
    assert ("/cf" and (base + "/cf", "url-client-error")) not in got
    r2 = run.url(base + "/r2")
    assert [h["status"] for h in r2["redirects"]] == [302, 301] and r2["final_url"] == base + "/ok"
    assert run.url(base + "/err")["status"] == 500
    assert run.url(closed)["status"] is None and run.url(closed)["error"]


async def test_silent_cases(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    counts: Counter[str] = Counter()

    def flaky(status: int) -> Any:
        async def handler(request: web.Request) -> web.Response:
            counts[request.path] += 1
            if counts[request.path] == 1:
                return web.Response(status=status, headers={"Retry-After": "0"}, text="try again")
            return web.Response(text="ok")

        return handler

    async def head405(request: web.Request) -> web.Response:
        return web.Response(status=405) if request.method == "HEAD" else web.Response(text="ok")

    async def head_lies(request: web.Request) -> web.Response:
        return web.Response(status=404) if request.method == "HEAD" else web.Response(text="ok")

    site.routes = {
        "/sitemap.xml": (
            200,
            XML,
            urlset(*[f"{base}/{p}" for p in ("f503", "f429", "h405", "hlies", "other")]).replace(
                "</urlset>",
                f"<url><loc>{base}/sameday</loc><lastmod>2024-05-10</lastmod></url></urlset>",
            ),
        ),
        "/f503": flaky(503),
        "/f429": flaky(429),
        "/h405": head405,
        "/hlies": head_lies,
        "/other": (200, {"X-Robots-Tag": "otherbot: noindex"}, ""),
        "/sameday": (200, {"Last-Modified": "Fri, 10 May 2024 23:59:00 GMT"}, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    assert [
        f
        for f in run.of("finding")
        if f["url"] and f["url"].startswith(base + "/") and f["url"] != base + "/robots.txt"
    ] == []
    for p in ("f503", "f429", "h405", "hlies", "other", "sameday"):
        assert run.url(f"{base}/{p}")["status"] == 200


# --- politeness and accounting -------------------------------------------


@pytest.mark.slow
async def test_rate_limit_per_host(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(15)])),
        **{f"/p{i}": (200, HTML, "") for i in range(15)},
    }
    await audit(f"{base}/sitemap.xml", rate=5.0, concurrency=8)
    times = sorted(h.t for h in site.hits if h.path.startswith("/p"))
    assert len(times) == 15
    burst = 1
    for i, t in enumerate(times):
        in_window = sum(1 for u in times[i:] if u - t < 1.0)
        assert in_window <= 5 + burst, f"{in_window} requests within one second"


async def test_concurrency_one_never_overlaps(serve: Any) -> None:
    site = Site()
    base = await serve(site)

    async def page(request: web.Request) -> web.Response:
        await asyncio.sleep(0.01)
        return web.Response(text="x")

    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(12)])),
        **{f"/p{i}": page for i in range(12)},
    }
    run = await audit(f"{base}/sitemap.xml", concurrency=1)
    assert len(run.of("url")) == 12
    page_hits = [h for h in site.hits if h.path.startswith("/p")]
    assert len(page_hits) == 12
    assert site.max_in_flight == 1


@pytest.mark.slow
async def test_nothing_lost_under_resets_and_timeouts(serve: Any) -> None:
    site = Site()
    base = await serve(site)

    async def reset(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.close()
        return web.Response(text="never sent")

    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response(text="late")

    urls = []
    routes: dict[str, Any] = {}
    for i in range(30):
        path = f"/p{i}"
        urls.append(base + path)
        routes[path] = reset if i % 5 == 0 else hang if i % 7 == 0 else (200, HTML, "")
    urls.append(urls[3])  # a duplicate listing: still one url record
    site.routes = {"/sitemap.xml": (200, XML, urlset(*urls)), **routes}
    run = await audit(f"{base}/sitemap.xml", timeout=0.5, retries=1)
    listed = Counter(r["url"] for r in run.of("url"))
    assert set(listed) == set(urls) and set(listed.values()) == {1}
    assert run.url(base + "/p0")["error"] and run.url(base + "/p7")["error"]
    assert "loc-duplicate" in run.codes()


async def test_max_urls_and_scope(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/index.xml": (200, XML, index(f"{base}/blog.xml", f"{base}/shop.xml")),
        "/blog.xml": (200, XML, urlset(*[f"{base}/blog/{i}" for i in range(10)])),
        "/shop.xml": (200, XML, urlset(*[f"{base}/shop/{i}" for i in range(10)])),
        **{f"/blog/{i}": (200, HTML, "") for i in range(10)},
    }
    run = await audit(f"{base}/index.xml", exclude_sitemap=("shop",), exclude=(r"/blog/[89]$",))
    assert "/shop.xml" not in site.paths()
    assert len(run.of("url")) == 8
    assert run.summary["excluded_urls"] == 2

    run2 = await audit(f"{base}/index.xml", exclude_sitemap=("shop",), max_urls=3)
    assert len(run2.of("url")) == 3
    assert run2.summary["max_urls_reached"] is True


# --- the jsonl line encoder ----------------------------------------------------------------


@pytest.mark.parametrize("with_orjson", [True, False])
def test_jsonl_lines_are_the_same_with_or_without_orjson(
    with_orjson: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    from datetime import UTC, datetime

    from audit.report import jsonl

    if not with_orjson:
        monkeypatch.setattr(jsonl, "_ORJSON", None)
    elif jsonl._ORJSON is None:
        pytest.skip("orjson is not installed (the optional 'fast' extra)")
    record = {
        "type": "url",
        "url": "https://ex.com/caf\u00e9\u2028x",
        "line": 7,
        "redirects": ({"url": "https://ex.com/a", "status": 301},),
        "elapsed_ms": 14.1,
        "error": None,
        "when": datetime(2024, 1, 2, tzinfo=UTC),
    }
    line = jsonl.dumps_line(record)
    assert line == (
        '{"type":"url","url":"https://ex.com/caf\u00e9\\u2028x","line":7,'
        '"redirects":[{"url":"https://ex.com/a","status":301}],"elapsed_ms":14.1,'
        '"error":null,"when":"2024-01-02 00:00:00+00:00"}\n'
    )
    # what orjson refuses (a non-str key, an int beyond 64 bits) still becomes a line
    odd = jsonl.dumps_line({"type": "x", 1: 2**70})
    assert json.loads(odd) == {"type": "x", "1": 2**70} and odd.count("\n") == 1


# --- the CLI's event loop --------------------------------------------------------------------


def test_event_loop_factory_uses_uvloop_only_when_installed_and_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from audit.core.eventloop import NO_UVLOOP_ENV, loop_name, new_event_loop

    async def work() -> str:
        await asyncio.sleep(0)
        return loop_name(asyncio.get_running_loop())

    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        expected = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
        assert runner.run(work()) == expected
    monkeypatch.setenv(NO_UVLOOP_ENV, "1")
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        assert runner.run(work()) == "asyncio"


async def test_a_megabyte_loc_is_clipped_in_the_report(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    huge = f"{base}/" + "x" * 1_000_000
    site.routes = {"/sitemap.xml": (200, XML, urlset(huge, f"{base}/ok")), "/ok": (200, HTML, "")}
    run = await audit(f"{base}/sitemap.xml")
    (too_long,) = run.findings("loc-too-long")
    assert too_long["url"].startswith(huge[:100]) and len(too_long["url"]) < 8300
    records = [r for r in run.of("url") if r["url"] != f"{base}/ok"]
    assert len(records) == 1 and len(records[0]["url"]) < 8300
    assert records[0]["error"] == "not requested: loc-too-long"
    assert len([h for h in site.hits if h.path.startswith("/x")]) == 0
