"""lastmod over time (RULES.md): a hook that fingerprints each page's main text, keeps
it in the --state store and judges `<lastmod>` against it across runs.

`LastmodHook` gives the pipeline a `ContentSink` for every listed URL's GET (the
`page_body` hook point: with `--content` a URL is fetched with GET for this alone;
with `--page-checks` the sink reads beside the page checks' own). At judgement:

- `lastmod-page-date`: the page's own modification date (JSON-LD `dateModified`,
  `article:modified_time`) lies more than one day outside the span its `<lastmod>`
  denotes (a date-only lastmod covers its whole day);
- with a store, the page's fingerprint and `<lastmod>` are compared with those of the
  previous run that saw the page, and then stored in its place:
  `lastmod-frozen` (the main text changed, `<lastmod>` did not) and `lastmod-churn`
  (`<lastmod>` moved, the main text did not). A page without `<lastmod>` now is never
  frozen; churn needs a `<lastmod>` on both sides; two `<lastmod>` values that name the
  same instant in other forms have not moved.

A conditional request answered 304 stands for the stored answer (the StateHook's
`answer_stands_for`): this hook's sink is handed the stored page facts as if it had
read the body, so the earlier fingerprint stands for this run and a moved `<lastmod>`
is churn, reported like any other finding of the URL, with its sitemap and line.

Without a store, only the page's date is judged and only the head is read, and a URL
without `<lastmod>` gets no sink (nothing to judge).

Imports the pipeline's hook interface, the pure content module and the store; never
aiohttp.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from audit.checks.content import ContentSink, PageContent
from audit.core.records import FetchResult, Finding, UrlResult, finding
from audit.pipeline.hooks import Hook
from audit.rules.dates import parse_w3c_datetime

if TYPE_CHECKING:
    from audit.http.exchange import BodySink
    from audit.pipeline.context import UrlJob
    from audit.state.store import StateStore

__all__ = ["PAGE_DATE_SLACK", "LastmodHook", "lastmod_moved", "page_date_gap"]

PAGE_DATE_SLACK = timedelta(days=1)  # a page date this far outside <lastmod>'s span is fine


def lastmod_moved(before: str | None, now: str | None) -> bool:
    """Did `<lastmod>` move? The same instant written differently has not."""
    if before == now:
        return False
    if before is None or now is None:
        return True
    try:
        return parse_w3c_datetime(before).start != parse_w3c_datetime(now).start
    except ValueError:
        return True


def page_date_gap(page_date: datetime, lastmod: str | None) -> timedelta | None:
    """How far the page's date lies outside the span of `<lastmod>` (None: no usable
    lastmod; zero: inside it)."""
    if lastmod is None:
        return None
    try:
        span = parse_w3c_datetime(lastmod)
    except ValueError:
        return None
    # the distance from a point to the span [start, end): before it, after it, or none
    return max(span.start - page_date, page_date - span.end, timedelta(0))


class LastmodHook(Hook):
    """Content fingerprints and page dates at the pipeline's hook points."""

    name = "lastmod"

    def __init__(self, store: StateStore | None, cap: int) -> None:
        self.store = store
        self.cap = cap
        self._sinks: dict[int, ContentSink] = {}  # id(job) -> its sink, until judged

    def page_body(self, job: UrlJob) -> BodySink | None:
        if self.store is None and job.lastmod is None:
            return None  # without a store only the page's date counts, against <lastmod>
        sink = ContentSink(self.cap, head_only=self.store is None)
        self._sinks[id(job)] = sink
        return sink

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        sink = self._sinks.pop(id(job), None)
        # a sink holds facts only once fed or handed stored evidence: a URL with an answer
        content = sink.content() if sink is not None else None
        if content is None:
            if self.store is None:
                return None
            return self._with_changed(record, None), found
        more = self._page_date(job, content)
        store = self.store
        if store is None:
            return (record, [*found, *more]) if more else None
        changed: str | None = None
        fp = content.fingerprint
        if fp is not None:
            before = store.previous_content(job.url)
            store.put_content(job.url, fp, job.lastmod)
            # when this state first fetched the page with its current fingerprint,
            # provided an earlier run had another one: now for a change, else what the
            # last run's record said (kept until the fingerprint changes again); None
            # when no change was seen
            if before is not None:
                more += self._compare(job, fp, before)
                if before[0] != fp:
                    changed = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
                else:
                    prior = store.prior(job.url)  # its record's field: this hook's, str or None
                    changed = prior.record.get("content_changed") if prior is not None else None
        return self._with_changed(record, changed), [*found, *more]

    # --- content_changed (contracts/fix.md) -------------------------------------------

    @staticmethod
    def _with_changed(record: UrlResult, changed: str | None) -> UrlResult:
        """The record with its `content_changed` (a --state run's url records carry it)."""
        return record.with_fields({"content_changed": changed})

    # --- the verdicts -----------------------------------------------------------------

    def _page_date(self, job: UrlJob, content: PageContent) -> list[Finding]:
        if content.modified is None:
            return []
        gap = page_date_gap(content.modified, job.lastmod)
        if gap is None or gap <= PAGE_DATE_SLACK:
            return []
        days = gap.total_seconds() / 86400
        away = f"{days:.0f} days" if days >= 2 else f"{gap.total_seconds() / 3600:.0f} hours"
        message = (
            f"the page's {content.modified_source} says {content.modified_text}, "
            f"{away} away from <lastmod> {job.lastmod}: one of them is wrong; "
            "make <lastmod> the date the page's content last changed"
        )
        return [
            finding("lastmod-page-date", message, sitemap=job.sitemap, line=job.line, url=job.url)
        ]

    @staticmethod
    def _compare(job: UrlJob, fp: int, before: tuple[int, str | None]) -> list[Finding]:
        old_fp, old_lastmod = before
        if old_lastmod is None or job.lastmod is None:
            return []  # both codes compare two <lastmod>s (with one, it always moved)
        changed = old_fp != fp
        if changed == lastmod_moved(old_lastmod, job.lastmod):
            return []  # <lastmod> moved exactly when the main text changed: as it should
        if changed:  # ... and <lastmod> stayed
            message = (
                f"the page's main text changed since the previous run (fingerprint "
                f"{_hex(old_fp)} -> {_hex(fp)}) but <lastmod> stayed {job.lastmod} "
                f"(previous run: {old_lastmod}): update <lastmod> when the content changes"
            )
            return [
                finding("lastmod-frozen", message, sitemap=job.sitemap, line=job.line, url=job.url)
            ]
        evidence = job.evidence  # <lastmod> moved, the main text did not
        if evidence is not None and evidence.seen == "304":
            how = "the server answered 304 Not Modified"
        else:
            how = f"the page's main text did not change (fingerprint {_hex(fp)})"
        message = (
            f"<lastmod> moved from {old_lastmod} (previous run) to {job.lastmod} but {how}: "
            "a build stamp, not a change; set <lastmod> only when the content changes"
        )
        return [finding("lastmod-churn", message, sitemap=job.sitemap, line=job.line, url=job.url)]


def _hex(fp: int) -> str:
    return f"{fp & 0xFFFF_FFFF_FFFF_FFFF:016x}"
