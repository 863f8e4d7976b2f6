"""audit.rules.locs: the <loc> fast path and the full checks agree; scope findings."""

from __future__ import annotations

import pytest

from audit.core.records import Entry
from audit.rules.locs import LocCheck, LocFindings, LocUse, loc_use
from audit.rules.validator import SeenUrls, SitemapValidator

B = "https://www.example.com"
SM = f"{B}/blog/sitemap.xml"


def run(locs: LocCheck, raw: str) -> tuple[tuple[str | None, str | None], list[str]]:
    out = LocFindings()
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


@pytest.mark.parametrize(
    ("raw", "use", "why"),
    [
        (f"{B}/blog/post", LocUse.URL, ""),
        (f" {B}/blog/post", LocUse.URL, ""),  # loc-whitespace: still a URL
        (f"{B}/elsewhere", LocUse.URL, ""),  # loc-outside-path: still a URL
        (None, LocUse.NONE, "loc-missing"),
        ("  ", LocUse.NONE, "loc-missing"),
        ("/relative", LocUse.NONE, "loc-relative"),
        ("ftp://www.example.com/file", LocUse.NONE, "loc-invalid"),
        (f"{B}/blog/{'x' * 2100}", LocUse.NO_PAGE, "loc-too-long"),
        (f"/{'x' * 2100}", LocUse.NONE, "loc-too-long"),  # both: the first finding says why
    ],
)
def test_what_a_loc_can_be_used_for_travels_with_its_findings(
    raw: str | None, use: LocUse, why: str
) -> None:
    """The pipeline reads a <loc>'s use as a value (loc_use), never by matching codes: a
    page is requested only for LocUse.URL, a child sitemap read unless LocUse.NONE, and
    `why` is the first finding that limits it (the unrequested record's reason)."""
    locs = LocCheck(SM, sitemap_url=SM, cross_submitted=None)
    out = LocFindings()
    locs.check(Entry("url", raw, 3), out)
    assert loc_use(out) == (use, why)
    assert why == "" or why in [f.code for f in out]
    assert loc_use([]) == (LocUse.URL, "")  # the fast path's findings: a URL


def test_the_validator_hands_the_use_of_a_loc_with_its_findings() -> None:
    v = SitemapValidator(SM, sitemap_url=SM, seen=SeenUrls())
    assert loc_use(v.check(Entry("url", "/relative", 4))) == (LocUse.NONE, "loc-relative")
    long = v.check(Entry("sitemap", f"{B}/blog/{'x' * 2100}.xml", 5))
    assert loc_use(long) == (LocUse.NO_PAGE, "loc-too-long")
    assert loc_use(v.check(Entry("url", f"{B}/blog/ok", 6))) == (LocUse.URL, "")
