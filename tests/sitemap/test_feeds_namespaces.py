"""Feeds and namespaces (issue 16.5), over loopback HTTP through the validate pipeline.

Atom 0.3 (http://purl.org/atom/ns#) is a feed sitemaps.org accepts: its entries are read
(<link rel="alternate" href>, <modified> as the lastmod). Entries in another namespace than
the root's are one sitemap-namespace finding with the count, never silently dropped; under a
root in a wrong namespace, entries in no namespace are read (the root is the finding).
"""

from __future__ import annotations

from tests.crawlkit import XML, Serve, Site, audit

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"


def atom03(base: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed version="0.3" xmlns="http://purl.org/atom/ns#">\n'
        "<title>Blog</title>\n<modified>2024-05-02T10:00:00Z</modified>\n"
        f'<entry><title>A</title><link rel="alternate" type="text/html" href="{base}/a"/>'
        "<id>tag:e.test,2024:a</id><issued>2024-05-01T09:00:00Z</issued>"
        "<modified>2024-05-01T10:00:00Z</modified></entry>\n"
        f'<entry><title>B</title><link rel="alternate" type="text/html" href="{base}/b"/>'
        "<id>tag:e.test,2024:b</id><modified>2024-05-02T10:00:00Z</modified></entry>\n"
        "</feed>\n"
    )


def wrong_namespace(base: str, root_ns: str) -> str:
    urls = "".join(f'<url xmlns=""><loc>{base}/p{i}</loc></url>\n' for i in range(3))
    return f'<?xml version="1.0"?>\n<urlset xmlns="{root_ns}">\n{urls}</urlset>\n'


async def test_atom_03_entries_are_read(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, {"Content-Type": "text/plain"}, f"Sitemap: {base}/feed.xml\n"),
        "/feed.xml": (200, XML, atom03(base)),
    }
    run = await audit(f"{base}/feed.xml", mode="validate")
    assert run.codes() == []
    (sitemap,) = run.of("sitemap")
    assert (sitemap["kind"], sitemap["entries"]) == ("atom", 2)


async def test_entries_in_no_namespace_inside_a_wrong_namespace_urlset_are_read(
    serve: Serve,
) -> None:
    site = Site()
    base = await serve(site)
    body = wrong_namespace(base, "http://www.google.com/schemas/sitemap/0.84")
    site.routes = {"/robots.txt": (404, {}, ""), "/sitemap.xml": (200, XML, body)}
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    found = run.findings("sitemap-namespace")
    assert [f["line"] for f in found] == [2]  # the root, once (issue 33.7)
    (sitemap,) = run.of("sitemap")
    assert sitemap["entries"] == 3  # read, as entries in the root's own namespace are


async def test_entries_in_no_namespace_inside_a_right_urlset_are_reported(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, wrong_namespace(base, SM)),
    }
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    [found] = run.findings("sitemap-namespace")
    assert found["line"] == 3 and "3 <url> elements" in found["message"]
