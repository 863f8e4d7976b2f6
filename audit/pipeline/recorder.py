"""The sink: every record of a run passes through here on its way to the writers.

It keeps only counters (never the records), so the summary can be computed
at the end whatever the size of the audit. Codes given to `ignore` (--ignore) are
dropped here, once: no writer, no state file, no count and no exit status sees them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from audit.core.records import Finding, Severity, SitemapRecord, UrlResult
from audit.report.aggregate import failing_severities

if TYPE_CHECKING:  # loaded by roll_up: a crawl's (a validate never needs it)
    from audit.pipeline.rollup import Rollup

RecordSink = Callable[[dict[str, Any]], None]


class Recorder:
    def __init__(self, sinks: list[RecordSink]) -> None:
        self._sinks = sinks
        self._raw_sinks = list(sinks)
        self._secrets: tuple[str, ...] = ()
        self.started = time.monotonic()
        self.sitemaps = 0
        self.urls = 0
        self.entries = 0
        self.by_severity: Counter[str] = Counter()
        self.by_code: Counter[str] = Counter()
        self.notes: dict[str, Any] = {}
        self.ignored: frozenset[str] = frozenset()
        self.rollup: Rollup | None = None  # crawl: the per-sitemap roll-up (roll_up())
        self._held: list[dict[str, Any]] = []  # `hosts` records, until the roll-up is out

    def roll_up(self) -> None:
        """From now on every record delivered counts in the per-sitemap roll-up, and the
        `hosts` records wait for `end_records()`, which writes the `rollup` records first
        (contracts/nights.md 5: after the last url and finding, before hosts). Called
        once, on a fresh recorder (a crawl's: api.Audit)."""
        from audit.pipeline.rollup import Rollup

        self.rollup = Rollup()

    def index_entry(self, sitemap: str, lastmod: str | None) -> None:
        """An index's `<sitemap>` entry (the roll-up counts those with a valid lastmod)."""
        if self.rollup is not None:
            self.rollup.index_entry(sitemap, lastmod)

    def end_records(self) -> None:
        """The records that close a run before its summary: the `rollup` records, then
        the `hosts` records held back. Without roll_up() there is nothing to write."""
        rollup, self.rollup = self.rollup, None
        if rollup is not None:  # (emit holds the hosts records only while it rolls up)
            held, self._held = self._held, []
            for record in (*rollup.records(), *held):
                self.emit(record)

    def ignore(self, codes: Iterable[str]) -> None:
        """From now on findings of these codes are neither emitted nor counted; the summary
        names them (`"ignored"`), so a report never hides that it was filtered."""
        self.ignored = frozenset(codes)
        if self.ignored:
            self.notes["ignored"] = sorted(self.ignored)
        else:
            self.notes.pop("ignored", None)

    def redact(self, secrets: tuple[str, ...]) -> None:
        """From now on every record reaches the sinks with these secret values replaced
        (staging credentials never enter a report). Idempotent: the sinks are wrapped again
        from the raw ones; without secrets each is the raw sink itself, at no cost."""
        from audit.http.access import redacting

        self._secrets = secrets
        self._sinks = [redacting(s, secrets) for s in self._raw_sinks]

    def add_sink(self, sink: RecordSink) -> None:
        """One more sink from now on (redacted like the others): a capability that counts
        what the report says (--intent's summary block)."""
        from audit.http.access import redacting

        self._raw_sinks.append(sink)
        self._sinks.append(redacting(sink, self._secrets))  # (without secrets: the sink)

    def emit(self, record: dict[str, Any]) -> None:
        """A record to the sinks (a finding comes through `finding` or `replay`, which drop
        the ignored codes)."""
        rollup = self.rollup
        if rollup is not None:
            if record.get("type") == "hosts":
                self._held.append(record)
                return
            rollup.add(record)
        for sink in self._sinks:
            sink(record)

    def sitemap(self, rec: SitemapRecord) -> None:
        self.sitemaps += 1
        self.emit(rec.to_json())

    def url(self, rec: UrlResult) -> None:
        """emit(), written out for a url record (once per listed URL): it is never an
        ignored finding nor held, and goes to the rollup's url count directly."""
        self.urls += 1
        record = rec.to_json()
        rollup = self.rollup
        if rollup is not None:  # (`indexable`: the record's extra, merged in by to_json)
            rollup.listed(rec.sitemap, record.get("indexable"), rec.lastmod)
        for sink in self._sinks:
            sink(record)

    def unlisted(self, rec: UrlResult) -> None:
        """The url record of a URL no sitemap of the run lists (an --intent row's, a
        dropped URL of the ledger): written, not counted in the summary's `urls`."""
        self.emit(rec.to_json())

    def finding(self, f: Finding) -> None:
        if f.code in self.ignored:
            return
        self.by_severity[f.severity._value_] += 1  # not .value: a Python-level property
        self.by_code[f.code] += 1
        self.emit(f.to_json())

    def findings(self, fs: Iterable[Finding]) -> None:
        for f in fs:
            self.finding(f)

    def replay(self, record: dict[str, Any]) -> None:
        """A url or finding record as a dict (from the --state store), counted as
        `url()` and `finding()` count theirs; an ignored finding is dropped."""
        kind = record.get("type")
        if kind == "finding":
            code = str(record.get("code"))
            if code in self.ignored:
                return
            self.by_severity[str(record.get("severity"))] += 1
            self.by_code[code] += 1
        elif kind == "url":
            self.urls += 1
        self.emit(record)

    def worst_at_or_above(self, level: str) -> bool:
        """True when some finding is at or above --fail-on LEVEL (the report's one rule)."""
        return bool(failing_severities(self.by_severity, level))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "summary",
            "sitemaps": self.sitemaps,
            "urls": self.urls,
            "entries": self.entries,
            "findings": {s.value: self.by_severity[s.value] for s in Severity},
            "by_code": dict(sorted(self.by_code.items(), key=lambda kv: (-kv[1], kv[0]))),
            "duration_s": round(time.monotonic() - self.started, 3),
        }
        out.update(self.notes)
        return out
