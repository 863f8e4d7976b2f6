"""`crawl --llms` over real loopback HTTP (contracts/agents.md, "llms.txt"; issue 30): the files
read once per audited origin, each link code with a clean control, records for links no
sitemap lists, and summary.llms with its coverage."""

from __future__ import annotations

from collections import Counter
from typing import Any

from audit.core.config import CrawlConfig
from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

MD = {"Content-Type": "text/markdown; charset=utf-8"}
ROBOTS = (
    "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /gpt\nDisallow: /private\n"
)
PAGE = "<!doctype html><html><head><title>t</title></head><body><p>text</p></body></html>"
LLMS = """\
# Site
> What the site is.

## Docs
- [A](/a#intro): listed and clean
- [Gone](/listed-gone): listed, answers 404
- [GPT](/gpt/page): listed, kept from GPTBot
- [Old](/old): redirects to /a
- [Missing](/missing)
- [No index](/noindex-only)
- [Twin](/a.md): a markdown twin answering HTML
- [Good twin](/b.md)
- [Unlisted](/unlisted)
- [Private](/private/x)
- [Elsewhere](https://other.invalid/x)
- [A again](/a)

```
- [In code](/in-code)
```
Mail `[me](/in-span)` at <mailto:x@example.com>.
"""
FULL = "# Full\n\n[a link in the full text](/in-full)\n"


def llms_site(**routes: Any) -> Site:
    site = Site()
    site.routes = {
        "/robots.txt": (200, TEXT, ROBOTS),
        "/llms.txt": (200, MD, LLMS),
        "/llms-full.txt": (200, TEXT, FULL),
        "/a": (200, HTML, PAGE),
        "/b": (200, HTML, PAGE),
        "/c": (200, {**HTML, "X-Robots-Tag": "noindex"}, PAGE),
        "/listed-gone": (404, HTML, "gone"),
        "/gpt/page": (200, HTML, PAGE),
        "/old": (301, {"Location": "/a"}, ""),
        "/noindex-only": (200, {**HTML, "X-Robots-Tag": "noindex"}, PAGE),
        "/a.md": (200, HTML, PAGE),
        "/b.md": (200, MD, "# B\n"),
        "/unlisted": (200, HTML, PAGE),
        "/private/x": (200, HTML, PAGE),
        **routes,
    }
    return site


LISTED = ["/a", "/b", "/c", "/listed-gone", "/gpt/page"]


async def crawl(serve: Any, site: Site, **cfg: Any) -> tuple[str, Any]:
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[base + p for p in LISTED]))
    return base, await audit(f"{base}/sitemap.xml", llms=True, retries=0, **cfg)


def _by_code(run: Any, base: str) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for f in run.of("finding"):
        if f["code"].startswith("llms-"):
            out.setdefault(f["code"], []).append((f["url"].removeprefix(base), f["line"]))
    return {code: sorted(v) for code, v in out.items()}


async def test_each_link_code_once_with_its_line(serve: Any) -> None:
    site = llms_site()
    base, run = await crawl(serve, site, agents=("GPTBot",))
    assert _by_code(run, base) == {
        "llms-link-broken": [("/listed-gone", 6), ("/missing", 9)],
        "llms-link-redirect": [("/old", 8)],
        "llms-link-noindex": [("/noindex-only", 10)],
        "llms-md-html": [("/a.md", 11)],
        "llms-link-not-in-sitemap": [("/unlisted", 13)],
        "llms-link-blocked": [("/gpt/page", 7), ("/private/x", 14)],
    }
    blocked = {f["url"]: f for f in run.findings("llms-link-blocked")}
    assert blocked[base + "/private/x"]["agents"] == ["sitemap-audit", "GPTBot"]
    assert blocked[base + "/gpt/page"]["agents"] == ["GPTBot"]
    for f in run.of("finding"):
        if f["code"].startswith("llms-link") or f["code"] == "llms-md-html":
            assert f["llms"] == base + "/llms.txt" and f["severity"] in ("warning", "info")
    # every code of the main agent's own listed checks stays on listed URLs only
    assert {f["url"] for f in run.findings("url-not-found")} == {base + "/listed-gone"}
    assert not run.findings("llms-invalid") and not run.findings("llms-html-shell")


async def test_records_of_linked_urls_and_what_is_never_requested(serve: Any) -> None:
    site = llms_site()
    base, run = await crawl(serve, site, agents=("GPTBot",))
    only = ["/old", "/missing", "/noindex-only", "/a.md", "/b.md", "/unlisted", "/private/x"]
    for path in only:
        record = run.url(base + path)
        assert record["sitemap"] is None and record["source"] == "llms" and record["llms"]
        assert "status" in record and "robots" in record and "indexable" in record
        assert set(record["agents"]) == {"GPTBot"}
    assert run.url(base + "/private/x")["robots"] == "blocked"
    assert run.url(base + "/private/x")["status"] is None
    assert run.url(base + "/unlisted")["indexable"] is True
    # each agent's verdict from the link's own answer (its X-Robots-Tag), or robots.txt
    assert run.url(base + "/noindex-only")["agents"] == {"GPTBot": "noindex"}
    assert run.url(base + "/noindex-only")["indexability"] == "noindex"
    assert run.url(base + "/unlisted")["agents"] == {"GPTBot": "allowed"}
    for path in ["/a", "/listed-gone", "/gpt/page"]:
        assert run.url(base + path)["llms"] is True and run.url(base + path)["sitemap"]
    for path in ["/b", "/c"]:
        assert "llms" not in run.url(base + path)
    hits = Counter(h.path for h in site.hits)
    assert hits["/llms.txt"] == hits["/llms-full.txt"] == 1
    assert hits["/a"] == 2  # its listed check, and /old's redirect: never again as a link
    for path in ["/private/x", "/in-code", "/in-span", "/in-full"]:
        assert hits[path] == 0, path
    # the files with GET and the main agent's User-Agent, as every other request
    llms_hits = [h for h in site.hits if h.path.startswith("/llms")]
    assert {h.method for h in llms_hits} == {"GET"}
    assert {h.headers["User-Agent"] for h in site.hits} == {CrawlConfig().user_agent}


async def test_summary_files_links_and_coverage(serve: Any) -> None:
    base, run = await crawl(serve, llms_site())
    llms = run.summary["llms"]
    assert llms["files"] == [
        {"url": base + "/llms.txt", "status": 200, "chars": len(LLMS), "links": 12, "valid": True},
        {"url": base + "/llms-full.txt", "status": 200},
    ]
    assert (llms["links"], llms["external"]) == (10, 1)
    # indexable listed: /a, /b, /gpt/page (the main agent may read it); linked: /a, /gpt/page
    assert (llms["covered"], llms["indexable"], llms["coverage"]) == (2, 3, 0.667)


async def test_page_checks_read_a_meta_noindex_of_a_link(serve: Any) -> None:
    meta = PAGE.replace("<title>", '<meta name="robots" content="noindex"><title>')
    scoped = PAGE.replace("<title>", '<meta name="gptbot" content="noindex"><title>')
    site = llms_site(**{"/unlisted": (200, HTML, meta), "/noindex-only": (200, HTML, scoped)})
    base, run = await crawl(serve, site, page_checks=True)
    codes = _by_code(run, base)
    assert codes["llms-link-noindex"] == [("/unlisted", 13)]  # the robots meta
    # a noindex scoped to another agent does not count: an indexable page no sitemap lists
    assert codes["llms-link-not-in-sitemap"] == [("/noindex-only", 10)]


async def test_page_checks_read_the_canonical_of_a_link(serve: Any) -> None:
    itself = PAGE.replace("<title>", '<link rel="canonical" href="unlisted"><title>')
    other = PAGE.replace("<title>", '<link rel="canonical" href="/a"><title>')
    site = llms_site(**{"/unlisted": (200, HTML, itself), "/noindex-only": (200, HTML, other)})
    base, run = await crawl(serve, site, page_checks=True)
    assert _by_code(run, base)["llms-link-not-in-sitemap"] == [("/unlisted", 13)]
    assert run.url(base + "/noindex-only")["indexability"] == "canonical"


async def test_an_html_shell_gets_that_finding_and_nothing_else(serve: Any) -> None:
    shell = "<!DOCTYPE html><html><body><div id=root></div><script src=/app.js></script>"
    site = llms_site(**{"/llms.txt": (200, {"Content-Type": "text/plain"}, "\n  " + shell + LLMS)})
    site.routes["/llms-full.txt"] = (200, HTML, shell)
    base, run = await crawl(serve, site)
    assert [
        (f["code"], f["url"], f["severity"])
        for f in run.of("finding")
        if f["code"].startswith("llms")
    ] == [
        ("llms-html-shell", base + "/llms.txt", "error"),
        ("llms-html-shell", base + "/llms-full.txt", "error"),
    ]
    assert not [r for r in run.of("url") if r.get("source") == "llms"]
    assert run.summary["llms"]["files"] == [
        {"url": base + "/llms.txt", "status": 200},
        {"url": base + "/llms-full.txt", "status": 200},
    ]
    assert run.summary["llms"]["coverage"] is None  # no origin counted


async def test_missing_files_are_no_defect(serve: Any) -> None:
    site = llms_site()
    del site.routes["/llms.txt"], site.routes["/llms-full.txt"]
    base, run = await crawl(serve, site)
    assert not [f for f in run.of("finding") if f["code"].startswith("llms")]
    assert run.summary["llms"] == {
        "files": [
            {"url": base + "/llms.txt", "status": 404},
            {"url": base + "/llms-full.txt", "status": 404},
        ],
        "links": 0,
        "external": 0,
        "covered": 0,
        "indexable": 0,
        "coverage": None,
    }


async def test_too_large_and_invalid_yet_its_links_checked(serve: Any) -> None:
    text = "# Big\n## S\n- [Missing](/missing)\n- not a link\n" + ("x" * 79 + "\n") * 700
    site = llms_site(**{"/llms.txt": (200, TEXT, text)})
    base, run = await crawl(serve, site)
    (invalid,) = run.findings("llms-invalid")
    assert (invalid["url"], invalid["line"]) == (base + "/llms.txt", 4)
    (large,) = run.findings("llms-too-large")
    assert large["chars"] == len(text) > 50_000
    assert _by_code(run, base)["llms-link-broken"] == [("/missing", 3)]
    assert run.summary["llms"]["files"][0]["valid"] is False


async def test_without_the_option_nothing_is_requested(serve: Any) -> None:
    site = llms_site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[base + p for p in LISTED]))
    run = await audit(f"{base}/sitemap.xml", retries=0)
    assert "llms" not in run.summary
    assert not {"/llms.txt", "/llms-full.txt"} & {h.path for h in site.hits}
