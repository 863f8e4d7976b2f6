"""Index `<lastmod>` truth (contracts/nights.md 4): each entry of a sitemap index against
its child.

A valid `<lastmod>` stands for an interval at its own precision (`lastmod_interval`): a
date is that UTC day, `YYYY-MM` the month, `YYYY` the year, a value with a time that
second (the offset applied). `--lastmod-tolerance S` widens every comparison by S
seconds.

Single run (`IndexLastmodCheck`, fed by audit.features.indexlastmod):

- `index-lastmod-behind`: the entry's interval ends at or before the start of the newest
  `<lastmod>` among the child's entries (only children read completely count);
- `index-lastmod-now` (`served_now`): an index of 2 entries or more whose every
  `<lastmod>` has a time within 60 s, either side, of the moment the index's answer
  arrived; the validator reports it in place of `lastmod-uniform`, and the children of
  such an index get no `-behind`, `-frozen` or `-churn`.

Over time (`--state`; the store keeps what `IndexLastmodCheck.entry_states()` gives):
`child_digest` / `ChildDigest` make a stable digest of a child's entries (the set of
pairs (normalised `<loc>`, interval of its `<lastmod>` or none): order, markup and
the other children of `<url>` do not count), and `over_time_finding` /
`over_time_findings` compare the previous run's `IndexEntryState` with tonight's:
`index-lastmod-frozen` (the entry did not move, the child's entries changed) and
`index-lastmod-churn` (the entry moved, the child's entries are identical; a child that
answered 304 is identical).

Pure: no HTTP, no I/O; entries in, findings out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from audit.core.records import Entry, Finding, finding
from audit.rules.dates import parse_rss_date, parse_w3c_datetime, tz_offset
from audit.rules.urls import normalize_url

__all__ = [
    "DAYS",
    "HOUR_MINUTE",
    "SERVED_NOW_WINDOW_S",
    "TWO_DIGITS",
    "ZONES",
    "ChildDigest",
    "IndexEntryState",
    "IndexLastmodCheck",
    "Interval",
    "child_digest",
    "fast_span",
    "interval_key",
    "interval_seconds",
    "is_behind",
    "lastmod_interval",
    "lastmod_now",
    "over_time_finding",
    "over_time_findings",
    "seconds_since_epoch",
    "served_now",
]

SERVED_NOW_WINDOW_S = 60  # index-lastmod-now: within 60 s, either side, of the answer
SERVED_NOW_MIN = 2  # ... for an index of at least 2 entries
_XML_SPACE = " \t\r\n"
_SECOND = timedelta(seconds=1)
_MAX = datetime.max.replace(tzinfo=UTC)


# The two records of this module's API are named tuples, not dataclasses: equal, hashable,
# immutable and printed alike, but built in a tenth of the time at every start (a dataclass
# generates and compiles its methods at import: half a millisecond each, measured).


class Interval(NamedTuple):
    """The span of time a valid `<lastmod>` stands for: [start, end), in UTC. `timed`:
    the value has a time of day (its interval is that second)."""

    start: datetime
    end: datetime
    timed: bool


def lastmod_interval(text: str | None, *, rss: bool = False) -> Interval | None:
    """The interval of a `<lastmod>`, or None when it is missing or invalid. `rss`: the
    value may also be an RFC 822 date (an RSS feed's pubDate), which is that second."""
    if text is None:
        return None
    value = text.strip(_XML_SPACE)  # (empty: neither a W3C nor an RFC 822 date)
    try:
        parsed = parse_w3c_datetime(value)
    except ValueError:
        stamp = parse_rss_date(value) if rss else None
        return None if stamp is None else Interval(stamp, _plus(stamp, _SECOND), True)
    if parsed.precision in ("minute", "second"):
        start = parsed.start.replace(microsecond=0)
        return Interval(start, _plus(start, _SECOND), True)
    return Interval(parsed.start, parsed.end, False)


def interval_key(interval: Interval | None) -> str | None:
    """An interval as a stable text (the state keeps it): `START/END` in UTC, or None."""
    if interval is None:
        return None
    return f"{interval.start:%Y-%m-%dT%H:%M:%SZ}/{interval.end:%Y-%m-%dT%H:%M:%SZ}"


# The two forms nearly every sitemap uses, read without building datetimes (the per-entry
# path of every child of an index): YYYY-MM-DD and YYYY-MM-DDThh:mm:ss[.s]TZD. (\d\d, not
# \d{2}: a repeat costs the regex engine more than two single matches, measured.)
_FAST = re.compile(
    r"(\d\d\d\d-\d\d-\d\d)(?:T(\d\d:\d\d):(\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d))?", re.ASCII
)
# "hh:mm" and "ss" -> seconds: a dict lookup is cheaper than int() on the per-entry path.
# Keys from the 60 two-digit strings: a format spec per key (1,440 of them) cost millions of
# instructions at every start.
TWO_DIGITS = [f"{x:02d}" for x in range(60)]  # "00" to "59" (rules/lastmods.py reads them too)
HOUR_MINUTE = {
    f"{hh}:{mm}": h * 3600 + m * 60
    for h, hh in enumerate(TWO_DIGITS[:24])
    for m, mm in enumerate(TWO_DIGITS)
}
_SECONDS = {ss: x for x, ss in enumerate(TWO_DIGITS)}
_DIGITS = frozenset("0123456789")
_DAY_S = 86_400
# Tables of valid pieces, filled as values are parsed: a key's presence vouches for its
# syntax (rules/lastmods.py's per-entry count reads them too). Sites reuse few days and zones.
DAYS: dict[str, int] = {}  # valid "YYYY-MM-DD" -> its ordinal
ZONES: dict[str, int] = {"Z": 0}  # valid TZD -> seconds east of UTC


def _fast_seconds(m: re.Match[str]) -> tuple[int, int] | None:
    """[start, end) in seconds of a value of one of the two common forms; None when its
    day, time or zone does not exist. A day or zone not in its table yet is parsed, and
    kept when it exists."""
    day_text, hour_minute, second, tzd = m.groups()
    day = DAYS.get(day_text)
    if day is None:
        try:
            day = date(int(day_text[:4]), int(day_text[5:7]), int(day_text[8:10])).toordinal()
        except ValueError:
            return None
        if len(DAYS) >= 65_536:
            DAYS.clear()
        DAYS[day_text] = day
    if hour_minute is None:
        return day * _DAY_S, (day + 1) * _DAY_S
    east = ZONES.get(tzd)
    if east is None:
        try:
            east = int(tz_offset(tzd).total_seconds())  # xsd: -14:00 to +14:00
        except ValueError:
            return None
        if len(ZONES) < 1024:
            ZONES[tzd] = east
    clock = HOUR_MINUTE.get(hour_minute)
    seconds = _SECONDS.get(second)
    if clock is None or seconds is None:
        return None
    start = day * _DAY_S + clock + seconds - east
    return start, start + 1


def fast_span(text: str) -> tuple[int, int] | None:
    """[start, end) in seconds of a valid value of one of the two common forms (a day long
    for a date, a second long with a time); None for any other value, which the full
    parsers judge (rules/lastmods.py's full checks)."""
    m = _FAST.fullmatch(text)
    return None if m is None else _fast_seconds(m)


def seconds_since_epoch(stamp: datetime) -> int:
    """An aware UTC datetime as whole seconds since 0001-01-01T00:00:00Z (proleptic
    Gregorian: // 86400 is the UTC day's ordinal); rules/lastmods.py counts in them too."""
    return stamp.toordinal() * _DAY_S + stamp.hour * 3600 + stamp.minute * 60 + stamp.second


def interval_seconds(text: str | None, *, rss: bool = False) -> tuple[int, int] | None:
    """`lastmod_interval` as [start, end) in whole seconds since 0001-01-01T00:00:00Z: the
    per-entry form (about a microsecond for the two common forms)."""
    if text is None:
        return None
    m = _FAST.fullmatch(text)
    if m is not None:
        return _fast_seconds(m)
    interval = lastmod_interval(text, rss=rss)
    if interval is None:
        return None
    return seconds_since_epoch(interval.start), seconds_since_epoch(interval.end)


def _plus(stamp: datetime, delta: timedelta) -> datetime:
    """`stamp` + `delta`, a second or the tolerance (never negative: the config's range),
    or the last moment there is when that is past it."""
    try:
        return stamp + delta
    except OverflowError:
        return _MAX


def is_behind(entry: Interval, newest: datetime, tolerance_s: float = 0.0) -> bool:
    """index-lastmod-behind: the entry's interval, widened by the tolerance, ends at or
    before `newest`, the start of the newest `<lastmod>` among the child's entries."""
    return _plus(entry.end, timedelta(seconds=tolerance_s)) <= newest


def lastmod_now(text: str | None, answered: datetime, tolerance_s: float = 0.0) -> bool:
    """A `<lastmod>` with a time within 60 s (plus the tolerance), either side, of the
    moment the index's answer arrived."""
    interval = lastmod_interval(text)
    if interval is None or not interval.timed:
        return False
    off = abs((interval.start - answered.astimezone(UTC)).total_seconds())
    return off <= SERVED_NOW_WINDOW_S + tolerance_s


def served_now(
    lastmods: Iterable[str | None], answered: datetime | None, tolerance_s: float = 0.0
) -> bool:
    """index-lastmod-now: at least 2 entries, and every `<lastmod>` is `lastmod_now`."""
    if answered is None:
        return False
    values = list(lastmods)
    return len(values) >= SERVED_NOW_MIN and all(
        lastmod_now(v, answered, tolerance_s) for v in values
    )


# --- one run ----------------------------------------------------------------------------


# The run's own records below are plain slotted classes, not dataclasses: a dataclass is
# built at import (its methods' source generated and compiled), about a millisecond each at
# every start, and nothing compares or prints these.


class _IndexEntry:
    __slots__ = ("child", "lastmod", "line", "read")

    def __init__(self, child: str, line: int, lastmod: str | None, read: _Child) -> None:
        self.child = child  # as the index lists it (the findings' url)
        self.line = line
        self.lastmod = lastmod
        # the child as read: one per URL, under the spelling first listed in the run
        self.read = read


class _Index:
    __slots__ = ("answered", "entries")

    def __init__(self, answered: datetime | None) -> None:
        self.answered = answered
        self.entries: list[_IndexEntry] = []


class _Child:
    __slots__ = (
        "complete",
        "digest",
        "floor",
        "kind",
        "newest",
        "newest_rss",
        "newest_rss_text",
        "newest_text",
        "shapes",
    )

    def __init__(self, digest: ChildDigest | None = None) -> None:
        # start (seconds) of the newest W3C <lastmod> of its entries; -1 (before any start,
        # which is a second of a day from 0001-01-01 on): none yet
        self.newest = -1
        self.newest_text = ""
        self.newest_rss = -1  # ... of one valid only in an RSS feed
        self.newest_rss_text = ""
        self.complete: bool | None = None  # None: not done (yet)
        # what follows the seconds (else the length) -> the newest <lastmod> of the common
        # forms of that shape (see IndexLastmodCheck.child_entries)
        self.shapes: dict[str | int, str] = {}
        self.kind: str | None = None
        self.digest = digest
        # the day two days before the newest's (YYYY-MM-DD): a W3C value on an earlier day
        # is older than the newest in any zone (see IndexLastmodCheck.child_entries)
        self.floor = ""

    def take(self, lastmod: str, shape: str | int) -> None:
        """A `<lastmod>` that may be the newest of its shape: parsed, and the newest kept;
        the newest RFC 822 date apart (an RSS pubDate, which counts in an RSS feed)."""
        m = _FAST.fullmatch(lastmod)
        if m is not None:  # the common forms: valid or not, no other form
            span = _fast_seconds(m)
            if span is not None:
                self.shapes[shape] = lastmod
                self.later(span[0], lastmod)
            return
        span = interval_seconds(lastmod)  # another W3C form
        if span is not None:
            self.later(span[0], lastmod)
            return
        span = interval_seconds(lastmod, rss=True)  # (None: not an RFC 822 date either)
        if span is not None and span[0] > self.newest_rss:
            self.newest_rss, self.newest_rss_text = span[0], lastmod.strip(_XML_SPACE)

    def later(self, start: int, text: str) -> None:
        """A valid W3C `<lastmod>` starting at `start` (seconds): the newest if later."""
        if start > self.newest:
            self.newest, self.newest_text = start, text.strip(_XML_SPACE)
            self.floor = date.fromordinal(max(1, start // _DAY_S - 2)).isoformat()

    def newest_of_kind(self) -> tuple[datetime, str] | None:
        """The newest `<lastmod>` (start, as written) that counts for the child's kind
        (a W3C one on a tie)."""
        best, text = self.newest, self.newest_text
        if self.kind == "rss" and self.newest_rss > best:
            best, text = self.newest_rss, self.newest_rss_text
        if best < 0:
            return None
        day, rest = divmod(best, _DAY_S)
        return datetime.fromordinal(day).replace(tzinfo=UTC) + timedelta(seconds=rest), text


class IndexLastmodCheck:
    """The single-run part of index `<lastmod>` truth over one run's sitemaps.

    Feed it every index entry (`index_entry`), every entry of every sitemap
    (`child_entries`: ignored unless an index listed that sitemap) and every sitemap read
    (`child_done`); `findings()` gives the `index-lastmod-behind` findings at the end.
    `digests=True` also keeps each child's entries digest (`entry_states()`), for the
    over-time codes.
    """

    def __init__(self, tolerance_s: float = 0.0, *, digests: bool = False) -> None:
        self.tolerance_s = tolerance_s
        self.digests = digests
        self._indexes: dict[str, _Index] = {}
        self._children: dict[str, _Child] = {}
        self._spellings: dict[str, str] = {}  # normalised child URL -> first spelling
        self.carried: set[str] = set()  # children carried on a 304: unchanged

    def keep_digests(self) -> None:
        """Keep each child's entries digest from now on (before the first index entry):
        a --state run, for the over-time codes."""
        self.digests = True

    def index_entry(
        self, index: str, child: str, line: int, lastmod: str | None, answered: datetime | None
    ) -> None:
        """An entry of `index` (whose answer arrived at `answered`; None: a local file)."""
        found = self._indexes.get(index)
        if found is None:
            found = self._indexes[index] = _Index(answered)
        # a child is read once, under the spelling it was first listed with
        key = self._spellings.setdefault(normalize_url(child), child)
        read = self._children.get(key)
        if read is None:
            read = self._children[key] = _Child(digest=ChildDigest() if self.digests else None)
        found.entries.append(_IndexEntry(child, line, lastmod, read))

    def child_entries(self, sitemap: str, entries: Iterable[Entry]) -> None:
        """The entries of any sitemap, as parsed, a batch at a time: one dict lookup for a
        sitemap no index lists, and for most entries of one it does, two compares.

        A value of the W3C forms (`YYYY-` first) on a day at least three days before the
        child's newest so far cannot be its newest, whatever the zones (14 hours at most):
        it is not looked at again. Among the rest, values of the common forms with one
        shape sort as their times do: a value not above the newest of its shape cannot be
        the child's newest, and is not parsed. The shape is what follows the seconds (a
        fraction and the zone: every Z is UTC), else the length (a date alone); only those
        forms set a shape, and no other valid value that starts with a digit shares one
        (whitespace ends a padded value; an RFC 822 date has a space or a colon there).
        """
        child = self._children.get(sitemap)
        if child is None:
            return
        digest, shapes = child.digest, child.shapes
        if digest is not None:
            for item in entries:
                digest.add(item.loc, item.lastmod)
        floor = child.floor
        for item in entries:
            # a plain attribute read (specialised for the slot: twice as fast as an
            # attrgetter mapped over the batch, measured)
            lastmod = item.lastmod
            if not lastmod:  # absent or empty: never a newest
                continue
            try:  # an index, not a slice: no slice object per entry (try costs nothing)
                if lastmod < floor and lastmod[4] == "-":
                    continue
            except IndexError:  # shorter than "YYYY-": not a W3C day, looked at below
                pass
            shape = lastmod[19:] or len(lastmod)
            best = shapes.get(shape)
            if best is None or lastmod > best or lastmod[0] not in _DIGITS:
                child.take(lastmod, shape)
                floor = child.floor

    def child_entry(self, sitemap: str, loc: str | None, lastmod: str | None) -> None:
        """One entry of any sitemap (`child_entries` of one)."""
        self.child_entries(sitemap, (Entry("url", loc, 0, lastmod),))

    def child_done(self, sitemap: str, *, complete: bool, kind: str | None) -> None:
        """A sitemap was read (`complete`: to its end, without a document error)."""
        child = self._children.get(sitemap)
        if child is not None:
            child.complete = complete
            child.kind = kind

    def child_carried(self, sitemap: str) -> None:
        """A child carried on a 304 (its stored entries came through `child_entries`): read
        completely, and unchanged for the over-time codes."""
        self.carried.add(sitemap)
        self.child_done(sitemap, complete=True, kind=None)

    def over_time(self, previous: Mapping[tuple[str, str], IndexEntryState]) -> list[Finding]:
        """`index-lastmod-frozen` and `-churn` of tonight's entries against `previous`, the
        previous completed run's `entry_states()` (its IndexEntryState per key)."""
        return over_time_findings(previous, self.entry_states(), self.carried)

    def served_now(self, index: str) -> bool:
        """Is `index` one whose every `<lastmod>` is the time it was served?"""
        found = self._indexes.get(index)
        return found is not None and served_now(
            (e.lastmod for e in found.entries), found.answered, self.tolerance_s
        )

    def findings(self) -> list[Finding]:
        """`index-lastmod-behind` for every entry behind its completely read child, in
        the order of the indexes and their entries."""
        out: list[Finding] = []
        for index, found in self._indexes.items():
            if self.served_now(index):
                continue  # index-lastmod-now explains it; the validator reported it
            for entry in found.entries:
                interval = lastmod_interval(entry.lastmod)
                newest = entry.read.newest_of_kind() if entry.read.complete else None
                if (
                    interval is None
                    or newest is None
                    or not is_behind(interval, newest[0], self.tolerance_s)
                ):
                    continue
                shown = (entry.lastmod or "").strip(_XML_SPACE)
                out.append(
                    finding(
                        "index-lastmod-behind",
                        f"the index gives this child <lastmod> {shown!r}, but the child's "
                        f"newest entry has <lastmod> {newest[1]!r}, later: the index "
                        "under-reports the child's changes; set the index entry's <lastmod> "
                        "to the child's last change",
                        sitemap=index,
                        line=entry.line,
                        url=entry.child,
                    )
                )
        return out

    def entry_states(self) -> dict[tuple[str, str], tuple[int, IndexEntryState]]:
        """(index, child) -> (line of the child's <loc> in the index, tonight's state),
        for the over-time codes; the digest is None for a child not read completely (or
        without `digests=True`). Entries of an index that is `served_now` are left out:
        its children get no -frozen or -churn."""
        out: dict[tuple[str, str], tuple[int, IndexEntryState]] = {}
        for index, found in self._indexes.items():
            if self.served_now(index):
                continue
            for entry in found.entries:
                child = entry.read
                digest = None
                if child.complete and child.digest is not None:
                    digest = child.digest.hexdigest()
                state = IndexEntryState(interval_key(lastmod_interval(entry.lastmod)), digest)
                out.setdefault((index, entry.child), (entry.line, state))
        return out


# --- over time ----------------------------------------------------------------------------


class ChildDigest:
    """The digest of a child sitemap's entries, fed entry by entry: the set of pairs
    (normalised `<loc>`, interval of its `<lastmod>` or none). Order, repetition, markup,
    `<changefreq>`, `<priority>` and extensions do not count. An RFC 822 `<lastmod>` (an
    RSS pubDate) counts as its second in any kind of sitemap: the kind is not known while
    the entries stream, and the digest is only ever compared with itself. Stable across
    processes (BLAKE2b, never Python's salted hash); 16 bytes per distinct entry."""

    __slots__ = ("_key", "_pairs", "_text")

    def __init__(self) -> None:
        self._pairs: set[bytes] = set()
        self._text: str | None = None  # the previous <lastmod> text, and its key
        self._key = ""

    def add(self, loc: str | None, lastmod: str | None) -> None:
        if lastmod != self._text:
            self._text = lastmod
            span = interval_seconds(lastmod, rss=True)
            self._key = "" if span is None else f"{span[0]}/{span[1]}"
        pair = f"{normalize_url(loc or '')}\n{self._key}".encode("utf-8", "surrogatepass")
        self._pairs.add(hashlib.blake2b(pair, digest_size=16).digest())

    def hexdigest(self) -> str:
        """The digest (hex, 32 characters) of the set of pairs added so far."""
        whole = hashlib.blake2b(digest_size=16)
        for pair in sorted(self._pairs):
            whole.update(pair)
        return whole.hexdigest()


def child_digest(entries: Iterable[tuple[str | None, str | None]]) -> str:
    """The digest of a child's entries given as (`<loc>`, `<lastmod>`) pairs, as written
    (a carried child's entries from the state); see ChildDigest."""
    digest = ChildDigest()
    for loc, lastmod in entries:
        digest.add(loc, lastmod)
    return digest.hexdigest()


class IndexEntryState(NamedTuple):
    """One index entry of one run, as the state keeps it: the interval of its
    `<lastmod>` (`interval_key`; None when missing or invalid) and its child's entries
    digest (None when the child was not read completely)."""

    lastmod: str | None
    digest: str | None


def over_time_finding(
    index: str,
    child: str,
    line: int | None,
    previous: IndexEntryState | None,
    current: IndexEntryState,
    *,
    unchanged: bool = False,
) -> Finding | None:
    """`index-lastmod-frozen` or `-churn` for one entry, or None.

    `previous` is the previous completed run's state of the same entry (None: that run
    did not read this index with an entry for this child); `unchanged`: the child
    answered 304 tonight (its entries are identical, whatever `current.digest` says).
    Not judged when either run lacks a valid `<lastmod>` for the entry, when the
    previous run did not read the child completely, or when tonight's run did not
    (and it did not answer 304)."""
    if previous is None:
        return None
    # tonight's entries: after a 304 the previous run's, whatever tonight's digest says
    digest = previous.digest if unchanged else current.digest
    # judged when both runs have a valid <lastmod> for the entry and read the child
    # completely (tonight: or it answered 304)
    if (
        digest is None
        or previous.digest is None
        or previous.lastmod is None
        or current.lastmod is None
    ):
        return None
    moved = previous.lastmod != current.lastmod
    changed = digest != previous.digest
    if moved == changed:  # both or neither: the index tells the truth
        return None
    if changed:
        return finding(
            "index-lastmod-frozen",
            f"the child's entries changed since the previous run, but the index entry's "
            f"<lastmod> did not move ({_shown(current.lastmod)}): search engines may skip "
            "the child; update <lastmod> when the child changes",
            sitemap=index,
            line=line,
            url=child,
        )
    return finding(
        "index-lastmod-churn",
        f"the index entry's <lastmod> moved ({_shown(previous.lastmod)} -> "
        f"{_shown(current.lastmod)}) but the child's entries are identical: move it "
        "only when the child changes",
        sitemap=index,
        line=line,
        url=child,
    )


def over_time_findings(
    previous: Mapping[tuple[str, str], IndexEntryState],
    current: Mapping[tuple[str, str], tuple[int, IndexEntryState]],
    unchanged: Iterable[str] = (),
) -> list[Finding]:
    """The over-time findings of tonight's entries (`IndexLastmodCheck.entry_states()`)
    against the previous completed run's (the same keys, (index, child)); `unchanged`:
    the children that answered 304 tonight."""
    same = set(unchanged)
    out: list[Finding] = []
    for (index, child), (line, state) in current.items():
        found = over_time_finding(
            index, child, line, previous.get((index, child)), state, unchanged=child in same
        )
        if found is not None:
            out.append(found)
    return out


def _shown(key: str) -> str:
    """An interval key as people read it: its start."""
    return key.split("/", 1)[0]
