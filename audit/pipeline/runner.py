"""Turns classified targets into root sitemap jobs and runs the pipeline.

Shared by crawl, validate and inspect: a site root goes through discovery,
a robots.txt URL through its Sitemap: lines, a sitemap URL or a local file
straight to expansion. Several targets run at once on one pipeline (run_targets):
one client, one robots.txt per host, one frontier, one url record per listed URL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.core.records import Finding, finding
from audit.http import HttpClient
from audit.http.robots import RobotsCache
from audit.pipeline.auditor import Auditor, RootFeed
from audit.pipeline.context import (
    EntryHook,
    Mode,
    RunContext,
    RunState,
    SitemapHook,
    SitemapJob,
)
from audit.pipeline.hooks import Hook, UrlCheck
from audit.pipeline.progress import Progress
from audit.pipeline.recorder import Recorder

if TYPE_CHECKING:
    from audit.pipeline.discover import Discovered

# the pipeline's mode of a run's mode: crawl and inspect as they are, any other a validate
_RUN_MODES: dict[str, Mode] = {"crawl": "crawl", "inspect": "inspect"}


async def run_targets(
    jobs: Sequence[tuple[str, str]],
    config: CrawlConfig,
    recorder: Recorder,
    mode: str,
    progress: Progress,
    outcomes: list[dict[str, Any]],
    *,
    on_entry: EntryHook | None = None,
    on_sitemap: SitemapHook | None = None,
    hooks: Sequence[Hook] = (),
    url_check: Callable[[RunContext], UrlCheck] | None = None,
) -> None:
    """Run one audit of every classified target at once (`outcomes`: one dict each). A
    fatal problem of a target (nothing of it could be audited) goes to its
    outcome['fatal'] as one line; everything else is a finding. `hooks` and `url_check`
    plug capabilities into the pipeline (the features of audit.features: the run's own
    built-in hooks and the caller's, ordered by hooks.HOOK_ORDER)."""
    recorder.redact(config.secrets())
    run_mode = _RUN_MODES.get(mode, "validate")
    auditor = Auditor(
        config,
        recorder,
        mode=run_mode,
        progress=progress,
        on_entry=on_entry,
        on_sitemap=on_sitemap,
        hooks=hooks,
        url_check=url_check,
    )
    async with HttpClient(config) as client:
        robots = RobotsCache(client, config.user_agent)
        auditor.attach_client(client, robots)
        feeds = [
            _feed(n, kind, value, auditor, recorder, outcomes[n])
            for n, (kind, value) in enumerate(jobs)
        ]
        await auditor.run_with_client(client, robots, [], feeds)
    state = auditor.state
    # A target without roots has its fatal already (_feed: a TargetError, or no sitemap
    # found), which setdefault keeps; one with roots has none yet.
    for n, (kind, value) in enumerate(jobs):
        outcome = outcomes[n]
        roots = outcome.pop("roots", 0)
        # (a file's roots are local: target_unreachable counts root sitemaps fetched)
        if state.target_unreachable.get(n, 0) == roots:
            outcome.setdefault(
                "fatal", f"{value}: nothing could be audited: the sitemap could not be reached"
            )
        elif kind in ("site", "robots") and not state.target_sitemaps.get(n):
            outcome.setdefault("fatal", f"{value}: no sitemap found: nothing was audited")


def _feed(
    n: int, kind: str, value: str, auditor: Auditor, recorder: Recorder, outcome: dict[str, Any]
) -> RootFeed:
    """The n-th target's root sitemaps, found on the run's client when the run asks."""

    async def roots() -> list[SitemapJob]:
        try:
            found = await root_jobs(kind, value, auditor, recorder)
        except TargetError as exc:
            outcome["fatal"] = str(exc)
            return []
        if not found and kind in ("site", "robots"):
            outcome["fatal"] = f"{value}: no sitemap found: nothing was audited"
        for job in found:
            job.target = n
        outcome["roots"] = len(found)
        auditor.chain.target_roots([r.record_url for r in found])  # --render's listing order
        return found

    return roots


async def run_pass(
    kind: str,
    value: str,
    config: CrawlConfig,
    recorder: Recorder,
    *,
    client: HttpClient,
    robots: RobotsCache,
    progress: Progress,
    hooks: Sequence[Hook] = (),
    url_check: Callable[[RunContext], UrlCheck] | None = None,
    summarise: bool = True,
) -> tuple[int, RunState]:
    """One crawl of one classified target on the caller's client with exactly these
    hooks and URL check (`migrate`'s passes): the number of its root sitemaps and the
    run's counters. TargetError when a site or robots.txt cannot be reached at all."""
    auditor = Auditor(
        config,
        recorder,
        progress=progress,
        hooks=hooks,
        url_check=url_check,
        summarise=summarise,
    )
    auditor.attach_client(client, robots)
    roots = await root_jobs(kind, value, auditor, recorder)
    if roots:
        await auditor.run_with_client(client, robots, roots)
    return len(roots), auditor.state


async def root_jobs(
    kind: str, value: str, auditor: Auditor, recorder: Recorder
) -> list[SitemapJob]:
    """The root sitemap jobs of a classified target, on the auditor's client: a file or a
    sitemap as is, a robots.txt through its Sitemap: lines, a site through discovery
    (its `discovered` records and findings go to the recorder). TargetError when a site
    or robots.txt cannot be reached at all."""
    if kind == "file":
        return [
            SitemapJob(value, None, None, (), local=Path(value), public_url=auditor.config.base_url)
        ]
    if kind == "sitemap":
        return [SitemapJob(value, None, None, ())]
    # discovery: imported here, as a file or a sitemap needs none
    from audit.pipeline.discover import discover, robots_discovered

    if kind == "robots":  # its Sitemap: lines; none is a finding (and nothing to audit)
        policy = await auditor.checker.robots_for(value)
        if policy.status == "unreachable" and policy.http_status is None:
            raise TargetError(f"{value}: cannot be reached: {policy.error}")
        pre: list[Finding] = []
        found = robots_discovered(policy, pre)
        if not found:
            pre.append(
                finding(
                    "robots-no-sitemap",
                    "robots.txt declares no Sitemap: line; add one so every crawler finds the "
                    "sitemaps",
                    url=value,
                )
            )
            pre.append(
                finding("sitemap-not-found", "robots.txt names no sitemap to audit", url=value)
            )
    else:
        found, pre = await discover(auditor.client, auditor.checker.robots_for, value)
    recorder.findings(pre)
    roots: list[SitemapJob] = []
    for d in found:
        recorder.emit(d.to_json())
        roots.append(SitemapJob(d.url, None, None, ()))
    return roots


async def run_discover(site: str, config: CrawlConfig) -> tuple[list[Discovered], list[Finding]]:
    from audit.pipeline.discover import discover

    async with HttpClient(config) as client:
        robots = RobotsCache(client, config.user_agent)
        return await discover(client, robots.get, site, exhaustive=True)
