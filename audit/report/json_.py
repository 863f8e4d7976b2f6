"""json writer: the whole audit as one JSON document.

`{"summary": {...}, "sitemaps": [...], "findings": [...], "urls": [...]}`, plus
`"hosts"` and `"other"` when such records came. Records arrive interleaved and
the summary comes last, so each list is spooled to its own temporary file and
the document is assembled at close: memory stays flat whatever the audit size.
The `rollup` records (contracts/nights.md 5) are not repeated: each sitemap object
gains its `"counts"` (sitemaps are spooled one a line, and read back at close).
Imports nothing from the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO, Any, TextIO

from audit.report import closes_once
from audit.report.aggregate import Aggregate

_CHUNK = 1 << 16


class Spool:
    """A JSON array written element by element to a temporary file (the json report's lists,
    the sarif report's results): `separator` goes between elements, and a comma and a line
    break then the elements' indent make an array `copy_to` writes one element a line."""

    def __init__(self, separator: str = ",\n    ") -> None:
        self.file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed in discard)
        self.count = 0
        self._separator = separator

    def add(self, record: dict[str, Any]) -> None:
        if self.count:
            self.file.write(self._separator)
        self.file.write(json.dumps(record, ensure_ascii=False, default=str))
        self.count += 1

    def lines(self) -> Iterator[str]:
        """The elements written, one JSON text each (a spool whose separator is a newline:
        JSON escapes every line break inside a text, so no line is blank)."""
        self.file.seek(0)
        for text in self.file:
            yield text.rstrip("\n")

    def copy_to(self, out: TextIO) -> None:
        """The array, each element on a line at the separator's indent, the closing bracket
        two spaces less."""
        out.write("[")
        if self.count:
            indent = self._separator.removeprefix(",")  # the line break and the indent
            out.write(indent)
            self.file.seek(0)
            shutil.copyfileobj(self.file, out, _CHUNK)
            out.write(indent[:-2])
        out.write("]")

    def discard(self) -> None:
        self.file.close()


# the record types kept in a list of their own: type -> the document's key (None: not
# spooled: summary and hosts come from the Aggregate, a rollup goes into its sitemap's
# object); any other type is spooled as "other"
_SPOOLED: dict[str, str | None] = {
    "sitemap": "sitemaps",
    "finding": "findings",
    "url": "urls",
    **dict.fromkeys(("summary", "hosts", "rollup")),
}
_LISTS = ("findings", "urls")  # the document's lists after "sitemaps", spooled as they came


class JsonWriter:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._agg = Aggregate(examples=0)
        self._spools = {
            "sitemaps": Spool("\n"),  # one a line: each gains its counts at close
            "findings": Spool(),
            "urls": Spool(),
            "other": Spool(),
        }

    def write(self, record: dict[str, Any]) -> None:
        self._agg.add(record)
        spooled = _SPOOLED.get(str(record.get("type")), "other")
        if spooled is not None:
            self._spools[spooled].add(record)

    @closes_once
    def close(self) -> None:
        out = self._stream
        try:
            summary = self._agg.summary_dict()
            out.write('{\n  "summary": ')
            out.write(json.dumps(summary, ensure_ascii=False, default=str))
            if self._agg.hosts is not None:
                out.write(',\n  "hosts": ')
                out.write(json.dumps(self._agg.hosts, ensure_ascii=False, default=str))
            out.write(',\n  "sitemaps": ')
            self._sitemaps_to(out)
            # "other" only when a record of another type came
            for key in ("findings", "urls", "other") if self._spools["other"].count else _LISTS:
                out.write(f',\n  "{key}": ')
                self._spools[key].copy_to(out)
            out.write("\n}\n")
            out.flush()
        finally:
            for spool in self._spools.values():
                spool.discard()

    def _sitemaps_to(self, out: TextIO) -> None:
        """The sitemap objects, each with the counts of its rollup record when one came,
        streamed from the spool."""
        # sitemap URL -> its (last) rollup record's counts
        counts_of = {r.url: r.record_counts for r in self._agg.rollups}
        out.write("[")
        sep = "\n    "
        for text in self._spools["sitemaps"].lines():
            if counts_of:  # (each line is a sitemap record: an object)
                record = json.loads(text)
                counts = counts_of.get(str(record.get("url")))
                if counts is not None:
                    text = json.dumps({**record, "counts": counts}, ensure_ascii=False, default=str)
            out.write(sep + text)
            sep = ",\n    "
        out.write("\n  ]" if sep != "\n    " else "]")
