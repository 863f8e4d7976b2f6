"""A run with `--state`: the pipeline's URL checks backed by the state store.

`StateHook` plugs into the pipeline through its hooks (audit.pipeline.hooks): before
a request, its headers, the evidence an answer stands for, at delivery, for sitemaps,
and at the end of the run. A run without `--state` has no such hook and pays nothing
for this module.

A URL's verdict is derived once, by the pipeline's checks, from evidence (the final
answer and the page's facts, audit.core.evidence); the state keeps that evidence beside
the verdict, so every night derives its verdicts by the same checks as a fresh run, and
host-level judgements (a deploy stamp: audit.features.deploy) see the same answers. For
each URL taken from the frontier:

1. robots.txt, as in a plain run (a blocked URL is recorded, never requested);
2. a row of THIS run in the state (the run died and is resumed): its stored evidence is
   checked again, nothing is requested;
3. a row of an EARLIER, completed run whose evidence is a plain 2xx answer:
   - `--changed-only`, the URL's <lastmod> is the one of that run, its verdict was
     clean and that run verified the answer (a full answer or a 304, not a carry of its
     own: a guess cannot vouch for another night): that evidence is checked without a
     request (`"carried": true`), counted as skipped;
   - else a conditional request (`If-None-Match` / `If-Modified-Since` from the
     stored ETag / Last-Modified): a 304 stands for the stored answer, with the 304's
     validators where it has them (RFC 9110 15.4.5), and is checked as that answer
     (`"carried": true`);
4. otherwise an ordinary check; its record, findings, ETag, Last-Modified and evidence
   are queued for the store's writer thread.

Sitemaps: every child sitemap's ETag / Last-Modified and the `<lastmod>` its index
gave it are stored. In a later run, a child whose index `<lastmod>` is unchanged is
fetched conditionally; a 304 means it is not read at all: its stored record and
findings are replayed (`"carried": true` on the sitemap record) and the URLs it listed
are taken from the state into the frontier, where they go through steps 1-4 as if
parsed. Sitemaps whose entries carry hreflang alternates are always read again (the
reciprocity check needs every alternate of the run).

Every other record of the run (sitemaps, document and entry findings, URLs not
requested) reaches the store through a recorder sink, so a state file holds the whole
report of its last run (`sitemap-audit diff` reads it).

`crawl --links`: the link crawl (audit.pipeline.links) holds every url record until the
end of the run, so the hook hands it a file beside the state (`PATH.links-N`, removed when
the run completes) where it keeps its queue, inlinks and held records, and resumes from it
when the state resumes the run; at the end it delivers its records through
`deliver_final`, which stores them as URL results (with `source` and `inlinks`). Steps 2
and 3 do not apply: every listed page is fetched with GET (the crawl needs its links, so
nothing is carried forward, asked conditionally or skipped by --changed-only), and a
resumed run's pages are judged again from the evidence the link crawl held with them. Unchanged child sitemaps are still
carried (their URLs, from the stored results, are then fetched in full).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audit.core.evidence import Evidence, encode_evidence, revalidated
from audit.core.records import STATUS_2XX, Entry, FetchResult, Finding, UrlResult, header_value
from audit.features.indexlastmod import IndexLastmodHook
from audit.http import StreamResponse
from audit.http.access import secret_forms
from audit.pipeline.context import RunContext, SitemapJob, UrlJob
from audit.pipeline.hooks import NEXT, Chain, Done, Hook
from audit.pipeline.recorder import Recorder
from audit.state.store import Prior, PriorSitemap, StateStore

if TYPE_CHECKING:
    from audit.pipeline.links import LinkCrawl

__all__ = ["StateHook", "StateSink"]


# Severities that make an earlier verdict worth checking again rather than carrying forward.
_RECHECK = frozenset({"error", "warning"})


def _vouches(prior: Prior, evidence: Evidence, lastmod: str | None) -> bool:
    """--changed-only: may the last run's evidence (`prior.evidence`) stand for tonight
    without a request? Only an answer that run verified (a full answer or a 304; never an
    earlier carry, which is a guess), a plain 2xx, a clean verdict, and the same <lastmod>."""
    # An earlier verdict that may be carried forward: a plain 2xx answer (`revivable`: the
    # record stored beside the evidence was judged on it) with no error or warning
    # finding. A 404, a 5xx, a TLS failure, a URL held back by an unreachable robots.txt or
    # never answered is checked again, so a page fixed since is seen fixed.
    if evidence.seen == "carried" or not evidence.revivable or prior.lastmod != lastmod:
        return False
    return not any(f.get("severity") in _RECHECK for f in prior.findings)


def _validator_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """If-None-Match / If-Modified-Since from a stored ETag / Last-Modified ({}: none,
    which the chain takes as no header: pipeline.chain._merged_headers)."""
    pairs = (("If-None-Match", etag), ("If-Modified-Since", last_modified))
    return {name: value for name, value in pairs if value}


class StateSink:
    """A recorder sink: every record that does not come from a URL check goes to the
    store (those are stored by the check itself, with their ETag and Last-Modified)."""

    # the run's StateHook, set when it is made: a run makes its hooks before any record
    # comes (Audit._run_targets; MigrateRun.start), so every sitemap record finds it
    hook: StateHook

    def __init__(self, store: StateStore) -> None:
        self.store = store
        # set by StateHook._delivered: the records of one URL check, as the recorder
        # delivers them (redacted of credentials), are collected for put_url instead
        self.capture: list[dict[str, Any]] | None = None
        self.targets = 0  # StateHooks made so far: the n-th serves the run's n-th target

    def __call__(self, record: dict[str, Any]) -> None:
        capture = self.capture
        if capture is not None:
            capture.append(record)
            return
        kind = record.get("type")
        if kind == "sitemap":
            self.hook.store_sitemap(record)
        elif kind in ("finding", "url"):
            # URLs not requested (unusable <loc>, internal errors) are kept with the
            # findings: regenerated on resume, never taken as "already checked".
            self.store.put_finding(record)


class StateHook(Hook):
    """The --state store at the pipeline's hook points; one per audited target. The
    run's `Keeper` (audit.pipeline.context): other features keep their own beside it."""

    name = "state"
    ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, sink: StateSink, *, changed_only: bool = False) -> None:
        self.store = sink.store
        self.sink = sink
        sink.hook = self
        sink.targets += 1
        self.target = sink.targets
        self.changed_only = changed_only
        self._links: LinkCrawl | None = None  # crawl --links: it keeps the URL results
        self._index_lastmod: dict[str, str | None] = {}  # child URL -> its index <lastmod>
        self._validators: dict[str, tuple[str | None, str | None]] = {}  # ETag, Last-Modified
        self._asked: dict[str, PriorSitemap] = {}  # children fetched conditionally
        self._no_carry: set[str] = set()  # sitemaps with hreflang alternates
        self._secrets: tuple[str, ...] = ()  # every form of every credential of the run
        self._index: IndexLastmodHook | None = None  # the run's index <lastmod> hook

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self._secrets = secret_forms(ctx.config.secrets())
        self._index = ctx.peer(IndexLastmodHook)  # index <lastmod> over time (digests)
        if ctx.config.links:  # the link crawl keeps its store beside the state (keeper)
            from audit.pipeline.links import LinkCrawl  # lxml.html: only for --links

            self._links = ctx.peer(LinkCrawl)

    # --- the keeper: where other features keep theirs ---------------------------------

    @property
    def resume(self) -> bool:
        """Does the run go on from one that died (whose side files it may read)?"""
        return self.store.mode == "resume"

    @property
    def run(self) -> int:
        """The number of the run in the store."""
        return self.store.run

    def side_file(self, name: str) -> Path:
        """The path of a feature's side file beside the state, one per target."""
        return self.store.side_file(f"{name}-{self.target}")

    def _kept(self, validator: str | None) -> str | None:
        """An ETag or Last-Modified as stored: one that echoes a credential is not kept
        (the record dicts are the report's, redacted; the next run asks in full)."""
        if validator and any(form in validator for form in self._secrets):
            return None
        return validator

    @property
    def rec(self) -> Recorder:
        return self.ctx.recorder

    # --- the URL check ------------------------------------------------------------------

    def before_request(self, job: UrlJob) -> Chain[None]:
        store = self.store
        # nothing stored before this run: no lookup, no call. With --links every listed
        # page is fetched with GET (the crawl needs its links: nothing is carried forward
        # or asked conditionally), and a resumed run's pages are the link crawl's to judge.
        if store.mode != "new" and self._links is None:
            job.context = store.prior(job.url)
        return NEXT

    def stored_answer(self, job: UrlJob) -> Chain[Evidence]:
        """Evidence that stands for tonight's answer without a request: this run's own
        answer before it died (resume), or with --changed-only the last run's verified
        answer of a URL whose <lastmod> has not moved and whose verdict was clean. The
        pipeline derives the verdict from it as from a fresh answer."""
        prior: Prior | None = job.context
        if prior is None or prior.evidence is None:
            return NEXT
        store = self.store
        if prior.run == store.run:  # checked before the crash: not requested again
            store.replayed += 1
            return Done(prior.evidence)
        if self.changed_only and _vouches(prior, prior.evidence, job.lastmod):
            store.carried += 1
            store.skipped += 1
            return Done(replace(prior.evidence, seen="carried"))
        return NEXT

    def request_headers(self, job: UrlJob) -> dict[str, str] | None:
        prior: Prior | None = job.context
        if prior is None or prior.evidence is None or not prior.evidence.revivable:
            return None  # nothing a 304 could stand for: asked in full
        return _validator_headers(prior.etag, prior.last_modified)

    def answer_stands_for(self, job: UrlJob, result: FetchResult) -> Chain[Evidence]:
        """A 304 stands for the stored answer, its validators replaced by the 304's."""
        if result.status != 304:
            return NEXT
        prior: Prior | None = job.context
        if prior is None or prior.evidence is None or not prior.evidence.revivable:
            return NEXT  # a 304 nobody asked for is judged as it is
        self.store.carried += 1
        return Done(revalidated(prior.evidence, result))

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        """An answer that stood for stored evidence is marked `"carried": true`."""
        evidence = job.evidence
        if evidence is None or evidence.seen == "answer":
            return None
        return record.with_fields({"carried": True}), found

    def deliver(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> Chain[None]:
        captured = self._delivered(record, found)  # once per checked URL: kept to few calls
        self.store.put_url(
            job.url,
            job.sitemap,
            job.lastmod,
            self._kept(header_value(result.headers, "etag") if result is not None else None),
            self._kept(record.last_modified),  # the answer's Last-Modified (None without one)
            captured[0],
            captured[1:],
            job.line,
            self._evidence(job.evidence),
        )
        return Done(None)

    def _evidence(self, evidence: Evidence | None) -> Evidence | None:
        """Evidence as stored: none when it echoes a credential (in a header, a URL of
        the chain or the body's first bytes: the next run then asks in full, as for an
        ETag that does). Looked for only in a run that has credentials."""
        if evidence is None or not self._secrets:
            return evidence
        text = encode_evidence(evidence)
        return None if any(form in text for form in self._secrets) else evidence

    def _delivered(self, record: UrlResult, found: list[Finding]) -> list[dict[str, Any]]:
        """The plain delivery (counters, dicts, every sink); returns the dicts the state's
        sink captured, as the sinks got them (redacted): the record, then its findings.
        The record is always among them: the recorder hands every url record to every
        sink (Recorder.url), and the run's StateSink is one (front.state.wire,
        front.migrate)."""
        sink = self.sink
        captured: list[dict[str, Any]] = []
        sink.capture = captured
        try:
            self.ctx.deliver(record, found)
        finally:
            sink.capture = None
        return captured

    def deliver_final(self, record: UrlResult, found: list[Finding]) -> None:
        """A record of the link crawl at the end of the run (with `source` and `inlinks`;
        `"sitemap": null` for a page only the links led to): delivered, and stored as a
        URL result of the run (no ETag: a --links run never asks conditionally)."""
        captured = self._delivered(record, found)  # (the record at least: see deliver)
        self.store.put_url(
            record.url,
            record.sitemap,
            record.lastmod,
            None,
            self._kept(record.last_modified),
            captured[0],
            captured[1:],
            record.line,
        )

    # --- sitemaps -----------------------------------------------------------------------

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        self._index_lastmod[loc] = entry.lastmod

    def entry(self, source: str, entry: Entry) -> None:
        if entry.alternates:
            self._no_carry.add(source)

    def store_sitemap(self, record: dict[str, Any]) -> None:
        """A sitemap record of this run into the store, with its validators."""
        url = str(record.get("url"))
        etag, last_modified = self._validators.pop(url, (None, None))
        self.store.put_sitemap(
            url,
            record,
            index_lastmod=self._index_lastmod.get(url),
            etag=self._kept(etag),
            last_modified=self._kept(last_modified),
            carry=url not in self._no_carry and record.get("error") is None,
        )

    def sitemap_headers(self, job: SitemapJob) -> dict[str, str] | None:
        """Conditional headers for a child whose index <lastmod> has not moved."""
        if job.parent is None or job.local is not None:
            return None
        index_lastmod = self._index_lastmod.get(job.url)
        if index_lastmod is None:
            return None  # without a <lastmod> the index does not vouch for the child
        # the earlier run's record, if that run saw the same index <lastmod> and it may
        # be carried
        prev = self.store.previous_sitemap(job.url)
        if prev is None or not prev.carry or prev.index_lastmod != index_lastmod:
            return None
        headers = _validator_headers(prev.etag, prev.last_modified)
        if headers:
            self._asked[job.url] = prev
        return headers

    async def sitemap_answered(self, job: SitemapJob, resp: StreamResponse) -> Chain[None]:
        prev = self._asked.pop(job.url, None)
        if resp.status in STATUS_2XX:  # (no answer, None, is not)
            self._validators[job.url] = (resp.header("etag"), resp.header("last-modified"))
            return NEXT
        if resp.status != 304 or prev is None:
            return NEXT
        # Unchanged: the validators stay those of the earlier run (a 304 may omit them).
        self._validators[job.url] = (
            resp.header("etag") or prev.etag,
            resp.header("last-modified") or prev.last_modified,
        )
        await self._carry_sitemap(job, prev)
        return Done(None)

    async def _carry_sitemap(self, job: SitemapJob, prev: PriorSitemap) -> None:
        """Replay an unchanged child's record and findings; queue the URLs it listed."""
        rec = self.rec
        for f in await asyncio.to_thread(self.store.sitemap_findings, job.url):
            rec.replay(f)  # the sink stores it again, for this run
        record = {**prev.record, "carried": True}
        rec.entries += record["entries"]  # (every sitemap record has its count: to_json)
        rec.sitemaps += 1
        rec.emit(record)
        self.store.sitemaps_carried += 1
        after = ""  # the stored entries page by page, until an empty page
        while page := await asyncio.to_thread(self.store.sitemap_entries, job.url, after):
            for url, line, lastmod in page:
                self.ctx.listed.add(url, job.url)  # later sitemaps still see it as listed
                # as if parsed: exclusions, duplicates and --max-urls apply as usual
                await self.ctx.enqueue(job.url, Entry("url", url, line, lastmod), url, [])
            after = page[-1][0]

    def end_of_run(self) -> None:
        store, index = self.store, self._index
        if index is not None:
            # index-lastmod-frozen and -churn against the last completed run, and
            # tonight's index entries kept for the next
            check = index.check
            previous = store.previous_index_entries()
            self.rec.findings(check.over_time(previous))  # none without a previous run
            states = check.entry_states()
            store.put_index_entries(
                [(idx, child, st.lastmod, st.digest) for (idx, child), (_, st) in states.items()]
            )
        if self._links is not None:  # pages a resumed link crawl did not request again
            store.replayed += self._links.resumed
        counts = (
            ("carried", store.carried),
            ("skipped_unchanged", store.skipped),
            ("sitemaps_carried", store.sitemaps_carried),
        )
        self.rec.notes.update((name, count) for name, count in counts if count)
