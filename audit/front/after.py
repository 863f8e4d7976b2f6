"""What a crawl does once its URLs are judged: IndexNow's submission (--indexnow,
contracts/fix.md; the work is audit.state.indexnow) and the notifications (--notify; the
verdict is audit.state.worse, the sending audit.report.notify).

`IndexNow.collector` goes among the run's sinks; `IndexNow.submit(audit, store)` runs
after every target, before the summary, and only when the run went through to the end.
`take_snapshot` copies the previous state out before the run replaces it; `send_notices`
judges the night against it and sends, by default only when the night got worse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audit.core.config import CrawlConfig
from audit.front.options import RunOptions

__all__ = ["IndexNow", "send_notices", "take_snapshot"]


@dataclass(slots=True)
class IndexNow:
    """The run's IndexNow step: its key, where the POSTs go, and the URLs it collects."""

    key: str
    endpoint: str
    dry_run: bool
    collector: Any  # audit.state.indexnow.IndexNowCollector (a record sink)

    @classmethod
    def of(cls, opts: RunOptions) -> IndexNow | None:
        """The step of checked options (front.options.check_indexnow), or None."""
        if opts.indexnow is None:
            return None
        from audit.state.indexnow import DEFAULT_ENDPOINT, IndexNowCollector

        endpoint = opts.indexnow_endpoint or DEFAULT_ENDPOINT
        return cls(opts.indexnow, endpoint, opts.dry_run, IndexNowCollector())

    async def submit(self, audit: Any, store: Any, config: CrawlConfig) -> None:
        """Submit what the run verified, before `audit.finish()` writes the summary. A run
        that was cut (--max-urls, a target not audited) sends nothing."""
        if audit.cut or store is None:
            return
        from audit.state.indexnow import submit

        store.flush()  # this run's fingerprints are in the state file
        audit.recorder.notes["indexnow"] = await submit(
            self.collector,
            store.path,
            key=self.key,
            endpoint=self.endpoint,
            dry_run=self.dry_run,
            config=config,
            emit=audit.recorder.emit,
            report=audit.recorder.finding,
        )


def take_snapshot(opts: RunOptions) -> Any:
    """--notify: the previous run copied out of the state (before this run replaces it),
    or None without --notify."""
    if not opts.notify:
        return None
    from audit.state.worse import Snapshot

    return Snapshot.take(opts.state)


def send_notices(opts: RunOptions, snapshot: Any, targets: Sequence[str], audit: Any) -> list[str]:
    """--notify after the run (`audit` is the run's, started): by default only when it got
    worse. The one-line reason of each notification that could not be sent (the run's
    verdict stands)."""
    if snapshot is None:  # no --notify
        return []
    from audit.report.notify import Notice, NotifyError, send
    from audit.state.worse import NOTIFY_ON_DEFAULT, judge_night

    try:
        summary = audit.recorder.summary()  # after finish(): marked interrupted when it was
        night = judge_night(
            snapshot,
            opts.state,
            summary,
            notify_on=opts.notify_on or NOTIFY_ON_DEFAULT,
            fatal=list(audit.fatal),
        )
        if night.worse or opts.notify_always:
            notice = Notice(list(targets), summary, night.alerts, night.worse, night.baseline)
            for dest in opts.notify:
                send(dest, notice, smtp=opts.smtp)
    except NotifyError as exc:
        return [str(exc)]
    finally:
        snapshot.close()
    return []
