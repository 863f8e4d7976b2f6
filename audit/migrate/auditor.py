"""Pre-launch migration checks: `sitemap-audit migrate OLD NEW [--map F] [--new-sitemap U]`.

For every URL of OLD (a sitemap, a site, a local sitemap or a text file of URLs) it
requests the old path and query on the NEW origin and judges where it lands. The
best outcome is one permanent redirect (301/308) to a 200 that is the expected new
URL (the map's, or without a map any page of the new origin); a direct 200 at the
same path is also good. Everything else is a `migrate-*` finding (RULES.md style,
codes in audit/core/codes.py) and every old URL gets exactly one outcome, counted in the
summary's `migration` block with percentages.

It reuses the crawl machinery, not a copy of it: OLD is expanded by a pass of the
pipeline (audit.pipeline.runner.run_pass: streaming, validation, the bounded frontier,
the workers, progress), given this module's `MigrationCheck` as its per-URL check, which
sees the run through its `RunContext`; requests go through the
run's one `HttpClient` and `RobotsCache`; records go through the `Recorder` to the
report writers. With `--new-sitemap`, a first pass expands the new site's sitemaps
into a fingerprint set (audit.rules.validator.SeenUrls, 8 bytes a URL) and checks each
listed URL for redirects, before the old URLs are judged against it.

`judge()` (audit.migrate.outcomes) is pure: a FetchResult in, one outcome and its
findings out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from audit.checks.response import url_record
from audit.checks.verdict import Listing, judge_url
from audit.core.codes import CODES
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.core.evidence import Evidence
from audit.core.records import STATUS_2XX, Entry, FetchResult, Finding, UrlResult, finding
from audit.features.intent import IntentRun
from audit.http import HttpClient
from audit.http.rewrite import canonical_origin
from audit.http.robots import RobotsCache
from audit.migrate.outcomes import (
    OUTCOMES,
    RANK,
    Verdict,
    chain_text,
    judge,
    new_url_for,
    path_query,
    same_target,
)
from audit.migrate.redirect_map import NO_MAP, RedirectMap
from audit.pipeline.context import RunContext, UrlJob
from audit.pipeline.hooks import Hook
from audit.pipeline.progress import NO_PROGRESS, Progress
from audit.pipeline.recorder import Recorder
from audit.pipeline.runner import run_pass
from audit.pipeline.targets import classify_target
from audit.rules.intent import IntentPlan, Match, Served
from audit.rules.intent import judge as judge_intent
from audit.rules.validator import SeenUrls

__all__ = [
    "OUTCOMES",
    "MigrationCheck",
    "MigrationRecorder",
    "MigrationStats",
    "NewSitemapCheck",
    "NewSitemapListing",
    "Verdict",
    "finish",
    "judge",
    "new_url_for",
    "run_migrate",
    "same_target",
]

# Mass redirects to the home page: more than HOMEPAGE_MASS_COUNT URLs, or more than
# HOMEPAGE_MASS_SHARE of the old URLs (two at least), get one summary finding as well.
HOMEPAGE_MASS_COUNT = 5
HOMEPAGE_MASS_SHARE = 0.10
_EXAMPLES = 3
# the outcome of an old URL whose --intent row (keep, gone) its answer satisfies
_ROW_OUTCOMES = {"keep": "ok", "gone": "gone"}
_MAX_LISTED_ORIGINS = 8

# Findings of the OLD run that matter to a migration (every migrate-* code of the registry,
# and these); the validation of the old sitemap itself (lastmod, duplicates, extensions
# ...) is `validate`'s job and is not repeated.
_KEPT_CODES = frozenset(
    {
        *(code for code in CODES if code.startswith("migrate-")),
        "sitemap-not-found",
        "sitemap-http-error",
        "sitemap-is-html",
        "sitemap-xml-malformed",
        "sitemap-gzip-invalid",
        "sitemap-root-invalid",
        "sitemap-encoding",
        "sitemap-empty",
        "text-sitemap-invalid-line",
        "loc-missing",
        "loc-relative",
        "loc-invalid",
        "loc-too-long",
        "robots-unreachable",
        "intent-violated",
    }
)


# --- the run ------------------------------------------------------------------


@dataclass(slots=True)
class MigrationStats:
    """Counters of a migration run (never the URLs themselves)."""

    new_origin: str
    map_name: str | None = None
    map_entries: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    ok_direct: int = 0  # a 200 at the same path, no redirect
    unmapped: int = 0  # old URLs no map row or rule named (judged without a map)
    not_in_new_sitemap: int = 0
    new_sitemap: str | None = None
    new_sitemap_urls: int = 0
    new_sitemap_redirects: int = 0
    home_examples: list[str] = field(default_factory=list)
    intent_rows: int = 0  # old URLs an --intent row applies to (not in the mass home check)
    skipped_findings: int = 0  # findings about the old sitemap itself, left to `validate`
    credentials_asked: int = 0  # old URLs the new site answered 401
    challenge: str | None = None  # its first WWW-Authenticate, e.g. Basic realm="staging"

    def asked_credentials(self, challenge: str | None) -> None:
        """The new site answered 401: counted, and its challenge kept once."""
        self.credentials_asked += 1
        if self.challenge is None and challenge:
            self.challenge = challenge.strip()[:200]

    @property
    def total(self) -> int:
        return sum(self.outcomes.values())

    def add(self, verdict: Verdict, old_url: str, *, direct: bool, intent: bool = False) -> None:
        self.outcomes[verdict.outcome] += 1
        self.intent_rows += intent
        self.ok_direct += verdict.outcome == "ok" and direct
        if verdict.outcome == "to-homepage" and len(self.home_examples) < _EXAMPLES:
            self.home_examples.append(old_url)

    def add_replayed(self, record: dict[str, Any]) -> None:
        """A url or finding record replayed from --state (judged before a resumed run's
        crash): counted as its first delivery was."""
        self.not_in_new_sitemap += record.get("code") == "migrate-not-in-new-sitemap"
        outcome = record.get("outcome")
        if outcome in RANK:  # (only a url record of this run has an outcome)
            self.add(
                Verdict(str(outcome)),
                str(record.get("url")),
                direct=not record.get("redirects"),
                intent="intent" in record,
            )
            self.unmapped += self.map_name is not None and "expected" not in record

    def mass_homepage(self) -> bool:
        n = self.outcomes["to-homepage"]
        total = self.total - self.intent_rows  # URLs with a row follow their row
        return n > HOMEPAGE_MASS_COUNT or (n >= 2 and total > 0 and n / total > HOMEPAGE_MASS_SHARE)

    def to_json(self) -> dict[str, Any]:
        total = self.total

        def pct(n: int) -> float:
            return round(100.0 * n / total, 1) if total else 0.0

        out: dict[str, Any] = {
            "new_origin": self.new_origin,
            "old_urls": total,
            "outcomes": {
                o: {"count": self.outcomes[o], "percent": pct(self.outcomes[o])}
                for o in reversed(OUTCOMES)
            },
            "ok_direct": self.ok_direct,
            "ok_redirect": self.outcomes["ok"] - self.ok_direct,
        }
        if self.map_name is not None:
            out["map"] = {
                "file": self.map_name,
                "entries": self.map_entries,
                "unmapped": self.unmapped,
            }
        if self.new_sitemap is not None:
            out["new_sitemap"] = {
                "url": self.new_sitemap,
                "urls": self.new_sitemap_urls,
                "redirecting": self.new_sitemap_redirects,
                "old_urls_missing": self.not_in_new_sitemap,
            }
        if self.skipped_findings:
            out["old_sitemap_findings_skipped"] = self.skipped_findings
        if self.credentials_asked:
            out["credentials"] = {"asked": self.credentials_asked, "challenge": self.challenge}
        return out


class MigrationRecorder(Recorder):
    """A Recorder that keeps the findings a migration is about: the migrate-* codes and
    the problems that stop old URLs from being read; the old sitemap's own validation
    findings are counted, not reported (run `validate` for those)."""

    def __init__(self, sinks: list[Any], stats: MigrationStats) -> None:
        super().__init__(sinks)
        self.stats = stats

    def finding(self, f: Finding) -> None:
        if f.code in _KEPT_CODES:
            super().finding(f)
        else:
            self.stats.skipped_findings += 1

    def replay(self, record: dict[str, Any]) -> None:
        """A record replayed by --state counts in the migration block too."""
        super().replay(record)
        self.stats.add_replayed(record)


class NewSitemapListing(Hook):
    """First pass of `--new-sitemap`, at the entry hook: every listed URL goes into
    `listed` (a fingerprint set), to judge the old URLs' landings against."""

    name = "new-sitemap"

    def __init__(self, stats: MigrationStats) -> None:
        self.stats = stats
        self.listed = SeenUrls()
        # origins the new sitemap lists URLs on (a few; a dict: each once, in order)
        self.origins: dict[str, None] = {}

    def entry(self, source: str, entry: Entry) -> None:
        loc = (entry.loc or "").strip()
        if entry.kind != "url" or not loc:
            return
        self.stats.new_sitemap_urls += not self.listed.add(loc)  # add: True when listed before
        origin = canonical_origin(loc)  # a new origin the sitemap lists URLs on (a few)
        if origin and len(self.origins) < _MAX_LISTED_ORIGINS:
            self.origins[origin] = None

    def has(self, url: str) -> bool:
        """Is `url` listed, on its own origin or (staging) at the same path on a listed one?"""
        if url in self.listed:
            return True
        own = canonical_origin(url)
        rest = path_query(url)
        return any(o != own and (o + rest) in self.listed for o in self.origins)


class NewSitemapCheck:
    """The first pass's URL check: each new URL requested once; a redirect is
    `migrate-new-sitemap-redirect`."""

    def __init__(self, ctx: RunContext, stats: MigrationStats) -> None:
        self.ctx = ctx
        self.stats = stats

    async def __call__(self, job: UrlJob) -> None:
        result = await self.ctx.client.fetch(job.url)
        if result.redirects and result.status is not None:
            self.stats.new_sitemap_redirects += 1
            self.ctx.recorder.finding(
                finding(
                    "migrate-new-sitemap-redirect",
                    f"the new sitemap lists a URL that redirects: {chain_text(result)}; "
                    f"list the final URL {result.final_url} instead",
                    sitemap=job.sitemap,
                    line=job.line,
                    url=job.url,
                )
            )


class MigrationCheck:
    """The pipeline's URL check over OLD: each listed URL judged on the new site."""

    def __init__(
        self,
        ctx: RunContext,
        stats: MigrationStats,
        *,
        new_origin: str,
        new_sitemap: NewSitemapListing,
        redirect_map: RedirectMap = NO_MAP,
        intent: IntentRun | None = None,
    ) -> None:
        """`new_sitemap`: the --new-sitemap pass's listing (empty without one: it lists no
        URL, so no old URL is judged against it); `redirect_map`: --map's (NO_MAP without
        one: it names no URL, and no old URL counts as unmapped)."""
        self.ctx = ctx
        self.intent = intent
        self.agent_token = ctx.agent_token
        self.stats = stats
        self.new_origin = new_origin
        self.redirect_map = redirect_map
        self.new_sitemap = new_sitemap

    async def __call__(self, job: UrlJob) -> None:
        if self.ctx.before_request(job):  # --state: judged before a crash, judged again
            return
        checked = new_url_for(job.url, self.new_origin)
        extra: dict[str, Any] = {"checked_url": checked}
        match = self.intent.plan.match(job.url) if self.intent is not None else None
        expected = self._expected_of(job.url, match, extra)
        policy = await self.ctx.robots_for(checked)
        if not policy.allowed(checked):
            self._blocked(job, checked, extra)
            return
        result = await self._answer(job, checked)
        if result.status == 401 and not result.redirects:
            self.stats.asked_credentials(result.header("www-authenticate"))
        # whether robots.txt allows where a 2xx landed after redirects (True otherwise; the
        # client follows a redirect only to an http(s) URL, so the landing has an origin)
        landing_allowed = True
        if result.status in STATUS_2XX and result.redirects:
            landing = await self.ctx.robots_for(result.final_url)
            landing_allowed = landing.allowed(result.final_url)
        verdict = judge(
            job.url,
            result,
            new_origin=self.new_origin,
            expected=expected,
            agent_token=self.agent_token,
            landing_allowed=landing_allowed,
        )
        record = url_record(result, sitemap=job.sitemap, line=job.line, lastmod=job.lastmod)
        if match is not None:
            verdict = self._intent(match, result, verdict, extra)
        extra["outcome"] = verdict.outcome
        record = replace(record, url=job.url).with_fields(extra)  # (extra: this call's own)
        found = [*self._verdict(job, verdict, direct=not result.redirects, intent=bool(match))]
        found += self._check_listed(job, verdict)
        # through the run's hooks: --state stores the record and findings with the URL
        self.ctx.deliver_checked(job, record, found, result)

    def _expected_of(self, old_url: str, match: Match | None, extra: dict[str, Any]) -> str | None:
        """The old URL's expected new URL: its intent row's target, which beats the map's."""
        if match is not None and match.expected is not None:
            extra["expected"] = match.expected
            return match.expected
        # else the redirect map's target (noted in `extra`), or None
        hit = self.redirect_map.expected(old_url)
        if hit is None:
            self.stats.unmapped += self.redirect_map.name is not None  # a --map names none
            return None
        extra["expected"], extra["map_line"] = hit
        return hit[0]

    def _intent(
        self,
        match: Match,
        result: FetchResult,
        verdict: Verdict,
        extra: dict[str, Any],
    ) -> Verdict:
        """--intent: the row judged on the new site's answer; its verdict replaces the
        migrate-* one when broken (intent-violated) or `gone`, and a kept URL is `ok`."""
        assert self.intent is not None
        judged = judge_url(
            result,
            Listing(result.url),
            self.ctx.config,
            agent_token=self.agent_token,
            now=self.ctx.now,
        )
        marks = judged.index_fields()
        served = Served(
            result.status,
            result.redirects,
            result.final_url,
            marks["indexable"],
            marks["indexability"],
            result.error,
        )
        new_origin = self.new_origin
        said = judge_intent(
            match,
            served,
            file=self.intent.plan.file,
            same=lambda final, want: same_target(final, want, new_origin),
        )
        extra["intent"] = said.to_json()  # counted as the record goes out
        if not said.ok:
            return Verdict("intent-violated", (("intent-violated", said.message),))
        if said.action == "redirect":  # a move the row allows: the migrate-* verdict stands
            return verdict
        # a kept or gone URL as its row says: `ok` or `gone`, no migrate-* finding (a kept
        # URL lands where it was asked for; a gone one, a 404 or 410, lands nowhere)
        return replace(verdict, outcome=_ROW_OUTCOMES[said.action], findings=())

    async def _answer(self, job: UrlJob, checked: str) -> FetchResult:
        """The new site's answer: requested, or (--state, a resumed run) the answer this
        run got before its crash, judged again as a fresh one."""
        ctx = self.ctx
        stored = ctx.stored_answer(job)
        if stored is not None:
            return stored.result
        result = await ctx.client.fetch(checked)
        if ctx.keeps_evidence:
            job.evidence = Evidence(result)
        return result

    def _blocked(self, job: UrlJob, checked: str, extra: dict[str, Any]) -> None:
        """The new URL is disallowed by the new site's robots.txt: not requested."""
        verdict = Verdict(
            "robots-blocked",
            (
                (
                    "migrate-robots-blocked",
                    f"robots.txt of the new site disallows {checked} for "
                    f"{self.agent_token}: search engines cannot follow the move; allow it",
                ),
            ),
        )
        extra["outcome"] = verdict.outcome
        record = UrlResult.unrequested(
            job.url, job.sitemap, job.line, job.lastmod, "blocked", extra=extra
        )
        self.ctx.deliver_checked(job, record, self._verdict(job, verdict, direct=False), None)

    def _check_listed(self, job: UrlJob, verdict: Verdict) -> list[Finding]:
        """migrate-not-in-new-sitemap when the old URL lands on a page the new sitemap
        does not list."""
        if (
            self.stats.new_sitemap_urls
            and verdict.landed is not None
            and verdict.outcome not in ("lost", "not-found", "robots-blocked", "gone")
            and not self.new_sitemap.has(verdict.landed)
        ):
            self.stats.not_in_new_sitemap += 1
            message = (
                f"the old URL lands on {verdict.landed}, which the new sitemap does not list; "
                "list it, or search engines find the new page late"
            )
            return [_url_finding(job, "migrate-not-in-new-sitemap", message)]
        return []

    def _verdict(
        self, job: UrlJob, verdict: Verdict, *, direct: bool, intent: bool = False
    ) -> list[Finding]:
        """The verdict counted; its findings about the old URL."""
        self.stats.add(verdict, job.url, direct=direct, intent=intent)
        return [_url_finding(job, code, message) for code, message in verdict.findings]


def _url_finding(job: UrlJob, code: str, message: str) -> Finding:
    return finding(code, message, sitemap=job.sitemap, line=job.line, url=job.url)


def finish(stats: MigrationStats, recorder: Recorder, intent: IntentRun | None = None) -> None:
    """The mass home-page finding (when it applies), the summary's migration block and,
    with --intent, its intent block."""
    n = stats.outcomes["to-homepage"]
    if stats.mass_homepage():
        total = stats.total - stats.intent_rows
        share = 100.0 * n / total
        examples = ", ".join(stats.home_examples)
        which = " without an --intent row" if stats.intent_rows else ""
        recorder.finding(
            finding(
                "migrate-to-homepage",
                f"{n} of {total} old URLs{which} ({share:.1f}%) redirect to the new home page "
                f"(e.g. {examples}): a mass redirect to the home page is a soft 404 for each; "
                "redirect every old URL to its closest new page",
                url=stats.new_origin + "/",
            )
        )
    recorder.notes["migration"] = stats.to_json()
    if intent is not None:
        recorder.notes["intent"] = intent.to_json()


async def run_migrate(
    old: str,
    new_origin: str,
    config: CrawlConfig,
    recorder: MigrationRecorder,
    *,
    redirect_map: RedirectMap = NO_MAP,
    new_sitemap: str | None = None,
    progress: Progress = NO_PROGRESS,
    outcome: dict[str, Any],
    hooks: Sequence[Hook] = (),
    intent: IntentPlan | None = None,
) -> MigrationStats:
    """Run one migration check; records go to `recorder` (whose stats are filled in).

    A fatal problem (OLD cannot be read at all) goes to `outcome['fatal']` as one line (the
    caller's dict: MigrateRun.outcome).
    `hooks` plug into the pass over OLD (--state's, which the CLI gives). `intent`
    (--intent): each old URL a row applies to is judged under it (path rows on any origin).
    """
    recorder.redact(config.secrets())
    stats = recorder.stats
    stats.map_name, stats.map_entries = redirect_map.name, len(redirect_map)  # (NO_MAP: None, 0)
    old_kind, old_value = classify_target(old)
    intent_run: IntentRun | None = None
    if intent is not None:  # --intent in migrate: path rows apply to old URLs of any origin
        intent_run = IntentRun(intent.scoped(None))
        recorder.add_sink(intent_run.observe)
    about = "--new-sitemap: "  # what a TargetError is about: the new sitemap, then OLD
    try:
        async with HttpClient(config) as client:
            robots = RobotsCache(client, config.user_agent)
            listing = NewSitemapListing(stats)
            if new_sitemap:
                stats.new_sitemap = new_sitemap
                new_kind, new_value = classify_target(new_sitemap)  # (MigrateRun checked it)
                await run_pass(
                    new_kind,
                    new_value,
                    config,
                    recorder,
                    client=client,
                    robots=robots,
                    progress=progress,
                    hooks=[listing],
                    url_check=lambda ctx: NewSitemapCheck(ctx, stats),
                    summarise=False,  # the hosts record and notes come from the pass over OLD
                )
            about = ""

            def check(ctx: RunContext) -> MigrationCheck:
                return MigrationCheck(
                    ctx,
                    stats,
                    new_origin=new_origin,
                    redirect_map=redirect_map,
                    new_sitemap=listing,
                    intent=intent_run,
                )

            roots, state = await run_pass(
                old_kind,
                old_value,
                config,
                recorder,
                client=client,
                robots=robots,
                progress=progress,
                hooks=hooks,
                url_check=check,
            )
            if not roots:  # the pass over OLD checked nothing
                outcome["fatal"] = f"{old}: no sitemap found, so no old URL to check"
            elif state.roots_unreachable == roots:  # (a file's one root is read from disk)
                outcome["fatal"] = (
                    f"{old}: nothing could be checked: the sitemap could not be reached"
                )
    except TargetError as exc:
        outcome["fatal"] = f"{about}{exc}"
    finally:
        finish(stats, recorder, intent_run)
    return stats
