"""`migrate OLD NEW`: every old URL judged on the new site (audit.migrate does the work).

`MigrateRun(old, new, config, options, map=..., new_sitemap=...)` checks everything before
the first request (NEW, the targets, the map, the regexes, --intent, --state; each a one-line
error) and opens the --state store before the report is opened; `start(sinks)` makes the
run's recorder, `await run()` runs it, `finish(interrupted)` emits the summary and
`close_state(interrupted)` closes the store (why it could not be written, or None).
Credentials are scoped to the new site (staging), never to the live one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from audit.front.options import (
    NO_RUN_OPTIONS,
    RunOptions,
    check_config_options,
    check_state,
    scoped,
)
from audit.front.state import close_state, open_state, wire
from audit.pipeline.progress import NO_PROGRESS, Progress

__all__ = ["MigrateRun", "load_plan"]


def load_plan(config: CrawlConfig) -> Any:
    """--intent: the file read and checked before the state, the output or a request;
    its plan, or None without --intent. A malformed file: one line FILE:LINE (TargetError)."""
    if not config.intent:
        return None
    from audit.rules.intent import IntentError, load_intent

    try:
        return load_intent(config.intent)
    except IntentError as exc:
        raise TargetError(str(exc)) from None


class MigrateRun:
    """One migration check, its options checked and its --state store open."""

    def __init__(
        self,
        old: str,
        new: str,
        config: CrawlConfig,
        options: RunOptions = NO_RUN_OPTIONS,
        *,
        map: str | None = None,  # the command line's --map
        new_sitemap: str | None = None,
        progress: Progress = NO_PROGRESS,
    ) -> None:
        from audit.http.rewrite import parse_origin
        from audit.migrate.redirect_map import NO_MAP, load_map
        from audit.pipeline.targets import classify_target

        try:
            self.new_origin = parse_origin(new, "NEW")
        except ValueError as exc:
            raise TargetError(str(exc)) from None
        classify_target(old)
        if new_sitemap:
            classify_target(new_sitemap)
        self.redirect_map = load_map(map) if map else NO_MAP
        # credentials are for the new site (staging), never for the live one
        self.config = config = scoped(config, [self.new_origin, new_sitemap])
        check_config_options(config)
        self.intent = load_plan(config)  # path rows apply to old URLs of any origin
        check_state(config, options)
        self.old, self.new_sitemap, self.options = old, new_sitemap, options
        self.progress = progress
        self.outcome: dict[str, Any] = {}
        self.recorder: Any = None
        self.store: Any = None
        if options.state:
            more = {"map": map, "new_sitemap": new_sitemap}
            self.store = open_state(
                options.state,
                "migrate",
                [old, self.new_origin],
                config,
                fresh=options.fresh,
                ignore=options.ignore,
                more=more,
            )

    def start(self, sinks: Sequence[Any]) -> Any:
        """The run's MigrationRecorder over `sinks` (and the --state store's sink)."""
        from audit.migrate.auditor import MigrationRecorder, MigrationStats

        # the store's sink and hook, as a crawl's (migrate: no ledger, budget or lastmod)
        wiring = wire(self.store, self.options, self.config, [self.old, self.new_origin], "migrate")
        self._hooks = wiring.hooks()
        self.recorder = MigrationRecorder([*sinks, *wiring.sinks], MigrationStats(self.new_origin))
        self.recorder.ignore(sorted(set(self.options.ignore)))
        return self.recorder

    async def run(self) -> None:
        from audit.migrate.auditor import run_migrate

        await run_migrate(
            self.old,
            self.new_origin,
            self.config,
            self.recorder,
            redirect_map=self.redirect_map,
            new_sitemap=self.new_sitemap,
            progress=self.progress,
            outcome=self.outcome,
            hooks=self._hooks,
            intent=self.intent,
        )

    @property
    def fatal(self) -> str | None:
        """Why OLD could not be read at all (one line), or None."""
        fatal: str | None = self.outcome.get("fatal")
        return fatal

    def finish(self, *, interrupted: bool = False) -> dict[str, Any]:
        """Emit the summary record (marked interrupted when it was) and return it."""
        if interrupted:
            self.recorder.notes["interrupted"] = True
        summary: dict[str, Any] = self.recorder.summary()
        self.recorder.emit(summary)
        return summary

    def close_state(self, *, interrupted: bool) -> str | None:
        """Close the --state store (complete only when the run went through and OLD was
        read); why it could not be written, or None."""
        return close_state(self.store, complete=not interrupted and not self.fatal)

    def failed(self, fail_on: str) -> bool:
        return bool(self.recorder.worst_at_or_above(fail_on))

    @property
    def replayed(self) -> int:
        """Old URLs a resumed run did not request again."""
        return int(getattr(self.store, "replayed", 0))  # 0 without a store
