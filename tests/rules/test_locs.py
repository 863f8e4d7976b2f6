"""audit.rules.locs: the <loc> fast path and the full checks agree; scope findings."""

from __future__ import annotations

from audit.core.records import Entry, Finding
from audit.rules.locs import LocCheck

B = "https://www.example.com"
SM = f"{B}/blog/sitemap.xml"


def run(locs: LocCheck, raw: str) -> tuple[tuple[str | None, str | None], list[str]]:
    out: list[Finding] = []
    got = locs.check(Entry("url", raw, 3), out)
    return got, [f.code for f in out]


def test_a_plain_loc_passes_the_full_checks_unchanged() -> None:
    locs = LocCheck(SM, sitemap_url=SM, cross_submitted=None)
    raw = f"{B}/blog/post"
    assert locs.plain(raw)
    assert run(locs, raw) == ((raw, raw), [])


def test_scope_findings_and_cross_submission() -> None:
    other = "https://shop.example.com/item"
    assert not LocCheck(SM, sitemap_url=SM, cross_submitted=None).plain(other)
    assert run(LocCheck(SM, sitemap_url=SM, cross_submitted=None), other)[1] == ["loc-cross-host"]
    allowed = LocCheck(SM, sitemap_url=SM, cross_submitted=lambda loc: loc == other)
    assert run(allowed, other) == ((other, other), [])
    assert run(allowed, f"{B}/about")[1] == ["loc-outside-path"]


def test_without_a_sitemap_url_only_syntax_counts() -> None:
    locs = LocCheck("local.xml", sitemap_url=None, cross_submitted=None)
    assert run(locs, "https://elsewhere.example/x") == (
        ("https://elsewhere.example/x", "https://elsewhere.example/x"),
        [],
    )
    loc, codes = run(locs, " /relative ")
    assert loc == ("/relative", None) and codes  # stripped, unusable, reported


def test_a_loc_that_needs_normalising_is_not_plain() -> None:
    locs = LocCheck(SM, sitemap_url=SM, cross_submitted=None)
    raw = f"{B.upper().replace('HTTPS', 'https')}/blog/post"
    assert not locs.plain(raw)
    (loc, norm), _ = run(locs, raw)
    assert loc == raw and norm == f"{B}/blog/post"
