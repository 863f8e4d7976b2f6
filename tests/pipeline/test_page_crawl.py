"""--page-checks end to end: the real pipeline, real HTTP over 127.0.0.1, inline handlers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

XHTML_NS = 'xmlns:xhtml="http://www.w3.org/1999/xhtml"'


def robots(base: str) -> tuple[int, dict[str, str], str]:
    return 200, TEXT, f"User-agent: *\nDisallow:\nSitemap: {base}/sitemap.xml\n"


def page(head: str = "", body: str = "<p>Plenty of ordinary content on this page.</p>") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def alt_urlset(entries: dict[str, list[tuple[str, str]]]) -> str:
    """A urlset whose entries carry xhtml:link alternates."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" {XHTML_NS}>',
    ]
    for loc, alts in entries.items():
        links = "".join(
            f'<xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>' for lang, href in alts
        )
        out.append(f"<url><loc>{loc}</loc>{links}</url>")
    out.append("</urlset>")
    return "\n".join(out)


async def test_noindex_from_meta_robots_and_the_agent_meta(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (
            200,
            XML,
            urlset(f"{base}/meta", f"{base}/agent", f"{base}/other-agent", f"{base}/both"),
        ),
        "/meta": (200, HTML, page('<meta name="robots" content="noindex, follow">')),
        "/agent": (200, HTML, page('<meta name="sitemap-audit" content="none">')),
        "/other-agent": (200, HTML, page('<meta name="googlebot" content="noindex">')),
        "/both": (
            200,
            {**HTML, "X-Robots-Tag": "noindex"},
            page("<meta name=robots content=noindex>"),
        ),
    }
    run = await audit(base + "/", page_checks=True)
    noindex = {f["url"]: f["message"] for f in run.findings("url-noindex")}
    assert set(noindex) == {f"{base}/meta", f"{base}/agent", f"{base}/both"}
    assert run.codes().count("url-noindex") == 3  # header + meta on /both: one finding
    assert "X-Robots-Tag" in noindex[f"{base}/both"] and "<meta" in noindex[f"{base}/both"]
    assert run.url(f"{base}/other-agent")["page"]["robots"] == "googlebot: noindex"
    # one GET per URL, no HEAD first
    for path in ("/meta", "/agent", "/other-agent", "/both"):
        assert [h.method for h in site.hits if h.path == path] == ["GET"]


async def test_canonical_mismatch_conflicts_and_silent_equivalents(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    upper = base.replace("http://", "HTTP://")
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (
            200,
            XML,
            urlset(
                f"{base}/dup",
                f"{base}/self-case",
                f"{base}/two",
                f"{base}/hdr",
                f"{base}/d/rel",
                f"{base}/body-only",
            ),
        ),
        "/dup": (200, HTML, page('<link rel="canonical" href="/original">')),
        "/self-case": (200, HTML, page(f'<link rel="canonical" href="{upper}/self-case#top">')),
        "/two": (200, HTML, page("<link rel=canonical href=/a><link rel=canonical href=/b>")),
        "/hdr": (
            200,
            {**HTML, "Link": f'<{base}/x>; rel="canonical"'},
            page("<link rel=canonical href=/x>"),
        ),
        "/d/rel": (200, HTML, page("<link rel=canonical href=rel>")),
        "/body-only": (200, HTML, page(body="<link rel=canonical href=/elsewhere><p>text</p>")),
    }
    run = await audit(base + "/", page_checks=True)
    mismatch = {f["url"]: f["message"] for f in run.findings("url-canonical-mismatch")}
    assert set(mismatch) == {f"{base}/dup", f"{base}/two", f"{base}/hdr"}
    assert f"{base}/original" in mismatch[f"{base}/dup"]
    assert f"{base}/a" in mismatch[f"{base}/two"] and f"{base}/b" in mismatch[f"{base}/two"]
    assert run.codes().count("url-canonical-mismatch") == 3  # Link header + same head: once
    assert run.url(f"{base}/dup")["page"]["canonical"] == f"{base}/original"
    assert run.url(f"{base}/d/rel")["page"]["canonical"] == f"{base}/d/rel"


async def test_soft_404_by_title_and_h1_in_other_languages_and_charsets(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    ru = "Страница не найдена".encode("cp1251")
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (
            200,
            XML,
            urlset(f"{base}/en", f"{base}/de", f"{base}/ru", f"{base}/ja", f"{base}/fine"),
        ),
        "/en": (200, HTML, page("<title>Page Not Found | Shop</title>")),
        "/de": (200, HTML, page("<title>Shop</title>", "<h1>Seite nicht gefunden</h1>")),
        "/ru": (
            200,
            {"Content-Type": "text/html"},
            b'<html><head><meta charset="windows-1251"><title>' + ru + b"</title></head></html>",
        ),
        "/ja": (200, HTML, "\ufeff<title>ページが見つかりません</title>".encode()),
        "/fine": (200, HTML, page("<title>Shop: shoes</title>", "<h1>Shoes</h1>")),
    }
    run = await audit(base + "/", page_checks=True)
    soft = {f["url"] for f in run.findings("url-soft-404")}
    assert soft == {f"{base}/en", f"{base}/de", f"{base}/ru", f"{base}/ja"}
    assert run.url(f"{base}/ru")["page"]["title"] == "Страница не найдена"
    assert run.url(f"{base}/ru")["page"]["charset"] == "cp1251"


async def test_soft_404_by_similarity_with_one_probe_per_host(serve: Any) -> None:
    hits: list[str] = []
    template = "<html><head><title>Shop</title></head><body><p>Sorry, {path} is gone. Try the search.</p></body></html>"

    async def handler(request: web.Request) -> web.StreamResponse:
        hits.append(request.path)
        if request.path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nSitemap: {base}/sitemap.xml\n")
        if request.path == "/sitemap.xml":
            locs = [f"{base}/gone/{i}" for i in range(3)] + [f"{base}/real"]
            return web.Response(text=urlset(*locs), content_type="application/xml")
        if request.path == "/real":
            return web.Response(
                text=page("<title>Shop</title>", "<p>Red shoes, size 42, in stock for 59 EUR.</p>"),
                content_type="text/html",
            )
        # every other path: 200 with the same little page (a soft-404 site)
        return web.Response(text=template.format(path=request.path), content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    base = await serve(app)
    run = await audit(base + "/", page_checks=True, concurrency=4)
    soft = {f["url"]: f["message"] for f in run.findings("url-soft-404")}
    assert set(soft) == {f"{base}/gone/{i}" for i in range(3)}
    assert "does not exist" in soft[f"{base}/gone/0"]
    probes = [p for p in hits if p.startswith("/sitemap-audit-probe-")]
    assert len(probes) == 1  # one probe for the host, shared by every page
    assert len(run.of("url")) == 4  # the probe is not a url record


async def test_no_probe_when_the_site_answers_404_for_missing_pages(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/tiny")),
        "/tiny": (200, HTML, "<title>Tiny</title><p>A short but real page.</p>"),
    }
    run = await audit(base + "/", page_checks=True)
    assert "url-soft-404" not in run.codes()
    assert len([p for p in site.paths() if p.startswith("/sitemap-audit-probe-")]) == 1


async def test_hreflang_from_heads_merged_with_sitemap_alternates(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    en, de, fr, es = (f"{base}/{x}" for x in ("en", "de", "fr", "es"))

    def alts(*pairs: tuple[str, str]) -> str:
        return "".join(f'<link rel="alternate" hreflang="{h}" href="{u}">' for h, u in pairs)

    site.routes = {
        "/robots.txt": robots(base),
        # the sitemap: en names de (de's page answers), fr has no alternates there
        "/sitemap.xml": (
            200,
            XML,
            alt_urlset({en: [("en", en), ("de", de)], de: [], fr: [], es: []}),
        ),
        "/en": (200, HTML, page(alts(("en", en), ("fr", fr)))),  # the page adds fr
        "/de": (200, HTML, page(alts(("de", de), ("en", en)))),  # returns en: reciprocal
        "/fr": (200, HTML, page(alts(("fr", fr)))),  # does not name en: not reciprocal
        "/es": (200, HTML, page(alts(("es-UK", es), ("en", "/en")))),  # invalid code and href
    }
    run = await audit(base + "/", page_checks=True)
    pairs = [(f["url"], f["message"]) for f in run.findings("hreflang-not-reciprocal")]
    assert len(pairs) == 1
    assert pairs[0][0] == en and repr(fr) in pairs[0][1]
    invalid = [f["message"] for f in run.findings("hreflang-invalid") if f["url"] == es]
    assert len(invalid) == 2
    assert [f["url"] for f in run.findings("hreflang-missing-self")] == []  # /es: bad href said


async def test_hreflang_missing_self_in_the_head(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/a")),
        "/a": (200, HTML, page(f'<link rel="alternate" hreflang="de" href="{base}/b">')),
    }
    run = await audit(base + "/", page_checks=True)
    assert [f["url"] for f in run.findings("hreflang-missing-self")] == [f"{base}/a"]


async def test_head_longer_than_the_cap_is_read_up_to_it_and_says_so(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    filler = '<meta name="x" content="' + "y" * 100 + '">'
    long_head = (
        '<html><head><link rel="canonical" href="/other">'
        + filler * 200
        + '<meta name="robots" content="noindex"></head><body>x</body></html>'
    )
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/long")),
        "/long": (200, HTML, long_head),
    }
    run = await audit(base + "/", page_checks=True, page_cap=4096)
    rec = run.url(f"{base}/long")["page"]
    assert rec["truncated"] is True and rec["bytes_read"] <= 4096
    assert run.codes().count("url-noindex") == 0  # past the cap: not seen, not guessed
    [mismatch] = run.findings("url-canonical-mismatch")
    assert "read the first 4096 bytes only" in mismatch["message"]


async def test_broken_html_never_a_traceback(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    pages: dict[str, bytes] = {
        "/unclosed": b"<html><head><title>Unclosed <meta name=robots content=noindex",
        "/nohead": b"Just text, no tags at all <link rel=canonical href=/x>",
        "/bom": b"\xef\xbb\xbf<!doctype html><title>BOM page</title><h1>Hi",
        "/garbage": b"\x00\xff<<<</ ><!-- never closed <![CDATA[ \x80\x81",
        "/empty": b"",
        "/latin": b'<meta http-equiv="content-type" content="text/html; charset=iso-8859-1">'
        b"<title>Caf\xe9</title>",
    }
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(*(base + p for p in pages))),
        **{p: (200, {"Content-Type": "text/html"}, body) for p, body in pages.items()},
    }
    run = await audit(base + "/", page_checks=True)
    for p in pages:
        rec = run.url(base + p)
        assert rec["status"] == 200 and rec["error"] is None, p
        assert "parse_error" not in rec["page"], p
    assert run.url(f"{base}/bom")["page"]["title"] == "BOM page"
    assert run.url(f"{base}/latin")["page"]["title"] == "Café"
    assert "url-canonical-mismatch" not in run.codes()  # /nohead: the link is in the body


async def test_non_html_and_errors_are_not_page_checked(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/doc.pdf", f"{base}/missing")),
        "/doc.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4" + b"\0" * 100_000),
    }
    run = await audit(base + "/", page_checks=True)
    assert "page" not in run.url(f"{base}/doc.pdf")
    assert run.url(f"{base}/missing")["status"] == 404
    assert "url-not-found" in run.codes()
    assert [h.method for h in site.hits if h.path == "/doc.pdf"] == ["GET"]


async def test_an_endless_body_is_read_no_further_than_the_cap(serve: Any) -> None:
    limit = 50 * 1024 * 1024
    sent: dict[str, Any] = {"bytes": 0, "stopped": ""}

    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        await resp.prepare(request)
        head = b"<html><head><title>endless</title>" + b"<meta name=a content=b>" * 10
        await resp.write(head)
        sent["bytes"] += len(head)
        chunk = b"<!-- " + b"x" * 65000 + b" -->"
        try:
            while sent["bytes"] < limit:  # bounded: stops at 50 MB or when the client leaves
                await resp.write(chunk)
                sent["bytes"] += len(chunk)
            sent["stopped"] = "limit"
        except (ConnectionError, RuntimeError) as exc:
            sent["stopped"] = type(exc).__name__
        return resp

    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/endless")),
        "/endless": endless,
    }
    cap = 256 * 1024
    run = await audit(base + "/", page_checks=True, page_cap=cap)
    rec = run.url(f"{base}/endless")
    assert rec["status"] == 200
    assert rec["page"]["bytes_read"] <= cap and rec["page"]["truncated"] is True
    assert rec["page"]["title"] == "endless"
    # the client closed the connection: the server got no further than socket buffers
    assert sent["stopped"] != "limit"
    assert sent["bytes"] < limit // 4


async def test_compressed_and_redirected_pages_are_read_decompressed(serve: Any) -> None:
    async def gzipped(request: web.Request) -> web.StreamResponse:
        resp = web.Response(
            text=page("<title>Zipped</title><meta name=robots content=noindex>"),
            content_type="text/html",
        )
        resp.enable_compression(web.ContentCoding.gzip)
        return resp

    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/gz", f"{base}/old")),
        "/gz": gzipped,
        "/old": (301, {"Location": "/new"}, ""),
        "/new": (200, HTML, page(f'<link rel="canonical" href="{base}/new">')),
    }
    run = await audit(base + "/", page_checks=True)
    assert run.url(f"{base}/gz")["page"]["title"] == "Zipped"
    assert [f["url"] for f in run.findings("url-noindex")] == [f"{base}/gz"]
    # the canonical names the final URL: the redirect is the finding, not the canonical
    assert "url-redirect" in run.codes() and "url-canonical-mismatch" not in run.codes()
    assert run.url(f"{base}/old")["page"]["canonical"] == f"{base}/new"


async def test_a_retried_answer_is_read_afresh(serve: Any) -> None:
    calls = {"n": 0}

    async def flaky(request: web.Request) -> web.StreamResponse:
        calls["n"] += 1
        if calls["n"] == 1:
            return web.Response(status=503, text="<title>Page not found</title>")
        return web.Response(text=page("<title>Fine</title>"), content_type="text/html")

    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/flaky")),
        "/flaky": flaky,
    }
    run = await audit(base + "/", page_checks=True)
    rec = run.url(f"{base}/flaky")
    assert rec["status"] == 200 and rec["page"]["title"] == "Fine"
    assert "url-soft-404" not in run.codes() and calls["n"] == 2


async def test_cli_page_checks_and_page_cap(serve: Any, tmp_path: Any) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": robots(base),
        "/sitemap.xml": (200, XML, urlset(f"{base}/a")),
        "/a": (200, HTML, page("<title>Not Found</title>" + "<meta name=x content=y>" * 200)),
    }
    out = tmp_path / "report.jsonl"
    argv = ["crawl", f"{base}/sitemap.xml", "--page-checks", "--page-cap", "1024"]
    argv += ["--format", "jsonl", "--output", str(out), "--no-progress", "--fail-on", "never"]
    rc = await asyncio.to_thread(main, argv)
    assert rc == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    [url] = [r for r in records if r["type"] == "url"]
    assert url["page"]["bytes_read"] <= 1024 and url["page"]["truncated"] is True
    assert "url-soft-404" in [r["code"] for r in records if r["type"] == "finding"]
