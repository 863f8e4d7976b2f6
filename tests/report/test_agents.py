"""The "What each bot sees" section (text, markdown, HTML), the HTML indexability panel and
the csv's indexability columns, from record streams as a crawl writes them."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from audit.report import make_writer

BASE = "https://ex.com"


def _url(path: str, reason: str | None, agents: dict[str, str] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "url",
        "url": BASE + path,
        "sitemap": BASE + "/sitemap.xml",
        "line": 3,
        "status": 200,
        "final_url": BASE + path,
        "redirects": [],
        "lastmod": None,
        "last_modified": None,
        "robots": "blocked" if reason == "robots" else "allowed",
        "elapsed_ms": 5.0,
        "error": None,
        "indexable": reason is None,
        "indexability": reason,
    }
    if agents is not None:
        record["agents"] = agents
    return record


def _summary(agents: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "summary",
        "sitemaps": 1,
        "urls": 4,
        "entries": 4,
        "findings": {"error": 0, "warning": 0, "info": 0},
        "by_code": {},
        "duration_s": 1.0,
    }
    if agents is not None:
        out["agents"] = agents
    return out


AGENTS = {"GPTBot": {"blocked": 3, "noindex": 0}, "Cl<au>deBot": {"blocked": 1, "noindex": 2}}


def _render(fmt: str, agents: dict[str, Any] | None = AGENTS) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out)
    for rec in (
        _url("/a", None),
        _url("/b", "noindex"),
        _url("/c", "robots"),
        _url("/<script>", "canonical"),
        _summary(agents),
    ):
        writer.write(rec)
    writer.close()
    return out.getvalue()


def test_text_rows_per_agent_with_share_it_may_read() -> None:
    text = _render("text")
    section = text[text.index("What each bot sees") :].splitlines()
    assert section[1].split() == ["agent", "blocked", "noindex", "may", "read"]
    assert section[2].split() == ["GPTBot", "3", "0", "25.0%"]
    assert section[3].split() == ["Cl<au>deBot", "1", "2", "75.0%"]


def test_markdown_table() -> None:
    md = _render("markdown")
    assert "## What each bot sees" in md
    assert "| `GPTBot` | 3 | 0 | 25.0% |" in md
    assert "| `Cl<au>deBot` | 1 | 2 | 75.0% |" in md


def test_no_section_without_agents() -> None:
    for fmt in ("text", "markdown", "html"):
        assert "What each bot sees" not in _render(fmt, None)


def test_html_agents_chart_and_indexability_filter() -> None:
    page = _render("html")
    agents = page[page.index('id="agents"') :]
    assert "Cl&lt;au&gt;deBot" in agents and "Cl<au>deBot" not in page.split("report-data")[0]
    bars = re.findall(r'<rect class="bar" width="([0-9.]+)"', agents)
    assert bars == ["50.0", "150.0"]  # 25% and 75% of 200
    panel = page[page.index('id="indexability"') : page.index('id="agents"')]
    assert re.findall(r'<tr data-ix="([a-z-]+)">', panel) == ["noindex", "robots", "canonical"]
    assert "&lt;script&gt;" in panel and "<script>" not in panel
    assert 'id="ix-noindex"' in panel and 'id="ix-status"' not in panel  # only reasons seen
    # the filter is CSS under the report's nonce: no style attribute, no new script
    nonce = re.search(r"script-src 'nonce-([^']+)'", page)
    assert nonce is not None
    assert f'<style nonce="{nonce.group(1)}">' in page[page.index("</head>") :]
    assert " style=" not in page and page.count("<script") == 2
    assert "#ix-robots:checked~.scroll tr[data-ix]:not([data-ix=robots]){display:none}" in page


def test_html_without_indexability_fields_has_no_panel() -> None:
    out = io.StringIO()
    writer = make_writer("html", out)
    record = _url("/a", None)
    del record["indexable"], record["indexability"]
    writer.write(record)
    writer.write(_summary(None))
    writer.close()
    assert 'id="indexability"' not in out.getvalue()


def test_csv_carries_indexable_and_the_reason() -> None:
    rows = list(csv.DictReader(io.StringIO(_render("csv").lstrip("\ufeff"))))
    got = {r["url"]: (r["indexable"], r["indexability"]) for r in rows}
    assert got == {
        BASE + "/a": ("true", ""),
        BASE + "/b": ("false", "noindex"),
        BASE + "/c": ("false", "robots"),
        BASE + "/<script>": ("false", "canonical"),
    }
