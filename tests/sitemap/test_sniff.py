"""audit.sitemap.sniff: what the first bytes are, told as soon as they can tell, fed in any pieces."""

from __future__ import annotations

import pytest

from audit.core.records import Finding
from audit.sitemap.doc import Doc
from audit.sitemap.sniff import Sniffer


def found(doc: Doc) -> list[Finding]:
    """The findings handed out so far (a reader that only reports gives no entries)."""
    return [x for x in doc.flush() if isinstance(x, Finding)]


def sniffer() -> tuple[Sniffer, Doc]:
    doc = Doc("https://www.example.com/sitemap.xml", lambda: setattr(doc, "stopped", True))
    return Sniffer(doc), doc


def test_xml_after_blank_lines_waits_for_the_first_tag_and_counts_the_lines() -> None:
    sn, doc = sniffer()
    assert sn.feed(b"\n\n<?xml version='1.0'?>\n<urlset", final=False) is None
    assert not sn.done  # a declaration alone does not tell yet
    assert sn.feed(b' xmlns="x">', final=False) == (
        "xml",
        b"<?xml version='1.0'?>\n<urlset xmlns=\"x\">",
    )
    assert sn.done and doc.line_offset == 2 and doc.kind is None  # XmlReader tells the kind
    [ws] = found(doc)
    assert (ws.code, ws.line) == ("sitemap-leading-whitespace", 1)
    assert "2 byte(s) before the <?xml declaration (2 line break(s))" in ws.message


def test_a_text_sitemap_is_told_by_its_first_whole_line() -> None:
    sn, doc = sniffer()
    assert sn.feed(b"\xef\xbb\xbfhttps://www.example.com/a", final=False) is None
    assert sn.feed(b"\nhttps://www.example.com/b\n", final=False) == (
        "text",
        b"https://www.example.com/a\nhttps://www.example.com/b\n",
    )
    assert doc.kind == "text" and found(doc) == []


@pytest.mark.parametrize(
    ("data", "code", "html"),
    [
        (b"\xff\xfe<\x00u\x00", "sitemap-encoding", False),
        (b"<!DOCTYPE html><html><body>404</body></html>", "sitemap-is-html", True),
        (b'{"urls": []}', "sitemap-root-invalid", False),
        (b"<?xml version='1.0' encoding='UTF-16'?><urlset/>", "sitemap-encoding", False),
    ],
)
def test_refused_documents_stop_with_one_finding(data: bytes, code: str, html: bool) -> None:
    sn, doc = sniffer()
    assert sn.feed(data, final=True) is None
    assert sn.done and doc.stopped and doc.broken and doc.is_html is html
    assert [f.code for f in found(doc)] == [code]


def test_a_latin1_declaration_is_reported_and_read_on() -> None:
    sn, doc = sniffer()
    data = b"<?xml version='1.0' encoding='ISO-8859-1'?><urlset/>"
    assert sn.feed(data, final=True) == ("xml", data)
    assert [f.code for f in found(doc)] == ["sitemap-encoding"] and not doc.stopped


def test_blank_is_no_document_unless_the_input_broke_off() -> None:
    sn, doc = sniffer()
    assert sn.feed(b"  \n ", final=False) is None and not sn.done
    assert sn.feed(b"", final=True) is None and sn.done
    [empty] = found(doc)
    assert empty.code == "sitemap-xml-malformed" and "only whitespace, 4 bytes" in empty.message
    sn, doc = sniffer()
    doc.cut = True
    assert sn.feed(b"", final=True) is None and sn.done and found(doc) == []
