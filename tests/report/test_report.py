"""Report writers together (audit/report/__init__.py): the stream, make_writer, empty and
interrupted runs in every format, and report conversion. Each format's own tests are in
tests/report/test_<format>.py; the shared record stream is tests/report/reportkit.py."""

from __future__ import annotations

import io
import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lhtml

from audit.report import (
    FORMATS,
    ReportInputError,
    convert,
    fails,
    make_writer,
    read_jsonl,
    shown_sections,
    worst_severity,
)
from tests.report.reportkit import (
    ERRORS,
    INFOS,
    URL_RECORDS,
    WARNINGS,
    check_sarif,
    parse_junit,
    read_csv,
    run,
    stream,
    without_summary,
)


def test_the_stream_is_what_the_tests_assume() -> None:
    s = stream()[-1]
    assert s["urls"] == URL_RECORDS
    assert s["findings"] == {"error": ERRORS, "warning": WARNINGS, "info": INFOS}
    assert worst_severity(s) == "error"
    assert fails(s, "error") and fails(s, "info") and not fails(s, "never")
    assert worst_severity({"findings": {"error": 0, "warning": 0, "info": 3}}) == "info"
    assert not fails({"findings": {"error": 0, "warning": 0, "info": 3}}, "warning")


def test_unknown_format_and_level_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown report format 'xml'.*html"):
        make_writer("xml", io.StringIO())
    with pytest.raises(ValueError, match="--fail-on"):
        make_writer("text", io.StringIO(), fail_on="fatal")


# --- interrupted runs, empty runs -------------------------------------------


def parse_any(fmt: str, text: str) -> Any:
    if fmt == "json":
        return json.loads(text)
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    if fmt == "csv":
        return read_csv(text)
    if fmt == "junit":
        return parse_junit(text)
    if fmt == "sarif":
        doc = json.loads(text)
        check_sarif(doc)
        return doc
    if fmt == "html":
        return lhtml.fromstring(text)
    return text


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_stream_gives_a_valid_document(fmt: str) -> None:
    text = run(fmt, [])
    parse_any(fmt, text)
    if fmt == "json":
        assert json.loads(text)["urls"] == []
    if fmt == "text":  # no summary: the run never finished, nothing was audited
        assert text.splitlines()[-1].startswith("PARTIAL: the run did not finish after 0 ")


def test_shown_sections_renders_those_with_something_to_show_in_order() -> None:
    summary = {"a": [1, 2], "b": [], "c": {"k": 1}}
    sections = (
        (lambda s: s.get("c"), lambda s, rows, *args: f"c {rows} {args}"),
        (lambda s: s.get("b"), lambda s, rows, *args: "b: nothing to show, never rendered"),
        (lambda s: s.get("missing"), lambda s, rows, *args: "never rendered either"),
        (lambda s: s.get("a"), lambda s, rows, *args: f"a {len(rows)} {s is summary}"),
    )
    assert shown_sections(sections, summary, "ex", str) == [
        "c {'k': 1} ('ex', <class 'str'>)",
        "a 2 True",
    ]
    assert shown_sections(sections, {}) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_second_close_writes_nothing(fmt: str) -> None:
    """close is safe to call twice, as a file's is: a sink closed by its caller and by a
    finally writes its document once; each writer's close counts on its own."""
    out, other = io.StringIO(), io.StringIO()
    writer, second = make_writer(fmt, out), make_writer(fmt, other)
    for rec in stream():
        writer.write(rec)
        second.write(rec)
    writer.close()
    once = out.getvalue()
    parse_any(fmt, once)
    writer.close()
    assert out.getvalue() == once
    second.close()  # another writer of the same class is not closed by the first
    parse_any(fmt, other.getvalue())


@pytest.mark.parametrize("fmt", FORMATS)
def test_interrupted_stream_gives_a_valid_document(fmt: str) -> None:
    recs = without_summary(stream())[:20]
    text = run(fmt, recs)
    parsed = parse_any(fmt, text)
    if fmt == "json":
        assert parsed["summary"]["partial"] is True
        assert parsed["summary"] == _converted_summary(recs)
        assert parsed["summary"]["urls"] == sum(r["type"] == "url" for r in recs)
    if fmt == "text":
        assert "incomplete" in text.splitlines()[0]
    if fmt == "html":
        assert "Incomplete." in parsed.text_content()
    if fmt == "sarif":
        assert parsed["runs"][0]["invocations"][0]["executionSuccessful"] is False


def _converted_summary(recs: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "r.jsonl"
        src.write_text(run("jsonl", recs), encoding="utf-8")
        return convert(src, "jsonl", io.StringIO())


def severity_counts(fmt: str, text: str) -> tuple[int, int, int]:
    if fmt == "json":
        f = json.loads(text)["summary"]["findings"]
        return f["error"], f["warning"], f["info"]
    if fmt == "sarif":
        c = Counter(r["level"] for r in json.loads(text)["runs"][0]["results"])
        return c["error"], c["warning"], c["note"]
    if fmt == "text":
        m = re.search(r"findings: (\d+) errors?, (\d+) warnings?, (\d+) info", text)
        assert m
        return int(m[1]), int(m[2]), int(m[3])
    if fmt == "markdown":
        get = [
            int(re.search(rf"\| {k} \| (\d+) \|", text)[1]) for k in ("Errors", "Warnings", "Info")
        ]  # type: ignore[index]
        return get[0], get[1], get[2]
    if fmt == "html":
        doc = lhtml.fromstring(text)
        vals = [
            int(doc.get_element_by_id(f"card-{k}").find_class("v")[0].text_content())
            for k in ("error", "warning", "info")
        ]
        return vals[0], vals[1], vals[2]
    if fmt == "junit":
        root = parse_junit(text)
        return int(root.get("failures")), -1, -1
    raise AssertionError(fmt)


@pytest.mark.parametrize("interrupted", [False, True])
def test_counts_agree_across_formats(tmp_path: Path, interrupted: bool) -> None:
    recs = stream()
    if interrupted:
        recs = without_summary(recs)
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", recs), encoding="utf-8")
    seen = {}
    for fmt in ("json", "sarif", "text", "markdown", "html", "junit"):
        out = io.StringIO()
        convert(src, fmt, out, fail_on="error")
        seen[fmt] = severity_counts(fmt, out.getvalue())
    assert seen.pop("junit")[0] == ERRORS  # one failing testcase per error here
    assert set(seen.values()) == {(ERRORS, WARNINGS, INFOS)}


# --- report conversion ------------------------------------------------------


def test_convert_round_trips_through_jsonl(tmp_path: Path) -> None:
    recs = stream()
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", recs), encoding="utf-8")
    assert list(read_jsonl(src)) == recs
    for fmt in FORMATS:
        out = io.StringIO()
        summary = convert(src, fmt, out, fail_on="warning", examples=3)
        assert summary == recs[-1]
        if fmt == "html":  # a fresh nonce each time
            assert len(out.getvalue()) == len(run(fmt, recs, fail_on="warning", examples=3))
        else:
            assert out.getvalue() == run(fmt, recs, fail_on="warning", examples=3), fmt


def test_read_jsonl_skips_blank_lines_and_accepts_crlf_and_bom(tmp_path: Path) -> None:
    src = tmp_path / "r.jsonl"
    src.write_bytes(
        b'\xef\xbb\xbf{"type": "url", "url": "https://ex.com/a\\u2028b"}\r\n\r\n  \n'
        b'{"type": "summary"}\n'
    )
    assert [r["type"] for r in read_jsonl(src)] == ["url", "summary"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type": "url", "url": ', r"r\.jsonl:3: not valid JSON \(Expecting value at column 24\)"),
        ("[1, 2]", r"r\.jsonl:3: expected a JSON object, got list"),
        ('{"url": "x"}', r'r\.jsonl:3: record has no "type"'),
    ],
)
def test_read_jsonl_bad_line_is_one_line_error(tmp_path: Path, line: str, message: str) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text('{"type": "sitemap", "url": "x"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ReportInputError, match=message) as err:
        list(read_jsonl(src))
    assert isinstance(err.value, ValueError)
    assert "\n" not in str(err.value)
    # converting still closes a valid document of what was read, then raises
    out = io.StringIO()
    with pytest.raises(ReportInputError):
        convert(src, "json", out)
    assert len(json.loads(out.getvalue())["sitemaps"]) == 1


def test_convert_refuses_to_write_onto_its_source(tmp_path: Path) -> None:
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", stream()), encoding="utf-8")
    with (
        open(src, "a", encoding="utf-8") as out,
        pytest.raises(ReportInputError, match="onto itself"),
    ):
        convert(src, "json", out)
    assert list(read_jsonl(src)) == stream()


def test_read_jsonl_missing_file_and_bad_encoding(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=r"nope\.jsonl: cannot read report"):
        list(read_jsonl(tmp_path / "nope.jsonl"))
    bad = tmp_path / "latin.jsonl"
    bad.write_bytes(b'{"type": "url", "url": "caf\xe9"}\n')
    with pytest.raises(ReportInputError, match=r"latin\.jsonl: near line 1: not UTF-8"):
        list(read_jsonl(bad))
