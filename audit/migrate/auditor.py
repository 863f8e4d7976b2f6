"""Pre-launch migration checks: `sitemap-audit migrate OLD NEW [--map F] [--new-sitemap U]`.

For every URL of OLD (a sitemap, a site, a local sitemap or a text file of URLs) it
requests the old path and query on the NEW origin and judges where it lands. The
best outcome is one permanent redirect (301/308) to a 200 that is the expected new
URL (the map's, or without a map any page of the new origin); a direct 200 at the
same path is also good. Everything else is a `migrate-*` finding (RULES.md style,
codes in audit/core/codes.py) and every old URL gets exactly one outcome, counted in the
summary's `migration` block with percentages.

It reuses the crawl machinery, not a copy of it: OLD is expanded by the pipeline's
`Auditor` (streaming, validation, the bounded frontier, the workers, progress), given
this module's `MigrationCheck` as its per-URL check; requests go through the
run's one `HttpClient` and `RobotsCache`; records go through the `Recorder` to the
report writers. With `--new-sitemap`, a first pass expands the new site's sitemaps
into a fingerprint set (audit.rules.validator.SeenUrls, 8 bytes a URL) and checks each
listed URL for redirects, before the old URLs are judged against it.

`judge()` is pure: a FetchResult in, one outcome and its findings out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urldefrag, urlsplit

from audit.checks.response import noindex_directive, url_record
from audit.checks.verdict import Listing, judge_url
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.core.evidence import Evidence
from audit.core.records import Entry, FetchResult, Finding, UrlResult, finding
from audit.http import HttpClient
from audit.http.rewrite import canonical_origin
from audit.http.robots import RobotsCache
from audit.migrate.redirect_map import RedirectMap
from audit.pipeline.auditor import Auditor, SitemapJob, UrlJob, classify_target
from audit.pipeline.hooks import Hook, overridden
from audit.pipeline.intent import IntentRun
from audit.pipeline.progress import NoProgress, Progress
from audit.pipeline.recorder import Recorder
from audit.pipeline.runner import root_jobs
from audit.rules.intent import IntentPlan, Match, Served
from audit.rules.intent import judge as judge_intent
from audit.rules.urls import normalize_url
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

# Every old URL gets exactly one of these; when several apply, the first listed wins.
OUTCOMES: tuple[str, ...] = (
    "intent-violated",  # --intent: the row's verdict replaces the migrate-* finding
    "robots-blocked",
    "lost",
    "not-found",
    "to-homepage",
    "wrong-target",
    "noindex",
    "temporary-redirect",
    "chain",
    "gone",  # --intent: a satisfied gone row
    "ok",
)
_RANK = {o: i for i, o in enumerate(OUTCOMES)}
_PERMANENT = frozenset({301, 308})
# Mass redirects to the home page: more than HOMEPAGE_MASS_COUNT URLs, or more than
# HOMEPAGE_MASS_SHARE of the old URLs (two at least), get one summary finding as well.
HOMEPAGE_MASS_COUNT = 5
HOMEPAGE_MASS_SHARE = 0.10
_EXAMPLES = 3
_MAX_LISTED_ORIGINS = 8

# Findings of the OLD run that matter to a migration; the validation of the old sitemap
# itself (lastmod, duplicates, extensions ...) is `validate`'s job and is not repeated.
_KEPT_CODES = frozenset(
    {
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


def _path_query(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _norm(url: str) -> str:
    return normalize_url(urldefrag(url.strip())[0])


def _is_home(url: str) -> bool:
    return _path_query(url) == "/"


def new_url_for(old_url: str, new_origin: str) -> str:
    """The URL the new site is asked for: the old path and query on the new origin."""
    return new_origin + _path_query(old_url)


def _chain_text(result: FetchResult) -> str:
    parts = [f"{h.url} ({h.status})" for h in result.redirects]
    status = result.status if result.status is not None else "no answer"
    last = f"{result.final_url} ({status})"
    if not parts or parts[-1] != last:
        parts.append(last)
    return " -> ".join(parts)


def same_target(final: str, expected: str, new_origin: str) -> bool:
    """Does a landing URL match the expected one? A map written for the production origin
    also works against staging: an expected URL on another origin than NEW matches the
    same path and query on NEW."""
    if _norm(final) == _norm(expected):
        return True
    if canonical_origin(expected) != new_origin and canonical_origin(final) == new_origin:
        return _path_query(_norm(final)) == _path_query(_norm(expected))
    return False


@dataclass(frozen=True, slots=True)
class Verdict:
    """One old URL's outcome (one of OUTCOMES) and its findings as (code, message)."""

    outcome: str
    findings: tuple[tuple[str, str], ...] = ()
    landed: str | None = None  # the 2xx URL it ends on, if any


@dataclass(frozen=True, slots=True)
class _Case:
    """What every message about one old URL's answer says (internal to judge)."""

    old_url: str
    result: FetchResult
    new_origin: str
    expected: str | None
    agent_token: str
    chain: str

    @property
    def fix(self) -> str:
        return (
            f"redirect it with one 301 to {self.expected}"
            if self.expected
            else "redirect it with one 301"
        )

    @property
    def fix_page(self) -> str:
        return self.fix if self.expected else f"{self.fix} to its new page"


def judge(
    old_url: str,
    result: FetchResult,
    *,
    new_origin: str,
    expected: str | None = None,
    agent_token: str = "*",
    landing_allowed: bool = True,
) -> Verdict:
    """Judge the new site's answer for one old URL (`result` is the fetch of
    new_url_for(old_url)). Pure."""
    case = _Case(old_url, result, new_origin, expected, agent_token, _chain_text(result))
    failed = _failed_answer(case)
    if failed is not None:
        return failed
    final = result.final_url
    matches = expected is not None and same_target(final, expected, new_origin)
    if canonical_origin(final) != new_origin and not matches:
        want = f" (expected {expected})" if expected else ""
        message = (
            f"on the new site {case.chain}: it leaves the new origin {new_origin}{want}; "
            f"{case.fix_page} on {new_origin}"
        )
        return Verdict("lost", (("migrate-lost", message),))
    if not landing_allowed:
        message = (
            f"on the new site {case.chain}: robots.txt disallows {final} for "
            f"{agent_token}; allow it, or search engines cannot follow the move"
        )
        return Verdict("robots-blocked", (("migrate-robots-blocked", message),), final)
    found = [*_landing(case, matches), *_noindex(case), *_hops(case)]
    return Verdict(_worst_outcome(found), tuple(found), final)


def _failed_answer(case: _Case) -> Verdict | None:
    """No usable 2xx answer: lost or not found; None when the answer is a 2xx."""
    result = case.result
    status = result.status
    if status is None or result.error_kind is not None:
        return _no_answer(case)
    if status in (404, 410):
        return _not_found(case, status)
    if status == 401:  # the summary says once how to give credentials (credentials_note)
        message = (
            f"on the new site {case.chain}: HTTP 401: the new site asks for credentials, so "
            "where this URL lands was not seen (give them: see the migration summary)"
        )
        return Verdict("lost", (("migrate-lost", message),))
    if not 200 <= status < 300:
        message = (
            f"on the new site {case.chain}: HTTP {status}; {case.fix_page}, which must answer 200"
        )
        return Verdict("lost", (("migrate-lost", message),))
    return None


def _no_answer(case: _Case) -> Verdict:
    """The new site gave no answer (or an error class): lost."""
    result = case.result
    why = result.error or result.error_kind or "no answer"
    message = f"on the new site {case.chain}: {why}; {case.fix_page}, which must answer 200"
    return Verdict("lost", (("migrate-lost", message),))


def _not_found(case: _Case, status: int) -> Verdict:
    """The new site answers 404 or 410, directly or at the end of its redirects."""
    result = case.result
    where = (
        f"{result.url} answers {status}"
        if not result.redirects
        else f"the redirects end in {case.chain}"
    )
    message = (
        f"on the new site {where}; {case.fix_page}, or it loses its links and rankings at launch"
    )
    return Verdict("not-found", (("migrate-not-found", message),))


def _landing(case: _Case, matches: bool) -> list[tuple[str, str]]:
    """Where the 2xx landed against where it should: the home page, or another page."""
    final, expected, chain = case.result.final_url, case.expected, case.chain
    to_home = _is_home(final) and not _is_home(case.old_url)
    if expected is None:
        return _unmapped_landing(chain) if to_home else []
    if matches:
        return []
    if to_home and not _is_home(expected):
        message = (
            f"on the new site {chain}: it lands on the home page, not on {expected}; "
            "search engines treat it as a soft 404"
        )
        return [("migrate-to-homepage", message)]
    what = "redirects to" if case.result.redirects else "answers 200 itself at"
    message = f"on the new site {chain}: it {what} {final}, not the expected {expected}; {case.fix}"
    return [("migrate-wrong-target", message)]


def _unmapped_landing(chain: str) -> list[tuple[str, str]]:
    """An old URL without an expected target that lands on the home page."""
    message = (
        f"on the new site {chain}: it redirects to the home page; search engines "
        "treat it as a soft 404: redirect it to its closest new page (or map it)"
    )
    return [("migrate-to-homepage", message)]


def _noindex(case: _Case) -> list[tuple[str, str]]:
    tags = case.result.header_all("x-robots-tag")
    hit = noindex_directive(tags, case.agent_token) if tags else None
    if hit is None:
        return []
    message = (
        f"on the new site {case.chain}: X-Robots-Tag {hit!r} says noindex for "
        f"{case.agent_token}; the page will drop out of search at launch"
    )
    return [("migrate-noindex", message)]


def _hops(case: _Case) -> list[tuple[str, str]]:
    hops, chain = case.result.redirects, case.chain
    found: list[tuple[str, str]] = []
    temporary = [h for h in hops if h.status not in _PERMANENT]
    if temporary:
        codes = ", ".join(str(h.status) for h in temporary)
        found.append(
            (
                "migrate-temporary-redirect",
                f"on the new site {chain}: temporary redirect ({codes}); a move must be "
                "permanent (301 or 308) for search engines to transfer the old URL's signals",
            )
        )
    if len(hops) > 1:
        found.append(
            (
                "migrate-chain",
                f"on the new site {len(hops)} redirect hops: {chain}; redirect in one hop "
                "to the final URL",
            )
        )
    return found


def _worst_outcome(found: list[tuple[str, str]]) -> str:
    outcome = "ok"
    for code, _ in found:
        candidate = code.removeprefix("migrate-")
        if _RANK[candidate] < _RANK[outcome]:
            outcome = candidate
    return outcome


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
        if verdict.outcome == "ok" and direct:
            self.ok_direct += 1
        if verdict.outcome == "to-homepage" and len(self.home_examples) < _EXAMPLES:
            self.home_examples.append(old_url)

    def add_replayed(self, record: dict[str, Any]) -> None:
        """A url or finding record replayed from --state (judged before a resumed run's
        crash): counted as its first delivery was."""
        if record.get("type") == "url":
            self._add_replayed_url(record)
        elif record.get("code") == "migrate-not-in-new-sitemap":
            self.not_in_new_sitemap += 1

    def _add_replayed_url(self, record: dict[str, Any]) -> None:
        outcome = record.get("outcome")
        if outcome in _RANK:
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
        if f.code.startswith("migrate-") or f.code in _KEPT_CODES:
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

    def __init__(self, stats: MigrationStats) -> None:
        self.stats = stats
        self.listed = SeenUrls()
        self.origins: list[str] = []  # origins the new sitemap lists URLs on (a few)

    def entry(self, source: str, entry: Entry) -> None:
        loc = (entry.loc or "").strip()
        if entry.kind != "url" or not loc:
            return
        if not self.listed.add(loc):
            self.stats.new_sitemap_urls += 1
        self._note_origin(canonical_origin(loc))

    def _note_origin(self, origin: str | None) -> None:
        """Keep a new origin the sitemap lists URLs on (up to a few)."""
        if origin and origin not in self.origins and len(self.origins) < _MAX_LISTED_ORIGINS:
            self.origins.append(origin)

    def has(self, url: str) -> bool:
        """Is `url` listed, on its own origin or (staging) at the same path on a listed one?"""
        if url in self.listed:
            return True
        own = canonical_origin(url)
        rest = _path_query(url)
        return any(o != own and (o + rest) in self.listed for o in self.origins)


class NewSitemapCheck:
    """The first pass's URL check: each new URL requested once; a redirect is
    `migrate-new-sitemap-redirect`."""

    def __init__(self, auditor: Auditor, stats: MigrationStats) -> None:
        self.auditor = auditor
        self.stats = stats

    async def __call__(self, job: UrlJob) -> None:
        result = await self.auditor.client.fetch(job.url)
        if result.redirects and result.status is not None:
            self.stats.new_sitemap_redirects += 1
            self.auditor.rec.finding(
                finding(
                    "migrate-new-sitemap-redirect",
                    f"the new sitemap lists a URL that redirects: {_chain_text(result)}; "
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
        auditor: Auditor,
        stats: MigrationStats,
        *,
        new_origin: str,
        redirect_map: RedirectMap | None = None,
        new_sitemap: NewSitemapListing | None = None,
        intent: IntentRun | None = None,
    ) -> None:
        self.auditor = auditor
        self.intent = intent
        self.rec = auditor.rec
        self.agent_token = auditor.agent_token
        self.stats = stats
        self.new_origin = new_origin
        self.redirect_map = redirect_map
        self.new_sitemap = new_sitemap
        # --state: the hooks look the URL up before it is judged (a resumed run's answers
        # are then judged again from the state, not requested)
        self._before = [h.before_request for h in auditor.hooks if overridden(h, "before_request")]

    async def __call__(self, job: UrlJob) -> None:
        if self._replayed(job):
            return
        checked = new_url_for(job.url, self.new_origin)
        extra: dict[str, Any] = {"checked_url": checked}
        match = self.intent.plan.match(job.url) if self.intent is not None else None
        expected = self._expected_of(job.url, match, extra)
        policy = await self.auditor.robots_for(checked)
        if not policy.allowed(checked):
            self._blocked(job, checked, extra)
            return
        result = await self._answer(job, checked)
        if result.status == 401 and not result.redirects:
            self.stats.asked_credentials(result.header("www-authenticate"))
        verdict = judge(
            job.url,
            result,
            new_origin=self.new_origin,
            expected=expected,
            agent_token=self.agent_token,
            landing_allowed=await self._landing_allowed(result),
        )
        record = url_record(result, sitemap=job.sitemap, line=job.line, lastmod=job.lastmod)
        if match is not None:
            verdict = self._intent(match, result, verdict, extra)
        extra["outcome"] = verdict.outcome
        record = replace(record, url=job.url, extra={**(record.extra or {}), **extra})
        found = [*self._verdict(job, verdict, direct=not result.redirects, intent=bool(match))]
        found += self._check_listed(job, verdict)
        # through the auditor's hooks: --state stores the record and findings with the URL
        self.auditor.deliver_checked(job, record, found, result)

    def _expected_of(self, old_url: str, match: Match | None, extra: dict[str, Any]) -> str | None:
        """The old URL's expected new URL: its intent row's target, which beats the map's."""
        if match is None or match.expected is None:
            return self._expected(old_url, extra)
        extra["expected"] = match.expected
        return match.expected

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
            self.auditor.config,
            agent_token=self.agent_token,
            now=self.auditor.now,
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
        if said.action == "gone":
            return Verdict("gone")
        if said.action == "keep":
            return Verdict("ok", (), verdict.landed)
        return verdict

    async def _answer(self, job: UrlJob, checked: str) -> FetchResult:
        """The new site's answer: requested, or (--state, a resumed run) the answer this
        run got before its crash, judged again as a fresh one."""
        auditor = self.auditor
        stored = auditor.stored_answer(job)
        if stored is not None:
            return stored.result
        result = await auditor.client.fetch(checked)
        if auditor.keeps_evidence:
            job.evidence = Evidence(result)
        return result

    def _replayed(self, job: UrlJob) -> bool:
        """A hook delivered the URL's outcome itself (--state: judged before a crash)."""
        return any(before(job) for before in self._before)

    def _expected(self, old_url: str, extra: dict[str, Any]) -> str | None:
        """The redirect map's target of an old URL (noted in `extra`), or None."""
        if self.redirect_map is None:
            return None
        hit = self.redirect_map.expected(old_url)
        if hit is None:
            self.stats.unmapped += 1
            return None
        expected, map_line = hit
        extra["expected"] = expected
        extra["map_line"] = map_line
        return expected

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
        self.auditor.deliver_checked(job, record, self._verdict(job, verdict, direct=False), None)

    async def _landing_allowed(self, result: FetchResult) -> bool:
        """Whether robots.txt allows where a 2xx landed after redirects (True otherwise)."""
        if (
            result.status is not None
            and 200 <= result.status < 300
            and result.redirects
            and canonical_origin(result.final_url) is not None
        ):
            landing = await self.auditor.robots_for(result.final_url)
            return landing.allowed(result.final_url)
        return True

    def _check_listed(self, job: UrlJob, verdict: Verdict) -> list[Finding]:
        """migrate-not-in-new-sitemap when the old URL lands on a page the new sitemap
        does not list."""
        if (
            self.new_sitemap is not None
            and self.stats.new_sitemap_urls
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
    redirect_map: RedirectMap | None = None,
    new_sitemap: str | None = None,
    progress: Progress | None = None,
    outcome: dict[str, Any] | None = None,
    hooks: Sequence[Hook] = (),
    intent: IntentPlan | None = None,
) -> MigrationStats:
    """Run one migration check; records go to `recorder` (whose stats are filled in).

    A fatal problem (OLD cannot be read at all) goes to outcome['fatal'] as one line.
    `hooks` plug into the pass over OLD (--state's, which the CLI gives). `intent`
    (--intent): each old URL a row applies to is judged under it (path rows on any origin).
    """
    recorder.redact(config.secrets())
    stats = recorder.stats
    if redirect_map is not None:
        stats.map_name, stats.map_entries = redirect_map.name, len(redirect_map)
    progress = progress or NoProgress()
    outcome = outcome if outcome is not None else {}
    old_kind, old_value = classify_target(old)
    new_kind, new_value = classify_target(new_sitemap) if new_sitemap else ("", "")
    intent_run = _intent_run(intent)
    if intent_run is not None:
        recorder.add_sink(intent_run.observe)
    try:
        async with HttpClient(config) as client:
            robots = RobotsCache(client, config.user_agent)
            listing: NewSitemapListing | None = None
            if new_sitemap:
                stats.new_sitemap = new_sitemap
                listing = NewSitemapListing(stats)
                first = Auditor(
                    config,
                    recorder,
                    progress=progress,
                    hooks=[listing],
                    url_check=lambda a: NewSitemapCheck(a, stats),
                    summarise=False,  # the hosts record and notes come from the migration pass
                )
                first.attach_client(client, robots)
                try:
                    roots = await root_jobs(new_kind, new_value, first, recorder)
                except TargetError as exc:
                    outcome["fatal"] = f"--new-sitemap: {exc}"
                    return stats
                await _run_roots(first, client, robots, roots)

            def check(a: Auditor) -> MigrationCheck:
                return MigrationCheck(
                    a,
                    stats,
                    new_origin=new_origin,
                    redirect_map=redirect_map,
                    new_sitemap=listing,
                    intent=intent_run,
                )

            auditor = Auditor(config, recorder, progress=progress, hooks=hooks, url_check=check)
            auditor.attach_client(client, robots)
            try:
                roots = await root_jobs(old_kind, old_value, auditor, recorder)
            except TargetError as exc:
                outcome["fatal"] = str(exc)
                return stats
            await _run_roots(auditor, client, robots, roots)
            fatal = _old_pass_fatal(old, old_kind, roots, auditor)
            if fatal is not None:
                outcome["fatal"] = fatal
    finally:
        finish(stats, recorder, intent_run)
    return stats


def _intent_run(intent: IntentPlan | None) -> IntentRun | None:
    """--intent in migrate: path rows apply to old URLs of any origin."""
    return IntentRun(intent.scoped(None)) if intent is not None else None


async def _run_roots(
    auditor: Auditor, client: HttpClient, robots: RobotsCache, roots: list[SitemapJob]
) -> None:
    """Run a pass of the auditor over a target's root jobs, if it has any."""
    if roots:
        await auditor.run_with_client(client, robots, roots)


def _old_pass_fatal(
    old: str, old_kind: str, roots: list[SitemapJob], auditor: Auditor
) -> str | None:
    """Why the pass over OLD checked nothing, or None."""
    if not roots:
        return f"{old}: no sitemap found, so no old URL to check"
    if old_kind != "file" and auditor.state.roots_unreachable == len(roots):
        return f"{old}: nothing could be checked: the sitemap could not be reached"
    return None
