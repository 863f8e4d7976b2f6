"""The front door: run an audit from Python, as the command line does.

    import audit

    result = audit.crawl("https://www.example.com/", rate=5, on_record=print)
    print(result.summary["findings"], result.failed("error"))

`crawl`, `validate`, `inspect` and `discover` take a target and the options of
`CrawlConfig` as keywords (`rate=5`, `page_checks=True`, ...; or a whole
`config=CrawlConfig(...)`) and return when the
audit is done; each has an `..._async` form for callers that already run an event
loop. Records stream to `on_record` as the audit produces them (the jsonl format
of DESIGN.md), so memory stays flat whatever the size of the site; `Result` keeps
only the summary. A target that cannot be audited at all raises `TargetError`
with one line that says why; everything else is a finding.

`Audit` is the routine underneath, for callers that need more (report writers
as sinks, a --state store, an interrupt between running and summarising): the
command line and the tests use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.pipeline.auditor import EntryHook, SitemapHook, classify_target
from audit.pipeline.hooks import Hook
from audit.pipeline.progress import NoProgress, Progress
from audit.pipeline.recorder import Recorder, RecordSink
from audit.report.aggregate import fails
from audit.sitemap.inspect import Inspector

__all__ = [
    "Audit",
    "Discovery",
    "Result",
    "check_targets",
    "crawl",
    "crawl_async",
    "discover",
    "discover_async",
    "inspect",
    "inspect_async",
    "validate",
    "validate_async",
]

HookFactory = Callable[[], Sequence[Hook]]


@dataclass(slots=True)
class Result:
    """What an audit ended with: its summary record, and why it stopped early if it did."""

    summary: dict[str, Any]
    fatal: list[str] = field(default_factory=list)  # targets that could not be audited
    interrupted: bool = False

    def failed(self, fail_on: str = "error") -> bool:
        """True when a finding is at or above `fail_on` (error, warning, info, never)."""
        return fails(self.summary, fail_on)


@dataclass(slots=True)
class Discovery:
    """The sitemaps a site declares or exposes, as `discovered` records, and findings."""

    sitemaps: list[dict[str, Any]]
    findings: list[dict[str, Any]]


class Audit:
    """One audit of one or more targets into one record stream and one summary.

    `await run()` (cancellable: the records of what was done are already out), then
    `finish(interrupted=...)` emits the summary and returns the `Result`.
    """

    def __init__(
        self,
        targets: str | Sequence[str],
        config: CrawlConfig,
        *,
        mode: str = "crawl",
        sinks: Sequence[RecordSink] = (),
        hooks: HookFactory | None = None,
        progress: Progress | None = None,
        on_entry: EntryHook | None = None,
        on_sitemap: SitemapHook | None = None,
    ) -> None:
        self.jobs = check_targets(targets, mode)
        self.config = config
        self.mode = mode
        self.recorder = Recorder(list(sinks))
        self.progress = progress or NoProgress()
        self.outcomes: list[dict[str, Any]] = []
        self._hooks = hooks
        self._on_entry = on_entry
        self._on_sitemap = on_sitemap
        self._url_check: Callable[[Any], Any] | None = None  # --cluster: ClusterCheck
        if config.cluster:
            from audit.cluster.spec import check_config  # imports no Dask

            check_config(config, mode)

    async def run(self) -> None:
        """Audit every target at once; records go to the sinks as they are produced.
        With --cluster, the URL checks of every target run on one Dask cluster."""
        if not self.config.cluster:
            await self._run_targets()
            return
        from audit.cluster.driver import Cluster  # Dask: only when a run asks for it

        async with Cluster(self.config) as cluster:
            self._url_check = cluster.url_check
            self.config = cluster.driver_config(self.config)
            await self._run_targets()

    async def _run_targets(self) -> None:
        """Every target at once, on one pipeline: its outcomes in the targets' order."""
        from audit.pipeline.runner import run_targets  # loads the HTTP stack: only to run

        self.outcomes = [{} for _ in self.jobs]
        await run_targets(
            self.jobs,
            self.config,
            self.recorder,
            self.mode,
            self.progress,
            self.outcomes,
            on_entry=self._on_entry,
            on_sitemap=self._on_sitemap,
            hooks=self._hooks_for_target(),
            url_check=self._url_check,
        )

    def _hooks_for_target(self) -> list[Hook]:
        """The caller's hooks for the run, made once (the run's own are the runner's
        builtin_hooks)."""
        return list(self._hooks()) if self._hooks is not None else []

    @property
    def fatal(self) -> list[str]:
        return [o["fatal"] for o in self.outcomes if o.get("fatal")]

    def finish(self, *, interrupted: bool = False) -> Result:
        """Emit the summary record (marked interrupted when it was) and return the result."""
        notes = self.recorder.notes
        if interrupted:
            notes["interrupted"] = True
        if self.fatal:
            notes["fatal"] = self.fatal  # the targets that could not be audited at all
        summary = self.recorder.summary()
        self.recorder.emit(summary)
        return Result(summary, self.fatal, interrupted)


def check_targets(targets: str | Sequence[str], mode: str) -> list[tuple[str, str]]:
    """Each target classified (file, site, robots, sitemap) for `mode`; TargetError for
    the first that cannot be audited that way."""
    names = [targets] if isinstance(targets, str) else list(targets)
    if not names:
        raise TargetError("no target to audit")
    return [_classified(target, mode) for target in names]


def _classified(target: str, mode: str) -> tuple[str, str]:
    kind, value = classify_target(target)
    if mode == "validate" and kind == "site":
        raise TargetError(
            f"{target}: a site root; validate takes a sitemap URL or file "
            "(use `sitemap-audit discover` to find them, or `sitemap-audit crawl`)"
        )
    if mode == "inspect" and kind == "site":
        raise TargetError(f"{target}: a site root; inspect takes a sitemap URL or file")
    return kind, value


def _config(options: dict[str, Any]) -> CrawlConfig:
    """The run's CrawlConfig: `config=` as given, or one built from the option keywords."""
    given = options.pop("config", None)
    if isinstance(given, CrawlConfig):
        if options:
            raise TargetError(f"give config= or options, not both: {', '.join(sorted(options))}")
        return given
    try:
        return CrawlConfig(**options)
    except TypeError as exc:  # an unknown keyword: say which, in one line
        raise TargetError(f"not an audit option: {exc}") from None


def _run(coro: Any) -> Any:
    from audit.core.eventloop import new_event_loop

    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(coro)


async def _audit(
    mode: str,
    target: str | Sequence[str],
    on_record: RecordSink | None,
    options: dict[str, Any],
) -> Result:
    run = Audit(
        target, _config(options), mode=mode, sinks=[on_record] if on_record is not None else []
    )
    try:
        await run.run()
    except asyncio.CancelledError:
        run.finish(interrupted=True)
        raise
    return run.finish()


async def crawl_async(
    target: str | Sequence[str], *, on_record: RecordSink | None = None, **options: Any
) -> Result:
    """Full audit (discover, expand, validate, check every URL) in the running loop."""
    return await _audit("crawl", target, on_record, options)


def crawl(
    target: str | Sequence[str], *, on_record: RecordSink | None = None, **options: Any
) -> Result:
    """Full audit of a site root, sitemap, robots.txt URL or local file; see the module."""
    result: Result = _run(crawl_async(target, on_record=on_record, **options))
    return result


async def validate_async(
    target: str | Sequence[str], *, on_record: RecordSink | None = None, **options: Any
) -> Result:
    """Protocol validation only (no page URL is requested) in the running loop."""
    return await _audit("validate", target, on_record, options)


def validate(
    target: str | Sequence[str], *, on_record: RecordSink | None = None, **options: Any
) -> Result:
    """Protocol validation of a sitemap URL or local file; no page URL is requested."""
    result: Result = _run(validate_async(target, on_record=on_record, **options))
    return result


async def inspect_async(target: str, **options: Any) -> list[dict[str, Any]]:
    """Statistics of a sitemap (and an index's children) in the running loop."""
    inspector = Inspector()
    run = Audit(
        target,
        _config(options),
        mode="inspect",
        sinks=[inspector.on_record],
        on_entry=inspector.on_entry,
        on_sitemap=inspector.on_sitemap,
    )
    await run.run()
    if run.fatal:
        raise TargetError(run.fatal[0])
    return [inspector.stats[u].to_json() for u in inspector.order]


def inspect(target: str, **options: Any) -> list[dict[str, Any]]:
    """Counts, sizes, lastmod distribution and extensions of a sitemap, one dict each."""
    stats: list[dict[str, Any]] = _run(inspect_async(target, **options))
    return stats


async def discover_async(site: str, **options: Any) -> Discovery:
    """The sitemaps a site declares or exposes, in the running loop."""
    from audit.pipeline.runner import run_discover

    kind, value = classify_target(site)
    if kind != "site":
        raise TargetError(
            f"{site}: discover takes a site root URL such as https://www.example.com/"
        )
    found, findings = await run_discover(value, _config(options))
    return Discovery([d.to_json() for d in found], [f.to_json() for f in findings])


def discover(site: str, **options: Any) -> Discovery:
    """robots.txt Sitemap: lines, the common paths and <link rel="sitemap"> of a site."""
    found: Discovery = _run(discover_async(site, **options))
    return found
