"""audit.rules.crawlhints: changefreq and priority values, priority-uniform counts."""

from __future__ import annotations

from audit.core.records import Finding
from audit.rules.crawlhints import CrawlHints
from audit.rules.findings import NO_FINDINGS

SM = "https://www.example.com/sitemap.xml"


def test_priority_uniform_needs_every_url_and_two_of_them() -> None:
    hints = CrawlHints(SM)
    for line in (1, 2, 3):
        assert hints.count_priority(" 0.5 ", line, None, True, NO_FINDINGS) == []
    ((code, message),) = hints.problems(3)
    assert code == "priority-uniform" and "all 3 URLs have <priority> '0.5'" in message
    assert hints.problems(4) == []  # one URL without a priority


def test_equal_numbers_written_differently_are_uniform_other_values_are_not() -> None:
    hints = CrawlHints(SM)
    for text in ("0.5", "0.50", ".5"):
        hints.count_priority(text, 1, None, True, NO_FINDINGS)
    assert [c for c, _ in hints.problems(3)] == ["priority-uniform"]
    hints.count_priority("0.6", 4, None, True, NO_FINDINGS)
    assert hints.problems(4) == []


def test_an_index_entry_priority_is_checked_but_not_counted() -> None:
    hints = CrawlHints(SM)
    hints.count_priority("0.5", 1, None, False, NO_FINDINGS)
    hints.count_priority("0.5", 2, None, False, NO_FINDINGS)
    assert hints.problems(0) == []
    out = hints.count_priority("2", 3, "https://www.example.com/", False, NO_FINDINGS)
    assert [f.code for f in out] == ["priority-invalid"] and out is not NO_FINDINGS
    assert "is outside 0.0 to 1.0" in out[0].message and out[0].line == 3


def test_invalid_priority_is_reported_every_time_not_only_when_new() -> None:
    hints = CrawlHints(SM)
    for line in (1, 2):
        out = hints.count_priority("high", line, None, True, NO_FINDINGS)
        assert [(f.code, f.line) for f in out] == [("priority-invalid", line)]
    assert NO_FINDINGS == []


def test_changefreq_hint_names_the_lower_case_value() -> None:
    hints = CrawlHints(SM)
    out: list[Finding] = []
    hints.check_changefreq("Weekly", 7, None, out)
    hints.check_changefreq("fortnightly", 8, None, out)
    hints.check_changefreq(" daily\n", 9, None, out)  # valid once stripped
    assert [f.line for f in out] == [7, 8]
    assert "write 'weekly' (lower-case)" in out[0].message
    assert "use one of always, daily, hourly" in out[1].message
