"""What the validator's entry checks share (audit/rules/findings.py): the shared empty
result that nobody fills, findings appended with their place, values quoted for messages,
and the xsd:decimal form."""

from __future__ import annotations

import pytest

from audit.core.codes import CODES
from audit.rules.findings import DECIMAL, NO_FINDINGS, XML_SPACE, add, show, writable


def test_the_shared_empty_result_is_never_written_to() -> None:
    out = writable(NO_FINDINGS)
    assert out == [] and out is not NO_FINDINGS
    add(out, "https://e.example/s.xml", "loc-missing", "no <loc>", 4, None)
    assert NO_FINDINGS == []
    mine = [*out]
    assert writable(mine) is mine  # a list of one's own is kept


def test_add_appends_a_finding_with_its_code_s_severity_and_place() -> None:
    out: list = []
    add(out, "https://e.example/s.xml", "priority-invalid", "bad", 7, "https://e.example/a")
    add(out, "https://e.example/s.xml", "sitemap-empty", "none", None, None)
    first, second = out
    assert (first.code, first.sitemap, first.line, first.url) == (
        "priority-invalid",
        "https://e.example/s.xml",
        7,
        "https://e.example/a",
    )
    assert first.severity is CODES["priority-invalid"].severity
    assert (second.line, second.url) == (None, None)


def test_show_quotes_so_whitespace_shows_and_truncates() -> None:
    assert show(" a\tb ") == repr(" a\tb ")
    long = "x" * 300
    shown = show(long, limit=20)
    assert shown == repr("x" * 19 + "…")


@pytest.mark.parametrize("text", ["0", "1.0", "+.5", "-0.25", "3.", "0010"])
def test_decimal_forms(text: str) -> None:
    assert DECIMAL.fullmatch(text)


@pytest.mark.parametrize("text", ["", ".", "1e3", "0,5", "½", "1.0.0", " 1"])
def test_not_decimal_forms(text: str) -> None:
    assert not DECIMAL.fullmatch(text)


def test_xml_space_is_what_xml_strips() -> None:
    assert " \t\r\n0.5\n".strip(XML_SPACE) == "0.5"
    assert "\u00a00.5".strip(XML_SPACE) == "\u00a00.5"  # NBSP is not XML whitespace
