"""Text sitemaps: one absolute http(s) URL a line, UTF-8 (sitemaps.org)."""

from __future__ import annotations

import re

from audit.core.records import Entry
from audit.sitemap.doc import Doc

_URL_LINE_RE = re.compile(r"[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#]+\S*")


class TextReader:
    """The lines of a text sitemap, fed in pieces of any size."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc
        self._parts: list[bytes] = []  # the unfinished line, in pieces (never re-copied)
        self._line = doc.line_offset

    def feed(self, data: bytes) -> None:
        end = data.rfind(b"\n")
        if end < 0:
            # The line goes on: keep the piece; joining only at the line's end keeps a
            # huge single line linear instead of quadratic.
            self._parts.append(data)
            return
        block = b"".join([*self._parts, data[: end + 1]])  # one part: itself, not a copy
        rest = data[end + 1 :]
        self._parts = [rest]  # b"" when the data ended a line: a blank line, skipped
        for raw in block.split(b"\n")[:-1]:  # each whole line of the block
            self._line += 1
            self._one(raw)
            if self.doc.stopped:
                return

    def close(self) -> None:
        # the last line, if it did not end with a newline (else b"": a blank line, skipped);
        # a line cut off by the network is not a URL
        if not self.doc.cut:
            self._line += 1
            self._one(b"".join(self._parts))
        self._parts = []
        self.doc.stop()

    def report(self) -> None:
        """No finding is counted over a whole text sitemap."""

    def _one(self, raw: bytes) -> None:
        raw = raw.removesuffix(b"\r")
        if not raw.strip():
            return
        line = self._line
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            column = exc.start + 1
            self.doc.find(
                "sitemap-encoding",
                f"bytes that are not valid UTF-8 at line {line}, column {column}",
                line=line,
                column=column,
            )
            return self.doc.stop()
        if _URL_LINE_RE.fullmatch(text.strip()) is None:
            shown = text if len(text) <= 80 else text[:77] + "..."
            return self.doc.find(
                "text-sitemap-invalid-line",
                f"line {line} is not one absolute http(s) URL: {shown!r}",
                line=line,
            )
        self.doc.items.append(Entry("url", text, line))
        self.doc.entries += 1
