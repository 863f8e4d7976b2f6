"""News sitemaps are not duplicates (issue 16.8, RULES.md loc-duplicate), over loopback:
an article in the news sitemap and in a regular one is no loc-duplicate, whichever comes
first; the same URL in two regular sitemaps, or twice in one news sitemap, still is."""

from __future__ import annotations

from tests.crawlkit import XML, Serve, Site, audit, index, urlset

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS = "http://www.google.com/schemas/sitemap-news/0.9"


def news_sitemap(*locs: str) -> str:
    body = "".join(
        f"<url><loc>{loc}</loc><news:news><news:publication><news:name>Daily</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-05-01T10:00:00+00:00</news:publication_date>"
        f"<news:title>Story</news:title></news:news></url>\n"
        for loc in locs
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SM}" xmlns:news="{NEWS}">\n{body}</urlset>\n'
    )


async def _duplicates(
    serve: Serve, order: tuple[str, ...], news_locs: tuple[str, ...]
) -> list[tuple[str, str]]:
    site = Site()
    base = await serve(site)
    a, b = f"{base}/news/a", f"{base}/news/b"
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/index.xml": (200, XML, index(*(f"{base}/{name}.xml" for name in order))),
        "/news.xml": (200, XML, news_sitemap(*(f"{base}/news/{n}" for n in news_locs))),
        "/pages.xml": (200, XML, urlset(a, b, f"{base}/about")),
        "/more.xml": (200, XML, urlset(f"{base}/about")),
    }
    run = await audit(f"{base}/index.xml", mode="validate")
    return [(f["url"].removeprefix(base), f["sitemap"].removeprefix(base)) for f in
            run.findings("loc-duplicate")]  # fmt: skip


async def test_news_listed_first_then_regular_is_no_duplicate(serve: Serve) -> None:
    found = await _duplicates(serve, ("news", "pages", "more"), ("a", "b"))
    # only the real one: /about in two regular sitemaps
    assert found == [("/about", "/more.xml")]


async def test_regular_listed_first_then_news_is_no_duplicate(serve: Serve) -> None:
    found = await _duplicates(serve, ("pages", "news", "more"), ("a", "b"))
    assert found == [("/about", "/more.xml")]


async def test_twice_in_one_news_sitemap_is_a_duplicate(serve: Serve) -> None:
    found = await _duplicates(serve, ("pages", "news"), ("a", "a"))
    assert found == [("/news/a", "/news.xml")]
