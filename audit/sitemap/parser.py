"""Streaming sitemap parser: bytes in (in chunks), entries and findings out.

Pure and synchronous: imports nothing of HTTP or asyncio (only zlib via
audit.sitemap.inflate, and lxml).

    p = StreamParser(source="https://example.com/sitemap.xml")
    for chunk in chunks:
        for item in p.feed(chunk):      # Entry | Finding, as soon as known
            ...
    for item in p.close():              # end of input: flush, final findings
        ...
    p.kind                # "urlset"|"sitemapindex"|"text"|"rss"|"atom"|None
    p.gzip                # True when the bytes were gzip (any depth)
    p.compressed_bytes    # bytes fed
    p.uncompressed_bytes  # bytes after inflation (what the 50 MiB limit counts)
    p.entries             # entries emitted so far
    p.is_html             # the document is HTML (sitemap-is-html emitted)
    p.stopped             # parsing stopped early (too large, fatal error); feed() ignores more

A local file in one call:

    pf = parse_file("sitemap.xml.gz", source="https://example.com/sitemap.xml.gz")
    for item in pf:                     # Entry | Finding, streamed in 64 KiB reads
        ...
    pf.parser.kind, pf.parser.entries   # the StreamParser, final after iteration

`parse_file` raises OSError when the file cannot be read; everything about the
content is reported as findings, never raised.

How a document is read (in one pass, memory flat):

1. `Inflater` undoes gzip by its magic bytes, at any depth, capped at max_bytes.
2. The first bytes are sniffed: BOMs, leading whitespace, HTML, a text sitemap
   (first non-blank text is an http(s) URL), or anything else that is not XML.
3. XML goes through lxml's pull parser. A throw-away probe parser finds the
   root element and any DOCTYPE; then the same bytes are replayed into the
   main parser, which only reports the `end` of entry elements (url, sitemap,
   item, entry). Each entry is built by walking its children once, and then
   freed with everything before it, so a 1,000,000-URL file needs no more
   memory than a 10-URL one.

Entities are never expanded or fetched: DOCTYPE / ENTITY declarations are a
finding (`sitemap-doctype`), the main parser then runs with
`resolve_entities=False`. A document without a DOCTYPE declares no entities, so
there the main parser uses `resolve_entities="internal"` instead, which expands
the same nothing but lets lxml report an undefined entity such as `&nbsp;`
correctly (with `False`, lxml deliberately ignores that error and the parser
then fails later with a misleading message and position).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any

from lxml import etree

from audit.core.records import Alternate, DocKind, Entry, Finding, Image, News, Video, finding
from audit.sitemap.inflate import GzipError, Inflater

__all__ = [
    "MAX_ENTRIES",
    "MAX_UNCOMPRESSED_BYTES",
    "ParsedFile",
    "StreamParser",
    "parse_file",
]

MAX_UNCOMPRESSED_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed
MAX_ENTRIES = 50_000  # sitemaps.org: 50,000 URLs per sitemap

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
ATOM_NS = "http://www.w3.org/2005/Atom"
ATOM03_NS = "http://purl.org/atom/ns#"  # Atom 0.3, which sitemaps.org also accepts
_ATOM_DATES = {ATOM_NS: "updated", ATOM03_NS: "modified"}  # the entry's change date

_INFLATE_MARGIN = 1024  # the Inflater may hand over a little more; we count exactly
_INPUT_STEP = 16384  # bytes of input handed to the Inflater at once
_ROUTE_STEP = 1 << 20  # bytes of inflated data handed to lxml at once
_SNIFF = 512  # bytes after leading whitespace that decide what the document is
_IMAGE_DEPRECATED = frozenset({"caption", "title", "geo_location", "license"})
_IMAGE_LOC = f"{{{IMAGE_NS}}}loc"

ParseItem = Entry | Finding


class _State(IntEnum):
    """Where the parser is in a document; ordered: below XML, the start is still sniffed."""

    BOM = 0  # byte order marks
    LEADING_SPACE = 1  # whitespace before the first markup
    HEAD = 2  # the first bytes, until they tell what the document is
    XML = 3
    TEXT = 4
    DONE = 5  # nothing more is read (decided, refused or finished)


# Actions for a child of an entry element, cached per tag string.
_A_LOC, _A_LASTMOD, _A_CHANGEFREQ, _A_PRIORITY = 0, 1, 2, 3
_A_FOREIGN = 4  # order slot of foreign-namespace children: after the protocol ones
_A_IMAGE, _A_VIDEO, _A_NEWS, _A_XHTML = 10, 11, 12, 13
_A_UNDEFINED, _A_NO_NS = 20, 21
_PROTOCOL_NAMES = ("loc", "lastmod", "changefreq", "priority")
# The extensions a <url> may have that the careful path reads, by their tags.
_EXTENSION_ACTIONS = {
    f"{{{IMAGE_NS}}}image": _A_IMAGE,
    f"{{{VIDEO_NS}}}video": _A_VIDEO,
    f"{{{NEWS_NS}}}news": _A_NEWS,
    f"{{{XHTML_NS}}}link": _A_XHTML,
}

_HTML_RE = re.compile(
    rb"(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>/]",
    re.IGNORECASE | re.DOTALL,
)
# The value stops at markup: a quote that never comes must not pull in what follows.
_ENCODING_RE = re.compile(rb"<\?xml\s[^>]*?encoding\s*=\s*[\"']([^\"'<>]*)[\"']", re.IGNORECASE)
_URL_START_RE = re.compile(rb"https?://", re.IGNORECASE)
_URL_LINE_RE = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]+\S*")
_WS = b" \t\r\n"
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


def _decidable(buf: bytes) -> bool:
    if _URL_START_RE.match(buf):
        return b"\n" in buf
    if buf[:1] != b"<":
        # Junk first (a PHP notice...): whether an <?xml follows decides, so take the
        # whole window, or the answer would depend on where the chunks happen to end.
        return False
    return _DECIDED_RE.search(buf) is not None


# libxml2 error codes worth putting in plain words (xmlerror.h).
_PLAIN_ERRORS = {
    68: "a raw '&' or '<' that is not part of markup (write &amp; / &lt;)",
    23: "a raw '&' (write &amp;) or an entity reference without its ';'",
    26: "an undefined entity (HTML entities such as &nbsp; are not XML: use the character "
    "itself or a numeric reference like &#160;)",
    27: "an undefined entity",
    76: "mismatched tags (an element is closed by the wrong end tag)",
    77: "the document ends before its elements are closed (truncated)",
    73: "an unfinished tag (truncated, or '>' missing)",
    5: "the document ends before its elements are closed (truncated)",
    4: "the document does not start with an element",
    9: "a character not allowed in XML",
    41: "an attribute without a value, or a bad attribute",
    39: "an attribute value without quotes",
    85: "extra content after the root element",
}


_RESOURCE_LIMIT = 114  # XML_ERR_RESOURCE_LIMIT
_DEPTH = re.compile(r"Excessive depth in document: (\d+)")  # libxml2's nesting guard


def _limit_words(code: int, message: str) -> str | None:
    """libxml2's own safety limits in plain words, or None for any other error. Its words
    name parser options and functions no user can set, so they are replaced, not quoted."""
    if "amplification" in message:
        return "entity expansion too large (a 'billion laughs' document), refused"
    depth = _DEPTH.search(message)
    if depth:
        return f"element nesting depth over {depth.group(1)} levels, refused"
    if code == _RESOURCE_LIMIT or "XML_PARSE_HUGE" in message:
        return "a text, name or whitespace run of more than 10,000,000 bytes"
    return None


def _plain(code: int, message: str) -> str:
    limit = _limit_words(code, message)
    if limit is not None:
        return limit
    words = _PLAIN_ERRORS.get(code)
    message = message.split(", line ")[0].strip()
    return f"{words} ({message})" if words else message


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _ns(tag: str) -> str:
    return tag[1:].partition("}")[0] if tag[:1] == "{" else ""


def _show(data: bytes) -> str:
    return repr(data[:24].decode("utf-8", "backslashreplace"))


def _is_alternate_link(link: Any) -> bool:
    """An Atom <link> to the entry itself: rel="alternate", the default."""
    rel: str = link.get("rel") or "alternate"
    return rel.strip().lower() == "alternate"


def _declared_entities(dtd: Any) -> list[str]:
    """The entities an internal DTD (or None) declares: name, and SYSTEM url if external."""
    if dtd is None:
        return []
    return [
        f"{ent.name} SYSTEM {ent.system_url!r}" if ent.system_url else f"{ent.name}"
        for ent in dtd.iterentities()
    ]


# The findings after which a document is not read completely (contracts/nights.md 2 and 4).
_UNREADABLE = frozenset(
    {
        "sitemap-gzip-invalid",
        "sitemap-too-large",
        "sitemap-encoding",
        "sitemap-is-html",
        "sitemap-root-invalid",
        "sitemap-xml-malformed",
    }
)


class StreamParser:
    """Incremental sitemap parser; see the module docstring."""

    def __init__(self, source: str, *, max_bytes: int = MAX_UNCOMPRESSED_BYTES) -> None:
        self.source = source
        self.max_bytes = max_bytes
        self.kind: DocKind | None = None
        self.gzip = False
        self.compressed_bytes = 0
        self.uncompressed_bytes = 0
        self.entries = 0
        self.is_html = False
        self.stopped = False
        self.broken = False  # a fault that stops reading was found (see `complete`)
        self._inflater = Inflater(max_bytes + _INFLATE_MARGIN)
        self._out: list[ParseItem] = []
        # sniffing
        self._state = _State.BOM
        self._pre = b""
        self._ws_bytes = 0
        self._line_offset = 0  # newlines stripped before what lxml/text sees
        # xml
        self._probe: Any = None
        self._probe_buf: list[bytes] = []
        self._main: Any = None
        self._root: Any = None
        self._last: Any = None  # feeds: last entry handled (already freed)
        self._kept: Any = None  # sitemaps: newest handled element, still attached
        self._handled = 0  # sitemaps: handled elements still attached to the root
        self._newest: Any = None  # sitemaps: newest handled entry
        self._fast_tags = ("", "", "", "")  # loc, lastmod, changefreq, priority tags
        self._fast_slots: dict[str, int] = {}  # what _sitemap_events takes (_plain_slots)
        self._image_tag = ""  # <image:image> where it is an extension of this document
        self._own_ns = SITEMAP_NS
        self._entry_tag = ""
        self._entry_kind: Any = "url"
        self._actions: dict[str, int] = {}
        # entries read as the root's own although in no namespace or the sitemaps.org one:
        # only under a root in a wrong namespace (reported once, at the root)
        self._alt_entry_tags: frozenset[str] = frozenset()
        self._alt_actions: dict[str, dict[str, int]] = {}
        self._max_order = _A_PRIORITY
        self._has_doctype = False
        self._pending: list[ParseItem] = []  # XML findings held back (_xml_failed)
        self._foreign = 0  # entry elements in another namespace than the root's
        self._foreign_first: tuple[str, int] = ("", 0)
        self._disorder = 0  # children out of the XSD's order: one finding at the end
        self._disorder_first: tuple[str, int] = ("", 0)  # the first one's message and line
        # text
        self._text_parts: list[bytes] = []  # the unfinished line, in pieces (never re-copied)
        self._cut = False  # close(cut=True): the input broke off
        self._gzip_broken = False  # a gzip fault ended the input before a document began
        self._text_line = 0

    # --- public API ----------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Entry | Finding]:
        self.compressed_bytes += len(chunk)
        # Small steps keep each inflated piece small (deflate reaches ~1000:1), so
        # memory stays low and a bomb is cut off after little work.
        step = _INPUT_STEP if self.gzip or not self.uncompressed_bytes else len(chunk) or 1
        for start in range(0, len(chunk), step):
            if self.stopped:
                break
            self._feed_piece(chunk[start : start + step] if len(chunk) > step else chunk)
        return self._flush()

    def close(self, *, cut: bool = False) -> list[Entry | Finding]:
        """End of input. `cut`: the input broke off (a network failure the caller reports):
        what was complete is kept, and the unfinished tail (a partial line, element or gzip
        member) is dropped without a finding of its own; it is not the document's fault."""
        self._cut = cut
        if not self.stopped:
            self._close_inflater(cut)
        if not self.stopped:
            self._finish()
        if not self.stopped:
            self._stop()
        return self._flush()

    # --- plumbing --------------------------------------------------------------

    def _feed_piece(self, piece: bytes) -> None:
        try:
            data = self._inflater.feed(piece)
        except GzipError as exc:
            self._take(exc.partial)
            self._gzip_failed(exc)
        else:
            self._take(data)

    def _close_inflater(self, cut: bool) -> None:
        """The inflater's last bytes; a gzip fault is the document's unless the input was cut."""
        try:
            data = self._inflater.close()
        except GzipError as exc:
            self._take(exc.partial)
            if not cut:
                self._gzip_failed(exc)
        else:
            self._take(data)

    def _flush(self) -> list[ParseItem]:
        out, self._out = self._out, []
        return out

    @property
    def complete(self) -> bool:
        """The document was read to its end: a sitemap was recognised, and neither the
        input broke off nor a fault stopped reading (gzip, size, encoding, HTML, root,
        XML); what was parsed before such a fault is kept but is not the whole list."""
        return self.kind is not None and not self._cut and not self.broken

    def _find(self, code: str, message: str, line: int | None = None, **kw: Any) -> None:
        if code in _UNREADABLE:
            self.broken = True
        self._out.append(finding(code, message, sitemap=self.source, line=line, **kw))

    def _stop(self) -> None:
        self._report_foreign()
        self._report_disorder()
        if self._pending:
            self._out += self._pending
            self._pending = []
        self.stopped = True
        self._main = self._probe = None
        self._root = self._last = self._kept = self._newest = None

    def _gzip_failed(self, exc: GzipError) -> None:
        self.gzip = self.gzip or self._inflater.gzip_layers > 0
        if self.stopped:
            return
        if self._state < _State.XML:
            # Decide on what did arrive, so complete entries before the fault count;
            # the cut-off document itself is not reported a second time as malformed
            # (nor as empty: _no_document).
            self._gzip_broken = True
            self._sniff(b"", final=True)
        if not self.stopped:
            self._pending = []  # what the garbage did to the XML is not the cause
            self._find("sitemap-gzip-invalid", str(exc))
            self._stop()

    def _take(self, data: bytes) -> None:
        """Count inflated bytes against the limit and pass them on."""
        if self._inflater.gzip_layers:
            self.gzip = True
        if not data or self.stopped:
            return
        room = self.max_bytes - self.uncompressed_bytes
        over = len(data) > room
        if over:
            data = data[:room]
        self.uncompressed_bytes += len(data)
        # libxml2 refuses a single push of more than 10 MB without XML_PARSE_HUGE.
        for start in range(0, len(data), _ROUTE_STEP):
            if self.stopped:
                break
            self._route(data[start : start + _ROUTE_STEP] if len(data) > _ROUTE_STEP else data)
        if over:  # reported even when the bytes before the limit were already judged
            self._too_large()

    def _too_large(self) -> None:
        self.uncompressed_bytes += 1  # at least one byte beyond the limit was seen
        self._find(
            "sitemap-too-large",
            f"more than {self.max_bytes:,} bytes uncompressed: parsing stopped there",
        )
        self._stop()

    def _route(self, data: bytes) -> None:
        if self._state == _State.XML:
            self._xml_feed(data)
        elif self._state == _State.TEXT:
            self._text_feed(data)
        elif self._state < _State.XML:
            self._sniff(data, final=False)

    def _finish(self) -> None:
        if self._state < _State.XML:
            self._sniff(b"", final=True)
        if self.stopped:
            return
        if self._state == _State.XML:
            self._xml_close()
        elif self._state == _State.TEXT:
            self._text_close()

    # --- sniffing --------------------------------------------------------------

    def _sniff(self, data: bytes, final: bool) -> None:
        buf = self._pre + data
        self._pre = b""
        rest = self._skip_start(buf, final)
        if rest is None:
            return
        buf = rest
        if len(buf) < _SNIFF and not final and not _decidable(buf):
            self._pre = buf
            return
        self._classify(buf)

    def _skip_start(self, buf: bytes, final: bool) -> bytes | None:
        """`buf` after any byte order mark and leading whitespace still to be skipped; None
        when more bytes are needed, or nothing more is to be read."""
        rest: bytes | None = buf
        if self._state == _State.BOM:
            rest = self._skip_bom(buf, final)
        if rest is not None and self._state == _State.LEADING_SPACE:
            rest = self._skip_space(rest, final)
        return rest

    def _skip_bom(self, buf: bytes, final: bool) -> bytes | None:
        """`buf` after a UTF-8 byte order mark; None when more bytes are needed to tell, or
        when the document is in an encoding that is refused."""
        if len(buf) < 4 and not final:
            self._pre = buf
            return None
        for starts, message in _NOT_UTF8:
            if buf.startswith(starts):
                self._bad_encoding(message)
                return None
        self._state = _State.LEADING_SPACE
        return buf[3:] if buf.startswith(b"\xef\xbb\xbf") else buf  # allowed before <?xml

    def _skip_space(self, buf: bytes, final: bool) -> bytes | None:
        """`buf` without leading whitespace (its lines counted); None while only whitespace
        has come."""
        stripped = buf.lstrip(_WS)
        skipped = len(buf) - len(stripped)
        if skipped:
            self._ws_bytes += skipped
            self._line_offset += buf.count(b"\n", 0, skipped)
        if not stripped:
            if final:  # empty or blank: no document at all, kind None
                self._state = _State.DONE
                self._no_document()
            return None
        self._state = _State.HEAD
        return stripped

    def _no_document(self) -> None:
        """A body of nothing (or only whitespace) is not a sitemap: an error, not an empty
        sitemap, so that a generator that crashed fails a pre-deploy check. A body that
        broke off before a byte arrived is the caller's failure to report, not this."""
        if self._cut or self._gzip_broken:
            return
        size = self._ws_bytes
        what = "0 bytes" if not size else f"only whitespace, {size:,} bytes"
        self._find(
            "sitemap-xml-malformed",
            f"the document is empty ({what}): not XML, no <urlset> or <sitemapindex>; "
            "a generator that failed may have left it so: regenerate it",
            line=1,
        )

    def _bad_encoding(self, message: str) -> None:
        self._find("sitemap-encoding", message, line=1)
        self._state = _State.DONE
        self._stop()

    def _classify(self, buf: bytes) -> None:
        head = buf[:_SNIFF]
        if _HTML_RE.match(head):
            self.is_html = True
            self._find("sitemap-is-html", "an HTML page, not a sitemap", line=self._line_offset + 1)
            self._state = _State.DONE
            return self._stop()
        if _URL_START_RE.match(head):
            self.kind = "text"
            self._state = _State.TEXT
            self._text_line = self._line_offset
            return self._text_feed(buf)
        if not head.startswith(b"<"):
            at = head.find(b"<?xml")
            if at < 0:
                return self._not_xml(head)
            # Junk before the declaration (a stray BOM, PHP notice...): same fault.
            self._ws_bytes += at
            self._line_offset += buf.count(b"\n", 0, at)
            buf, head = buf[at:], head[at:]
        if self._ws_bytes and head.startswith(b"<?xml"):
            self._find(
                "sitemap-leading-whitespace",
                f"{self._ws_bytes} byte(s) before the <?xml declaration "
                f"({self._line_offset} line break(s)); only a UTF-8 BOM may precede it",
                line=1,
            )
        if self._check_declared_encoding(head):
            self._start_xml(buf)

    def _not_xml(self, head: bytes) -> None:
        what = "JSON" if head[:1] in (b"{", b"[") else "something else"
        self._find(
            "sitemap-root-invalid",
            f"not XML, not a text sitemap ({what}): starts with {_show(head)}",
            line=self._line_offset + 1,
        )
        self._state = _State.DONE
        self._stop()

    def _check_declared_encoding(self, head: bytes) -> bool:
        """sitemap-encoding for an encoding= other than UTF-8 in the XML declaration;
        False when the document is refused (an encoding that is not ASCII-compatible)."""
        m = _ENCODING_RE.match(head)
        if m is None:
            return True
        enc = m.group(1).decode("ascii", "replace")
        if enc.lower() in ("utf-8", "utf8"):
            return True
        msg = f"the XML declaration says encoding={enc!r}: sitemaps must be UTF-8"
        if enc.lower().startswith(("utf-16", "utf-32", "ucs", "unicode")):
            # Not ASCII-compatible: lxml would misread every byte.
            self._bad_encoding(msg)
            return False
        self._find("sitemap-encoding", msg, line=self._line_offset + 1)
        return True

    def _start_xml(self, buf: bytes) -> None:
        """Hand the document to the probe parser (see _probe_feed)."""
        self._state = _State.XML
        self._probe = etree.XMLPullParser(
            events=("start",),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
        )
        self._xml_feed(buf)

    # --- XML -------------------------------------------------------------------

    def _xml_feed(self, data: bytes) -> None:
        if self._main is None:
            self._probe_feed(data, final=False)
            return
        try:
            self._main.feed(data)
        except etree.XMLSyntaxError as exc:
            self._events()
            return self._malformed(exc)
        self._events()

    def _probe_feed(self, data: bytes, final: bool) -> None:
        """Find the root and any DOCTYPE before the real parse starts."""
        self._probe_buf.append(data)
        root, failed = self._probe_root(data, final)
        if root is None and not final and not failed:
            return
        self._probe = None
        has_doctype = False
        if root is not None:
            has_doctype = self._check_prolog(root)
            if self.stopped:
                return
        self._start_main(has_doctype or root is None)

    def _probe_root(self, data: bytes, final: bool) -> tuple[Any, bool]:
        """(the root element once the probe has seen it, else None; whether the probe
        failed: the main parser will meet the same error and report it)."""
        failed = False
        try:
            if data:
                self._probe.feed(data)
            if final:
                self._probe.close()
        except etree.XMLSyntaxError:
            failed = True
        for _event, el in self._probe.read_events():
            return el, failed
        return None, failed

    def _start_main(self, has_doctype: bool) -> None:
        """The main parser, fed what the probe saw. `has_doctype`: a DOCTYPE, or no root
        found (so the careful settings apply)."""
        self._has_doctype = has_doctype
        # A DOCTYPE may have declared entities (references split texts): the careful
        # path takes every entry then.
        self._fast_slots = {} if self._has_doctype else self._plain_slots()
        if self._has_doctype:
            etree.clear_error_log()  # see _malformed
        # lxml-stubs predate resolve_entities="internal" (lxml >= 5)
        resolve: Any = False if self._has_doctype else "internal"
        self._main = etree.XMLPullParser(
            events=("end",),
            tag=self._main_tags(),
            resolve_entities=resolve,
            no_network=True,
            load_dtd=False,
            # Without a DOCTYPE no entity exists to expand, so lifting libxml2's 10 MB text
            # limit risks nothing: the 50 MiB limit (ours, counted in _take) decides, and a
            # valid document padded with whitespace is judged by its size, as it should be.
            huge_tree=not self._has_doctype,
        )
        buf, self._probe_buf = b"".join(self._probe_buf), []
        self._xml_feed(buf)

    def _plain_slots(self) -> dict[str, int]:
        """Tag -> _F_* slot for _sitemap_events; "" (never a tag) marks what this kind lacks."""
        tags = (*self._fast_tags, self._image_tag)
        return {tag: slot for slot, tag in enumerate(tags) if tag}

    def _main_tags(self) -> tuple[str, ...]:
        # Only entry elements make events; anything else at the top level is
        # checked when it is freed (_purge_batch, _xml_close).
        if self._entry_tag and self.kind in ("urlset", "sitemapindex"):
            if self._own_ns != SITEMAP_NS:
                return (self._entry_tag, f"{{*}}{self._entry_kind}")
            return (self._entry_tag,)
        if self._entry_tag:
            return (self._entry_tag,)
        return ("{*}url", "{*}sitemap", "item", f"{{{ATOM_NS}}}entry")

    def _check_prolog(self, root: Any) -> bool:
        """Classify the root element; report DOCTYPE. Return whether a DTD exists."""
        docinfo = root.getroottree().docinfo
        line = (root.sourceline or 1) + self._line_offset
        has_doctype = bool(docinfo.doctype) or docinfo.internalDTD is not None
        tag = root.tag
        if _local(tag).lower() == "html":
            self.is_html = True
            self._find("sitemap-is-html", "an HTML (XHTML) page, not a sitemap", line=line)
            self._stop()
            return has_doctype
        if has_doctype:
            self._report_doctype(docinfo)
        self._set_kind(tag, line)
        return has_doctype

    def _set_kind(self, tag: str, line: int) -> None:
        """The document kind and entry tag from the root's tag; a root of no sitemap kind
        is reported and stops the parse."""
        ns, local = _ns(tag), _local(tag)
        if local in ("urlset", "sitemapindex"):
            self._sitemap_root(ns, local, line)
        elif tag == "rss":
            self.kind = "rss"
            self._entry_tag = "item"
        elif local == "feed" and ns in _ATOM_DATES:
            self.kind = "atom"
            self._own_ns = ns
            self._entry_tag = f"{{{ns}}}entry"
        else:
            shown = f"{{{ns}}}{local}" if ns else local
            self._find(
                "sitemap-root-invalid",
                f"root element <{shown}> is not urlset or sitemapindex (nor RSS/Atom)",
                line=line,
            )
            self._stop()

    def _report_doctype(self, docinfo: Any) -> None:
        """sitemap-doctype, naming the entities it declares (at most 5) and any external DTD."""
        names = _declared_entities(docinfo.internalDTD)
        extra = f" declaring entities {', '.join(names[:5])}" if names else ""
        if len(names) > 5:
            extra += f" and {len(names) - 5} more"
        external = f" (external DTD {docinfo.system_url!r})" if docinfo.system_url else ""
        self._find(
            "sitemap-doctype",
            f"a DOCTYPE{external}{extra}: ignored, entities are never expanded or fetched",
            line=1 + self._line_offset,
        )

    def _sitemap_root(self, ns: str, local: str, line: int) -> None:
        """Set up for <urlset> or <sitemapindex> in namespace `ns` (reported unless the
        sitemaps.org one): the entry tag, and the tags the fast path takes."""
        index = local == "sitemapindex"
        self.kind = "sitemapindex" if index else "urlset"
        self._own_ns = ns
        entry = "sitemap" if index else "url"
        self._entry_tag = f"{{{ns}}}{entry}" if ns else entry
        self._entry_kind = entry
        self._max_order = _A_LASTMOD if index else _A_PRIORITY
        own = [f"{{{ns}}}{name}" if ns else name for name in _PROTOCOL_NAMES]
        if index:
            own[_A_CHANGEFREQ] = own[_A_PRIORITY] = ""  # not defined in <sitemap>
        elif ns != IMAGE_NS:
            self._image_tag = f"{{{IMAGE_NS}}}image"
        self._fast_tags = (own[0], own[1], own[2], own[3])
        if ns != SITEMAP_NS:
            self._report_root_namespace(ns, local, line)
            alt = {entry, f"{{{SITEMAP_NS}}}{entry}"} - {self._entry_tag}
            self._alt_entry_tags = frozenset(alt)

    def _report_root_namespace(self, ns: str, local: str, line: int) -> None:
        got = f"namespace {ns!r}" if ns else "no namespace"
        self._find(
            "sitemap-namespace",
            f'<{local}> has {got}; expected xmlns="{SITEMAP_NS}"',
            line=line,
        )

    def _events(self) -> None:
        main = self._main
        if main is None:
            return
        if self.kind == "urlset" or self.kind == "sitemapindex":
            self._sitemap_batch(main.read_events())
        elif self.kind is not None:
            self._feed_events(main.read_events())
        else:
            for _event in main.read_events():  # no root known: the parse is about to fail
                pass

    def _sitemap_batch(self, events: Any) -> None:
        """The entries of one feed() of a urlset or sitemapindex, then the purge."""
        if self._own_ns != SITEMAP_NS:  # rare: entries may be in yet another namespace
            events = self._own_entries(events)
        self._sitemap_events(events)
        self._purge_batch()

    def _own_entries(self, events: Any) -> Iterator[tuple[str, Any]]:
        """The events of the root's own entries; another namespace's (asked for in
        _main_tags, so that even a document of nothing else is read) are emptied and left
        to _check_top."""
        entry_tag, alt = self._entry_tag, self._alt_entry_tags
        for event, el in events:
            if self._root is None:
                self._root = el.getroottree().getroot()
            if el.tag == entry_tag or el.tag in alt:
                yield event, el
            else:
                el.clear()

    def _sitemap_events(self, events: Any) -> None:
        """The hot path: one <url>/<sitemap> per event, children walked once.

        A plain entry is read here (no call per entry): the protocol children (each once,
        in order, no comment or entity reference inside <loc>), then only <image:image>
        children; `slots` maps their tags to _F_*, and a child whose slot is below the
        position reached so far (repeated, out of order, or anything else: _F_OTHER)
        sends the entry down the careful path (_sitemap_entry). getchildren() builds the
        children in one C call: about half the cost of iterating the element (lxml's
        child iterator is a Python-level object).
        """
        root = self._root
        slots = self._fast_slots
        kind = self._entry_kind
        off = self._line_offset
        out = self._out
        n = 0
        newest = None
        for _event, el in events:
            if root is None:
                root = self._root = el.getroottree().getroot()
            if el.getparent() is not root:
                continue  # nested (e.g. an own-namespace <url> inside a <url>)
            n += 1  # only entry tags make events (see _main_tags)
            newest = el
            loc = lastmod = changefreq = priority = None
            images: list[Image] | None = None
            loc_line = 0
            pos = 0  # how far into the sequence loc, lastmod, changefreq, priority, images
            for child in el.getchildren():
                slot = slots.get(child.tag, _F_OTHER)
                if slot < pos or (slot == _F_LOC and len(child)):  # len: a comment inside
                    out.append(self._sitemap_entry(el))
                    break
                if slot == _F_LOC:
                    loc = child.text or ""
                    loc_line = child.sourceline
                elif slot == _F_LASTMOD:
                    lastmod = (child.text or "").strip()
                elif slot == _F_CHANGEFREQ:
                    changefreq = (child.text or "").strip()
                elif slot == _F_PRIORITY:
                    priority = (child.text or "").strip()
                else:  # images may repeat; a protocol child after one is out of order
                    if images is None:
                        images = []
                    images.append(_image(child, child.sourceline + off))
                    pos = _F_IMAGE
                    continue
                pos = slot + 1
            else:
                line = (loc_line or el.sourceline) + off
                out.append(Entry(kind, loc, line, lastmod, changefreq, priority, images))
        self._handled += n
        self.entries += n
        if newest is not None:
            # Never a nested entry: its parent is still open and not a child of the root.
            self._newest = newest

    def _purge_batch(self) -> None:
        """Free every handled element but the newest (libxml2 may still point near it).

        Root-level elements that never produced an event (foreign, unknown,
        comments) are checked before they go: only entry tags make events, so
        any other element before the newest entry is one of those.
        """
        root, newest = self._root, self._newest
        if root is None or newest is None or newest is self._kept:
            return
        idx = root.index(newest)
        if idx != self._handled - 1:
            self._check_tops(root[:idx])
        del root[:idx]
        newest.clear()
        self._kept = newest
        self._handled = 1

    def _check_tops(self, children: Any) -> None:
        """_check_top for each of `children` that is not an entry."""
        entry_tag = self._entry_tag
        for child in children:
            if child.tag != entry_tag:
                self._check_top(child)

    def _feed_events(self, events: Any) -> None:
        """RSS items and Atom entries: rarely large, so kept simple."""
        entry_tag = self._entry_tag
        for _event, el in events:
            parent = el.getparent()
            if self._root is None:
                self._root = el.getroottree().getroot()
            if el.tag != entry_tag or not self._in_feed(parent):
                continue
            self._purge(el, parent)
            self._out.append(self._rss_entry(el) if self.kind == "rss" else self._atom_entry(el))
            self.entries += 1
            el.clear()
            self._last = el

    def _in_feed(self, parent: Any) -> bool:
        """Whether an entry element's `parent` makes it one of the feed's: an RSS <item> in
        <channel>, an Atom <entry> in the root."""
        if self.kind == "rss":
            return parent is not None and parent.tag == "channel"
        return parent is self._root

    def _purge(self, el: Any, parent: Any) -> None:
        """Delete every sibling before `el` (feeds have no unknown-element rule)."""
        while el.getprevious() is not None:
            del parent[0]

    def _check_top(self, el: Any) -> None:
        """An element directly in urlset/sitemapindex that is not an entry."""
        tag = el.tag
        if not isinstance(tag, str) or self.kind not in ("urlset", "sitemapindex"):
            return
        ns = _ns(tag)
        line = (el.sourceline or 0) + self._line_offset
        if tag in self._alt_entry_tags:
            return  # read as an entry (_own_entries)
        if _local(tag) == self._entry_kind and ns != self._own_ns:
            return self._foreign_entry(ns, line)
        self._unknown_top(tag, ns, line)

    def _unknown_top(self, tag: str, ns: str, line: int) -> None:
        """element-unknown for a top-level element of the sitemap's namespaces or of none
        (any other namespace is an allowed extension)."""
        parent_name = self.kind
        if ns == self._own_ns or ns == SITEMAP_NS:
            self._find(
                "element-unknown",
                f"<{_local(tag)}> is not defined inside <{parent_name}>",
                line=line,
            )
        elif not ns:
            self._find(
                "element-unknown",
                f"<{tag}> has no namespace (inside <{parent_name}>)",
                line=line,
            )

    def _foreign_entry(self, ns: str, line: int) -> None:
        """An entry element in another namespace than the root's: counted (not read), one
        sitemap-namespace finding at the end (_report_foreign)."""
        self._foreign += 1
        if self._foreign == 1:
            self._foreign_first = (ns, line)

    def _report_foreign(self) -> None:
        if not self._foreign:
            return
        (ns, line), n = self._foreign_first, self._foreign
        self._foreign = 0
        name = self._entry_kind
        what = f"a <{name}>" if n == 1 else f"{n:,} <{name}> elements"
        got = f"namespace {ns!r}" if ns else "no namespace"
        root = f"namespace {self._own_ns!r}" if self._own_ns else "no namespace"
        self._find(
            "sitemap-namespace",
            f"{what} in {got} inside <{self.kind}> in {root}, the first at line {line}: "
            f'not read as entries; put every element in xmlns="{SITEMAP_NS}"',
            line=line,
        )

    def _action(self, tag: str, own_ns: str) -> int:
        ns = _ns(tag)
        if ns == own_ns:  # also a no-namespace document's own elements
            names = _PROTOCOL_NAMES[: self._max_order + 1]
            local = _local(tag)
            return names.index(local) if local in names else _A_UNDEFINED
        if not ns:
            return _A_NO_NS
        if ns == SITEMAP_NS:
            return _A_UNDEFINED
        if self._entry_kind == "url":
            return _EXTENSION_ACTIONS.get(tag, _A_FOREIGN)
        return _A_FOREIGN

    def _sitemap_entry(self, el: Any) -> Entry:
        """The careful path: every child checked against the XSD's sequence, each kind of
        child taken by its handler in _PROTOCOL_HANDLERS or _EXTENSION_HANDLERS."""
        actions, own_ns = self._actions, self._own_ns
        if el.tag != self._entry_tag:  # one of _alt_entry_tags: its children in its namespace
            own_ns = _ns(el.tag)
            actions = self._alt_actions.setdefault(own_ns, {})
        off = self._line_offset
        parts = _EntryParts()
        pos = -1
        seen = 0  # bit per protocol child met
        for child in el.getchildren():
            tag = child.tag
            if tag.__class__ is not str:
                continue  # comment, processing instruction, entity reference
            act = actions.get(tag)
            if act is None:
                act = actions[tag] = self._action(tag, own_ns)
            if act < _A_FOREIGN:  # loc, lastmod, changefreq, priority: XSD sequence
                if seen >> act & 1:
                    self._unknown_child(child, "repeated")
                    continue
                seen |= 1 << act
                if act < pos:
                    self._unknown_child(child, "out of order")
                else:
                    pos = act
                _PROTOCOL_HANDLERS[act](parts, child)
            elif act < _A_UNDEFINED:  # any other namespace: allowed by the XSD's ##other
                pos = _A_FOREIGN
                _read_extension(parts, child, act, off)
            else:
                self._unknown_child(child, _UNKNOWN_WHY[act])
        return parts.entry(self._entry_kind, el.sourceline + off, off)

    def _unknown_child(self, child: Any, why: str) -> None:
        name = _local(child.tag)
        entry = _local(self._entry_tag)
        if why == "not defined":
            msg = f"<{name}> is not defined inside <{entry}>"
        elif why == "no namespace":
            msg = f"<{name}> inside <{entry}> has no namespace"
        elif why == "repeated":
            msg = f"<{name}> appears more than once in one <{entry}> (the first is used)"
        else:
            return self._out_of_order(name, entry, child.sourceline + self._line_offset)
        self._find("element-unknown", msg, line=child.sourceline + self._line_offset)

    def _out_of_order(self, name: str, entry: str, line: int) -> None:
        """Counted, not reported one by one: a generator that orders children its own way
        does so in every entry (_report_disorder says it once)."""
        self._disorder += 1
        if self._disorder == 1:
            order = ", ".join(_PROTOCOL_NAMES[: self._max_order + 1])
            first = f"<{name}> inside <{entry}> (expected {order}, then extensions)"
            self._disorder_first = (first, line)

    def _report_disorder(self) -> None:
        if not self._disorder:
            return
        first, line = self._disorder_first
        n, self._disorder = self._disorder, 0
        what = "a child" if n == 1 else f"{n:,} children"
        self._find(
            "element-unknown",
            f"{what} out of order, the first at line {line}: {first}",
            line=line,
        )

    def _rss_entry(self, el: Any) -> Entry:
        loc = lastmod = None
        loc_line = 0
        for child in el:
            tag = child.tag
            if tag == "link" and loc is None:
                loc = child.text or ""
                loc_line = child.sourceline
            elif tag == "pubDate" and lastmod is None:
                lastmod = (child.text or "").strip()
        return Entry("url", loc, (loc_line or el.sourceline) + self._line_offset, lastmod)

    def _atom_entry(self, el: Any) -> Entry:
        loc = lastmod = None
        loc_line = 0
        ns = self._own_ns
        link_tag, updated_tag = f"{{{ns}}}link", f"{{{ns}}}{_ATOM_DATES[ns]}"
        for child in el:
            tag = child.tag
            if tag == link_tag and loc is None:
                if _is_alternate_link(child):
                    loc = child.get("href")
                    loc_line = child.sourceline
            elif tag == updated_tag and lastmod is None:
                lastmod = (child.text or "").strip()
        return Entry("url", loc, (loc_line or el.sourceline) + self._line_offset, lastmod)

    def _xml_close(self) -> None:
        if self._main is None and not self._probe_close():
            return
        try:
            whole = self._main.close()
        except etree.XMLSyntaxError as exc:
            self._events()
            if self._cut:
                return self._stop()
            return self._malformed(exc)
        self._events()
        # no entry event at all (every child unknown): the parser's tree is the root
        self._check_rest(self._root if self._root is not None else whole)
        self._stop()

    def _probe_close(self) -> bool:
        """End of input before the main parser started; whether it has started now."""
        self._probe_feed(b"", final=True)
        return not self.stopped and self._main is not None

    def _check_rest(self, root: Any) -> None:
        """Whatever follows the last entry in a urlset or sitemapindex."""
        if root is not None and self.kind in ("urlset", "sitemapindex"):
            for child in root:
                if child is not self._kept:
                    self._check_top(child)

    def _malformed(self, error: etree.XMLSyntaxError) -> None:
        code, line, col, msg = self._first_error(error)
        line = line or 0
        col = col if col is not None and col >= 0 else 0
        mark = len(self._out)
        if code == 81 or (code == 9 and "encoding" in msg.lower()):
            self._find(
                "sitemap-encoding",
                f"bytes that are not valid UTF-8 at line {line + self._line_offset}, "
                f"column {col + 1} ({msg.split(', line ')[0]})",
                line=line + self._line_offset,
                column=col + 1,
            )
        else:
            where = line + self._line_offset if line else None
            self._find(
                "sitemap-xml-malformed",
                f"not well-formed XML at line {where}, column {col + 1}: {_plain(code, msg)}",
                line=where,
                column=col + 1,
            )
        self._xml_failed(mark)

    def _first_error(self, error: etree.XMLSyntaxError) -> tuple[int, Any, Any, str]:
        """(code, line, column, message) of the error that broke the parse."""
        exc: Any = error  # lxml-stubs lack .code and an iterable error_log
        # With resolve_entities=False lxml swallows an undefined-entity error and
        # later reports a bogus one; the log still holds the real first error.
        if self._has_doctype:
            for entry in exc.error_log:
                if entry.type_name == "ERR_UNDECLARED_ENTITY":
                    return 26, entry.line, entry.column - 1, entry.message
        return exc.code, exc.lineno, exc.offset, exc.msg

    def _xml_failed(self, mark: int) -> None:
        """The XML broke (findings from `mark` on say how). In gzip data the garbage of a
        corrupt deflate stream is often what broke it: the rest of the stream is inflated
        (and counted, not parsed) first, and a gzip fault or the size limit met there is
        the finding instead (_gzip_failed drops these; _stop gives them)."""
        if not self._inflater.gzip_layers or self._cut:
            return self._stop()
        self._pending, self._out[mark:] = self._out[mark:], []
        self._state = _State.DONE  # _route passes nothing on now
        self._main = self._probe = None
        self._root = self._last = self._kept = self._newest = None

    # --- text sitemaps -----------------------------------------------------------

    def _text_feed(self, data: bytes) -> None:
        end = data.rfind(b"\n")
        if end < 0:
            # The line goes on: keep the piece; joining only at the line's end keeps a
            # huge single line linear instead of quadratic.
            self._text_parts.append(data)
            return
        block = data[: end + 1]
        if self._text_parts:
            block = b"".join([*self._text_parts, block])
        rest = data[end + 1 :]
        self._text_parts = [rest] if rest else []
        self._text_lines(block)

    def _text_lines(self, block: bytes) -> None:
        """Each whole line of `block` (which ends with a line break)."""
        for raw in block.split(b"\n")[:-1]:
            self._text_line += 1
            self._text_one(raw)
            if self.stopped:
                return

    def _text_close(self) -> None:
        if self._text_parts and not self._cut:  # a line cut off by the network is not a URL
            self._text_line += 1
            self._text_one(b"".join(self._text_parts))
        self._text_parts = []
        self._stop()

    def _text_one(self, raw: bytes) -> None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip():
            return
        line = self._text_line
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._text_not_utf8(line, exc.start + 1)
        if _URL_LINE_RE.fullmatch(text.strip()) is None:
            return self._invalid_line(text, line)
        self._out.append(Entry("url", text, line))
        self.entries += 1

    def _text_not_utf8(self, line: int, column: int) -> None:
        self._find(
            "sitemap-encoding",
            f"bytes that are not valid UTF-8 at line {line}, column {column}",
            line=line,
            column=column,
        )
        self._stop()

    def _invalid_line(self, text: str, line: int) -> None:
        shown = text if len(text) <= 80 else text[:77] + "..."
        self._find(
            "text-sitemap-invalid-line",
            f"line {line} is not one absolute http(s) URL: {shown!r}",
            line=line,
        )


class _EntryParts:
    """What the careful path collects for one entry, one handler per kind of child."""

    __slots__ = (
        "alternates",
        "changefreq",
        "images",
        "lastmod",
        "loc",
        "loc_line",
        "news",
        "priority",
        "videos",
    )

    def __init__(self) -> None:
        self.loc: str | None = None
        self.loc_line = 0
        self.lastmod: str | None = None
        self.changefreq: str | None = None
        self.priority: str | None = None
        self.images: list[Image] | None = None
        self.videos: list[Video] | None = None
        self.news: list[News] | None = None
        self.alternates: list[Alternate] | None = None

    def add_loc(self, child: Any) -> None:
        # An unexpanded entity reference splits the text: show it whole.
        self.loc = (child.text or "") if len(child) == 0 else "".join(child.itertext())
        self.loc_line = child.sourceline

    def add_lastmod(self, child: Any) -> None:
        self.lastmod = (child.text or "").strip()

    def add_changefreq(self, child: Any) -> None:
        self.changefreq = (child.text or "").strip()

    def add_priority(self, child: Any) -> None:
        self.priority = (child.text or "").strip()

    def add_image(self, child: Any, line: int) -> None:
        if self.images is None:
            self.images = []
        self.images.append(_image(child, line))

    def add_video(self, child: Any, line: int) -> None:
        if self.videos is None:
            self.videos = []
        self.videos.append(Video(line, _fields(child)))

    def add_news(self, child: Any, line: int) -> None:
        if self.news is None:
            self.news = []
        self.news.append(News(line, _fields(child)))

    def add_link(self, child: Any, line: int) -> None:
        if (child.get("rel") or "").strip().lower() != "alternate":
            return  # xhtml:link is hreflang only with rel="alternate"
        if self.alternates is None:
            self.alternates = []
        self.alternates.append(Alternate(child.get("hreflang"), child.get("href"), line))

    def entry(self, kind: Any, el_line: int, off: int) -> Entry:
        """The Entry; its line is the line of <loc>, else `el_line` (already offset)."""
        return Entry(
            kind,
            self.loc,
            self.loc_line + off if self.loc_line else el_line,
            self.lastmod,
            self.changefreq,
            self.priority,
            self.images,
            self.videos,
            self.news,
            self.alternates,
        )


# The careful path's handlers, by the action of a child's tag (StreamParser._action).
_PROTOCOL_HANDLERS: tuple[Callable[[_EntryParts, Any], None], ...] = (
    _EntryParts.add_loc,  # _A_LOC
    _EntryParts.add_lastmod,  # _A_LASTMOD
    _EntryParts.add_changefreq,  # _A_CHANGEFREQ
    _EntryParts.add_priority,  # _A_PRIORITY
)
_EXTENSION_HANDLERS: dict[int, Callable[[_EntryParts, Any, int], None]] = {
    _A_IMAGE: _EntryParts.add_image,
    _A_VIDEO: _EntryParts.add_video,
    _A_NEWS: _EntryParts.add_news,
    _A_XHTML: _EntryParts.add_link,
}
_UNKNOWN_WHY = {_A_UNDEFINED: "not defined", _A_NO_NS: "no namespace"}


def _read_extension(parts: _EntryParts, child: Any, act: int, off: int) -> None:
    """A child in another namespace: taken by its handler, if it is one that is read."""
    handler = _EXTENSION_HANDLERS.get(act)
    if handler is not None:  # None: a foreign element nobody reads
        handler(parts, child, child.sourceline + off)


# Slots of the children StreamParser._sitemap_events reads itself, in XSD order; a child
# whose slot is below the position reached so far (repeated, out of order, or anything
# else: _F_OTHER) sends the entry down the careful path.
_F_OTHER, _F_LOC, _F_LASTMOD, _F_CHANGEFREQ, _F_PRIORITY, _F_IMAGE = -1, 0, 1, 2, 3, 4


def _image(el: Any, line: int) -> Image:
    """An <image:image>: its first <image:loc> and the deprecated children it has."""
    loc = None
    deprecated: list[str] = []
    for child in el.getchildren():
        tag = child.tag
        if tag == _IMAGE_LOC:  # the usual (often only) child: no name splitting
            if loc is None:
                loc = child.text or ""
            continue
        if tag.__class__ is not str or _ns(tag) != IMAGE_NS:
            continue
        name = _local(tag)
        if name == "loc" and loc is None:
            loc = child.text or ""
        elif name in _IMAGE_DEPRECATED and name not in deprecated:
            deprecated.append(name)
    return Image(loc, line, deprecated)


def _fields(el: Any) -> dict[str, str]:
    """Every descendant of a video/news element: local name -> text (first wins).

    Attributes are kept as "name@attribute" (e.g. "restriction@relationship").
    Only elements of the extension's own namespace count.
    """
    ns = _ns(el.tag)
    fields: dict[str, str] = {}
    for child in el.iterdescendants():
        tag = child.tag
        if tag.__class__ is not str or _ns(tag) != ns:
            continue
        name = _local(tag)
        if name not in fields:
            _add_field(fields, name, child)
    return fields


def _add_field(fields: dict[str, str], name: str, el: Any) -> None:
    """`el`'s text (unless it only holds other elements) and its attributes, as `name`."""
    text = (el.text or "").strip()
    if text or len(el) == 0:
        fields[name] = text
    for attr, value in el.attrib.items():
        fields.setdefault(f"{name}@{_local(attr)}", value)


class ParsedFile:
    """Iterate a local sitemap file's entries and findings; `parser` holds the rest."""

    def __init__(
        self, path: str | os.PathLike[str], source: str | None = None, chunk_size: int = 65536
    ) -> None:
        self.path = os.fspath(path)
        self.parser = StreamParser(source if source is not None else self.path)
        self._chunk_size = chunk_size
        self._iter = self._run()

    def __iter__(self) -> Iterator[Entry | Finding]:
        return self

    def __next__(self) -> Entry | Finding:
        return next(self._iter)

    def _run(self) -> Iterator[Entry | Finding]:
        parser = self.parser
        with open(self.path, "rb") as fh:
            while not parser.stopped:
                chunk = fh.read(self._chunk_size)
                if not chunk:
                    break
                yield from parser.feed(chunk)
        yield from parser.close()


def parse_file(
    path: str | os.PathLike[str], source: str | None = None, chunk_size: int = 65536
) -> ParsedFile:
    """Parse a local sitemap file (plain or gzip) in chunks.

    The result is an iterator of Entry | Finding; its `.parser` is the
    StreamParser, with final kind/gzip/bytes/entries once iteration ends.
    `source` names the sitemap in findings (default: the path).
    """
    return ParsedFile(path, source, chunk_size)
