"""The comparison of `diff` (audit.state.compare), on two sides loaded from records:
each section's rows, a repeated finding key counted once, outcomes as one word, what a
side cut by --max-urls cannot vouch for, and the alerts judged on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.state.compare import SECTIONS, Alerts, Comparison, find_alerts


def url(u: str, sitemap: str | None = "s.xml", **kw: Any) -> dict[str, Any]:
    return {"type": "url", "url": u, "sitemap": sitemap, **kw}


def finding(code: str, u: str | None, severity: str = "error", **kw: Any) -> dict[str, Any]:
    return {"type": "finding", "code": code, "url": u, "severity": severity, **kw}


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Comparison]:
    comparison = Comparison(str(tmp_path))
    try:
        yield comparison
    finally:
        comparison.conn.close()


def compare(db: Comparison, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    db.load(0, old)
    db.load(1, new)
    db.index()
    db.mark_cut((False, False))


def test_every_section_of_two_sides(db: Comparison) -> None:
    old = [
        {"type": "sitemap", "url": "s.xml"},
        {"type": "sitemap", "url": "gone.xml"},
        url("https://x/a", status=200),
        url("https://x/b", status=200),
        url("https://x/c", robots="blocked"),
        finding("url-not-found", "https://x/b"),
        finding("url-slow", "https://x/a", "warning"),
        {"type": "summary", "urls": 3},
    ]
    new = [
        {"type": "sitemap", "url": "s.xml"},
        url("https://x/a", status=200),
        url("https://x/c", status=404),
        url("https://x/d", error="timeout"),
        url("https://x/e", error="not requested: --changed-only"),
        url("https://x/l", source="ledger", status=404),  # not a URL of the sitemaps
        finding("url-slow", "https://x/a", "warning"),
        finding("url-not-found", "https://x/c"),
    ]
    assert db.load(0, old) == {"type": "summary", "urls": 3}
    assert db.load(1, new) is None
    db.index()
    db.mark_cut((False, False))
    rows = {key: list(db.rows(key)) for key, _ in SECTIONS}
    assert [(r["code"], r["key"]) for r in rows["new"]] == [("url-not-found", "https://x/c")]
    assert [(r["code"], r["key"]) for r in rows["fixed"]] == [("url-not-found", "https://x/b")]
    assert [(r["code"], r["count"]) for r in rows["still"]] == [("url-slow", 1)]
    assert [(r["url"], r["outcome"]) for r in rows["added"]] == [
        ("https://x/d", "no-answer"),
        ("https://x/e", "not-requested"),
    ]
    assert [(r["url"], r["outcome"]) for r in rows["removed"]] == [("https://x/b", "200")]
    assert [(r["url"], r["old"], r["new"]) for r in rows["status"]] == [
        ("https://x/c", "robots-blocked", "404")
    ]
    assert rows["sitemaps_added"] == []
    assert [r["url"] for r in rows["sitemaps_removed"]] == ["gone.xml"]
    assert db.not_compared() == 0


def test_a_repeated_finding_key_is_one_row_with_its_count(db: Comparison) -> None:
    new = [finding("element-unknown", None, "warning", sitemap="s.xml", line=n) for n in (3, 9)]
    compare(db, [], new)
    (row,) = db.rows("new")
    assert (row["code"], row["key"], row["count"]) == ("element-unknown", "s.xml", 2)


def test_a_cut_side_vouches_for_nothing_it_did_not_check(db: Comparison) -> None:
    old = [url("https://x/a"), url("https://x/b"), finding("url-not-found", "https://x/b")]
    old += [{"type": "sitemap", "url": "s.xml"}, {"type": "sitemap", "url": "t.xml"}]
    old += [finding("lastmod-missing", None, "info", sitemap="t.xml")]
    new = [url("https://x/a"), {"type": "sitemap", "url": "s.xml"}]
    db.load(0, old)
    db.load(1, new)
    db.index()
    db.mark_cut((False, True))  # the new side was cut by --max-urls
    assert list(db.rows("removed")) == []
    assert list(db.rows("fixed")) == []  # neither the URL's nor the unread sitemap's
    assert list(db.rows("sitemaps_removed")) == []
    assert db.not_compared() == 1
    assert db.drops(1.0) == []  # a cut new side never listed what it did not reach


def test_alerts_for_a_vanished_sitemap_drops_and_new_errors(db: Comparison) -> None:
    old = [{"type": "sitemap", "url": "a.xml"}, {"type": "sitemap", "url": "b.xml"}]
    old += [url(f"https://x/a{i}", "a.xml") for i in range(10)]
    old += [url(f"https://x/b{i}", "b.xml") for i in range(4)]
    new = [{"type": "sitemap", "url": "a.xml"}]
    new += [url(f"https://x/a{i}", "a.xml") for i in range(5)]
    new += [finding("url-not-found", f"https://x/a{i}") for i in range(3)]
    compare(db, old, new)
    lines = find_alerts(db, Alerts(drop_pct=40.0, new_errors=2))
    assert lines == [
        "ALERT: sitemap vanished: b.xml",
        "ALERT: sitemap a.xml lost 50% of its URLs (5 of 10 no longer listed; --alert-drop 40)",
        "ALERT: the audit lost 64% of its URLs (9 of 14 no longer listed; --alert-drop 40)",
        "ALERT: 3 new error(s), more than --alert-new-errors 2",
    ]
    assert find_alerts(db, Alerts(drop_pct=70.0, new_errors=3)) == [
        "ALERT: sitemap vanished: b.xml"
    ]
    assert find_alerts(db, Alerts()) == []
