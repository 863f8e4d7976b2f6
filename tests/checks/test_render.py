"""The facts --render compares, read by the same rules from both documents
(checks/render.py): canonical and hreflang resolved and normalised, followable internal
links only, noindex for the agent only, visible text without hidden elements."""

from __future__ import annotations

from audit.checks.pagefacts import facts_of
from audit.checks.render import (
    RAW_WANTS,
    RenderFacts,
    compare,
    page_facts,
    rendered_facts,
    visible_chars,
)

URL = "https://shop.example/p/1"


def facts(html: str, *, agent: str = "sitemap-audit", nofollow: bool = False) -> RenderFacts:
    return page_facts(
        facts_of(html.encode(), wants=RAW_WANTS), URL, agent=agent, header_nofollow=nofollow
    )


def codes(raw_html: str, rendered_html: str, *, shell: bool = False) -> set[str]:
    raw = page_facts(
        facts_of(raw_html.encode(), wants=RAW_WANTS),
        URL,
        agent="sitemap-audit",
        header_nofollow=False,
    )
    rendered = rendered_facts(
        rendered_html, URL, agent="sitemap-audit", header_nofollow=False, cap=1 << 20
    )
    found = compare(
        raw, rendered, shell=shell, agent="sitemap-audit", url=URL, sitemap=None, line=None
    )
    return {f.code for f in found}


def test_a_canonical_naming_the_page_itself_is_no_change() -> None:
    plain = "<title>t</title><p>x</p>"
    self_ref = '<title>t</title><link rel="canonical" href="/p/1#top"><p>x</p>'
    assert codes(plain, self_ref) == set()
    assert codes(self_ref, plain) == set()
    other = '<title>t</title><link rel="canonical" href="HTTPS://SHOP.example:443/p/2"><p>x</p>'
    assert codes(plain, other) == {"render-canonical-changed"}


def test_links_followable_internal_only() -> None:
    html = (
        '<base href="/p/"><a href="2">two</a><a href="https://other.example/x">other</a>'
        '<a href="mailto:a@b.c">mail</a><a href="#frag">self</a><a href="1">self too</a>'
        '<a rel="nofollow" href="3">nofollow</a><a href="javascript:void(0)">js</a>'
    )
    got = facts(html)
    # "#frag" resolves against <base href>: /p/, not the page itself (as in a browser)
    assert list(got.links) == ["https://shop.example/p/2", "https://shop.example/p/"]
    assert list(facts('<a href="#frag">self</a><a href="/p/1?x=1">q</a>').links) == [
        "https://shop.example/p/1?x=1"
    ]
    assert facts(html, nofollow=True).links == {}
    meta = '<meta name="robots" content="nofollow">' + html
    assert facts(meta).links == {}


def test_removed_links_are_no_finding_added_ones_are() -> None:
    raw = '<title>t</title><a href="/a">a</a><a href="/b">b</a>'
    assert codes(raw, '<title>t</title><a href="/a">a</a>') == set()
    assert codes(raw, raw + '<a href="/c">c</a>') == {"render-links-only"}


def test_noindex_for_the_agent_only_and_hreflang_as_sets() -> None:
    other_agent = '<meta name="googlebot" content="noindex"><title>t</title>'
    assert codes("<title>t</title>", other_agent) == set()
    own = '<meta name="Sitemap-Audit" content="NONE"><title>t</title>'
    assert codes("<title>t</title>", own) == {"render-noindex-added"}
    a = '<link rel="alternate" hreflang="EN " href="/en"><link rel="alternate" hreflang="de" href="/de">'
    b = '<link rel="alternate" hreflang="de" href="https://shop.example/de#x"><link rel="alternate" hreflang="en" href="/en">'
    assert codes(a + "<title>t</title>", b + "<title>t</title>") == set()
    assert codes(a + "<title>t</title>", "<title>t</title>") == {"render-hreflang-changed"}


def test_titles_compare_collapsed_and_missing_is_no_title() -> None:
    assert codes("<title> Shop \n home </title>", "<title>Shop home</title>") == set()
    assert codes("<title>  </title><p>x</p>", "<title>Set by script</title>") == {
        "render-title-changed"
    }


def test_visible_text_leaves_hidden_elements_out() -> None:
    html = (
        "<html><head><title>Title</title></head><body> a  <script>var x</script>b"
        "<style>p{}</style><template>t</template><noscript>n</noscript><div>c\n d</div></body></html>"
    )
    assert visible_chars(html) == len("a bc d")
    assert visible_chars("<p>" + "w" * 250 + "</p>") == 250


def test_content_only_needs_a_shell_and_200_characters() -> None:
    shell_raw = '<title>t</title><div id="root"></div><script src="/app.js"></script>'
    full = '<title>t</title><div id="root">' + "word " * 60 + "</div>"
    assert codes(shell_raw, full, shell=True) == {"render-content-only"}
    assert codes(shell_raw, full, shell=False) == set()
    assert codes(shell_raw, '<title>t</title><div id="root">short</div>', shell=True) == set()
