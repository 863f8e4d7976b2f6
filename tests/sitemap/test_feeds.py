"""audit.sitemap.feeds: the URL and date of each RSS item and Atom entry in its place."""

from __future__ import annotations

from tests.sitemap.test_xmlpull import read_xml

H = "https://www.example.com"


def test_rss_reads_items_of_the_channel_only_first_link_and_date() -> None:
    body = (
        f"<rss><channel>\n<item><link>{H}/a</link><link>{H}/z</link>"
        "<pubDate> Wed, 01 May 2024 10:00:00 +0000 </pubDate></item>\n"
        f"<item><title>no link</title></item>\n</channel>\n<item><link>{H}/out</link></item>\n</rss>"
    )
    entries, findings, doc = read_xml(body.encode(), step=5)
    assert findings == [] and doc.kind == "rss"
    assert [(e.loc, e.line, e.lastmod) for e in entries] == [
        (f"{H}/a", 2, "Wed, 01 May 2024 10:00:00 +0000"),
        (None, 3, None),
    ]


def test_atom_takes_the_alternate_link_and_its_version_s_date() -> None:
    body = (
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f'<entry><link rel="self" href="{H}/self"/>\n<link href="{H}/a"/>'
        "<modified>2020</modified><updated>2024-05-01</updated></entry>\n</feed>"
    )
    entries, findings, doc = read_xml(body.encode())
    assert findings == [] and doc.kind == "atom"
    assert [(e.loc, e.line, e.lastmod) for e in entries] == [(f"{H}/a", 3, "2024-05-01")]
