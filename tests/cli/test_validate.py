"""`sitemap-audit validate` (audit/cli/validate.py): exit codes, jsonl records, --fail-on, bad
input as findings, one-line errors for a missing file, a directory or a non-URL."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.cli.clikit import GOOD, assert_one_line_error, run_cli, write


def test_validate_clean_file_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ok.xml", GOOD)
    code, out, err = run_cli(
        capsys, "validate", path, "--base-url", "https://www.example.com/sitemap.xml"
    )
    assert code == 0, out + err
    assert "Traceback" not in err


def test_validate_jsonl_records_and_fail_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = GOOD.replace(
        "<lastmod>2024-05-01T10:00:00+00:00</lastmod>", "<lastmod>2024-02-30</lastmod>", 1
    )
    path = write(tmp_path, "bad.xml", bad)
    code, out, _ = run_cli(capsys, "validate", path, "--format", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    findings = [r for r in records if r["type"] == "finding"]
    assert code == 1
    assert [(f["code"], f["line"]) for f in findings if f["code"] == "lastmod-invalid"] == [
        ("lastmod-invalid", 3)
    ]
    assert records[-1]["type"] == "summary" and records[-1]["findings"]["error"] >= 1
    sm = next(r for r in records if r["type"] == "sitemap")
    assert sm["kind"] == "urlset" and sm["entries"] == 2
    code_never, _, _ = run_cli(capsys, "validate", path, "--fail-on", "never")
    assert code_never == 0


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("garbage.bin", bytes(range(256)) * 4, None),
        ("empty.xml", b"", "sitemap-xml-malformed"),
        ("trunc.xml.gz", gzip.compress(GOOD.encode())[:40], "sitemap-gzip-invalid"),
        ("page.xml", b"<!DOCTYPE html>\n<html><body>hello</body></html>", "sitemap-is-html"),
        ("xxe.xml", None, "sitemap-doctype"),
        ("laughs.xml", None, "sitemap-doctype"),
    ],
)
def test_bad_input_is_a_finding_not_a_traceback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: bytes | None,
    code: str | None,
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    if name == "xxe.xml":
        data = (
            f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "file://{secret}">]>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>https://www.example.com/&x;</loc></url></urlset>"
        ).encode()
    if name == "laughs.xml":
        ents = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        data = (
            f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY l0 "lol">{ents}]>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>https://www.example.com/&l9;</loc></url></urlset>"
        ).encode()
    assert data is not None
    path = write(tmp_path, name, data)
    rc, out, err = run_cli(capsys, "validate", path, "--format", "jsonl", "--fail-on", "warning")
    assert "Traceback" not in err
    assert rc == 1
    codes = [json.loads(line)["code"] for line in out.splitlines() if '"finding"' in line]
    assert codes, out
    if code:
        assert code in codes
    assert "TOP-SECRET-CONTENT" not in out


def test_missing_file_directory_and_non_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run_cli(capsys, "validate", str(tmp_path / "nope.xml"))
    assert rc == 2 and out == ""
    assert_one_line_error(err, "nope.xml", "no such file")
    rc, _, err = run_cli(capsys, "validate", str(tmp_path))
    assert rc == 2
    assert_one_line_error(err, "directory")
    rc, _, err = run_cli(capsys, "crawl", "ftp://example.com/sitemap.xml")
    assert rc == 2
    assert_one_line_error(err, "ftp://example.com/sitemap.xml")
    rc, _, err = run_cli(capsys, "crawl", "https://example.com/", "--rate", "-1")
    assert rc == 2
    assert_one_line_error(err, "--rate")
    rc, _, err = run_cli(capsys, "crawl", "https://example.com/", "--include", "([")
    assert rc == 2
    assert_one_line_error(err, "--include")
