"""RSS 2.0 and Atom (1.0 and 0.3) feeds, which sitemaps.org accepts as sitemaps: the URL
(<link>) and change date of each item or entry. Feeds are rarely large, so kept simple;
they have no unknown-element rule."""

from __future__ import annotations

from typing import Any

from audit.core.records import Entry
from audit.sitemap.doc import ATOM03_NS, ATOM_NS, Doc

ATOM_DATES = {ATOM_NS: "updated", ATOM03_NS: "modified"}  # the entry's change date


class _FeedReader:
    """What RSS and Atom share: each entry element in its place is read, then freed with
    everything before it."""

    entry_tag = ""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self._root: Any = None

    def tags(self) -> tuple[str, ...]:
        return (self.entry_tag,)

    def feed(self, events: Any) -> None:
        entry_tag = self.entry_tag
        doc = self.doc
        for _event, el in events:
            parent = el.getparent()
            if self._root is None:
                self._root = el.getroottree().getroot()
            if el.tag != entry_tag or not self._in_feed(parent):
                continue
            while el.getprevious() is not None:  # every sibling before `el` goes
                del parent[0]
            doc.items.append(self._entry(el))
            doc.entries += 1
            el.clear()

    def close(self, whole: Any) -> None:
        """Nothing is checked after the last entry of a feed."""

    def report(self) -> None:
        """No finding is counted over a whole feed."""

    def _in_feed(self, parent: Any) -> bool:
        raise NotImplementedError

    def _entry(self, el: Any) -> Entry:
        raise NotImplementedError


class RssReader(_FeedReader):
    """RSS: an <item> in <channel>; its <link> and <pubDate>."""

    entry_tag = "item"

    def __init__(self, doc: Doc) -> None:
        super().__init__(doc)
        doc.kind = "rss"

    def _in_feed(self, parent: Any) -> bool:
        return parent is not None and parent.tag == "channel"

    def _entry(self, el: Any) -> Entry:
        loc = lastmod = None
        loc_line = 0
        for child in el:
            tag = child.tag
            if tag == "link" and loc is None:
                loc = child.text or ""
                loc_line = child.sourceline
            elif tag == "pubDate" and lastmod is None:
                lastmod = (child.text or "").strip()
        return Entry("url", loc, (loc_line or el.sourceline) + self.doc.line_offset, lastmod)


class AtomReader(_FeedReader):
    """Atom: an <entry> in the root <feed> of namespace `ns` (1.0 or 0.3); its
    rel="alternate" <link> and its <updated> (1.0) or <modified> (0.3)."""

    def __init__(self, doc: Doc, ns: str) -> None:
        super().__init__(doc)
        doc.kind = "atom"
        self.entry_tag = f"{{{ns}}}entry"
        self._link_tag = f"{{{ns}}}link"
        self._updated_tag = f"{{{ns}}}{ATOM_DATES[ns]}"

    def _in_feed(self, parent: Any) -> bool:
        return parent is self._root

    def _entry(self, el: Any) -> Entry:
        loc = lastmod = None
        loc_line = 0
        for child in el:
            tag = child.tag
            if tag == self._link_tag and loc is None:
                if _is_alternate_link(child):
                    loc = child.get("href")
                    loc_line = child.sourceline
            elif tag == self._updated_tag and lastmod is None:
                lastmod = (child.text or "").strip()
        return Entry("url", loc, (loc_line or el.sourceline) + self.doc.line_offset, lastmod)


def _is_alternate_link(link: Any) -> bool:
    """An Atom <link> to the entry itself: rel="alternate", the default."""
    rel: str = link.get("rel") or "alternate"
    return rel.strip().lower() == "alternate"
