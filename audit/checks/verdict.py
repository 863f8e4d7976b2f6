"""One URL, one verdict (STYLE.md lesson 21): `judge_url` turns an answer into a value.

A listed URL's final answer (a `FetchResult`: tonight's, or stored evidence that stands
for it) and, with `--page-checks`, the facts of its page's one parse are judged once, by
one function, into a `UrlVerdict`: the url record, the findings (the URL checks' merged
with the page checks'), and as values what later stages read instead of re-deriving it
or matching finding codes:

- `reason`: the first reason the main agent cannot index the URL (`Indexability`, in
  the order a crawler meets them), None when it is indexable;
- `noindex` (a header or head noindex for the agent), `canonical` (a canonical naming
  another URL), `shell` (an empty JavaScript shell);
- `lastmod`: `<lastmod>` against `Last-Modified` (`Lastmod`: equal, stale, ahead,
  dynamic, or not compared) and `lastmod_finding`, the finding that comparison gave;
  `deploy_held` is that finding when a host's deploy stamp may explain it, which is
  what the deploy-stamp hook applies its host-level judgement to;
- `alternates`: the head's valid hreflang hrefs, for the run's reciprocity store.

`judge_unrequested` is the verdict on a URL robots.txt kept from being requested.

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, Protocol

from audit.checks.agents import Indexability, index_reason
from audit.checks.freshness import Lastmod
from audit.checks.page import check_page
from audit.checks.pagefacts import PageFacts
from audit.checks.response import judge_answer, robots_blocked_finding, url_record
from audit.core.config import CrawlConfig
from audit.core.records import FetchResult, Finding, UrlResult

__all__ = [
    "INDEX_FIELDS",
    "Indexability",
    "Lastmod",
    "Listed",
    "Listing",
    "UrlVerdict",
    "judge_unrequested",
    "judge_url",
]


class Listed(Protocol):
    """Where a URL was listed: what its record and findings name (a pipeline's job)."""

    @property
    def url(self) -> str: ...
    @property
    def sitemap(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def lastmod(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Listing:
    """A `Listed` of its own: a URL no sitemap entry stands behind (a link, a row)."""

    url: str
    sitemap: str | None = None
    line: int | None = None
    lastmod: str | None = None


# the url record's `indexable` and `indexability` for each reason (None: indexable), one
# dict each for the run: a url record's extra is read, never changed in place
INDEX_FIELDS: dict[Indexability | None, dict[str, Any]] = {
    reason: {"indexable": reason is None, "indexability": None if reason is None else reason.value}
    for reason in (None, *Indexability)
}


# Built once per checked URL: not `frozen`, whose __init__ sets each of the nine fields
# through object.__setattr__ (a quarter of judge_url's cost). A value all the same, never
# assigned to after construction (dataclasses.replace makes a changed copy).
@dataclass(slots=True)
class UrlVerdict:
    """Everything one URL's answer says, computed once (see the module)."""

    record: UrlResult
    findings: list[Finding]  # in report order; read, never changed in place
    reason: Indexability | None = None
    noindex: bool = False
    canonical: bool = False
    shell: bool = False
    lastmod: Lastmod = Lastmod.NONE
    lastmod_finding: Finding | None = None
    alternates: tuple[str, ...] = ()

    @property
    def indexable(self) -> bool:
        return self.reason is None

    @property
    def deploy_held(self) -> Finding | None:
        """The finding a host's deploy stamp explains away (lastmod-stale, -ahead,
        last-modified-dynamic), or None: the lastmod comparison's finding, as
        `lastmod_findings` gives one only for a comparison a deploy stamp may explain."""
        return self.lastmod_finding

    def index_fields(self) -> dict[str, Any]:
        """The url record's `indexable` and `indexability` (text, as the report has it): the
        reason's dict of INDEX_FIELDS, shared (read it, never change it in place)."""
        return INDEX_FIELDS[self.reason]


def judge_url(
    result: FetchResult,
    listed: Listed,
    config: CrawlConfig,
    agent_token: str,
    now: datetime | None = None,
    facts: PageFacts | None = None,
    probe: str | None = None,
    extra: dict[str, Any] | None = None,
    checked_at: str | None = None,
) -> UrlVerdict:
    """The verdict on a requested URL's answer. `facts`: the page's (page checks, on a
    200 only), `probe`: its host's answer to a path that cannot exist (soft 404s);
    `extra` joins the record; `checked_at`: where a rewritten URL was checked, said in
    each finding."""
    sitemap, line, lastmod = listed.sitemap, listed.line, listed.lastmod
    record = url_record(result, sitemap, line, lastmod)  # positional: once per URL
    if extra is not None:
        record = record.with_extra({**(record.extra or {}), **extra})
    # positional: keyword arguments cost more, once per URL
    answered = judge_answer(result, lastmod, sitemap, line, config, agent_token, now)
    found = answered.findings
    noindex = answered.noindex is not None
    canonical = answered.canonical is not None
    shell = False
    alternates: tuple[str, ...] = ()
    if facts is not None:  # (a page's facts: only a 200 HTML answer has them)
        page = check_page(
            result,
            facts,
            answered,
            agent_token=agent_token,
            sitemap=sitemap,
            line=line,
            probe=probe,
        )
        found, shell, alternates = page.findings, page.shell, tuple(page.alternates)
        noindex, canonical = page.noindex, page.canonical  # the header's and the head's
        record = record.with_fields({"page": page.record})
    reason = index_reason(record, result, noindex, canonical)
    said = answered.lastmod_finding
    if checked_at is not None:
        found, said = _checked_at(found, said, checked_at)
    return UrlVerdict(
        record, found, reason, noindex, canonical, shell, answered.lastmod, said, alternates
    )


def judge_unrequested(
    listed: Listed,
    robots: Literal["blocked", "unreachable"],
    *,
    agent_token: str,
    extra: dict[str, Any] | None = None,
    checked_at: str | None = None,
) -> UrlVerdict:
    """The verdict on a URL robots.txt kept from being requested: blocked (a finding of
    its own), or held back by an unreachable robots.txt (the host's one finding)."""
    record = UrlResult.unrequested(
        listed.url, listed.sitemap, listed.line, listed.lastmod, robots, extra=extra
    )
    found: list[Finding] = []
    if robots == "blocked":
        found.append(robots_blocked_finding(listed.url, listed.sitemap, listed.line, agent_token))
    if checked_at is not None:
        found, _ = _checked_at(found, None, checked_at)
    return UrlVerdict(record, found, Indexability.ROBOTS)


def _checked_at(
    found: Sequence[Finding], said: Finding | None, checked: str
) -> tuple[list[Finding], Finding | None]:
    """A rewritten URL's findings say where it was checked; `said` stays the one of them
    it was."""
    out: list[Finding] = []
    kept = None
    for f in found:
        moved = replace(f, message=f"{f.message} (checked at {checked})")
        out.append(moved)
        if f is said:
            kept = moved
    return out, kept
