"""The published-URL ledger (nights.md section 2): URLs that left the sitemaps are asked
again and judged (`url-dropped-*`).

`Ledger` is a recorder sink and a stage. As a sink it sees every record of the run and
keeps what it needs to judge the ledger afterwards: the normalised URLs listed tonight
(a `url` record with a sitemap; 8 bytes each, `SeenUrls`), the sitemaps referenced
tonight (every sitemap record, every child an index names, every TARGET) and those not
read completely (a sitemap record with an error, or one of the HELD_CODES about it). As
a stage (`judge_dropped`, once after every target of a completed run that was not cut), it reads
the ledger of the earlier runs, sorts each row that tonight did not list into *held*
(its sitemap is referenced but failed, or left out by --include/--exclude-sitemap: kept
as it is, not asked) or *dropped*, asks the dropped ones (the latest `last_seen` first,
at most --dropped-max) exactly as a listed URL is checked (robots.txt first, HEAD
confirmed with GET or GET with page checks, redirects hop by hop, retries; never
conditionally), and reports one `url` record (`"source": "ledger"`) and at most one
`url-dropped-*` finding each. The store adds tonight's listed URLs to the ledger when the
run is marked complete (audit.state.store).

Imports the pipeline (a hookless context of its own does the requests and the checks) and the
rules; never aiohttp directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from audit.core.config import DEFAULT_DROPPED_MAX, CrawlConfig
from audit.core.records import Entry, FetchResult, Finding, UrlResult, finding
from audit.features.intent import IntentRun, intent_of, violation
from audit.pipeline.context import RunContext, SitemapJob, UrlJob
from audit.pipeline.hooks import Hook
from audit.pipeline.recorder import Recorder
from audit.rules.fingerprints import SeenUrls
from audit.rules.urls import normalize_url
from audit.state.store import StateStore

__all__ = ["DROPPED_MAX", "HELD_CODES", "Dropped", "Ledger", "outcome_of"]

DROPPED_MAX = DEFAULT_DROPPED_MAX  # --dropped-max: dropped URLs asked per run at most

# A sitemap with one of these was not read completely tonight: the URLs it listed before
# are held, not dropped (one 500 must not turn a sitemap into thousands of findings).
HELD_CODES = frozenset(
    {
        "sitemap-not-found",
        "sitemap-http-error",
        "sitemap-robots-blocked",
        "sitemap-is-html",
        "sitemap-root-invalid",
        "sitemap-encoding",
        "sitemap-gzip-invalid",
        "sitemap-xml-malformed",
        "sitemap-too-large",
    }
)
# fetch-level findings name the sitemap in `url` (placed at the parent that lists it);
# the parser's name it in `sitemap`
_FETCH_CODES = frozenset({"sitemap-not-found", "sitemap-http-error", "sitemap-robots-blocked"})
# a held code -> the record field that names the sitemap
_HELD_FIELD = {code: "url" if code in _FETCH_CODES else "sitemap" for code in HELD_CODES}
_PERMANENT = frozenset({301, 308})
_CODES = {
    "gone": "url-dropped-gone",
    "404": "url-dropped-404",
    "to-home": "url-dropped-to-home",
    "redirect": "url-dropped-redirect",
    "temporary": "url-dropped-temporary",
    "live": "url-dropped-live",
    "error": "url-dropped-error",
}
_ADVICE = {
    "url-dropped-gone": "it is gone (410): a correct removal",
    "url-dropped-404": "restore it, redirect it (301) to its successor, or answer 410 if it is "
    "gone for good",
    "url-dropped-to-home": "search engines treat a redirect to the home page as a soft 404: "
    "redirect it to the page that replaced it, or answer 410",
    "url-dropped-redirect": "a permanent redirect: a correct removal; list the target instead",
    "url-dropped-temporary": "make the redirect permanent (301 or 308) so signals move to the "
    "target",
    "url-dropped-live": "it still answers 200 and is indexable: list it again, or redirect or "
    "remove it",
    "url-dropped-error": "it answers neither a page nor a removal: fix the server or answer 410",
}
# a final status that decides the outcome whatever else the answer says
_BY_STATUS: dict[int | None, str] = {410: "gone", 404: "404"}


@dataclass(frozen=True, slots=True)
class Dropped:
    """A ledger row tonight's run did not list."""

    url: str
    first_seen: str
    last_seen: str
    last_sitemap: str  # never empty: the ledger keeps the URLs listed in a sitemap


def outcome_of(result: FetchResult | None, indexable: bool) -> str:
    """The contract's outcome of a dropped URL's final answer (None: robots.txt)."""
    if result is None:
        return "robots"
    if result.status != 200 or result.error is not None:
        return _BY_STATUS.get(result.status, "error")
    if not result.redirects:
        return "live" if indexable else "not-indexable"
    if urlsplit(result.final_url).path in ("", "/"):
        return "to-home"
    return "redirect" if all(hop.status in _PERMANENT for hop in result.redirects) else "temporary"


class Ledger(Hook):
    """Tonight's view of the ledger (a recorder sink, and a hook of every target's run
    for the children indexes name and the sitemap filters), judged after the run."""

    name = "ledger"
    # set by attach, which every target's run calls first: the ledger judges dropped URLs
    # of runs it served
    _alone: Callable[[Recorder], AbstractAsyncContextManager[RunContext]]
    intent: IntentRun  # the run's --intent (intent_of: one of no rows without it)

    def __init__(
        self,
        store: StateStore,
        config: CrawlConfig,
        targets: list[str],
        *,
        dropped_max: int = DROPPED_MAX,
    ) -> None:
        self.store = store
        self.config = config
        self.dropped_max = max(0, dropped_max)
        self.listed = SeenUrls()
        self.referenced: set[str] = {normalize_url(t) for t in targets}
        self.failed: set[str] = set()
        self._excluded: Callable[[str], bool] = lambda url: False

    # --- the sink -------------------------------------------------------------------

    def __call__(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "url":
            # a listed URL (the records of the URLs the ledger and --intent ask have none)
            if record.get("sitemap") is not None:
                self.listed.add(str(record.get("url")))
        elif kind == "finding":
            # the field naming the sitemap of a held code ("": no record has it, none held)
            about = record.get(_HELD_FIELD.get(str(record.get("code")), ""))
            if about:
                self.failed.add(normalize_url(str(about)))
        elif kind == "sitemap":
            url = normalize_url(str(record.get("url")))
            self.referenced.add(url)
            if record.get("error") is not None:
                self.failed.add(url)

    # --- the hook (one instance for every target of the run) --------------------------

    def attach(self, ctx: RunContext) -> None:
        self._alone = ctx.alone  # the dropped URLs are checked after the run, on their own
        self._excluded = ctx.sitemap_excluded  # the run's --include/--exclude-sitemap
        # --intent: rows of dropped and held URLs are judged here (and the intent hook
        # leaves what this claims: a Claimer)
        self.intent = intent_of(ctx)

    def claims(self, url: str) -> bool:
        """Is `url` the ledger's tonight (dropped or held: listed before, not tonight)? An
        --intent row's URL it claims is not requested again as an unlisted row."""
        return url not in self.listed and self.store.in_ledger(url)

    def child(self, job: SitemapJob, entry: Entry, loc: str) -> None:
        """An index read tonight names this child sitemap (referenced even when it was not
        fetched: excluded, or beyond the depth guard)."""
        self.referenced.add(normalize_url(loc))

    # --- the stage ------------------------------------------------------------------

    def held(self, sitemap: str) -> bool:
        key = normalize_url(sitemap)
        return key in self.referenced and (key in self.failed or self._excluded(sitemap))

    async def judge_dropped(self, recorder: Recorder) -> None:
        """Sort the ledger, ask and judge the dropped URLs, and note the counts
        (`summary.ledger`)."""
        known = listed_known = held = 0
        dropped: list[Dropped] = []
        unchecked = 0
        for url, first, last, sitemap in self.store.ledger_rows():
            known += 1
            if url in self.listed:
                listed_known += 1
            elif self.held(sitemap):
                held += 1
            elif len(dropped) < self.dropped_max:
                dropped.append(Dropped(url, first, last, sitemap))
            else:
                unchecked += 1
        if dropped:
            await self._check(dropped, recorder)
        listed = len(self.listed)
        new = listed - listed_known
        recorder.notes["ledger"] = {
            "known": known + new,
            "listed": listed,
            "new": new,
            "dropped": len(dropped) + unchecked,
            "held": held,
            "checked": len(dropped),
            "unchecked": unchecked,
        }

    async def _check(self, dropped: list[Dropped], recorder: Recorder) -> None:
        """Each dropped URL asked once, as a listed URL is (a context of this
        stage's own, without hooks: no conditional request, nothing stored as listed)."""
        quiet = Recorder([])  # robots.txt findings of these hosts are the run's already
        gate = asyncio.Semaphore(max(1, self.config.concurrency))

        async def one(row: Dropped) -> tuple[UrlResult, list[Finding]]:
            async with gate:
                return await _judged(alone, row, self.intent)

        async with self._alone(quiet) as alone:
            results = await asyncio.gather(*(one(row) for row in dropped))
        for record, found in results:  # in ledger order, whatever answered first
            recorder.emit(record.to_json())
            recorder.findings(found)


async def _judged(
    ctx: RunContext, row: Dropped, intent: IntentRun
) -> tuple[UrlResult, list[Finding]]:
    """A dropped URL's record and its one finding (url-dropped-*, or the intent row's
    violation), or none (a correct removal)."""
    job = UrlJob(row.url, None, None, None)  # listed nowhere
    result, judged = await ctx.check_unlisted(job)
    marks = judged.index_fields()
    outcome = outcome_of(result, marks["indexable"])
    record = judged.record.with_fields(
        {
            **marks,
            "source": "ledger",
            "first_seen": row.first_seen,
            "last_seen": row.last_seen,
            "last_sitemap": row.last_sitemap,
            "dropped": outcome,
        }
    )
    code = _CODES.get(outcome)
    verdict = intent.judge(row.url, record)  # (none for a URL robots.txt kept: no answer)
    if verdict is not None:  # nights.md 3: the row's verdict on the dropped URL's answer
        record = record.with_fields({"intent": verdict.to_json()})
        if not verdict.ok:  # a broken row replaces the url-dropped-* finding
            return record, [violation(row.url, verdict)]
        if outcome == "404" and verdict.action == "gone":
            code = "url-dropped-gone"
    if code is None:  # robots, not-indexable: a correct removal
        return record, []
    message = (
        f"listed in {row.last_sitemap} until {row.last_seen}, no longer "
        f"listed; {served(result)}: {_ADVICE[code]}"
    )
    return record, [finding(code, message, url=row.url)]


def served(result: FetchResult | None) -> str:
    """What was served, for a message: the status, and for a redirect the chain to the
    final URL and its status."""
    if result is None:
        return "not requested (robots.txt disallows it)"
    if result.status is None:
        return f"no answer ({result.error or 'failed'})"
    if not result.redirects:
        return f"served {result.status}"
    first = result.redirects[0].status
    hops = len(result.redirects)
    via = f" in {hops} hops" if hops > 1 else ""
    return f"served {first} -> {result.final_url} ({result.status}){via}"
