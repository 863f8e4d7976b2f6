"""`sitemap-audit codes` (every code: severity, meaning, fix, Search Console's name), the
generated docs/codes.md kept in step, and `--ignore CODES` (also `ignore = [...]` in
--config) dropping codes from findings, counts, the state and the exit status."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from audit.cli.codes import render
from audit.cli.main import main
from audit.core.codes import CODES
from audit.state.store import read_records
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

DOCS = Path(__file__).resolve().parents[2] / "docs" / "codes.md"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(n in lines[0] for n in needles), err


# --- the listing (the registry itself: tests/core/test_codes.py) ----------------------------------------------------


def test_codes_json_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "codes", "--format", "json")
    assert rc == 0 and not err
    listed = json.loads(out)
    assert [row["code"] for row in listed] == list(CODES)
    by_code = {row["code"]: row for row in listed}
    assert by_code["url-not-found"] == {
        "code": "url-not-found",
        "severity": "error",
        "summary": CODES["url-not-found"].summary,
        "fix": CODES["url-not-found"].fix,
        "search_console": "Not found (404)",
        "doc": "docs/codes.md#url-not-found",
    }
    assert by_code["url-slow"]["search_console"] is None


def test_codes_text_and_markdown_show_severity_fix_and_search_console(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, text, _ = run_cli(capsys, "codes")
    assert rc == 0
    block = text.split("\n\n")[list(CODES).index("url-noindex")]
    assert block.splitlines()[0] == "url-noindex  (error)"
    assert "Search Console: Excluded by 'noindex' tag" in block
    assert f"fix: {CODES['url-noindex'].fix}" in block
    assert text.count("\n\n") == len(CODES) - 1
    rc, md, _ = run_cli(capsys, "codes", "--format", "markdown")
    assert rc == 0
    for code in CODES:
        assert f"\n### {code}\n" in md  # the anchor report links point at
    assert "| [`url-noindex`](#url-noindex) | error | Excluded by 'noindex' tag |" in md
    assert "&lt;loc>" in md and "<loc>" not in md  # not swallowed as an HTML tag


def test_docs_codes_md_is_generated_from_the_registry() -> None:
    # regenerate: sitemap-audit codes --format markdown > docs/codes.md
    assert DOCS.read_text(encoding="utf-8") == render("markdown")


def test_unknown_code_in_ignore_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, _, err = run_cli(capsys, "crawl", "http://x.invalid/", "--ignore", "url-slow,url-slwo")
    assert rc == 2
    one_line_error(err, "--ignore", "url-slwo")
    config = tmp_path / "c.toml"
    config.write_text('target = "http://x.invalid/"\nignore = ["url-nope"]\n')
    rc, _, err = run_cli(capsys, "validate", "--config", str(config))
    assert rc == 2
    one_line_error(err, str(config), "ignore", "url-nope")


# --- --ignore over loopback ------------------------------------------------------------


async def _site(serve: Serve) -> str:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap.xml\n"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/ok", f"{base}/gone", f"{base}/moved")),
        "/ok": (200, HTML, "ok"),
        "/moved": (301, {"Location": "/ok"}, ""),
    }
    return base


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _crawl(base: str, out: Path, *extra: str) -> int:
    argv = ["crawl", base + "/", "--format", "jsonl", "--output", str(out), "--no-progress"]
    return main([*argv, "--retries", "0", *extra])


async def test_ignore_drops_codes_from_findings_counts_and_exit(
    serve: Serve, tmp_path: Path
) -> None:
    base = await _site(serve)
    plain = tmp_path / "plain.jsonl"
    assert await asyncio.to_thread(_crawl, base, plain) == 1
    codes = {r["code"] for r in _records(plain) if r["type"] == "finding"}
    assert {"url-not-found", "url-redirect"} <= codes

    out = tmp_path / "ignored.jsonl"
    state = tmp_path / "s.sqlite"
    rc = await asyncio.to_thread(
        _crawl, base, out, "--ignore", "url-not-found", "--ignore", "url-redirect,lastmod-missing"
    )
    assert rc == 0  # the only error was ignored
    records = _records(out)
    kept = {r["code"] for r in records if r["type"] == "finding"}
    assert kept == codes - {"url-not-found", "url-redirect", "lastmod-missing"}
    summary = records[-1]
    assert not {"url-not-found", "url-redirect"} & set(summary["by_code"])
    assert summary["findings"]["error"] == 0
    assert summary["findings"]["warning"] == sum(
        1 for r in records if r["type"] == "finding" and r["severity"] == "warning"
    )
    assert summary["ignored"] == ["lastmod-missing", "url-not-found", "url-redirect"]
    assert summary["urls"] == 3  # the URLs are still checked and reported

    # the same from --config, into a state file: the state holds what the report holds
    config = tmp_path / "c.toml"
    config.write_text('ignore = ["url-not-found", "url-redirect"]\n')
    out2 = tmp_path / "config.jsonl"
    rc = await asyncio.to_thread(_crawl, base, out2, "--config", str(config), "--state", str(state))
    assert rc == 0
    stored = {r.get("code") for r in read_records(state) if r.get("type") == "finding"}
    assert not {"url-not-found", "url-redirect"} & stored
    assert _records(out2)[-1]["ignored"] == ["url-not-found", "url-redirect"]
