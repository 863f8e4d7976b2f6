"""Search Console's name for a code stands beside the code in the text, markdown, HTML and
SARIF reports, and nothing stands there for a code Search Console has no name for
(issue 19.4); markdown links a code to its section of docs/codes.md."""

from __future__ import annotations

import json
from typing import Any

from lxml import html as lhtml

from audit.core.codes import doc_anchor, search_console_name
from tests.report.reportkit import PAGES, find, run, summary_of, url_rec

BLOCKED = "https://ex.com/private"
STALE = "https://ex.com/stale"
NAMED = "url-robots-blocked"
UNNAMED = "lastmod-stale"


def records() -> list[dict[str, Any]]:
    recs = [
        url_rec("https://ex.com/", PAGES, 3),
        find(NAMED, "robots.txt disallows it for Googlebot", BLOCKED, PAGES, 4),
        find(NAMED, "robots.txt disallows it for Googlebot", BLOCKED + "2", PAGES, 5),
        find(UNNAMED, "lastmod is two years old", STALE, PAGES, 6),
    ]
    return [*recs, summary_of(recs)]


def test_the_registry_names_one_code_and_not_the_other() -> None:
    assert search_console_name(NAMED) == "Blocked by robots.txt"
    assert search_console_name(UNNAMED) is None


def test_text_shows_the_name_beside_the_code() -> None:
    text = run("text", records())
    assert "error url-robots-blocked (Search Console: Blocked by robots.txt) (2)" in text
    by_code = [line for line in text.splitlines() if line.startswith("  error    ")]
    assert by_code[0].endswith("(Search Console: Blocked by robots.txt)")
    assert f"{UNNAMED} (1)" in text
    assert text.count("Search Console") == 2


def test_markdown_code_table_has_the_name_and_links_the_docs() -> None:
    text = run("markdown", records())
    assert "| Code | Severity | Count | Search Console | What it means |" in text
    rows = {line.split(" | ")[0]: line.split(" | ") for line in text.splitlines()}
    named = rows[f"| [`{NAMED}`]({doc_anchor(NAMED)})"]
    assert named[3] == "Blocked by robots.txt"
    unnamed = rows[f"| [`{UNNAMED}`](docs/codes.md#{UNNAMED})"]
    assert unnamed[3] == ""
    assert "Search Console: Blocked by robots.txt." in text
    assert "RULES.md" not in text and "DESIGN.md" not in text


def test_html_code_table_has_the_name() -> None:
    doc = lhtml.fromstring(run("html", records()))
    cells = {
        row.xpath("td[1]")[0].text_content(): [td.text_content() for td in row.xpath("td")]
        for row in doc.xpath("//table[@id='codes']/tbody/tr")
    }
    assert cells[NAMED][3] == "Blocked by robots.txt"
    assert cells[UNNAMED][3] == ""
    titles = doc.xpath("//table[@id='findings']//td[contains(@class,'code')]/@title")
    assert any(t.endswith("(Search Console: Blocked by robots.txt)") for t in titles)


def test_sarif_rules_carry_the_name() -> None:
    sarif = json.loads(run("sarif", records()))
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules[NAMED]["properties"]["searchConsole"] == "Blocked by robots.txt"
    assert "Search Console: Blocked by robots.txt" in rules[NAMED]["fullDescription"]["text"]
    assert rules[UNNAMED]["properties"]["searchConsole"] == ""
    assert "Search Console" not in rules[UNNAMED]["fullDescription"]["text"]
