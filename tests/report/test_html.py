"""The HTML report (audit/report/html.py): self-contained, escaped, its numbers, charts
and tree, small at 200,000 URLs, and rendered by headless Chromium."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lhtml

from audit.core.codes import CODES
from audit.report import (
    make_writer,
)
from tests.report.reportkit import (
    CHROMIUM,
    ERRORS,
    INDEX,
    INFOS,
    JS_URL,
    OLD,
    PAGES,
    POSTS,
    WARNINGS,
    XSS,
    audited_urls,
    chromium,
    find,
    generated_stream,
    run,
    stream,
)


def test_html_is_self_contained_and_escapes_everything() -> None:
    recs = stream()
    text = run("html", recs)
    doc = lhtml.fromstring(text)
    assert doc.xpath("//script[@src]") == []
    assert doc.xpath("//link") == []
    assert doc.xpath("//iframe|//object|//embed|//img") == []
    allowed = audited_urls(recs)
    for attr in doc.xpath(
        "//@href|//@src|//@action|//@xlink:href",
        namespaces={"xlink": "http://www.w3.org/1999/xlink"},
    ):
        assert attr in allowed and re.match(r"https?://", attr), attr
    assert JS_URL not in doc.xpath("//@href")
    # the crafted URL and message never appear as markup
    assert "<script>alert(" not in text
    assert len(doc.xpath("//script")) == 2  # the data block and our own script
    assert doc.xpath("//script[@type='application/json']")[0].text.count("<") == 0
    assert "alert(1)" not in "".join(doc.xpath("//script/text()"))
    assert XSS in doc.text_content()  # shown, as text
    csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp


def test_html_data_block_cannot_be_closed_by_a_crafted_code() -> None:
    code = "x</script><script>alert(4)</script>\u2028\u2029&"
    recs = [{**find("url-not-found", "m", "https://ex.com/a", PAGES, 1), "code": code}]
    text = run("html", recs)
    doc = lhtml.fromstring(text)
    assert len(doc.xpath("//script")) == 2
    block = doc.get_element_by_id("report-data").text
    assert not set("<>&\u2028\u2029") & set(block)
    assert json.loads(block)["summary"]["by_code"] == {code: 1}


def test_html_shows_the_numbers_charts_and_tree() -> None:
    recs = stream()
    doc = lhtml.fromstring(run("html", recs))
    card = {
        k: doc.get_element_by_id(f"card-{k}").find_class("v")[0].text_content()
        for k in ("sitemaps", "urls", "error", "warning", "info", "duration")
    }
    assert card == {
        "sitemaps": "4",
        "urls": "11",
        "error": "7",
        "warning": "6",
        "info": "2",
        "duration": "4.2 s",
    }
    assert doc.get_element_by_id("verdict").text_content() == "FAIL"
    status = doc.get_element_by_id("chart-status")
    assert [t.text for t in status.xpath(".//svg//text[@class='lab']")] == [
        "2xx",
        "3xx",
        "4xx",
        "5xx",
        "none",
    ]
    assert [t.text for t in status.xpath(".//svg//text[@class='val']")] == ["5", "2", "2", "1", "1"]
    ages = doc.get_element_by_id("chart-lastmod")
    labels = [t.text for t in ages.xpath(".//svg//text[@class='lab']")]
    assert labels[0] == "future" and labels[-1] == "none" and "older" in labels
    codes = doc.get_element_by_id("chart-codes").xpath(".//svg//text[contains(@class,'lab')]")
    assert {codes[0].text, codes[1].text} == {"url-not-found", "loc-invalid"}
    data = json.loads(doc.get_element_by_id("report-data").text)
    assert data["summary"]["findings"] == {"error": 7, "warning": 6, "info": 2}
    tree = doc.get_element_by_id("sitemap-tree").xpath(".//tbody/tr")
    assert [r.xpath("string(td[1])") for r in tree] == [INDEX, OLD, PAGES, POSTS]
    assert tree[1].xpath("td[1]/@class")[0].endswith("d1")
    assert tree[2].xpath("string(td[5])") == "8"  # url records from pages
    assert tree[0].xpath("string(td[6])") == "1"  # the index's 404 child
    rows = doc.get_element_by_id("findings").xpath("./tbody/tr")
    assert len(rows) == ERRORS + WARNINGS + INFOS
    assert rows[0].get("data-sev") == "error" and rows[-1].get("data-sev") == "info"
    hosts = doc.get_element_by_id("hosts")
    assert [th.text for th in hosts.xpath(".//th")][:3] == ["Host", "Requests", "Rate/s"]
    assert hosts.xpath("string(.//tbody/tr/td[5])") == "1"  # 429 answers


@pytest.mark.slow
def test_html_for_200k_urls_stays_small() -> None:
    out = io.StringIO()
    writer = make_writer("html", out, max_rows_per_code=200)
    for rec in generated_stream(200_000):
        writer.write(rec)
    writer.close()
    text = out.getvalue()
    assert len(text.encode()) < 1_000_000
    doc = lhtml.fromstring(text)
    assert len(doc.get_element_by_id("findings").xpath("./tbody/tr")) == 400
    note = doc.get_element_by_id("truncated").text_content()
    assert "url-not-found: first 200, and 49,800 more" in note
    assert doc.get_element_by_id("card-urls").find_class("v")[0].text_content() == "200,000"


def test_html_table_share_per_code_keeps_the_page_small() -> None:
    """70 codes with 300 findings each: the table is capped in all, counts stay exact."""
    recs: list[dict[str, Any]] = []
    for code in list(CODES)[:70]:
        for i in range(300):
            u = f"https://ex.com/{code}/{'x' * 150}/{i}"
            recs.append(find(code, f"a message about {code} number {i}", u, PAGES, i + 1))
    text = run("html", recs, max_rows_per_code=200)
    doc = lhtml.fromstring(text)
    rows = doc.get_element_by_id("findings").xpath("./tbody/tr")
    assert len(rows) == 70 * (4000 // 70)
    assert len(text.encode()) < 3_500_000
    assert doc.get_element_by_id("card-error").find_class("v")[0].text_content() == _n_errors(recs)


def _n_errors(recs: list[dict[str, Any]]) -> str:
    return f"{sum(r['severity'] == 'error' for r in recs):,}"


@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
    reason="no Chromium installed (Debian package chromium)",
)
def test_html_in_headless_chromium(tmp_path: Path) -> None:
    """The page renders in a real browser, its script runs under the CSP, nothing injected runs.

    The screenshot is kept as an artifact: in $TEST_ARTIFACTS when set, else in tmp_path.
    """
    page = tmp_path / "report.html"
    page.write_text(run("html", stream()), encoding="utf-8")
    dom = lhtml.fromstring(chromium("--dump-dom", page.as_uri(), profile=tmp_path / "p1"))
    # our script ran (it fills the row counter); the crafted URL added no element
    assert dom.get_element_by_id("shown").text_content() == "15 of 15 rows shown"
    assert len(dom.xpath("//script")) == 2
    assert dom.get_element_by_id("card-error").find_class("v")[0].text_content() == "7"
    assert dom.get_element_by_id("card-urls").find_class("v")[0].text_content() == "11"
    for chart in ("chart-status", "chart-lastmod", "chart-codes"):
        assert dom.get_element_by_id(chart).xpath(".//svg//rect")
    artifacts = Path(os.environ.get("TEST_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "report-html.png"
    chromium(
        f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri(), profile=tmp_path / "p2"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
