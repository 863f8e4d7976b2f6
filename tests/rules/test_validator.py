"""Protocol validator: every entry rule, the per-sitemap rules and HreflangGraph (SeenUrls:
tests/rules/test_fingerprints.py; language tags: tests/rules/test_langtags.py).

Most tests build Entry records directly; test_rule_fixture runs each file of
fixtures/rules through the real StreamParser and the validator.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.core.records import Alternate, Entry, Finding, News, Severity
from audit.rules.validator import (
    HreflangGraph,
    SeenUrls,
    SitemapValidator,
)

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
B = "https://www.example.com"
SITEMAP = f"{B}/sitemap.xml"
RULES = Path(__file__).resolve().parents[2] / "fixtures" / "rules"


def make(**kw: object) -> SitemapValidator:
    kw.setdefault("sitemap_url", SITEMAP)
    kw.setdefault("now", NOW)
    kw.setdefault("seen", SeenUrls())
    return SitemapValidator(SITEMAP, **kw)  # type: ignore[arg-type]


def url(loc: str | None = f"{B}/page", **kw: object) -> Entry:
    kw.setdefault("lastmod", "2024-05-01")
    return Entry("url", loc, 7, **kw)  # type: ignore[arg-type]


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def check(entry: Entry, **kw: object) -> list[str]:
    return codes(make(**kw).check(entry))


# --- loc ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loc", "code"),
    [
        (None, "loc-missing"),
        ("   ", "loc-missing"),
        ("/products/shoes", "loc-relative"),
        (f"{B}/summer sale", "loc-invalid"),
        (f"{B}/a<b", "loc-invalid"),
        ("https://www.example.com:99999/x", "loc-invalid"),
        ("ftp://www.example.com/x", "loc-invalid"),
        (f"{B}/" + "x" * 2100, "loc-too-long"),
        (f"  {B}/contact\n", "loc-whitespace"),
        (f"{B}/café", "loc-not-encoded"),
        (f"{B}/faq#shipping", "loc-fragment"),
        ("https://shop.example.org/cart", "loc-cross-host"),
        ("http://www.example.com/page", "loc-cross-host"),
        ("https://www.example.com:8443/page", "loc-cross-host"),
    ],
)
def test_loc_rules(loc: str | None, code: str) -> None:
    assert check(url(loc)) == [code]


def test_loc_too_short() -> None:
    assert check(url("http://a.b/"), sitemap_url=None) == ["loc-invalid"]


def test_loc_finding_fields() -> None:
    (f,) = make().check(url(f"  {B}/contact\n"))
    assert f.code == "loc-whitespace" and f.severity is Severity.WARNING
    assert f.sitemap == SITEMAP and f.line == 7 and f.url == f"{B}/contact"
    assert "'  https://www.example.com/contact\\n'" in f.message and "remove" in f.message


def test_loc_outside_path() -> None:
    v = make(sitemap_url=f"{B}/blog/sitemap.xml")
    assert codes(v.check(url(f"{B}/blog/post"))) == []
    assert codes(v.check(url(f"{B}/BLOG/post"))) == ["loc-outside-path"]
    (f,) = v.check(url(f"{B}/shop/item"))
    assert f.code == "loc-outside-path" and "'https://www.example.com/blog/'" in f.message


def test_loc_scope_needs_sitemap_url() -> None:
    v = make(sitemap_url=None)
    assert codes(v.check(url("https://elsewhere.example.org/x"))) == []


def test_cross_submitted_allows_other_host() -> None:
    asked: list[str] = []

    def allowed(loc: str) -> bool:
        asked.append(loc)
        return loc.startswith("https://shop.example.org/")

    v = make(cross_submitted=allowed)
    assert codes(v.check(url("https://shop.example.org/cart"))) == []
    assert codes(v.check(url("https://other.example.org/x"))) == ["loc-cross-host"]
    assert asked == ["https://shop.example.org/cart", "https://other.example.org/x"]


def test_cross_host_applies_to_index_children() -> None:
    v = make()
    assert codes(v.check(Entry("sitemap", "https://cdn.example.net/s1.xml", 3))) == [
        "loc-cross-host"
    ]
    assert codes(v.check(Entry("sitemap", f"{B}/s2.xml", 4))) == []


def test_loc_silent_cases() -> None:
    v = make()
    for loc in (
        f"{B}/caf%C3%A9/cr%c3%a8me?q=a%20b&page=2",
        "HTTPS://WWW.EXAMPLE.COM/Upper",
        f"{B}:443/with-default-port",
        B,
        f"{B}/a(b)*,;=:@!$'~",
    ):
        assert codes(v.check(url(loc))) == [], loc


# --- duplicates --------------------------------------------------------------


def test_duplicate_within_sitemap_normalised() -> None:
    v = make()
    assert codes(v.check(url(f"{B}/about"))) == []
    (f,) = v.check(url("https://WWW.EXAMPLE.COM:443/about"))
    assert f.code == "loc-duplicate" and f.url == "https://WWW.EXAMPLE.COM:443/about"
    assert "normalised: 'https://www.example.com/about'" in f.message
    assert "earlier in this sitemap" in f.message
    assert codes(v.check(url(f"{B}/About"))) == []  # paths are case-sensitive


def test_duplicate_percent_escape_case() -> None:
    v = make()
    assert codes(v.check(url(f"{B}/caf%c3%a9"))) == []
    assert codes(v.check(url(f"{B}/caf%C3%A9"))) == ["loc-duplicate"]


def test_duplicate_across_sitemaps() -> None:
    seen = SeenUrls()
    a = SitemapValidator(f"{B}/a.xml", sitemap_url=f"{B}/a.xml", now=NOW, seen=seen)
    b = SitemapValidator(f"{B}/b.xml", sitemap_url=f"{B}/b.xml", now=NOW, seen=seen)
    assert a.check(url(f"{B}/x")) == []
    (f,) = b.check(url(f"{B}/x"))
    assert f.code == "loc-duplicate" and "'https://www.example.com/a.xml'" in f.message
    assert f.sitemap == f"{B}/b.xml"


def test_duplicate_urls_and_sitemaps_are_separate() -> None:
    v = make()
    assert codes(v.check(url(f"{B}/s1.xml"))) == []
    assert codes(v.check(Entry("sitemap", f"{B}/s1.xml", 3, lastmod="2024-05-01"))) == []
    assert codes(v.check(Entry("sitemap", f"{B}/s1.xml", 4, lastmod="2024-05-01"))) == [
        "loc-duplicate"
    ]


def test_no_duplicate_detection_without_seen() -> None:
    v = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=NOW)
    assert v.check(url()) == [] and v.check(url()) == []


# --- lastmod -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("lastmod", "code"),
    [
        ("2024-02-30", "lastmod-invalid"),
        ("2024-05-06T24:00:00Z", "lastmod-invalid"),
        ("2024-05-06T10:00:00", "lastmod-invalid"),
        ("06/05/2024", "lastmod-invalid"),
        ("", "lastmod-invalid"),
        ("2024", "lastmod-imprecise"),
        ("2024-05", "lastmod-imprecise"),
        ("2024-05-06T10:00Z", "lastmod-imprecise"),
        ("2024-06-01T12:01:30Z", "lastmod-future"),
        ("2024-06-03", "lastmod-future"),
        ("2031-01-01T00:00:00+14:00", "lastmod-future"),
    ],
)
def test_lastmod_rules(lastmod: str, code: str) -> None:
    assert check(url(lastmod=lastmod)) == [code]


@pytest.mark.parametrize(
    "lastmod",
    [
        "2024-05-06",
        "2024-05-06T10:20:30+05:30",
        "2024-05-06T10:20:30-00:00",
        "2024-05-06T10:20:30.5Z",
        "2024-06-01T12:00:45Z",  # within the clock-skew tolerance
        "2024-06-02",  # a UTC+14 site's today
        "2024-06-02T01:00:00+14:00",
    ],
)
def test_lastmod_silent(lastmod: str) -> None:
    assert check(url(lastmod=lastmod)) == []


def test_lastmod_messages() -> None:
    (f,) = make().check(url(lastmod="2024-02-30"))
    assert "'2024-02-30'" in f.message and "does not exist" in f.message
    assert "2024-05-06T07:08:09+00:00" in f.message
    (f,) = make().check(url(lastmod="2024-05-06T10:00Z"))
    assert "without seconds" in f.message


def test_lastmod_repeated_value_reported_each_time() -> None:
    v = make()
    assert codes(v.check(url(f"{B}/1", lastmod="2024-13-01"))) == ["lastmod-invalid"]
    assert codes(v.check(url(f"{B}/2", lastmod="2024-13-01"))) == ["lastmod-invalid"]


def test_rss_pubdate_as_lastmod() -> None:
    v = make(kind="rss")
    assert v.check(url(lastmod="Tue, 28 May 2024 04:00:00 GMT")) == []
    assert codes(make(kind="urlset").check(url(lastmod="Tue, 28 May 2024 04:00:00 GMT"))) == [
        "lastmod-invalid"
    ]


# --- changefreq and priority -------------------------------------------------


@pytest.mark.parametrize("value", ["sometimes", "Daily", "", "daily weekly"])
def test_changefreq_invalid(value: str) -> None:
    assert check(url(changefreq=value)) == ["changefreq-invalid"]


def test_changefreq_hint() -> None:
    (f,) = make().check(url(changefreq="Daily"))
    assert "'daily'" in f.message


@pytest.mark.parametrize(
    "value", ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"]
)
def test_changefreq_valid(value: str) -> None:
    assert check(url(changefreq=value)) == []


@pytest.mark.parametrize("value", ["1.5", "-0.1", "high", "1e-1", "", "0.5.1", "1.0001", "+2"])
def test_priority_invalid(value: str) -> None:
    assert check(url(priority=value)) == ["priority-invalid"]


@pytest.mark.parametrize(
    "value", ["0.5", "1", "1.0", ".5", "0", "0.0", "1.", "+0.3", "-0", "1.000"]
)
def test_priority_valid(value: str) -> None:
    assert check(url(priority=value)) == []


# --- news and hreflang (their entry checks: tests/rules/test_extensions.py) -----------


GOOD_NEWS = {
    "name": "The Example Times",
    "language": "en",
    "publication_date": "2024-06-01T08:00:00Z",
    "title": "Merger talks",
}


# --- hreflang ------------------------------------------------------------------


def alts(*pairs: tuple[str | None, str | None]) -> list[Alternate]:
    return [Alternate(lang, href, 8 + i) for i, (lang, href) in enumerate(pairs)]


def test_hreflang_graph_reciprocity() -> None:
    seen = SeenUrls()
    graph = HreflangGraph()
    v = make(seen=seen, hreflang=graph)
    assert graph.seen is seen  # wired by the validator
    cluster = alts(("en", f"{B}/en/"), ("de", f"{B}/de/"), ("fr", f"{B}/fr/"))
    for page in ("en", "de"):
        assert v.check(url(f"{B}/{page}/", alternates=cluster)) == []
    # /fr/ names only itself and /en/: /de/ -> /fr/ is not returned
    assert v.check(url(f"{B}/fr/", alternates=alts(("fr", f"{B}/fr/"), ("en", f"{B}/en/")))) == []
    (f,) = graph.finish()
    assert f.code == "hreflang-not-reciprocal"
    assert f.url == f"{B}/de/" and f.sitemap == SITEMAP
    assert "'https://www.example.com/de/' names 'https://www.example.com/fr/'" in f.message


def test_hreflang_graph_target_without_alternates() -> None:
    seen = SeenUrls()
    graph = HreflangGraph(seen)
    v = make(seen=seen, hreflang=graph)
    v.check(
        url(f"{B}/en/", alternates=alts(("en", f"{B}/en/"), ("de", f"{B}/de/"), ("it", f"{B}/it/")))
    )
    v.check(url(f"{B}/de/"))  # in the audit, no alternates at all
    (f,) = graph.finish()  # /it/ is not in the audit: not reported
    assert f.url == f"{B}/en/" and "lists no hreflang alternates" in f.message


def test_hreflang_graph_standalone() -> None:
    graph = HreflangGraph()
    graph.add(f"{B}/a", [f"{B}/a", f"{B}/b"])
    graph.add(f"{B}/b", [f"{B}/B"])  # /B is not /b: case-sensitive path
    graph.add("https://WWW.example.com/a", [f"{B}/x"])  # /a again: the first listing counts
    assert len(graph) == 2
    assert sorted((f.url, f.code) for f in graph.finish()) == [
        (f"{B}/a", "hreflang-not-reciprocal"),
        (f"{B}/b", "hreflang-not-reciprocal"),
    ]
    graph = HreflangGraph()
    graph.add(f"{B}/b", [f"{B}/a", f"{B}/b"])
    graph.add(f"{B}/a", ["HTTPS://WWW.EXAMPLE.COM/b", f"{B}/a"])
    assert graph.finish() == [] and graph.pending == 0


# --- per sitemap ---------------------------------------------------------------


def finish_codes(
    v: SitemapValidator, entries: int, size: int = 1000, kind: str = "urlset"
) -> list[str]:
    return codes(v.finish(kind, entries, size))


def test_count_limits() -> None:
    assert finish_codes(make(), 50_001) == ["sitemap-too-many-urls"]
    assert finish_codes(make(), 50_000) == ["sitemap-near-limit"]
    assert finish_codes(make(), 45_001) == ["sitemap-near-limit"]
    assert finish_codes(make(), 45_000) == []
    assert finish_codes(make(), 10, 47_185_921) == ["sitemap-near-limit"]
    assert finish_codes(make(), 10, 47_185_920) == []
    assert finish_codes(make(), 10, 52_428_801) == []  # too large: the parser reports it
    assert finish_codes(make(), 50_001, 50_000_000) == [
        "sitemap-too-many-urls",
        "sitemap-near-limit",
    ]
    (f,) = make().finish("sitemapindex", 50_001, 100)
    assert "50,001 <sitemap> entries" in f.message and f.line is None and f.sitemap == SITEMAP


def test_empty() -> None:
    assert finish_codes(make(), 0) == ["sitemap-empty"]
    assert codes(make().finish(None, 0, 0)) == ["sitemap-empty"]  # a zero-byte file


def test_lastmod_missing_summarised() -> None:
    v = make()
    for i in range(5):
        v.check(url(f"{B}/{i}", lastmod=None if i % 2 else "2024-05-01"))
    (f,) = v.finish("urlset", 5, 100)
    assert f.code == "lastmod-missing" and f.severity is Severity.INFO
    assert f.message.startswith("2 of 5 entries have no <lastmod>")
    t = make(kind="text")
    t.check(url(lastmod=None))
    assert codes(t.finish("text", 1, 100)) == []


def fill(v: SitemapValidator, lastmods: list[str], **kw: object) -> None:
    for i, lm in enumerate(lastmods):
        assert v.check(url(f"{B}/p{i}", lastmod=lm, **kw)) == []


def test_lastmod_uniform() -> None:
    v = make()
    fill(v, [f"2024-05-20T{h:02d}:00:00Z" for h in range(18)] + ["2024-05-19", "2024-05-18"])
    (f,) = v.finish("urlset", 20, 100)
    assert f.code == "lastmod-uniform" and "18 of 20" in f.message and "2024-05-20" in f.message
    # UTC day: 23:30-02:00 is the next UTC day
    v = make()
    fill(v, ["2024-05-20T23:30:00-02:00"] * 20)
    assert "2024-05-21" in v.finish("urlset", 20, 100)[0].message


def test_lastmod_uniform_counts_utc_days_across_zones() -> None:
    # Each form lands on 2024-05-20 in UTC, whatever its written day; the seconds never
    # move a value to another day. Every value repeats, so both the first reading and the
    # later (cached) ones are counted.
    on_20th = [
        "2024-05-21T00:30:00+01:00",
        "2024-05-19T22:00:00-14:00",
        "2024-05-20T23:59:59.5Z",
        "2024-05-21T12:59:59+13:00",
        "2024-05-20",
    ]
    v = make()
    fill(v, on_20th * 4)
    (f,) = v.finish("urlset", 20, 100)
    assert "20 of 20" in f.message and "2024-05-20" in f.message
    v = make()  # just after midnight an hour east of UTC: still the 19th in UTC
    fill(v, ["2024-05-20T00:30:00+01:00", "2024-05-20T00:59:59+01:00"] * 10)
    (f,) = v.finish("urlset", 20, 100)
    assert "20 of 20" in f.message and "2024-05-19" in f.message


def test_lastmod_uniform_silent() -> None:
    v = make()
    fill(v, ["2024-05-20"] * 19)  # fewer than 20
    assert finish_codes(v, 19) == []
    v = make()
    fill(v, ["2024-05-20"] * 17 + ["2024-05-19"] * 3)  # 85%
    assert finish_codes(v, 20) == []
    v = make()  # news sitemaps are exempt
    fill(v, ["2024-06-01"] * 25, news=[News(9, dict(GOOD_NEWS))])
    assert finish_codes(v, 25) == []


def test_lastmod_uniform_served_now() -> None:
    v = make()
    fill(v, [f"2024-06-01T11:5{i}:00Z" for i in range(5)])
    (f,) = v.finish("urlset", 5, 100)
    assert f.code == "lastmod-uniform" and "within 10 minutes" in f.message
    v = make()
    fill(v, [f"2024-06-01T11:5{i}:00Z" for i in range(4)] + ["2024-05-01"])
    assert finish_codes(v, 5) == []


def test_priority_uniform() -> None:
    v = make()
    fill(v, ["2024-05-01", "2024-05-02", "2024-05-03"], priority="0.8")
    (f,) = v.finish("urlset", 3, 100)
    assert f.code == "priority-uniform" and "'0.8'" in f.message
    v = make()  # equal as numbers
    for i, p in enumerate(["0.5", ".5", "0.50"]):
        v.check(url(f"{B}/{i}", priority=p))
    assert finish_codes(v, 3) == ["priority-uniform"]


def test_priority_uniform_silent() -> None:
    v = make()
    v.check(url(f"{B}/1", priority="0.8"))
    assert finish_codes(v, 1) == []  # one URL
    v = make()
    v.check(url(f"{B}/1", priority="0.8"))
    v.check(url(f"{B}/2", priority="0.5"))
    assert finish_codes(v, 2) == []
    v = make()
    v.check(url(f"{B}/1", priority="0.8"))
    v.check(url(f"{B}/2"))  # not every URL has one
    assert finish_codes(v, 2) == []


def test_news_too_many() -> None:
    v = make()
    for i in range(1001):
        v.check(
            url(f"{B}/n{i}", lastmod=f"2024-05-{i % 28 + 1:02d}", news=[News(9, dict(GOOD_NEWS))])
        )
    (f,) = v.finish("urlset", 1001, 100)
    assert f.code == "news-too-many" and "1,001" in f.message
    v = make()
    for i in range(1000):
        v.check(url(f"{B}/n{i}", news=[News(9, dict(GOOD_NEWS))]))
    assert finish_codes(v, 1000) == []


# --- fixtures through the real parser ----------------------------------------------

try:
    from audit.sitemap.parser import parse_file

    HAVE_PARSER = True
except ImportError:  # pragma: no cover - the parser lands separately
    HAVE_PARSER = False

FIXTURES = sorted(p.name for p in RULES.glob("*.xml*") if not p.name.endswith(".py"))


def run_fixture(path: Path) -> list[Finding]:
    head = path.read_bytes()[:400] if path.suffix == ".xml" else b""
    m = re.search(rb"<!-- sitemap_url: (\S+) -->", head)
    sitemap_url = m.group(1).decode() if m else SITEMAP
    seen, graph = SeenUrls(), HreflangGraph()
    parsed = parse_file(path, source=sitemap_url)
    found: list[Finding] = []
    validator: SitemapValidator | None = None
    for item in parsed:
        if isinstance(item, Finding):
            found.append(item)
            continue
        if validator is None:
            validator = SitemapValidator(
                sitemap_url,
                sitemap_url=sitemap_url,
                now=NOW,
                seen=seen,
                hreflang=graph,
                kind=parsed.parser.kind,
            )
        found += validator.check(item)
    if validator is None:
        validator = SitemapValidator(sitemap_url, sitemap_url=sitemap_url, now=NOW, seen=seen)
    p = parsed.parser
    found += validator.finish(p.kind, p.entries, p.uncompressed_bytes)
    return found + graph.finish()


def test_every_fixture_exists() -> None:
    codes_with_fixture = {name.split(".")[0] for name in FIXTURES}
    produced = {
        "loc-missing", "loc-relative", "loc-invalid", "loc-too-long", "loc-whitespace",
        "loc-not-encoded", "loc-cross-host", "loc-outside-path", "loc-duplicate", "loc-fragment",
        "lastmod-invalid", "lastmod-imprecise", "lastmod-future", "lastmod-missing",
        "lastmod-uniform", "changefreq-invalid", "priority-invalid", "priority-uniform",
        "image-loc-missing", "image-too-many", "image-deprecated-tag", "video-required-missing",
        "video-invalid-value", "news-required-missing", "news-too-many", "news-stale",
        "news-invalid-value", "hreflang-invalid", "hreflang-missing-self",
        "hreflang-not-reciprocal", "sitemap-too-many-urls", "sitemap-near-limit", "sitemap-empty",
    }  # fmt: skip
    assert codes_with_fixture == produced | {"clean"}


@pytest.mark.skipif(not HAVE_PARSER, reason="audit.sitemap.parser.parse_file not available yet")
@pytest.mark.parametrize("name", FIXTURES)
def test_rule_fixture(name: str) -> None:
    expected = name.split(".")[0]
    found = run_fixture(RULES / name)
    assert {f.code for f in found} == (set() if expected == "clean" else {expected}), [
        (f.code, f.line, f.message) for f in found
    ]
    for f in found:
        assert f.line is not None or f.code.startswith(
            ("sitemap-", "lastmod-", "priority-", "news-too")
        )


# --- a batch is checked as its entries one by one -------------------------------------

_LOCS = st.sampled_from(
    [f"{B}/a", f"{B}/b", f"{B}/A/../a", f" {B}/c\n", "/relative", None, "https://other.example/x",
     f"{B}/" + "x" * 2100, "https://WWW.example.com/b"]
)  # fmt: skip
_LASTMODS = st.sampled_from(
    [None, "2024-05-01", "2024-05-01T10:00:00+02:00", "2024-05-01T10:00:00Z", "2099-01-01",
     "2024-06-01T11:59:00Z", "2024-05", "yesterday", " 2024-05-02 "]
)  # fmt: skip
_ENTRIES = st.lists(
    st.builds(
        Entry,
        kind=st.sampled_from(["url", "url", "sitemap"]),
        loc=_LOCS,
        line=st.integers(1, 99),
        lastmod=_LASTMODS,
        changefreq=st.sampled_from([None, "daily", "Daily", "often"]),
        priority=st.sampled_from([None, "0.5", "0.8", "2", "x"]),
        news=st.sampled_from([None, [News(3, {"name": "n", "language": "en"})]]),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(entries=_ENTRIES, cuts=st.lists(st.integers(0, 40), max_size=5))
def test_a_batch_is_checked_as_its_entries_one_at_a_time(
    entries: list[Entry], cuts: list[int]
) -> None:
    """check_entries over the entries cut into any batches gives each entry the findings
    check() gives it alone, in order, and the same totals at the end (duplicates across
    batches, lastmod counts, priorities)."""
    one, batched = make(), make()
    alone = [list(one.check(e)) for e in entries]
    got: list[list[Finding]] = []
    bounds = sorted({0, len(entries), *(c for c in cuts if c < len(entries))})
    for start, end in pairwise(bounds):
        got += map(list, batched.check_entries(entries[start:end]))
    assert got == alone
    assert batched.finish("urlset", len(entries), 1000) == one.finish("urlset", len(entries), 1000)
