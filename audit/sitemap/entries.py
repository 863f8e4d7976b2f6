"""One <url> or <sitemap> read with care: its children against the XSD's sequence, and
its extensions (image, video, news, xhtml:link).

urlset.py reads plain entries itself (its fast path) and hands any other to
`EntryReader.read`; `read_image` is shared by both paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from lxml import etree

from audit.core.records import Alternate, Entry, Image, News, Video
from audit.sitemap.doc import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS, Doc, local, ns_of

# Actions for a child of an entry element, cached per tag string.
A_LOC, A_LASTMOD, A_CHANGEFREQ, A_PRIORITY = 0, 1, 2, 3
_A_FOREIGN = 4  # order slot of foreign-namespace children: after the protocol ones
_A_IMAGE, _A_VIDEO, _A_NEWS, _A_XHTML = 10, 11, 12, 13
_A_UNDEFINED, _A_NO_NS = 20, 21
PROTOCOL_NAMES = ("loc", "lastmod", "changefreq", "priority")
# The extensions a <url> may have that the careful path reads, by their tags.
_EXTENSION_ACTIONS = {
    f"{{{IMAGE_NS}}}image": _A_IMAGE,
    f"{{{VIDEO_NS}}}video": _A_VIDEO,
    f"{{{NEWS_NS}}}news": _A_NEWS,
    f"{{{XHTML_NS}}}link": _A_XHTML,
}
# What each kind of entry may hold: its protocol children, in the XSD's order, and the
# extensions the careful path reads (a <sitemap>: loc and lastmod, no extension).
_KINDS: dict[str, tuple[tuple[str, ...], dict[str, int]]] = {
    "url": (PROTOCOL_NAMES, _EXTENSION_ACTIONS),
    "sitemap": (PROTOCOL_NAMES[: A_LASTMOD + 1], {}),
}
_IMAGE_DEPRECATED = frozenset(
    f"{{{IMAGE_NS}}}{name}" for name in ("caption", "title", "geo_location", "license")
)
_IMAGE_LOC = f"{{{IMAGE_NS}}}loc"


class EntryReader:
    """The careful path for the entries of one urlset or sitemapindex, and the finding
    about children out of order that it counts (`report`, at the end of the document)."""

    def __init__(
        self, doc: Doc, entry_tag: str, entry_kind: Literal["url", "sitemap"], own_ns: str
    ) -> None:
        self.doc = doc
        self._entry_tag = entry_tag
        self._entry_kind = entry_kind
        self._own_ns = own_ns
        self._names, self._extensions = _KINDS[entry_kind]
        self._actions: dict[str, int] = {}
        # entries read as the root's own although in no namespace or the sitemaps.org one:
        # only under a root in a wrong namespace, their children in their own namespace
        self._alt_actions: dict[str, dict[str, int]] = {}
        self._disorder = 0  # children out of the XSD's order: one finding at the end
        self._disorder_first: tuple[str, int] = ("", 0)  # the first one's message and line

    def read(self, el: Any) -> Entry:
        """Every child checked against the XSD's sequence: a protocol child's text kept,
        an extension read by its reader in _EXTENSION_READERS."""
        actions, own_ns = self._actions, self._own_ns
        if el.tag != self._entry_tag:  # an alternative entry tag: children in its namespace
            own_ns = ns_of(el.tag)
            actions = self._alt_actions.setdefault(own_ns, {})
        off = self.doc.line_offset
        texts: list[str | None] = [None] * len(PROTOCOL_NAMES)  # by action: A_LOC...
        loc_line = el.sourceline  # the entry element's, until a <loc> gives its own
        found: dict[int, list[Any]] = {}  # extension action -> what its children made
        pos = -1
        seen = 0  # bit per protocol child met
        # elements only: no comment, processing instruction or entity reference
        for child in el.iterchildren(etree.Element):
            tag = child.tag
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
                if act == A_LOC:  # an unexpanded entity reference splits its text: whole
                    texts[A_LOC] = "".join(child.itertext()) if len(child) else (child.text or "")
                    loc_line = child.sourceline
                else:
                    texts[act] = (child.text or "").strip()
            elif act < _A_UNDEFINED:  # any other namespace: allowed by the XSD's ##other
                pos = _A_FOREIGN
                item = _EXTENSION_READERS[act](child, child.sourceline + off)
                if (
                    item is not None
                ):  # (an extension nobody reads; an xhtml:link, not rel=alternate)
                    found.setdefault(act, []).append(item)
            else:
                self._unknown_child(child, _UNKNOWN_WHY[act])
        loc, lastmod, changefreq, priority = texts
        return Entry(
            self._entry_kind,
            loc,
            loc_line + off,
            lastmod,
            changefreq,
            priority,
            found.get(_A_IMAGE),
            found.get(_A_VIDEO),
            found.get(_A_NEWS),
            found.get(_A_XHTML),
        )

    def report(self) -> None:
        """One finding for every child out of order (_unknown_child counted them)."""
        if not self._disorder:
            return
        first, line = self._disorder_first
        n, self._disorder = self._disorder, 0
        what = "a child" if n == 1 else f"{n:,} children"
        self.doc.find(
            "element-unknown",
            f"{what} out of order, the first at line {line}: {first}",
            line=line,
        )

    def _action(self, tag: str, own_ns: str) -> int:
        ns = ns_of(tag)
        if ns == own_ns:  # also a no-namespace document's own elements
            names, name = self._names, local(tag)
            return names.index(name) if name in names else _A_UNDEFINED
        if not ns:
            return _A_NO_NS
        if ns == SITEMAP_NS:
            return _A_UNDEFINED
        return self._extensions.get(tag, _A_FOREIGN)

    def _unknown_child(self, child: Any, why: str) -> None:
        name = local(child.tag)
        entry = local(self._entry_tag)
        line = child.sourceline + self.doc.line_offset
        message = _UNKNOWN_MESSAGES.get(why)
        if message is not None:
            self.doc.find("element-unknown", message.format(name=name, entry=entry), line=line)
            return
        # out of order: counted, not reported one by one: a generator that orders children
        # its own way does so in every entry (`report` says it once)
        self._disorder += 1
        if self._disorder == 1:
            order = ", ".join(self._names)
            first = f"<{name}> inside <{entry}> (expected {order}, then extensions)"
            self._disorder_first = (first, line)


_UNKNOWN_MESSAGES = {
    "not defined": "<{name}> is not defined inside <{entry}>",
    "no namespace": "<{name}> inside <{entry}> has no namespace",
    "repeated": "<{name}> appears more than once in one <{entry}> (the first is used)",
}
_UNKNOWN_WHY = {_A_UNDEFINED: "not defined", _A_NO_NS: "no namespace"}


def read_image(el: Any, line: int) -> Image:
    """An <image:image>: its first <image:loc> and the deprecated children it has."""
    loc = None
    deprecated: dict[str, None] = {}  # their names, each once, in order
    for child in el.getchildren():
        tag = child.tag
        if tag == _IMAGE_LOC and loc is None:  # the usual (often only) child
            loc = child.text or ""
        elif tag in _IMAGE_DEPRECATED:
            deprecated[local(tag)] = None
    return Image(loc, line, list(deprecated))


def _fields(el: Any) -> dict[str, str]:
    """Every descendant of a video/news element: local name -> text (first wins).

    Attributes are kept as "name@attribute" (e.g. "restriction@relationship").
    Only elements of the extension's own namespace count.
    """
    fields: dict[str, str] = {}
    for child in el.iterdescendants(f"{{{ns_of(el.tag)}}}*"):
        name = local(child.tag)
        if name in fields:
            continue
        # its text (unless it only holds other elements) and its attributes, as `name`
        text = (child.text or "").strip()
        if text or len(child) == 0:
            fields[name] = text
        for attr, value in child.attrib.items():
            fields.setdefault(f"{name}@{local(attr)}", value)
    return fields


def _alternate(el: Any, line: int) -> Alternate | None:
    """An <xhtml:link>: an alternate only with rel="alternate" (hreflang), else None."""
    if el.get("rel", "").strip().lower() != "alternate":
        return None
    return Alternate(el.get("hreflang"), el.get("href"), line)


# The careful path's readers of extensions, by the action of a child's tag
# (EntryReader._action): the child and its line in, the item of its Entry list out (None:
# nothing to keep).
_EXTENSION_READERS: dict[int, Callable[[Any, int], Image | Video | News | Alternate | None]] = {
    _A_FOREIGN: lambda el, line: None,  # any other extension: allowed, not read
    _A_IMAGE: read_image,
    _A_VIDEO: lambda el, line: Video(line, _fields(el)),
    _A_NEWS: lambda el, line: News(line, _fields(el)),
    _A_XHTML: _alternate,
}
