"""What one old URL's answer on the new site means for a migration: one outcome (the
worst that applies, OUTCOMES in order) and its `migrate-*` findings (RULES.md style,
codes in audit/core/codes.py). Pure: a FetchResult in, a `Verdict` out; the run that
requests the URLs and counts the outcomes is audit.migrate.auditor.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urldefrag

from audit.checks.response import chain_text, noindex_directive
from audit.core.records import FetchResult
from audit.http.rewrite import canonical_origin
from audit.migrate.redirect_map import path_query
from audit.rules.urls import normalize_url

__all__ = [
    "OUTCOMES",
    "RANK",
    "Verdict",
    "chain_text",
    "judge",
    "new_url_for",
    "path_query",
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
RANK = {o: i for i, o in enumerate(OUTCOMES)}
_PERMANENT = frozenset({301, 308})


def _norm(url: str) -> str:
    return normalize_url(urldefrag(url.strip())[0])


def _is_home(url: str) -> bool:
    return path_query(url) == "/"


def new_url_for(old_url: str, new_origin: str) -> str:
    """The URL the new site is asked for: the old path and query on the new origin."""
    return new_origin + path_query(old_url)


def same_target(final: str, expected: str, new_origin: str) -> bool:
    """Does a landing URL match the expected one? A map written for the production origin
    also works against staging: an expected URL on another origin than NEW matches the
    same path and query on NEW (the URLs cannot be equal then: their origins differ)."""
    if canonical_origin(expected) != new_origin and canonical_origin(final) == new_origin:
        return path_query(_norm(final)) == path_query(_norm(expected))
    return _norm(final) == _norm(expected)


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
        """What to do: one 301 to the expected URL, else to the old URL's new page."""
        return f"redirect it with one 301 to {self.expected or 'its new page'}"


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
    case = _Case(old_url, result, new_origin, expected, agent_token, chain_text(result))
    failed = _failed_answer(case)
    if failed is not None:
        return failed
    final = result.final_url
    matches = expected is not None and same_target(final, expected, new_origin)
    if canonical_origin(final) != new_origin and not matches:
        want = f" (expected {expected})" if expected else ""
        message = (
            f"on the new site {case.chain}: it leaves the new origin {new_origin}{want}; "
            f"{case.fix} on {new_origin}"
        )
        return Verdict("lost", (("migrate-lost", message),))
    if not landing_allowed:
        message = (
            f"on the new site {case.chain}: robots.txt disallows {final} for "
            f"{agent_token}; allow it, or search engines cannot follow the move"
        )
        return Verdict("robots-blocked", (("migrate-robots-blocked", message),), final)
    found = [*_landing(case, matches), *_noindex(case), *_hops(case)]
    # the worst outcome that applies (the first of OUTCOMES), `ok` when none does
    outcomes = (code.removeprefix("migrate-") for code, _ in found)
    return Verdict(min(outcomes, key=RANK.__getitem__, default="ok"), tuple(found), final)


def _failed_answer(case: _Case) -> Verdict | None:
    """No usable 2xx answer: lost (no answer, an error class, another status) or not found
    (404 or 410, directly or at the end of its redirects); None when the answer is a 2xx."""
    result = case.result
    status = result.status
    if status is None or result.error_kind is not None:
        # (an error_kind comes with its error)
        why = f"{result.error or 'no answer'}; {case.fix}, which must answer 200"
    elif status in (404, 410):
        where = (
            f"{result.url} answers {status}"
            if not result.redirects
            else f"the redirects end in {case.chain}"
        )
        message = (
            f"on the new site {where}; {case.fix}, or it loses its links and rankings at launch"
        )
        return Verdict("not-found", (("migrate-not-found", message),))
    elif 200 <= status < 300:
        return None
    else:
        why = _LOST_STATUS.get(status, f"HTTP {status}; {case.fix}, which must answer 200")
    return Verdict("lost", (("migrate-lost", f"on the new site {case.chain}: {why}"),))


# what a lost answer's status says instead of the fix (401: the summary says once how to give
# credentials, MigrationStats.asked_credentials)
_LOST_STATUS = {
    401: "HTTP 401: the new site asks for credentials, so where this URL lands was not seen "
    "(give them: see the migration summary)",
}


def _landing(case: _Case, matches: bool) -> list[tuple[str, str]]:
    """Where the 2xx landed against where it should: the home page, or another page."""
    final, expected, chain = case.result.final_url, case.expected, case.chain
    to_home = _is_home(final) and not _is_home(case.old_url)
    if expected is None:  # an old URL without an expected target
        if not to_home:
            return []
        message = (
            f"on the new site {chain}: it redirects to the home page; search engines "
            "treat it as a soft 404: redirect it to its closest new page (or map it)"
        )
        return [("migrate-to-homepage", message)]
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


def _noindex(case: _Case) -> list[tuple[str, str]]:
    hit = noindex_directive(case.result.header_all("x-robots-tag"), case.agent_token)
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
    temporary = [str(h.status) for h in hops if h.status not in _PERMANENT]
    if temporary:
        codes = ", ".join(temporary)
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
