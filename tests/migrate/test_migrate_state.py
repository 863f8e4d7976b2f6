"""`migrate --state` and `migrate --config` (issue 17.9): a migrate run killed half-way
resumes from its state (old URLs judged before the kill are replayed, not requested
again), and options come from a TOML file as crawl's do. Real processes, loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import XML, Serve, Site, urlset

N = 400
RATE = "200"  # requests per second: the kill lands half-way


class NewSite:
    """The new site: every old path answers 200 itself; requests counted per path."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.page)
        return app

    async def page(self, request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        self.hits[request.path] += 1
        return web.Response(text="<html>new</html>", content_type="text/html")


async def two_sites(serve: Serve, n: int) -> tuple[str, str, NewSite]:
    old = Site()
    old_base = await serve(old)
    old.routes["/robots.txt"] = (404, {}, "")
    old.routes["/sitemap.xml"] = (200, XML, urlset(*(f"{old_base}/p/{i}" for i in range(n))))
    new = NewSite()
    return old_base + "/sitemap.xml", await serve(new), new


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def judged_in_state(state: Path) -> set[str]:
    """The old URLs whose verdict the (killed) run committed to its state."""
    con = sqlite3.connect(state)
    try:
        return {url for (url,) in con.execute("SELECT url FROM results")}
    finally:
        con.close()


async def run_migrate(
    old: str, new: str, *extra: str, site: NewSite | None = None, kill_at: int | None = None
) -> tuple[int | None, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        "migrate",
        old,
        new,
        "--no-progress",
        *extra,
        stderr=asyncio.subprocess.PIPE,
    )
    if kill_at is not None and site is not None:
        while sum(site.hits.values()) < kill_at and proc.returncode is None:
            await asyncio.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    _, err = await proc.communicate()
    text = err.decode()
    assert "Traceback" not in text, text
    return proc.returncode, text


@pytest.mark.slow
async def test_a_killed_migrate_resumes_from_its_state(serve: Serve, tmp_path: Path) -> None:
    old, new, site = await two_sites(serve, N)
    state, out = tmp_path / "m.sqlite", tmp_path / "m.jsonl"
    argv = ["--state", str(state), "--format", "jsonl", "-o", str(out), "--rate", RATE]
    argv += ["--concurrency", "4", "--retries", "0"]

    status, _ = await run_migrate(old, new, *argv, site=site, kill_at=N // 2)
    assert status == -signal.SIGKILL
    judged = judged_in_state(state)
    assert 0 < len(judged) < N, len(judged)  # killed half-way, with verdicts committed
    site.hits.clear()

    status, err = await run_migrate(old, new, *argv)
    assert status == 0, err
    assert "resumed from" in err and f"{len(judged)} old URLs already judged" in err, err
    old_base = old.removesuffix("/sitemap.xml")
    # the URLs judged before the kill are not requested again ...
    again = [u for u in judged if site.hits[u.removeprefix(old_base)]]
    assert again == []
    # ... and every other one is, once
    assert all(site.hits[f"/p/{i}"] == 1 for i in range(N) if f"{old_base}/p/{i}" not in judged)
    final = records(out)
    urls = Counter(r["url"] for r in final if r["type"] == "url")
    assert urls == Counter(f"{old_base}/p/{i}" for i in range(N))  # each exactly once
    assert all(r.get("outcome") == "ok" for r in final if r["type"] == "url")
    migration = final[-1]["migration"]
    assert migration["old_urls"] == N
    assert migration["outcomes"]["ok"]["count"] == N
    assert migration["ok_direct"] == N


async def test_a_state_of_another_migration_is_refused(serve: Serve, tmp_path: Path) -> None:
    old, new, _ = await two_sites(serve, 3)
    state, out = tmp_path / "m.sqlite", tmp_path / "m.jsonl"
    common = ["--state", str(state), "--format", "jsonl", "-o", str(out), "--no-progress"]
    assert await asyncio.to_thread(main, ["migrate", old, new, *common]) == 0
    assert len([r for r in records(out) if r["type"] == "url"]) == 3
    other = new.replace("127.0.0.1", "localhost")
    assert await asyncio.to_thread(main, ["migrate", old, other, *common]) == 2


async def test_migrate_takes_its_options_from_config(serve: Serve, tmp_path: Path) -> None:
    old, new, site = await two_sites(serve, 5)
    out = tmp_path / "m.jsonl"
    config = tmp_path / "migrate.toml"
    config.write_text(
        f'format = "jsonl"\noutput = "{out}"\nmax-urls = 2\nno-progress = true\n',
        encoding="utf-8",
    )
    assert await asyncio.to_thread(main, ["migrate", old, new, "--config", str(config)]) == 0
    got = records(out)
    assert len([r for r in got if r["type"] == "url"]) == 2
    assert sum(site.hits.values()) == 2
    # a flag on the command line wins over the file
    argv = ["migrate", old, new, "--config", str(config), "--max-urls", "3"]
    assert await asyncio.to_thread(main, argv) == 0
    assert len([r for r in records(out) if r["type"] == "url"]) == 3


async def test_migrate_config_refuses_targets_and_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "migrate.toml"
    for body, expected in (
        ('target = "https://old.example/"\n', "migrate takes OLD and NEW"),
        ('old = "https://old.example/"\n', "unknown key 'old'"),
    ):
        config.write_text(body, encoding="utf-8")
        argv = ["migrate", "https://old.example/", "https://new.example", "--config", str(config)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert expected in err and str(config) in err and len(err.strip().splitlines()) == 1
