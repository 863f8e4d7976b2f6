"""RSS 2.0 and Atom (1.0 and 0.3) feeds, which sitemaps.org accepts as sitemaps: the URL
(<link>) and change date of each item or entry. Feeds are rarely large, so kept simple;
they have no unknown-element rule. One `FeedReader`, and one small class per format."""

from __future__ import annotations

from typing import Any

from audit.core.records import DocKind, Entry
from audit.sitemap.doc import ATOM03_NS, ATOM_NS, Doc

ATOM_DATES = {ATOM_NS: "updated", ATOM03_NS: "modified"}  # the entry's change date


class FeedReader:
    """The entries of a feed of format `fmt` (`Rss` or `Atom`): each entry element in its
    place is read by the format, then freed with everything before it."""

    def __init__(self, doc: Doc, fmt: Rss | Atom) -> None:
        self.doc = doc
        self.fmt = fmt
        doc.kind = fmt.kind

    def tags(self) -> tuple[str, ...]:
        return (self.fmt.entry_tag,)

    def feed(self, events: Any) -> None:
        fmt, doc = self.fmt, self.doc
        for _event, el in events:  # the parser reports only fmt.entry_tag (tags())
            parent = el.getparent()
            if not fmt.in_feed(parent, el.getroottree().getroot()):
                continue
            while el.getprevious() is not None:  # every sibling before `el` goes
                del parent[0]
            doc.items.append(_entry(el, doc.line_offset, fmt))
            doc.entries += 1
            el.clear()

    def close(self, whole: Any) -> None:
        """Nothing is checked after the last entry of a feed."""

    def report(self) -> None:
        """No finding is counted over a whole feed."""


class Rss:
    """RSS: an <item> in <channel>; its <link> (the URL as text) and <pubDate>."""

    kind: DocKind = "rss"
    entry_tag = "item"
    link_tag = "link"
    date_tag = "pubDate"
    href = False

    def in_feed(self, parent: Any, root: Any) -> bool:
        # (an <item> always has a parent: the root is <rss>, XmlReader._pick)
        return bool(parent.tag == "channel")


class Atom:
    """Atom: an <entry> in the root <feed> of namespace `ns` (1.0 or 0.3); its
    rel="alternate" <link> and its <updated> (1.0) or <modified> (0.3)."""

    kind: DocKind = "atom"

    href = True  # the URL is the link's href

    def __init__(self, ns: str) -> None:
        self.entry_tag = f"{{{ns}}}entry"
        self.link_tag = f"{{{ns}}}link"
        self.date_tag = f"{{{ns}}}{ATOM_DATES[ns]}"

    def in_feed(self, parent: Any, root: Any) -> bool:
        return parent is root


def _entry(el: Any, off: int, fmt: Rss | Atom) -> Entry:
    """An item or entry: its first link (in Atom, the first to the entry itself:
    rel="alternate", the default) and its first change date."""
    loc = lastmod = None
    loc_line = el.sourceline  # until the link gives its own
    link_tag, date_tag = fmt.link_tag, fmt.date_tag
    for child in el:
        tag = child.tag
        if tag == link_tag and loc is None:
            if not fmt.href:
                loc = child.text or ""
            elif (child.get("rel") or "alternate").strip().lower() == "alternate":
                loc = child.get("href")
            else:
                continue
            loc_line = child.sourceline
        elif tag == date_tag and lastmod is None:
            lastmod = (child.text or "").strip()
    return Entry("url", loc, loc_line + off, lastmod)
