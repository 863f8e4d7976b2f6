"""The SARIF report (audit/report/sarif.py): rules, results and locations."""

from __future__ import annotations

import json
from collections import Counter

from audit.core.codes import CODES
from tests.report.reportkit import (
    ERRORS,
    INFOS,
    PAGES,
    ROBOTS,
    WARNINGS,
    check_sarif,
    run,
    stream,
)


def test_sarif_rules_results_and_locations() -> None:
    recs = stream()
    doc = json.loads(run("sarif", recs))
    check_sarif(doc)
    run0 = doc["runs"][0]
    rules = {r["id"]: r for r in run0["tool"]["driver"]["rules"]}
    findings = [r for r in recs if r["type"] == "finding"]
    assert set(rules) == {f["code"] for f in findings}
    assert rules["url-not-found"]["shortDescription"]["text"] == CODES["url-not-found"].summary
    assert rules["lastmod-missing"]["defaultConfiguration"]["level"] == "note"
    results = run0["results"]
    assert len(results) == len(findings)
    levels = Counter(r["level"] for r in results)
    assert levels == {"error": ERRORS, "warning": WARNINGS, "note": INFOS}
    missing = next(r for r in results if "missing" in r["message"]["text"])
    loc = missing["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == PAGES
    assert loc["region"]["startLine"] == 9
    robots = next(r for r in results if r["ruleId"] == "robots-no-sitemap")
    assert robots["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ROBOTS
    assert "region" not in robots["locations"][0]["physicalLocation"]
    assert run0["invocations"][0]["executionSuccessful"] is True


def test_a_results_message_names_its_url_when_its_location_does_not() -> None:
    sitemap = "https://ex.com/sitemap.xml"

    def finding(url: object, message: str) -> dict[str, object]:
        return {"type": "finding", "code": "url-not-found", "severity": "error",
                "url": url, "sitemap": sitemap, "line": 3, "message": message}  # fmt: skip

    recs = [
        finding("https://ex.com/a", "404 Not Found"),  # named after the message
        finding("https://ex.com/b", "https://ex.com/b answered 404"),  # named already
        finding(sitemap, "the sitemap answered 404"),  # the location is the URL
        finding(None, "no URL"),
        finding("", "an empty URL"),
    ]
    texts = [r["message"]["text"] for r in json.loads(run("sarif", recs))["runs"][0]["results"]]
    assert texts == [
        "404 Not Found (https://ex.com/a)",
        "https://ex.com/b answered 404",
        "the sitemap answered 404",
        "no URL",
        "an empty URL",
    ]
