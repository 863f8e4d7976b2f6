"""XML documents through lxml's pull parser, and the dispatcher to the format readers.

A throw-away probe parser finds the root element and any DOCTYPE; the root picks the
format reader (urlset.py for <urlset> and <sitemapindex>, feeds.py for RSS and Atom);
then the same bytes are replayed into the main parser, which only reports the `end`
of the reader's entry elements. Malformed XML is put in plain words here.

Entities are never expanded or fetched: DOCTYPE / ENTITY declarations are a finding
(`sitemap-doctype`), the main parser then runs with `resolve_entities=False`. A
document without a DOCTYPE declares no entities, so there the main parser uses
`resolve_entities="internal"` instead, which expands the same nothing but lets lxml
report an undefined entity such as `&nbsp;` correctly (with `False`, lxml deliberately
ignores that error and the parser then fails later with a misleading message and
position).
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from audit.sitemap.doc import ATOM_NS, Doc, local, ns_of
from audit.sitemap.feeds import ATOM_DATES, Atom, FeedReader, Rss
from audit.sitemap.inflate import Inflater
from audit.sitemap.urlset import UrlsetReader

FormatReader = UrlsetReader | FeedReader

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
# The entry tags asked for when no root was found (the parse is about to fail).
_ANY_ENTRY = ("{*}url", "{*}sitemap", "item", f"{{{ATOM_NS}}}entry")
# The feed formats by their root's tag: RSS, and Atom in each namespace it has had.
_FEEDS: dict[str, Rss | Atom] = {
    "rss": Rss(),
    **{f"{{{ns}}}feed": Atom(ns) for ns in ATOM_DATES},
}


def _plain(code: int, message: str) -> str:
    """A parse error in plain words. libxml2's own safety limits name parser options and
    functions no user can set, so their words are replaced, not quoted."""
    if "amplification" in message:
        return "entity expansion too large (a 'billion laughs' document), refused"
    depth = _DEPTH.search(message)
    if depth:
        return f"element nesting depth over {depth.group(1)} levels, refused"
    if code == _RESOURCE_LIMIT or "XML_PARSE_HUGE" in message:
        return "a text, name or whitespace run of more than 10,000,000 bytes"
    words = _PLAIN_ERRORS.get(code)
    message = message.split(", line ")[0].strip()
    return f"{words} ({message})" if words else message


class XmlReader:
    """One XML document, fed in pieces: probe, then the format reader's main parse.
    `inflater`: the document's, whose gzip layers decide what a parse error means
    (_malformed)."""

    def __init__(self, doc: Doc, inflater: Inflater) -> None:
        self.doc = doc
        self._inflater = inflater
        self._probe: Any = etree.XMLPullParser(
            events=("start",),
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
        )
        self._probe_buf: list[bytes] = []
        self._main: Any = None
        self._format: FormatReader | None = None
        self._has_doctype = False

    def feed(self, data: bytes) -> None:
        if self._probe is not None:
            self._probe_feed(data, final=False)
            return
        if self._main is None:  # nothing is parsed any more (_drop)
            return
        try:
            self._main.feed(data)
        except etree.XMLSyntaxError as exc:
            self._events()
            return self._malformed(exc)
        self._events()

    def close(self) -> None:
        if self._probe is not None:  # end of input before the main parser started
            self._probe_feed(b"", final=True)
        if self._main is None:  # nothing is parsed any more (_drop)
            return
        try:
            whole = self._main.close()
        except etree.XMLSyntaxError as exc:
            self._events()
            if self.doc.cut:
                return self.doc.stop()
            return self._malformed(exc)
        self._events()
        if self._format is not None:
            self._format.close(whole)
        self.doc.stop()

    def report(self) -> None:
        """The end-of-document findings of the format reader; then the parsers go."""
        if self._format is not None:
            self._format.report()
        self._drop()

    def _drop(self) -> None:
        """Nothing more is parsed: at the end of the document (doc.stop reports, so every
        stop comes here), or when the XML broke in gzip data (_malformed)."""
        self._main = self._probe = self._format = None

    def _probe_feed(self, data: bytes, final: bool) -> None:
        """Find the root and any DOCTYPE before the real parse starts; then start the main
        parser, fed what the probe saw."""
        self._probe_buf.append(data)
        root, failed = self._probe_root(data, final)
        if root is None and not final and not failed:
            return
        self._probe = None
        careful = True  # a DOCTYPE, or no root found: the careful settings apply
        if root is not None:
            careful = self._check_prolog(root)
            if self.doc.stopped:
                return
        self._has_doctype = careful
        if careful:
            etree.clear_error_log()  # see _first_error
        # lxml-stubs predate resolve_entities="internal" (lxml >= 5)
        resolve: Any = False if careful else "internal"
        self._main = etree.XMLPullParser(
            events=("end",),
            tag=self._format.tags() if self._format is not None else _ANY_ENTRY,
            resolve_entities=resolve,
            no_network=True,
            load_dtd=False,
            # Without a DOCTYPE no entity exists to expand, so lifting libxml2's 10 MB text
            # limit risks nothing: the 50 MiB limit (StreamParser's) decides, and a valid
            # document padded with whitespace is judged by its size, as it should be.
            huge_tree=not careful,
        )
        buf, self._probe_buf = b"".join(self._probe_buf), []
        self.feed(buf)

    def _probe_root(self, data: bytes, final: bool) -> tuple[Any, bool]:
        """(the root element once the probe has seen it, else None; whether the probe
        failed: the main parser will meet the same error and report it)."""
        failed = False
        try:
            self._probe.feed(data)  # b"" (at the end) changes nothing
            if final:
                self._probe.close()
        except etree.XMLSyntaxError:
            failed = True
        for _event, el in self._probe.read_events():
            return el, failed
        return None, failed

    def _check_prolog(self, root: Any) -> bool:
        """Classify the root element; report DOCTYPE. Return whether a DTD exists."""
        docinfo = root.getroottree().docinfo
        line = (root.sourceline or 1) + self.doc.line_offset
        has_doctype = bool(docinfo.doctype) or docinfo.internalDTD is not None
        tag = root.tag
        if local(tag).lower() == "html":
            self.doc.is_html = True
            self.doc.find("sitemap-is-html", "an HTML (XHTML) page, not a sitemap", line=line)
            self.doc.stop()
            return has_doctype
        if has_doctype:
            self._report_doctype(docinfo)
        self._format = self._pick(tag, line, has_doctype)
        return has_doctype

    def _pick(self, tag: str, line: int, has_doctype: bool) -> FormatReader | None:
        """The dispatcher: the format reader for the root's tag; a root of no sitemap kind
        is reported and stops the parse."""
        name = local(tag)
        if name in ("urlset", "sitemapindex"):
            return UrlsetReader(self.doc, ns_of(tag), name, line, careful=has_doctype)
        feed = _FEEDS.get(tag)
        if feed is not None:
            return FeedReader(self.doc, feed)
        self.doc.find(
            "sitemap-root-invalid",
            f"root element <{tag}> is not urlset or sitemapindex (nor RSS/Atom)",
            line=line,
        )
        self.doc.stop()
        return None

    def _report_doctype(self, docinfo: Any) -> None:
        """sitemap-doctype, naming the entities it declares (at most 5) and any external DTD."""
        dtd = docinfo.internalDTD  # the entities it declares: name, SYSTEM url if external
        names = [
            f"{ent.name} SYSTEM {ent.system_url!r}" if ent.system_url else ent.name
            for ent in (() if dtd is None else dtd.iterentities())
        ]
        extra = f" declaring entities {', '.join(names[:5])}" if names else ""
        if len(names) > 5:
            extra += f" and {len(names) - 5} more"
        external = f" (external DTD {docinfo.system_url!r})" if docinfo.system_url else ""
        self.doc.find(
            "sitemap-doctype",
            f"a DOCTYPE{external}{extra}: ignored, entities are never expanded or fetched",
            line=1 + self.doc.line_offset,
        )

    def _events(self) -> None:
        """The events of the main parser (feed and close call this only while it exists)."""
        main = self._main
        if self._format is not None:
            self._format.feed(main.read_events())
        else:  # drained: no root known, the parse is about to fail
            list(main.read_events())

    def _malformed(self, error: etree.XMLSyntaxError) -> None:
        code, line, col, msg = self._first_error(error)
        line = line or 0
        col = max(col or 0, 0)
        doc = self.doc
        off = doc.line_offset
        mark = len(doc.items)
        if code == 81 or (code == 9 and "encoding" in msg.lower()):
            doc.find(
                "sitemap-encoding",
                f"bytes that are not valid UTF-8 at line {line + off}, "
                f"column {col + 1} ({msg.split(', line ')[0]})",
                line=line + off,
                column=col + 1,
            )
        else:
            where = line + off if line else None
            doc.find(
                "sitemap-xml-malformed",
                f"not well-formed XML at line {where}, column {col + 1}: {_plain(code, msg)}",
                line=where,
                column=col + 1,
            )
        # In gzip data the garbage of a corrupt deflate stream is often what broke the XML:
        # the rest of the stream is inflated (and counted, not parsed) first, and a gzip
        # fault or the size limit met there is the finding instead (StreamParser drops the
        # one held back here on a gzip fault; stop gives it).
        if not self._inflater.gzip_layers or doc.cut:
            return doc.stop()
        doc.pending, doc.items[mark:] = doc.items[mark:], []
        self._drop()

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
