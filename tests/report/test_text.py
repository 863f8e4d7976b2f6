"""The text report (audit/report/text.py): for a terminal, colour only on one."""

from __future__ import annotations

import io
import re

from audit.report import (
    make_writer,
)
from tests.report.reportkit import (
    PAGES,
    run,
    stream,
    summary_of,
)


def test_text_report_for_a_terminal() -> None:
    text = run("text", stream(), examples=1)
    lines = text.splitlines()
    assert lines[0] == "sitemap-audit report"
    assert "4 sitemaps, 11 URLs, 4.2 s" in text
    assert "findings: 7 errors, 6 warnings, 2 info" in text
    by_code = [line.split()[1] for line in lines if re.match(r"  (error|warning|info) ", line)]
    # errors first, most frequent first
    assert set(by_code[:2]) == {"url-not-found", "loc-invalid"}
    assert by_code[2:5] == ["sitemap-not-found", "url-server-error", "url-unreachable"]
    assert by_code[-1] in {"robots-no-sitemap", "lastmod-missing"}
    assert f"  {PAGES}:9  https://ex.com/missing  404 Not Found" in text
    assert "… and 1 more" in text
    hosts = lines[lines.index("hosts") + 1 :][:2]
    assert hosts[0].split() == [
        "host",
        "requests",
        "rate/s",
        "retries",
        "429",
        "answers",
        "5xx",
        "answers",
        "backoff",
        "(s)",
        "slow",
    ]
    assert hosts[1].split() == ["ex.com", "12", "9.5", "2", "1", "3", "1.5", "no"]
    assert lines[-1] == "FAIL: 7 errors at or above --fail-on error"
    assert "\x1b[" not in text  # not a terminal
    never = run("text", stream(), fail_on="never").splitlines()[-1]
    assert never == "DONE: 7 errors (not failing: --fail-on never)"
    quiet = [r for r in stream() if r.get("severity") != "error" and r["type"] != "summary"]
    quiet.append(summary_of(quiet))
    assert run("text", quiet).splitlines()[-1] == "PASS: nothing at or above --fail-on error"


class Tty(io.StringIO):
    """An output that says it is a terminal (the text report colours only those)."""

    def isatty(self) -> bool:
        return True


def test_text_uses_colour_only_on_a_terminal() -> None:
    out = Tty()
    writer = make_writer("text", out)
    for rec in stream():
        writer.write(rec)
    writer.close()
    assert "\x1b[31m" in out.getvalue()


def test_migrations_outcomes_are_green_when_ok_red_when_some_old_url_had_them() -> None:
    out = Tty()
    writer = make_writer("text", out)
    summary = summary_of([])
    summary["migration"] = {
        "old_urls": 10,
        "new_origin": "https://new.example",
        "outcomes": {
            "ok": {"count": 0, "percent": 0.0},
            "not-found": {"count": 10, "percent": 100.0},
            "lost": {"count": 0, "percent": 0.0},
        },
    }
    writer.write(summary)
    writer.close()
    lines = out.getvalue().splitlines()
    assert any(line.endswith("10 old URLs checked on https://new.example\x1b[0m") for line in lines)

    def row(name: str) -> str:
        return next(line for line in lines if f"  {name} " in line)

    assert row("ok").startswith("\x1b[32m  ok ")  # green even when no old URL was ok
    assert row("not-found").startswith("\x1b[31m  not-found ")  # some old URL had it
    assert row("lost").startswith("  lost ") and "\x1b[" not in row("lost")  # none had it


def test_an_example_names_its_url_unless_it_is_none_or_the_sitemap_itself() -> None:
    sitemap = "https://ex.com/sitemap.xml"
    recs: list[dict[str, object]] = [
        {
            "type": "finding",
            "code": "url-not-found",
            "severity": "error",
            "url": url,
            "sitemap": sitemap,
            "line": 4,
            "message": message,
        }
        for url, message in (
            ("https://ex.com/a", "a page"),
            (sitemap, "the sitemap"),
            (None, "no URL"),
        )
    ]
    recs.append(summary_of(recs))
    lines = run("text", recs).splitlines()
    assert f"  {sitemap}:4  https://ex.com/a  a page" in lines
    assert f"  {sitemap}:4  the sitemap" in lines
    assert f"  {sitemap}:4  no URL" in lines
