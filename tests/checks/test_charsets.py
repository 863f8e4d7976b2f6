"""Page encodings as a browser reads them (audit/checks/charsets.py): labels to codecs (the
WHATWG aliases), the charset of a Content-Type, the <meta> prescan, the order BOM > HTTP >
meta > UTF-8, and decoding that never fails."""

from __future__ import annotations

import pytest

from audit.checks.charsets import (
    PRESCAN,
    charset_of_content_type,
    charset_param,
    decode,
    normalize_charset,
    prescan,
    sniff,
)


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("UTF-8", "utf-8"),
        (" 'utf8' ", "utf-8"),
        ("latin1", "cp1252"),  # browsers read ISO-8859-1 as windows-1252
        ("ISO-8859-1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("Shift_JIS", "cp932"),
        ("gb2312", "gb18030"),
        ("utf-16le", "utf-8"),  # a meta cannot switch a page to UTF-16
        ("koi8-r", "koi8-r"),
    ],
)
def test_labels_as_a_browser_reads_them(label: str, codec: str) -> None:
    assert normalize_charset(label) == codec


@pytest.mark.parametrize("label", [None, "", "no-such-encoding", "utf-99"])
def test_an_unknown_label_is_none(label: str | None) -> None:
    assert normalize_charset(label) is None


def test_the_charset_of_a_content_type() -> None:
    assert charset_of_content_type('text/html; charset="Shift_JIS"') == "cp932"
    assert charset_of_content_type("text/html;CHARSET=utf-8") == "utf-8"
    assert charset_of_content_type("text/html") is None and charset_of_content_type(None) is None
    assert charset_param("text/html; charset=x-made-up") == "x-made-up"  # raw, not normalised


def test_the_prescan_finds_a_meta_only_in_its_window() -> None:
    assert prescan(b'<html><head><meta charset="windows-1251">') == "cp1251"
    http_equiv = b'<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">'
    assert prescan(http_equiv) == "cp949"
    late = b" " * PRESCAN + b'<meta charset="koi8-r">'
    assert prescan(late) is None


@pytest.mark.parametrize(
    ("raw", "http", "expected"),
    [
        (b"\xef\xbb\xbf<meta charset=latin1>", "cp1252", ("utf-8", "bom")),
        (b"\xff\xfe<\x00h\x00", None, ("utf-16-le", "bom")),
        (b"<meta charset=latin1>", "cp932", ("cp932", "http")),
        (b"<meta charset=latin1>", None, ("cp1252", "meta")),
        (b"<p>plain</p>", None, ("utf-8", "default")),
    ],
)
def test_bom_then_http_then_meta_then_utf8(
    raw: bytes, http: str | None, expected: tuple[str, str]
) -> None:
    assert sniff(raw, http) == expected


def test_decoding_drops_the_bom_and_replaces_bad_bytes() -> None:
    assert decode("\ufeffcafé".encode(), "utf-8") == "café"
    assert decode(b"caf\xe9", "utf-8") == "caf\ufffd"
    assert decode(b"caf\xe9", "cp1252") == "café"
    assert decode("\ufeffhé".encode("utf-16-le"), "utf-16-le") == "hé"
    assert decode(b"plain", "no-such-codec") == "plain"  # an unknown codec falls back to UTF-8
