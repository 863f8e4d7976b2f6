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

How a document is read (in one pass, memory flat), one module a step:

1. `StreamParser` (here): `Inflater` (inflate.py) undoes gzip by its magic bytes,
   at any depth; the inflated bytes are counted against max_bytes.
2. `Sniffer` (sniff.py) tells what the first bytes are: BOMs, leading whitespace,
   HTML, a text sitemap (first non-blank text is an http(s) URL), an encoding that
   is not UTF-8, or anything else that is not XML; and so which reader gets them.
3. A text sitemap goes to `TextReader` (text.py), one URL a line.
4. XML goes to `XmlReader` (xmlpull.py): lxml's pull parser, a probe for the root
   element and any DOCTYPE (entities are never expanded or fetched), and the
   dispatcher that picks the format reader by the root: `UrlsetReader` (urlset.py)
   for <urlset> and <sitemapindex>, with entries.py's careful path for entries
   that are not plain, or `FeedReader` with `Rss` or `Atom` (feeds.py).
   Each entry is built by walking its children once, and then freed with
   everything before it, so a 1,000,000-URL file needs no more memory than a
   10-URL one.

The parts share one `Doc` (doc.py): where items go, what is known so far, `stop`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from audit.core.records import DocKind, Entry, Finding
from audit.sitemap.doc import Doc
from audit.sitemap.inflate import GzipError, Inflater
from audit.sitemap.sniff import Sniffer
from audit.sitemap.text import TextReader
from audit.sitemap.xmlpull import XmlReader

__all__ = [
    "MAX_ENTRIES",
    "MAX_UNCOMPRESSED_BYTES",
    "ParsedFile",
    "StreamParser",
    "parse_file",
]

MAX_UNCOMPRESSED_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed
MAX_ENTRIES = 50_000  # sitemaps.org: 50,000 URLs per sitemap

_INFLATE_MARGIN = 1024  # the Inflater may hand over a little more; we count exactly
_INPUT_STEP = 16384  # bytes of input handed to the Inflater at once
_ROUTE_STEP = 1 << 20  # bytes of inflated data handed to lxml at once


class StreamParser:
    """Incremental sitemap parser; see the module docstring."""

    def __init__(self, source: str, *, max_bytes: int = MAX_UNCOMPRESSED_BYTES) -> None:
        self.source = source
        self.max_bytes = max_bytes
        self.compressed_bytes = 0
        self.uncompressed_bytes = 0
        self._inflater = Inflater(max_bytes + _INFLATE_MARGIN)
        self._doc = Doc(source, self._stop)
        self._sniffer = Sniffer(self._doc)
        self._reader: TextReader | XmlReader | None = None

    # --- public API ----------------------------------------------------------

    @property
    def kind(self) -> DocKind | None:
        return self._doc.kind

    @property
    def gzip(self) -> bool:
        """The bytes were gzip (at any depth): the inflater's layers never go away."""
        return self._inflater.gzip_layers > 0

    @property
    def entries(self) -> int:
        """Entries emitted so far."""
        return self._doc.entries

    @property
    def is_html(self) -> bool:
        return self._doc.is_html

    @property
    def stopped(self) -> bool:
        return self._doc.stopped

    @property
    def broken(self) -> bool:
        """A fault that stops reading was found (see `complete`)."""
        return self._doc.broken

    @property
    def complete(self) -> bool:
        """The document was read to its end: a sitemap was recognised, and neither the
        input broke off nor a fault stopped reading (gzip, size, encoding, HTML, root,
        XML); what was parsed before such a fault is kept but is not the whole list."""
        doc = self._doc
        return doc.kind is not None and not doc.cut and not doc.broken

    def feed(self, chunk: bytes) -> list[Entry | Finding]:
        self.compressed_bytes += len(chunk)
        # Small steps keep each inflated piece small (deflate reaches ~1000:1), so
        # memory stays low and a bomb is cut off after little work.
        step = _INPUT_STEP if self.gzip or not self.uncompressed_bytes else max(len(chunk), 1)
        doc = self._doc
        for start in range(0, len(chunk), step):
            if doc.stopped:
                break
            self._inflated(chunk[start : start + step])  # the whole chunk: no copy
        return doc.flush()

    def close(self, *, cut: bool = False) -> list[Entry | Finding]:
        """End of input. `cut`: the input broke off (a network failure the caller reports):
        what was complete is kept, and the unfinished tail (a partial line, element or gzip
        member) is dropped without a finding of its own; it is not the document's fault."""
        doc = self._doc
        doc.cut = cut
        if not doc.stopped:
            self._inflated(None, cut=cut)
        if not doc.stopped and self._sniffing():
            self._route(b"", final=True)
        if self._reader is not None:  # (a reader is only held while the document is read)
            self._reader.close()
        self._stop()  # (once more, when the reader stopped it: nothing is left to do)
        return doc.flush()

    # --- bytes in ----------------------------------------------------------------

    def _inflated(self, piece: bytes | None, *, cut: bool = False) -> None:
        """Pass on what the inflater makes of `piece` (None: the end of input, its last
        bytes); a gzip fault is the document's unless the input was cut."""
        try:
            data = self._inflater.close() if piece is None else self._inflater.feed(piece)
        except GzipError as exc:
            self._take(exc.partial)
            if not cut:
                self._gzip_failed(exc)
        else:
            self._take(data)

    def _sniffing(self) -> bool:
        """What the document is has still to be told (and may still be): no reader yet,
        asked only while the document is read, when a sniffer that finished without a
        reader has stopped it (see _route)."""
        return self._reader is None

    def _stop(self) -> None:
        """Doc.stop: the findings counted over the document, those held back, and nothing
        more is read. The only place a document stops, and it drops the reader (a second
        call finds nothing to report or add)."""
        doc = self._doc
        if self._reader is not None:
            self._reader.report()
        doc.items += doc.pending  # (none held: nothing added)
        doc.pending = []
        doc.stopped = True
        self._reader = None

    def _gzip_failed(self, exc: GzipError) -> None:
        doc = self._doc
        if doc.stopped:
            return
        if self._sniffing():
            # Decide on what did arrive, so complete entries before the fault count;
            # the cut-off document itself is not reported a second time as malformed
            # (nor as empty: Sniffer._no_document).
            self._sniffer.gzip_broken = True
            self._route(b"", final=True)
        if not doc.stopped:
            doc.pending = []  # what the garbage did to the XML is not the cause
            doc.find("sitemap-gzip-invalid", str(exc))
            self._stop()

    def _take(self, data: bytes) -> None:
        """Count inflated bytes against the limit and pass them on; only while the document
        is read (_inflated takes one piece, and feed and close look before each)."""
        room = self.max_bytes - self.uncompressed_bytes  # >= 0 until stopped
        over = len(data) > room
        data = data[:room]  # all of it (the same object) when within the limit
        self.uncompressed_bytes += len(data)
        # libxml2 refuses a single push of more than 10 MB without XML_PARSE_HUGE.
        for start in range(0, len(data), _ROUTE_STEP):
            if self._doc.stopped:
                break
            self._route(data[start : start + _ROUTE_STEP])
        if over:  # reported even when the bytes before the limit were already judged
            self.uncompressed_bytes += 1  # at least one byte beyond the limit was seen
            self._doc.find(
                "sitemap-too-large",
                f"more than {self.max_bytes:,} bytes uncompressed: parsing stopped there",
            )
            self._stop()

    # --- the dispatcher: which reader gets the bytes ----------------------------------

    def _route(self, data: bytes, final: bool = False) -> None:
        """Bytes to the reader; before there is one, to the sniffer, which picks it (once
        it can tell, with the bytes it held back) or refuses the document. Called only while
        the document is read (the callers look first), when a sniffer without a reader is
        still undecided: every way it finishes without one stops the document, a refusal
        at once, an empty document with the last bytes (close and _gzip_failed stop it)."""
        if self._reader is None:
            decided = self._sniffer.feed(data, final)
            if decided is None:
                return
            what, data = decided
            self._reader = (
                TextReader(self._doc) if what == "text" else XmlReader(self._doc, self._inflater)
            )
        self._reader.feed(data)


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
