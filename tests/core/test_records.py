"""The outcome records (audit/core/records.py): a finding takes its code's severity from
the registry, an overlong URL is clipped for reports, and each record's `to_json()` is the
jsonl record of DESIGN.md (its `type`, its fields, extras after them)."""

from __future__ import annotations

import json

import pytest

from audit.core.codes import CODES
from audit.core.records import (
    MAX_REPORTED_URL,
    FetchResult,
    Finding,
    Hop,
    Severity,
    SitemapRecord,
    UrlResult,
    clip_url,
    finding,
    header_value,
    header_values,
)


@pytest.mark.parametrize("code", ["url-not-found", "lastmod-future", "robots-missing"])
def test_a_finding_takes_its_code_s_severity_from_the_registry(code: str) -> None:
    found = finding(code, "why", sitemap="https://e.example/s.xml", line=3, url="https://e/a")
    assert found.severity is CODES[code].severity
    assert isinstance(found.severity, Severity)
    line = found.to_json()
    assert line["type"] == "finding" and line["code"] == code
    assert line["severity"] == CODES[code].severity.value
    assert (line["sitemap"], line["line"], line["url"]) == (
        "https://e.example/s.xml",
        3,
        "https://e/a",
    )
    assert json.loads(json.dumps(line)) == line


def test_an_unregistered_code_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        finding("no-such-code", "x")


def test_a_finding_s_own_fields_follow_and_do_not_count_for_equality() -> None:
    a = finding("agent-blocked", "m", fields={"agent": "GPTBot", "count": 2})
    b = finding("agent-blocked", "m", fields={"agent": "other", "count": 9})
    assert a == b and hash(a) == hash(b)
    line = a.to_json()
    assert list(line)[-2:] == ["agent", "count"] and line["count"] == 2


def test_an_overlong_url_is_clipped_with_the_count_of_what_was_left_out() -> None:
    short = "https://e.example/" + "a" * 10
    assert clip_url(short) is short
    long = "https://e.example/" + "b" * (MAX_REPORTED_URL * 2)
    clipped = clip_url(long)
    assert clipped.startswith(long[:MAX_REPORTED_URL])
    assert clipped.endswith(f"[{len(long) - MAX_REPORTED_URL:,} more characters]")
    assert finding("loc-too-long", "m", url=long).url == clipped


def test_url_and_sitemap_records() -> None:
    hops = (Hop("https://e/a", 301), Hop("https://e/b", 302))
    url = UrlResult("https://e/a", "https://e/s.xml", 4, 200, "https://e/c", hops,
                    "2024-01-01", "Mon, 01 Jan 2024 00:00:00 GMT", "allowed", 12.5)  # fmt: skip
    line = url.to_json()
    assert line["type"] == "url" and line["status"] == 200
    assert line["redirects"] == [{"url": "https://e/a", "status": 301},
                                 {"url": "https://e/b", "status": 302}]  # fmt: skip
    extra = url.with_extra({"content_changed": True})
    assert extra.to_json() == {**line, "content_changed": True}
    assert url.extra is None  # a copy: the original is unchanged
    never = UrlResult.unrequested("https://e/x", None, None, None, "blocked")
    assert (never.status, never.redirects, never.robots) == (None, (), "blocked")
    assert never.to_json()["redirects"] == []
    sm = SitemapRecord("https://e/s.xml", None, "urlset", 200, 7, 1234, True)
    assert sm.to_json() == {"type": "sitemap", "url": "https://e/s.xml", "parent": None,
                            "kind": "urlset", "status": 200, "entries": 7, "bytes": 1234,
                            "gzip": True, "error": None}  # fmt: skip


def test_with_fields_adds_to_the_extras_it_had_and_replaces_a_field_given_again() -> None:
    bare = UrlResult.unrequested("https://e/x", None, None, None, "allowed")
    first = bare.with_fields({"source": "intent", "indexable": False})
    assert first.extra == {"source": "intent", "indexable": False}
    again = first.with_fields({"indexable": True, "intent": {"ok": True}})
    # the fields it had stay where they were; a field given again takes its new value
    assert list(again.extra or {}) == ["source", "indexable", "intent"]
    assert again.extra == {"source": "intent", "indexable": True, "intent": {"ok": True}}
    assert first.extra == {"source": "intent", "indexable": False}  # a copy: unchanged
    assert (again.url, again.robots) == (bare.url, bare.robots)


def test_headers_by_lower_cased_name_first_and_every_value() -> None:
    headers = (("x-robots-tag", "noindex"), ("link", "<a>"), ("x-robots-tag", "nofollow"))
    result = FetchResult("https://e/a", "https://e/a", 200, headers)
    assert result.header("X-Robots-Tag") == "noindex" == header_value(headers, "x-robots-tag")
    assert result.header_all("X-ROBOTS-TAG") == ["noindex", "nofollow"]
    assert header_values(headers, "etag") == [] and result.header("etag") is None


def test_findings_are_values() -> None:
    a = Finding("url-slow", Severity.WARNING, "slow", url="https://e/a")
    assert a == Finding("url-slow", Severity.WARNING, "slow", url="https://e/a")
    assert len({a, Finding("url-slow", Severity.WARNING, "slow", url="https://e/a")}) == 1
