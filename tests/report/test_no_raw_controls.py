"""No control, C1 or bidi character from a record reaches the markdown or HTML report raw
(issue 22.4): a URL, a message or a page title holding ESC, BEL, NUL, DEL, C1 controls or
RLO would reorder or drive what a reader sees. The text report escaped them already; the
HTML report shows a URL's with percent-encoding, where they stay visible."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lxml import html as lhtml

from tests.report.reportkit import find, run, sm, summary_of, url_rec

# ESC, BEL, NUL, DEL, C1 (NEL, CSI), the bidi embeddings, overrides and isolates
BAD = "\x1b\x07\x00\x7f\x85\x9b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028"
SITEMAP = "https://ex.com/site\x1b[31mmap\u202e.xml"
URL = "https://ex.com/\u202eexe.txt\x85/\x9b2J\x07"
TITLE = "Home\x1b]0;pwned\x07 \u2066page\u2069\x00"


def records() -> list[dict[str, Any]]:
    page = url_rec(URL, SITEMAP, 3) | {
        "indexable": False,
        "indexability": "noindex",
        "page": {"title": TITLE},
    }
    recs = [
        sm(SITEMAP, None, "urlset", 200, 1),
        page,
        find("url-not-found", f"answers 404 \u202e{BAD}", URL, SITEMAP, 3),
        find("url-soft-404", f"title {TITLE} reads as not found", URL, SITEMAP, 3),
        find("sitemap-redirected", f"redirects to {URL}", SITEMAP, None, None),
        {"type": "hosts", "hosts": [{"host": "ex.com\u202e\x1b", "requests": 1}]},
    ]
    return [*recs, summary_of(recs) | {"stopped_by": "SIG\x1bTERM\u202e"}]


def raw(text: str) -> list[str]:
    return sorted({ch for ch in text if ch in BAD or not (ch.isprintable() or ch in "\n")})


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_no_control_or_bidi_character_reaches_the_report(fmt: str) -> None:
    text = run(fmt, records(), **({"examples": 10} if fmt == "markdown" else {}))
    assert raw(text) == []
    assert "exe.txt" in text and "pwned" in text  # the values are shown, made harmless


def test_html_shows_a_url_s_controls_percent_encoded_and_keeps_the_data_intact() -> None:
    text = run("html", records())
    doc = lhtml.fromstring(text)
    assert "https://ex.com/%E2%80%AEexe.txt%C2%85/%C2%9B2J%07" in doc.text_content()
    data = json.loads(doc.xpath("//script[@id='report-data']")[0].text)
    assert data["summary"]["stopped_by"] == "SIG\x1bTERM\u202e"  # escaped, not changed


def test_markdown_shows_a_url_s_controls_percent_encoded() -> None:
    text = run("markdown", records(), examples=10)
    assert "`https://ex.com/%E2%80%AEexe.txt%C2%85/%C2%9B2J%07`" in text
