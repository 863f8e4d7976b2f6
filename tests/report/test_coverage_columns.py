"""The link crawl in the csv and SARIF reports (issue 18.5): csv columns `source` and
`inlinks` after the existing ones, empty for a url record without them; a links-only page's
row carries its page-not-in-sitemap code; SARIF results for url-orphan,
page-not-in-sitemap, link-broken and coverage-incomplete like any other code."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from tests.report.reportkit import PAGES, find, run, summary_of, url_rec

# The columns before this issue, in their order: they must not move.
EARLIER = [
    "url", "sitemap", "line", "status", "final_url", "redirect_hops", "redirect_chain",
    "lastmod", "last_modified", "robots", "elapsed_ms", "worst_severity", "codes", "error",
    "outcome", "expected", "checked_url", "indexable", "indexability",
]  # fmt: skip
HOME = "https://ex.com/"
ORPHAN = "https://ex.com/lonely"
UNLISTED = "https://ex.com/unlisted"
BROKEN = "https://ex.com/gone"
PLAIN = "https://ex.com/plain"


def links_only(url: str, status: int, inlinks: int) -> dict[str, Any]:
    rec = url_rec(url, PAGES, 0, status=status) | {"sitemap": None, "line": None}
    return rec | {"source": "links", "inlinks": inlinks}


def records() -> list[dict[str, Any]]:
    recs = [
        url_rec(HOME, PAGES, 3) | {"source": "both", "inlinks": 4},
        url_rec(ORPHAN, PAGES, 4) | {"source": "sitemap", "inlinks": 0},
        find("url-orphan", "no crawled page links to it", ORPHAN, PAGES, 4),
        links_only(UNLISTED, 200, 2),
        find("page-not-in-sitemap", f"linked from 2 pages (e.g. {HOME})", UNLISTED, None, None),
        links_only(BROKEN, 404, 3),
        find("link-broken", "3 pages link to this URL, which answers 404", BROKEN, None, None),
        url_rec(PLAIN, PAGES, 5),  # a run without --links
        find("coverage-incomplete", "the link crawl stopped (max-pages)", HOME, None, None),
    ]
    return [*recs, summary_of(recs)]


def test_csv_source_and_inlinks_come_last() -> None:
    rows = list(csv.reader(io.StringIO(run("csv", records()).lstrip("\ufeff"))))
    assert rows[0] == [*EARLIER, "source", "inlinks"]
    by_url = {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    assert set(by_url) == {HOME, ORPHAN, UNLISTED, BROKEN, PLAIN}
    assert (by_url[HOME]["source"], by_url[HOME]["inlinks"]) == ("both", "4")
    assert (by_url[ORPHAN]["source"], by_url[ORPHAN]["inlinks"]) == ("sitemap", "0")
    assert (by_url[UNLISTED]["source"], by_url[UNLISTED]["inlinks"]) == ("links", "2")
    assert (by_url[PLAIN]["source"], by_url[PLAIN]["inlinks"]) == ("", "")
    assert by_url[ORPHAN]["codes"] == "url-orphan"
    assert by_url[UNLISTED]["codes"] == "page-not-in-sitemap"
    assert by_url[BROKEN]["codes"] == "link-broken"
    assert by_url[PLAIN]["codes"] == ""


def test_sarif_reports_the_coverage_codes_like_any_other() -> None:
    run_ = json.loads(run("sarif", records()))["runs"][0]
    rules = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    codes = ["url-orphan", "page-not-in-sitemap", "link-broken", "coverage-incomplete"]
    assert rules == codes
    results = {r["ruleId"]: r for r in run_["results"]}
    assert [results[c]["ruleIndex"] for c in codes] == [0, 1, 2, 3]
    assert [results[c]["level"] for c in codes] == ["warning"] * 4
    where = {c: results[c]["locations"][0]["physicalLocation"] for c in codes}
    assert where["url-orphan"] == {"artifactLocation": {"uri": PAGES}, "region": {"startLine": 4}}
    assert where["page-not-in-sitemap"] == {"artifactLocation": {"uri": UNLISTED}}
    assert where["link-broken"] == {"artifactLocation": {"uri": BROKEN}}
    assert where["coverage-incomplete"] == {"artifactLocation": {"uri": HOME}}
