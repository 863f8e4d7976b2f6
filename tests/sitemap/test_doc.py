"""What the sitemap parser's readers share about one document (audit/sitemap/doc.py): the
tag helpers, findings placed in the document, the faults after which it is not read
completely, and items handed out once."""

from __future__ import annotations

import pytest

from audit.core.codes import CODES
from audit.sitemap.doc import SITEMAP_NS, UNREADABLE, Doc, local, ns_of


def test_tag_helpers_split_lxml_s_clark_notation() -> None:
    tag = f"{{{SITEMAP_NS}}}urlset"
    assert (local(tag), ns_of(tag)) == ("urlset", SITEMAP_NS)
    assert (local("urlset"), ns_of("urlset")) == ("urlset", "")


def test_every_unreadable_code_is_registered_as_an_error() -> None:
    assert set(CODES) >= UNREADABLE
    assert {CODES[c].severity.value for c in UNREADABLE} == {"error"}


@pytest.mark.parametrize("code", sorted(UNREADABLE))
def test_an_unreadable_fault_marks_the_document_broken(code: str) -> None:
    doc = Doc("https://e.example/s.xml", stop=lambda: None)
    doc.find(code, "what went wrong", line=3)
    assert doc.broken
    (found,) = doc.flush()
    assert (found.code, found.sitemap, found.line) == (code, "https://e.example/s.xml", 3)


def test_other_findings_leave_it_readable_and_flush_hands_each_item_out_once() -> None:
    stopped: list[bool] = []
    doc = Doc("https://e.example/s.xml", stop=lambda: stopped.append(True))
    doc.find("loc-relative", "relative", line=7, url="/a")
    doc.find("sitemap-doctype", "a DOCTYPE")
    assert not doc.broken
    items = doc.flush()
    assert [f.code for f in items] == ["loc-relative", "sitemap-doctype"]
    assert items[0].url == "/a" and doc.flush() == []
    doc.stop()
    assert stopped == [True]
