"""audit.rules.urlkeys: loc-duplicate against the run's table, an index's and a news
sitemap's own listings."""

from __future__ import annotations

from audit.core.records import Entry, News
from audit.rules.findings import NO_FINDINGS
from audit.rules.fingerprints import SeenUrls
from audit.rules.urlkeys import UrlKeys

B = "https://www.example.com"
NEWS = [News(3, {"name": "n"})]


def test_a_url_listed_in_another_sitemap_names_it() -> None:
    seen = SeenUrls()
    a = UrlKeys(f"{B}/a.xml", seen=seen, seen_sitemaps=None)
    b = UrlKeys(f"{B}/b.xml", seen=seen, seen_sitemaps=None)
    entry = Entry("url", f"{B}/p", 4)
    assert a.check(entry, True, f"{B}/p", f"{B}/p", NO_FINDINGS) is NO_FINDINGS
    ((dup,),) = [b.check(entry, True, f"{B}/p/", f"{B}/p", NO_FINDINGS)]
    assert dup.code == "loc-duplicate" and dup.sitemap == f"{B}/b.xml" and dup.line == 4
    assert f"already in '{B}/a.xml'" in dup.message
    assert f"(normalised: '{B}/p')" in dup.message


def test_sitemap_entries_use_the_index_table_not_the_run_table() -> None:
    seen = SeenUrls()
    keys = UrlKeys(f"{B}/index.xml", seen=seen, seen_sitemaps=None)
    child = Entry("sitemap", f"{B}/s.xml", 2)
    assert keys.check(child, False, f"{B}/s.xml", f"{B}/s.xml", NO_FINDINGS) == []
    assert not seen.add(f"{B}/s.xml")  # new to the run's table
    out = keys.check(child, False, f"{B}/s.xml", f"{B}/s.xml", NO_FINDINGS)
    assert [f.code for f in out] == ["loc-duplicate"]
    assert "earlier in this sitemap" in out[0].message


def test_a_news_listing_is_a_duplicate_only_within_its_news_sitemap() -> None:
    seen = SeenUrls()
    news = UrlKeys(f"{B}/news.xml", seen=seen, seen_sitemaps=None)
    regular = UrlKeys(f"{B}/pages.xml", seen=seen, seen_sitemaps=None)
    story = Entry("url", f"{B}/story", 6, news=NEWS)
    page = Entry("url", f"{B}/story", 5)
    assert news.check(story, True, f"{B}/story", f"{B}/story", NO_FINDINGS) == []
    # the news listing does not make the regular one a duplicate, nor the reverse
    assert regular.check(page, True, f"{B}/story", f"{B}/story", NO_FINDINGS) == []
    again = UrlKeys(f"{B}/more.xml", seen=seen, seen_sitemaps=None)
    (dup,) = again.check(page, True, f"{B}/story", f"{B}/story", NO_FINDINGS)
    assert f"already in '{B}/pages.xml'" in dup.message
    out = news.check(story, True, f"{B}/story", f"{B}/story", NO_FINDINGS)
    assert [(f.code, f.sitemap) for f in out] == [("loc-duplicate", f"{B}/news.xml")]
    assert "earlier in this sitemap" in out[0].message
