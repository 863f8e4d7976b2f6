"""What the parts of the sitemap parser share about one document.

`Doc` is handed by `StreamParser` (parser.py) to the sniffer (sniff.py) and to
the reader it picks (text.py, or xmlpull.py and its format readers urlset.py,
feeds.py): where items go, what is known of the document so far, and how to
stop. The namespaces and the two tag helpers every reader uses live here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audit.core.records import DocKind, Entry, Finding, finding

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
ATOM_NS = "http://www.w3.org/2005/Atom"
ATOM03_NS = "http://purl.org/atom/ns#"  # Atom 0.3, which sitemaps.org also accepts

ParseItem = Entry | Finding

# The findings after which a document is not read completely (contracts/nights.md 2 and 4).
UNREADABLE = frozenset(
    {
        "sitemap-gzip-invalid",
        "sitemap-too-large",
        "sitemap-encoding",
        "sitemap-is-html",
        "sitemap-root-invalid",
        "sitemap-xml-malformed",
    }
)


def local(tag: str) -> str:
    return tag.rpartition("}")[2]


def ns_of(tag: str) -> str:
    return tag[1:].partition("}")[0] if tag[:1] == "{" else ""


class Doc:
    """One document being parsed: the items not yet handed out, what is known of it, and
    `stop()` (the StreamParser's: end-of-document findings, then nothing more is read)."""

    __slots__ = (
        "broken",
        "cut",
        "entries",
        "is_html",
        "items",
        "kind",
        "line_offset",
        "pending",
        "source",
        "stop",
        "stopped",
    )

    def __init__(self, source: str, stop: Callable[[], None]) -> None:
        self.source = source
        self.stop = stop
        self.items: list[ParseItem] = []
        self.kind: DocKind | None = None
        self.is_html = False
        self.entries = 0  # entries emitted so far
        self.stopped = False
        self.broken = False  # a fault that stops reading was found (StreamParser.complete)
        self.cut = False  # close(cut=True): the input broke off
        self.line_offset = 0  # newlines stripped before what lxml/text sees
        self.pending: list[ParseItem] = []  # XML findings held back (XmlReader._malformed)

    def find(self, code: str, message: str, line: int | None = None, **kw: Any) -> None:
        if code in UNREADABLE:
            self.broken = True
        self.items.append(finding(code, message, sitemap=self.source, line=line, **kw))

    def flush(self) -> list[ParseItem]:
        out, self.items = self.items, []
        return out
