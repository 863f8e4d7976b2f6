"""checks/links.py: which links of a page a crawler follows, and the page's own directives."""

from __future__ import annotations

from audit.checks.links import header_nofollow, page_links

URL = "http://example.com/dir/page"


def links(html: str, url: str = URL) -> list[str]:
    return list(page_links(html.encode(), url).links)


def test_body_links_resolved_against_the_final_url_without_fragments() -> None:
    html = '<html><body><a href="a#x">1</a><a href="/b">2</a><a href="//other.test/c">3</a></body>'
    assert links(html) == [
        "http://example.com/dir/a",
        "http://example.com/b",
        "http://other.test/c",
    ]


def test_base_href_wins_over_the_page_url() -> None:
    html = '<html><head><base href="http://example.com/base/"></head><body><a href="x">1</a>'
    assert links(html) == ["http://example.com/base/x"]


def test_head_comment_script_nofollow_and_other_schemes_are_not_followed() -> None:
    html = (
        '<html><head><title>t</title><a href="/head">h</a></head><body>'
        '<!-- <a href="/comment">c</a> -->'
        "<script>var s = '<a href=\"/script\">s</a>';</script>"
        '<a rel="external NoFollow" href="/nofollow">n</a>'
        '<a href="mailto:a@b.c">m</a><a href="javascript:void(0)">j</a><a>no href</a>'
        '<a href="/ok">ok</a></body></html>'
    )
    assert links(html) == ["http://example.com/ok"]


def test_robots_meta_nofollow_drops_every_link_and_noindex_is_seen() -> None:
    html = '<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/x">'
    page = page_links(html.encode(), URL)
    assert page.links == () and page.nofollow and page.noindex


def test_agent_meta_and_canonical() -> None:
    html = (
        '<html><head><meta name="googlebot" content="none">'
        '<link rel="canonical" href="/canon#top"></head><body><a href="/x">x</a>'
    )
    assert page_links(html.encode(), URL, agent="Googlebot").nofollow
    other = page_links(html.encode(), URL, agent="Bingbot")
    assert not other.nofollow and other.links == ("http://example.com/x",)
    assert other.canonical == "http://example.com/canon"


def test_a_base_or_canonical_urllib_cannot_parse_is_ignored() -> None:
    html = (
        '<html><head><base href="//[bad"><link rel="canonical" href="http://[::1"></head>'
        '<body><a href="/x">x</a><a href="http://[y">y</a></body>'
    )
    page = page_links(html.encode(), URL)
    assert page.links == ("http://example.com/x",) and page.canonical is None


def test_no_head_and_empty_bodies() -> None:
    assert links('<a href="/x">x</a>') == ["http://example.com/x"]
    assert page_links(b"", URL).links == ()
    assert page_links(b"   ", URL).links == ()


def test_x_robots_tag_nofollow() -> None:
    assert header_nofollow(["nofollow"])
    assert header_nofollow(["noarchive, none"])
    assert header_nofollow(["googlebot: nofollow"], "Googlebot")
    assert not header_nofollow(["googlebot: nofollow"], "bingbot")
    assert not header_nofollow(["noindex", "unavailable_after: 25 Jun 2010 15:00:00 PST"])
