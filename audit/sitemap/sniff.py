"""What the first bytes of a document are: XML, a text sitemap, or something refused.

Byte order marks, leading whitespace (its lines counted into `Doc.line_offset`),
HTML, a text sitemap (first non-blank text is an http(s) URL), an encoding that is
not UTF-8, or anything else that is not XML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from audit.sitemap.doc import Doc

_SNIFF = 512  # bytes after leading whitespace that decide what the document is
_WS = b" \t\r\n"
_HTML_RE = re.compile(
    rb"(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)
# The value stops at markup: a quote that never comes must not pull in what follows.
_ENCODING_RE = re.compile(rb"<\?xml\s[^>]*?encoding\s*=\s*[\"']([^\"'<>]*)[\"']", re.IGNORECASE)
_URL_START_RE = re.compile(rb"https?://", re.IGNORECASE)
# Enough seen to classify before _SNIFF bytes: a first element tag, a doctype, or a
# whole first text line. A slow server's first packet must not hold entries back.
_DECIDED_RE = re.compile(rb"<[A-Za-z][^>]*>|<!doctype[^>]*>", re.IGNORECASE)

# Starts of documents that are not UTF-8, in the order they are tested (UTF-32 first: its
# byte order marks begin with UTF-16's).
_NOT_UTF8 = (
    (
        (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"),
        "UTF-32 (byte order mark): sitemaps must be UTF-8",
    ),
    ((b"\xff\xfe", b"\xfe\xff"), "UTF-16 (byte order mark): sitemaps must be UTF-8"),
    ((b"<\x00", b"\x00<"), "UTF-16 (no byte order mark): sitemaps must be UTF-8"),
)

# Where the sniffer is: ordered, each step skips what the one before allowed.
_BOM, _LEADING_SPACE, _HEAD, _DONE = 0, 1, 2, 3

Decision = tuple[Literal["xml", "text"], bytes]


def _decidable(buf: bytes) -> bool:
    if _URL_START_RE.match(buf):
        return b"\n" in buf
    if buf[:1] != b"<":
        # Junk first (a PHP notice...): whether an <?xml follows decides, so take the
        # whole window, or the answer would depend on where the chunks happen to end.
        return False
    return _DECIDED_RE.search(buf) is not None


class Sniffer:
    """Fed the first bytes until it can tell what the document is: `feed` returns the
    reader to use and the bytes to give it, or None (more bytes needed, or the document
    is refused or empty, reported: `done`)."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self.gzip_broken = False  # a gzip fault ended the input before a document began
        self._state = _BOM
        self._pre = b""
        self._ws_bytes = 0

    @property
    def done(self) -> bool:
        return self._state == _DONE

    def feed(self, data: bytes, final: bool) -> Decision | None:
        buf, self._pre = self._pre + data, b""
        # any byte order mark and leading whitespace still to be skipped (None: more bytes
        # are needed, or nothing more is to be read); never fed once done (the parser
        # feeds a sniffer only while it is undecided)
        rest = _SKIP[self._state](self, buf, final)
        if rest is None:
            return None
        buf = rest
        if len(buf) < _SNIFF and not final and not _decidable(buf):
            self._pre = buf
            return None
        self._state = _DONE
        return self._classify(buf)

    def _skip_bom(self, buf: bytes, final: bool) -> bytes | None:
        """`buf` after a UTF-8 byte order mark and the whitespace after it (_skip_space); None
        when more bytes are needed to tell, or when the document is in an encoding that is
        refused."""
        if len(buf) < 4 and not final:
            self._pre = buf
            return None
        for starts, message in _NOT_UTF8:
            if buf.startswith(starts):
                self._bad_encoding(message)
                return None
        self._state = _LEADING_SPACE
        return self._skip_space(buf.removeprefix(b"\xef\xbb\xbf"), final)  # a BOM: allowed

    def _skip_space(self, buf: bytes, final: bool) -> bytes | None:
        """`buf` without leading whitespace (its lines counted); None while only whitespace
        has come."""
        stripped = buf.lstrip(_WS)
        skipped = len(buf) - len(stripped)
        self._ws_bytes += skipped
        self.doc.line_offset += buf.count(b"\n", 0, skipped)
        if not stripped:
            if final:  # empty or blank: no document at all, kind None
                self._state = _DONE
                self._no_document()
            return None
        self._state = _HEAD
        return stripped

    def _no_document(self) -> None:
        """A body of nothing (or only whitespace) is not a sitemap: an error, not an empty
        sitemap, so that a generator that crashed fails a pre-deploy check. A body that
        broke off before a byte arrived is the caller's failure to report, not this."""
        if self.doc.cut or self.gzip_broken:
            return
        size = self._ws_bytes
        what = "0 bytes" if not size else f"only whitespace, {size:,} bytes"
        self.doc.find(
            "sitemap-xml-malformed",
            f"the document is empty ({what}): not XML, no <urlset> or <sitemapindex>; "
            "a generator that failed may have left it so: regenerate it",
            line=1,
        )

    def _bad_encoding(self, message: str) -> None:
        self.doc.find("sitemap-encoding", message, line=1)
        self._state = _DONE
        self.doc.stop()

    def _classify(self, buf: bytes) -> Decision | None:
        doc = self.doc
        head = buf[:_SNIFF]
        if _HTML_RE.match(head):
            doc.is_html = True
            doc.find("sitemap-is-html", "an HTML page, not a sitemap", line=doc.line_offset + 1)
            doc.stop()
            return None
        if _URL_START_RE.match(head):
            doc.kind = "text"
            return ("text", buf)
        if not head.startswith(b"<"):
            at = head.find(b"<?xml")
            if at < 0:
                what = "JSON" if head[:1] in (b"{", b"[") else "something else"
                shown = repr(head[:24].decode("utf-8", "backslashreplace"))
                doc.find(
                    "sitemap-root-invalid",
                    f"not XML, not a text sitemap ({what}): starts with {shown}",
                    line=doc.line_offset + 1,
                )
                doc.stop()
                return None
            # Junk before the declaration (a stray BOM, PHP notice...): same fault.
            self._ws_bytes += at
            doc.line_offset += buf.count(b"\n", 0, at)
            buf, head = buf[at:], head[at:]
        if self._ws_bytes and head.startswith(b"<?xml"):
            doc.find(
                "sitemap-leading-whitespace",
                f"{self._ws_bytes} byte(s) before the <?xml declaration "
                f"({doc.line_offset} line break(s)); only a UTF-8 BOM may precede it",
                line=1,
            )
        return self._as_xml(head, buf)

    def _as_xml(self, head: bytes, buf: bytes) -> Decision | None:
        """`buf` for the XML reader, after sitemap-encoding for an encoding= other than UTF-8
        in the XML declaration; None when the document is refused (an encoding that is not
        ASCII-compatible)."""
        m = _ENCODING_RE.match(head)
        if m is None:
            return ("xml", buf)
        enc = m.group(1).decode("ascii", "replace")
        if enc.lower() in ("utf-8", "utf8"):
            return ("xml", buf)
        msg = f"the XML declaration says encoding={enc!r}: sitemaps must be UTF-8"
        if enc.lower().startswith(("utf-16", "utf-32", "ucs", "unicode")):
            # Not ASCII-compatible: lxml would misread every byte.
            self._bad_encoding(msg)
            return None
        self.doc.find("sitemap-encoding", msg, line=self.doc.line_offset + 1)
        return ("xml", buf)


# What is still to be skipped in each state before the head (_HEAD: nothing, and the
# bytes held then start after the whitespace: _skip_space gives them back as they are).
_SKIP: dict[int, Callable[[Sniffer, bytes, bool], bytes | None]] = {
    _BOM: Sniffer._skip_bom,
    _LEADING_SPACE: Sniffer._skip_space,
    _HEAD: Sniffer._skip_space,
}
