"""Language tags (audit/rules/langtags.py): hreflang values as Google reads them and
news:language values, each refusal naming the fix."""

from __future__ import annotations

import pytest

from audit.rules.langtags import is_valid_hreflang


def test_language_lists_are_complete() -> None:
    from audit.rules.langtags import ISO_639_1, ISO_3166_1_ALPHA2

    assert len(ISO_639_1) == 184 and {"en", "zh", "he", "id", "yi", "nb", "bh"} <= ISO_639_1
    assert not {"iw", "in", "ji", "jp", "cn"} & ISO_639_1
    assert (
        len(ISO_3166_1_ALPHA2) == 249 and {"GB", "US", "TW", "SS", "CW", "AX"} <= ISO_3166_1_ALPHA2
    )
    assert not {"UK", "EU", "XK", "AN"} & ISO_3166_1_ALPHA2


def test_language_messages() -> None:
    from audit.rules.langtags import check_hreflang, check_news_language

    assert check_hreflang("en-UK") == (
        "region 'UK' is not an ISO 3166-1 alpha-2 country code (did you mean GB?)"
    )
    assert check_hreflang("jp") == (
        "language 'jp' is not an ISO 639-1 two-letter code (did you mean 'ja'?)"
    )
    assert "'en-US'" in (check_hreflang("en_US") or "")
    assert check_news_language("iw") == "is not an ISO 639-1 code (did you mean 'he'?)"
    assert check_news_language("zh-TW") is None and check_news_language("zh-hk") is not None


@pytest.mark.parametrize(
    "value", ["en", "EN", "x-default", " X-Default ", "zh-Hant", "zh-Hant-TW", "de-CH", "pt-br"]
)
def test_valid_hreflang(value: str) -> None:
    assert is_valid_hreflang(value)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "is empty"),
        ("en_GB", "uses '_' instead of '-' (write 'en-GB')"),
        ("english", "is not language[-Script][-REGION]"),
        ("en-GB-x", "is not language[-Script][-REGION]"),
        ("cn", "did you mean 'zh'?"),
        ("en-EU", "did you mean a country code?"),
        ("de-XX", "region 'XX' is not an ISO 3166-1 alpha-2 country code"),
    ],
)
def test_each_refusal_says_why(value: str, why: str) -> None:
    from audit.rules.langtags import check_hreflang

    assert why in (check_hreflang(value) or "")
    assert not is_valid_hreflang(value)


def test_news_languages_take_three_letter_codes_by_shape() -> None:
    from audit.rules.langtags import check_news_language

    assert check_news_language("fil") is None and check_news_language(" de ") is None
    assert check_news_language("zh-CN") is None
    assert check_news_language("deutsch") is not None and check_news_language("") is not None
