"""`sitemap-audit report` (audit/cli/report.py): a saved jsonl report in another format, its
exit status the verdict it states at --fail-on; a missing file is one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.clikit import FIXTURES, assert_one_line_error, run_cli


def test_a_saved_report_in_another_format_and_its_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "r.jsonl"
    broken = FIXTURES / "broken" / "element-unknown.xml"
    rc, _, _ = run_cli(capsys, "validate", str(broken), "--format", "jsonl", "--output",
                       str(saved), "--no-progress", "--fail-on", "never")  # fmt: skip
    assert rc == 0
    rc, out, _ = run_cli(capsys, "report", str(saved), "--format", "markdown")
    assert rc == 0 and "element-unknown" in out  # warnings only: under --fail-on error
    rc, _, _ = run_cli(capsys, "report", str(saved), "--fail-on", "warning")
    assert rc == 1
    rc, _, _ = run_cli(capsys, "report", str(saved), "--fail-on", "never")
    assert rc == 0
    html = tmp_path / "r.html"
    rc, out, _ = run_cli(capsys, "report", str(saved), "--output", str(html))
    assert rc == 0 and out == "" and html.read_text(encoding="utf-8").startswith("<!DOCTYPE")


def test_a_missing_report_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "report", str(tmp_path / "none.jsonl"))
    assert rc == 2 and out == ""
    assert_one_line_error(err, "none.jsonl: no such report file")
