"""Index <lastmod> truth in a run (contracts/nights.md 4), over loopback: an index whose
entries' <lastmod> are compared with each child's newest entry at the entry's precision
(index-lastmod-behind), and an index stamped with the time it is served
(index-lastmod-now, in place of lastmod-uniform). Each case has a clean control."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import HTML, XML, Run, Serve, Site, audit

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _index(entries: list[tuple[str, str | None]]) -> str:
    lines = [
        f"<sitemap><loc>{loc}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else "")
        + "</sitemap>"
        for loc, lastmod in entries
    ]
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n'
        + "\n".join(lines)
        + "\n</sitemapindex>\n"
    )


def _urlset(*lastmods: str | None, page: str) -> str:
    body = "".join(
        f"<url><loc>{page}?{i}</loc>"
        + (f"<lastmod>{lastmod}</lastmod>" if lastmod is not None else "")
        + "</url>\n"
        for i, lastmod in enumerate(lastmods)
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>\n{body}</urlset>\n'


# name -> (the index entry's <lastmod>, the child's entries' <lastmod>s, behind?)
CASES: dict[str, tuple[str, tuple[str | None, ...], bool]] = {
    # a date is that UTC day: 01:30+02:00 on the 2nd is 23:30 UTC on the 1st
    "day-2330utc": ("2024-07-01", ("2024-06-01", "2024-07-02T01:30:00+02:00", None), False),
    "day-behind": ("2024-07-01", ("2024-07-02T00:30:00Z", "2024-06-01"), True),
    "day-next-day": ("2024-07-01", ("2024-07-02",), True),
    "month-within": ("2024-07", ("2024-07-31T23:59:59Z",), False),
    "month-behind": ("2024-07", ("2024-08-01",), True),
    "year-within": ("2024", ("2024-12-31T23:59:59Z", "2024-03"), False),
    "year-behind": ("2024", ("2025-01",), True),
    # a value with a time is that second, the offset applied
    "second-same": ("2024-09-21T12:00:00+02:00", ("2024-09-21T10:00:00Z",), False),
    "second-behind": ("2024-09-21T12:00:00+02:00", ("2024-09-21T10:00:01Z",), True),
    "second-ahead": ("2024-09-21T12:00:00+02:00", ("2024-09-21T09:00:00-01:00",), False),
    # entries without a valid <lastmod> are ignored
    "invalid-ignored": ("2024-07-01", ("2024-02-30", "2024-06-30", None), False),
    # not judged: an entry without a valid <lastmod>
    "entry-without": ("2024-13-01", ("2025-01-01",), False),
}


async def _site(serve: Serve, cases: dict[str, Any]) -> tuple[str, Site, str]:
    site = Site()
    base = await serve(site)
    entries = [(f"{base}/{name}.xml", cases[name][0]) for name in cases]
    index = _index(entries)
    site.routes["/sitemap.xml"] = (200, XML, index)
    for name, (_, lastmods, _) in cases.items():
        site.routes[f"/{name}.xml"] = (200, XML, _urlset(*lastmods, page=f"{base}/p"))
    site.routes["/p"] = (200, HTML, "<p>page</p>")
    return base, site, index


def _line_of(index: str, loc: str) -> int:
    return next(n for n, line in enumerate(index.splitlines(), 1) if f"<loc>{loc}<" in line)


def _behind(run: Run) -> dict[str, dict[str, Any]]:
    return {f["url"]: f for f in run.findings("index-lastmod-behind")}


async def test_behind_at_each_precision(serve: Serve) -> None:
    base, _, index = await _site(serve, CASES)
    run = await audit(f"{base}/sitemap.xml")
    behind = _behind(run)
    expected = {f"{base}/{name}.xml" for name, case in CASES.items() if case[2]}
    assert set(behind) == expected
    for child, found in behind.items():
        assert found["sitemap"] == f"{base}/sitemap.xml"
        assert found["line"] == _line_of(index, child)
        assert found["severity"] == "warning"
    assert not run.findings("index-lastmod-now")


async def test_validate_reports_behind_too(serve: Serve) -> None:
    base, _, _ = await _site(serve, {k: CASES[k] for k in ("day-2330utc", "day-behind")})
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    assert set(_behind(run)) == {f"{base}/day-behind.xml"}


async def test_tolerance_widens_the_comparison(serve: Serve) -> None:
    cases = {
        "half-hour": ("2024-07-01", ("2024-07-02T00:30:00Z",), True),
        "two-hours": ("2024-07-01", ("2024-07-02T02:00:00Z",), True),
    }
    base, _, _ = await _site(serve, cases)
    plain = await audit(f"{base}/sitemap.xml")
    assert set(_behind(plain)) == {f"{base}/half-hour.xml", f"{base}/two-hours.xml"}
    tolerant = await audit(f"{base}/sitemap.xml", lastmod_tolerance_s=3600)
    assert set(_behind(tolerant)) == {f"{base}/two-hours.xml"}


async def test_a_child_not_read_completely_does_not_count(serve: Serve) -> None:
    cases = {
        "broken": ("2024-07-01", ("2024-08-01",), True),
        "whole": ("2024-07-01", ("2024-08-01",), True),
        "missing": ("2024-07-01", (), True),
    }
    base, site, _ = await _site(serve, cases)
    # the newer entry is parsed, then the XML breaks off: the child was not read whole
    site.routes["/broken.xml"] = (
        200,
        XML,
        _urlset("2024-08-01", page=f"{base}/p").replace("</urlset>", "<url><loc>x</urlset>"),
    )
    site.routes.pop("/missing.xml")
    run = await audit(f"{base}/sitemap.xml")
    assert run.findings("sitemap-xml-malformed")
    assert set(_behind(run)) == {f"{base}/whole.xml"}


def _stamped(count: int, offset: timedelta, child_lastmod: str) -> Any:
    """An index of `count` children whose <lastmod> is the time of the request, shifted
    by `offset`; every child lists a page with `child_lastmod`."""

    async def handler(request: web.Request) -> web.StreamResponse:
        now = datetime.now(UTC) + offset
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        base = f"http://{request.host}"
        body = _index([(f"{base}/c{i}.xml", stamp) for i in range(count)])
        return web.Response(status=200, headers=XML, text=body)

    return handler


async def _now_site(serve: Serve, count: int, offset: timedelta) -> str:
    site = Site()
    base = await serve(site)
    future = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%d")
    site.routes["/sitemap.xml"] = _stamped(count, offset, future)
    for i in range(count):
        site.routes[f"/c{i}.xml"] = (200, XML, _urlset(future, page=f"{base}/p{i}"))
        site.routes[f"/p{i}"] = (200, HTML, "<p>page</p>")
    return base


async def test_index_served_now(serve: Serve) -> None:
    """Five entries stamped with the time of serving: one index-lastmod-now (url null,
    line null), no lastmod-uniform, and no index-lastmod-behind for its children, whose
    entries are dated after it."""
    base = await _now_site(serve, 5, timedelta(0))
    run = await audit(f"{base}/sitemap.xml")
    now = run.findings("index-lastmod-now")
    assert len(now) == 1
    assert (now[0]["url"], now[0]["sitemap"], now[0]["line"]) == (
        None,
        f"{base}/sitemap.xml",
        None,
    )
    assert not run.findings("lastmod-uniform")
    assert not run.findings("index-lastmod-behind")


async def test_index_stamped_two_minutes_ago_is_not_served_now(serve: Serve) -> None:
    """The control: the same index stamped 2 minutes before serving is lastmod-uniform (as
    before), not index-lastmod-now, and its children are judged (behind)."""
    base = await _now_site(serve, 5, timedelta(minutes=-2))
    run = await audit(f"{base}/sitemap.xml")
    assert not run.findings("index-lastmod-now")
    assert len(run.findings("lastmod-uniform")) == 1
    assert len(run.findings("index-lastmod-behind")) == 5


async def test_one_entry_is_not_served_now(serve: Serve) -> None:
    base = await _now_site(serve, 1, timedelta(0))
    run = await audit(f"{base}/sitemap.xml")
    assert not run.findings("index-lastmod-now")
    assert len(run.findings("index-lastmod-behind")) == 1


async def test_tolerance_widens_served_now(serve: Serve) -> None:
    base = await _now_site(serve, 2, timedelta(minutes=-2))
    assert not (await audit(f"{base}/sitemap.xml")).findings("index-lastmod-now")
    tolerant = await audit(f"{base}/sitemap.xml", lastmod_tolerance_s=300)
    assert len(tolerant.findings("index-lastmod-now")) == 1


@pytest.mark.slow
async def test_a_night_with_carried_children_reports_what_a_fresh_run_does(
    serve: Serve, tmp_path: Path
) -> None:
    """--state: on the second run the children answer 304 and are carried from the state;
    index-lastmod-behind is judged on their stored entries, exactly as on the first run
    and as a run without state."""
    site = Site()
    base = await serve(site)
    cases = {k: CASES[k] for k in ("day-2330utc", "day-behind", "second-behind", "month-within")}
    entries = [(f"{base}/{name}.xml", case[0]) for name, case in cases.items()]
    site.routes["/sitemap.xml"] = (200, XML, _index(entries))
    for name, (_, lastmods, _) in cases.items():
        body = _urlset(*lastmods, page=f"{base}/p/{name}")
        site.routes[f"/{name}.xml"] = _etagged(body)
        site.routes[f"/p/{name}"] = (200, HTML, "<p>page</p>")

    def run(out: str, *state: str) -> list[dict[str, Any]]:
        path = tmp_path / out
        argv = ["crawl", f"{base}/sitemap.xml", "--format", "jsonl", "-o", str(path)]
        argv += ["--no-progress", "--fail-on", "never", "--retries", "0", "--rate", "1000"]
        assert main([*argv, *state]) == 0
        return [json.loads(line) for line in path.read_text().splitlines()]

    def behind(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(
            (r["url"], r["sitemap"], r["line"], r["severity"])
            for r in records
            if r["type"] == "finding" and r["code"].startswith("index-lastmod")
        )

    state = str(tmp_path / "state.sqlite")
    fresh = await asyncio.to_thread(run, "fresh.jsonl")
    night1 = await asyncio.to_thread(run, "n1.jsonl", "--state", state)
    night2 = await asyncio.to_thread(run, "n2.jsonl", "--state", state)
    carried = [r["url"] for r in night2 if r["type"] == "sitemap" and r.get("carried")]
    assert len(carried) == len(cases)  # every child came from the state
    assert [f[0] for f in behind(fresh)] == sorted(
        [f"{base}/day-behind.xml", f"{base}/second-behind.xml"]
    )
    assert behind(night1) == behind(fresh)
    assert behind(night2) == behind(fresh)


def _etagged(body: str) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(status=200, headers={**XML, "ETag": '"v1"'}, text=body)

    return handler


async def test_a_child_blocked_by_robots_does_not_count(serve: Serve) -> None:
    """A child sitemap robots.txt disallows is still read (sitemap-robots-blocked), but it
    is not one read completely: its entry is not judged. The control is allowed."""
    cases = {
        "blocked": ("2024-07-01", ("2024-08-01",), True),
        "allowed": ("2024-07-01", ("2024-08-01",), True),
    }
    base, site, _ = await _site(serve, cases)
    site.routes["/robots.txt"] = (
        200,
        {"Content-Type": "text/plain"},
        "User-agent: *\nDisallow: /blocked.xml\n",
    )
    run = await audit(f"{base}/sitemap.xml")
    assert [f["url"] for f in run.findings("sitemap-robots-blocked")] == [f"{base}/blocked.xml"]
    assert set(_behind(run)) == {f"{base}/allowed.xml"}
