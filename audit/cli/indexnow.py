"""`crawl --indexnow KEY [--indexnow-endpoint URL] [--dry-run]`: the options and the step
after a complete run (contracts/fix.md; the work is audit.state.indexnow).

`prepare(args)` checks the options before anything is opened (a usage error is one line,
exit 2) and turns on `--content`; `IndexNowRun.collector` goes among the run's sinks;
`IndexNowRun.after(run, store, config, interrupted)` submits before the summary is
written, and only when the run went through to the end.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from typing import Any

from audit.core.errors import TargetError

__all__ = ["IndexNowRun", "add_indexnow_options", "prepare"]


def add_indexnow_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--indexnow",
        metavar="KEY",
        help="after a complete run, submit verified changes to IndexNow with this key "
        "(needs --state; implies --content)",
    )
    p.add_argument(
        "--indexnow-endpoint",
        metavar="URL",
        help="with --indexnow: where the POSTs go (default https://api.indexnow.org/indexnow)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --indexnow: list what would be submitted, send nothing",
    )


@dataclass
class IndexNowRun:
    key: str
    endpoint: str
    dry_run: bool
    collector: Any  # audit.state.indexnow.IndexNowCollector (a record sink)

    def after(self, run: Any, store: Any, config: Any, interrupted: bool) -> None:
        """Submit what the run verified, before `run.finish()` writes the summary. A run
        that was cut (interrupted, --max-urls, a target not audited) sends nothing."""
        notes = run.recorder.notes
        if interrupted or run.fatal or notes.get("max_urls_reached") or store is None:
            return
        from audit.state.indexnow import submit

        store.flush()  # this run's fingerprints are in the state file
        notes["indexnow"] = asyncio.run(
            submit(
                self.collector,
                store.path,
                key=self.key,
                endpoint=self.endpoint,
                dry_run=self.dry_run,
                config=config,
                emit=run.recorder.emit,
                report=run.recorder.finding,
            )
        )


def prepare(args: argparse.Namespace) -> IndexNowRun | None:
    """The run's IndexNow step, or None without --indexnow; TargetError (exit 2) for
    options that do not go together."""
    key = getattr(args, "indexnow", None)
    if key is None:
        for flag, given in (
            ("--indexnow-endpoint", getattr(args, "indexnow_endpoint", None) is not None),
            ("--dry-run", getattr(args, "dry_run", False)),
        ):
            if given:
                raise TargetError(f"{flag} needs --indexnow KEY")
        return None
    from audit.rules.urls import is_absolute_http
    from audit.state.indexnow import DEFAULT_ENDPOINT, IndexNowCollector, check_key

    problem = check_key(key)
    if problem is not None:
        raise TargetError(problem)
    if not getattr(args, "state", None):
        raise TargetError("--indexnow needs --state PATH (the ledger of what was submitted)")
    endpoint = args.indexnow_endpoint or DEFAULT_ENDPOINT
    if not is_absolute_http(endpoint):
        raise TargetError(f"--indexnow-endpoint {endpoint!r}: not an absolute http(s) URL")
    args.content = True  # fingerprints: what "changed" means
    return IndexNowRun(key, endpoint, bool(args.dry_run), IndexNowCollector())
