"""audit.sitemap.urlset: a urlset's entries read as the pull parser hands them over, and
what sits beside them at the top level judged before it is freed."""

from __future__ import annotations

from tests.sitemap.test_xmlpull import read_xml

H = "https://www.example.com"
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"


def test_unknown_elements_between_entries_are_reported_though_freed_on_the_way() -> None:
    urls = "".join(f"<url><loc>{H}/{i}</loc></url>\n" for i in range(200))
    body = f'<urlset xmlns="{SM}">\n{urls}<junk/>\n{urls}<x:ok xmlns:x="urn:x"/>\n{urls}</urlset>'
    entries, findings, doc = read_xml(body.encode(), step=64)
    assert len(entries) == doc.entries == 600
    assert [(f.code, f.line, f.message) for f in findings] == [
        ("element-unknown", 202, "<junk> is not defined inside <urlset>")
    ]  # an element of another namespace is an allowed extension


def test_entries_in_another_namespace_are_one_finding_at_the_end() -> None:
    other = "".join(f'<url xmlns="urn:x"><loc>{H}/x{i}</loc></url>\n' for i in range(3))
    body = f'<urlset xmlns="{SM}">\n<url><loc>{H}/a</loc></url>\n{other}<url><loc>{H}/b</loc></url>\n</urlset>'
    entries, findings, _ = read_xml(body.encode())
    assert [e.loc for e in entries] == [f"{H}/a", f"{H}/b"]
    [ns] = findings
    assert (ns.code, ns.line) == ("sitemap-namespace", 3)
    assert ns.message.startswith("3 <url> elements in namespace 'urn:x' inside <urlset>")


def test_a_root_in_no_namespace_reads_its_entries_and_is_the_finding() -> None:
    body = f"<sitemapindex>\n<sitemap><loc>{H}/s.xml</loc><changefreq>daily</changefreq></sitemap>\n</sitemapindex>"
    entries, findings, doc = read_xml(body.encode())
    assert doc.kind == "sitemapindex" and [(e.kind, e.loc) for e in entries] == [
        ("sitemap", f"{H}/s.xml")
    ]
    assert [(f.code, f.message) for f in findings] == [
        ("sitemap-namespace", f'<sitemapindex> has no namespace; expected xmlns="{SM}"'),
        ("element-unknown", "<changefreq> is not defined inside <sitemap>"),
    ]


def test_a_nested_entry_is_not_an_entry() -> None:
    body = f'<urlset xmlns="{SM}"><url><loc>{H}/a</loc><url><loc>{H}/b</loc></url></url></urlset>'
    entries, findings, _ = read_xml(body.encode())
    assert [e.loc for e in entries] == [f"{H}/a"]
    assert [f.message for f in findings] == ["<url> is not defined inside <url>"]
