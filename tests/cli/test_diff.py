"""`sitemap-audit diff` (audit/cli/diff.py): two reports compared through the front door, exit
1 for a new finding at --fail-on or an alert, a missing side one line and exit 2 with an
earlier output file left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.clikit import GOOD, assert_one_line_error, run_cli, write


def _report(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, body: str) -> str:
    sitemap = write(tmp_path, f"{name}.xml", body)
    out = str(tmp_path / f"{name}.jsonl")
    run_cli(capsys, "validate", sitemap, "--format", "jsonl", "--output", out, "--no-progress")
    return out


def test_a_new_error_fails_and_the_same_report_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _report(tmp_path, capsys, "old", GOOD)
    new = _report(tmp_path, capsys, "new", GOOD.replace("2024-05-01T10:00:00+00:00", "soon", 1))
    rc, out, _ = run_cli(capsys, "diff", old, old)
    assert rc == 0
    rc, out, _ = run_cli(capsys, "diff", old, new, "--format", "jsonl")
    assert rc == 1 and '"lastmod-invalid"' in out and '"new"' in out
    rc, _, _ = run_cli(capsys, "diff", old, new, "--fail-on", "never")
    assert rc == 0
    rc, out, _ = run_cli(capsys, "diff", old, new, "--fail-on", "never", "--alert-new-errors", "0")
    assert rc == 1 and "ALERT" in out


def test_a_missing_side_is_one_line_and_keeps_the_earlier_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _report(tmp_path, capsys, "old", GOOD)
    earlier = tmp_path / "diff.txt"
    earlier.write_text("yesterday\n", encoding="utf-8")
    rc, out, err = run_cli(capsys, "diff", old, str(tmp_path / "gone.jsonl"), "-o", str(earlier))
    assert rc == 2 and out == ""
    assert_one_line_error(err, "gone.jsonl: no such report or state file")
    assert earlier.read_text(encoding="utf-8") == "yesterday\n"
