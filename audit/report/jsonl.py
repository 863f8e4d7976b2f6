"""jsonl writer: one JSON object a line, each record written as it arrives.

The source of truth of an audit (DESIGN.md "jsonl report"); every record type
passes through, known or not. Lines are compact JSON (no space after `,` and `:`),
the same whether the optional orjson (the `fast` extra: `pip install '.[fast]'`) encodes
them or the standard library does (only a float's exponent may be spelled
differently, 1e-7 / 1e-07); orjson is about ten times faster, which counts at one or
two records per checked URL. Imports nothing but the standard
library (and orjson when it is installed).
"""

from __future__ import annotations

import importlib
import json
from typing import Any, TextIO

_ORJSON: Any
try:
    _ORJSON = importlib.import_module("orjson")
except ImportError:
    _ORJSON = None
# datetimes and dataclasses go through default=str, as with the standard library;
# orjson appends the newline (cheaper than a str concatenation per line)
_ORJSON_OPTIONS: int = (
    _ORJSON.OPT_PASSTHROUGH_DATETIME
    | _ORJSON.OPT_PASSTHROUGH_DATACLASS
    | _ORJSON.OPT_APPEND_NEWLINE
    if _ORJSON
    else 0
)
# One encoder for the run: json.dumps with options builds a new encoder per call.
_STD_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode


# Line breaks to str.splitlines() and some JavaScript readers, valid raw inside a JSON
# string: written as escapes. Outside strings JSON never has them, so a plain replace is safe.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def dumps_line(record: dict[str, Any]) -> str:
    """One record as one line. U+0085, U+2028 and U+2029 are escaped so no reader splits it."""
    text: str | None = None
    if _ORJSON is not None:
        try:
            text = _ORJSON.dumps(record, default=str, option=_ORJSON_OPTIONS).decode()
        except TypeError:  # what orjson refuses (non-str keys, huge ints): the stdlib takes it
            text = None
    if text is None:
        text = _STD_ENCODE(record) + "\n"
    # Searching a str for a character wider than its widest is O(1): an ASCII line
    # costs nothing here. U+0085 is one byte wide in a latin-1 str, so it costs a scan.
    if not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text):
        text = text.translate(_LINE_BREAKS)
    return text


class JsonlWriter:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, record: dict[str, Any]) -> None:
        # One write per whole line, so a crash leaves only complete lines.
        self._stream.write(dumps_line(record))

    def close(self) -> None:
        self._stream.flush()
