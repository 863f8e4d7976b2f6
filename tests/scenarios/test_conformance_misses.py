"""The last protocol misses other projects' suites found (issue 33, point 7), each case stated
here and run over loopback HTTP through the real pipeline.

- RFC 9309 2.2.3 (Figure 6): in a pattern, `%2A` is a literal `*` and `%24` a literal `$`.
- A root in a wrong namespace whose entries declare `xmlns=""`: the namespace is reported and
  the entries are read, as when they carry the root's namespace.
- `agent-noindex` only for a noindex scoped to that agent (RULES.md); an unscoped one is the
  main agent's `url-noindex`.
- A link to a URL that redirects to a 404 is one `link-broken`, counted once in the summary.
"""

from __future__ import annotations

from typing import Any

from tests.crawlkit import HTML, TEXT, XML, Site, audit, urlset

PAGE = "<html><head><title>t</title>{head}</head><body><p>{body}</p></body></html>"


async def test_percent_encoded_star_and_dollar_in_patterns_are_literal(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    robots = (
        "User-agent: *\n"
        "Disallow: /path/file-with-a-%2A.html\n"
        "Disallow: /path/foo-%24\n"
        "Disallow: /lit/a$b\n"  # a `$` before the end is literal too
    )
    paths = {
        "/path/file-with-a-*.html": "blocked",  # Figure 6, first row
        "/path/foo-$": "blocked",  # Figure 6, second row
        "/path/file-with-a-x.html": "allowed",  # %2A is not a wildcard
        "/path/foo-": "allowed",  # %24 is not an anchor
        "/path/foo-bar": "allowed",
        "/lit/a$b": "blocked",
        "/lit/ab": "allowed",
    }
    site.routes = {
        "/robots.txt": (200, TEXT, robots),
        "/sitemap.xml": (200, XML, urlset(*(base + p for p in paths))),
        **{p: (200, HTML, PAGE.format(head="", body="ok")) for p in paths},
    }
    run = await audit(f"{base}/sitemap.xml")
    got = {r["url"][len(base) :]: r["robots"] for r in run.of("url")}
    assert got == paths
    blocked = {f["url"][len(base) :] for f in run.findings("url-robots-blocked")}
    assert blocked == {p for p, v in paths.items() if v == "blocked"}


def _wrong_root(base: str, child_ns: str) -> str:
    urls = "".join(
        f"<url{child_ns}><loc>{base}/p{i}</loc><lastmod>2024-05-0{i + 1}</lastmod></url>\n"
        for i in range(3)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">\n'
        f"{urls}</urlset>\n"
    )


async def test_wrong_namespace_root_with_no_namespace_entries_still_reads_them(
    serve: Any,
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/plain.xml": (200, XML, _wrong_root(base, ' xmlns=""')),
        "/same.xml": (200, XML, _wrong_root(base, "")),  # entries in the root's namespace
    }
    for name in ("plain", "same"):
        run = await audit(f"{base}/{name}.xml", mode="validate")
        (sitemap,) = run.of("sitemap")
        assert sitemap["entries"] == 3, name
        found = run.findings("sitemap-namespace")
        assert [f["line"] for f in found] == [2], name  # the root, once
        assert "http://www.google.com/schemas/sitemap/0.84" in found[0]["message"]
        # the entries' children are read in the entries' own namespace: no finding for them
        assert set(run.codes()) - {"robots-missing"} == {"sitemap-namespace"}, name


async def test_agent_noindex_only_for_a_noindex_scoped_to_the_agent(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    pages = {
        "/unscoped-header": (200, {**HTML, "X-Robots-Tag": "noindex"}, PAGE.format(head="", body="a")),
        "/unscoped-meta": (
            200,
            HTML,
            PAGE.format(head='<meta name="robots" content="noindex">', body="b"),
        ),
        "/scoped": (
            200,
            {**HTML, "X-Robots-Tag": "Google-Extended: noindex"},
            PAGE.format(head="", body="c"),
        ),
        "/scoped-meta": (
            200,
            HTML,
            PAGE.format(head='<meta name="gptbot" content="noindex">', body="d"),
        ),
        "/other": (200, {**HTML, "X-Robots-Tag": "bingbot: noindex"}, PAGE.format(head="", body="e")),
    }  # fmt: skip
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(*(base + p for p in pages))),
        **pages,
    }
    run = await audit(f"{base}/sitemap.xml", agents=("Google-Extended", "GPTBot"), page_checks=True)
    found = run.findings("agent-noindex")
    by_agent = {f["message"].split(" for ")[1].split(" on ")[0]: f for f in found}
    assert set(by_agent) == {"Google-Extended", "GPTBot"}
    assert by_agent["Google-Extended"]["url"] == base + "/scoped"
    assert "1 listed URL of" in by_agent["Google-Extended"]["message"]
    assert by_agent["GPTBot"]["url"] == base + "/scoped-meta"
    assert "1 listed URL of" in by_agent["GPTBot"]["message"]
    # what each bot sees still counts every noindex that applies to it
    assert run.url(base + "/unscoped-header")["agents"]["Google-Extended"] == "noindex"
    counts = run.summary["agents"]["Google-Extended"]
    assert (counts["blocked"], counts["noindex"]) == (0, 3)
    # the unscoped ones are the main agent's url-noindex
    noindex = sorted(f["url"][len(base) :] for f in run.findings("url-noindex"))
    assert noindex == ["/unscoped-header", "/unscoped-meta"]


async def test_a_link_to_a_redirect_to_a_404_is_one_broken_link(serve: Any) -> None:
    site = Site()
    base = await serve(site)
    home = PAGE.format(head="", body='<a href="/moved">m</a> <a href="/fine">f</a>')
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(base + "/", base + "/fine")),
        "/": (200, HTML, home),
        "/fine": (200, HTML, PAGE.format(head="", body='<a href="/">home</a>')),
        "/moved": (301, {"Location": "/gone"}, ""),
        # /gone: the site's 404
    }
    run = await audit(f"{base}/sitemap.xml", links=True)
    broken = run.findings("link-broken")
    assert len(broken) == 1, [(f["url"], f["message"]) for f in broken]
    assert broken[0]["url"] == base + "/moved"  # the URL the page links to
    assert f"e.g. the link on {base}/" in broken[0]["message"]
    assert run.summary["coverage"]["broken_links"] == 1
    assert run.summary["by_code"]["link-broken"] == 1
