"""`diff` between two `crawl --links` runs (issue 18.5): new orphans and newly unlisted pages
are new findings, and a coverage line compares the two summaries' `coverage`. Both reports
come from real link crawls (the CLI, over loopback) of a site that changes between them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from audit.cli.main import main
from audit.state.diff import coverage_line
from tests.crawlkit import HTML, XML, Serve, Site, urlset

LISTED = ["/", "/a", "/b"]


def page(*links: str) -> tuple[int, dict[str, str], str]:
    body = "".join(f'<a href="{href}">x</a>' for href in links)
    return 200, HTML, f"<html><head><title>t</title></head><body>{body}</body></html>"


async def crawl(base: str, out: Path, *links: str) -> Path:
    args = ["crawl", base + "/sitemap.xml", "--no-progress", "--rate", "unlimited"]
    args += [*links, "--format", "jsonl", "--output", str(out), "--fail-on", "never"]
    assert await asyncio.to_thread(main, args) == 0
    return out


async def two_runs(serve: Serve, tmp_path: Path, *links: str) -> tuple[str, str, str]:
    """Run 1: every listed page linked. Run 2: / drops its link to /b (an orphan now) and
    links /new (unlisted) and /gone (404)."""
    site = Site()
    base = await serve(site)
    site.routes.update(
        {
            "/sitemap.xml": (200, XML, urlset(*(base + p for p in LISTED))),
            "/": page("/a", "/b"),
            "/a": page("/"),
            "/b": page("/"),
            "/new": page("/"),
        }
    )
    old = await crawl(base, tmp_path / "old.jsonl", *links)
    site.routes["/"] = page("/a", "/new", "/gone")
    new = await crawl(base, tmp_path / "new.jsonl", *links)
    return base, str(old), str(new)


@pytest.mark.slow
async def test_new_orphans_and_unlisted_pages_are_new_findings(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, old, new = await two_runs(serve, tmp_path, "--links")
    capsys.readouterr()
    assert main(["diff", old, new, "--fail-on", "warning"]) == 1
    text = capsys.readouterr().out
    new_section = text.split("new findings (", 1)[1].split("\n\n", 1)[0]
    assert f"url-orphan  {base}/b  [{base}/sitemap.xml:" in new_section
    assert f"page-not-in-sitemap  {base}/new" in new_section
    assert f"link-broken  {base}/gone" in new_section
    assert "\ncoverage: orphans 0 -> 1, unlisted 0 -> 1, broken links 0 -> 1\n" in text
    assert main(["diff", old, new, "--format", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "\ncoverage: orphans 0 -> 1, unlisted 0 -> 1, broken links 0 -> 1\n" in md
    assert main(["diff", new, old]) == 0  # the other way round: fixed, and counts go down
    back = capsys.readouterr().out
    assert "coverage: orphans 1 -> 0, unlisted 1 -> 0, broken links 1 -> 0" in back
    assert f"url-orphan  {base}/b" in back.split("fixed findings (", 1)[1]


@pytest.mark.slow
async def test_no_coverage_line_without_links(
    serve: Serve, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, old, new = await two_runs(serve, tmp_path)
    capsys.readouterr()
    assert main(["diff", old, new]) == 0
    assert "\ncoverage:" not in capsys.readouterr().out


def test_coverage_line_names_an_incomplete_side() -> None:
    full = {"coverage": {"complete": True, "orphans": 3, "unlisted": 0, "broken_links": 1}}
    cut = {"coverage": {"complete": False, "orphans": 0, "unlisted": 2, "broken_links": 1}}
    assert coverage_line(full, cut) == (
        "orphans 3 -> 0, unlisted 0 -> 2, broken links 1 -> 1 (link crawl incomplete: new)"
    )
    assert coverage_line(full, {"by_code": {}}) is None
    assert coverage_line(None, full) is None
