"""The markdown report (audit/report/markdown.py): tables and escaping."""

from __future__ import annotations

import re

from tests.report.reportkit import (
    run,
    stream,
)


def test_markdown_tables_and_escaping() -> None:
    text = run("markdown", stream(), examples=2)
    assert "| Errors | 7 |" in text and "| Warnings | 6 |" in text and "| Info | 2 |" in text
    assert "| Verdict (fail on error) | **FAIL** |" in text
    assert (
        "| [`url-not-found`](docs/codes.md#url-not-found) | error | 2 | Not found \\(404\\)"
        " | the URL answers 404 or 410 |"
    ) in text
    # the URL with a pipe and a backtick: one cell, in a longer fence, pipe escaped
    row = next(line for line in text.splitlines() if "pipe" in line)
    assert "`` https://ex.com/pipe\\|x`y ``" in row
    assert row.count("|") - row.count("\\|") == 4  # a three-column row
    assert "lastmod \\| is \\`in\\` the future" in row
    row = next(line for line in text.splitlines() if "alert\\(2" in line)
    assert row.endswith("| 404 \\</script\\>\\<script\\>alert\\(2\\)\\</script\\> |")
    # raw markup only inside code spans, where renderers show it as text
    assert "<script>" not in re.sub(r"`[^`]*`", "", text)
    # examples are bounded per code
    assert "… and 2 more." not in text  # url-not-found has exactly 2
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")
