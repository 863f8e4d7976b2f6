"""Index `<lastmod>` truth in a run (contracts/nights.md 4): the pipeline's side of
audit.rules.indexlastmod.

`IndexLastmodHook` sees every index entry (`child`), every parsed entry (`entries`) and
every sitemap read (`sitemap_done`), and at the end of the run reports
`index-lastmod-behind` for each entry whose completely read child has a newer
`<lastmod>`. `index-lastmod-now` is the validator's (it knows each index's entries and
the moment its answer arrived, and reports it instead of `lastmod-uniform`); the entries
of such an index are not judged here.

For the over-time codes (`--state`): when the run has a keeper (its RunContext's
`keeper()`) this hook keeps the children's digests (`check.keep_digests()`); at the end,
`check.entry_states()` gives tonight's (index, child) -> (line, IndexEntryState) to
store for the next night, and `check.over_time(previous)` the `index-lastmod-frozen`
and `-churn` findings against the previous completed run's states (a child carried on
a 304 counts as unchanged). A child carried on a 304 (--state) is not parsed: the entries the state
admits for it reach `entries` as if parsed, and `sitemap_carried` counts it as read
completely.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audit.pipeline.hooks import Hook
from audit.rules.indexlastmod import IndexLastmodCheck

if TYPE_CHECKING:
    from collections.abc import Sequence

    from audit.core.records import Entry, SitemapRecord
    from audit.pipeline.context import RunContext, SitemapJob
    from audit.sitemap.parser import StreamParser

__all__ = ["IndexLastmodHook"]


class IndexLastmodHook(Hook):
    """index-lastmod-behind over one run's sitemaps; see the module."""

    name = "index-lastmod"
    _ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, tolerance_s: float = 0.0, *, digests: bool = False) -> None:
        self.check = IndexLastmodCheck(tolerance_s, digests=digests)

    def attach(self, ctx: RunContext) -> None:
        self._ctx = ctx
        if ctx.keeper() is not None:  # --state: index <lastmod> over time reads digests
            self.check.keep_digests()

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        if loc:
            index = job.record_url
            self.check.index_entry(index, loc, entry.line, entry.lastmod, job.answered)

    def entries(self, source: str, entries: Sequence[Entry]) -> None:
        self.check.child_entries(source, entries)

    def sitemap_done(self, record: SitemapRecord, parser: StreamParser) -> None:
        complete = record.error is None and parser.complete and not self._blocked(record.url)
        self.check.child_done(record.url, complete=complete, kind=parser.kind)

    def _blocked(self, url: str) -> bool:
        """Does robots.txt disallow the sitemap (sitemap-robots-blocked)? It is still read,
        but a sitemap search engines may not fetch is not one read completely
        (contracts/nights.md 2)."""
        policy = self._ctx.robots.cached(url)  # (a run of local files has a client too)
        return policy is not None and policy.status == "ok" and not policy.allowed(url)

    def sitemap_carried(self, job: SitemapJob) -> None:
        """A child carried on a 304 (--state): its stored entries came through `entries`;
        it counts as read completely. Its kind is not known here: an RSS child's pubDate
        lastmods do not count when it is carried."""
        self.check.child_carried(job.record_url)

    def end_of_run(self) -> None:
        self._ctx.recorder.findings(self.check.findings())
