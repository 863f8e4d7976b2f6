"""The entry checks of the sitemap extensions (audit/rules/extensions.py), through the
validator: images, videos, news and an entry's hreflang alternates."""

from __future__ import annotations

import pytest

from audit.core.records import Image, News, Video
from tests.rules.test_validator import (
    GOOD_NEWS,
    B,
    alts,
    check,
    codes,
    make,
    url,
)

GOOD_VIDEO = {
    "thumbnail_loc": f"{B}/t.jpg",
    "title": "Grilling",
    "description": "How to grill",
    "player_loc": f"{B}/player?v=1",
    "duration": "600",
    "rating": "4.2",
    "view_count": "12345",
    "publication_date": "2024-05-01T10:00:00+02:00",
    "expiration_date": "2025-01-01",
    "family_friendly": "YES",
    "live": "No",
    "requires_subscription": "no",
    "restriction": "US CA",
    "restriction@relationship": "allow",
    "platform": "web mobile",
    "platform@relationship": "deny",
    "player_loc@allow_embed": "yes",
    "price": "1.99",
    "price@currency": "EUR",
    "price@type": "rent",
    "price@resolution": "HD",
    "category": "Cooking",
}


def test_images() -> None:
    v = make()
    ok = Image(f"{B}/a.jpg", 8)
    assert v.check(url(images=[ok])) == []
    fs = v.check(url(f"{B}/2", images=[ok, Image(None, 9), Image("  ", 11)]))
    assert codes(fs) == ["image-loc-missing", "image-loc-missing"]
    assert [f.line for f in fs] == [9, 11]
    fs = v.check(
        url(
            f"{B}/3",
            images=[
                Image(f"{B}/b.jpg", 12, ["caption", "title"]),
                Image(f"{B}/c", 14, ["caption"]),
            ],
        )
    )
    assert codes(fs) == ["image-deprecated-tag"]
    assert "<image:caption>, <image:title> in 2" in fs[0].message and fs[0].line == 12


def test_image_too_many() -> None:
    v = make()
    imgs = [Image(f"{B}/{i}.jpg", 8) for i in range(1000)]
    assert v.check(url(images=imgs)) == []
    (f,) = v.check(url(f"{B}/2", images=[*imgs, Image(f"{B}/x.jpg", 9)]))
    assert f.code == "image-too-many" and "1,001" in f.message


def test_video_valid() -> None:
    assert check(url(videos=[Video(9, dict(GOOD_VIDEO))])) == []
    minimal = {k: GOOD_VIDEO[k] for k in ("thumbnail_loc", "title", "description")}
    assert check(url(videos=[Video(9, {**minimal, "content_loc": f"{B}/v.mp4"})])) == []


@pytest.mark.parametrize("missing", ["thumbnail_loc", "title", "description", "player_loc"])
def test_video_required_missing(missing: str) -> None:
    fields = {k: v for k, v in GOOD_VIDEO.items() if k != missing}
    (f,) = make().check(url(videos=[Video(9, fields)]))
    assert f.code == "video-required-missing" and f.line == 9
    assert (missing if missing != "player_loc" else "content_loc") in f.message


def test_video_empty_required_counts_as_missing() -> None:
    assert check(url(videos=[Video(9, {**GOOD_VIDEO, "title": "  "})])) == [
        "video-required-missing"
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("description", "x" * 2049),
        ("title", "t" * 101),
        ("category", "c" * 257),
        ("duration", "0"),
        ("duration", "28801"),
        ("duration", "1.5"),
        ("rating", "5.1"),
        ("rating", "-1"),
        ("rating", "good"),
        ("view_count", "-3"),
        ("view_count", "1,000"),
        ("publication_date", "2024-13-01"),
        ("publication_date", "2024-05"),
        ("expiration_date", "2024-05-06T10:00"),
        ("family_friendly", "maybe"),
        ("live", "true"),
        ("requires_subscription", "1"),
        ("restriction", "us ca"),
        ("restriction@relationship", "block"),
        ("platform", "desktop"),
        ("platform@relationship", "yes"),
        ("player_loc@allow_embed", "ok"),
        ("price", "-1"),
        ("price@currency", "euro"),
        ("price@type", "buy"),
        ("price@resolution", "4k"),
    ],
)
def test_video_invalid_value(field: str, value: str) -> None:
    fs = make().check(url(videos=[Video(9, {**GOOD_VIDEO, field: value})]))
    assert codes(fs) == ["video-invalid-value"]
    assert field.split("@")[0] in fs[0].message


def test_video_boundaries_valid() -> None:
    for field, value in (
        ("duration", "1"),
        ("duration", "28800"),
        ("rating", "0"),
        ("rating", "5.0"),
    ):
        assert check(url(videos=[Video(9, {**GOOD_VIDEO, field: value})])) == [], (field, value)
    assert check(url(videos=[Video(9, {**GOOD_VIDEO, "description": "d" * 2048})])) == []


@pytest.mark.parametrize("language", ["en", "de", "zh-cn", "zh-tw", "fil", "EN"])
def test_news_valid(language: str) -> None:
    assert check(url(news=[News(9, {**GOOD_NEWS, "language": language})])) == []


@pytest.mark.parametrize("missing", ["name", "language", "publication_date", "title"])
def test_news_required_missing(missing: str) -> None:
    fields = {k: v for k, v in GOOD_NEWS.items() if k != missing}
    (f,) = make().check(url(news=[News(9, fields)]))
    assert f.code == "news-required-missing" and f"<news:{missing}>" in f.message


def test_required_missing_messages_say_it_or_them() -> None:
    """One missing child is 'it', several 'them'; each extension gives its own reason."""
    (one,) = make().check(url(videos=[Video(9, {**GOOD_VIDEO, "title": ""})]))
    assert one.message == (
        "<video:video> lacks <video:title>: add it (Google needs them to index the video)"
    )
    (two,) = make().check(url(news=[News(9, {"name": "n", "language": "en"})]))
    assert two.message == (
        "<news:news> lacks <news:publication_date>, <news:title>: add them "
        "(<news:publication> needs <news:name> and <news:language>)"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("language", "jp"),
        ("language", "english"),
        ("language", "pt-br"),
        ("publication_date", "2024-06-31"),
        ("publication_date", "yesterday"),
        ("publication_date", "2024-06"),
    ],
)
def test_news_invalid_value(field: str, value: str) -> None:
    assert check(url(news=[News(9, {**GOOD_NEWS, field: value})])) == ["news-invalid-value"]


def test_news_stale() -> None:
    assert check(
        url(news=[News(9, {**GOOD_NEWS, "publication_date": "2024-05-29T11:59:00Z"})])
    ) == ["news-stale"]
    assert check(url(news=[News(9, {**GOOD_NEWS, "publication_date": "2024-05-29"})])) == [
        "news-stale"
    ]
    # within two days: silent
    assert (
        check(url(news=[News(9, {**GOOD_NEWS, "publication_date": "2024-05-30T12:30:00Z"})])) == []
    )
    # a date covers its whole day: part of 2024-05-30 is within two days of 06-01 12:00
    assert check(url(news=[News(9, {**GOOD_NEWS, "publication_date": "2024-05-30"})])) == []


@pytest.mark.parametrize(
    "lang",
    ["en", "EN", "en-GB", "en-gb", "x-default", "X-Default", "zh-Hant", "zh-Hant-TW", "de-CH"],
)
def test_hreflang_valid(lang: str) -> None:
    assert check(url(f"{B}/en/", alternates=alts((lang, f"{B}/en/")))) == []


@pytest.mark.parametrize(
    "lang", ["en-UK", "jp", "english", "en_US", "es-419", "", None, "x-defaults", "de-DE-1996"]
)
def test_hreflang_invalid_code(lang: str | None) -> None:
    fs = make().check(url(f"{B}/en/", alternates=alts(("en", f"{B}/en/"), (lang, f"{B}/en/"))))
    assert codes(fs) == ["hreflang-invalid"] and fs[0].line == 9


@pytest.mark.parametrize("href", ["/de/", "de/page", "", None, "ftp://www.example.com/de/"])
def test_hreflang_invalid_href(href: str | None) -> None:
    fs = make().check(url(f"{B}/en/", alternates=alts(("en", f"{B}/en/"), ("de", href))))
    assert codes(fs) == ["hreflang-invalid"]


def test_hreflang_missing_self() -> None:
    v = make()
    (f,) = v.check(url(f"{B}/en/", alternates=alts(("de", f"{B}/de/"))))
    assert f.code == "hreflang-missing-self" and f.url == f"{B}/en/"
    # normalised comparison: upper-case host and default port still mean itself
    assert (
        v.check(url(f"{B}/fr/", alternates=alts(("fr", "HTTPS://www.example.com:443/fr/")))) == []
    )


def test_hreflang_bad_self_href_reported_once() -> None:
    fs = make().check(url(f"{B}/en/", alternates=alts(("en", "/en/"), ("de", f"{B}/de/"))))
    assert codes(fs) == ["hreflang-invalid"]
