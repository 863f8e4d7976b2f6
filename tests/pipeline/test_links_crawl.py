"""crawl --links over real loopback HTTP: orphans, unlisted pages, broken links and what counts
as followable and indexable (RULES.md, Site coverage)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.crawlkit import HTML, XML, Run, Site, audit, urlset

ROBOTS = "User-agent: *\nDisallow: /blocked/\n"
PAGE = "<html><head><title>t</title>{head}</head><body>{body}</body></html>"
ORPHANS = [
    "/orphan-nofollow",  # linked only with rel=nofollow
    "/orphan-meta",  # linked only from a page whose robots meta says nofollow
    "/orphan-header",  # linked only from a page whose X-Robots-Tag says nofollow
    "/orphan-blocked",  # linked only from a robots-blocked page
    "/orphan-head",  # linked only from inside <head>
    "/orphan-comment",  # linked only inside a comment
    "/orphan-script",  # linked only inside a script string
]


def page(body: str = "", head: str = "") -> tuple[int, dict[str, str], str]:
    return 200, HTML, PAGE.format(head=head, body=body)


def a(href: str, rel: str = "") -> str:
    return f'<a href="{href}"{f" rel={rel!r}" if rel else ""}>x</a>'


def coverage_site(host: str = "HOST") -> Site:
    """`HOST` in hrefs is replaced by the served origin's host, upper-cased."""
    root_links = [
        a("/a#top"),
        a("/orphan-nofollow", rel="nofollow"),
        a("/meta-nofollow"),
        a("/header-nofollow"),
        a("/blocked/page"),
        "<!-- " + a("/orphan-comment") + " -->",
        '<script>var s = "' + a("/orphan-script").replace('"', "'") + '";</script>',
        a("/redir"),
        a("/a?x=1"),
        a("/noindex"),
        a("/missing"),
        a("/file.pdf"),
        a("/unlisted"),
        a("http://LOCALHOST:PORT/variant"),
    ]
    site = Site()
    site.routes.update(
        {
            "/robots.txt": (200, {"Content-Type": "text/plain"}, ROBOTS),
            "/": page("".join(root_links), head=a("/orphan-head")),
            "/a": page(a("/")),
            "/a?x=1": page(a("/"), head='<link rel="canonical" href="/a">'),
            "/meta-nofollow": page(
                a("/orphan-meta"), head='<meta name="robots" content="nofollow">'
            ),
            "/header-nofollow": (
                200,
                {**HTML, "X-Robots-Tag": "nofollow"},
                PAGE.format(head="", body=a("/orphan-header")),
            ),
            "/blocked/page": page(a("/orphan-blocked")),
            "/redir": (301, {"Location": "/via-redirect"}, ""),
            "/via-redirect": page(a("/")),
            "/noindex": page(a("/"), head='<meta name="robots" content="noindex">'),
            "/file.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4"),
            "/unlisted": page(a("/")),
            "/variant": page(a("/")),
            **{path: page(a("/")) for path in ORPHANS},
        }
    )
    return site


LISTED = ["/", "/a", "/variant", "/meta-nofollow", "/header-nofollow", *ORPHANS]


async def crawl_site(serve: Any, site: Site | None = None, **cfg: Any) -> tuple[Site, str, Run]:
    site = site or coverage_site()
    base = (await serve(site)).replace("127.0.0.1", "localhost")
    port = base.rsplit(":", 1)[1]
    for path, route in list(site.routes.items()):
        if isinstance(route, tuple) and isinstance(route[2], str):
            site.routes[path] = (route[0], route[1], route[2].replace("PORT", port))
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in LISTED)))
    run = await audit(base + "/sitemap.xml", links=True, **cfg)
    return site, base, run


def paths(run: Run, code: str, base: str) -> list[str]:
    return sorted(f["url"].removeprefix(base) for f in run.findings(code))


@pytest.mark.slow
async def test_orphans_are_listed_pages_only_unfollowable_links_reach(serve: Any) -> None:
    _, base, run = await crawl_site(serve)
    assert paths(run, "url-orphan", base) == sorted(ORPHANS)
    assert run.summary["coverage"]["complete"] is True
    assert run.summary["coverage"]["orphans"] == len(ORPHANS)
    assert "coverage-incomplete" not in run.codes()


@pytest.mark.slow
async def test_unlisted_indexable_pages_only(serve: Any) -> None:
    _, base, run = await crawl_site(serve)
    # not: /a?x=1 (canonical to /a), /redir (redirects), /noindex, /blocked/page,
    # /missing (404), /file.pdf (not HTML), LOCALHOST:PORT/variant (listed as localhost)
    assert paths(run, "page-not-in-sitemap", base) == ["/unlisted", "/via-redirect"]
    assert run.url(base + "/via-redirect")["source"] == "links"
    assert run.url(base + "/via-redirect")["sitemap"] is None
    assert run.summary["coverage"]["unlisted"] == 2


@pytest.mark.slow
async def test_robots_blocked_pages_are_not_fetched(serve: Any) -> None:
    site, base, run = await crawl_site(serve)
    assert "/blocked/page" not in site.paths()
    assert run.url(base + "/blocked/page")["robots"] == "blocked"
    assert run.url(base + "/blocked/page")["indexability"] == "robots"


@pytest.mark.slow
async def test_broken_link_once_with_count_and_a_source(serve: Any) -> None:
    _, base, run = await crawl_site(serve)
    broken = run.findings("link-broken")
    assert [f["url"] for f in broken] == [base + "/missing"]
    assert "1 page of the site" in broken[0]["message"]
    assert f"e.g. the link on {base}/" in broken[0]["message"]


@pytest.mark.slow
async def test_listed_urls_are_fetched_once_with_get(serve: Any) -> None:
    site, base, run = await crawl_site(serve)
    for path in LISTED:
        assert site.paths().count(path) == 1, path
        assert site.paths("HEAD").count(path) == 0, path
    assert run.url(base + "/a")["source"] == "both"
    assert run.url(base + "/a")["inlinks"] == 1  # from /: a fragment or a query is not /a
    assert run.url(base + "/orphan-head")["source"] == "sitemap"
    assert run.url(base + "/orphan-head")["inlinks"] == 0
    assert run.url(base + "/variant")["inlinks"] == 1  # LOCALHOST:PORT is the same origin


@pytest.mark.slow
async def test_max_pages_cut_withholds_orphans(serve: Any) -> None:
    _, _, run = await crawl_site(serve, max_pages=2)
    assert "url-orphan" not in run.codes()
    cut = run.findings("coverage-incomplete")
    assert len(cut) == 1 and "max-pages" in cut[0]["message"]
    assert run.summary["coverage"]["complete"] is False
    assert run.summary["coverage"]["stopped_by"] == "max-pages"


@pytest.mark.slow
async def test_max_depth_cut_withholds_orphans(serve: Any) -> None:
    _, _, run = await crawl_site(serve, max_depth=0)
    assert "url-orphan" not in run.codes()
    cut = run.findings("coverage-incomplete")
    assert len(cut) == 1 and "stopped (max-depth)" in cut[0]["message"]
    assert run.summary["coverage"]["stopped_by"] == "max-depth"


@pytest.mark.slow
async def test_without_links_nothing_changes(serve: Any) -> None:
    site = coverage_site()
    base = (await serve(site)).replace("127.0.0.1", "localhost")
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in LISTED)))
    run = await audit(base + "/sitemap.xml")
    assert sorted(site.paths()) == sorted(["/robots.txt", "/sitemap.xml", *LISTED])
    assert all(h.method == "HEAD" for h in site.hits if h.path in LISTED)
    assert "coverage" not in run.summary
    assert all("source" not in r and "inlinks" not in r for r in run.of("url"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "needle"),
    [("txt", "Site coverage"), ("md", "## Site coverage"), ("html", 'id="coverage"')],
)
async def test_reports_have_a_coverage_section(
    serve: Any, tmp_path: Any, fmt: str, needle: str
) -> None:
    import asyncio

    from audit.cli.main import main

    site = coverage_site()
    base = (await serve(site)).replace("127.0.0.1", "localhost")
    site.routes["/sitemap.xml"] = (200, XML, urlset(*(base + p for p in LISTED)))
    out = tmp_path / f"report.{fmt}"
    argv = ["crawl", base + "/sitemap.xml", "--links", "--rate", "unlimited", "-o", str(out)]
    await asyncio.to_thread(main, argv)
    text = out.read_text()
    assert needle in text and "orphans (url-orphan)" in text
    plain = ["crawl", base + "/sitemap.xml", "--rate", "unlimited", "-o", str(out)]
    await asyncio.to_thread(main, plain)
    assert "Site coverage" not in out.read_text()
