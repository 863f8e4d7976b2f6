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
only the summary. When no target can be audited at all (a missing file, a site that
cannot be reached or declares no sitemap), the call raises `TargetError` with one line
that says why; when only some of several cannot, `Result.fatal` names them and
`Result.failed()` is True; everything else is a finding. Options are checked as the
command line checks its flags: an unknown keyword or a value of the wrong type is a
`TypeError`, a value out of range a `ValueError` (`rate="unlimited"` is no limit).

`Audit` is the routine underneath, for callers that need more (report writers
as sinks, a --state store, an interrupt between running and summarising): the
command line and the tests use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from audit.core.config import CrawlConfig, check_config, config_from_options
from audit.core.errors import TargetError
from audit.pipeline.context import EntryHook, SitemapHook
from audit.pipeline.hooks import Hook
from audit.pipeline.progress import NoProgress, Progress
from audit.pipeline.recorder import Recorder, RecordSink
from audit.pipeline.targets import classify_target
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
        """True when a finding is at or above `fail_on` (error, warning, info, never), or
        when a target could not be audited at all (`fatal`: the command line's exit 2)."""
        return bool(self.fatal) or fails(self.summary, fail_on)


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
        after: Callable[[Audit], Awaitable[None]] | None = None,
    ) -> None:
        self.jobs = check_targets(targets, mode)
        self._after = after  # a stage after every target (the --state ledger's)
        self.config = config
        self.mode = mode
        self.recorder = Recorder(list(sinks))
        if mode == "crawl":
            self.recorder.roll_up()  # the `rollup` records (contracts/nights.md 5)
        self.progress = progress or NoProgress()
        self.outcomes: list[dict[str, Any]] = []
        self._hooks = hooks
        self._on_entry = on_entry
        self._on_sitemap = on_sitemap
        self._url_check: Callable[[Any], Any] | None = None  # --cluster: ClusterCheck
        # --intent: the run's plan, read (and checked) before anything is requested
        self.intent = _intent_run(config, self.jobs) if config.intent and mode == "crawl" else None
        if self.intent is not None:
            self.recorder.add_sink(self.intent.observe)
        self._render: Any = None  # --render: the run's RenderSession (one browser)
        if config.render is not None and mode == "crawl":
            from audit.features.render import RenderSession  # no browser is started here

            if config.cluster:
                raise TargetError(
                    "--cluster does not run --render yet (it reads pages with --page-checks); "
                    "drop one of them"
                )
            if not config.page_checks:  # --render turns on --page-checks
                self.config = config = replace(config, page_checks=True)
            self._render = RenderSession(config)  # no browser: one line, exit 2
        if self.config.cluster:
            from audit.cluster.spec import check_config  # imports no Dask

            check_config(self.config, mode)

    async def run(self) -> None:
        """Audit every target at once; records go to the sinks as they are produced.
        With --cluster, the URL checks of every target run on one Dask cluster. The
        browser of --render ends with the run, however it ends."""
        try:
            if self._render is not None:
                await self._render.probe()  # before the first request
            await self._run_cluster_or_not()
        finally:
            if self._render is not None:
                await self._render.close()

    async def _run_cluster_or_not(self) -> None:
        if not self.config.cluster:
            await self._run_targets()
            await self._after_targets()
            return
        from audit.cluster.driver import Cluster  # Dask: only when a run asks for it

        async with Cluster(self.config) as cluster:
            self._url_check = cluster.url_check
            self.config = cluster.driver_config(self.config)
            await self._run_targets()
        await self._after_targets()

    async def _after_targets(self) -> None:
        if self._after is not None:
            await self._after(self)

    async def _run_targets(self) -> None:
        """Every target at once, on one pipeline: its outcomes in the targets' order."""
        from audit.features.builtin import builtin_hooks
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
            hooks=[*builtin_hooks(self.config, self.mode, self._render), *self._hooks_for_target()],
            url_check=self._url_check,
        )

    def _hooks_for_target(self) -> list[Hook]:
        """The caller's hooks for the run, made once (the run's own are
        audit.features.builtin's), after --intent's (it reads their indexability; the caller's
        --state stores what it adds). The intent hook requests the exact rows no target
        listed."""
        own: list[Hook] = []
        if self.intent is not None:
            from audit.features.intent import IntentHook

            own.append(IntentHook(self.intent))
        return own + (list(self._hooks()) if self._hooks is not None else [])

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
            notes["targets"] = len(self.outcomes)  # of how many: the verdict names the rest
        self.recorder.end_records()  # the roll-up, then the hosts
        summary = self.recorder.summary()
        self.recorder.emit(summary)
        return Result(summary, self.fatal, interrupted)


def _intent_run(config: CrawlConfig, jobs: list[tuple[str, str]]) -> Any:
    """The run's --intent plan, its path rows scoped to the TARGETs' origins (a local
    file's is --base-url's); IntentError (one line, FILE:LINE) for a malformed file."""
    from audit.features.intent import IntentRun
    from audit.rules.intent import IntentError, load_intent

    assert config.intent is not None
    origins = [value for kind, value in jobs if kind != "file"]
    if config.base_url and any(kind == "file" for kind, _ in jobs):
        origins.append(config.base_url)
    try:
        plan = load_intent(config.intent)
    except IntentError as exc:
        raise TargetError(str(exc)) from None
    return IntentRun(plan.scoped(origins))


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
    """The run's CrawlConfig: `config=` as given, or one built from the option keywords;
    either checked (TypeError for an unknown keyword or a wrong type, ValueError for a value
    out of range: a caller's mistake, not a target that cannot be audited)."""
    given = options.pop("config", None)
    if given is not None:
        if not isinstance(given, CrawlConfig):
            raise TypeError(f"config: expected a CrawlConfig, got {given!r}")
        if options:
            raise TypeError(f"give config= or options, not both: {', '.join(sorted(options))}")
        return check_config(given)
    return config_from_options(options)


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
    result = run.finish()
    if result.fatal and len(result.fatal) == len(run.outcomes):
        # not one target could be audited: that is an error, not a passing Result (the
        # summary record already went to on_record)
        raise TargetError("; ".join(result.fatal))
    return result


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
