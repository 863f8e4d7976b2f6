"""Did tonight's run get worse than the previous one? (for `crawl --notify`)

With `--state`, the previous complete run's records are copied out of the state before
the run starts (`Snapshot.take`, a jsonl file in a temporary directory: the run then
replaces them in the state) and compared with the state once the run completed, with
`diff`'s own machinery: the night got worse when it has new findings at or above
`--fail-on`, or a `diff` alert fires (a sitemap vanished, a sitemap or the whole audit
lost at least NOTIFY_DROP_PCT percent of its URLs). Without a previous run (no
`--state`, a new state, or one whose last run did not complete) there is nothing to
compare with: a run that failed (`--fail-on`) counts as worse, with the reason as its
alert line. An interrupted run is always worse.

Imports the state store and diff; never the pipeline or HTTP.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

from audit.state.diff import Alerts, diff_reports
from audit.state.store import StateError, read_records, read_status

__all__ = ["NOTIFY_DROP_PCT", "Snapshot", "judge_night"]

NOTIFY_DROP_PCT: Final = 10.0


class Snapshot:
    """The previous complete run of a state, as a jsonl report (None: there is none)."""

    def __init__(self, directory: str | None, path: Path | None) -> None:
        self.directory = directory
        self.path = path

    @classmethod
    def take(cls, state: str | None) -> Snapshot:
        if not state or not Path(state).is_file():
            return cls(None, None)
        try:
            if read_status(state) != "complete":
                return cls(None, None)
        except StateError:
            return cls(None, None)  # opening the state for the run says what is wrong
        directory = tempfile.mkdtemp(prefix="sitemap-audit-notify-")
        path = Path(directory) / "previous.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in read_records(state):
                out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            out.write(json.dumps({"type": "summary"}) + "\n")  # a complete run
        return cls(directory, path)

    def close(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = self.path = None


def judge_night(
    snapshot: Snapshot,
    state: str | None,
    summary: dict[str, Any],
    *,
    failed: bool,
    fail_on: str,
) -> tuple[bool, list[str]]:
    """(worse, alert lines) of a finished run against the previous one."""
    if summary.get("interrupted") or summary.get("partial"):
        return True, ["ALERT: the run did not finish; the report holds what was done"]
    if snapshot.path is None or not state:
        if failed:
            return True, [f"ALERT: findings at or above --fail-on {fail_on} (no previous run)"]
        return False, []
    result = diff_reports(
        snapshot.path,
        state,
        io.StringIO(),
        fmt="jsonl",
        fail_on=fail_on,
        alerts=Alerts(drop_pct=NOTIFY_DROP_PCT),
    )
    alerts = list(result.alerts)
    if result.new_at_or_above:
        alerts.insert(
            0, f"ALERT: {result.new_at_or_above} new finding(s) at or above --fail-on {fail_on}"
        )
    return bool(alerts), alerts
