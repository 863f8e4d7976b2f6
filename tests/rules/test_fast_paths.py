"""The per-entry fast paths of the parser and the validator agree with their careful paths.

- Validator: the inline <lastmod> path of check() (length, slices and tables of valid
  parts) counts and reports exactly what the full path (LastmodCheck.full) does, for valid,
  nearly valid and invalid values, around the "future", "served now" and old-day edges.
- Validator: a clean entry gets the shared empty list, which no entry ever fills; the
  inlined duplicate table agrees with SeenUrls.add.
- Parser: a document parsed on the fast path (no DOCTYPE) gives the same entries and
  findings as the same document forced onto the careful path (a DOCTYPE on line 1 turns
  the fast path off), for random child sequences: protocol children in and out of order,
  repeated, images, other extensions, unknown elements, comments inside <loc>.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from audit.core.records import Entry, Finding
from audit.rules.validator import _NO_FINDINGS, SeenUrls, SitemapValidator
from audit.sitemap.parser import StreamParser

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMG = "http://www.google.com/schemas/sitemap-image/1.1"
VID = "http://www.google.com/schemas/sitemap-video/1.1"
XHTML = "http://www.w3.org/1999/xhtml"
SITEMAP = "https://www.example.com/sitemap.xml"
LOC = "https://www.example.com/page"
BASE = datetime(2024, 3, 1, tzinfo=UTC)

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

# --- lastmod: inline path == full path ------------------------------------------------


def _mostly(draw: Any, valid: Any, invalid: list[str]) -> str:
    """A valid piece nine times in ten, else one of the invalid ones."""
    return str(draw(st.sampled_from(invalid)) if draw(st.integers(0, 9)) == 0 else draw(valid))


@st.composite
def lastmod_texts(draw: Any) -> str:
    if draw(st.integers(0, 19)) == 0:
        junk: str = draw(st.text(alphabet="0123456789-:T+Z. tz", max_size=30))
        return junk
    near = BASE + timedelta(days=draw(st.integers(-6, 6)))
    valid_day = st.sampled_from([f"{near:%Y-%m-%d}", "2019-07-15", "2024-02-29"])
    text = _mostly(
        draw, valid_day, ["2024-02-30", "2023-02-29", "0000-01-01", "2024-13-01", "2024-1-05"]
    )
    if draw(st.integers(0, 9)) < 7:
        text += _mostly(draw, st.just("T"), ["t", " "])
        text += _mostly(draw, st.integers(0, 23).map("{:02d}".format), ["24", "9"])
        text += ":" + _mostly(draw, st.integers(0, 59).map("{:02d}".format), ["60", "5"])
        sec = _mostly(draw, st.integers(0, 59).map(":{:02d}".format), [":60", ":5", ""])
        frac = draw(st.sampled_from(["", "", "", ".5", ".123456", "."])) if sec else ""
        zones = ["Z", "Z", "+05:30", "-05:00", "+14:00", "-14:00", "-00:00", "+01:00"]
        tz = _mostly(draw, st.sampled_from(zones), ["+14:01", "+15:00", "+0530", "", "z"])
        text += sec + frac + tz
    if draw(st.integers(0, 9)) == 0:
        text = draw(st.sampled_from([" ", "\n", "\t "])) + text
    return text


@pytest.mark.slow
@given(lastmod_texts(), st.integers(-8 * 1440, 8 * 1440))
@example("2019-07-15T09:30:60Z", 0)
@example("2019-07-15T09:30:5.Z", 0)
@example("2019-07-15T09:60:00Z", 0)
@example("2019-07-15T24:00:00+05:30", 0)
@example("2019-07-15T09:30:00+14:01", 0)
@example("2019-07-15 09:30:00+05:30", 0)
@example("2019-07-15T09:30:00.5Z", 0)
@example("2024-02-29T23:59:59-14:00", 0)
@example("2024-03-01T00:00:00+14:00", 0)
@example("2024-02-28T23:55:00Z", 0)
@SETTINGS
def test_inline_lastmod_agrees_with_the_full_path(text: str, minutes: int) -> None:
    now = BASE + timedelta(minutes=minutes)
    fast = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=now)  # no duplicate table
    full = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=now)
    # Twice: the first time may fill the tables of valid days and zones the inline path
    # relies on; the second must then take the inline path wherever it applies.
    for _ in range(2):
        got = fast.check(Entry("url", LOC, 3, text))
        want: list[Finding] = []
        full._dates.full(text, 3, LOC, want)
        assert got == want, text
    assert (fast._dates.count, fast._dates.days, fast._dates.served_now) == (
        full._dates.count,
        full._dates.days,
        full._dates.served_now,
    ), text


def test_common_lastmod_forms_are_counted_inline_on_their_utc_day() -> None:
    v = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=BASE)
    values = [
        "2023-10-03T23:40:57-05:00",  # 04:40 UTC on the 4th
        "2023-10-04T03:40:57+05:30",  # 22:10 UTC on the 3rd
        "2023-10-04T00:00:00Z",
        "2023-10-04",
    ]
    for value in values * 2:
        assert v.check(Entry("url", LOC, 1, value)) == []
    day3, day4 = (datetime(2023, 10, d).toordinal() for d in (3, 4))
    assert v._dates.days == {day3: 2, day4: 6} and v._dates.count == 8


def test_clean_entries_share_an_empty_list_that_nothing_fills() -> None:
    v = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=BASE, seen=SeenUrls())
    clean = v.check(Entry("url", f"{LOC}/a", 1, "2023-01-01"))
    bad = [
        Entry("url", " https://other.example/x ", 2, "2023-02-30", "sometimes", "2"),
        Entry("url", f"{LOC}/a", 3),  # duplicate
        Entry("url", f"{LOC}/b", 4, "2099-01-01T00:00:00Z"),
        Entry("url", None, 5),
        Entry("url", f"{LOC}/c", 6, None, "weekly", "0.5"),
        Entry("url", f"{LOC}/d", 7, None, None, "0.5"),
    ]
    results = [v.check(e) for e in bad]
    assert clean == [] and clean is _NO_FINDINGS and _NO_FINDINGS == []
    assert [bool(r) for r in results] == [True, True, True, True, False, False]
    assert all(r is not _NO_FINDINGS for r in results if r)
    assert v.check(Entry("url", f"{LOC}/e", 8)) is _NO_FINDINGS


@given(st.lists(st.integers(0, 40), max_size=120))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_inline_duplicate_table_agrees_with_seen_urls(picks: list[int]) -> None:
    seen = SeenUrls()
    v = SitemapValidator(SITEMAP, sitemap_url=SITEMAP, now=BASE, seen=seen)
    reference = SeenUrls()
    for i in picks:
        url = f"https://www.example.com/p/{i}"
        dup = [f.code for f in v.check(Entry("url", url, 1))] == ["loc-duplicate"]
        assert dup == reference.add(url)
    assert len(seen) == len(reference) == len(set(picks))
    assert all(f"https://www.example.com/p/{i}" in seen for i in picks)


# --- parser: fast path == careful path ---------------------------------------------------

_CHILDREN = [
    f"<loc>{LOC}/1</loc>",
    f"<loc> {LOC}/2 </loc>",
    f"<loc><!-- generated -->{LOC}/3</loc>",
    f"<loc>{LOC}/4<?pi x?>/more</loc>",
    f"<loc><![CDATA[{LOC}/5]]></loc>",
    "<lastmod>2024-01-02</lastmod>",
    "<lastmod> 2024-01-02T03:04:05Z </lastmod>",
    "<changefreq>daily</changefreq>",
    "<priority>0.5</priority>",
    f"<image:image><image:loc>{LOC}/i.jpg</image:loc></image:image>",
    "<image:image><image:caption>c</image:caption><image:title>t</image:title></image:image>",
    f"<image:image><image:title>t</image:title><image:loc>{LOC}/j.jpg</image:loc>"
    f"<image:loc>{LOC}/k.jpg</image:loc></image:image>",
    "<image:image/>",
    f"<video:video><video:title>v</video:title><video:content_loc>{LOC}/v.mp4"
    "</video:content_loc></video:video>",
    f'<xhtml:link rel="alternate" hreflang="de" href="{LOC}/de"/>',
    "<foo>bar</foo>",
    '<bare xmlns="">x</bare>',
    "<!-- a comment -->",
    f"<url><loc>{LOC}/nested</loc></url>",
]


@st.composite
def url_documents(draw: Any) -> str:
    entries = []
    for _ in range(draw(st.integers(1, 4))):
        kids = draw(st.lists(st.sampled_from(_CHILDREN), max_size=6))
        sep: str = draw(st.sampled_from(["", "\n  ", " "]))
        entries.append("<url>" + sep + sep.join(kids) + sep + "</url>")
    between: str = draw(st.sampled_from(["\n", "", "\n<!-- c -->\n"]))
    return (
        f'<urlset xmlns="{SM}" xmlns:image="{IMG}" xmlns:video="{VID}" xmlns:xhtml="{XHTML}">'
        + between
        + between.join(entries)
        + between
        + "</urlset>\n"
    )


def _parse(data: bytes, step: int) -> list[Entry | Finding]:
    p = StreamParser(SITEMAP)
    items: list[Entry | Finding] = []
    for i in range(0, len(data), step):
        items.extend(p.feed(data[i : i + step]))
    items.extend(p.close())
    return [x for x in items if not (isinstance(x, Finding) and x.code == "sitemap-doctype")]


@pytest.mark.slow
@given(url_documents(), st.sampled_from([7, 64, 100_000]))
@SETTINGS
def test_parser_fast_path_agrees_with_the_careful_path(body: str, step: int) -> None:
    fast = _parse(f'<?xml version="1.0"?>\n{body}'.encode(), step)
    # A DOCTYPE (on line 1, so lines stay the same) sends every entry the careful way.
    careful = _parse(f'<?xml version="1.0"?><!DOCTYPE urlset>\n{body}'.encode(), step)
    assert fast == careful


def test_a_comment_inside_loc_does_not_cut_the_url() -> None:
    body = (
        f'<?xml version="1.0"?>\n<urlset xmlns="{SM}">\n'
        f"<url><loc><!-- generated -->{LOC}/a</loc><lastmod>2024-01-02</lastmod></url>\n"
        f"<url><loc>{LOC}/b<?pi x?>/c</loc></url>\n</urlset>\n"
    ).encode()
    entries = [x for x in _parse(body, 1000) if isinstance(x, Entry)]
    assert [(e.loc, e.lastmod) for e in entries] == [
        (f"{LOC}/a", "2024-01-02"),
        (f"{LOC}/b/c", None),
    ]


def test_images_on_the_fast_path() -> None:
    body = (
        f'<?xml version="1.0"?>\n<urlset xmlns="{SM}" xmlns:image="{IMG}">\n<url>\n'
        f"  <loc>{LOC}/a</loc>\n  <image:image><image:loc>{LOC}/1.jpg</image:loc>"
        "<image:caption>c</image:caption></image:image>\n"
        "  <image:image><image:title>t</image:title></image:image>\n</url>\n</urlset>\n"
    ).encode()
    (entry,) = _parse(body, 1000)
    assert isinstance(entry, Entry) and entry.images is not None
    assert [(i.loc, i.line, i.deprecated) for i in entry.images] == [
        (f"{LOC}/1.jpg", 5, ["caption"]),
        (None, 6, ["title"]),
    ]
