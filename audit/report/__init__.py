"""Report writers: one per `--format`, all behind the same two-method protocol.

A writer consumes the record dicts of DESIGN.md's jsonl format (`sitemap`,
`url`, `finding`, `summary`, and `hosts`; other types are ignored, jsonl
passes them through) in the order the audit produces them, and `close()`
finishes a valid document even when no record came or the summary is missing
(an interrupted run: the summary is then computed from what was seen). No
writer keeps every url record: they stream (jsonl, csv), spool to temporary
files (json, junit, sarif) or keep counters and a bounded number of examples
(text, markdown, html).

`read_jsonl` and `convert` turn a saved jsonl report into any format
(`sitemap-audit report REPORT.jsonl --format F`).

Imports nothing from the crawl, HTTP or parser layers: writers see dicts only.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import weakref
from collections.abc import Callable, Iterator
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, TextIO, TypeVar

from audit.report.aggregate import (
    FAIL_ON_LEVELS,
    Aggregate,
    at_or_above,
    fails,
    worst_severity,
)

__all__ = [
    "FAIL_ON_LEVELS",
    "FORMATS",
    "ReportInputError",
    "ReportWriter",
    "Sections",
    "at_or_above",
    "closes_once",
    "convert",
    "fails",
    "make_writer",
    "read_jsonl",
    "shown_sections",
    "worst_severity",
]

FORMATS: tuple[str, ...] = ("text", "json", "jsonl", "csv", "junit", "sarif", "markdown", "html")
# format -> (module, writer class, the keyword options it takes)
_WRITERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "text": ("audit.report.text", "TextWriter", ("fail_on", "examples")),
    "json": ("audit.report.json_", "JsonWriter", ()),
    "jsonl": ("audit.report.jsonl", "JsonlWriter", ()),
    "csv": ("audit.report.csv_", "CsvWriter", ("bom",)),
    "junit": ("audit.report.junit", "JunitWriter", ("fail_on",)),
    "sarif": ("audit.report.sarif", "SarifWriter", ("fail_on",)),
    "markdown": ("audit.report.markdown", "MarkdownWriter", ("fail_on", "examples")),
    "html": ("audit.report.html", "HtmlWriter", ("fail_on", "max_rows_per_code")),
}


class ReportWriter(Protocol):
    def write(self, record: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


_W = TypeVar("_W")
_S = TypeVar("_S")

# A writer's sections after migrate's table (order as data, STYLE lesson 20): what each
# shows, read from the summary (nothing to show: no section), and its renderer.
Sections = tuple[tuple[Callable[[dict[str, Any]], Any], Callable[..., _S]], ...]


def shown_sections(sections: Sections[_S], summary: dict[str, Any], *args: Any) -> list[_S]:
    """The sections that have something to show, in order, each rendered from the summary,
    what it shows and `args` (the writer's examples and escapes)."""
    return [render(summary, rows, *args) for shown, render in sections if (rows := shown(summary))]


def closes_once(close: Callable[[_W], None]) -> Callable[[_W], None]:
    """A writer's `close`, safe to call twice as a file's is: the second call does nothing
    (a library caller's sink may be closed by it and by a `finally`; writing the document
    twice would spoil it). Marked closed before it runs, so a close that fails is not
    tried again either."""
    closed: weakref.WeakSet[Any] = weakref.WeakSet()

    @functools.wraps(close)
    def once(writer: _W) -> None:
        if writer in closed:
            return
        closed.add(writer)
        close(writer)

    return once


class ReportInputError(ValueError):
    """A saved report that cannot be read; the message is one line naming file and line."""


def make_writer(
    fmt: str,
    stream: TextIO,
    *,
    fail_on: str = "error",
    examples: int = 10,
    max_rows_per_code: int = 200,
    csv_bom: bool = True,
) -> ReportWriter:
    """The writer for `fmt` (one of FORMATS), writing to `stream`.

    `fail_on` decides junit failures and the verdict shown; `examples` bounds
    the examples per code of text and markdown; `max_rows_per_code` bounds the
    html findings table; `csv_bom` starts csv with a UTF-8 BOM (for Excel).
    """
    if fail_on not in FAIL_ON_LEVELS:
        raise ValueError(
            f"unknown --fail-on level {fail_on!r}; use one of {', '.join(FAIL_ON_LEVELS)}"
        )
    if fmt not in _WRITERS:
        raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    # each writer's module is imported only when its format is used
    module, name, takes = _WRITERS[fmt]
    given = {
        "fail_on": fail_on,
        "examples": examples,
        "max_rows_per_code": max_rows_per_code,
        "bom": csv_bom,
    }
    writer: ReportWriter = getattr(import_module(module), name)(
        stream, **{option: given[option] for option in takes}
    )
    return writer


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a saved jsonl report, one dict per non-blank line.

    Raises ReportInputError ("PATH:LINE: ...") for a line that is not a JSON
    object with a string "type", and for a file that cannot be opened or is
    not UTF-8.
    """
    name = str(path)
    try:
        handle = open(path, encoding="utf-8-sig", newline="\n")  # noqa: SIM115
    except OSError as exc:
        raise ReportInputError(f"{name}: cannot read report: {exc.strerror or exc}") from exc
    with handle:
        lineno = 0
        try:
            # newline="\n": lines end at \n only (a CR before it is JSON whitespace).
            for lineno, line in enumerate(handle, 1):
                if line.strip():
                    yield _record(line, name, lineno)
        except UnicodeDecodeError as exc:
            raise ReportInputError(
                f"{name}: near line {lineno + 1}: not UTF-8 ({exc.reason})"
            ) from None


def _record(line: str, name: str, lineno: int) -> dict[str, Any]:
    """One line of a jsonl report: a JSON object with a string "type"."""
    try:
        record = json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise ReportInputError(
            f"{name}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
        ) from None
    if not isinstance(record, dict):
        raise ReportInputError(
            f"{name}:{lineno}: expected a JSON object, got {type(record).__name__}"
        )
    if not isinstance(record.get("type"), str):
        raise ReportInputError(f'{name}:{lineno}: record has no "type"')
    return record


def convert(src_path: str | Path, fmt: str, out_stream: TextIO, **opts: Any) -> dict[str, Any]:
    """Write the saved jsonl report `src_path` as `fmt` to `out_stream`.

    `opts` are make_writer's keyword options. Returns the report's summary
    record (computed from the records, with "partial": true, when the report
    has none) for the exit status. A file whose first record is not one (not a jsonl
    report at all) raises ReportInputError before anything is written; on a bad line
    further on, the document of the records read so far is still closed (valid), then
    ReportInputError is raised.
    """
    _refuse_overwrite(src_path, out_stream)
    records = read_jsonl(src_path)
    try:  # the first record, if any: not a jsonl report is the one-line error, no report
        first = list(itertools.islice(records, 1))
    except ReportInputError as exc:
        raise ReportInputError(
            f"{exc}; not a jsonl report (crawl and validate write one with --format jsonl)"
        ) from None
    writer = make_writer(fmt, out_stream, **opts)
    seen = Aggregate(examples=0)
    try:
        for record in itertools.chain(first, records):
            seen.add(record)
            writer.write(record)
    finally:
        writer.close()
    return seen.summary_dict()


def _refuse_overwrite(src_path: str | Path, out_stream: TextIO) -> None:
    """Opening the output may already have truncated the input: say so, once."""
    out_name = getattr(out_stream, "name", None)
    if not isinstance(out_name, str):
        return
    try:
        same = os.path.samefile(src_path, out_name)
    except OSError:
        return
    if same:
        raise ReportInputError(f"{src_path}: the report cannot be converted onto itself")
