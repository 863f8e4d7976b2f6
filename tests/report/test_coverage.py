"""The "Site coverage" section (audit/report/coverage.py) of the text, markdown and HTML
reports, written by the real writers from a `crawl --links` summary: the verdict, the counts,
the pages by depth (an SVG chart in HTML); nothing without --links."""

from __future__ import annotations

import io
from typing import Any

import pytest
from lxml import html as lhtml

from audit.report import make_writer
from audit.report.coverage import coverage_rows

COVERAGE = {
    "complete": False,
    "stopped_by": "--max-pages 5000",
    "pages": 5000,
    "listed": 1234,
    "orphans": 17,
    "unlisted": 3,
    "broken_links": 2,
    "depths": {"0": 1, "1": 40, "2": 1500, "3": 3459, "x": 9},
}


def summary(**extra: Any) -> dict[str, Any]:
    return {
        "type": "summary",
        "sitemaps": 1,
        "urls": 1234,
        "findings": {"error": 0, "warning": 0, "info": 0},
        "by_code": {},
        "duration_s": 1.0,
        **extra,
    }


def written(fmt: str, record: dict[str, Any]) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out, fail_on="never")
    writer.write(record)
    writer.close()
    return out.getvalue()


def test_rows_follow_the_summary_and_ignore_what_is_not_a_count() -> None:
    assert coverage_rows(summary()) is None
    rows = dict(coverage_rows(summary(coverage={**COVERAGE, "orphans": True, "unlisted": "3"})))
    assert rows["pages crawled"] == 5000 and rows["listed pages read"] == 1234
    assert rows["orphans (url-orphan)"] == 0 and rows["unlisted pages (page-not-in-sitemap)"] == 0


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_the_section_says_what_stopped_the_crawl_and_counts(fmt: str) -> None:
    report = written(fmt, summary(coverage=COVERAGE))
    section = report[report.index("Site coverage") :]
    assert "incomplete (stopped by --max-pages 5000): orphan verdicts withheld" in section
    for count in ("5,000", "1,234", "17", "3,459"):
        assert count in section, (fmt, count)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_nothing_without_links(fmt: str) -> None:
    assert "Site coverage" not in written(fmt, summary())


def test_a_complete_crawl_and_the_depth_chart_in_html() -> None:
    report = written("html", summary(coverage={**COVERAGE, "complete": True}))
    doc = lhtml.fromstring(report)
    (section,) = doc.xpath('//section[@id="coverage"]')
    assert "complete: every internal link was followed" in section.text_content()
    bars = section.xpath(".//*[local-name()='rect']")
    assert len(bars) == 4  # depths 0 to 3; the key that is not a depth is left out
    widths = [int(b.get("width")) for b in bars]
    assert max(widths) == widths[3] == 300 and widths[0] >= 1  # the deepest level is largest
    assert not section.xpath(".//*[@style]")  # no inline style: the page's CSP holds


def test_markdown_depth_table() -> None:
    report = written("markdown", summary(coverage=COVERAGE))
    assert "| Depth | Pages |" in report and "| 2 | 1,500 |" in report
