"""XML escaping of the XML writers (audit/report/_xml.py): whatever a crafted sitemap value
holds, the document stays well-formed and a parser reads the value back (the characters
XML 1.0 forbids as U+FFFD)."""

from __future__ import annotations

import pytest
from lxml import etree

from audit.report._xml import xml_attr, xml_text

VALUES = [
    "plain",
    "a \"quoted\" <tag> & 'apos'",
    "]]><script>alert(1)</script>",
    "line one\nline two\r\n\tindented",
    "nul\x00 bel\x07 esc\x1b vt\x0b ff\x0c",
    "noncharacters \ufffe \uffff",
    "lone surrogate \ud800",
    "emoji 🎉 and é",
]
FORBIDDEN = {chr(c) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)]}
FORBIDDEN |= {"\ufffe", "\uffff", "\ud800"}


def _expected(value: str) -> str:
    return "".join("\ufffd" if ch in FORBIDDEN else ch for ch in value)


@pytest.mark.parametrize("value", VALUES)
def test_a_value_survives_a_round_trip_through_a_parser(value: str) -> None:
    doc = f'<r a="{xml_attr(value)}">{xml_text(value)}</r>'.encode()  # no lone surrogate
    root = etree.fromstring(doc)
    assert root.get("a") == _expected(value)  # in an attribute, newlines and tabs kept
    # in text, a parser reads CR LF and a lone CR as LF (XML 1.0, 2.11)
    assert root.text == _expected(value).replace("\r\n", "\n").replace("\r", "\n")


def test_non_strings_are_written_as_their_text() -> None:
    assert xml_text(42) == "42" and xml_attr(None) == "None"
