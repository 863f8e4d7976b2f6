"""How a page's bytes become text: encoding labels as browsers read them, the BOM, the
HTTP header's charset and the HTML prescan of the first 1024 bytes.

Pure and synchronous: standard library only; must not import aiohttp or asyncio.
"""

from __future__ import annotations

import codecs
import re
from typing import Final

__all__ = [
    "PRESCAN",
    "charset_of_content_type",
    "decode",
    "normalize_charset",
    "prescan",
    "sniff",
]

PRESCAN: Final = 1024  # the HTML encoding prescan looks at this many bytes
_META_CHARSET: Final = re.compile(
    rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE | re.DOTALL
)
_CHARSET_PARAM: Final = re.compile(r"charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# WHATWG Encoding labels whose Python codec differs from what browsers use.
_ALIASES: Final = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "windows-1252": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "windows-31j": "cp932",
    "euc-kr": "cp949",
    "tis-620": "cp874",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "x-mac-roman": "mac-roman",
    "x-user-defined": "utf-8",  # read as UTF-8, as the UTF-16 labels are (normalize_charset)
}


def normalize_charset(label: str | None) -> str | None:
    """The Python codec for an encoding label as a browser reads it, or None if unknown.

    A meta cannot switch a page to UTF-16 (it would not have been readable as ASCII to
    find the meta), so UTF-16 labels mean UTF-8 there, as in the HTML standard.
    """
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    if name.startswith("utf-16"):
        return "utf-8"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def charset_of_content_type(value: str | None) -> str | None:
    """The charset parameter of a Content-Type value, as a Python codec name, or None."""
    return normalize_charset(charset_param(value or ""))


def charset_param(value: str) -> str | None:
    """The raw charset parameter of a value such as `text/html; charset=x`, or None."""
    m = _CHARSET_PARAM.search(value)
    return m.group(1) if m else None


def prescan(raw: bytes) -> str | None:
    """The charset a `<meta>` declares in the first PRESCAN bytes, or None."""
    m = _META_CHARSET.search(raw, 0, PRESCAN)
    return normalize_charset(m.group(1).decode("ascii", "replace")) if m else None


def sniff(raw: bytes, http_charset: str | None) -> tuple[str, str]:
    """(codec, source): a BOM, else the HTTP header's charset, else the prescan, else
    UTF-8; source is bom | http | meta | default."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, "bom"
    if http_charset:
        return http_charset, "http"
    found = prescan(raw)
    return (found, "meta") if found else ("utf-8", "default")


def decode(raw: bytes, charset: str) -> str:
    """The text of a page in `charset` (a leading BOM dropped, bad bytes as U+FFFD)."""
    codec = "utf-8-sig" if charset == "utf-8" else charset
    try:
        text = raw.decode(codec, "replace")
    except LookupError:
        text = raw.decode("utf-8-sig", "replace")
    if charset in ("utf-16-le", "utf-16-be"):
        text = text.lstrip("\ufeff")
    return text
