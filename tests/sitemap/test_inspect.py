"""`inspect`'s statistics (audit/sitemap/inspect.py): entries streamed through the real
StreamParser into an Inspector: counts, the lastmod range and months, extensions, an
index's children and the ones that failed, the text it writes and its JSON."""

from __future__ import annotations

import io

from audit.core.records import Entry, SitemapRecord
from audit.sitemap.inspect import Inspector
from audit.sitemap.parser import StreamParser

INDEX = "https://e.example/sitemap_index.xml"
PAGES = "https://e.example/pages.xml"
GONE = "https://e.example/gone.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
IMG = 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'


def url(loc: str, lastmod: str | None = None, images: int = 0) -> str:
    mod = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    pics = "".join(f"<image:image><image:loc>{loc}/{i}.jpg</image:loc></image:image>"
                   for i in range(images))  # fmt: skip
    return f"<url><loc>{loc}</loc>{mod}{pics}</url>"


def feed(inspector: Inspector, source: str, xml: str, parent: str | None = None) -> None:
    data = xml.encode()
    parser = StreamParser(source)
    for item in [*parser.feed(data), *parser.close()]:
        if isinstance(item, Entry):
            inspector.on_entry(source, item)
    kind = "sitemapindex" if "<sitemapindex" in xml else "urlset"
    record = SitemapRecord(source, parent, kind, 200, parser.entries, len(data), False)
    inspector.on_sitemap(record, parser)


def inspected() -> Inspector:
    inspector = Inspector()
    feed(inspector, INDEX, f'<sitemapindex {NS}><sitemap><loc>{PAGES}</loc></sitemap>'
                           f"<sitemap><loc>{GONE}</loc></sitemap></sitemapindex>")  # fmt: skip
    pages = "".join([
        url("https://e.example/a", "2024-01-15", images=2),
        url("https://e.example/b", "2024-01-31T10:00:00Z"),
        url("https://e.example/c", "2023-11-02"),
        url("https://e.example/d"),
        url("https://e.example/e", "not a date"),
    ])  # fmt: skip
    feed(inspector, PAGES, f"<urlset {NS} {IMG}>{pages}</urlset>", parent=INDEX)
    inspector.on_record({"type": "sitemap", "url": GONE, "parent": INDEX, "kind": None,
                         "status": 404, "error": None})  # fmt: skip
    return inspector


def test_counts_and_lastmods_of_each_sitemap() -> None:
    stats = inspected().stats
    index, pages = stats[INDEX], stats[PAGES]
    assert index.children == [PAGES, GONE] and index.entries == 2
    assert pages.entries == 5 and pages.parent == INDEX
    assert pages.lastmod_missing == 1  # the invalid one is neither counted nor missing
    assert pages.lastmod_min is not None and pages.lastmod_min.startswith("2023-11-02")
    assert pages.lastmod_max is not None and pages.lastmod_max.startswith("2024-01-31T10:00")
    assert dict(pages.by_month) == {"2023-11": 1, "2024-01": 2}
    assert dict(pages.extensions) == {"image": 2}


def test_a_child_that_failed_says_how() -> None:
    inspector = inspected()
    assert [st.url for st in inspector.failed] == [GONE]
    assert inspector.stats[GONE].failure == "HTTP 404"
    assert inspector.stats[GONE].to_json()["error"] == "HTTP 404"
    assert inspector.stats[PAGES].failure is None


def test_a_missing_child_on_disk_comes_as_a_finding() -> None:
    inspector = Inspector()
    inspector.on_record({"type": "finding", "code": "sitemap-not-found", "url": GONE,
                         "sitemap": INDEX, "message": "no such file"})  # fmt: skip
    (missing,) = inspector.failed
    assert (missing.url, missing.parent, missing.failure) == (GONE, INDEX, "no such file")


def test_the_text_it_writes() -> None:
    out = io.StringIO()
    inspected().write_text(out)
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == INDEX and f"  {PAGES}" in lines
    assert f"    {GONE}  (HTTP 404)" in lines  # among the index's children
    assert "  failed: HTTP 404" in text.split(f"  {GONE}\n")[1]
    assert "kind urlset, 5 entries" in text and "extensions: image 2" in text
    assert "; 1 without" in text
    assert any(line.strip().startswith("2024-01") and line.endswith("#" * 30) for line in lines)


def test_json_of_a_sitemap() -> None:
    data = inspected().stats[PAGES].to_json()
    assert data["lastmod_by_month"] == {"2023-11": 1, "2024-01": 2}
    assert data["entries"] == 5 and data["error"] is None and data["children"] == []
