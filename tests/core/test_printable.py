"""Text safe for a terminal (audit/core/printable.py): control, format and separator
characters from the network become a space in text, and percent-escapes in a URL."""

from __future__ import annotations

import pytest

from audit.core.printable import printable, url_printable

HOSTILE = [
    "\x1b[31m",  # ESC: a colour escape
    "\x07",  # BEL
    "\x00",  # NUL
    "\x7f",  # DEL
    "\x85",  # C1 NEL
    "\u202e",  # RLO: right-to-left override
    "\u2028",  # line separator
    "\u2029",  # paragraph separator
    "\n",
    "\r",
    "\t",
]


@pytest.mark.parametrize("bad", HOSTILE)
def test_each_hostile_character_becomes_a_space(bad: str) -> None:
    shown = printable(f"before{bad}after")
    assert shown.isprintable()
    assert shown.startswith("before ") and shown.endswith("after")
    assert len(shown) == len("before") + len(bad) + len("after")  # one space per character


def test_printable_text_is_returned_as_it_is() -> None:
    text = "https://example.com/café?q=ü — done"
    assert printable(text) is text
    assert url_printable(text) is text


@pytest.mark.parametrize("bad", HOSTILE)
def test_a_url_keeps_each_such_character_as_its_utf8_percent_escapes(bad: str) -> None:
    url = f"https://example.com/a{bad}b"
    shown = url_printable(url)
    assert shown.isprintable()
    escapes = "".join(
        ch if ch.isprintable() else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in bad
    )
    assert "%" in escapes
    assert shown == f"https://example.com/a{escapes}b"


def test_a_lone_surrogate_is_escaped_not_an_error() -> None:
    assert url_printable("https://e.example/\ud800").isprintable()
