"""`diff` and a run cut by `--max-urls` (issue 28, point 6): the URLs the cut run never
checked are neither "removed" nor "added", their findings neither "fixed" nor "new";
what both runs checked is compared as usual, and the output says plainly which side was
cut and how many URLs were left out. Real crawls of a loopback site."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from audit.state.diff import diff_reports
from audit.state.store import read_records
from tests.crawlkit import HTML, XML, Serve, Site, urlset

N = 40  # listed URLs; every fifth answers 404
CUT = 10  # --max-urls of the cut runs: /p/0 .. /p/9 are checked, in listing order


def pages(site: Site, base: str, n: int = N, prefix: str = "p") -> list[str]:
    urls = [f"{base}/{prefix}/{i}" for i in range(n)]
    for i in range(n):
        site.routes[f"/{prefix}/{i}"] = (404, HTML, "gone") if i % 5 == 0 else (200, HTML, "ok")
    return urls


async def crawl(base: str, out: Path, *extra: str, target: str = "/sitemap.xml") -> int:
    argv = ["crawl", base + target, "--format", "jsonl", "--output", str(out)]
    argv += ["--fail-on", "never", "--no-progress", "--rate", "1000", "--concurrency", "4"]
    return await asyncio.to_thread(main, [*argv, *extra])


def diff(old: Path, new: Path, out: Path, *extra: str) -> tuple[int, str]:
    code = main(["diff", str(old), str(new), "--output", str(out), *extra])
    return code, out.read_text()


def diff_jsonl(old: Path, new: Path, out: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    code, text = diff(old, new, out, "--format", "jsonl", *extra)
    return code, [json.loads(line) for line in text.splitlines()]


def checked(report: Path) -> set[str]:
    return {
        r["url"] for r in map(json.loads, report.read_text().splitlines()) if r["type"] == "url"
    }


@pytest.fixture
async def runs(serve: Serve, tmp_path: Path) -> tuple[Site, str, Path, Path]:
    """A complete crawl and a crawl of the same site cut by --max-urls."""
    site = Site()
    base = await serve(site)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*pages(site, base)))
    full, cut = tmp_path / "full.jsonl", tmp_path / "cut.jsonl"
    assert await crawl(base, full) == 0
    assert await crawl(base, cut, "--max-urls", str(CUT)) == 0
    assert len(checked(full)) == N and len(checked(cut)) == CUT
    summary = json.loads(cut.read_text().splitlines()[-1])
    assert summary["type"] == "summary" and summary["max_urls_reached"] is True
    assert not summary.get("partial") and not summary.get("interrupted")  # a finished run
    return site, base, full, cut


async def test_a_cut_new_side_removes_and_fixes_nothing(
    runs: tuple[Site, str, Path, Path], tmp_path: Path
) -> None:
    _, _, full, cut = runs
    code, text = diff(full, cut, tmp_path / "d.txt", "--fail-on", "info")
    assert code == 0
    lines = text.splitlines()
    assert lines[2] == f"{cut}: cut by --max-urls after {CUT} URLs"
    assert lines[3] == (
        f"only the URLs both runs checked are compared: {N - CUT} URLs checked by one side "
        "only are neither removed, added, fixed nor new"
    )
    assert (
        lines[4] == "0 new findings, 0 fixed findings, 4 still failing"
    )  # 2 404s, robots, lastmod
    assert "removed" not in lines[4] and "URLs removed" not in text
    assert (
        lines[-1]
        == "OK: no new finding at or above --fail-on info among the URLs both runs checked"
    )

    code, records = diff_jsonl(full, cut, tmp_path / "d.jsonl", "--alert-drop", "1")
    assert code == 0  # the cut run lost nothing: it never listed what it did not reach
    kinds = [(r["type"], r.get("change")) for r in records]
    assert ("diff-finding", "fixed") not in kinds and ("diff-url", "removed") not in kinds
    assert not [r for r in records if r["type"] in ("diff-alert", "diff-sitemap")]
    summary = records[-1]
    assert summary["type"] == "diff-summary"
    assert (summary["cut"], summary["not_compared"], summary["fixed"], summary["removed"]) == (
        ["new"],
        N - CUT,
        0,
        0,
    )


async def test_a_cut_old_side_adds_and_news_nothing(
    runs: tuple[Site, str, Path, Path], tmp_path: Path
) -> None:
    _, _, full, cut = runs
    # the 6 404s after /p/9 would be 6 new errors (exit 1) if the cut run were complete
    code, text = diff(cut, full, tmp_path / "d.txt")
    assert code == 0
    assert f"{cut}: cut by --max-urls after {CUT} URLs" in text.splitlines()
    assert "0 new findings, 0 fixed findings, 4 still failing" in text.splitlines()
    assert "URLs added" not in text and "url-not-found" in text  # the two 404s still failing
    code, records = diff_jsonl(cut, full, tmp_path / "d.jsonl", "--alert-new-errors", "0")
    assert code == 0
    assert records[-1]["cut"] == ["old"] and records[-1]["new"] == 0
    assert records[-1]["added"] == 0 and records[-1]["not_compared"] == N - CUT


async def test_what_both_runs_checked_is_still_compared(
    runs: tuple[Site, str, Path, Path], tmp_path: Path
) -> None:
    """Control: a change among the URLs the cut run checked is new, fixed and a status
    change, and the exit status follows it; the rest stays out."""
    site, base, full, _ = runs
    site.routes["/p/0"] = (200, HTML, "back")  # a 404 fixed
    site.routes["/p/1"] = (404, HTML, "gone")  # a new 404
    site.routes["/p/31"] = (404, HTML, "gone")  # beyond the cut: never seen
    cut2 = tmp_path / "cut2.jsonl"
    assert await crawl(base, cut2, "--max-urls", str(CUT)) == 0
    code, records = diff_jsonl(full, cut2, tmp_path / "d.jsonl")
    assert code == 1
    rows = {(r["type"], r.get("change"), r.get("code"), r.get("url")) for r in records}
    assert ("diff-finding", "new", "url-not-found", f"{base}/p/1") in rows
    assert ("diff-finding", "fixed", "url-not-found", f"{base}/p/0") in rows
    assert not any(r[3] == f"{base}/p/31" for r in rows)
    status = sorted((r["url"], r["old"], r["new"]) for r in records if r["type"] == "diff-status")
    assert status == [(f"{base}/p/0", "404", "200"), (f"{base}/p/1", "200", "404")]
    summary = records[-1]
    assert (summary["new"], summary["fixed"], summary["removed"]) == (1, 1, 0)

    # and two complete runs still say what left the sitemaps
    site.routes["/sitemap.xml"] = (200, XML, urlset(*[f"{base}/p/{i}" for i in range(N - 5)]))
    full2 = tmp_path / "full2.jsonl"
    assert await crawl(base, full2) == 0
    code, records = diff_jsonl(full, full2, tmp_path / "d2.jsonl")
    removed = sorted(r["url"] for r in records if r.get("change") == "removed")
    assert removed == sorted(f"{base}/p/{i}" for i in range(N - 5, N))
    assert records[-1]["cut"] == [] and records[-1]["not_compared"] == 0


async def test_two_cut_runs_compare_what_both_checked(
    runs: tuple[Site, str, Path, Path], tmp_path: Path
) -> None:
    site, base, _, cut = runs
    site.routes["/p/2"] = (404, HTML, "gone")
    wider = tmp_path / "wider.jsonl"
    assert await crawl(base, wider, "--max-urls", str(2 * CUT)) == 0
    code, text = diff(cut, wider, tmp_path / "d.txt")
    assert code == 1  # /p/2, checked by both, is a new 404
    lines = text.splitlines()
    assert lines[2:4] == [
        f"{cut}: cut by --max-urls after {CUT} URLs",
        f"{wider}: cut by --max-urls after {2 * CUT} URLs",
    ]
    assert lines[4].startswith(f"only the URLs both cut runs checked are compared: {CUT} URLs")
    assert lines[5] == "1 new findings, 0 fixed findings, 4 still failing, 1 status changes"


async def test_alert_drop_counts_urls_that_left_not_the_net_change(
    serve: Serve, tmp_path: Path
) -> None:
    """A sitemap that loses 10 URLs and gains 10 others dropped 10 (25% of 40)."""
    site = Site()
    base = await serve(site)
    old_urls = pages(site, base)
    site.routes["/sitemap.xml"] = (200, XML, urlset(*old_urls))
    robots = "Sitemap: {}/sitemap.xml\n"
    site.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, robots.format(base))
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    assert await crawl(base, before, target="/") == 0
    site.routes["/sitemap.xml"] = (200, XML, urlset(*old_urls[10:], *pages(site, base, 10, "q")))
    assert await crawl(base, after, target="/") == 0
    assert len(checked(before)) == len(checked(after)) == N  # no net change
    code, text = diff(before, after, tmp_path / "d.txt", "--alert-drop", "20")
    assert code == 1
    alerts = [line for line in text.splitlines() if line.startswith("ALERT")]
    assert alerts == [
        f"ALERT: sitemap {base}/sitemap.xml lost 25% of its URLs (10 of 40 no longer listed; "
        "--alert-drop 20)",
        "ALERT: the audit lost 25% of its URLs (10 of 40 no longer listed; --alert-drop 20)",
    ]
    code, text = diff(before, after, tmp_path / "d.txt", "--alert-drop", "30")
    assert not [line for line in text.splitlines() if line.startswith("ALERT")]
    # a URL that moved to another sitemap did not leave the sitemaps
    site.routes["/sitemap.xml"] = (200, XML, urlset(*old_urls[:30]))
    site.routes["/robots.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        robots.format(base) + f"Sitemap: {base}/more.xml\n",
    )
    site.routes["/more.xml"] = (200, XML, urlset(*old_urls[30:]))
    moved = tmp_path / "moved.jsonl"
    assert await crawl(base, moved, target="/") == 0
    assert checked(moved) == checked(before)
    code, text = diff(before, moved, tmp_path / "d.txt", "--alert-drop", "1")
    assert not [line for line in text.splitlines() if line.startswith("ALERT")], text


def test_ledger_and_intent_records_are_not_urls_of_the_sitemaps(tmp_path: Path) -> None:
    """contracts/nights.md: a dropped URL judged from the ledger (or requested for the
    intent file) has a url record, but no sitemap lists it: not "added", and its absence
    the next night not "removed"."""
    b = "https://www.example.com"

    def report(path: Path, *extra: dict[str, Any]) -> Path:
        recs: list[dict[str, Any]] = [{"type": "sitemap", "url": f"{b}/sitemap.xml"}]
        recs.append({"type": "url", "url": f"{b}/a", "sitemap": f"{b}/sitemap.xml", "status": 200})
        recs += [*extra, {"type": "summary"}]
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
        return path

    plain = report(tmp_path / "plain.jsonl")
    with_ledger = report(
        tmp_path / "ledger.jsonl",
        {"type": "url", "url": f"{b}/old", "sitemap": None, "source": "ledger", "status": 404},
        {"type": "url", "url": f"{b}/plan", "sitemap": None, "source": "intent", "status": 200},
        {"type": "finding", "code": "url-dropped-404", "severity": "warning", "url": f"{b}/old"},
    )
    for old, new in ((plain, with_ledger), (with_ledger, plain)):
        code, records = diff_jsonl(old, new, tmp_path / "d.jsonl", "--alert-drop", "1")
        assert code == 0
        assert not [r for r in records if r["type"] in ("diff-url", "diff-alert")]
    summary = diff_jsonl(plain, with_ledger, tmp_path / "d.jsonl")[1][-1]
    assert summary["new"] == 1  # the url-dropped-404 finding itself is compared


async def test_a_state_cut_by_max_urls_is_diffed_as_cut(serve: Serve, tmp_path: Path) -> None:
    """A state file whose last run stopped at --max-urls says so: `diff` compares only
    what both sides checked, as for a cut jsonl report."""
    from tests.features.test_ledger import LedgerSite, _night

    site = LedgerSite()
    site.base = await serve(site.app())
    full, cut = tmp_path / "full.sqlite", tmp_path / "cut.sqlite"
    await _night(site, full, tmp_path / "full.jsonl")
    await _night(site, cut, tmp_path / "cut.jsonl", "--max-urls", "2")
    records = list(read_records(cut))
    assert {"type": "summary", "max_urls_reached": True} in records
    assert not any(r.get("type") == "summary" for r in read_records(full))
    buf = io.StringIO()
    diff_reports(full, cut, buf, fmt="jsonl")
    rows = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert not [r for r in rows if r["type"] == "diff-url"]
    assert rows[-1]["cut"] == ["new"]
