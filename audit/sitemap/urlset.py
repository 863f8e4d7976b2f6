"""The entries of a <urlset> or <sitemapindex>, as xmlpull.py's main parser reports them.

Plain entries are read in `UrlsetReader._events` itself (the hot path); anything
else goes to entries.py's careful path. Elements are freed as soon as they are
handled, so a 1,000,000-URL file needs no more memory than a 10-URL one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from audit.core.records import DocKind, Entry, Image
from audit.sitemap.doc import IMAGE_NS, SITEMAP_NS, Doc, local, ns_of
from audit.sitemap.entries import (
    A_CHANGEFREQ,
    A_PRIORITY,
    PROTOCOL_NAMES,
    EntryReader,
    read_image,
)

# a root's kind, and the name of its entries
_ROOTS: dict[str, tuple[DocKind, Literal["url", "sitemap"]]] = {
    "urlset": ("urlset", "url"),
    "sitemapindex": ("sitemapindex", "sitemap"),
}


def _namespace(ns: str) -> str:
    """A namespace in the words of the findings."""
    return f"namespace {ns!r}" if ns else "no namespace"


class UrlsetReader:
    """A <urlset> or <sitemapindex> in namespace `ns` (reported unless the sitemaps.org
    one). `careful`: a DOCTYPE may have declared entities (references split texts), so
    every entry takes the careful path."""

    def __init__(self, doc: Doc, ns: str, root_name: str, line: int, *, careful: bool) -> None:
        self.doc = doc
        self.kind, entry = _ROOTS[root_name]
        doc.kind = self.kind
        self._own_ns = ns
        prefix = f"{{{ns}}}" if ns else ""  # of a tag in the root's namespace
        self._entry_tag = prefix + entry
        self._entry_kind = entry
        self._root: Any = None
        self._kept: Any = None  # newest handled element, still attached
        self._handled = 0  # handled elements still attached to the root
        self._newest: Any = None  # newest handled entry
        self._foreign = 0  # entry elements in another namespace than the root's
        self._foreign_first: tuple[str, int] = ("", 0)
        self._careful = EntryReader(doc, self._entry_tag, entry, ns)
        # The tags read as entries, and those the main parser reports (tags()): the root's
        # own entry tag; under a root in a wrong namespace (reported once, at the root),
        # entries in no namespace or the sitemaps.org one are read as its own too, and the
        # parser reports entries in any namespace (_own_entries sorts them).
        self._entry_tags = frozenset({self._entry_tag})
        self._tags: tuple[str, ...] = (self._entry_tag,)
        own = [prefix + name for name in PROTOCOL_NAMES]
        image_tag = ""  # <image:image> where it is an extension of this document
        if entry == "sitemap":
            own[A_CHANGEFREQ] = own[A_PRIORITY] = ""  # not defined in <sitemap>
        elif ns != IMAGE_NS:
            image_tag = f"{{{IMAGE_NS}}}image"
        # The tags _events reads itself, in XSD order, then <image:image>; "" (never a tag)
        # marks what this kind lacks, and all of them when the entries are read carefully.
        tags = (*own, image_tag)
        self._fast_tags = ("",) * len(tags) if careful else tags
        if ns != SITEMAP_NS:
            doc.find(
                "sitemap-namespace",
                f'<{root_name}> has {_namespace(ns)}; expected xmlns="{SITEMAP_NS}"',
                line=line,
            )
            self._entry_tags = frozenset({self._entry_tag, entry, f"{{{SITEMAP_NS}}}{entry}"})
            self._tags = (self._entry_tag, f"{{*}}{entry}")

    def tags(self) -> tuple[str, ...]:
        """The tags the main parser reports. Only entry elements make events; anything else
        at the top level is checked when it is freed (_purge, close)."""
        return self._tags

    def feed(self, events: Any) -> None:
        """The entries of one feed() of the document, then the purge."""
        if self._own_ns != SITEMAP_NS:  # rare: entries may be in yet another namespace
            events = self._own_entries(events)
        self._events(events)
        self._purge()

    def close(self, whole: Any) -> None:
        """Whatever follows the last entry; `whole`: the root the main parser's close()
        returns (the element _root is once an event came; the parse succeeded, so there is
        one)."""
        for child in whole:
            if child is not self._kept:
                self._check_top(child)

    def report(self) -> None:
        """The findings counted over the whole document, once."""
        self._report_foreign()
        self._careful.report()

    def _own_entries(self, events: Any) -> Iterator[tuple[str, Any]]:
        """The events of the root's own entries; another namespace's (asked for in `tags`,
        so that even a document of nothing else is read) are emptied and left to
        _check_top."""
        entry_tags = self._entry_tags
        for event, el in events:
            if self._root is None:
                self._root = el.getroottree().getroot()
            if el.tag in entry_tags:
                yield event, el
            else:
                el.clear()

    def _events(self, events: Any) -> None:
        """The hot path: one <url>/<sitemap> per event, children walked once.

        A plain entry is read here (no call per entry): the protocol children (each once,
        in order, no comment or entity reference inside <loc>), then only <image:image>
        children; a child that is repeated, out of order or anything else sends the entry
        down the careful path (EntryReader.read). Tags are compared as strings, not looked
        up (a tag is a new string each time: a lookup hashes it; a mismatched length is
        one compare).
        getchildren() builds the children in one C call: about half the cost of iterating
        the element (lxml's child iterator is a Python-level object).
        """
        root = self._root
        t_loc, t_lastmod, t_changefreq, t_priority, t_image = self._fast_tags
        kind = self._entry_kind
        doc = self.doc
        off = doc.line_offset
        out = doc.items
        careful = self._careful.read
        n = 0
        newest = None
        for _event, el in events:
            if root is None:
                root = self._root = el.getroottree().getroot()
            if el.getparent() is not root:
                continue  # nested (e.g. an own-namespace <url> inside a <url>)
            n += 1  # only entry tags make events (see tags)
            newest = el
            loc = lastmod = changefreq = priority = None
            images: list[Image] | None = None
            loc_line = 0
            # the protocol children not passed yet ("": passed, so out of order from here)
            w_loc = t_loc
            w_lastmod = t_lastmod
            w_changefreq = t_changefreq
            w_priority = t_priority
            for child in el.getchildren():
                tag = child.tag
                if tag == w_loc and not len(child):  # len: a comment inside
                    loc = child.text or ""
                    loc_line = child.sourceline
                    w_loc = ""
                elif tag == w_lastmod:
                    lastmod = (child.text or "").strip()
                    w_loc = w_lastmod = ""
                elif tag == w_changefreq:
                    changefreq = (child.text or "").strip()
                    w_loc = w_lastmod = w_changefreq = ""
                elif tag == w_priority:
                    priority = (child.text or "").strip()
                    w_loc = w_lastmod = w_changefreq = w_priority = ""
                elif (
                    tag == t_image
                ):  # images may repeat; a protocol child after one is out of order
                    images = images if images is not None else []
                    images.append(read_image(child, child.sourceline + off))
                    w_loc = w_lastmod = w_changefreq = w_priority = ""
                else:  # repeated, out of order, another extension, a comment, unknown
                    out.append(careful(el))
                    break
            else:
                line = (loc_line or el.sourceline) + off
                out.append(Entry(kind, loc, line, lastmod, changefreq, priority, images))
        self._handled += n
        doc.entries += n
        if newest is not None:
            # Never a nested entry: its parent is still open and not a child of the root.
            self._newest = newest

    def _purge(self) -> None:
        """Free every handled element but the newest (libxml2 may still point near it).

        Root-level elements that never produced an event (foreign, unknown,
        comments) are checked before they go: only entry tags make events, so
        any other element before the newest entry is one of those.
        """
        root, newest = self._root, self._newest
        # (no entry yet: both None; an entry came: so did the root, in the same _events)
        if newest is self._kept:
            return
        idx = root.index(newest)
        if idx != self._handled - 1:
            entry_tag = self._entry_tag
            for child in root[:idx]:
                if child.tag != entry_tag:
                    self._check_top(child)
        del root[:idx]
        newest.clear()
        self._kept = newest
        self._handled = 1

    def _check_top(self, el: Any) -> None:
        """An element directly in urlset/sitemapindex that is not an entry: element-unknown
        when in the sitemap's namespaces or in none (any other namespace is an allowed
        extension)."""
        tag = el.tag
        if not isinstance(tag, str) or tag in self._entry_tags:
            return  # a comment or processing instruction; or read as an entry (_own_entries)
        ns = ns_of(tag)
        line = (el.sourceline or 0) + self.doc.line_offset
        if local(tag) == self._entry_kind and ns != self._own_ns:
            # counted (not read), one sitemap-namespace finding at the end (_report_foreign)
            self._foreign += 1
            if self._foreign == 1:
                self._foreign_first = (ns, line)
        elif ns in (self._own_ns, SITEMAP_NS):
            self.doc.find(
                "element-unknown",
                f"<{local(tag)}> is not defined inside <{self.kind}>",
                line=line,
            )
        elif not ns:
            self.doc.find(
                "element-unknown",
                f"<{tag}> has no namespace (inside <{self.kind}>)",
                line=line,
            )

    def _report_foreign(self) -> None:
        if not self._foreign:
            return
        (ns, line), n = self._foreign_first, self._foreign
        self._foreign = 0
        name = self._entry_kind
        what = f"a <{name}>" if n == 1 else f"{n:,} <{name}> elements"
        self.doc.find(
            "sitemap-namespace",
            f"{what} in {_namespace(ns)} inside <{self.kind}> in {_namespace(self._own_ns)}, "
            f"the first at line {line}: "
            f'not read as entries; put every element in xmlns="{SITEMAP_NS}"',
            line=line,
        )
