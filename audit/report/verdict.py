"""What the run amounts to, in words every human-facing writer shares: the one-word
verdict for --fail-on and its sentence, how far a run that did not finish got, what it
left out on purpose (--max-urls, --include/--exclude), and `migrate`'s outcome table.

Pure functions over a summary record: no I/O, and nothing from the crawl, HTTP or
parser layers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit.report.aggregate import (
    as_dict,
    as_int,
    counted,
    failing_severities,
    str_or_none,
    unread_children_note,
)

__all__ = [
    "NOTHING_AUDITED",
    "RUN_FAILED",
    "SOME_AUDITED",
    "Verdict",
    "credentials_note",
    "cut_notes",
    "fatal_of",
    "migration_head",
    "migration_rows",
    "progress_line",
    "stopped_how",
    "verdict",
]


NOTHING_AUDITED = "NOTHING AUDITED"  # no target could be audited at all (exit 2)
SOME_AUDITED = "NOT ALL AUDITED"  # of several targets, some could not be audited (exit 2)
RUN_FAILED = frozenset({NOTHING_AUDITED, SOME_AUDITED})  # the run's error, not the site's
# and the words of a run that did not finish (stopped_how's, the "partial" style's)
_RUN_ERROR = RUN_FAILED | {"INTERRUPTED", "PARTIAL"}
# how a run that did not finish stopped (stopped_how's two words), as progress_line says it
_STOPPED_WHAT = {"INTERRUPTED": "the run was interrupted", "PARTIAL": "the run did not finish"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The one-word verdict every human-facing writer shows, its colour and the sentence
    that goes with it. `style` is "pass", "fail", "warn" (errors that do not fail the run)
    or "partial" (the run did not finish: its findings are from the part that ran)."""

    word: str
    style: str
    detail: str

    @property
    def line(self) -> str:
        return f"{self.word}: {self.detail}"

    @property
    def run_error(self) -> bool:
        """The run did not finish or audited nothing: an error of the run, not of the site
        (junit's errored testcase, sarif's unsuccessful invocation)."""
        return self.word in _RUN_ERROR


def stopped_how(summary: Mapping[str, Any]) -> str | None:
    """ "INTERRUPTED" or "PARTIAL" when the run did not finish, else None."""
    if summary.get("interrupted"):
        return "INTERRUPTED"
    if summary.get("partial"):
        return "PARTIAL"
    return None


def progress_line(summary: Mapping[str, Any]) -> str | None:
    """For a run that did not finish, how far it got, in one plain sentence; else None."""
    how = stopped_how(summary)
    if how is None:
        return None
    what = _STOPPED_WHAT[how]
    by = str_or_none(summary.get("stopped_by"))
    if by:
        what += f" by {by}"
    return (
        f"{what} after {counted(as_int(summary.get('sitemaps')), 'sitemap')} and "
        f"{counted(as_int(summary.get('urls')), 'URL')}: a partial report, its findings "
        "are from that part only"
    )


def fatal_of(summary: Mapping[str, Any]) -> str | None:
    """Why nothing could be audited, when the summary says so (a `fatal` note, one line
    or one per target, or no sitemap read at all); else None."""
    fatal = summary.get("fatal")
    if isinstance(fatal, list):
        fatal = "; ".join(map(str, filter(None, fatal)))  # the non-empty ones
    line = str_or_none(fatal)
    if line:  # (not an empty one)
        return line
    if not as_int(summary.get("sitemaps")) and not as_int(summary.get("urls")):
        return "no sitemap was audited"
    return None


def verdict(summary: Mapping[str, Any], fail_on: str) -> Verdict:
    """What the run amounts to for --fail-on: never a PASS for a run that did not finish,
    that audited nothing, or that found errors it does not fail on."""
    counts = as_dict(summary.get("findings"))
    over = failing_severities(counts, fail_on)
    failing = ", ".join(counted(as_int(counts.get(s)), s) for s in over)
    why = f"{failing} at or above --fail-on {fail_on}"
    tail = f"; {why}" if failing else ""
    how = stopped_how(summary)
    if how is not None:
        # a run that did not finish: how far it got (progress_line says, as it stopped),
        # and what failed in that part
        return Verdict(how, "partial", f"{progress_line(summary)}{tail}")
    fatal = fatal_of(summary)
    if fatal is not None:
        unaudited = summary.get("fatal")
        if isinstance(unaudited, list) and as_int(summary.get("targets")) > len(unaudited):
            # of several targets, these were not audited, the others were
            return Verdict(
                SOME_AUDITED, "fail", f"not audited: {fatal}; the other targets were{tail}"
            )
        return Verdict(NOTHING_AUDITED, "fail", fatal)
    if failing:
        return Verdict("FAIL", "fail", why)
    errors = as_int(counts.get("error"))
    if errors:
        return Verdict(
            "DONE", "warn", f"{counted(errors, 'error')} (not failing: --fail-on {fail_on})"
        )
    if fail_on == "never":
        return Verdict("DONE", "pass", "no errors (--fail-on never)")
    return Verdict("PASS", "pass", f"nothing at or above --fail-on {fail_on}")


def cut_notes(summary: Mapping[str, Any]) -> list[str]:
    """What the run left out on purpose (--max-urls, --include/--exclude), as sentences."""
    notes = []
    if summary.get("max_urls_reached"):
        notes.append(
            f"--max-urls reached: stopped after {counted(as_int(summary.get('urls')), 'URL')}; "
            "the sitemaps list more that were not checked"
        )
    urls = as_int(summary.get("excluded_urls"))
    if urls:
        notes.append(f"excluded: {counted(urls, 'listed URL')} (--include/--exclude) not checked")
    sitemaps = as_int(summary.get("excluded_sitemaps"))
    if sitemaps:
        notes.append(
            f"excluded: {counted(sitemaps, 'sitemap')} (--include-sitemap/--exclude-sitemap) "
            "not read"
        )
    unread = unread_children_note(summary)
    if unread:
        notes.append(unread)
    return notes


def credentials_note(migration: Any) -> str | None:
    """`migrate`: the new site asked for credentials (HTTP 401), once for the whole run, and
    how to give them; None when it did not."""
    asked = as_dict(as_dict(migration).get("credentials"))
    n = as_int(asked.get("asked"))
    if not n:
        return None
    total = as_int(migration.get("old_urls"))
    challenge = asked.get("challenge")
    how = f" (WWW-Authenticate: {challenge})" if str_or_none(challenge) else ""
    return (
        f"the new site {migration.get('new_origin')} asks for credentials: HTTP 401{how} for "
        f"{n:,} of {total:,} old URLs, so where they land was not seen; give them with "
        "--auth USER:PASSWORD (or SITEMAP_AUDIT_AUTH=USER:PASSWORD, kept out of the process "
        "list), --cookie 'NAME=VALUE' or --header 'Authorization: ...', and run again"
    )


def migration_head(migration: Any) -> str:
    """What the migration table is of: `N old URLs checked on ` (the new origin follows)."""
    total = as_dict(migration).get("old_urls")
    return f"{total:,} old URLs checked on " if isinstance(total, int) else "Checked on "


def migration_rows(migration: Any) -> list[tuple[str, int, float]]:
    """(outcome, count, percent) of a summary's `migration` block, malformed rows left out."""
    rows: list[tuple[str, int, float]] = []
    for name, entry in as_dict(as_dict(migration).get("outcomes")).items():
        count, share = as_dict(entry).get("count"), as_dict(entry).get("percent")
        if isinstance(count, int) and isinstance(share, int | float):
            rows.append((str(name), count, float(share)))
    return rows
