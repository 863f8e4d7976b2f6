"""Reports tell the truth (issue 17): a run that did not finish says so and how far it
got in every human-facing format; the verdict matches the findings (no green PASS with
errors under --fail-on never, no PASS when nothing was audited); cuts and exclusions are
stated; migrate reports keep the migration (csv columns, outcome tables)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from lxml import html as lhtml

from audit.report import make_writer
from tests.report.reportkit import parse_junit

SITEMAP = "https://ex.com/sitemap.xml"


def run(fmt: str, records: list[dict[str, Any]], **opts: Any) -> str:
    out = io.StringIO()
    writer = make_writer(fmt, out, **opts)
    for rec in records:
        writer.write(rec)
    writer.close()
    return out.getvalue()


def summary(**extra: Any) -> dict[str, Any]:
    errors = extra.pop("errors", 7)
    return {
        "type": "summary",
        "sitemaps": 2,
        "urls": 40,
        "findings": {"error": errors, "warning": 1, "info": 0},
        "by_code": {"url-not-found": errors, "url-redirect": 1},
        "duration_s": 3.0,
        **extra,
    }


def records(last: dict[str, Any] | None) -> list[dict[str, Any]]:
    recs: list[dict[str, Any]] = [{"type": "sitemap", "url": SITEMAP, "kind": "urlset"}]
    for i in range(7):
        page = f"https://ex.com/p/{i}"
        recs.append({"type": "url", "url": page, "sitemap": SITEMAP, "status": 404})
        recs.append(
            {
                "type": "finding",
                "code": "url-not-found",
                "severity": "error",
                "url": page,
                "sitemap": SITEMAP,
                "message": "404",
            }
        )
    return recs + ([last] if last is not None else [])


def html_verdict(text: str) -> tuple[str, str]:
    """The HTML badge's text and class."""
    badge = lhtml.fromstring(text).get_element_by_id("verdict")
    return badge.text_content(), badge.get("class") or ""


def md_verdict(text: str) -> str:
    """The verdict row of the markdown summary table, as rendered (escapes removed)."""
    row = next(line for line in text.splitlines() if line.startswith("| Verdict"))
    return row.replace("\\", "")


# --- 17.1: a partial run says so everywhere ----------------------------------

INTERRUPTED = summary(interrupted=True, stopped_by="SIGTERM")
HOW_FAR = "after 2 sitemaps and 40 URLs"


def test_an_interrupted_summary_is_stated_in_every_human_format() -> None:
    recs = records(INTERRUPTED)
    text = run("text", recs)
    assert "incomplete: interrupted" in text.splitlines()[0]
    assert text.splitlines()[-1].startswith("INTERRUPTED: the run was interrupted by SIG")
    assert HOW_FAR in text and "SIGTERM" in text
    md = run("markdown", recs)
    assert "> **Incomplete:**" in md and HOW_FAR in md and "SIGTERM" in md
    assert "**INTERRUPTED**" in md_verdict(md)
    page = run("html", recs)
    word, cls = html_verdict(page)
    assert word.startswith("INTERRUPTED") and "fail" not in cls and "pass" not in cls
    notice = lhtml.fromstring(page).get_element_by_id("partial").text_content()
    assert HOW_FAR in notice and "SIGTERM" in notice
    assert "<title>Sitemap audit: INTERRUPTED</title>" in page


def test_junit_and_sarif_mark_the_run_not_successful() -> None:
    recs = records(INTERRUPTED)
    root = parse_junit(run("junit", recs))
    assert root.get("errors") == "1"
    error = root.find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "interrupted"
    assert HOW_FAR in (error.get("message") or "") and "SIGTERM" in (error.text or "")
    sarif = json.loads(run("sarif", recs))
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and HOW_FAR in note["message"]["text"]


def test_a_stream_without_summary_is_partial_in_every_human_format() -> None:
    recs = records(None)  # a killed process: no summary record
    how_far = "after 1 sitemap and 7 URLs"
    for fmt in ("text", "markdown", "html"):
        assert "the run did not finish " + how_far in run(fmt, recs), fmt
    assert run("text", recs).splitlines()[-1].startswith("PARTIAL:")
    assert html_verdict(run("html", recs))[0].startswith("PARTIAL")
    error = parse_junit(run("junit", recs)).find("testsuite/testcase/error")
    assert error is not None and how_far in (error.text or "")


def test_a_complete_run_has_no_partial_marks() -> None:
    recs = records(summary())
    assert "incomplete" not in run("text", recs).lower()
    assert "Incomplete" not in run("markdown", recs)
    assert parse_junit(run("junit", recs)).get("errors") == "0"
    invocation = json.loads(run("sarif", recs))["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in invocation


# --- 17.7: the verdict matches the findings -----------------------------------


def test_fail_on_never_shows_the_errors_not_a_green_pass() -> None:
    recs = records(summary())
    word, cls = html_verdict(run("html", recs, fail_on="never"))
    assert "PASS" not in word and "pass" not in cls
    assert "7 errors (not failing: --fail-on never)" in word
    md = md_verdict(run("markdown", recs, fail_on="never"))
    assert "PASS" not in md and "7 errors (not failing: --fail-on never)" in md
    text = run("text", recs, fail_on="never").splitlines()[-1]
    assert text == "DONE: 7 errors (not failing: --fail-on never)"
    # without errors, --fail-on never is no failure and no alarm
    clean = html_verdict(run("html", [summary(errors=0)], fail_on="never"))
    assert clean[1].endswith("pass")


def test_nothing_audited_is_never_a_pass() -> None:
    unreachable = {
        "type": "summary",
        "sitemaps": 0,
        "urls": 0,
        "findings": {"error": 0, "warning": 0, "info": 0},
        "by_code": {},
        "duration_s": 0.2,
    }
    for fail_on in ("error", "never"):
        text = run("text", [unreachable], fail_on=fail_on).splitlines()[-1]
        assert text == "NOTHING AUDITED: no sitemap was audited", fail_on
        assert "PASS" not in md_verdict(run("markdown", [unreachable], fail_on=fail_on))
        word, cls = html_verdict(run("html", [unreachable], fail_on=fail_on))
        assert word.startswith("NOTHING AUDITED") and cls.endswith("fail")
    fatal = {**summary(errors=0), "fatal": ["https://ex.com: cannot be reached: refused"]}
    last = run("text", [fatal]).splitlines()[-1]
    assert last == "NOTHING AUDITED: https://ex.com: cannot be reached: refused"


# --- 17.10: cuts and exclusions are stated ------------------------------------


def test_the_text_summary_states_cuts_and_exclusions() -> None:
    cut = summary(max_urls_reached=True, excluded_urls=12, excluded_sitemaps=1)
    text = run("text", records(cut))
    assert "--max-urls reached: stopped after 40 URLs" in text
    assert "excluded: 12 listed URLs (--include/--exclude) not checked" in text
    assert "excluded: 1 sitemap (--include-sitemap/--exclude-sitemap) not read" in text
    for fmt in ("markdown", "html"):
        out = run(fmt, records(cut))
        assert "--max-urls reached" in out and "12 listed URLs" in out, fmt
    plain = run("text", records(summary()))
    assert "--max-urls" not in plain and "excluded" not in plain


# --- 17.9: migrate reports keep the migration ---------------------------------

NEW = "https://new.ex.com"
MIGRATION = {
    "new_origin": NEW,
    "old_urls": 4,
    "outcomes": {
        "ok": {"count": 2, "percent": 50.0},
        "chain": {"count": 0, "percent": 0.0},
        "to-homepage": {"count": 1, "percent": 25.0},
        "lost": {"count": 1, "percent": 25.0},
    },
    "ok_direct": 1,
    "ok_redirect": 1,
}


def migrate_records() -> list[dict[str, Any]]:
    """url records as `migrate` writes them: outcome, expected, checked_url extras."""
    recs: list[dict[str, Any]] = [{"type": "sitemap", "url": SITEMAP, "kind": "urlset"}]
    for i, outcome in enumerate(("ok", "ok", "to-homepage", "lost")):
        old = f"https://ex.com/old/{i}"
        recs.append(
            {
                "type": "url",
                "url": old,
                "sitemap": SITEMAP,
                "status": 200 if outcome != "lost" else None,
                "outcome": outcome,
                "expected": f"{NEW}/new/{i}",
                "checked_url": f"{NEW}/old/{i}",
            }
        )
    return [*recs, summary(errors=2, sitemaps=1, urls=4, migration=MIGRATION)]


def test_csv_rows_carry_the_migration_outcome() -> None:
    rows = list(csv.DictReader(io.StringIO(run("csv", migrate_records(), csv_bom=False))))
    assert [r["outcome"] for r in rows] == ["ok", "ok", "to-homepage", "lost"]
    assert rows[2]["expected"] == f"{NEW}/new/2"
    assert rows[2]["checked_url"] == f"{NEW}/old/2"
    crawl = list(csv.DictReader(io.StringIO(run("csv", records(summary()), csv_bom=False))))
    assert crawl[0]["outcome"] == "" and crawl[0]["expected"] == ""


def test_markdown_shows_the_outcome_table() -> None:
    md = run("markdown", migrate_records())
    assert "## Migration" in md and "4 old URLs checked on" in md
    assert "| `to-homepage` | 1 | 25.0% |" in md
    assert "| `ok` | 2 | 50.0% |" in md


def test_html_shows_the_outcome_table_not_a_json_blob() -> None:
    page = run("html", migrate_records())
    doc = lhtml.fromstring(page)
    table = doc.get_element_by_id("migration")
    rows = [[c.text_content() for c in tr] for tr in table.iter("tr")][1:]
    assert ["to-homepage", "1", "25.0%"] in rows and ["ok", "2", "50.0%"] in rows
    notes = doc.xpath('//*[@id="notes"]')
    assert not notes or "outcomes" not in notes[0].text_content()
