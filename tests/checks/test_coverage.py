"""The link crawl's verdicts (audit/checks/coverage.py): url-orphan only when the crawl was
complete, page-not-in-sitemap for indexable pages only, link-broken for allowed targets
that fail, coverage-incomplete saying what stopped the crawl."""

from __future__ import annotations

from typing import Any

from audit.checks.coverage import (
    coverage_incomplete,
    link_broken,
    page_not_in_sitemap,
    page_reason,
    url_orphan,
)
from audit.checks.links import PageLinks
from audit.core.records import UrlResult

URL = "https://e.example/a"


def record(status: int | None = 200, robots: Any = "allowed", **extra: Any) -> UrlResult:
    return UrlResult(URL, "https://e.example/s.xml", 5, status, URL, (), None, None, robots,
                     1.0, None if status else "connection refused", extra or None)  # fmt: skip


def test_an_orphan_is_indexable_unlinked_and_judged_on_a_complete_crawl() -> None:
    orphan = url_orphan(record(indexable=True), 0, complete=True)
    assert orphan is not None and orphan.code == "url-orphan"
    assert (orphan.url, orphan.sitemap, orphan.line) == (URL, "https://e.example/s.xml", 5)
    assert url_orphan(record(indexable=True), 0, complete=False) is None
    assert url_orphan(record(indexable=True), 2, complete=True) is None
    assert url_orphan(record(indexable=False), 0, complete=True) is None
    assert url_orphan(record(), 0, complete=True) is None


def test_a_page_only_links_led_to() -> None:
    found = page_not_in_sitemap(record(indexable=True), 1, "https://e.example/")
    assert found is not None and found.code == "page-not-in-sitemap"
    assert "linked from 1 page (e.g. https://e.example/)" in found.message
    many = page_not_in_sitemap(record(indexable=True), 1200, "https://e.example/")
    assert many is not None and "1,200 pages" in many.message
    assert page_not_in_sitemap(record(indexable=False), 3, "https://e.example/") is None
    assert page_not_in_sitemap(record(indexable=True), 0, None) is None


def test_a_broken_link_is_an_allowed_target_that_fails() -> None:
    gone = link_broken(record(404), 3, "https://e.example/b")
    assert gone is not None and gone.code == "link-broken"
    assert "3 pages of the site link to this URL, which answers 404" in gone.message
    down = link_broken(record(None), 1, "https://e.example/b")
    assert (
        down is not None and "links to this URL, which fails (connection refused)" in down.message
    )
    assert link_broken(record(301), 3, "https://e.example/b") is None
    assert link_broken(record(404, robots="blocked"), 3, "https://e.example/b") is None
    assert link_broken(record(500), 0, None) is None


def test_incomplete_says_what_stopped_it() -> None:
    found = coverage_incomplete("https://e.example/", 1, "--max-pages 1")
    assert found.code == "coverage-incomplete" and found.url == "https://e.example/"
    assert "stopped (--max-pages 1) after 1 page before" in found.message


def test_page_reason_reads_the_body_s_robots_meta_and_canonical() -> None:
    assert page_reason("robots", PageLinks((), noindex=True), URL) == "robots"  # first reason
    assert page_reason(None, None, URL) is None
    assert page_reason(None, PageLinks((), noindex=True), URL) == "noindex"
    assert page_reason(None, PageLinks((), canonical="https://e.example/other"), URL) == "canonical"
    same = PageLinks((), canonical="HTTPS://E.EXAMPLE:443/a")
    assert page_reason(None, same, URL) is None  # itself, spelt otherwise
