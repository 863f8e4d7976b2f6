"""XML escaping for the XML writers (junit): text and attribute values.

Characters that XML 1.0 forbids (most C0 controls, lone surrogates, U+FFFE/F)
become U+FFFD so a crafted sitemap value cannot make the document invalid.
Standard library only.
"""

from __future__ import annotations

import re
from html import escape

_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(value: object) -> str:
    return escape(_INVALID.sub("\ufffd", str(value)), quote=False)


def xml_attr(value: object) -> str:
    # Newlines and tabs in attributes would be normalised to spaces by parsers;
    # keep them as character references so they survive.
    text = escape(_INVALID.sub("\ufffd", str(value)), quote=True)
    return text.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
