"""jsonl writer: one JSON object a line, each record written as it arrives.

The source of truth of an audit (DESIGN.md "jsonl report"); every record type
passes through, known or not. Imports nothing but the standard library.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

# One encoder for the run: json.dumps with options builds a new encoder per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def dumps_line(record: dict[str, Any]) -> str:
    """One record as one line. U+2028/2029 are escaped so no reader splits the line."""
    text = _ENCODE(record)
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text + "\n"


class JsonlWriter:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, record: dict[str, Any]) -> None:
        # One write per whole line, so a crash leaves only complete lines.
        self._stream.write(dumps_line(record))

    def close(self) -> None:
        self._stream.flush()
