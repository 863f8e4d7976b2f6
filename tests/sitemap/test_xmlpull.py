"""audit.sitemap.xmlpull: the root picks the format reader; broken XML in plain words."""

from __future__ import annotations

import pytest

from audit.core.records import Entry, Finding
from audit.sitemap.doc import Doc
from audit.sitemap.inflate import Inflater
from audit.sitemap.xmlpull import XmlReader

H = "https://www.example.com"
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"


def read_xml(data: bytes, step: int = 7) -> tuple[list[Entry], list[Finding], Doc]:
    """`data` through an XmlReader in pieces of `step` bytes, then closed; stopping as
    StreamParser stops (the reader's end-of-document findings, then nothing more)."""

    def stop() -> None:
        reader.report()
        doc.stopped = True

    doc = Doc(f"{H}/sitemap.xml", stop)
    reader = XmlReader(doc, Inflater(1 << 20))
    for i in range(0, len(data), step):
        if doc.stopped:
            break
        reader.feed(data[i : i + step])
    if not doc.stopped:
        reader.close()
    items = doc.flush()
    return (
        [x for x in items if isinstance(x, Entry)],
        [x for x in items if isinstance(x, Finding)],
        doc,
    )


@pytest.mark.parametrize(
    ("body", "kind", "entry_kind"),
    [
        (f'<urlset xmlns="{SM}">\n<url><loc>{H}/a</loc></url>\n</urlset>', "urlset", "url"),
        (
            f'<sitemapindex xmlns="{SM}">\n<sitemap><loc>{H}/a</loc></sitemap>\n</sitemapindex>',
            "sitemapindex",
            "sitemap",
        ),
        (f"<rss><channel>\n<item><link>{H}/a</link></item></channel>\n</rss>", "rss", "url"),
        (
            f'<feed xmlns="http://purl.org/atom/ns#">\n<entry><link href="{H}/a"/></entry>\n</feed>',
            "atom",
            "url",
        ),
    ],
)
def test_the_root_picks_the_reader(body: str, kind: str, entry_kind: str) -> None:
    entries, findings, doc = read_xml(f'<?xml version="1.0"?>\n{body}\n'.encode())
    assert findings == [] and doc.kind == kind and doc.entries == 1
    [one] = entries
    assert (one.kind, one.loc, one.line) == (entry_kind, f"{H}/a", 3)


def test_a_root_of_no_sitemap_kind_stops_before_any_entry() -> None:
    entries, findings, doc = read_xml(f"<html2><url><loc>{H}/a</loc></url></html2>".encode())
    assert entries == [] and doc.kind is None and doc.stopped and doc.broken
    assert [(f.code, f.line) for f in findings] == [("sitemap-root-invalid", 1)]


def test_malformed_xml_keeps_the_entries_before_it_and_says_where() -> None:
    body = f'<urlset xmlns="{SM}">\n<url><loc>{H}/a</loc></url>\n<url><loc>{H}/b&c</loc></url>\n'
    entries, findings, doc = read_xml(body.encode())
    assert [e.loc for e in entries] == [f"{H}/a"] and doc.broken
    [bad] = findings
    assert (bad.code, bad.line) == ("sitemap-xml-malformed", 3)
    assert "a raw '&' (write &amp;)" in bad.message


def test_a_doctype_is_reported_and_its_entities_never_expanded() -> None:
    body = (
        '<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY e "www.example.com">]>\n'
        f'<urlset xmlns="{SM}"><url><loc>https://&e;/a</loc></url></urlset>'
    )
    entries, findings, _ = read_xml(body.encode())
    assert [f.code for f in findings] == ["sitemap-doctype"]
    assert "declaring entities e" in findings[0].message
    assert [e.loc for e in entries] == ["https://&e;/a"]  # shown whole, not expanded
