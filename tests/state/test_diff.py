"""`sitemap-audit diff OLD NEW`: every category, every format, old report versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.state.diff import diff_reports

B = "https://www.example.com"


def url(path: str, status: int | None = 200, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": "url",
        "url": B + path,
        "sitemap": B + "/sitemap.xml",
        "line": 3,
        "status": status,
        "final_url": B + path,
        "redirects": [],
        "lastmod": None,
        "last_modified": None,
        "robots": "allowed",
        "elapsed_ms": 1.5,
        "error": None,
    }
    rec.update(extra)
    return rec


def fnd(code: str, path: str | None, severity: str = "error", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": "finding",
        "code": code,
        "severity": severity,
        "url": B + path if path else None,
        "sitemap": B + "/sitemap.xml",
        "line": 3,
        "message": f"{code} message",
    }
    rec.update(extra)
    return rec


def sitemap(path: str) -> dict[str, Any]:
    return {
        "type": "sitemap",
        "url": B + path,
        "parent": None,
        "kind": "urlset",
        "status": 200,
        "entries": 3,
        "bytes": 100,
        "gzip": False,
    }


SUMMARY = {"type": "summary", "sitemaps": 1, "urls": 3, "findings": {}, "by_code": {}}


def write(tmp_path: Path, name: str, records: list[dict[str, Any]]) -> str:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(p)


OLD = [
    sitemap("/sitemap.xml"),
    sitemap("/old-sitemap.xml"),
    url("/a"),
    url("/b", 404),
    url("/gone"),
    url("/flaky", 200),
    fnd("url-not-found", "/b"),
    fnd("url-redirect", "/gone", "warning"),
    fnd("sitemap-content-type", None, "warning"),
    SUMMARY,
]
NEW = [
    sitemap("/sitemap.xml"),
    sitemap("/new-sitemap.xml"),
    url("/a"),
    url("/b", 404),
    url("/fresh"),
    url("/flaky", 503),
    fnd("url-not-found", "/b"),
    fnd("url-server-error", "/flaky"),
    fnd("lastmod-future", "/a", "warning"),
    SUMMARY,
]


def jsonl_diff(tmp_path: Path, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> Any:
    import io

    out = io.StringIO()
    summary = diff_reports(
        write(tmp_path, "old.jsonl", old), write(tmp_path, "new.jsonl", new), out, fmt="jsonl"
    )
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    return summary, rows


def test_every_category(tmp_path: Path) -> None:
    summary, rows = jsonl_diff(tmp_path, OLD, NEW)

    def of(kind: str, change: str | None = None) -> list[dict[str, Any]]:
        return [r for r in rows if r["type"] == kind and (change is None or r["change"] == change)]

    assert [(r["code"], r["url"]) for r in of("diff-finding", "new")] == [
        ("url-server-error", B + "/flaky"),
        ("lastmod-future", B + "/a"),
    ]
    assert [(r["code"], r["key"]) for r in of("diff-finding", "fixed")] == [
        ("sitemap-content-type", B + "/sitemap.xml"),  # no url: keyed by its sitemap
        ("url-redirect", B + "/gone"),
    ]
    assert [(r["code"], r["url"]) for r in of("diff-finding", "still")] == [
        ("url-not-found", B + "/b")
    ]
    assert [r["url"] for r in of("diff-url", "added")] == [B + "/fresh"]
    assert [r["url"] for r in of("diff-url", "removed")] == [B + "/gone"]
    assert [(r["url"], r["old"], r["new"]) for r in of("diff-status")] == [
        (B + "/flaky", "200", "503")
    ]
    assert [r["url"] for r in of("diff-sitemap", "added")] == [B + "/new-sitemap.xml"]
    assert [r["url"] for r in of("diff-sitemap", "removed")] == [B + "/old-sitemap.xml"]
    last = rows[-1]
    assert last["type"] == "diff-summary"
    assert (last["new"], last["fixed"], last["still"], last["added"], last["removed"]) == (
        2,
        2,
        1,
        1,
        1,
    )
    assert last["status"] == 1
    assert summary.new_at_or_above == 1 and summary.failed  # one new error


def test_identical_reports_diff_empty_and_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(tmp_path, "a.jsonl", OLD)
    b = write(tmp_path, "b.jsonl", OLD)
    assert main(["diff", a, b]) == 0
    out = capsys.readouterr().out
    assert "0 new findings, 0 fixed findings" in out
    assert "OK: no new finding" in out


def test_exit_status_follows_fail_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path, "old.jsonl", OLD)
    warn_only = [r for r in NEW if r.get("code") != "url-server-error"]
    new = write(tmp_path, "new.jsonl", warn_only)
    assert main(["diff", old, new]) == 0  # only a new warning: below the default 'error'
    assert main(["diff", old, new, "--fail-on", "warning"]) == 1
    assert main(["diff", old, new, "--fail-on", "never"]) == 0
    # a fixed error is never a regression
    assert main(["diff", new, old]) == 0
    capsys.readouterr()


def test_text_and_markdown_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = write(tmp_path, "old.jsonl", OLD)
    new = write(tmp_path, "new.jsonl", NEW)
    assert main(["diff", old, new]) == 1
    text = capsys.readouterr().out
    assert "new findings (2)" in text
    assert "error   url-server-error  https://www.example.com/flaky" in text
    assert "200 -> 503  https://www.example.com/flaky" in text
    assert "URLs removed from the sitemaps (1)" in text
    assert "FAIL: 1 new finding(s) at or above --fail-on error" in text

    assert main(["diff", old, new, "--format", "markdown", "--limit", "1"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("# sitemap-audit diff")
    assert "| new findings | 2 |" in md
    assert "## new findings (2)" in md
    assert "... and 1 more" in md  # --limit 1


def test_old_report_without_optional_fields_still_diffs(tmp_path: Path) -> None:
    """An older report: no line, no elapsed_ms, no severity, no sitemaps, a bare summary
    (a report without one is partial: test_diff_partial.py)."""

    def strip(rec: dict[str, Any]) -> dict[str, Any]:
        return {
            k: v
            for k, v in rec.items()
            if k not in ("line", "elapsed_ms", "severity", "final_url", "redirects")
        }

    old = [strip(r) for r in OLD if r["type"] in ("url", "finding")] + [{"type": "summary"}]
    summary, rows = jsonl_diff(tmp_path, old, NEW)
    new = [r for r in rows if r["type"] == "diff-finding" and r["change"] == "new"]
    # severity comes from the code table when the report has none
    assert {(r["code"], r["severity"]) for r in new} == {
        ("url-server-error", "error"),
        ("lastmod-future", "warning"),
    }
    still = [r for r in rows if r["type"] == "diff-finding" and r["change"] == "still"]
    assert [r["code"] for r in still] == ["url-not-found"]
    assert rows[-1]["removed"] == 1 and rows[-1]["status"] == 1
    assert summary.failed


def test_repeated_key_counts_once_with_its_count(tmp_path: Path) -> None:
    old = [fnd("element-unknown", None, "warning", line=4), SUMMARY]
    new = [
        fnd("element-unknown", None, "warning", line=4),
        fnd("element-unknown", None, "warning"),
        SUMMARY,
    ]
    _, rows = jsonl_diff(tmp_path, old, new)
    still = [r for r in rows if r["type"] == "diff-finding"]
    assert [(r["change"], r["count"]) for r in still] == [("still", 2)]


def test_robots_block_and_network_failure_are_status_changes(tmp_path: Path) -> None:
    old = [url("/x"), url("/y"), SUMMARY]
    new = [
        url("/x", None, robots="blocked"),
        url("/y", None, error="connection refused"),
        SUMMARY,
    ]
    _, rows = jsonl_diff(tmp_path, old, new)
    assert [(r["old"], r["new"]) for r in rows if r["type"] == "diff-status"] == [
        ("200", "robots-blocked"),
        ("200", "no-answer"),
    ]


def test_bad_input_is_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.jsonl", OLD)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "url", "url": "x"}\nnot json\n', encoding="utf-8")
    assert main(["diff", good, str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "bad.jsonl:2" in err
    assert main(["diff", good, str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "Traceback" not in err


@pytest.mark.slow
def test_large_reports_stream(tmp_path: Path) -> None:
    """Many rows go through the temporary database, not Python containers."""
    n = 20_000
    old = [url(f"/p{i}") for i in range(n)] + [
        fnd("url-not-found", f"/p{i}") for i in range(0, n, 2)
    ]
    new = [url(f"/p{i}") for i in range(1, n + 1)] + [
        fnd("url-not-found", f"/p{i}") for i in range(1, n, 2)
    ]
    old.append(SUMMARY)
    new.append(SUMMARY)
    summary, rows = jsonl_diff(tmp_path, old, new)
    assert summary.counts["added"] == 1 and summary.counts["removed"] == 1
    assert summary.counts["new"] == n // 2 and summary.counts["fixed"] == n // 2
    assert summary.counts["still"] == 0
    assert len(rows) == n + 3
