"""jsonl lines stay lines (issue 16.10): U+0085, U+2028 and U+2029 inside strings are
written as escapes, with orjson and with the standard library, so str.splitlines()
(and JavaScript readers) see one record a line; every record of a crawl's stream is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.report import jsonl
from tests.report.reportkit import run, stream

BREAKERS = "a\x85b\u2028c\u2029d"
RECORDS = [
    {"type": "finding", "code": "loc-invalid", "message": BREAKERS, "url": "https://e.test/\x85"},
    {"type": "url", "url": "https://e.test/\u2028", "title": "\u00e9t\u00e9 \u2029"},
    {"type": "summary", "note": "plain"},
]


def _write(path: Path) -> str:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = jsonl.JsonlWriter(fh)
        for record in RECORDS:
            writer.write(record)
        writer.close()
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("encoder", ["orjson", "stdlib"])
def test_splitlines_sees_one_record_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoder: str
) -> None:
    if encoder == "stdlib":
        monkeypatch.setattr(jsonl, "_ORJSON", None)
    elif jsonl._ORJSON is None:
        pytest.skip("orjson is not installed")
    text = _write(tmp_path / "report.jsonl")
    lines = text.splitlines()
    assert len(lines) == len(RECORDS)
    assert [json.loads(line) for line in lines] == RECORDS
    assert "\\u0085" in lines[0] and "\\u2028" in lines[0] and "\\u2029" in lines[0]


def test_plain_lines_are_unchanged() -> None:
    assert jsonl.dumps_line({"a": "caf\u00e9"}) == '{"a":"caf\u00e9"}\n'


def test_jsonl_writes_every_record_as_one_line() -> None:
    recs = stream()
    recs[7] = {**recs[7], "note": "line\u2028separator"}
    text = run("jsonl", recs)
    lines = text.split("\n")
    assert lines[-1] == ""
    assert [json.loads(line) for line in lines[:-1]] == recs
    assert "\u2028" not in text  # escaped: no reader may split the line there
