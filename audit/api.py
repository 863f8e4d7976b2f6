"""The front door: run an audit from Python, as the command line does.

    import audit

    result = audit.crawl("https://www.example.com/", rate=5, on_record=print)
    print(result.summary["findings"], result.failed("error"))

`crawl`, `validate`, `inspect` and `discover` take a target and the options of
`CrawlConfig` as keywords (`rate=5`, `page_checks=True`, ...; or a whole
`config=CrawlConfig(...)`) and return when the
audit is done; each has an `..._async` form for callers that already run an event
loop. `crawl` also takes every run option of the command line (`RunOptions`): `state=PATH`
(with `fresh`, `changed_only`, `budget`, `dropped_max`), `content=True`, `notify=[DEST]`
(with `notify_always`, `notify_on`, `smtp`), `indexnow=KEY` (with `indexnow_endpoint`,
`dry_run`) and `ignore=[CODES]` (`validate` takes `ignore`); `intent=FILE` is CrawlConfig's.
`migrate(old, new, map=..., new_sitemap=..., state=...)` here is the migration check (not
exported as `audit.migrate`: that name is the subpackage), `diff` and `fix` the commands of the
same names, and `worker(args)` starts a Dask worker for `--cluster tcp://...` runs. Records
stream to `on_record` as the audit produces them (the jsonl format of DESIGN.md), so memory stays flat whatever the size of the site;
`Result` keeps only the summary. When no target can be audited at all (a missing file, a
site that cannot be reached or declares no sitemap), the call raises `TargetError` with one
line that says why; when only some of several cannot, `Result.fatal` names them and
`Result.failed()` is True; everything else is a finding. Options are checked as the
command line checks its flags, with the command line's messages: an unknown keyword or a
value of the wrong type is a `TypeError`, a value out of range a `ValueError`
(`rate="unlimited"` is no limit), options that do not go together an `OptionError` (a
ValueError: "--budget needs --state PATH").

`Audit` is the routine underneath, and `CrawlRun` / `MigrateRun` the runs with their
options wired around it, for callers that need more (report writers as sinks, an interrupt
between running and summarising): the command line uses them, and imports nothing else
below this module (`audit.front` holds what they wire).
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from audit.core.config import CrawlConfig, check_config, config_from_options
from audit.core.errors import TargetError
from audit.front.after import IndexNow, send_notices, take_snapshot
from audit.front.options import (
    NO_RUN_OPTIONS,
    OptionError,
    RunOptions,
    check_codes,
    check_config_options,
    check_indexnow,
    check_notify,
    check_state,
    credentials,
    parse_value,
    scoped,
    split_options,
    with_cluster_fence,
)
from audit.front.state import open_state, wire
from audit.pipeline.context import EntryHook, SitemapHook
from audit.pipeline.hooks import Hook
from audit.pipeline.progress import NO_PROGRESS, Progress, make_progress
from audit.pipeline.recorder import Recorder, RecordSink
from audit.pipeline.targets import classify_target
from audit.report.aggregate import fails

if TYPE_CHECKING:
    from audit.front.migrate import MigrateRun
    from audit.sitemap.inspect import Inspector

# Exported, but loaded at first use (module __getattr__; this module's own functions import
# them where they use them): a crawl or validate needs neither at start-up.
_LAZY = {"Inspector": "audit.sitemap.inspect", "MigrateRun": "audit.front.migrate"}

__all__ = [
    "Audit",
    "CrawlRun",
    "Discovery",
    "Inspector",
    "MigrateRun",
    "OptionError",
    "Result",
    "RunOptions",
    "check_codes",
    "check_targets",
    "checked_config",
    "crawl",
    "crawl_async",
    "credentials",
    "diff",
    "discover",
    "discover_async",
    "fix",
    "inspect",
    "inspect_async",
    "make_progress",
    "migrate",
    "migrate_async",
    "parse_value",
    "validate",
    "validate_async",
    "worker",
]

HookFactory = Callable[[], Sequence[Hook]]


def __getattr__(name: str) -> Any:
    """`Inspector` and `MigrateRun` (see _LAZY)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = globals()[name] = getattr(importlib.import_module(_LAZY[name]), name)
    return value


@dataclass(slots=True)
class Result:
    """What an audit ended with: its summary record, and why it stopped early if it did."""

    summary: dict[str, Any]
    fatal: list[str] = field(default_factory=list)  # targets that could not be audited
    interrupted: bool = False
    # --notify: why a notification could not be sent (one line each); the verdict stands
    notify_errors: list[str] = field(default_factory=list)

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
        hooks: HookFactory = list,
        progress: Progress = NO_PROGRESS,
        on_entry: EntryHook | None = None,
        on_sitemap: SitemapHook | None = None,
        after: Callable[[Audit], Awaitable[None]] | None = None,
        intent: Any = None,
    ) -> None:
        self.jobs = check_targets(targets, mode)
        self._after = after  # a stage after every target (the --state ledger's)
        self.config = config
        self.mode = mode
        self.recorder = Recorder(list(sinks))
        self.progress = progress
        self.outcomes: list[dict[str, Any]] = []
        self._hooks = hooks
        self._on_entry = on_entry
        self._on_sitemap = on_sitemap
        self._url_check: Callable[[Any], Any] | None = None  # --cluster: ClusterCheck
        self._render: Any = None  # --render: the run's RenderSession (one browser)
        if mode == "crawl":
            self.recorder.roll_up()  # the `rollup` records (contracts/nights.md 5)
            # --intent: the run's plan, read (and checked) before anything is requested (or
            # as the caller read it: CrawlRun reads it before the --state store is opened)
            if intent is None:
                intent = _intent_run(config, self.jobs)
            if config.render is not None:
                from audit.features.render import RenderSession  # no browser is started here

                if config.cluster:
                    raise TargetError(
                        "--cluster does not run --render yet (it reads pages with "
                        "--page-checks); drop one of them"
                    )
                # --render turns on --page-checks
                self.config = config = replace(config, page_checks=True)
                self._render = RenderSession(config)  # no browser: one line, exit 2
        self.intent = intent
        if intent is not None:
            self.recorder.add_sink(intent.observe)
        from audit.cluster.spec import check_config  # imports no Dask; no --cluster: nothing

        check_config(self.config, mode)

    async def run(self) -> None:
        """Audit every target at once; records go to the sinks as they are produced.
        With --cluster, the URL checks of every target run on one Dask cluster. The
        browser of --render ends with the run, however it ends."""
        try:
            if self._render is not None:
                await self._render.probe()  # before the first request
            if not self.config.cluster:
                await self._run_targets()
            else:
                from audit.cluster.driver import Cluster  # Dask: only when a run asks for it

                async with Cluster(self.config) as cluster:
                    self._url_check = cluster.url_check
                    self.config = cluster.driver_config(self.config)
                    await self._run_targets()
            if self._after is not None:
                await self._after(self)
        finally:
            if self._render is not None:
                await self._render.close()

    async def _run_targets(self) -> None:
        """Every target at once, on one pipeline: its outcomes in the targets' order. The
        caller's hooks are made once (the run's own are audit.features.builtin's), after
        --intent's (it reads their indexability; the caller's --state stores what it adds).
        The intent hook requests the exact rows no target listed."""
        from audit.features.builtin import builtin_hooks
        from audit.pipeline.runner import run_targets  # loads the HTTP stack: only to run

        hooks = builtin_hooks(self.config, self.mode, self._render)
        if self.intent is not None:
            from audit.features.intent import IntentHook

            hooks.append(IntentHook(self.intent))
        hooks.extend(self._hooks())
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
            hooks=hooks,
            url_check=self._url_check,
        )

    @property
    def fatal(self) -> list[str]:
        return [o["fatal"] for o in self.outcomes if o.get("fatal")]

    @property
    def cut(self) -> bool:
        """The run did not go through: a target could not be audited, or --max-urls stopped
        it (what IndexNow's step and the --state ledger's stage both ask)."""
        return bool(self.fatal) or bool(self.recorder.notes.get("max_urls_reached"))

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


class CrawlRun:
    """One crawl or validate with what its run options wire around the pipeline: the
    --state store and what reads it (--changed-only, --budget, the ledger, --dropped-max),
    --content, --indexnow, --notify and --ignore.

    The steps, in the order the command line takes them and a library caller gets too:
    `CrawlRun(...)` checks every option, the targets and --intent (one line each), copies
    the previous state out for --notify and opens the --state store, all before a report is
    opened; `start(sinks)` makes the run's `Audit` over the caller's sinks; `await run()`
    audits (and submits to IndexNow when the run went through); `finish(interrupted=...)`
    emits the summary; `close_state(interrupted=...)` closes the store; `notify()` sends.
    """

    def __init__(
        self,
        targets: str | Sequence[str],
        config: CrawlConfig,
        options: RunOptions = NO_RUN_OPTIONS,
        *,
        mode: str = "crawl",
        progress: Progress = NO_PROGRESS,
    ) -> None:
        check_indexnow(options)
        names = [targets] if isinstance(targets, str) else list(targets)
        config = scoped(config, names)
        check_config_options(config)
        jobs = check_targets(names, mode)  # every target before anything is opened
        # --intent read once, before the state (a malformed file: one line, FILE:LINE)
        self._intent = _intent_run(config, jobs)
        check_notify(options)
        check_state(config, options)
        self.targets, self.mode, self.options = names, mode, options
        self.config = with_cluster_fence(config, options)
        self.progress = progress
        self.indexnow = IndexNow.of(options)
        self.audit: Audit  # made by start(), which every later step follows (as MigrateRun's)
        self.snapshot = take_snapshot(options)  # before the run replaces the previous one
        self.store: Any = None
        if options.state:
            try:
                self.store = open_state(
                    options.state,
                    mode,
                    names,
                    self.config,
                    fresh=options.fresh,
                    ignore=options.ignore,
                )
            except BaseException:
                if self.snapshot is not None:
                    self.snapshot.close()
                raise

    def start(self, sinks: Sequence[RecordSink], progress: Progress | None = None) -> Audit:
        """The run's Audit: the caller's sinks first (the report), then the run's own."""
        self.progress = progress or self.progress
        own: list[RecordSink] = [self.indexnow.collector] if self.indexnow is not None else []
        wiring = wire(self.store, self.options, self.config, self.targets, self.mode)
        self.audit = Audit(
            self.targets,
            self.config,
            mode=self.mode,
            sinks=[*sinks, *own, *wiring.sinks],
            hooks=wiring.hooks,
            progress=self.progress,
            after=wiring.after,
            intent=self._intent if self.mode == "crawl" else None,
        )
        self.audit.recorder.ignore(sorted(set(self.options.ignore)))
        return self.audit

    async def run(self) -> None:
        """Audit every target; then, when the run went through, IndexNow's submission."""
        await self.audit.run()
        if self.indexnow is not None:  # after every URL was judged, before the summary
            await self.indexnow.submit(self.audit, self.store, self.config)

    def finish(self, *, interrupted: bool = False) -> Result:
        return self.audit.finish(interrupted=interrupted)

    def close_state(self, *, interrupted: bool) -> None:
        """Close the --state store (once): only a run that went through to the end, every
        target audited, is the base of an incremental one."""
        if self.store is None:
            return
        # (closing twice is a no-op: StateStore.close closes once; a run whose start() failed
        # is closed as interrupted, before its Audit is asked anything)
        done = not interrupted and not self.audit.fatal
        self.store.close(complete=done)

    def notify(self) -> list[str]:
        """--notify after the run; why a notification could not be sent, one line each."""
        snapshot, self.snapshot = self.snapshot, None
        return send_notices(self.options, snapshot, self.targets, self.audit)

    @property
    def replayed(self) -> int:
        """URLs a resumed run did not request again (already checked before the crash)."""
        return int(getattr(self.store, "replayed", 0))  # 0 without a store

    @property
    def state_path(self) -> str | None:
        return None if self.store is None else str(self.store.path)


def _intent_run(config: CrawlConfig, jobs: list[tuple[str, str]]) -> Any:
    """The run's --intent plan (read by load_plan: TargetError, one line FILE:LINE, for a
    malformed file), its path rows scoped to the TARGETs' origins (a local file's is
    --base-url's); None without --intent."""
    if not config.intent:
        return None
    from audit.features.intent import IntentRun
    from audit.front.migrate import load_plan  # only with --intent (see _LAZY)

    origins = [value for kind, value in jobs if kind != "file"]
    if config.base_url and len(origins) < len(jobs):  # a local file among the targets
        origins.append(config.base_url)
    return IntentRun(load_plan(config).scoped(origins))


def check_targets(targets: str | Sequence[str], mode: str) -> list[tuple[str, str]]:
    """Each target classified (file, site, robots, sitemap) for `mode`; TargetError for
    the first that cannot be audited that way."""
    names = [targets] if isinstance(targets, str) else list(targets)
    if not names:
        raise TargetError("no target to audit")
    jobs = []
    for target in names:
        kind, value = classify_target(target)
        refused = _REFUSED.get((kind, mode))
        if refused is not None:
            raise TargetError(f"{target}: {refused}")
        jobs.append((kind, value))
    return jobs


# the kinds of target a mode does not take, and what it takes instead
_REFUSED = {
    ("site", "validate"): "a site root; validate takes a sitemap URL or file (use "
    "`sitemap-audit discover` to find them, or `sitemap-audit crawl`)",
    ("site", "inspect"): "a site root; inspect takes a sitemap URL or file",
}


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


def checked_config(config: CrawlConfig, targets: Sequence[str | None]) -> CrawlConfig:
    """`config` with its credentials scoped to `targets`, its options checked together."""
    config = scoped(config, targets)
    check_config_options(config)
    return config


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
    opts = split_options(options, mode)
    run = CrawlRun(target, _config(options), opts, mode=mode)
    interrupted = True
    try:
        run.start([on_record] if on_record is not None else [])
        try:
            await run.run()
        except asyncio.CancelledError:
            run.finish(interrupted=True)
            run.close_state(interrupted=True)
            run.notify()
            raise
        result = run.finish()
        interrupted = False
    finally:
        run.close_state(interrupted=interrupted)
    result.notify_errors = await asyncio.to_thread(run.notify)  # blocking sends, off the loop
    if len(result.fatal) == len(run.targets):  # check_targets refuses an empty list
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
    from audit.sitemap.inspect import Inspector

    inspector = Inspector()
    run = Audit(
        target,
        checked_config(_config(options), [target]),
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
    found, findings = await run_discover(value, checked_config(_config(options), [site]))
    return Discovery([d.to_json() for d in found], [f.to_json() for f in findings])


def discover(site: str, **options: Any) -> Discovery:
    """robots.txt Sitemap: lines, the common paths and <link rel="sitemap"> of a site."""
    found: Discovery = _run(discover_async(site, **options))
    return found


async def migrate_async(
    old: str, new: str, *, on_record: RecordSink | None = None, **options: Any
) -> Result:
    """A migration check (every old URL on the new site) in the running loop."""
    extra: dict[str, Any] = {}  # migrate's own options: the map file, the new sitemap
    for key in ("map", "new_sitemap"):
        value = extra[key] = options.pop(key, None)
        if not isinstance(value, str | None):
            raise TypeError(f"{key}: expected a string, got {value!r}")
    from audit.front.migrate import MigrateRun

    opts = split_options(options, "migrate")
    run = MigrateRun(old, new, _config(options), opts, **extra)
    run.start([on_record] if on_record is not None else [])
    interrupted = True
    try:
        try:
            await run.run()
        except asyncio.CancelledError:
            run.finish(interrupted=True)
            raise
        summary = run.finish()
        interrupted = False
    finally:
        state_error = run.close_state(interrupted=interrupted)
    if state_error is not None:
        raise TargetError(state_error)
    if run.fatal:  # OLD could not be read at all (the summary already went to on_record)
        raise TargetError(run.fatal)
    return Result(summary)


def migrate(old: str, new: str, *, on_record: RecordSink | None = None, **options: Any) -> Result:
    """Pre-launch migration check: every URL of OLD (a sitemap URL, site root, local
    sitemap or file of URLs) requested on the origin NEW; `map=` a CSV of old,new rows,
    `new_sitemap=` the new site's sitemap, `state=` resumes a killed run; the other
    options are CrawlConfig's."""
    result: Result = _run(migrate_async(old, new, on_record=on_record, **options))
    return result


def diff(old: str, new: str, out: TextIO, **options: Any) -> Any:
    """Compare two jsonl reports or --state files into `out` (new, fixed, still failing;
    `fmt`, `fail_on`, `limit`); `alert_drop=PCT` and `alert_new_errors=N` add the alerts.
    The comparison's summary (`.failed`); TargetError when a side is missing, or partial."""
    from audit.state.diff import Alerts, DiffError, diff_reports

    for path in (old, new):
        if not Path(path).is_file():
            raise TargetError(f"{path}: no such report or state file")
    # neither threshold given: Alerts() judges nothing, as no alerts at all
    alerts = Alerts(options.pop("alert_drop", None), options.pop("alert_new_errors", None))
    try:
        return diff_reports(old, new, out, alerts=alerts, **options)
    except DiffError as exc:
        raise TargetError(str(exc)) from exc


def fix(source: str, output: str, **options: Any) -> dict[str, Any]:
    """Write the sitemap set a complete audit (a jsonl report or --state file) says the site
    should have into the folder `output` (`base_url`, `shard_size`, `gzip`); sends no
    request. FixRefused (an AuditError, one line) for a cut run or an unreadable source."""
    from audit.fix import fix_sitemaps

    summary: dict[str, Any] = fix_sitemaps(source, output, **options)
    return summary


def worker(args: Sequence[str]) -> NoReturn:
    """Become a Dask worker tuned for audits (audit.cluster.worker): `dask worker` with
    `args` (the scheduler's address and Dask's own options), the settings `--cluster
    local:N` gives its workers, where the environment sets none. Replaces this process;
    TargetError when the cluster extra is not installed."""
    from audit.cluster.spec import INSTALL_HINT  # imports no Dask

    if importlib.util.find_spec("distributed") is None:
        raise TargetError(f"worker needs Dask distributed: {INSTALL_HINT}")
    from audit.cluster.worker import exec_worker

    exec_worker(list(args))
