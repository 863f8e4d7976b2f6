"""The hook of `crawl --intent FILE` (contracts/nights.md section 3): what URLs must do.

`IntentHook` judges, under the intent file's rows (audit.rules.intent), the URLs a crawl
checks, on the answer each check got:

1. every listed URL a row matches, at the `judge` point (after indexability is known): the
   url record gains `"intent": {"action", "line", "ok"}` and a broken row adds one
   `intent-violated` finding (with the listing's sitemap and line) on top of the ordinary
   findings. A robots-blocked URL is not judged;
2. every *absolute exact* row's URL that no sitemap of the run lists (nor the ledger
   claims: a peer that is a `Claimer`), at `drain` (once every listed URL of every target
   was checked: the run's one pipeline drains once): requested once,
   robots.txt first, as a listed URL is checked (HEAD confirmed with GET, or GET with
   --page-checks; at its --rewrite origin), and given a url record with `"sitemap": null`
   and `"source": "intent"` and no finding but `intent-violated`. Such records are not
   counted as listed URLs.

`IntentRun` is the run's side: the plan and the counts per action (`summary.intent`),
shared with the ledger. `IntentRun.judge`
is the one call a caller with an answer of its own makes (the ledger's dropped URLs): the
verdict of the row that applies, or None. The counts are those of the report: every url
record that reaches the recorder with an `intent` object counts (`IntentRun.observe`, a
recorder sink), so a record replayed by --state (a resumed run) counts as it is written.

The Audit installs it (audit/api.py); its place in HOOK_ORDER is after the indexability
it reads and before the state (which stores what it added). Imports no aiohttp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from audit.core.records import FetchResult, Finding, UrlResult, finding
from audit.pipeline.context import UrlJob, work_through
from audit.pipeline.hooks import Hook
from audit.rules.intent import ACTIONS, IntentPlan, Row, Served, Verdict, judge

if TYPE_CHECKING:
    from audit.pipeline.context import RunContext

__all__ = ["Claimer", "IntentHook", "IntentRun", "intent_of", "violation"]

CODE = "intent-violated"


def violation(
    url: str, verdict: Verdict, *, sitemap: str | None = None, line: int | None = None
) -> Finding:
    """The `intent-violated` finding of a broken row (`verdict.ok` False)."""
    return finding(CODE, verdict.message, sitemap=sitemap, line=line, url=url)


@runtime_checkable
class Claimer(Protocol):
    """A feature of the run that judges some URLs itself (the ledger: its dropped and held
    URLs): an unlisted exact row's URL it claims is not requested here."""

    def claims(self, url: str) -> bool: ...


class IntentRun:
    """One run's intent: the plan (path rows scoped to the TARGETs' origins) and the
    counts per action."""

    def __init__(self, plan: IntentPlan) -> None:
        self.plan = plan
        # summary.intent, counted as url records go out (the summary takes it as it is)
        self.block: dict[str, Any] = {"file": plan.file, "rows": len(plan)}
        self.block.update({a: {"judged": 0, "violated": 0} for a in ACTIONS})

    def judge(self, url: str, answer: UrlResult) -> Verdict | None:
        """The verdict of the row that applies to `url` on its answer (its url record), or
        None when no row applies or robots.txt kept the URL from being requested (such a URL
        is not judged). The record that gets its `intent` object (`Verdict.to_json`) is
        counted when it is written."""
        if answer.robots != "allowed":
            return None  # not requested: nothing to judge
        match = self.plan.match(url)
        if match is None:
            return None
        return judge(match, Served.of(answer), file=self.plan.file)

    def observe(self, record: dict[str, Any]) -> None:
        """A recorder sink: a url record with an `intent` object counts in its action."""
        said = record.get("intent")
        if record.get("type") != "url" or not isinstance(said, dict):
            return
        counts = self.block.get(str(said.get("action")))
        if isinstance(counts, dict):  # an action's counts (the block's other values are not)
            counts["judged"] += 1
            counts["violated"] += said.get("ok") is False

    def to_json(self) -> dict[str, Any]:
        """`summary.intent` (the live block: the counts go on until the summary)."""
        return self.block


def intent_of(ctx: RunContext) -> IntentRun:
    """The run's --intent (for another hook of the same run, e.g. the ledger); without
    one, an intent of no rows, whose judge has no verdict for any URL."""
    hook = ctx.peer(IntentHook)
    return hook.run if hook is not None else IntentRun(IntentPlan(""))


class IntentHook(Hook):
    """`--intent` on a crawl (the run's one pipeline, every target); see the module."""

    name = "intent"
    ctx: RunContext  # set by attach, which the run calls before any other hook point

    def __init__(self, run: IntentRun) -> None:
        self.run = run

    def attach(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def judge(
        self, job: UrlJob, record: UrlResult, found: list[Finding], result: FetchResult | None
    ) -> tuple[UrlResult, list[Finding]] | None:
        verdict = self.run.judge(job.url, record)  # (None for a URL not requested)
        if verdict is None:
            return None
        record = record.with_fields({"intent": verdict.to_json()})
        if not verdict.ok:
            found = [*found, violation(job.url, verdict, sitemap=job.sitemap, line=job.line)]
        return record, found

    async def drain(self) -> None:
        ctx = self.ctx
        if ctx.state.max_urls_reached:
            return  # a run cut by --max-urls does not know what it would have listed
        claimers = [peer for peer in ctx.peers if isinstance(peer, Claimer)]
        todo = [
            r
            for r in self.run.plan.exact_urls()
            if r.url not in ctx.listed and not any(c.claims(r.url) for c in claimers)
        ]
        # the unlisted exact rows, requested by a few workers (politeness is per host)
        await work_through(todo, lambda row: self._request(ctx, row), ctx.config.concurrency)

    async def _request(self, ctx: RunContext, row: Row) -> None:
        """One unlisted exact row's URL, checked as a listed URL is (robots.txt first, at
        its --rewrite origin): its record, and the row's verdict when it was requested."""
        job = UrlJob(row.url, None, None, None)  # listed nowhere
        result, verdict = await ctx.check_unlisted(job)
        record = verdict.record.with_fields({"source": "intent", **verdict.index_fields()})
        out: list[Finding] = []
        # judged as a listed URL's answer is (one robots.txt keeps us from is not), with
        # no finding but the row's own
        judged = self.judge(job, record, out, result)
        if judged is not None:
            record, out = judged
        ctx.recorder.unlisted(record)
        ctx.recorder.findings(out)

    def end_of_run(self) -> None:
        self.ctx.recorder.notes["intent"] = self.run.to_json()
