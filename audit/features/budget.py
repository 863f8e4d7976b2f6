"""Budgeted rolling audits (`crawl --state PATH --budget N`, contracts/manysites.md).

A site of a million URLs at 10 requests a second takes 27.8 hours: longer than a night.
With `--budget N` each run checks at most N listed URLs and carries every other one from
the state, so that over ceil(T/N) runs every URL is checked.

`BudgetHook` holds every listed URL back as the workers take it (`before_request`): all
sitemaps are read before the first URL check. When the listing is complete (`drain`), the
URLs are sorted by the contract's keys (due first; then never checked, moved, failed, the
others; then the older last check; then listing order), the first N are checked by the
auditor's own check, and the rest are carried: a URL checked on an earlier run has its
verdict derived again from its stored evidence (as a 304 is), one never checked gets a
record with no verdict. Each check's run, time and listed `<lastmod>` go into the state
(`budget` table), which is what "due", "moved" and the ages are read from.

A resumed budgeted run keeps its selection: a URL this run checked before it died is
checked again from its stored evidence (no request), one it carried is carried again.

Limits: a URL robots.txt keeps from us is "checked" by robots.txt (it is judged, never
requested); its check is recorded like any other.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Any

from audit.core.evidence import Evidence
from audit.core.records import FetchResult, Finding, UrlResult, finding
from audit.features.lastmod import lastmod_moved
from audit.pipeline.hooks import NEXT, Chain, Done, Hook
from audit.state.store import Prior, StateStore

if TYPE_CHECKING:
    from audit.pipeline.context import RunContext, UrlJob

__all__ = ["BudgetHook", "nearest_rank"]

_FAILED = frozenset({"error", "warning"})


def nearest_rank(ages: list[int], p: int) -> int | None:
    """The nearest-rank p-th percentile of `ages` (sorted ascending), or None."""
    if not ages:
        return None
    return ages[max(1, math.ceil(p / 100 * len(ages))) - 1]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class BudgetHook(Hook):
    """--budget N: at most N listed URLs checked in this run; see the module."""

    name = "budget"
    _ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, store: StateStore, limit: int) -> None:
        self.store = store
        self.limit = max(1, limit)
        self.jobs: list[UrlJob] = []  # every listed URL, held until the listing is complete
        self._released: dict[int, str] = {}  # id(job) -> checked_at of the URLs checked now
        self.checked = 0
        self.carried = 0
        self._ages: list[int] = []
        self._unchecked = 0

    def attach(self, ctx: RunContext) -> None:
        self._ctx = ctx

    def before_request(self, job: UrlJob) -> Chain[None]:
        if id(job) in self._released:
            return NEXT  # chosen: checked now, as any listed URL
        self.jobs.append(job)
        return Done(None)  # held until the listing is complete (drain)

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        at = self._released.get(id(job))
        if at is None:
            return None
        self.store.put_budget(job.url, at, job.lastmod)
        return record.with_fields({"checked_at": at}), found

    async def drain(self) -> None:
        ctx = self._ctx
        chosen, carried = self._select()  # (none listed: none chosen, none carried)
        for job, row in carried:
            await self._carry(ctx, job, row)
        gate = asyncio.Semaphore(max(1, ctx.config.concurrency))

        async def check(job: UrlJob) -> None:
            async with gate:
                self._released[id(job)] = _now()
                await ctx.check(job)

        # started in the selection's order: within a group the first requests keep it
        await asyncio.gather(*(check(job) for job in chosen))
        self.jobs = []

    # --- the selection ----------------------------------------------------------------

    def _select(self) -> tuple[list[UrlJob], list[tuple[UrlJob, tuple[int, str, str] | None]]]:
        """The URLs checked now (at most N, in order) and those carried, with their last
        check (run, checked_at, listed <lastmod>) or None."""
        run = self.store.run
        total = len(self.jobs)
        k = math.ceil(total / self.limit)
        keyed: list[tuple[tuple[int, int, int, int], UrlJob, tuple[int, str, str] | None]] = []
        forced: list[UrlJob] = []
        for index, job in enumerate(self.jobs):
            prior: Prior | None = job.context
            row = self.store.budget_row(job.url)
            if prior is not None and prior.run == run:  # a resumed run: its choice stands
                if row is not None and row[0] == run:
                    forced.append(job)
                    continue
                keyed.append(((2, 0, 0, index), job, row))
                continue
            if row is None:
                keys = (1, 0, 0, index)
            else:
                cls = (
                    1 if lastmod_moved(row[2] or None, job.lastmod) else 2 if _failed(prior) else 3
                )
                keys = (int(run - row[0] < k), cls, row[0], index)  # 0: due, first
            keyed.append((keys, job, row))
        keyed.sort(key=lambda item: item[0])
        room = max(0, self.limit - len(forced))
        chosen = forced + [job for _, job, _ in keyed[:room]]
        carried = [(job, row) for _, job, row in keyed[room:]]
        self.checked = len(chosen)
        self._ages = [0] * len(chosen)
        for _, row in carried:
            if row is None:
                self._unchecked += 1
            else:
                self._ages.append(run - row[0])
        return chosen, carried

    async def _carry(self, ctx: RunContext, job: UrlJob, row: tuple[int, str, str] | None) -> None:
        """A URL not checked now: its last check's verdict, derived again from its stored
        evidence, or (never checked) a record with no verdict and no finding."""
        self.carried += 1
        self.store.carried += 1
        prior: Prior | None = job.context
        extra: dict[str, Any] = {"carried": True, "checked_at": row[1] if row else None}
        evidence = prior.evidence if prior is not None else None
        if row is not None and evidence is not None:
            stored = Evidence(evidence.result, evidence.facts, "carried")
            await ctx.judge_stored(job, stored, extra)
            return
        record = UrlResult.unrequested(job.url, job.sitemap, job.line, job.lastmod, "allowed")
        empty = {"robots": None, "indexable": None, "indexability": None, **extra}
        ctx.deliver(record.with_extra(empty), [])  # no verdict for a hook to judge

    def end_of_run(self) -> None:
        ctx = self._ctx
        ages = sorted(self._ages)
        notes = ctx.recorder.notes
        notes["budget"] = {"limit": self.limit, "checked": self.checked, "carried": self.carried}
        notes["coverage_age"] = {
            "unit": "runs",
            "p50": nearest_rank(ages, 50),
            "p95": nearest_rank(ages, 95),
            "max": nearest_rank(ages, 100),  # (the 100th percentile: the last, or None)
            "unchecked": self._unchecked,
        }
        if self._unchecked:
            ctx.recorder.finding(
                finding(
                    "budget-unchecked",
                    f"{self._unchecked:,} listed URLs have never been checked on this state: "
                    "the report holds no verdict for them yet; later runs check them first",
                )
            )


def _failed(prior: Prior | None) -> bool:
    """Did the URL's last check give an error or warning?"""
    return prior is not None and any(f.get("severity") in _FAILED for f in prior.findings)
