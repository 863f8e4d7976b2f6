"""checks/freshness.py: `<lastmod>` against `Last-Modified` as a value, with its finding.

`lastmod_findings` returns the comparison (`Lastmod`) and the very finding it had `add`
make; the deploy-stamp hook holds exactly that finding, so the two must be one object.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from audit.checks.freshness import Lastmod, lastmod_findings
from audit.core.records import Finding, finding

NOW = datetime(2026, 1, 1, tzinfo=UTC)  # long after every date below


def _compare(
    header: str,
    lastmod: str,
    *,
    date: str | None = None,
    tolerance_s: float = 0.0,
    now: datetime = NOW,
) -> tuple[Lastmod, Finding | None, list[Finding]]:
    made: list[Finding] = []

    def add(code: str, message: str) -> Finding:
        made.append(finding(code, message, url="https://example.com/a"))
        return made[-1]

    match, said = lastmod_findings(header, date, lastmod, tolerance_s=tolerance_s, now=now, add=add)
    return match, said, made


@pytest.mark.parametrize(
    ("lastmod", "header", "expected"),
    [
        ("2024-04-15", "Mon, 15 Apr 2024 00:00:00 GMT", Lastmod.EQUAL),
        ("2024-04-15", "Mon, 15 Apr 2024 23:59:59 GMT", Lastmod.EQUAL),  # the whole UTC day
        ("2024-04-15", "Tue, 16 Apr 2024 00:00:00 GMT", Lastmod.STALE),
        ("2024-04-15", "Sun, 14 Apr 2024 23:59:59 GMT", Lastmod.AHEAD),
        ("2024-04-15T10:00:00Z", "Monday, 15-Apr-24 10:00:00 GMT", Lastmod.EQUAL),  # RFC 850
        ("2024-04-15T10:00:00Z", "Mon Apr 15 10:00:01 2024", Lastmod.STALE),  # asctime
        ("2024-04-15T10:00:00.5Z", "Mon, 15 Apr 2024 10:00:00 GMT", Lastmod.EQUAL),  # fraction
    ],
)
def test_the_comparison_at_the_sitemaps_precision(
    lastmod: str, header: str, expected: Lastmod
) -> None:
    match, said, made = _compare(header, lastmod)
    assert match is expected
    assert made == ([said] if said is not None else [])  # the finding it names is the one made
    codes = {Lastmod.STALE: ["lastmod-stale"], Lastmod.AHEAD: ["lastmod-ahead"]}
    assert [f.code for f in made] == codes.get(expected, [])
    assert match.deploy_may_explain == (said is not None)


def test_tolerance_widens_the_window() -> None:
    late = "Mon, 15 Apr 2024 10:00:30 GMT"
    assert _compare(late, "2024-04-15T10:00:00Z")[0] is Lastmod.STALE
    assert _compare(late, "2024-04-15T10:00:00Z", tolerance_s=60)[0] is Lastmod.EQUAL


def test_a_last_modified_at_the_time_of_the_request_is_dynamic() -> None:
    header = "Mon, 15 Apr 2024 10:00:01 GMT"
    match, said, made = _compare(header, "2024-01-01", date="Mon, 15 Apr 2024 10:00:00 GMT")
    assert match is Lastmod.DYNAMIC and said is made[0]
    assert said.code == "last-modified-dynamic" and Lastmod.DYNAMIC.deploy_may_explain
    # close to the audit's own clock when the answer has no Date
    now = datetime(2024, 4, 15, 10, 0, 2, tzinfo=UTC)
    assert _compare(header, "2024-01-01", now=now)[0] is Lastmod.DYNAMIC
    assert _compare(header, "2024-01-01", now=now + timedelta(seconds=5))[0] is Lastmod.STALE


def test_nothing_to_compare_makes_no_finding() -> None:
    for header, lastmod in (("not a date", "2024-04-15"), ("Mon, 15 Apr 2024 10:00:00 GMT", "")):
        match, said, made = _compare(header, lastmod)
        assert match is Lastmod.NONE and said is None and made == []
        assert not match.deploy_may_explain
    assert not Lastmod.EQUAL.deploy_may_explain
