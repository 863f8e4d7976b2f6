"""`sitemap-audit diff OLD NEW`: what changed between two audits.

OLD and NEW are jsonl reports (any version: missing optional fields such as
`line` or `elapsed_ms` are fine) or state files written by `--state` (detected
from the SQLite header). The comparison:

- findings, keyed by (code, url or else sitemap): new, fixed, still failing;
- url records, keyed by url: URLs added to and removed from the sitemaps, and
  URLs whose outcome (status, robots block, network failure) changed;
- sitemap records, keyed by url: sitemaps added and removed.

Both sides must be complete runs. A jsonl report is partial when its summary
says `"interrupted": true` or `"partial": true`, or when it has no summary at
all (the process was killed); a state file when its last run is not complete.
Compared with a complete one, a partial side would show every URL it never
reached as removed and its findings as fixed (or, the other way round, as
new): `diff` compares nothing then, and raises DiffPartial, one line naming
the partial file (the CLI exits 2).

A run cut by `--max-urls` (its summary says `"max_urls_reached": true`) finished,
but checked only some of the listed URLs, and never records the others. It is
compared for what it checked: a URL that only the other side checked is not
"removed" (or "added"), its findings are neither "fixed" nor "new", and neither is
a finding about a sitemap the cut run did not read; no sitemap counts as removed
(or added) against it, and `--alert-drop` does not judge what it never listed. The
output names the cut side and how many URLs were not compared, and the exit status
follows the new findings among the URLs both sides checked. A budgeted run
(`--budget`) is complete: it carries the URLs it did not request tonight.

`url` records of URLs that only the ledger or the intent file brought into a run
(`"source": "ledger"` or `"intent"`) are not URLs of the sitemaps: they are not
compared as added, removed or changed URLs (their findings are).

Memory stays bounded whatever the size of the reports: both sides are loaded
into a temporary on-disk SQLite database in batches and compared with indexed
queries whose rows are streamed to the writer; nothing holds one dict per URL
(audit.state.compare, with the alerts judged on it). This module reads the inputs,
refuses partial ones and writes the comparison as text, markdown or jsonl.

Imports only the standard library, audit.report (for read_jsonl and the severity
helpers), audit.state.compare, audit.state.schema (a state file's first bytes) and, for a
state file, audit.state.store; nothing from
the crawl, HTTP or parser layers.
"""

from __future__ import annotations

import functools
import itertools
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from audit.core.printable import printable
from audit.report import ReportInputError, at_or_above, read_jsonl
from audit.report.aggregate import as_dict, int_or_none, str_or_none, where
from audit.state.compare import SECTIONS, Alerts, Comparison, find_alerts
from audit.state.schema import StateError, is_state_file

__all__ = [
    "DIFF_FORMATS",
    "Alerts",
    "DiffError",
    "DiffPartial",
    "DiffSummary",
    "cut_reason",
    "diff_reports",
    "partial_reason",
    "records_of",
]

DIFF_FORMATS: tuple[str, ...] = ("text", "markdown", "jsonl")


class DiffError(ValueError):
    """An input that cannot be compared; the message is one line naming the file."""


class DiffPartial(DiffError):
    """A side is the report of a run that did not finish: nothing is compared."""


@dataclass
class DiffSummary:
    counts: dict[str, int] = field(default_factory=dict)
    new_at_or_above: int = 0
    fail_on: str = "error"
    alerts: list[str] = field(default_factory=list)  # --alert-drop, --alert-new-errors
    cut: list[str] = field(default_factory=list)  # "old", "new": sides cut by --max-urls
    not_compared: int = 0  # URLs one side checked and the cut side did not

    @property
    def failed(self) -> bool:
        return self.new_at_or_above > 0 or bool(self.alerts)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "diff-summary",
            **self.counts,
            "fail_on": self.fail_on,
            "new_at_or_above": self.new_at_or_above,
            "cut": self.cut,
            "not_compared": self.not_compared,
        }


def partial_reason(summary: dict[str, Any] | None) -> str | None:
    """Why a jsonl report with this summary record (None: it has none) is partial, or
    None when it is the report of a finished run."""
    if summary is None:
        return "no summary record: the run never finished"
    for flag in ("interrupted", "partial"):
        if summary.get(flag) is True:
            stopped = summary.get("stopped_by")
            by = f", stopped by {stopped}" if str_or_none(stopped) else ""
            return f'its summary says "{flag}": true{by}'
    return None


def cut_reason(summary: dict[str, Any] | None) -> str | None:
    """Why a finished report checked only some of its listed URLs (`--max-urls`), or
    None when it checked them all."""
    said = as_dict(summary)  # (None, no summary: {})
    if said.get("max_urls_reached") is not True:
        return None
    urls = int_or_none(said.get("urls"))
    after = f" after {urls} URL{'' if urls == 1 else 's'}" if urls is not None else ""
    return f"cut by --max-urls{after}"


def _state_partial(path: str | Path) -> str | None:
    from audit.state.store import read_status

    try:
        status = read_status(path)
    except StateError as exc:
        raise DiffError(str(exc)) from exc
    return None if status == "complete" else f"its last run did not complete (status {status})"


def _refuse_partial(partial: list[tuple[str | Path, str]]) -> DiffPartial:
    sides = "; ".join(f"{path}: {why}" for path, why in partial)
    what = "a partial report" if len(partial) == 1 else "partial reports"
    return DiffPartial(
        f"{sides}: {what}, not compared (a run that did not finish would show what it never "
        "reached as fixed or new); diff two complete runs"
    )


def records_of(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a jsonl report or of a state file's last run."""
    p = Path(path)
    records: Iterator[dict[str, Any]]
    if is_state_file(p, DiffError):
        from audit.state.store import read_records

        records = read_records(p)
    else:
        records = read_jsonl(p)
    try:  # (both read lazily: what is wrong with either surfaces here)
        yield from records
    except (StateError, ReportInputError) as exc:
        raise DiffError(str(exc)) from exc


# --- output -------------------------------------------------------------------


# the line of a row of the sections that are not findings'
_ROW_LINES: dict[str, str] = {
    "status": "{old} -> {new}  {url}",
    "added": "{url}  ({outcome})",
    "removed": "{url}  ({outcome})",
}


def _line(section: str, row: dict[str, Any]) -> str:
    if section not in ("new", "fixed", "still"):
        return _ROW_LINES.get(section, "{url}").format(**row)
    times = f" (x{row['count']})" if row["count"] > 1 else ""
    place = where(row.get("sitemap"), row.get("line"))  # (lines count from 1)
    parts = [
        f"{row['severity']:<7} {row['code']}{times}",
        row["url"],
        f"[{place}]" if place else "",
        row["message"] if section != "fixed" else "",
    ]
    return "  ".join(filter(None, parts))


def _md(text: str) -> str:
    return printable(text).replace("|", "\\|")


@dataclass(frozen=True, slots=True)
class _Style:
    """How text or markdown writes each part of a diff; `esc` makes record text safe."""

    esc: Callable[[str], str]
    title: str  # {old} -> {new}
    # the count of each section: {n} {title} each, joined, between a head and a tail; the
    # sections in `always` are counted even at 0, the others only when they have rows
    counts: tuple[str, str, str, str]  # head, each count, what joins them, tail
    always: frozenset[str]
    coverage: str
    section: str  # {title} ({n})
    row: str
    more: str  # {n}: the rows not shown
    verdict: str


_STYLES: dict[str, _Style] = {
    "markdown": _Style(
        esc=_md,
        title="# sitemap-audit diff\n\n`{old}` → `{new}`\n\n",
        counts=("| change | count |\n| --- | ---: |\n", "| {title} | {n} |\n", "", ""),
        always=frozenset(key for key, _ in SECTIONS),  # a table of every section
        coverage="\ncoverage: {}\n",
        section="\n## {title} ({n})\n\n",
        row="- {}\n",
        more="- ... and {n} more (`--limit 0` lists all)\n",
        verdict="\n**{}**\n",
    ),
    "text": _Style(
        esc=printable,
        title="sitemap-audit diff\n{old} -> {new}\n",
        counts=("", "{n} {title}", ", ", "\n"),
        always=frozenset({"new", "fixed"}),
        coverage="coverage: {}\n",
        section="\n{title} ({n})\n",
        row="  {}\n",
        more="  ... and {n} more (--limit 0 lists all)\n",
        verdict="\n{}\n",
    ),
}


# summary.coverage counts a diff compares: (key, label)
_COVERAGE: tuple[tuple[str, str], ...] = (
    ("orphans", "orphans"),
    ("unlisted", "unlisted"),
    ("broken_links", "broken links"),
)


def coverage_line(old: dict[str, Any] | None, new: dict[str, Any] | None) -> str | None:
    """`orphans 3 -> 5, unlisted 0 -> 2, broken links 1 -> 1` from the two summaries'
    `coverage` (crawl --links), or None unless both carry it. A side whose link crawl
    was incomplete is named: its orphans were withheld, not fixed."""
    covs: list[Any] = [as_dict(summary).get("coverage") for summary in (old, new)]
    if not all(isinstance(cov, dict) for cov in covs):
        return None
    a, b = covs
    sides = [side for side, cov in (("old", a), ("new", b)) if cov.get("complete") is False]
    cut = f" (link crawl incomplete: {' and '.join(sides)})" if sides else ""
    return ", ".join(f"{t} {a.get(k, 0)} -> {b.get(k, 0)}" for k, t in _COVERAGE) + cut


def cut_lines(names: tuple[str, str], cuts: dict[int, str], not_compared: int) -> list[str]:
    """What a side cut by --max-urls leaves out of the comparison, in plain words."""
    lines = [f"{names[side]}: {why}" for side, why in cuts.items()]
    if cuts:
        only = "the URLs both runs checked" if len(cuts) == 1 else "the URLs both cut runs checked"
        lines.append(
            f"only {only} are compared: {not_compared} URL{'' if not_compared == 1 else 's'} "
            "checked by one side only are neither removed, added, fixed nor new"
        )
    return lines


def _write_text(
    out: TextIO,
    db: Comparison,
    summary: DiffSummary,
    limit: int,
    names: tuple[str, str],
    fmt: str,
    coverage: str | None,
    cut: list[str],
) -> None:
    """Text or markdown: the title, the two inputs, what a cut side leaves out, the count
    of each section (and the coverage line), at most `limit` rows of each section, the
    verdict."""
    counts = summary.counts
    old, new = names
    style = _STYLES[fmt]
    out.write(style.title.format(old=style.esc(old), new=style.esc(new)))
    write_alerts(out, fmt, cut)  # (the cut lines stand out as alerts do)
    head, count, joined, tail = style.counts
    shown = [
        count.format(n=counts[k], title=t) for k, t in SECTIONS if counts[k] or k in style.always
    ]
    out.write(head + joined.join(shown) + tail)
    out.write(style.coverage.format(style.esc(coverage)) if coverage else "")
    for key, title in SECTIONS:
        if not counts[key]:
            continue
        out.write(style.section.format(title=title, n=counts[key]))
        written = 0
        for row in itertools.islice(db.rows(key), limit or None):
            written += 1
            # record values: no control character reaches a terminal
            out.write(style.row.format(style.esc(_line(key, row))))
        if written < counts[key]:
            out.write(style.more.format(n=counts[key] - written))
    verdict = (
        f"FAIL: {summary.new_at_or_above} new finding(s) at or above --fail-on {summary.fail_on}"
        if summary.failed
        else f"OK: no new finding at or above --fail-on {summary.fail_on}"
    )
    if cut:  # a side cut by --max-urls
        verdict += " among the URLs both runs checked"
    out.write(style.verdict.format(verdict))


def _count(db: Comparison, fail_on: str) -> DiffSummary:
    """The rows of each section, and the new findings at or above `fail_on`."""
    counts: dict[str, int] = {}
    new_at_or_above = 0
    for key, _ in SECTIONS:
        counts[key] = 0
        for row in db.rows(key):
            counts[key] += 1
            new_at_or_above += key == "new" and at_or_above(row["severity"], fail_on)
    return DiffSummary(counts, new_at_or_above, fail_on)


NO_ALERTS: Final = Alerts()  # no threshold: no alert


def diff_reports(
    old: str | Path,
    new: str | Path,
    out: TextIO,
    *,
    fmt: str = "text",
    fail_on: str = "error",
    limit: int = 100,
    alerts: Alerts = NO_ALERTS,
    cut: tuple[bool, bool] = (False, False),
) -> DiffSummary:
    """Compare two reports (or state files) and write the differences as `fmt`.

    `limit` bounds the rows per section of text and markdown (0: all); jsonl
    always lists every row. `alerts`: thresholds whose alert lines head the output
    (and make the summary failed). `cut`: sides known to be cut by --max-urls when their
    records do not say so. Raises DiffError for an unreadable input, DiffPartial (writing
    nothing) when a side is the report of a run that did not finish.
    """
    if fmt not in DIFF_FORMATS:
        raise DiffError(f"unknown diff format {fmt!r}; use one of {', '.join(DIFF_FORMATS)}")
    states = {path: is_state_file(path, DiffError) for path in (old, new)}
    # a state says at once whether its run completed; a jsonl report says so at its end
    partial = [(p, why) for p in (old, new) if states[p] and (why := _state_partial(p))]
    if partial:
        raise _refuse_partial(partial)
    with tempfile.TemporaryDirectory(prefix="sitemap-audit-diff-") as tmp:
        db = Comparison(tmp)
        summaries: list[dict[str, Any] | None] = []
        try:
            for side, path in enumerate((old, new)):
                last = db.load(side, records_of(path))
                summaries.append(last)
                if not states[path] and (why := partial_reason(last)):
                    partial.append((path, why))
            if partial:
                raise _refuse_partial(partial)
            db.index()
            cuts = _cuts(summaries, cut)
            db.mark_cut((0 in cuts, 1 in cuts))
            summary = _count(db, fail_on)
            summary.cut = [("old", "new")[side] for side in cuts]
            summary.not_compared = db.not_compared()  # 0 unless a side is cut
            summary.alerts = find_alerts(db, alerts)
            write_alerts(out, fmt, summary.alerts)  # (none: nothing written)
            names = (str(old), str(new))
            if fmt == "jsonl":
                _write_jsonl(out, db, summary)
            else:
                cut_text = cut_lines(names, cuts, summary.not_compared)
                coverage = coverage_line(*summaries)
                _write_text(out, db, summary, limit, names, fmt, coverage, cut_text)
        finally:
            db.conn.close()
    return summary


def _cuts(summaries: list[dict[str, Any] | None], cut: tuple[bool, bool]) -> dict[int, str]:
    """side -> why, of each side cut by --max-urls (in side order): its summary says so, or
    the caller does (a state file of old whose records do not)."""
    return {
        side: why
        for side, last in enumerate(summaries)
        if (why := cut_reason(last) or ("cut by --max-urls" if cut[side] else None))
    }


def _write_jsonl(out: TextIO, db: Comparison, summary: DiffSummary) -> None:
    for key, _ in SECTIONS:
        for row in db.rows(key):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    out.write(json.dumps(summary.to_json()) + "\n")


# A line that stands out (an alert; in text and markdown, what a cut side leaves out) in
# each format: (what makes its text safe, where it goes). jsonl: a `diff-alert` record,
# {"type": "diff-alert", "alert": LINE} as json.dumps writes that dict.
_EMPHASIS: dict[str, tuple[Callable[[str], str], str]] = {
    "text": (printable, "{}\n"),
    "markdown": (_md, "**{}**\n\n"),
    "jsonl": (
        functools.partial(json.dumps, ensure_ascii=False),
        '{{"type": "diff-alert", "alert": {}}}\n',
    ),
}


def write_alerts(out: TextIO, fmt: str, lines: list[str]) -> None:
    """The alert lines at the head of the output (jsonl: `diff-alert` records); text and
    markdown write what a cut side leaves out the same way."""
    esc, template = _EMPHASIS[fmt]
    out.write("".join(template.format(esc(line)) for line in lines))
