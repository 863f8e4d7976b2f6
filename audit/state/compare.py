"""The comparison of `diff` (audit.state.diff): both sides loaded into a temporary
on-disk SQLite database in batches and compared with indexed queries whose rows are
streamed to the writer (nothing holds one dict per URL), and the alerts judged on it
(`--alert-drop`, `--alert-new-errors`).

Keys: findings by (code, url or else sitemap); url records by url, with their outcome
(status, robots block, network failure) as one comparable word; sitemap records by url.
A side cut by --max-urls says nothing of what it did not check (`mark_cut`).

Imports only the standard library and audit.report.aggregate (severities, numbers).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.report.aggregate import int_or_none, rank, severity_of

__all__ = ["FINDING_SECTIONS", "SECTIONS", "Alerts", "Comparison", "find_alerts"]

BATCH = 5000  # rows per executemany while loading
# url records of URLs no sitemap listed tonight (contracts/nights.md): not sitemap URLs
NOT_LISTED = frozenset({"ledger", "intent"})

# Sections in output order: (name, title)
FINDING_SECTIONS: tuple[tuple[str, str], ...] = (
    ("new", "new findings"),
    ("fixed", "fixed findings"),
    ("still", "still failing"),
)
SECTIONS: tuple[tuple[str, str], ...] = (
    *FINDING_SECTIONS,
    ("added", "URLs added to the sitemaps"),
    ("removed", "URLs removed from the sitemaps"),
    ("status", "status changes"),
    ("sitemaps_added", "sitemaps added"),
    ("sitemaps_removed", "sitemaps removed"),
)


def _str(value: Any, default: str | None = None) -> str | None:
    """A record's text field: a non-empty str, else `default`."""
    return value if isinstance(value, str) and value else default


def _outcome(rec: dict[str, Any]) -> str:
    """What a URL answered, as one comparable word: its status, else why it has none."""
    status = int_or_none(rec.get("status"))
    if status is not None:
        return str(status)
    if rec.get("robots") == "blocked":
        return "robots-blocked"
    error = _str(rec.get("error"))
    if error is None:
        return "none"
    return "not-requested" if error.startswith("not requested") else "no-answer"


# A side cut by --max-urls says nothing of what it did not check: such a target is neither
# new nor fixed (the nc table, empty unless a side is cut).
_COMPARED = "AND NOT EXISTS (SELECT 1 FROM nc WHERE nc.side = a.side AND nc.target = a.target)"
# A finding key may repeat within one report (two element-unknown in one sitemap): it is
# one row here, with how many times it occurs; its other columns are those of its most
# severe occurrence (SQLite's bare columns beside MAX).
_FINDINGS = """
    SELECT code, severity, url, sitemap, line, message, count, target AS key FROM (
        SELECT code, target, severity, url, sitemap, line, message, COUNT(*) AS count,
            MAX(rank) AS r
        FROM f AS a WHERE side = ? AND {cond}
            (SELECT 1 FROM f AS b WHERE b.side = ? AND b.code = a.code AND b.target = a.target)
            {compared}
        GROUP BY code, target
    ) ORDER BY r DESC, code, target
"""
_URLS = """
    SELECT url, MIN(outcome) AS outcome, MIN(sitemap) AS sitemap FROM u AS a
    WHERE side = ? AND NOT EXISTS (SELECT 1 FROM u AS b WHERE b.side = ? AND b.url = a.url)
    GROUP BY url ORDER BY url
"""
_STATUS = """
    SELECT n.url AS url, MIN(o.outcome) AS old, MIN(n.outcome) AS new, MIN(n.sitemap) AS sitemap
    FROM u AS n JOIN u AS o ON o.side = 0 AND o.url = n.url
    WHERE n.side = 1 AND n.outcome IS NOT o.outcome
    GROUP BY n.url ORDER BY n.url
"""
_SITEMAPS = """
    SELECT DISTINCT url FROM s AS a WHERE side = ? AND NOT EXISTS
        (SELECT 1 FROM s AS b WHERE b.side = ? AND b.url = a.url) ORDER BY url
"""
# Each section: the head of its rows, its query, the query's (side, other side), and
# whether the other side must have checked (or read) everything to vouch for a row: a
# URL or sitemap one side has and the other lacks (a cut run stops reading sitemaps too)
_ROWS: dict[str, tuple[dict[str, str], str, tuple[int, ...], bool]] = {
    "new": (
        {"type": "diff-finding", "change": "new"},
        _FINDINGS.format(cond="NOT EXISTS", compared=_COMPARED),
        (1, 0),
        False,
    ),
    "fixed": (
        {"type": "diff-finding", "change": "fixed"},
        _FINDINGS.format(cond="NOT EXISTS", compared=_COMPARED),
        (0, 1),
        False,
    ),
    "still": (
        {"type": "diff-finding", "change": "still"},
        _FINDINGS.format(cond="EXISTS", compared=""),
        (1, 0),
        False,
    ),
    "added": ({"type": "diff-url", "change": "added"}, _URLS, (1, 0), True),
    "removed": ({"type": "diff-url", "change": "removed"}, _URLS, (0, 1), True),
    "status": ({"type": "diff-status"}, _STATUS, (), False),
    "sitemaps_added": ({"type": "diff-sitemap", "change": "added"}, _SITEMAPS, (1, 0), True),
    "sitemaps_removed": ({"type": "diff-sitemap", "change": "removed"}, _SITEMAPS, (0, 1), True),
}


class Comparison:
    """Both sides of a diff in a temporary on-disk SQLite database (bounded memory),
    compared by indexed queries whose rows are streamed."""

    def __init__(self, directory: str) -> None:
        self.conn = sqlite3.connect(str(Path(directory) / "diff.sqlite3"))
        self.conn.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            PRAGMA temp_store = FILE;
            CREATE TABLE f (side INTEGER, code TEXT, target TEXT, severity TEXT, rank INTEGER,
                            url TEXT, sitemap TEXT, line INTEGER, message TEXT);
            CREATE TABLE u (side INTEGER, url TEXT, outcome TEXT, sitemap TEXT);
            CREATE TABLE s (side INTEGER, url TEXT);
            CREATE TABLE nc (side INTEGER, target TEXT, is_url INTEGER);
            """
        )
        self.cut: tuple[bool, bool] = (False, False)

    def load(self, side: int, records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
        """Load one side; return its (last) summary record, None when it has none."""
        summary: dict[str, Any] | None = None
        f_rows: list[tuple[Any, ...]] = []
        u_rows: list[tuple[Any, ...]] = []
        s_rows: list[tuple[Any, ...]] = []
        for rec in records:
            kind = rec.get("type")
            if kind == "finding":
                code = _str(rec.get("code"))
                if code is None:
                    continue
                url, sitemap = _str(rec.get("url")), _str(rec.get("sitemap"))
                sev = severity_of(rec)
                f_rows.append(
                    (
                        side,
                        code,
                        url or sitemap or "",
                        sev,
                        rank(sev),
                        url,
                        sitemap,
                        int_or_none(rec.get("line")),
                        _str(rec.get("message"), ""),
                    )
                )
                if len(f_rows) >= BATCH:
                    self.conn.executemany("INSERT INTO f VALUES (?,?,?,?,?,?,?,?,?)", f_rows)
                    f_rows.clear()
            elif kind == "url":
                url = _str(rec.get("url"))
                if url is None or rec.get("source") in NOT_LISTED:
                    continue
                u_rows.append((side, url, _outcome(rec), _str(rec.get("sitemap"))))
                if len(u_rows) >= BATCH:
                    self.conn.executemany("INSERT INTO u VALUES (?,?,?,?)", u_rows)
                    u_rows.clear()
            elif kind == "sitemap":
                url = _str(rec.get("url"))
                if url is not None:
                    s_rows.append((side, url))
            elif kind == "summary":
                summary = rec
        self.conn.executemany("INSERT INTO f VALUES (?,?,?,?,?,?,?,?,?)", f_rows)
        self.conn.executemany("INSERT INTO u VALUES (?,?,?,?)", u_rows)
        self.conn.executemany("INSERT INTO s VALUES (?,?)", s_rows)
        return summary

    def index(self) -> None:
        self.conn.executescript(
            """
            CREATE INDEX f_key ON f (side, code, target);
            CREATE INDEX u_key ON u (side, url);
            CREATE INDEX s_key ON s (side, url);
            """
        )

    def mark_cut(self, cut: tuple[bool, bool]) -> None:
        """Note, for each side cut by --max-urls, the targets of the other side it cannot
        vouch for: the URLs it did not check, and the sitemaps it did not read."""
        self.cut = cut
        for side, other in ((0, 1), (1, 0)):
            if not cut[other]:
                continue
            self.conn.execute(
                """INSERT INTO nc SELECT DISTINCT ?, url, 1 FROM u AS a WHERE side = ? AND
                   NOT EXISTS (SELECT 1 FROM u AS b WHERE b.side = ? AND b.url = a.url)""",
                (side, side, other),
            )
            self.conn.execute(
                """INSERT INTO nc SELECT DISTINCT ?, sitemap, 0 FROM f AS a
                   WHERE side = ? AND url IS NULL AND sitemap IS NOT NULL AND
                   NOT EXISTS (SELECT 1 FROM s AS b WHERE b.side = ? AND b.url = a.sitemap)""",
                (side, side, other),
            )
        self.conn.execute("CREATE INDEX nc_key ON nc (side, target)")

    def not_compared(self) -> int:
        """URLs one side checked that a side cut by --max-urls did not."""
        (n,) = self.conn.execute(
            "SELECT COUNT(DISTINCT target) FROM nc WHERE is_url = 1"
        ).fetchone()
        return int(n)

    def rows(self, section: str) -> Iterator[dict[str, Any]]:
        """The rows of one of SECTIONS, each its head and its query's named columns."""
        head, sql, sides, vouched = _ROWS[section]
        if vouched and self.cut[sides[1]]:  # not checked (or read) by a cut run is not
            return  # "removed", nor "added"
        cursor = self.conn.execute(sql, sides)
        cursor.row_factory = sqlite3.Row  # (before the first row is read)
        for row in cursor:
            yield {**head, **dict(row)}

    def drops(self, pct: float) -> list[str]:
        """Alert lines for the sitemaps (still there) and the whole audit that lost `pct`%
        of their URLs. A new side cut by --max-urls never listed what it did not reach:
        nothing is judged."""
        if self.cut[1]:
            return []
        lines: list[str] = []
        sql = _LEFT.format(group="sitemap,", by=_STILL_THERE + " GROUP BY sitemap ORDER BY sitemap")
        for sitemap, old, left in self.conn.execute(sql):
            line = _drop_line(f"sitemap {sitemap}", old, left, pct)
            if line:
                lines.append(line)
        old, left = self.conn.execute(_LEFT.format(group="", by="")).fetchone()
        whole = _drop_line("the audit", old, left, pct)
        return lines + ([whole] if whole else [])


# --- alerts (--alert-drop, --alert-new-errors) -----------------------------------------


@dataclass(frozen=True, slots=True)
class Alerts:
    """Thresholds of `diff`: a sitemap that vanished, or a sitemap or the whole audit
    that lost at least `drop_pct` percent of its URLs; more than `new_errors` new errors."""

    drop_pct: float | None = None
    new_errors: int | None = None


def find_alerts(db: Comparison, alerts: Alerts) -> list[str]:
    """One plain line per alert, in a fixed order."""
    lines: list[str] = []
    if alerts.drop_pct is not None:
        lines += [f"ALERT: sitemap vanished: {row['url']}" for row in db.rows("sitemaps_removed")]
        lines += db.drops(alerts.drop_pct)
    if alerts.new_errors is not None:
        new = sum(row["count"] for row in db.rows("new") if row["severity"] == "error")
        if new > alerts.new_errors:
            lines.append(
                f"ALERT: {new} new error(s), more than --alert-new-errors {alerts.new_errors}"
            )
    return lines


def _drop_line(what: str, old: int, left: int, pct: float) -> str | None:
    if left <= 0:  # (left counts some of old's URLs: old > 0 whenever left is)
        return None
    lost = left * 100.0 / old
    if lost < pct:
        return None
    return (
        f"ALERT: {what} lost {lost:.0f}% of its URLs ({left} of {old} no longer listed; "
        f"--alert-drop {pct:g})"
    )


# (URLs the old side listed, those of them no sitemap of the new side lists): URLs that
# left the sitemaps, not the net change (10 gone and 10 others added is 10 lost)
_LEFT = """
    SELECT {group} COUNT(DISTINCT url),
        COUNT(DISTINCT CASE WHEN NOT EXISTS (SELECT 1 FROM u AS b WHERE b.side = 1
            AND b.url = a.url AND b.sitemap IS NOT NULL) THEN url END)
    FROM u AS a WHERE side = 0 AND sitemap IS NOT NULL {by}
"""
# a sitemap not among those removed (the rows of "sitemaps_removed": read by the old
# side and not by the new one): its drop is an alert; a removed one's is its vanishing
_STILL_THERE = """AND NOT (
    EXISTS (SELECT 1 FROM s WHERE s.side = 0 AND s.url = a.sitemap)
    AND NOT EXISTS (SELECT 1 FROM s WHERE s.side = 1 AND s.url = a.sitemap))"""
