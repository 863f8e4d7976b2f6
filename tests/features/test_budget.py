"""Budgeted rolling audits (contracts/manysites.md, `--budget N` with `--state`): each run
checks at most N listed URLs, due first, then never checked, moved, failing, the others by
their last check; the rest are carried from the state. Requests are counted server-side."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.crawlkit import Serve
from tests.state.test_store import run_main

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class RollingSite:
    def __init__(self, n: int) -> None:
        self.paths = [f"/p/{i}" for i in range(n)]
        self.lastmod = {p: "2024-05-01" for p in self.paths}
        self.status: dict[str, int] = {}
        self.hits: Counter[str] = Counter()
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/robots.txt", self._robots)
        app.router.add_get("/sitemap.xml", self._sitemap)
        app.router.add_route("*", "/p/{n}", self._page)
        return app

    async def _robots(self, request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    async def _sitemap(self, request: web.Request) -> web.Response:
        rows = "".join(
            f"<url><loc>{self.base}{p}</loc><lastmod>{self.lastmod[p]}</lastmod></url>"
            for p in self.paths
        )
        return web.Response(text=f'<urlset xmlns="{NS}">{rows}</urlset>', content_type="text/xml")

    async def _page(self, request: web.Request) -> web.Response:
        self.hits[request.path] += 1
        status = self.status.get(request.path, 200)
        return web.Response(status=status, text="<html></html>", content_type="text/html")


async def _run(site: RollingSite, state: Path, out: Path, *extra: str) -> list[dict[str, Any]]:
    site.hits.clear()
    argv = [
        "crawl", site.base + "/sitemap.xml", "--state", str(state), "--format", "jsonl",
        "--output", str(out), "--no-progress", "--rate", "unlimited", "--fail-on", "never",
        "--retries", "0", *extra,
    ]  # fmt: skip
    assert await run_main(argv) in (0, 1)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _checked(site: RollingSite) -> set[str]:
    return {p for p, n in site.hits.items() if n}


async def test_every_url_once_over_ceil_t_over_n_runs(serve: Serve, tmp_path: Path) -> None:
    site = RollingSite(12)
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    seen: list[set[str]] = []
    for run in (1, 2, 3):
        records = await _run(site, state, tmp_path / f"{run}.jsonl", "--budget", "4")
        seen.append(_checked(site))
        assert len(seen[-1]) == 4 and all(site.hits[p] == 1 for p in seen[-1])
        urls = [r for r in records if r["type"] == "url"]
        assert len(urls) == 12  # every listed URL has its record, checked or carried
        summary = records[-1]
        assert summary["budget"] == {"limit": 4, "checked": 4, "carried": 8}
        assert summary["carried"] == 8
        never = [r for r in urls if r["checked_at"] is None]
        assert len(never) == 12 - 4 * run
        for r in never:
            assert r["carried"] is True and r["status"] is None and r["indexable"] is None
        codes = [r["code"] for r in records if r["type"] == "finding"]
        assert ("budget-unchecked" in codes) is (run < 3)
        age = summary["coverage_age"]
        assert age["unchecked"] == 12 - 4 * run
        assert age["max"] == run - 1 and age["p50"] == (0 if run < 3 else 1)
    assert set.union(*seen) == set(site.paths)  # each URL checked exactly once in 3 runs
    # run 4: every URL is checked; those of run 1 are due (age 3 = K) and go first
    await _run(site, state, tmp_path / "4.jsonl", "--budget", "4")
    assert _checked(site) == seen[0]


async def test_never_checked_then_moved_then_failing_then_oldest(
    serve: Serve, tmp_path: Path
) -> None:
    site = RollingSite(12)
    site.base = await serve(site.app())
    state = tmp_path / "s.sqlite"
    site.status["/p/3"] = site.status["/p/4"] = 404  # both fail at their check in run 1
    for run in (1, 2):  # K = ceil(12 / 5) = 3: nothing is due before run 4
        await _run(site, state, tmp_path / f"{run}.jsonl", "--budget", "5")
    assert _checked(site) == {f"/p/{i}" for i in range(5, 10)}
    site.lastmod["/p/7"] = "2024-06-01"  # moved since its check in run 2
    records = await _run(site, state, tmp_path / "3.jsonl", "--budget", "5")
    # never checked (p10, p11), moved (p7), failing (p3, p4), before the oldest (p0)
    assert _checked(site) == {"/p/10", "/p/11", "/p/7", "/p/3", "/p/4"}
    carried = {r["url"]: r for r in records if r["type"] == "url" and r.get("carried")}
    assert len(carried) == 7
    for r in carried.values():  # the verdict of the last check, and when it was made
        assert r["status"] == 200 and r["checked_at"].endswith("Z")
    # the failing first, in listing order: p3 is checked, p4 carried with its finding,
    # which counts in the report and the summary
    records = await _run(site, state, tmp_path / "4.jsonl", "--budget", "1")
    assert _checked(site) == {"/p/3"}
    found = [r for r in records if r["type"] == "finding" and r["code"] == "url-not-found"]
    assert sorted(r["url"] for r in found) == [site.base + "/p/3", site.base + "/p/4"]
    assert records[-1]["by_code"]["url-not-found"] == 2


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--budget", "3"], "--budget needs --state"),
        (["--budget", "3", "--state", "S", "--changed-only"], "--changed-only"),
        (["--budget", "3", "--state", "S", "--links"], "--links"),
        (["--budget", "3", "--state", "S", "--max-urls", "5"], "--max-urls"),
        (["--budget", "0", "--state", "S"], "--budget"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    from audit.cli.main import main

    args = [a.replace("S", str(tmp_path / "s.sqlite")) if a == "S" else a for a in extra]
    assert main(["crawl", "http://127.0.0.1:1/sitemap.xml", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


async def test_a_killed_budgeted_run_resumes_its_selection(serve: Serve, tmp_path: Path) -> None:
    """Killed mid-way and run again on the same state, a budgeted run is the same run: the
    URLs it checked are not asked again and it checks N URLs in all, the same N."""
    import asyncio
    import signal
    import sys

    site = RollingSite(12)
    site.base = await serve(site.app())
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    argv = [
        "crawl", site.base + "/sitemap.xml", "--state", str(state), "--format", "jsonl",
        "--output", str(out), "--no-progress", "--rate", "4", "--concurrency", "1",
        "--fail-on", "never", "--budget", "6",
    ]  # fmt: skip
    # A result reaches the state within the writer's FLUSH_MS (100 ms) of its answer: at 4
    # a second (250 ms apart) every answer but the one in flight is stored before the kill
    # (at 20 a second, 50 ms apart, a loaded machine lost two and the run asked them again)
    reference = RollingSite(12)  # what an uninterrupted first run checks
    reference.base = await serve(reference.app())
    await _run(reference, tmp_path / "ref.sqlite", tmp_path / "ref.jsonl", "--budget", "6")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit", *argv, stderr=asyncio.subprocess.PIPE
    )
    for _ in range(1000):  # bounded: 10 s
        if sum(site.hits.values()) >= 3 or proc.returncode is not None:
            break
        await asyncio.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    await asyncio.wait_for(proc.communicate(), 30)
    before = Counter(site.hits)
    assert 0 < sum(before.values()) < 6  # killed mid-way through its checks
    await asyncio.sleep(0.3)  # the writer's last batch (100 ms) is committed or lost
    records = await _run(site, state, out, "--budget", "6")
    assert records[-1]["budget"]["checked"] == 6
    total = before + site.hits
    assert set(total) == _checked(reference)  # the same selection
    assert sum(n > 1 for n in total.values()) <= 1  # at most the request in flight, again
