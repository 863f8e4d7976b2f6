"""What a run amounts to (audit.report.verdict): the verdict for --fail-on, never a PASS
for a run that did not finish or audited nothing; how far a partial run got; what a run
left out on purpose; `migrate`'s outcome rows and credentials note."""

from __future__ import annotations

from typing import Any

import pytest

from audit.report.verdict import (
    NOTHING_AUDITED,
    RUN_FAILED,
    SOME_AUDITED,
    credentials_note,
    cut_notes,
    fatal_of,
    migration_rows,
    progress_line,
    stopped_how,
    verdict,
)


def summary(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"type": "summary", "sitemaps": 2, "urls": 10}
    base["findings"] = {"error": 0, "warning": 0, "info": 0}
    return {**base, **kw}


@pytest.mark.parametrize(
    ("found", "fail_on", "word", "style", "detail"),
    [
        ({}, "error", "PASS", "pass", "nothing at or above --fail-on error"),
        ({"warning": 3}, "error", "PASS", "pass", "nothing at or above --fail-on error"),
        ({"warning": 3}, "warning", "FAIL", "fail", "3 warnings at or above --fail-on warning"),
        (
            {"error": 1, "info": 2},
            "info",
            "FAIL",
            "fail",
            "1 error, 2 info at or above --fail-on info",
        ),
        ({"error": 2}, "never", "DONE", "warn", "2 errors (not failing: --fail-on never)"),
        ({}, "never", "DONE", "pass", "no errors (--fail-on never)"),
    ],
)
def test_the_verdict_of_a_finished_run(
    found: dict[str, int], fail_on: str, word: str, style: str, detail: str
) -> None:
    v = verdict(summary(findings={"error": 0, "warning": 0, "info": 0, **found}), fail_on)
    assert (v.word, v.style, v.detail) == (word, style, detail)
    assert v.line == f"{word}: {detail}"


def test_a_run_that_did_not_finish_is_never_a_pass() -> None:
    s = summary(interrupted=True, stopped_by="SIGINT", findings={"error": 1})
    assert stopped_how(s) == "INTERRUPTED"
    v = verdict(s, "error")
    assert (v.word, v.style) == ("INTERRUPTED", "partial")
    assert v.detail == (
        "the run was interrupted by SIGINT after 2 sitemaps and 10 URLs: a partial report, "
        "its findings are from that part only; 1 error at or above --fail-on error"
    )
    partial = summary(partial=True, sitemaps=1, urls=1)
    assert stopped_how(partial) == "PARTIAL"
    assert progress_line(partial) == (
        "the run did not finish after 1 sitemap and 1 URL: a partial report, its findings "
        "are from that part only"
    )
    assert verdict(partial, "error").word == "PARTIAL"
    assert progress_line(summary()) is None and stopped_how(summary()) is None


def test_nothing_or_not_everything_audited() -> None:
    nothing = summary(sitemaps=0, urls=0)
    assert fatal_of(nothing) == "no sitemap was audited"
    assert verdict(nothing, "never").word == NOTHING_AUDITED
    one = summary(fatal="https://x/: robots.txt unreachable")
    assert fatal_of(one) == "https://x/: robots.txt unreachable"
    assert (verdict(one, "error").word, verdict(one, "error").style) == (NOTHING_AUDITED, "fail")
    some = summary(fatal=["a: gone", "", "b: gone"], targets=4, findings={"error": 2})
    v = verdict(some, "error")
    assert v.word == SOME_AUDITED and v.word in RUN_FAILED
    assert v.detail == (
        "not audited: a: gone; b: gone; the other targets were; 2 errors at or above "
        "--fail-on error"
    )
    all_failed = summary(fatal=["a: gone", "b: gone"], targets=2)
    assert verdict(all_failed, "error").word == NOTHING_AUDITED
    assert fatal_of(summary()) is None


def test_what_a_run_left_out_on_purpose() -> None:
    s = summary(max_urls_reached=True, urls=1, excluded_urls=1200, excluded_sitemaps=2)
    assert cut_notes(s) == [
        "--max-urls reached: stopped after 1 URL; the sitemaps list more that were not checked",
        "excluded: 1,200 listed URLs (--include/--exclude) not checked",
        "excluded: 2 sitemaps (--include-sitemap/--exclude-sitemap) not read",
    ]
    unread = cut_notes(summary(children_not_fetched=3, children_not_read=["a.xml"]))
    assert len(unread) == 1 and unread[0].startswith("not read: 3 sitemaps the index on disk")
    assert "(a.xml and 2 more)" in unread[0]
    assert cut_notes(summary()) == []


def test_migration_rows_and_the_credentials_note() -> None:
    migration = {
        "old_urls": 40,
        "new_origin": "https://new.example",
        "outcomes": {
            "ok": {"count": 30, "percent": 75},
            "broken": {"count": "x", "percent": 1.0},  # malformed: left out
            "gone": {"count": 10, "percent": 25.0},
            "odd": [1, 2],
        },
        "credentials": {"asked": 4, "challenge": 'Basic realm="x"'},
    }
    assert migration_rows(migration) == [("ok", 30, 75.0), ("gone", 10, 25.0)]
    assert migration_rows(None) == [] and migration_rows({"outcomes": []}) == []
    note = credentials_note(migration)
    assert note is not None and note.startswith(
        "the new site https://new.example asks for credentials: HTTP 401 (WWW-Authenticate: "
        'Basic realm="x") for 4 of 40 old URLs'
    )
    assert credentials_note({"credentials": {"asked": 0}}) is None
    assert credentials_note("nonsense") is None
