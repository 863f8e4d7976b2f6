"""Text safe for a terminal: record values (URLs, Sitemap: lines, messages) come from
servers and must not drive the terminal or reorder what is shown.

`printable()` is the escaping of the text report: one line, every character that is not
printable (C0 and C1 controls, ESC, BEL, NUL, DEL, bidi overrides such as RLO, line and
paragraph separators) becomes a space. `url_printable()` percent-encodes those characters
instead, so a URL printed for a pipe stays one usable URL. Imports nothing.
"""

from __future__ import annotations

__all__ = ["printable", "url_printable"]


def printable(text: str) -> str:
    """One line, no control or format characters: each becomes a space."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else " " for ch in text)


def url_printable(url: str) -> str:
    """The URL with each non-printable character percent-encoded (UTF-8 bytes)."""
    if url.isprintable():
        return url
    return "".join(
        ch if ch.isprintable() else "%" + ch.encode("utf-8", "replace").hex("%").upper()
        for ch in url
    )
