"""Report writers: every format fed the same realistic record stream, its output parsed back."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from lxml import html as lhtml

from audit.core.codes import CODES
from audit.report import (
    FORMATS,
    ReportInputError,
    convert,
    fails,
    make_writer,
    read_jsonl,
    worst_severity,
)

INDEX = "https://ex.com/sitemap_index.xml"
PAGES = "https://ex.com/sitemap-pages.xml"
POSTS = "https://ex.com/sitemap-posts.xml.gz"
OLD = "https://ex.com/sitemap-old.xml"
ROBOTS = "https://ex.com/robots.txt"
COMMA_QUOTE = 'https://ex.com/a,b"c'
PIPE = "https://ex.com/pipe|x`y"
XSS = "https://ex.com/</script><script>alert(1)</script>"
JS_URL = "javascript:alert(1)"
FORMULA = "=HYPERLINK(1)"


def url_rec(
    url: str,
    sitemap: str,
    line: int,
    status: int | None = 200,
    redirects: list[tuple[str, int]] = (),  # type: ignore[assignment]
    lastmod: str | None = "2024-05-01",
    elapsed: float = 12.5,
    error: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "url",
        "url": url,
        "sitemap": sitemap,
        "line": line,
        "status": status,
        "final_url": redirects[-1][0] if redirects else url,
        "redirects": [{"url": u, "status": s} for u, s in redirects],
        "lastmod": lastmod,
        "last_modified": None,
        "robots": "allowed",
        "elapsed_ms": elapsed,
        "error": error,
    }


def find(code: str, message: str, url: str | None, sitemap: str | None, line: int | None):
    return {
        "type": "finding",
        "code": code,
        "severity": CODES[code].severity.value,
        "url": url,
        "sitemap": sitemap,
        "line": line,
        "message": message,
    }


def sm(url: str, parent: str | None, kind: str | None, status: int, entries: int, gz=False):
    return {
        "type": "sitemap",
        "url": url,
        "parent": parent,
        "kind": kind,
        "status": status,
        "entries": entries,
        "bytes": entries * 120,
        "gzip": gz,
        "error": None,
    }


def summary_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    sev: Counter[str] = Counter(r["severity"] for r in records if r["type"] == "finding")
    codes: Counter[str] = Counter(r["code"] for r in records if r["type"] == "finding")
    return {
        "type": "summary",
        "sitemaps": sum(r["type"] == "sitemap" for r in records),
        "urls": sum(r["type"] == "url" for r in records),
        "findings": {s: sev[s] for s in ("error", "warning", "info")},
        "by_code": dict(codes),
        "duration_s": 4.2,
    }


def stream() -> list[dict[str, Any]]:
    """An audit as audit/pipeline/auditor.py emits it: index, three children (one 404), url checks."""
    recs: list[dict[str, Any]] = [
        find("robots-no-sitemap", "robots.txt declares no Sitemap: line", ROBOTS, None, None),
        sm(INDEX, None, "sitemapindex", 200, 3),
        find("sitemap-not-found", "answers 404", OLD, INDEX, 9),
        sm(OLD, INDEX, None, 404, 0),
        # entry findings come before the url record of the same URL
        find("loc-duplicate", "listed before at line 3", COMMA_QUOTE, PAGES, 12),
        find("loc-invalid", "scheme javascript is not http(s)", JS_URL, PAGES, 14),
        find("loc-invalid", "not a URI", FORMULA, PAGES, 15),
        url_rec("https://ex.com/", PAGES, 3),
        url_rec("https://ex.com/old", PAGES, 6, 200, [("https://ex.com/old", 301)]),
        find("url-redirect", "301 to https://ex.com/new", "https://ex.com/old", PAGES, 6),
        url_rec("https://ex.com/missing", PAGES, 9, 404),
        find("url-not-found", "404 Not Found", "https://ex.com/missing", PAGES, 9),
        url_rec(COMMA_QUOTE, PAGES, 12),
        url_rec(PIPE, PAGES, 13, lastmod="2099-01-01"),
        find("lastmod-future", "lastmod | is `in` the future", PIPE, PAGES, 13),
        url_rec(XSS, PAGES, 16, 404, lastmod=None),
        find("url-not-found", "404 </script><script>alert(2)</script>", XSS, PAGES, 16),
        url_rec(
            "https://ex.com/chain",
            PAGES,
            18,
            200,
            [("https://ex.com/chain", 302), ("https://ex.com/chain2", 301)],
            lastmod="2015-01-01",
        ),
        find("url-redirect", "302 to https://ex.com/chain2", "https://ex.com/chain", PAGES, 18),
        find("url-redirect-chain", "2 hops", "https://ex.com/chain", PAGES, 18),
        url_rec("https://ex.com/ünï", PAGES, 20, lastmod=None),
        sm(PAGES, INDEX, "urlset", 200, 10),
        find("lastmod-missing", "2 entries without <lastmod>", None, PAGES, None),
        url_rec("https://ex.com/post/1", POSTS, 4, 503, error="503 after 2 retries"),
        find("url-server-error", "503 after retries", "https://ex.com/post/1", POSTS, 4),
        url_rec("https://ex.com/post/2", POSTS, 8, None, error="timeout"),
        find("url-unreachable", "timeout after 30 s", "https://ex.com/post/2", POSTS, 8),
        url_rec("https://ex.com/post/3", POSTS, 12, 200, elapsed=6100.0),
        find("url-slow", "6.1 s", "https://ex.com/post/3", POSTS, 12),
        sm(POSTS, INDEX, "urlset", 200, 3, gz=True),
        {"type": "progress-note", "text": "an unknown record type"},
        {
            "type": "hosts",
            "hosts": [
                {
                    "host": "ex.com",
                    "requests": 12,
                    "rate": 9.5,
                    "retries": 2,
                    "http_429": 1,
                    "server_errors": 3,
                    "backoff_s": 1.5,
                    "slow": False,
                    "notes": ["an unexpected list"],
                }
            ],
        },
    ]
    recs.append(summary_of(recs))
    return recs


URL_RECORDS = 11
ERRORS, WARNINGS, INFOS = 7, 6, 2


def run(fmt: str, records: list[dict[str, Any]], **opts: Any) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out, **opts)
    for rec in records:
        writer.write(rec)
    writer.close()
    return out.getvalue()


def without_summary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["type"] != "summary"]


def test_the_stream_is_what_the_tests_assume() -> None:
    s = stream()[-1]
    assert s["urls"] == URL_RECORDS
    assert s["findings"] == {"error": ERRORS, "warning": WARNINGS, "info": INFOS}
    assert worst_severity(s) == "error"
    assert fails(s, "error") and fails(s, "info") and not fails(s, "never")
    assert worst_severity({"findings": {"error": 0, "warning": 0, "info": 3}}) == "info"
    assert not fails({"findings": {"error": 0, "warning": 0, "info": 3}}, "warning")


def test_unknown_format_and_level_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown report format 'xml'.*html"):
        make_writer("xml", io.StringIO())
    with pytest.raises(ValueError, match="--fail-on"):
        make_writer("text", io.StringIO(), fail_on="fatal")


# --- jsonl and json ---------------------------------------------------------


def test_jsonl_writes_every_record_as_one_line() -> None:
    recs = stream()
    recs[7] = {**recs[7], "note": "line\u2028separator"}
    text = run("jsonl", recs)
    lines = text.split("\n")
    assert lines[-1] == ""
    assert [json.loads(line) for line in lines[:-1]] == recs
    assert "\u2028" not in text  # escaped: no reader may split the line there


def test_json_is_one_document_with_every_section() -> None:
    recs = stream()
    doc = json.loads(run("json", recs))
    assert list(doc)[:5] == ["summary", "hosts", "sitemaps", "findings", "urls"]
    assert doc["summary"] == recs[-1]
    assert [u["url"] for u in doc["urls"]] == [r["url"] for r in recs if r["type"] == "url"]
    assert len(doc["findings"]) == ERRORS + WARNINGS + INFOS
    assert [s["url"] for s in doc["sitemaps"]] == [INDEX, OLD, PAGES, POSTS]
    assert doc["other"] == [{"type": "progress-note", "text": "an unknown record type"}]
    assert doc["hosts"][0]["host"] == "ex.com"


# --- csv --------------------------------------------------------------------


def read_csv(text: str) -> list[dict[str, str]]:
    assert text.startswith("\ufeff")  # for Excel
    return list(csv.DictReader(io.StringIO(text[1:], newline="")))


def test_csv_has_one_row_per_url_with_codes_joined_from_findings() -> None:
    rows = read_csv(run("csv", stream()))
    by_url = {r["url"]: r for r in rows}
    # + three entries never fetched (two invalid, one a 404 child sitemap of the
    # index); robots.txt is listed by no sitemap, so it is no row
    assert len(rows) == len(by_url) == URL_RECORDS + 3
    assert ROBOTS not in by_url
    assert by_url[OLD]["codes"] == "sitemap-not-found"
    # a comma and a quote survive the round trip, and the entry finding that
    # came before the url record is joined to it
    row = by_url[COMMA_QUOTE]
    assert (row["status"], row["worst_severity"], row["codes"]) == (
        "200",
        "warning",
        "loc-duplicate",
    )
    assert by_url["https://ex.com/missing"]["codes"] == "url-not-found"
    assert by_url["https://ex.com/missing"]["worst_severity"] == "error"
    chain = by_url["https://ex.com/chain"]
    assert chain["redirect_hops"] == "2"
    assert chain["codes"] == "url-redirect url-redirect-chain"
    assert chain["redirect_chain"] == "302 https://ex.com/chain -> 301 https://ex.com/chain2"
    assert by_url["https://ex.com/"]["codes"] == ""
    assert by_url["https://ex.com/ünï"]["status"] == "200"
    assert by_url["https://ex.com/post/2"]["status"] == ""
    assert by_url["https://ex.com/post/2"]["error"] == "timeout"
    # never fetched: a row from its findings alone, HTTP columns empty
    js = by_url[JS_URL]
    assert (js["sitemap"], js["line"], js["status"], js["codes"]) == (
        PAGES,
        "14",
        "",
        "loc-invalid",
    )
    # a cell a spreadsheet would evaluate is defused
    assert "'" + FORMULA in by_url
    assert list(rows[0]) == [
        "url",
        "sitemap",
        "line",
        "status",
        "final_url",
        "redirect_hops",
        "redirect_chain",
        "lastmod",
        "last_modified",
        "robots",
        "elapsed_ms",
        "worst_severity",
        "codes",
        "error",
        "outcome",
        "expected",
        "checked_url",
        "indexable",
        "indexability",
        "source",
        "inlinks",
    ]


def test_csv_rows_wait_only_a_bounded_window() -> None:
    """Rows are written while the stream goes on, not held until the end."""
    out = io.StringIO()
    writer = make_writer("csv", out)
    for i in range(2000):
        writer.write(url_rec(f"https://ex.com/p{i}", PAGES, i + 1))
    written = out.getvalue().count("\n") - 1
    assert 2000 - 300 < written < 2000
    writer.close()
    assert out.getvalue().count("\n") == 2001


def test_csv_without_bom() -> None:
    text = run("csv", stream(), csv_bom=False)
    assert text.startswith("url,sitemap,")


# --- junit ------------------------------------------------------------------

JUNIT_XSD = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:element name="testsuites">
    <xs:complexType>
      <xs:sequence>
        <xs:element ref="testsuite" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence>
      <xs:attribute name="name" type="xs:string"/>
      <xs:attribute name="tests" type="xs:nonNegativeInteger"/>
      <xs:attribute name="failures" type="xs:nonNegativeInteger"/>
      <xs:attribute name="errors" type="xs:nonNegativeInteger"/>
      <xs:attribute name="skipped" type="xs:nonNegativeInteger"/>
      <xs:attribute name="time" type="xs:decimal"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="testsuite">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="testcase" minOccurs="0" maxOccurs="unbounded">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="failure" minOccurs="0">
                <xs:complexType>
                  <xs:simpleContent>
                    <xs:extension base="xs:string">
                      <xs:attribute name="message" type="xs:string" use="required"/>
                      <xs:attribute name="type" type="xs:string" use="required"/>
                    </xs:extension>
                  </xs:simpleContent>
                </xs:complexType>
              </xs:element>
              <xs:element name="error" minOccurs="0">
                <xs:complexType>
                  <xs:simpleContent>
                    <xs:extension base="xs:string">
                      <xs:attribute name="message" type="xs:string" use="required"/>
                      <xs:attribute name="type" type="xs:string" use="required"/>
                    </xs:extension>
                  </xs:simpleContent>
                </xs:complexType>
              </xs:element>
              <xs:element name="system-out" type="xs:string" minOccurs="0"/>
            </xs:sequence>
            <xs:attribute name="name" type="xs:string" use="required"/>
            <xs:attribute name="classname" type="xs:string" use="required"/>
            <xs:attribute name="time" type="xs:decimal" use="required"/>
          </xs:complexType>
        </xs:element>
      </xs:sequence>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="tests" type="xs:nonNegativeInteger" use="required"/>
      <xs:attribute name="failures" type="xs:nonNegativeInteger" use="required"/>
      <xs:attribute name="errors" type="xs:nonNegativeInteger" use="required"/>
      <xs:attribute name="skipped" type="xs:nonNegativeInteger" use="required"/>
      <xs:attribute name="time" type="xs:decimal" use="required"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""


def parse_junit(text: str) -> etree._Element:
    root = etree.fromstring(text.encode("utf-8"))
    schema = etree.XMLSchema(etree.fromstring(JUNIT_XSD.encode()))
    schema.assertValid(root)
    return root


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


# --- sarif ------------------------------------------------------------------


def check_sarif(doc: dict[str, Any]) -> None:
    """The properties SARIF 2.1.0 requires, and the references between them."""
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    assert len(doc["runs"]) == 1
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "sitemap-audit"
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    for result in doc["runs"][0]["results"]:
        assert result["ruleId"] in ids
        assert ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in {"error", "warning", "note"}
        assert result["message"]["text"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"]
        if "region" in loc:
            assert isinstance(loc["region"]["startLine"], int) and loc["region"]["startLine"] >= 1
    for inv in doc["runs"][0].get("invocations", []):
        assert isinstance(inv["executionSuccessful"], bool)


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


# --- markdown and text ------------------------------------------------------


def test_markdown_tables_and_escaping() -> None:
    text = run("markdown", stream(), examples=2)
    assert "| Errors | 7 |" in text and "| Warnings | 6 |" in text and "| Info | 2 |" in text
    assert "| Verdict (fail on error) | **FAIL** |" in text
    assert (
        "| [`url-not-found`](docs/codes.md#url-not-found) | error | 2 | Not found \\(404\\)"
        " | the URL answers 404 or 410 |"
    ) in text
    # the URL with a pipe and a backtick: one cell, in a longer fence, pipe escaped
    row = next(line for line in text.splitlines() if "pipe" in line)
    assert "`` https://ex.com/pipe\\|x`y ``" in row
    assert row.count("|") - row.count("\\|") == 4  # a three-column row
    assert "lastmod \\| is \\`in\\` the future" in row
    row = next(line for line in text.splitlines() if "alert\\(2" in line)
    assert row.endswith("| 404 \\</script\\>\\<script\\>alert\\(2\\)\\</script\\> |")
    # raw markup only inside code spans, where renderers show it as text
    assert "<script>" not in re.sub(r"`[^`]*`", "", text)
    # examples are bounded per code
    assert "… and 2 more." not in text  # url-not-found has exactly 2
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")


def test_text_report_for_a_terminal() -> None:
    text = run("text", stream(), examples=1)
    lines = text.splitlines()
    assert lines[0] == "sitemap-audit report"
    assert "4 sitemaps, 11 URLs, 4.2 s" in text
    assert "findings: 7 errors, 6 warnings, 2 info" in text
    by_code = [line.split()[1] for line in lines if re.match(r"  (error|warning|info) ", line)]
    # errors first, most frequent first
    assert set(by_code[:2]) == {"url-not-found", "loc-invalid"}
    assert by_code[2:5] == ["sitemap-not-found", "url-server-error", "url-unreachable"]
    assert by_code[-1] in {"robots-no-sitemap", "lastmod-missing"}
    assert f"  {PAGES}:9  https://ex.com/missing  404 Not Found" in text
    assert "… and 1 more" in text
    hosts = lines[lines.index("hosts") + 1 :][:2]
    assert hosts[0].split() == [
        "host",
        "requests",
        "rate/s",
        "retries",
        "429",
        "answers",
        "5xx",
        "answers",
        "backoff",
        "(s)",
        "slow",
    ]
    assert hosts[1].split() == ["ex.com", "12", "9.5", "2", "1", "3", "1.5", "no"]
    assert lines[-1] == "FAIL: 7 errors at or above --fail-on error"
    assert "\x1b[" not in text  # not a terminal
    never = run("text", stream(), fail_on="never").splitlines()[-1]
    assert never == "DONE: 7 errors (not failing: --fail-on never)"
    quiet = [r for r in stream() if r.get("severity") != "error" and r["type"] != "summary"]
    quiet.append(summary_of(quiet))
    assert run("text", quiet).splitlines()[-1] == "PASS: nothing at or above --fail-on error"


def test_text_uses_colour_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    writer = make_writer("text", out)
    for rec in stream():
        writer.write(rec)
    writer.close()
    assert "\x1b[31m" in out.getvalue()


# --- html -------------------------------------------------------------------


def audited_urls(records: list[dict[str, Any]]) -> set[str]:
    urls = set()
    for r in records:
        for key in ("url", "sitemap", "parent"):
            if isinstance(r.get(key), str):
                urls.add(r[key])
    return urls


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


def test_csv_late_findings_get_a_row_of_their_own() -> None:
    """Findings computed at the end of a run (hreflang reciprocity) come after the row."""
    recs = [url_rec(f"https://ex.com/p{i}", PAGES, i + 1) for i in range(300)]
    recs.append(find("hreflang-not-reciprocal", "B does not name A", "https://ex.com/p0", PAGES, 1))
    rows = read_csv(run("csv", recs))
    assert len(rows) == 301
    assert rows[-1]["url"] == "https://ex.com/p0"
    assert (rows[-1]["status"], rows[-1]["codes"]) == ("", "hreflang-not-reciprocal")


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


def generated_stream(n: int) -> Any:
    """n url records over 20 sitemaps, a quarter with findings, then a summary."""
    yield sm(INDEX, None, "sitemapindex", 200, 20)
    sev: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    per = n // 20
    for s in range(20):
        child = f"https://big.example/sitemap-{s}.xml"
        for i in range(per):
            u = f"https://big.example/section-{s}/page-{i}?ref=sitemap&amp=x"
            status = 404 if i % 4 == 1 else 200
            yield url_rec(u, child, i + 2, status, lastmod=f"20{10 + i % 15}-0{1 + i % 9}-15")
            if i % 4 == 1:
                sev["error"] += 1
                codes["url-not-found"] += 1
                yield find("url-not-found", "404 Not Found", u, child, i + 2)
            elif i % 8 == 2:
                sev["warning"] += 1
                codes["url-slow"] += 1
                yield find("url-slow", "took 6.0 s", u, child, i + 2)
        yield sm(child, INDEX, "urlset", 200, per)
    yield {
        "type": "summary",
        "sitemaps": 21,
        "urls": per * 20,
        "findings": {"error": sev["error"], "warning": sev["warning"], "info": 0},
        "by_code": dict(codes),
        "duration_s": 1234.5,
    }


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


# --- interrupted runs, empty runs -------------------------------------------


def parse_any(fmt: str, text: str) -> Any:
    if fmt == "json":
        return json.loads(text)
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    if fmt == "csv":
        return read_csv(text)
    if fmt == "junit":
        return parse_junit(text)
    if fmt == "sarif":
        doc = json.loads(text)
        check_sarif(doc)
        return doc
    if fmt == "html":
        return lhtml.fromstring(text)
    return text


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_stream_gives_a_valid_document(fmt: str) -> None:
    text = run(fmt, [])
    parse_any(fmt, text)
    if fmt == "json":
        assert json.loads(text)["urls"] == []
    if fmt == "text":  # no summary: the run never finished, nothing was audited
        assert text.splitlines()[-1].startswith("PARTIAL: the run did not finish after 0 ")


@pytest.mark.parametrize("fmt", FORMATS)
def test_interrupted_stream_gives_a_valid_document(fmt: str) -> None:
    recs = without_summary(stream())[:20]
    text = run(fmt, recs)
    parsed = parse_any(fmt, text)
    if fmt == "json":
        assert parsed["summary"]["partial"] is True
        assert parsed["summary"] == _converted_summary(recs)
        assert parsed["summary"]["urls"] == sum(r["type"] == "url" for r in recs)
    if fmt == "text":
        assert "incomplete" in text.splitlines()[0]
    if fmt == "html":
        assert "Incomplete." in parsed.text_content()
    if fmt == "sarif":
        assert parsed["runs"][0]["invocations"][0]["executionSuccessful"] is False


def _converted_summary(recs: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "r.jsonl"
        src.write_text(run("jsonl", recs), encoding="utf-8")
        return convert(src, "jsonl", io.StringIO())


def severity_counts(fmt: str, text: str) -> tuple[int, int, int]:
    if fmt == "json":
        f = json.loads(text)["summary"]["findings"]
        return f["error"], f["warning"], f["info"]
    if fmt == "sarif":
        c = Counter(r["level"] for r in json.loads(text)["runs"][0]["results"])
        return c["error"], c["warning"], c["note"]
    if fmt == "text":
        m = re.search(r"findings: (\d+) errors?, (\d+) warnings?, (\d+) info", text)
        assert m
        return int(m[1]), int(m[2]), int(m[3])
    if fmt == "markdown":
        get = [
            int(re.search(rf"\| {k} \| (\d+) \|", text)[1]) for k in ("Errors", "Warnings", "Info")
        ]  # type: ignore[index]
        return get[0], get[1], get[2]
    if fmt == "html":
        doc = lhtml.fromstring(text)
        vals = [
            int(doc.get_element_by_id(f"card-{k}").find_class("v")[0].text_content())
            for k in ("error", "warning", "info")
        ]
        return vals[0], vals[1], vals[2]
    if fmt == "junit":
        root = parse_junit(text)
        return int(root.get("failures")), -1, -1
    raise AssertionError(fmt)


@pytest.mark.parametrize("interrupted", [False, True])
def test_counts_agree_across_formats(tmp_path: Path, interrupted: bool) -> None:
    recs = stream()
    if interrupted:
        recs = without_summary(recs)
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", recs), encoding="utf-8")
    seen = {}
    for fmt in ("json", "sarif", "text", "markdown", "html", "junit"):
        out = io.StringIO()
        convert(src, fmt, out, fail_on="error")
        seen[fmt] = severity_counts(fmt, out.getvalue())
    assert seen.pop("junit")[0] == ERRORS  # one failing testcase per error here
    assert set(seen.values()) == {(ERRORS, WARNINGS, INFOS)}


# --- report conversion ------------------------------------------------------


def test_convert_round_trips_through_jsonl(tmp_path: Path) -> None:
    recs = stream()
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", recs), encoding="utf-8")
    assert list(read_jsonl(src)) == recs
    for fmt in FORMATS:
        out = io.StringIO()
        summary = convert(src, fmt, out, fail_on="warning", examples=3)
        assert summary == recs[-1]
        if fmt == "html":  # a fresh nonce each time
            assert len(out.getvalue()) == len(run(fmt, recs, fail_on="warning", examples=3))
        else:
            assert out.getvalue() == run(fmt, recs, fail_on="warning", examples=3), fmt


def test_read_jsonl_skips_blank_lines_and_accepts_crlf_and_bom(tmp_path: Path) -> None:
    src = tmp_path / "r.jsonl"
    src.write_bytes(
        b'\xef\xbb\xbf{"type": "url", "url": "https://ex.com/a\\u2028b"}\r\n\r\n  \n'
        b'{"type": "summary"}\n'
    )
    assert [r["type"] for r in read_jsonl(src)] == ["url", "summary"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type": "url", "url": ', r"r\.jsonl:3: not valid JSON \(Expecting value at column 24\)"),
        ("[1, 2]", r"r\.jsonl:3: expected a JSON object, got list"),
        ('{"url": "x"}', r'r\.jsonl:3: record has no "type"'),
    ],
)
def test_read_jsonl_bad_line_is_one_line_error(tmp_path: Path, line: str, message: str) -> None:
    src = tmp_path / "r.jsonl"
    src.write_text('{"type": "sitemap", "url": "x"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ReportInputError, match=message) as err:
        list(read_jsonl(src))
    assert isinstance(err.value, ValueError)
    assert "\n" not in str(err.value)
    # converting still closes a valid document of what was read, then raises
    out = io.StringIO()
    with pytest.raises(ReportInputError):
        convert(src, "json", out)
    assert len(json.loads(out.getvalue())["sitemaps"]) == 1


def test_convert_refuses_to_write_onto_its_source(tmp_path: Path) -> None:
    src = tmp_path / "audit.jsonl"
    src.write_text(run("jsonl", stream()), encoding="utf-8")
    with (
        open(src, "a", encoding="utf-8") as out,
        pytest.raises(ReportInputError, match="onto itself"),
    ):
        convert(src, "json", out)
    assert list(read_jsonl(src)) == stream()


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


def test_read_jsonl_missing_file_and_bad_encoding(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=r"nope\.jsonl: cannot read report"):
        list(read_jsonl(tmp_path / "nope.jsonl"))
    bad = tmp_path / "latin.jsonl"
    bad.write_bytes(b'{"type": "url", "url": "caf\xe9"}\n')
    with pytest.raises(ReportInputError, match=r"latin\.jsonl: near line 1: not UTF-8"):
        list(read_jsonl(bad))


# --- a real browser -----------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium(*args: str, profile: Path) -> str:
    assert CHROMIUM
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    )
    return done.stdout


# CI sets REQUIRE_CHROMIUM so that a missing browser fails instead of skipping.
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
