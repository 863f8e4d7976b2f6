"""The HTML report's building blocks (audit.report.htmlkit): values escaped with their
invisible characters shown, links only for plain http(s) URLs, JSON that cannot close
its script element, bar charts scaled to their largest bar."""

from __future__ import annotations

import json
import re

import pytest

from audit.report.htmlkit import CSS, JS, grouped, h, hbars, json_for_script, link, vbars


def test_h_escapes_markup_and_makes_invisible_characters_spaces() -> None:
    assert h('<a href="x">&</a>') == "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
    shown = h("evil\u202egnp.exe\x1b[31m\x85")
    assert "\u202e" not in shown and "\x1b" not in shown and "\x85" not in shown
    assert shown.startswith("evil ") and "gnp.exe" in shown
    assert h(42) == "42"


def test_link_only_for_plain_http_urls() -> None:
    assert link(None) == "" and link("") == ""
    made = link("https://example.com/a?b=1&c=2")
    assert made.startswith('<a href="https://example.com/a?b=1&amp;c=2"')
    assert 'rel="noopener noreferrer nofollow"' in made
    for url in ("javascript:alert(1)", "data:text/html,x", "https://x/ a", "ftp://x/"):
        assert "<a" not in link(url), url
    # an RLO inside a URL is percent-encoded: it shows instead of turning the text round
    odd = link("https://example.com/\u202eexe")
    assert "\u202e" not in odd and "%E2%80%AE" in odd


def test_json_for_script_cannot_close_its_element_and_reads_back() -> None:
    value = {
        "x": "</script><script>alert(1)</script>",
        "y": "a\u2028b\u2029c\x85\U000e0001\U0001f600",
    }
    text = json_for_script(value)
    assert "</script" not in text.lower() and "<" not in text and ">" not in text
    assert "\u2028" not in text and "\u2029" not in text and "\x85" not in text
    # a non-printable character beyond the BMP as a surrogate pair; a printable one as is
    assert "\\udb40\\udc01" in text and "\U0001f600" in text
    assert json.loads(text) == value
    assert json_for_script({"&": 1}) == '{"\\u0026": 1}'


def test_bar_charts_scale_to_the_largest_bar() -> None:
    items = [("2xx", 30, "#2da44e"), ("4xx", 10, "#e16f24"), ("none", 0, "#8c959f")]
    svg = vbars(items, "URLs <by> status", short={"none": "-"})
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert 'aria-label="URLs &lt;by&gt; status"' in svg
    heights = [float(x) for x in re.findall(r'<rect [^>]*height="([0-9.]+)"', svg)]
    assert heights[0] == pytest.approx(3 * heights[1], abs=0.2) and heights[2] == 0
    assert "<title>2xx: 30 (75.0%)</title>" in svg and ">-</text>" in svg
    rows = hbars([("loc-invalid", 1_200, "#cf222e"), ("url-slow", 300, "#bf8700")], "codes")
    widths = [float(x) for x in re.findall(r'<rect [^>]*width="([0-9.]+)"', rows)]
    assert widths[0] == pytest.approx(4 * widths[1], abs=0.2)
    assert ">1,200</text>" in rows
    assert vbars([], "empty").count("<rect") == 0  # no bars, no division by zero


def test_grouped_counts_and_the_inline_assets() -> None:
    assert grouped(1234567) == "1,234,567" and grouped(0) == "0"
    assert "</style" not in CSS.lower() and "</script" not in JS.lower()
