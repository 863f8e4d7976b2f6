"""`crawl --render` end to end (contracts/render.md): real Chromium against loopback pages,
one planted fault per render code, server-rendered controls that yield nothing, the choice
of pages (empty shells first, then listing order, N per host), raw verdicts left raw, and
the link crawl with rendered links (`js_inlinks`)."""

from __future__ import annotations

import asyncio
import os
import shutil
from typing import Any

import pytest
from aiohttp import web

from audit.api import Audit
from audit.core.config import CrawlConfig
from tests.crawlkit import FAST, HTML, XML, Serve, Site, audit, index, urlset

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# CI sets REQUIRE_CHROMIUM so that a missing browser fails instead of skipping
NO_CHROMIUM = CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM")
pytestmark = [
    pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium installed (Debian package chromium)"),
    pytest.mark.slow,
]

WORDS = "a sentence of server rendered text that every crawler reads " * 5  # > 200 chars


def page(head: str, body: str, script: str = "") -> str:
    tag = f"<script>{script}</script>" if script else ""
    return f"<!doctype html><html><head>{head}</head><body>{body}{tag}</body></html>"


def planted(base: str) -> dict[str, str]:
    """path -> page: each plants the fault its name says; controls plant none."""
    return {
        "/noindex-raw-only": page(
            '<title>A</title><meta name="robots" content="noindex">',
            f"<p>{WORDS}</p>",
            'document.querySelector("meta[name=robots]").remove()',
        ),
        "/noindex-added": page(
            "<title>B</title>",
            f"<p>{WORDS}</p>",
            'var m = document.createElement("meta"); m.name = "robots";'
            'm.content = "noindex, follow"; document.head.appendChild(m)',
        ),
        "/canonical-changed": page(
            '<title>C</title><link rel="canonical" href="/canonical-changed">',
            f"<p>{WORDS}</p>",
            'document.querySelector("link[rel=canonical]").href = "/elsewhere"',
        ),
        "/title-changed": page(
            "<title>Old title</title>", f"<p>{WORDS}</p>", 'document.title = "New title"'
        ),
        "/links-only": page(
            "<title>E</title>",
            f'<p>{WORDS}</p><a href="/noindex-added">raw</a>',
            'for (const p of ["/js-1", "/js-2"]) { const a = document.createElement("a");'
            "a.href = p; a.textContent = p; document.body.appendChild(a) }",
        ),
        "/content-only": page(
            "<title>F</title>",
            '<div id="root"></div>',
            f'document.getElementById("root").textContent = "{WORDS}"',
        ),
        "/hreflang-changed": page(
            '<title>G</title><link rel="alternate" hreflang="en" href="/hreflang-changed">',
            f"<p>{WORDS}</p>",
            'var l = document.createElement("link"); l.rel = "alternate"; l.hreflang = "de";'
            'l.href = "/de/"; document.head.appendChild(l)',
        ),
        "/js-redirect": page("<title>H</title>", "<p>moving</p>", 'location.replace("/landing")'),
        "/landing": page("<title>Landing</title>", f"<p>{WORDS}</p>"),
        # controls: the same facts written differently, history changes, a throwing script
        "/hydrated": page(
            '<title>Shop  home</title><link rel="canonical" href="/hydrated">'
            '<link rel="alternate" hreflang="en" href="/hydrated">'
            '<link rel="alternate" hreflang="fr" href="/fr/">',
            f'<div id="app"><p>{WORDS}</p><a href="/landing">landing</a></div>',
            f'document.title = "Shop home";'
            f'document.querySelector("link[rel=canonical]").href = "{base}/hydrated#top";'
            'document.getElementById("app").innerHTML = '
            f'"<p>{WORDS}</p><a href=\\"{base}/landing#x\\">Landing</a>";'
            'for (const l of document.querySelectorAll("link[hreflang]")) l.remove();'
            'for (const [h, u] of [["FR", "/fr/"], ["en", "/hydrated"]]) {'
            'const l = document.createElement("link"); l.rel = "alternate"; l.hreflang = h;'
            "l.href = u; document.head.appendChild(l) }",
        ),
        "/replace-state": page(
            "<title>R</title>",
            f"<p>{WORDS}</p>",
            'history.replaceState({}, "", "/somewhere-else"); location.hash = "#part"',
        ),
        "/throws": page("<title>T</title>", f"<p>{WORDS}</p>", 'throw new Error("boom")'),
    }


EXPECTED = {
    "/noindex-raw-only": {"render-noindex-raw-only"},
    "/noindex-added": {"render-noindex-added"},
    "/canonical-changed": {"render-canonical-changed"},
    "/title-changed": {"render-title-changed"},
    "/links-only": {"render-links-only"},
    "/content-only": {"render-content-only"},
    "/hreflang-changed": {"render-hreflang-changed"},
    "/js-redirect": {"render-js-redirect"},
    "/landing": set(),
    "/hydrated": set(),
    "/replace-state": set(),
    "/throws": set(),
}


async def serve_pages(serve: Serve, extra: dict[str, Any] | None = None) -> tuple[str, Site]:
    site = Site()
    base = await serve(site)
    pages = planted(base)
    for path, body in pages.items():
        site.routes[path] = (200, HTML, body)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in pages)))
    site.routes.update(extra or {})
    return base, site


def render_codes(run: Any, url: str) -> set[str]:
    return {
        f["code"] for f in run.of("finding") if f["url"] == url and f["code"].startswith("render-")
    }


async def test_one_planted_fault_per_code_and_controls_yield_nothing(serve: Serve) -> None:
    base, site = await serve_pages(serve)
    run = await audit(base + "/sitemap.xml", render=0, render_tabs=3, deadline=55)
    for path, codes in EXPECTED.items():
        assert render_codes(run, base + path) == codes, path
        record = run.url(base + path)
        assert record["rendered"] is True, path
    # the messages name both values (or the target)
    (title,) = run.findings("render-title-changed")
    assert "'Old title'" in title["message"] and "'New title'" in title["message"]
    (canonical,) = run.findings("render-canonical-changed")
    assert f"{base}/canonical-changed" in canonical["message"]
    assert f"{base}/elsewhere" in canonical["message"]
    (links,) = run.findings("render-links-only")
    assert "2 internal link(s)" in links["message"] and f"{base}/js-1" in links["message"]
    (moved,) = run.findings("render-js-redirect")
    assert f"{base}/landing" in moved["message"]
    assert moved["sitemap"] == base + "/sitemap.xml" and moved["line"] is not None
    # the url record's render object
    shown = run.url(base + "/links-only")["render"]
    assert shown["links"] == 3 and shown["js_links"] == 2 and shown["noindex"] is False
    assert shown["final_url"] == base + "/links-only" and shown["ms"] >= 0
    assert run.url(base + "/content-only")["render"]["text"] >= 200
    assert run.url(base + "/js-redirect")["render"]["final_url"] == base + "/landing"
    assert "title" not in run.url(base + "/js-redirect")["render"]
    assert run.url(base + "/hydrated")["render"]["hreflang"] == 2
    # raw verdicts stay raw: the script's noindex is no url-noindex, the removed one stays
    raw_noindex = {f["url"] for f in run.findings("url-noindex")}
    assert raw_noindex == {base + "/noindex-raw-only"}
    assert run.summary["render"]["pages"] == len(EXPECTED)
    assert run.summary["render"]["failed"] == 0
    # each page was rendered once: one browser request for its document
    docs = [h.path for h in site.hits if h.headers.get("Sec-Fetch-Dest") == "document"]
    for path in EXPECTED:
        if path != "/landing":
            assert docs.count(path) == 1, path


async def test_a_page_whose_script_never_finishes_is_render_failed(serve: Serve) -> None:
    async def never(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/javascript"})
        await resp.prepare(request)
        while True:  # a script that never finishes loading
            await resp.write(b"//\n")
            await asyncio.sleep(0.1)

    site = Site()
    base = await serve(site)
    site.routes["/stuck"] = (
        200,
        HTML,
        page("<title>S</title>", '<script src="/never.js"></script>'),
    )
    site.routes["/never.js"] = never
    site.routes["/fine"] = (200, HTML, page("<title>F</title>", f"<p>{WORDS}</p>"))
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/stuck", base + "/fine"))
    run = await audit(base + "/sitemap.xml", render=0, render_timeout=1.5)
    (failed,) = run.findings("render-failed")
    assert failed["url"] == base + "/stuck" and "no load event after 1.5 s" in failed["message"]
    assert failed["severity"] == "info"
    assert render_codes(run, base + "/stuck") == {"render-failed"}
    assert run.url(base + "/stuck")["rendered"] is False
    assert "render" not in run.url(base + "/stuck")
    assert run.url(base + "/fine")["rendered"] is True
    assert run.summary["render"] == {
        **run.summary["render"],
        "pages": 2,
        "failed": 1,
    }


async def test_pages_chosen_empty_shells_first_then_listing_order_per_host(
    serve: Serve,
) -> None:
    site = Site()
    base = await serve(site)
    plain = page("<title>P</title>", f"<p>{WORDS}</p>")
    shell = page("<title>S</title>", '<div id="root"></div>', "1")
    # listing order: the index's first child before its second, each in document order
    first = [f"{base}/a{i}" for i in range(3)]
    second = [f"{base}/b{i}" for i in range(3)]
    for url in first:
        site.routes[url[len(base) :]] = (200, HTML, plain)
    site.routes["/b0"] = (200, HTML, plain)
    site.routes["/b1"] = (200, HTML, shell)
    site.routes["/b2"] = (200, HTML, shell)
    site.routes["/gone"] = (404, HTML, "no")
    site.routes["/moved"] = (301, {"Location": base + "/a0"}, "")
    site.routes["/data.json"] = (200, {"Content-Type": "application/json"}, "{}")
    site.routes["/sm1.xml"] = (
        200,
        XML,
        urlset(*first, base + "/gone", base + "/moved", base + "/data.json"),
    )
    site.routes["/sm2.xml"] = (200, XML, urlset(*second))
    site.routes["/index.xml"] = (200, XML, index(base + "/sm1.xml", base + "/sm2.xml"))
    run = await audit(base + "/index.xml", render=3)
    rendered = {r["url"] for r in run.of("url") if r["rendered"]}
    # the two shells, then the first page in listing order
    assert rendered == {base + "/b1", base + "/b2", base + "/a0"}
    for url in (base + "/gone", base + "/moved", base + "/data.json", base + "/a1"):
        assert run.url(url)["rendered"] is False
    assert run.summary["render"]["pages"] == 3
    docs = {h.path for h in site.hits if h.headers.get("Sec-Fetch-Dest") == "document"}
    assert docs == {"/b1", "/b2", "/a0"}
    # each render took one turn of its host's --rate: three requests more than without
    plain = await audit(base + "/index.xml", page_checks=True)
    (host,) = run.of("hosts")[0]["hosts"]
    (plain_host,) = plain.of("hosts")[0]["hosts"]
    assert host["requests"] - plain_host["requests"] == 3


async def test_links_render_follows_js_only_links_and_counts_them(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes["/"] = (200, HTML, page("<title>Home</title>", f'<p>{WORDS}</p><a href="/a">a</a>'))
    site.routes["/a"] = (
        200,
        HTML,
        page(
            "<title>A</title>",
            f'<p>{WORDS}</p><a href="/">home</a>',
            'for (const p of ["/b", "/hidden"]) { const a = document.createElement("a");'
            "a.href = p; document.body.appendChild(a) }",
        ),
    )
    site.routes["/b"] = (200, HTML, page("<title>B</title>", f"<p>{WORDS}</p>"))
    site.routes["/hidden"] = (200, HTML, page("<title>Hidden</title>", f"<p>{WORDS}</p>"))
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/a", base + "/b"))

    without = await audit(base + "/sitemap.xml", links=True, page_checks=True)
    assert {f["url"] for f in without.findings("url-orphan")} == {base + "/b"}
    assert "js_inlinks" not in without.url(base + "/b")

    run = await audit(base + "/sitemap.xml", links=True, render=0)
    assert run.findings("url-orphan") == []  # /b is linked, by a script
    b = run.url(base + "/b")
    assert b["inlinks"] == 1 and b["js_inlinks"] == 1
    hidden = run.url(base + "/hidden")  # reached only through a JS-only link: crawled raw
    assert hidden["source"] == "links" and hidden["js_inlinks"] == 1
    assert hidden["rendered"] is False  # pages only the link crawl found are never rendered
    unlisted = {f["url"] for f in run.findings("page-not-in-sitemap")}
    assert unlisted == {base + "/", base + "/hidden"}
    assert run.url(base + "/a")["js_inlinks"] == 0 and run.url(base + "/a")["inlinks"] == 1
    assert render_codes(run, base + "/a") == {"render-links-only"}
    assert run.summary["coverage"]["complete"] is True


async def test_every_url_record_says_whether_it_was_rendered(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes["/ok"] = (200, HTML, page("<title>o</title>", f"<p>{WORDS}</p>"))
    site.routes["/robots.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        "User-agent: *\nDisallow: /no\n",
    )
    site.routes["/sitemap.xml"] = (
        200,
        XML,
        urlset(base + "/ok", base + "/no", "http://[::1/bad", base + "/missing"),
    )
    run = await audit(base + "/sitemap.xml", render=1)
    records = run.of("url")
    assert len(records) == 4
    assert {r["url"]: r["rendered"] for r in records} == {
        base + "/ok": True,
        base + "/no": False,  # robots.txt: never requested
        "http://[::1/bad": False,  # cannot be requested
        base + "/missing": False,  # 404: no candidate
    }


async def test_n_pages_per_host_over_several_targets(serve: Serve) -> None:
    sites, targets = [], []
    for _ in range(2):
        site = Site()
        base = await serve(site)
        for i in range(3):
            site.routes[f"/p{i}"] = (200, HTML, page(f"<title>{i}</title>", f"<p>{WORDS}</p>"))
        site.routes["/sitemap.xml"] = (200, XML, urlset(*(f"{base}/p{i}" for i in range(3))))
        sites.append(site)
        targets.append(base + "/sitemap.xml")
    records: list[dict[str, Any]] = []
    run = Audit(targets, CrawlConfig(**{**FAST, "render": 2}), sinks=[records.append])
    await asyncio.wait_for(run.run(), 50)
    run.finish()
    rendered = [r["url"] for r in records if r["type"] == "url" and r["rendered"]]
    assert len(rendered) == 4  # two per host: the first two listed of each
    for site, target in zip(sites, targets, strict=True):
        base = target.rsplit("/", 1)[0]
        assert sorted(u for u in rendered if u.startswith(base + "/")) == [
            f"{base}/p0",
            f"{base}/p1",
        ]
        docs = [h.path for h in site.hits if h.headers.get("Sec-Fetch-Dest") == "document"]
        assert sorted(docs) == ["/p0", "/p1"]
    (summary,) = [r for r in records if r["type"] == "summary"]
    assert summary["render"]["pages"] == 4
