"""The page reader of the page checks (checks/pagefacts.py with HEAD, the head scanned by
checks/scan.py): what it finds, where it stops, and broken HTML. These were the tests of
the streaming head reader it replaced; where the new reader follows the browsers' rules
instead, the assertion says so (see also test_pagefacts_diff.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from audit.checks.charsets import PRESCAN, normalize_charset
from audit.checks.pagefacts import BODY_WINDOW, HEAD, FactsSink, PageFacts


def read(
    data: bytes, cap: int = 512 * 1024, step: int = 7, http_charset: str | None = None
) -> PageFacts:
    """Feed in small steps (tags and characters split across chunks), as a socket would."""
    sink = FactsSink(HEAD, cap)
    ctype = "text/html" + (f"; charset={http_charset}" if http_charset else "")
    assert sink.start(200, [("content-type", ctype)])
    done = False
    for i in range(0, len(data), step):
        if sink.feed(data[i : i + step]):
            done = True
            break
    sink.end(at_eof=not done)
    assert sink.facts is not None
    return sink.facts


PAGE = (
    b"<!DOCTYPE html><html lang=en><head>\n"
    b'<meta charset="utf-8"><title>Caf\xc3\xa9 &amp; Bar</title>\n'
    b'<meta name="Robots" content="noindex, follow">\n'
    b'<meta name="googlebot" content="nosnippet">\n'
    b'<link rel="canonical" href="/cafe">\n'
    b'<link rel="alternate" hreflang="de" href="https://example.com/de/cafe">\n'
    b'<link rel="alternate" hreflang="en" href="https://example.com/cafe">\n'
    b"<script>document.write('<body><h1>fake</h1>')</script>\n"
    b"</head><body><h1>Welcome <em>in</em></h1>"
    b'<link rel="canonical" href="/in-body"><p>Hello world</p></body></html>'
)


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_everything_in_the_head_whatever_the_chunking(step: int) -> None:
    r = read(PAGE, step=step)
    assert r.title == "Café & Bar"
    assert r.metas == (("robots", "noindex, follow"), ("googlebot", "nosnippet"))
    assert r.meta("ROBOTS") == ["noindex, follow"]
    assert r.canonicals == ("/cafe",)  # the body's canonical does not count
    assert r.body_canonicals == 1
    assert r.alternates == (
        ("de", "https://example.com/de/cafe"),
        ("en", "https://example.com/cafe"),
    )
    assert r.h1 == "Welcome in"
    assert "Hello world" in r.text and "fake" not in r.text
    assert (r.charset, r.charset_source) == ("utf-8", "meta")
    assert r.complete and r.head_ended and not r.truncated and r.error is None
    assert r.bytes_read == len(PAGE)


def test_stops_a_window_after_the_head_and_never_past_the_cap() -> None:
    body = b"<html><head><title>t</title></head><body>" + b"<p>filler</p>" * 100_000
    sink = FactsSink(HEAD, 512 * 1024)
    sink.start(200, [("content-type", "text/html")])
    fed = 0
    while not sink.feed(body[fed : fed + 65536]):
        fed += 65536
    assert sink.feed(b"more") is True  # done: takes nothing more
    sink.end(at_eof=False)
    r = sink.facts
    assert r is not None and r.title == "t" and r.head_ended and not r.complete
    assert r.bytes_read <= len(b"<html><head><title>t</title></head><body>") + BODY_WINDOW + 4096

    capped = read(b"<head><title>x</title>" + b"<meta name=a content=b>" * 1000, cap=1000)
    assert capped.bytes_read == 1000 and capped.truncated


def test_a_head_longer_than_the_cap_is_truncated_and_reports_what_it_saw() -> None:
    head = b"<html><head><meta name=robots content=noindex>" + b"<meta name=x content=y>" * 5000
    r = read(head + b"<link rel=canonical href=/late></head><body>", cap=4096, step=1000)
    assert r.truncated and not r.head_ended
    assert r.bytes_read == 4096
    assert r.meta("robots") == ["noindex"]  # seen before the cap
    assert r.canonicals == ()  # after the cap: not seen, and not invented
    assert all(m == ("x", "y") for m in r.metas[1:])  # the half tag at the cut is not text


def test_the_head_ends_at_the_first_element_that_cannot_be_in_it() -> None:
    # Google stops reading the head at an invalid element: later metas are in the body.
    r = read(b"<head><title>a</title><img src=x><meta name=robots content=noindex>")
    assert r.metas == () and r.title == "a" and r.body_started


def test_head_elements_after_the_head_end_tag_still_count() -> None:
    r = read(b"<head><title>a</title></head>\n<link rel=canonical href=/c><body>x")
    assert r.canonicals == ("/c",)


def test_no_head_at_all_and_text_first() -> None:
    r = read(b"Hello <title>later</title><meta name=robots content=noindex>")
    assert r.title is None and r.metas == () and r.text.startswith("Hello")
    assert r.head_ended and r.complete and not r.truncated


def test_noscript_and_template_in_the_head_are_skipped() -> None:
    r = read(
        b"<head><noscript><meta name=robots content=noindex><div>x</div></noscript>"
        b"<template><link rel=canonical href=/t></template><title>ok</title></head>"
    )
    assert r.metas == () and r.canonicals == () and r.title == "ok"


def test_unclosed_tags_and_garbage_never_raise() -> None:
    for data in [
        b"<html><head><title>unclosed",
        b"<head><meta name=robots content=",
        b"<head><link rel=canonical href='/a",
        b"<<<<>>>></ ><!x <![CDATA[ <?php ?> <a href=",
        b"\x00\xff\xfe\x80<title>\x00</title>",
        b"<head><title>t</title><h1>never closed <b>bold",
    ]:
        r = read(data)
        assert r.error is None
        assert r.complete
    assert read(b"<html><head><title>unclosed").title == "unclosed"
    # An h1 open at the end of input ends there, as in browsers (the old reader had none).
    assert read(b"<head><title>t</title><h1>never closed <b>bold").h1 == "never closed bold"
    # An unfinished tag at the end of input is dropped by the HTML tokenizer: no text (the
    # old reader made it text, so the body had begun).
    r = read(b"<head><meta name=robots content=")
    assert r.text == "" and r.metas == ()


def test_title_content_is_raw_text_and_a_second_title_stays_in_the_head() -> None:
    # As in browsers (RCDATA): the old reader dropped the tags and took a second title's
    # text for the start of the body, so the head's later metas were ignored.
    r = read(
        b"<head><title>a <b>bold</b> &amp; c</title><title>again</title>"
        b"<meta name=robots content=noindex></head><body>text"
    )
    assert r.title == "a <b>bold</b> & c"
    assert r.meta("robots") == ["noindex"] and r.text == "text"


def test_bom_utf8_and_utf16() -> None:
    r = read(b"\xef\xbb\xbf<title>\xc3\xbc</title>")
    assert (r.title, r.charset_source) == ("ü", "bom")
    r16 = read(b"\xff\xfe" + "<title>ü</title><meta name=robots content=none>".encode("utf-16-le"))
    assert (r16.title, r16.charset, r16.meta("robots")) == ("ü", "utf-16-le", ["none"])


def test_windows_1251_declared_in_a_meta() -> None:
    title = "Страница не найдена".encode("cp1251")
    r = read(b'<meta charset="windows-1251"><title>' + title + b"</title>")
    assert r.title == "Страница не найдена" and r.charset == "cp1251"
    # http-equiv form, and the HTTP header wins over the meta
    r2 = read(
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
        b"<title>" + title + b"</title>"
    )
    assert r2.title == "Страница не найдена"
    r3 = read(b"<meta charset=utf-8><title>" + title + b"</title>", http_charset="windows-1251")
    assert r3.title == "Страница не найдена" and r3.charset_source == "http"


def test_a_late_meta_charset_decodes_the_page_again_once() -> None:
    pad = b"<!--" + b"x" * PRESCAN + b"-->"
    title = "Не найдена".encode("cp1251")
    r = read(
        b"<head>" + pad + b"<meta charset=windows-1251><title>" + title + b"</title>", step=300
    )
    assert r.title == "Не найдена" and r.charset_source == "meta"
    assert r.bytes_read == len(pad) + 6 + 27 + 7 + len(title) + 8


def test_unknown_charset_falls_back_to_utf8_with_replacement() -> None:
    r = read(b"<meta charset=klingon><title>\xc3\xa9\xff</title>")
    assert r.title == "é\ufffd" and r.charset == "utf-8"
    assert normalize_charset("ISO-8859-1") == "cp1252"
    assert normalize_charset("utf-16") == "utf-8"
    assert normalize_charset(None) is None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=700))
def test_arbitrary_bytes_never_raise(data: bytes, step: int) -> None:
    r = read(b"<html><head>" + data, cap=2048, step=step)
    assert r.bytes_read <= 2048
    assert r.error is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<head>",
                "</head>",
                "<title>",
                "</title>",
                "<meta name=robots content=noindex>",
                "<link rel=canonical href=/c>",
                "<body>",
                "<h1>",
                "</h1>",
                "text",
                "<script>",
                "</script>",
                "<noscript>",
                "</noscript>",
                "<!--",
                "-->",
                "<div>",
                "\xe9",
                "<",
            ]
        ),
        max_size=40,
    )
)
def test_arbitrary_tag_soup_never_raises(parts: list[str]) -> None:
    r = read("".join(parts).encode(), step=5)
    assert r.error is None


# lxml's HTMLPullParser was the other candidate: on the same broken inputs it also never
# raises and finds the same titles, but where the head ends is only known once libxml2
# has buffered past it, and its recovery differs between libxml2 versions. These checks
# keep the comparison honest.
@pytest.mark.parametrize(
    ("data", "title"),
    [
        (b"\xef\xbb\xbf<html><head><title>Hi</title><div>x", "Hi"),
        (b'<meta charset="windows-1251"><title>\xcd\xe5</title><p>x', "Не"),
        (b"<title>a</title><h1>unclosed", "a"),
    ],
)
def test_same_titles_as_lxml_html_pull_parser(data: bytes, title: str) -> None:
    parser = etree.HTMLPullParser(events=("end",))
    parser.feed(data)
    parser.close()
    lxml_titles = [
        el.text
        for _, el in parser.read_events()
        if isinstance(el, etree._Element) and el.tag == "title"
    ]
    assert lxml_titles == [title]
    assert read(data).title == title
