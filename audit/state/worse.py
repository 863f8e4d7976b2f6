"""Did tonight's run get worse than the previous one? (for `crawl --notify`)

With `--state`, the previous complete run's records are copied out of the state before
the run starts (`Snapshot.take`, a jsonl file in a temporary directory: the run then
replaces them in the state) and compared with the state once the run completed, with
`diff`'s own machinery. The night got worse when it has **new findings at or above
`--notify-on`** (default `error`), or a `diff` alert fires (a sitemap vanished, a
sitemap or the whole audit lost at least NOTIFY_DROP_PCT percent of its URLs: URLs no
longer listed, not the net change).

`--notify-on` is its own threshold, apart from `--fail-on`: the documented nightly
command crawls with `--fail-on never` (the job fails on regressions, not on old
problems), and that must not silence the alert. A run cut by `--max-urls` is compared
for the URLs it checked (see audit.state.diff).

Without a previous run (no `--state`, a new state, or one whose last run did not
complete) there is no baseline: every finding is new, so the run counts as worse when
it has findings at or above `--notify-on`, and its notice says `baseline`, never
`unchanged`. A run that did not finish, or that audited nothing, is always worse.

Imports the state store and diff; never the pipeline or HTTP.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from audit.report.aggregate import as_dict, as_int, failing_severities
from audit.report.verdict import stopped_how
from audit.state.diff import Alerts, DiffError, diff_reports
from audit.state.store import StateError, read_records, read_status

__all__ = [
    "NOTIFY_DROP_PCT",
    "NOTIFY_ON_DEFAULT",
    "NOTIFY_ON_LEVELS",
    "Night",
    "Snapshot",
    "judge_night",
]

NOTIFY_DROP_PCT: Final = 10.0
NOTIFY_ON_LEVELS: Final = ("error", "warning", "info")
NOTIFY_ON_DEFAULT: Final = "error"


@dataclass(frozen=True, slots=True)
class Night:
    """The verdict on a finished run: worse (send by default), the alert lines, and
    whether there was a previous complete run to compare with."""

    worse: bool
    alerts: list[str]
    baseline: bool  # True: no previous run; nothing was compared


class Snapshot:
    """The previous complete run of a state, as a jsonl report (None: there is none)."""

    def __init__(self, directory: str | None, path: Path | None) -> None:
        self.directory = directory
        self.path = path

    @classmethod
    def take(cls, state: str | None) -> Snapshot:
        if not state:
            return cls(None, None)
        complete = False  # no such file (a first run), or not a state: none to compare with
        with contextlib.suppress(StateError):  # (opening the state for the run says why)
            complete = read_status(state) == "complete"
        if not complete:
            return cls(None, None)
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
    notify_on: str = NOTIFY_ON_DEFAULT,
    fatal: list[str] | None = None,
) -> Night:
    """The verdict on a finished run against the previous complete one."""
    if stopped_how(summary) is not None:  # interrupted or partial
        alert = "ALERT: the run did not finish; the report holds what was done"
        return Night(True, [alert], snapshot.path is None)
    if fatal:
        return Night(True, [f"ALERT: nothing could be audited: {m}" for m in fatal], False)
    if snapshot.path is None or not state:
        # the run's findings at or above --notify-on, from its summary's counts
        counts = as_dict(summary.get("findings"))
        found = sum(as_int(counts.get(sev)) for sev in failing_severities(counts, notify_on))
        if not found:
            return Night(False, [], True)
        alert = (
            f"ALERT: {found} finding(s) at or above --notify-on {notify_on}; no previous "
            "complete run to compare with"
        )
        return Night(True, [alert], True)
    cut = summary.get("max_urls_reached") is True  # the same --max-urls cut the last run
    try:
        result = diff_reports(
            snapshot.path,
            state,
            io.StringIO(),
            fmt="jsonl",
            fail_on=notify_on,
            alerts=Alerts(drop_pct=NOTIFY_DROP_PCT),
            cut=(cut, cut),
        )
    except DiffError as exc:  # tonight's state could not be completed (a full disk)
        return Night(True, [f"ALERT: not compared with the previous run: {exc}"], False)
    alerts = list(result.alerts)
    if result.new_at_or_above:
        alerts.insert(
            0, f"ALERT: {result.new_at_or_above} new finding(s) at or above --notify-on {notify_on}"
        )
    return Night(bool(alerts), alerts, False)
