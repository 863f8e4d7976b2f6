"""audit.rules.lastmods: per-entry lastmod findings and the per-sitemap counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from audit.core.records import Entry, Finding
from audit.rules.findings import NO_FINDINGS
from audit.rules.lastmods import LastmodCheck

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
SM = "https://www.example.com/sitemap.xml"


def make(**kw: object) -> LastmodCheck:
    args: dict[str, object] = {"now": NOW, "kind": None, "served_at": None, "tolerance_s": 0.0}
    args.update(kw)
    return LastmodCheck(SM, **args)  # type: ignore[arg-type]


def check(
    dates: LastmodCheck, value: str, kind: Literal["url", "sitemap"] = "url"
) -> list[Finding]:
    """The findings of one entry with this <lastmod> (a batch of one)."""
    outs = [NO_FINDINGS]
    dates.check_all([Entry(kind, None, 1, value)], [None], outs)
    return outs[0]


def codes(dates: LastmodCheck, value: str) -> list[str]:
    return [f.code for f in check(dates, value)]


def test_an_rss_pubdate_counts_only_in_an_rss_feed() -> None:
    pub = "Sat, 04 May 2024 10:00:00 GMT"
    assert codes(make(kind="rss"), pub) == []
    assert codes(make(kind="urlset"), pub) == ["lastmod-invalid"]


def test_the_remembered_previous_value_is_judged_again_each_time() -> None:
    dates = make()
    for _ in range(3):
        assert codes(dates, "2024-06-03") == ["lastmod-future"]
    assert dates.count == 3 and list(dates.days.values()) == [3]


def test_missing_and_uniform_come_from_the_counts() -> None:
    dates = make()
    for _ in range(20):
        check(dates, "2024-05-06")
    dates.missing = 2
    found = [code for code, _ in dates.problems("urlset", 22, 0)]
    assert found == ["lastmod-missing", "lastmod-uniform"]
    assert [code for code, _ in dates.problems("text", 22, 0)] == ["lastmod-uniform"]
    # a news sitemap lists today's articles: one day is no sign of a generated lastmod
    assert [code for code, _ in dates.problems("urlset", 22, 1)] == ["lastmod-missing"]


def test_an_index_stamped_when_served_replaces_uniform() -> None:
    served = NOW - timedelta(minutes=1)
    dates = make(served_at=served)
    stamp = served.strftime("%Y-%m-%dT%H:%M:%SZ")
    out: list[Finding] = []
    for _ in range(3):
        out += check(dates, stamp, kind="sitemap")  # counted by index_entry too
    assert out == [] and dates.index_served_now
    assert [code for code, _ in dates.problems("sitemapindex", 3, 0)] == ["index-lastmod-now"]
    dates.index_entry("2020-01-01")
    assert not dates.index_served_now
