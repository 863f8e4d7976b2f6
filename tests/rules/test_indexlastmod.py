"""audit.rules.indexlastmod: a <lastmod> as an interval at its own precision, the behind
and served-now rules, and the over-time part (the child's entries digest, frozen and
churn), each with a control that yields nothing."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit.core.records import Entry
from audit.rules.indexlastmod import (
    ChildDigest,
    IndexEntryState,
    IndexLastmodCheck,
    child_digest,
    interval_key,
    interval_seconds,
    is_behind,
    lastmod_interval,
    over_time_finding,
    over_time_findings,
    served_now,
)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end", "timed"),
    [
        ("2024-07-01", utc(2024, 7, 1), utc(2024, 7, 2), False),
        ("2024-12", utc(2024, 12, 1), utc(2025, 1, 1), False),
        ("2024", utc(2024, 1, 1), utc(2025, 1, 1), False),
        ("2024-09-21T12:00:00+02:00", utc(2024, 9, 21, 10), utc(2024, 9, 21, 10, 0, 1), True),
        ("2024-09-21T10:00:00Z", utc(2024, 9, 21, 10), utc(2024, 9, 21, 10, 0, 1), True),
        ("2024-09-21T10:00:00.75Z", utc(2024, 9, 21, 10), utc(2024, 9, 21, 10, 0, 1), True),
        (" 2024-09-21T10:00-03:00\n", utc(2024, 9, 21, 13), utc(2024, 9, 21, 13, 0, 1), True),
    ],
)
def test_an_interval_at_its_own_precision(
    text: str, start: datetime, end: datetime, timed: bool
) -> None:
    interval = lastmod_interval(text)
    assert interval is not None
    assert (interval.start, interval.end, interval.timed) == (start, end, timed)


@pytest.mark.parametrize("text", [None, "", "2024-02-30", "2024-07-01T10:00:00", "yesterday"])
def test_no_interval_for_a_missing_or_invalid_lastmod(text: str | None) -> None:
    assert lastmod_interval(text) is None


def test_the_notation_does_not_matter() -> None:
    a = lastmod_interval("2024-09-21T12:00:00+02:00")
    b = lastmod_interval("2024-09-21T10:00:00Z")
    assert a == b and interval_key(a) == interval_key(b)
    assert interval_key(lastmod_interval("2024-09-21")) != interval_key(a)


def test_an_rss_date_only_where_asked() -> None:
    assert lastmod_interval("Sat, 21 Sep 2024 10:00:00 GMT") is None
    rss = lastmod_interval("Sat, 21 Sep 2024 10:00:00 GMT", rss=True)
    assert rss is not None and rss.start == utc(2024, 9, 21, 10) and rss.timed


def test_behind_is_ends_at_or_before_the_newest_start() -> None:
    day = lastmod_interval("2024-07-01")
    assert day is not None
    # the contract's example: 2024-07-02T01:30:00+02:00 is 23:30 UTC on 2024-07-01
    newest = lastmod_interval("2024-07-02T01:30:00+02:00")
    assert newest is not None and not is_behind(day, newest.start)
    assert is_behind(day, utc(2024, 7, 2))  # at: behind
    assert not is_behind(day, utc(2024, 7, 1, 23, 59, 59))
    assert not is_behind(day, utc(2024, 7, 2), tolerance_s=1)  # widened by the tolerance
    assert is_behind(day, utc(2024, 7, 2, 0, 0, 1), tolerance_s=1)


def test_behind_near_the_end_of_time_does_not_overflow() -> None:
    year = lastmod_interval("9999")
    assert year is not None and not is_behind(year, utc(9999, 12, 31), tolerance_s=10)


def test_served_now() -> None:
    answered = utc(2024, 9, 21, 10, 0, 30)
    now = ["2024-09-21T10:00:00Z", "2024-09-21T12:01:29+02:00"]
    assert served_now(now, answered)
    assert not served_now(now[:1], answered)  # one entry is not enough
    assert not served_now([*now, "2024-09-21T10:01:31Z"], answered)  # 61 s after
    assert served_now([*now, "2024-09-21T10:01:31Z"], answered, tolerance_s=1)
    assert not served_now([*now, "2024-09-21"], answered)  # every one needs a time
    assert not served_now([*now, None], answered)
    assert not served_now(now, None)  # a local file: no answer


def test_the_check_judges_only_children_read_completely() -> None:
    check = IndexLastmodCheck()
    index = "https://e.com/index.xml"
    for n, child in enumerate(("a", "b", "c"), 3):
        check.index_entry(index, f"https://e.com/{child}.xml", n, "2024-07-01", None)
    for child in ("a", "b", "c"):
        check.child_entry(f"https://e.com/{child}.xml", "https://e.com/p", "2024-07-05")
    check.child_done("https://e.com/a.xml", complete=True, kind="urlset")
    check.child_done("https://e.com/b.xml", complete=False, kind="urlset")
    found = check.findings()  # c: never done
    assert [(f.code, f.url, f.sitemap, f.line) for f in found] == [
        ("index-lastmod-behind", "https://e.com/a.xml", index, 3)
    ]


def test_a_served_now_index_withholds_behind() -> None:
    answered = utc(2024, 9, 21, 10)
    check = IndexLastmodCheck()
    index = "https://e.com/index.xml"
    for child in ("a", "b"):
        check.index_entry(index, f"https://e.com/{child}.xml", 3, "2024-09-21T10:00:10Z", answered)
        check.child_entry(f"https://e.com/{child}.xml", "https://e.com/p", "2024-09-22")
        check.child_done(f"https://e.com/{child}.xml", complete=True, kind="urlset")
    assert check.served_now(index) and not check.findings()
    assert check.entry_states() == {}
    control = IndexLastmodCheck()
    for child in ("a", "b"):
        control.index_entry(index, f"https://e.com/{child}.xml", 3, "2024-09-21T10:00:10Z", None)
        control.child_entry(f"https://e.com/{child}.xml", "https://e.com/p", "2024-09-22")
        control.child_done(f"https://e.com/{child}.xml", complete=True, kind="urlset")
    assert len(control.findings()) == 2


# --- over time -----------------------------------------------------------------------------


def test_the_digest_is_the_set_of_normalised_pairs() -> None:
    base = [("https://e.com/a", "2024-07-01"), ("https://e.com/b", None)]
    same = [
        ("HTTPS://E.COM:443/b", None),  # normalised; order does not count
        (" https://e.com/a\n", "2024-07-01T00:00:00Z"[:10]),
        ("https://e.com/a", "2024-07-01"),  # repeated: a set
    ]
    assert child_digest(base) == child_digest(same)
    assert len(child_digest(base)) == 32
    # the notation of the interval does not count, its precision does
    moved = [("https://e.com/a", "2024-07-01T00:00:00Z"), ("https://e.com/b", None)]
    assert child_digest(moved) != child_digest(base)
    assert child_digest([*base, ("https://e.com/c", None)]) != child_digest(base)
    offset = [("https://e.com/a", "2024-07-01T02:00:00+02:00"), ("https://e.com/b", None)]
    assert child_digest(offset) == child_digest(moved)


def test_the_digest_is_stable_across_processes() -> None:
    """BLAKE2b of the pairs (normalised loc, interval in seconds), not Python's salted
    hash: the value is fixed."""
    digest = ChildDigest()
    digest.add("https://e.com/a", "2024-07-01")
    start = date(2024, 7, 1).toordinal() * 86400
    pair = hashlib.blake2b(
        f"https://e.com/a\n{start}/{start + 86400}".encode(), digest_size=16
    ).digest()
    assert digest.hexdigest() == hashlib.blake2b(pair, digest_size=16).hexdigest()


def _seconds(stamp: datetime) -> int:
    return stamp.toordinal() * 86400 + stamp.hour * 3600 + stamp.minute * 60 + stamp.second


@given(
    day=st.dates(min_value=date(1, 1, 2), max_value=date(9999, 12, 30)),
    clock=st.times(),
    zone=st.sampled_from(["Z", "+02:00", "-03:30", "+14:00", "-14:00", "+14:30", "+05:60"]),
    form=st.sampled_from(["date", "second", "fraction", "minute", "month", "year", "no-zone"]),
    pad=st.booleans(),
)
def test_the_fast_seconds_agree_with_the_interval(
    day: date, clock: time, zone: str, form: str, pad: bool
) -> None:
    texts = {
        "date": f"{day:%Y-%m-%d}",
        "second": f"{day:%Y-%m-%d}T{clock:%H:%M:%S}{zone}",
        "fraction": f"{day:%Y-%m-%d}T{clock:%H:%M:%S}.{clock.microsecond:06d}{zone}",
        "minute": f"{day:%Y-%m-%d}T{clock:%H:%M}{zone}",
        "month": f"{day:%Y-%m}",
        "year": f"{day:%Y}",
        "no-zone": f"{day:%Y-%m-%d}T{clock:%H:%M:%S}",
    }
    text = texts[form]
    if pad:
        text = f" {text}\n"
    interval = lastmod_interval(text)
    expected = None if interval is None else (_seconds(interval.start), _seconds(interval.end))
    assert interval_seconds(text) == expected


def test_the_fast_seconds_of_impossible_values() -> None:
    for text in (
        "2024-02-30",
        "2024-07-01T24:00:00Z",
        "2024-07-01T10:60:00Z",
        "2024-07-01T10:00:00+15:00",
    ):
        assert interval_seconds(text) is None and lastmod_interval(text) is None


IDX, CHILD = "https://e.com/index.xml", "https://e.com/a.xml"
DAY1 = interval_key(lastmod_interval("2024-07-01"))
DAY2 = interval_key(lastmod_interval("2024-07-02"))


def test_frozen_the_entry_did_not_move_the_child_changed() -> None:
    found = over_time_finding(
        IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY1, "bbb")
    )
    assert found is not None
    assert (found.code, found.url, found.sitemap, found.line) == (
        "index-lastmod-frozen",
        CHILD,
        IDX,
        5,
    )
    assert found.severity.value == "warning"
    # controls: it moved with the change; nothing changed
    assert (
        over_time_finding(IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY2, "bbb"))
        is None
    )
    assert (
        over_time_finding(IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY1, "aaa"))
        is None
    )


def test_churn_the_entry_moved_the_child_is_identical() -> None:
    found = over_time_finding(
        IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY2, "aaa")
    )
    assert found is not None and found.code == "index-lastmod-churn"
    # a 304 is identical, whatever tonight's digest
    unchanged = over_time_finding(
        IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY2, None), unchanged=True
    )
    assert unchanged is not None and unchanged.code == "index-lastmod-churn"
    # a 304 under an entry that did not move: nothing
    assert (
        over_time_finding(
            IDX, CHILD, 5, IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY1, None), unchanged=True
        )
        is None
    )


@pytest.mark.parametrize(
    ("previous", "current"),
    [
        (None, IndexEntryState(DAY2, "bbb")),  # the previous run had no such entry
        (IndexEntryState(None, "aaa"), IndexEntryState(DAY2, "aaa")),  # no lastmod before
        (IndexEntryState(DAY1, "aaa"), IndexEntryState(None, "bbb")),  # none tonight
        (IndexEntryState(DAY1, None), IndexEntryState(DAY1, "bbb")),  # not read before
        (IndexEntryState(DAY1, "aaa"), IndexEntryState(DAY2, None)),  # not read tonight
    ],
)
def test_not_judged(previous: IndexEntryState | None, current: IndexEntryState) -> None:
    assert over_time_finding(IDX, CHILD, 5, previous, current) is None


def test_over_time_findings_from_the_checks_entry_states() -> None:
    def night(child_lastmod: str, entry_lastmod: str) -> IndexLastmodCheck:
        check = IndexLastmodCheck(digests=True)
        check.index_entry(IDX, CHILD, 3, entry_lastmod, None)
        check.index_entry(IDX, "https://e.com/b.xml", 4, "2024-07-01", None)
        check.child_entry(CHILD, "https://e.com/p", child_lastmod)
        check.child_entry("https://e.com/b.xml", "https://e.com/q", "2024-06-01")
        check.child_done(CHILD, complete=True, kind="urlset")
        check.child_done("https://e.com/b.xml", complete=True, kind="urlset")
        return check

    first = {
        key: state for key, (_, state) in night("2024-06-01", "2024-07-01").entry_states().items()
    }
    frozen = over_time_findings(first, night("2024-06-02", "2024-07-01").entry_states())
    assert [(f.code, f.url, f.line) for f in frozen] == [("index-lastmod-frozen", CHILD, 3)]
    churn = over_time_findings(first, night("2024-06-01", "2024-07-02").entry_states())
    assert [(f.code, f.url, f.line) for f in churn] == [("index-lastmod-churn", CHILD, 3)]
    assert over_time_findings(first, night("2024-06-01", "2024-07-01").entry_states()) == []
    unchanged = over_time_findings(
        first, night("2024-06-09", "2024-07-02").entry_states(), unchanged=[CHILD]
    )
    assert [f.code for f in unchanged] == ["index-lastmod-churn"]


def test_over_time_through_the_check_with_a_carried_child() -> None:
    """What the --state run does: keep digests, store entry_states(), and on the next
    night compare with over_time(); a child carried on a 304 is unchanged."""

    def night(entry_lastmod: str, carried: bool) -> IndexLastmodCheck:
        check = IndexLastmodCheck()
        check.keep_digests()
        check.index_entry(IDX, CHILD, 7, entry_lastmod, None)
        check.child_entry(CHILD, "https://e.com/p", "2024-06-01")
        if carried:
            check.child_carried(CHILD)
        else:
            check.child_done(CHILD, complete=True, kind="urlset")
        return check

    stored = {key: state for key, (_, state) in night("2024-07-01", False).entry_states().items()}
    assert all(state.digest for state in stored.values())
    churn = night("2024-07-02", True).over_time(stored)
    assert [(f.code, f.url, f.sitemap, f.line) for f in churn] == [
        ("index-lastmod-churn", CHILD, IDX, 7)
    ]
    assert night("2024-07-01", True).over_time(stored) == []


_FORMS = st.sampled_from(
    [
        "{d:%Y-%m-%d}",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}Z",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}+02:00",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}.5-01:30",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}-14:00",  # the zones farthest apart: days overlap
        "{d:%Y-%m-%d}T{t:%H:%M:%S}+14:00",
        "{d:%Y-%m-%d}T{t:%H:%M}+02:00",
        "{d:%Y-%m}",
        "  {d:%Y-%m-%d}T{t:%H:%M:%S}+02:00",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}Z\n",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}",  # invalid: no zone
    ]
)


def _lastmods(forms: st.SearchStrategy[str], most: int) -> st.SearchStrategy[Any]:
    """Up to `most` lastmods, each a date and time to be written in one of `forms`."""
    return st.lists(
        st.tuples(
            forms,
            st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 12, 31)),
            st.times(),
        ),
        min_size=1,
        max_size=most,
    )


_LASTMODS = _lastmods(_FORMS, 30)


@given(_LASTMODS)
def test_the_childs_newest_is_the_latest_start_whatever_the_forms(
    values: list[tuple[str, date, time]],
) -> None:
    texts = [form.format(d=d, t=t) for form, d, t in values]
    check = IndexLastmodCheck()
    check.index_entry(IDX, CHILD, 3, "2000-01-01", None)
    for text in texts:
        check.child_entry(CHILD, "https://e.com/p", text)
    check.child_done(CHILD, complete=True, kind="urlset")
    starts = [s[0] for s in map(interval_seconds, texts) if s is not None]
    newest = check._children[CHILD].newest_of_kind()
    if not starts:
        assert newest is None
    else:
        assert newest is not None and _seconds(newest[0]) == max(starts)


@given(
    _LASTMODS,
    st.integers(min_value=1, max_value=7),
)
def test_a_batch_of_entries_gives_the_newest_and_digest_of_entry_by_entry(
    values: list[tuple[str, date, time]], size: int
) -> None:
    """What the pipeline hands the check (the entries of a parsed batch) gives the newest
    <lastmod> and the digest one entry at a time gives."""
    texts = [form.format(d=d, t=t) for form, d, t in values]
    one, batched = IndexLastmodCheck(digests=True), IndexLastmodCheck(digests=True)
    for check in (one, batched):
        check.index_entry(IDX, CHILD, 3, "2000-01-01", None)
    items: list[Entry] = []
    for n, text in enumerate(texts):
        one.child_entry(CHILD, f"https://e.com/p{n}", text)
        items.append(Entry("url", f"https://e.com/p{n}", n, text))
    for start in range(0, len(items), size):
        batched.child_entries(CHILD, items[start : start + size])
    batched.child_entries("https://e.com/not-listed.xml", items)  # no index lists it
    for check in (one, batched):
        check.child_done(CHILD, complete=True, kind="urlset")
    assert batched._children[CHILD].newest_of_kind() == one._children[CHILD].newest_of_kind()
    assert batched.entry_states() == one.entry_states()
    assert [f.code for f in batched.findings()] == [f.code for f in one.findings()]


def test_a_value_on_an_earlier_day_is_newer_in_a_zone_far_west() -> None:
    """The batch skips W3C values three days or more before the newest: a value two days
    earlier in -14:00 is still looked at (and is the newest here)."""
    check = IndexLastmodCheck()
    check.index_entry(IDX, CHILD, 3, "2000-01-01", None)
    texts = [
        "2024-06-10T00:00:00+14:00",  # 06-09T10:00Z
        "2024-06-01",
        "2024-06-08T23:00:00-14:00",  # 06-09T13:00Z: the newest
        "2024-06-07T23:59:59-14:00",  # 06-08T13:59:59Z
        " 2024-06-06T00:00:00Z",
    ]
    check.child_entries(CHILD, [Entry("url", "https://e.com/p", n, t) for n, t in enumerate(texts)])
    check.child_done(CHILD, complete=True, kind="urlset")
    newest = check._children[CHILD].newest_of_kind()
    assert newest is not None and newest[1] == "2024-06-08T23:00:00-14:00"


def test_a_child_listed_in_two_spellings_is_judged_for_both() -> None:
    """The run reads a child once, under its first spelling; an entry that lists it
    with another case of host is judged against the same reading."""
    check = IndexLastmodCheck()
    check.index_entry(IDX, "https://e.com/a.xml", 3, "2024-07-01", None)
    check.index_entry("https://e.com/other.xml", "HTTPS://E.COM:443/a.xml", 4, "2024-06-01", None)
    check.child_entry("https://e.com/a.xml", "https://e.com/p", "2024-07-05")
    check.child_done("https://e.com/a.xml", complete=True, kind="urlset")
    found = check.findings()
    assert [(f.url, f.sitemap, f.line) for f in found] == [
        ("https://e.com/a.xml", IDX, 3),
        ("HTTPS://E.COM:443/a.xml", "https://e.com/other.xml", 4),
    ]


# Every kind of <lastmod> a child may hold: the W3C forms (padded too), a year, RFC 822
# dates with and without a weekday (an RSS feed's), garbage that starts with a digit, none
# and empty.
_ANY_FORMS = st.sampled_from(
    [
        "{d:%Y-%m-%d}",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}Z",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}-14:00",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}+14:00",
        "{d:%Y-%m-%d}T{t:%H:%M:%S}.25+05:30",
        "{d:%Y}",
        "{d:%Y-%m}",
        "\t{d:%Y-%m-%d}T{t:%H:%M:%S}Z ",
        "{d:%a, %d %b %Y} {t:%H:%M:%S} GMT",
        "{d:%d %b %Y} {t:%H:%M:%S} +0200",
        "{d:%Y%m%d}",
        "{d:%Y-%m-%d}T99:00:00Z",
        "NONE",
        "",
    ]
)


@given(
    _lastmods(_ANY_FORMS, 40),
    st.integers(min_value=1, max_value=9),
    st.sampled_from(["urlset", "rss"]),
)
def test_the_batched_newest_is_the_brute_force_newest_of_every_form(
    values: list[tuple[str, date, time]], size: int, kind: str
) -> None:
    """child_entries (which skips values that cannot be the newest) against a brute force
    over every value: the newest W3C start, else (an RSS feed) an RFC 822 date's if later,
    and the text it was written with."""
    texts = [None if f == "NONE" else f.format(d=d, t=t) for f, d, t in values]
    check = IndexLastmodCheck()
    check.index_entry(IDX, CHILD, 3, "2000-01-01", None)
    items = [Entry("url", f"https://e.com/p{n}", n, text) for n, text in enumerate(texts)]
    for start in range(0, len(items), size):
        check.child_entries(CHILD, items[start : start + size])
    check.child_done(CHILD, complete=True, kind=kind)
    spans: dict[int, list[str]] = {}
    for text in filter(None, texts):
        span = interval_seconds(text)
        if span is None and kind == "rss":  # an RFC 822 date counts in an RSS feed only
            span = interval_seconds(text, rss=True)
        if span is not None:
            spans.setdefault(span[0], []).append(text.strip(" \t\r\n"))
    newest = check._children[CHILD].newest_of_kind()
    if not spans:
        assert newest is None
    else:
        assert newest is not None
        assert _seconds(newest[0]) == max(spans)
        assert newest[1] in spans[max(spans)]
