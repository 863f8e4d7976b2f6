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
