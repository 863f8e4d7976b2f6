"""The "Rendering" section of the text, markdown and HTML reports (crawl --render): the pages
rendered, the failures, the seconds, each render code counted and the raw/rendered
differences per page; nothing at all without --render."""

from __future__ import annotations

import io
from typing import Any

import pytest

from audit.report import make_writer

URL = "https://shop.example/p/1"
RECORDS: list[dict[str, Any]] = [
    {
        "type": "finding",
        "code": "render-title-changed",
        "severity": "warning",
        "url": URL,
        "sitemap": "https://shop.example/sitemap.xml",
        "line": 3,
        "message": "the raw HTML's title is 'Shop', the rendered page's is 'Shop <b>Sale</b>'",
    },
    {
        "type": "finding",
        "code": "render-failed",
        "severity": "info",
        "url": "https://shop.example/p/2",
        "sitemap": "https://shop.example/sitemap.xml",
        "line": 4,
        "message": "the page could not be rendered: no load event after 20 s",
    },
    {
        "type": "summary",
        "sitemaps": 1,
        "urls": 2,
        "findings": {"error": 0, "warning": 1, "info": 1},
        "by_code": {"render-title-changed": 1, "render-failed": 1},
        "duration_s": 3.0,
        "render": {"pages": 2, "failed": 1, "seconds": 2.4, "peak_mb": 312.4},
    },
]


def written(fmt: str, records: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out, fail_on="never")
    for record in records:
        writer.write(record)
    writer.close()
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_rendering_section_counts_and_differences(fmt: str) -> None:
    report = written(fmt, RECORDS)
    assert "Rendering" in report
    section = report[report.index("Rendering") :]
    for needle in ("pages rendered", "failed (render-failed)", "render-hreflang-changed"):
        shown = needle if fmt != "markdown" else needle.replace("(", "\\(").replace(")", "\\)")
        assert shown in section, needle
    assert "2.4" in section and "312" in section  # seconds, peak memory
    assert URL in section and "render-title-changed" in section
    if fmt == "html":  # a page's title is data, never markup
        assert "Shop <b>Sale</b>" not in report and "Shop &lt;b&gt;Sale&lt;/b&gt;" in section
    else:
        assert "'Shop <b>Sale</b>'" in section or "Shop \\<b\\>Sale\\</b\\>" in section


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_no_rendering_section_without_render(fmt: str) -> None:
    summary = {k: v for k, v in RECORDS[-1].items() if k != "render"}
    report = written(
        fmt, [{**summary, "by_code": {}, "findings": {"error": 0, "warning": 0, "info": 0}}]
    )
    assert "Rendering" not in report
