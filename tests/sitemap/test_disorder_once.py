"""Children out of the XSD's order are one `element-unknown` per sitemap (issue 17.11),
with the count and the first line, over loopback HTTP through the validate pipeline."""

from __future__ import annotations

from tests.crawlkit import XML, Serve, Site, audit

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"


def _drupal_like(base: str, n: int) -> str:
    # a generator that writes <priority> first, in every entry
    body = "".join(
        f"<url>\n<priority>0.5</priority>\n<loc>{base}/p{i}</loc>\n</url>\n" for i in range(n)
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}">\n{body}</urlset>\n'


async def test_out_of_order_children_are_one_finding_per_sitemap(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/a.xml": (200, XML, _drupal_like(base, 42)),
        "/b.xml": (200, XML, _drupal_like(base, 1)),
    }
    for path, count, words in (("/a.xml", 42, "42 children"), ("/b.xml", 1, "a child")):
        run = await audit(base + path, mode="validate")
        [only] = run.findings("element-unknown")
        assert only["line"] == 5  # the first <loc>, after its <priority>
        assert only["message"].startswith(f"{words} out of order, the first at line 5: <loc>")
        assert run.of("sitemap")[0]["entries"] == count
