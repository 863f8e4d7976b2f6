"""The JUnit report (audit/report/junit.py): valid against the JUnit schema, suites per
sitemap, failures at --fail-on, characters XML forbids."""

from __future__ import annotations

import pytest

from tests.report.reportkit import (
    COMMA_QUOTE,
    ERRORS,
    FORMULA,
    INDEX,
    JS_URL,
    OLD,
    PAGES,
    POSTS,
    WARNINGS,
    XSS,
    find,
    parse_junit,
    run,
    stream,
    url_rec,
)


def test_junit_suites_per_sitemap_cases_per_url_failures_at_fail_on() -> None:
    root = parse_junit(run("junit", stream(), fail_on="error"))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["discovery", INDEX, OLD, PAGES, POSTS]
    pages = suites[PAGES]
    names = [c.get("name") for c in pages.findall("testcase")]
    # the sitemap itself, its URLs (with the two never fetched) in order
    assert names[0] == PAGES
    assert set(names[1:]) == {
        r["url"] for r in stream() if r["type"] == "url" and r["sitemap"] == PAGES
    } | {JS_URL, FORMULA}
    assert pages.get("tests") == str(len(names))
    failed = {c.get("name"): c.find("failure") for c in pages.findall("testcase")}
    assert failed["https://ex.com/missing"].get("type") == "url-not-found"
    assert failed["https://ex.com/missing"].get("message") == "404 Not Found"
    assert failed[XSS].get("message") == "404 </script><script>alert(2)</script>"
    assert failed["https://ex.com/old"] is None  # a warning is below --fail-on error
    assert failed[COMMA_QUOTE] is None
    assert pages.get("failures") == str(sum(f is not None for f in failed.values())) == "4"
    # the index lists the 404 child: its testcase is in the index's suite
    index_cases = {c.get("name"): c for c in suites[INDEX].findall("testcase")}
    assert index_cases[OLD].find("failure").get("type") == "sitemap-not-found"
    assert suites[POSTS].get("failures") == "2"
    assert float(suites[POSTS].get("time")) == pytest.approx(6.1 + 0.025, abs=0.002)
    assert root.get("failures") == str(ERRORS)
    assert root.get("tests") == str(sum(int(s.get("tests")) for s in suites.values()))
    # sitemap-level info finding: a passing testcase with the finding in system-out
    own = pages.findall("testcase")[0]
    assert own.find("failure") is None
    assert "lastmod-missing" in own.findtext("system-out")


def test_junit_threshold_changes_failures() -> None:
    warn = parse_junit(run("junit", stream(), fail_on="warning"))
    assert warn.get("failures") == str(ERRORS + WARNINGS - 1)  # two url-redirects on one URL
    case = warn.xpath("//testcase[@name='https://ex.com/chain']")[0]
    assert case.find("failure").get("type") in {"url-redirect", "url-redirect-chain"}
    assert "url-redirect-chain" in case.findtext("failure")
    never = parse_junit(run("junit", stream(), fail_on="never"))
    assert never.get("failures") == "0"
    assert never.xpath("//failure") == []


def test_junit_survives_characters_xml_forbids() -> None:
    recs = [
        url_rec("https://ex.com/\x00\x1b[31m", PAGES, 2, 404),
        find("url-not-found", "bad \x07 bell", "https://ex.com/\x00\x1b[31m", PAGES, 2),
    ]
    root = parse_junit(run("junit", recs))
    assert root.get("failures") == "1"
