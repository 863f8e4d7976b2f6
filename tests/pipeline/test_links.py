"""pipeline/links.py's own parts, without a server: the coverage verdicts of a held record,
its `source` and `inlinks` marks, and summary.coverage added up in the run's notes. (The
crawl itself over loopback: test_links_crawl.py, test_links_frontier.py, test_links_state.py.)"""

from __future__ import annotations

from collections import Counter
from typing import Any

from audit.core.records import UrlResult
from audit.pipeline.links import add_coverage, marked, verdicts

ROOT = "http://example.com/"
PAGE = "http://example.com/a"


def record(url: str = PAGE, status: int = 200, *, indexable: bool = True) -> UrlResult:
    return UrlResult(
        url, None, None, status, url, (), None, None, "allowed", 5.0,
        extra={"indexable": indexable, "indexability": None if indexable else "noindex"},
    )  # fmt: skip


def codes(*args: Any) -> list[str]:
    return [f.code for f in verdicts(*args)]


def test_a_listed_page_no_page_links_to_is_an_orphan_only_when_the_crawl_was_complete() -> None:
    assert codes(True, record(), 0, None, True, {ROOT}) == ["url-orphan"]
    assert codes(True, record(), 0, None, False, {ROOT}) == []  # cut: withheld
    assert codes(True, record(), 2, ROOT, True, {ROOT}) == []  # linked
    assert codes(True, record(ROOT), 0, None, True, {ROOT}) == []  # a root is no orphan


def test_a_linked_page_no_sitemap_lists_and_a_broken_link_target() -> None:
    assert codes(False, record(), 1, ROOT, True, {ROOT}) == ["page-not-in-sitemap"]
    assert codes(False, record(indexable=False), 1, ROOT, True, {ROOT}) == []
    assert codes(False, record(status=404, indexable=False), 3, ROOT, True, {ROOT}) == [
        "link-broken"
    ]


def test_marks_say_where_a_page_was_found() -> None:
    assert marked(True, record(), 0).extra == {**(record().extra or {}), "source": "sitemap", "inlinks": 0}  # fmt: skip
    assert (marked(True, record(), 2).extra or {})["source"] == "both"
    assert (marked(False, record(), 1).extra or {})["source"] == "links"


def test_coverage_adds_up_in_the_run_s_notes() -> None:
    notes: dict[str, Any] = {}
    counts = Counter({"url-orphan": 1, "page-not-in-sitemap": 2, "link-broken": 3})
    add_coverage(notes, None, counts, fetched=5, listed=4, depths=Counter({0: 4, 1: 5}))
    assert notes["coverage"] == {
        "complete": True, "pages": 9, "listed": 4, "orphans": 1, "unlisted": 2,
        "broken_links": 3, "depths": {"0": 4, "1": 5},
    }  # fmt: skip
    add_coverage(notes, "max-pages", Counter(), fetched=1, listed=0, depths=Counter({2: 1}))
    assert notes["coverage"]["complete"] is False
    assert notes["coverage"]["stopped_by"] == "max-pages"
    assert notes["coverage"]["pages"] == 10
    assert notes["coverage"]["depths"] == {"0": 4, "1": 5, "2": 1}
