"""`sitemap-audit validate` (audit/cli/validate.py): exit codes, jsonl records, --fail-on, bad
input as findings, one-line errors for a missing file, a directory or a non-URL."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
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


# Modules a validate of a local file never uses: the URL and page checks and the features
# that judge listed URLs (a crawl's), robots.txt's parser and discovery (a remote target's),
# what sends a request (aiohttp, yarl, aiolimiter: 20 ms of start-up together), a crawl's
# roll-up, and the other commands' options and runs (inspect, migrate, codes, fix, --indexnow).
# It imports none of them (its start-up is part of its time: issue 27,
# validate no slower than c914850).
_CRAWL_ONLY = (
    "aiohttp",
    "aiolimiter",
    "yarl",
    "audit.cli.codes",
    "audit.cli.fix",
    "audit.cli.indexnow",
    "audit.checks.agents",
    "audit.checks.deploystamp",
    "audit.checks.page",
    "audit.checks.pagefacts",
    "audit.checks.response",
    "audit.checks.verdict",
    "audit.features.agentfetch",
    "audit.features.agents",
    "audit.features.deploy",
    "audit.front.migrate",
    "audit.http.robotstxt",
    "audit.pipeline.check",
    "audit.pipeline.discover",
    "audit.pipeline.rollup",
    "audit.sitemap.inspect",
)

# Runs the command line in a fresh interpreter and writes the modules it imported to the file
# named last.
_RUN_AND_LIST = """
import json, sys
from audit.cli.main import main
code = main(sys.argv[1:-1])
imported = sorted(sys.modules)
open(sys.argv[-1], "w", encoding="utf-8").write(json.dumps({"code": code, "modules": imported}))
"""


def _executed_modules(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    listing = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_AND_LIST, *argv, str(listing)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    got = json.loads(listing.read_text(encoding="utf-8"))
    return got["code"], set(got["modules"])


def test_validate_of_a_local_file_imports_no_crawl_only_module(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.xml", GOOD)
    base = ("--base-url", "https://www.example.com/sitemap.xml")
    code, modules = _executed_modules(tmp_path, "validate", path, *base)
    assert code == 0
    assert "audit.rules.validator" in modules  # the run did validate the file
    assert sorted(modules.intersection(_CRAWL_ONLY)) == []
    # the listing sees an import when there is one: --agents asks for the agents hook
    code, modules = _executed_modules(tmp_path, "validate", path, *base, "--agents", "GPTBot")
    assert code == 0
    assert {"audit.features.agents", "audit.checks.agents"} <= modules
