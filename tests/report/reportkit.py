"""The record stream the report writers' tests share (tests/report/test_*.py): a realistic
crawl's records with hostile values, and parsers for what the writers produce."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from lxml import etree

from audit.core.codes import CODES
from audit.report import make_writer

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


def read_csv(text: str) -> list[dict[str, str]]:
    assert text.startswith("\ufeff")  # for Excel
    return list(csv.DictReader(io.StringIO(text[1:], newline="")))


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


def audited_urls(records: list[dict[str, Any]]) -> set[str]:
    urls = set()
    for r in records:
        for key in ("url", "sitemap", "parent"):
            if isinstance(r.get(key), str):
                urls.add(r[key])
    return urls


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
