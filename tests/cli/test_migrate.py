"""`sitemap-audit migrate` (audit/cli/migrate.py): --config gives options but never OLD/NEW,
the front door's checks are one line and exit 2 before any request, and a run's exit status
and closing lines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from audit.cli.main import main
from tests.cli.clikit import assert_one_line_error
from tests.crawlkit import HTML, XML, Serve, Site, urlset


def test_a_config_file_naming_targets_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "m.toml"
    conf.write_text('target = "https://www.example.com/"\n', encoding="utf-8")
    argv = ["migrate", "https://www.example.com/sitemap.xml", "https://staging.example.com",
            "--config", str(conf)]  # fmt: skip
    assert main(argv) == 2
    assert_one_line_error(capsys.readouterr().err, "target/targets are for crawl and validate")


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--fresh"], "--fresh needs --state PATH"),
        (["--include", "("], "--include '(': not a valid regular expression"),
        (["--map", "missing.csv"], "missing.csv"),
    ],
)
def test_the_front_doors_checks_are_one_line_before_a_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    out = tmp_path / "report.txt"
    argv = ["migrate", "http://127.0.0.1:9/sitemap.xml", "https://staging.example.com",
            "--output", str(out), "--no-progress", *extra]  # fmt: skip
    assert main(argv) == 2
    assert_one_line_error(capsys.readouterr().err, needle)
    assert not out.exists()  # nothing opened


@pytest.mark.slow
async def test_a_run_with_state_and_its_exit_status(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = Site(), Site()
    old_base, new_base = await serve(old), await serve(new)
    old.routes = {"/sitemap.xml": (200, XML, urlset(f"{old_base}/a", f"{old_base}/b"))}
    new.routes = {"/a": (200, HTML, "<p>a</p>"), "/b": (200, HTML, "<p>b</p>")}
    out = tmp_path / "m.jsonl"
    argv = ["migrate", old_base + "/sitemap.xml", new_base, "--state", str(tmp_path / "s"),
            "--output", str(out), "--no-progress", "--retries", "0"]  # fmt: skip
    assert await asyncio.to_thread(main, argv) == 0  # jsonl from the extension
    summary = json.loads(out.read_text(encoding="utf-8").splitlines()[-1])
    assert summary["type"] == "summary" and summary["urls"] == 2
    new.routes.pop("/b")
    assert await asyncio.to_thread(main, argv) == 1  # /b lost on the new site: an error
    assert capsys.readouterr().err == ""
