"""The head tokenizer (audit/checks/scan.py) on real head markup: what the head says, where
the body begins, raw-text elements, skipped noscript, a scan continued across chunks, and a
late meta charset."""

from __future__ import annotations

import pytest

from audit.checks.scan import HeadScan

HEAD = (
    "<!doctype html><html lang=en><head>"
    '<meta charset="utf-8"><title>Caf&eacute; &amp; <b>bar</b></title>'
    '<meta name="Robots" content="noindex">'
    '<link rel="canonical" href="/a">'
    '<link rel="alternate" hreflang="de" href="https://e.example/de/">'
    '<base href="https://e.example/base/"><base href="https://e.example/second/">'
    '<script>if (a < b) { document.write("<body>") }</script>'
    '<script type="application/ld+json">{"@type": "Thing"}</script>'
    '<noscript><link rel="canonical" href="/noscript"></noscript>'
    "</head><body><p>Text</p></body></html>"
)


def test_what_the_head_says() -> None:
    scan = HeadScan(HEAD, final=True).run().close()
    assert scan.title == "Café & <b>bar</b>"  # a title is raw text with references
    assert ("robots", "noindex") in scan.metas
    assert scan.canonicals == ["/a"]  # the one inside <noscript> is skipped
    assert scan.alternates == [("de", "https://e.example/de/")]
    assert scan.base_href == "https://e.example/base/"  # the first <base>
    assert scan.scripts == 1  # JSON-LD runs no JavaScript
    assert scan.late_charset is None
    assert scan.body_at == HEAD.rindex("<body>")
    assert scan.head_ended and scan.head_end == HEAD.rindex("<body>")


@pytest.mark.parametrize(
    "opener", ["<div>", "<img src=x>", "<h1>", "</p>", "text that is not space", "</body>"]
)
def test_the_body_begins_at_what_cannot_be_in_a_head(opener: str) -> None:
    page = f"<html><head><title>t</title>{opener}<link rel=canonical href=/late></head>"
    scan = HeadScan(page, final=True).run()
    assert scan.body_at == page.index(opener)
    assert scan.canonicals == []  # the head was over before that link


def test_head_elements_between_head_and_body_still_count() -> None:
    page = "<head><title>t</title></head>\n<link rel=canonical href=/moved><body>x"
    scan = HeadScan(page, final=True).run()
    assert scan.canonicals == ["/moved"] and scan.body_at == page.index("<body>")


def test_a_scan_continues_across_chunks() -> None:
    cut = HEAD.index('<link rel="canonical"') + 10  # inside the tag
    scan = HeadScan(HEAD[:cut], final=False).run()
    assert scan.body_at is None and scan.canonicals == []  # an unfinished tag is not content
    scan.extend(HEAD[cut:])
    scan.run()
    assert scan.canonicals == ["/a"] and scan.body_at == HEAD.rindex("<body>")


def test_a_meta_asking_for_another_charset() -> None:
    page = '<head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251">'
    assert HeadScan(page + "<body>", final=True).run().late_charset == "cp1251"
    assert HeadScan('<meta charset="UTF-8"><body>', final=True).run().late_charset is None


def test_an_unclosed_title_ends_at_the_close() -> None:
    scan = HeadScan("<head><title>Never closed", final=True).run().close()
    assert scan.title == "Never closed"
