"""A run with `--state`: the Auditor's URL checks backed by the state store.

`StatefulAuditor` replaces `Auditor._check` only; a run without `--state` uses the
plain Auditor and pays nothing for this module. For each URL taken from the frontier:

1. a row of THIS run in the state (the run died and is resumed): the stored url
   record and its findings are replayed into the report, nothing is requested;
2. robots.txt, as in a plain run (a blocked URL is recorded, never requested);
3. a row of an EARLIER, completed run:
   - `--changed-only` and the URL's <lastmod> is the one of that run: carried
     forward without a request (`"carried": true`), counted as skipped;
   - else a conditional request (`If-None-Match` / `If-Modified-Since` from the
     stored ETag / Last-Modified): a 304 carries the earlier result forward;
4. otherwise an ordinary check; its record, findings, ETag and Last-Modified are
   queued for the store's writer thread.

Every other record of the run (sitemaps, document and entry findings, URLs not
requested) reaches the store through a recorder sink, so a state file holds the whole
report of its last run (`sitemap-audit diff` reads it).
"""

from __future__ import annotations

from typing import Any

from audit.checks import check_fetch, robots_blocked_finding, url_record
from audit.http import url_prefix
from audit.pipeline import POLICY_CACHE_MAX, Auditor, UrlJob
from audit.recorder import Recorder
from audit.records import UrlResult
from audit.state import Prior, StateStore

__all__ = ["StateSink", "StatefulAuditor"]


def _conditional(prior: Prior) -> dict[str, str] | None:
    """Validators of an earlier plain 2xx answer (a redirected or failed URL is re-checked)."""
    rec = prior.record
    status = rec.get("status")
    if not isinstance(status, int) or not 200 <= status < 300 or rec.get("redirects"):
        return None
    headers: dict[str, str] = {}
    if prior.etag:
        headers["If-None-Match"] = prior.etag
    if prior.last_modified:
        headers["If-Modified-Since"] = prior.last_modified
    return headers or None


class StateSink:
    """A recorder sink: every record that does not come from a URL check goes to the
    store (those are stored by the check itself, with their ETag and Last-Modified)."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self.paused = False

    def __call__(self, record: dict[str, Any]) -> None:
        if self.paused:
            return
        kind = record.get("type")
        if kind == "sitemap":
            self.store.put_sitemap(str(record.get("url")), record)
        elif kind in ("finding", "url"):
            # URLs not requested (unusable <loc>, internal errors) are kept with the
            # findings: regenerated on resume, never taken as "already checked".
            self.store.put_finding(record)

class StatefulAuditor(Auditor):
    def __init__(
        self,
        *args: Any,
        sink: StateSink,
        changed_only: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.store = sink.store
        self.sink = sink
        self.changed_only = changed_only

    def _emit(self, record: dict[str, Any], findings: list[dict[str, Any]]) -> None:
        rec: Recorder = self.rec
        self.sink.paused = True
        try:
            rec.urls += 1
            rec.emit(record)
            for f in findings:
                rec.by_severity[str(f.get("severity"))] += 1
                rec.by_code[str(f.get("code"))] += 1
                rec.emit(f)
        finally:
            self.sink.paused = False

    def _carry(self, job: UrlJob, prior: Prior) -> None:
        """The earlier result stands; it is listed where the sitemap lists it now."""
        record = {
            **prior.record,
            "sitemap": job.sitemap,
            "line": job.line,
            "lastmod": job.lastmod,
            "carried": True,
        }
        findings = [{**f, "sitemap": job.sitemap, "line": job.line} for f in prior.findings]
        self._emit(record, findings)
        self.store.carried += 1
        self.store.put_url(
            job.url, job.sitemap, job.lastmod, prior.etag, prior.last_modified, record, findings
        )

    # --- the URL check ------------------------------------------------------------------

    async def _check(self, job: UrlJob) -> None:
        store = self.store
        prior = store.prior(job.url)
        if prior is not None and prior.run == store.run:  # checked before the crash
            self._emit(prior.record, prior.findings)
            store.replayed += 1
            return
        prefix = url_prefix(job.url)
        policy = self._policies.get(prefix) if prefix is not None else None
        if policy is None:
            policy = await self._robots_for(job.url)
            if prefix is not None and len(self._policies) < POLICY_CACHE_MAX:
                self._policies[prefix] = policy
        if not policy.allowed(job.url):
            blocked = UrlResult(
                job.url, job.sitemap, job.line, None, None, (), job.lastmod, None, "blocked", None
            ).to_json()
            finding = robots_blocked_finding(job.url, job.sitemap, job.line).to_json()
            self._emit(blocked, [finding])
            store.put_url(job.url, job.sitemap, job.lastmod, None, None, blocked, [finding])
            return
        headers = None
        if prior is not None:
            if self.changed_only and prior.lastmod == job.lastmod:
                self._carry(job, prior)
                store.skipped += 1
                return
            headers = _conditional(prior)
        result = await self.client.fetch(job.url, headers=headers)
        if result.status == 304 and prior is not None:
            self._carry(job, prior)
            return
        record = url_record(result, sitemap=job.sitemap, line=job.line, lastmod=job.lastmod)
        found = check_fetch(
            result,
            lastmod=job.lastmod,
            sitemap=job.sitemap,
            line=job.line,
            config=self.config,
            agent_token=self.agent_token,
            now=self.now,
        )
        data = record.to_json()
        findings = [f.to_json() for f in found]
        self._emit(data, findings)
        store.put_url(
            job.url,
            job.sitemap,
            job.lastmod,
            result.header("etag"),
            result.header("last-modified"),
            data,
            findings,
        )

    def _finish_run(self) -> None:
        notes = self.rec.notes
        if self.store.carried:
            notes["carried"] = self.store.carried
        if self.store.skipped:
            notes["skipped_unchanged"] = self.store.skipped
        super()._finish_run()
