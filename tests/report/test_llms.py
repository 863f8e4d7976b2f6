"""The "llms.txt" section and the "Agents served" table (text, markdown, HTML), and the
llms.txt coverage line of "What each bot sees", from the records a crawl writes (issue 30)."""

from __future__ import annotations

import io
import re
from typing import Any

from audit.report import make_writer

BASE = "https://ex.com"
FETCHED = {
    "sampled": 20,
    "served_differently": 1,
    "challenged": 19,
    "payment_required": 0,
    "shell_only": 0,
}
AGENTS = {
    "GPTBot": {
        "blocked": 0,
        "noindex": 0,
        "hosts": {
            BASE: {"blocked": 0, "noindex": 0, "signals": {}, "usage": {}, "fetched": FETCHED}
        },
    },
    "Google-Extended": {
        "blocked": 2,
        "noindex": 0,
        "hosts": {BASE: {"blocked": 2, "noindex": 0, "signals": {}, "usage": {}}},
    },
    "<b>Bot": {
        "blocked": 0,
        "noindex": 0,
        "hosts": {
            "https://<x>.com": {
                "blocked": 0,
                "noindex": 0,
                "signals": {},
                "usage": {},
                "fetched": {**FETCHED, "shell_only": 7},
            }
        },
    },
}
LLMS = {
    "files": [
        {"url": BASE + "/llms.txt", "status": 200, "chars": 2048, "links": 25, "valid": False},
        {"url": BASE + "/llms-full.txt", "status": 404},
    ],
    "links": 25,
    "external": 1,
    "covered": 8,
    "indexable": 24,
    "coverage": 0.333,
}


def _render(fmt: str, **summary: Any) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out)
    writer.write({"type": "finding", "code": "llms-link-broken", "severity": "warning", "url": BASE + "/old", "sitemap": None, "line": 4, "message": "m", "llms": BASE + "/llms.txt"})  # fmt: skip
    writer.write(
        {
            "type": "summary",
            "sitemaps": 1,
            "urls": 24,
            "entries": 24,
            "findings": {"error": 0, "warning": 1, "info": 0},
            "by_code": {"llms-link-broken": 1},
            "duration_s": 1.0,
            **summary,
        }
    )
    writer.close()
    return out.getvalue()


def test_text_llms_section_coverage_line_and_served_table() -> None:
    text = _render("text", llms=LLMS, agents=AGENTS)
    bots = text[text.index("What each bot sees") :]
    line = "llms.txt links 8 of 24 indexable listed URLs (33.3%); 25 links on the site, 1 elsewhere"
    assert line in bots.split("\n\n")[0]  # in the What each bot sees section
    section = text[text.index("\nllms.txt\n") :]
    assert f"{BASE}/llms.txt  HTTP 200  2,048 characters, 25 links, invalid" in section
    assert f"{BASE}/llms-full.txt  HTTP 404" in section
    assert "llms-link-broken: 1" in section
    served = text[text.index("Agents served") :].splitlines()
    assert served[1].split() == ["agent", "@", "host", "sampled", "served", "differently", "challenged", "payment", "required", "shell", "only"]  # fmt: skip
    assert served[2].split() == ["GPTBot", "@", BASE, "20", "1", "19", "0", "0"]
    assert served[3].split()[-1] == "7"
    assert "Google-Extended" not in text[text.index("Agents served") :]  # never fetched


def test_markdown_tables() -> None:
    md = _render("markdown", llms=LLMS, agents=AGENTS)
    assert "## llms.txt" in md and "## Agents served" in md
    assert f"| `{BASE}/llms.txt` | 200 | 2,048 | 25 | invalid |" in md
    assert f"| `GPTBot` | `{BASE}` | 20 | 1 | 19 | 0 | 0 |" in md
    assert "`llms-link-broken`: 1" in md


def test_html_panels_escaped() -> None:
    page = _render("html", llms=LLMS, agents=AGENTS)
    llms = page[page.index('id="llms"') :]
    assert f'<td class="url">{BASE}/llms.txt</td><td class="num">200</td>' in llms
    served = page[page.index('id="agents-served"') :]
    rows = re.findall(r"<tr><td class=\"mono\">(.*?)</td><td class=\"url\">(.*?)</td>", served)
    assert rows[:2] == [("GPTBot", BASE), ("&lt;b&gt;Bot", "https://&lt;x&gt;.com")]
    assert "<b>Bot" not in page.split("report-data")[0]
    assert "llms.txt links 8 of 24" in page[page.index('id="agents"') :]


def test_nothing_without_the_options() -> None:
    for fmt in ("text", "markdown", "html"):
        out = _render(fmt)
        assert "Agents served" not in out and "llms.txt links" not in out
        assert "## llms.txt" not in out and 'id="llms"' not in out
