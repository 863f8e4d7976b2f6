"""17.4: one long Retry-After never stalls a run (--max-retry-after, also in --config)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, urlset

CAP = 10  # seconds; the run must end well within it plus a few seconds
DEADLINE = CAP + 15


@pytest.mark.slow
async def test_a_retry_after_over_the_cap_is_reported_at_once(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    soft_calls = 0

    async def soft(request: web.Request) -> web.Response:  # asks for 1 s once: honoured
        nonlocal soft_calls
        soft_calls += 1
        if soft_calls == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(status=200, headers=HTML, text="ok")

    pages = [f"{base}/p{i}" for i in range(198)]
    site.routes = {
        "/robots.txt": (200, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/hour", f"{base}/soft", *pages)),
        "/hour": (429, {"Retry-After": "3600"}, "later"),
        "/soft": soft,
        **{f"/p{i}": (200, HTML, "ok") for i in range(198)},
    }
    config = tmp_path / "audit.toml"
    config.write_text(f"max-retry-after = {CAP}\nrate = 1000\nretries = 2\n")
    out = tmp_path / "r.jsonl"
    argv = ["crawl", f"{base}/sitemap.xml", "--config", str(config)]
    argv += ["--format", "jsonl", "--output", str(out), "--no-progress"]
    rc = await asyncio.wait_for(asyncio.to_thread(main, argv), timeout=DEADLINE)

    assert rc == 0  # url-rate-limited is a warning
    records = [json.loads(line) for line in out.read_text().splitlines()]
    urls = {r["url"]: r for r in records if r["type"] == "url"}
    assert len(urls) == 200
    assert urls[f"{base}/hour"]["status"] == 429
    assert urls[f"{base}/soft"]["status"] == 200
    assert all(urls[p]["status"] == 200 for p in pages)
    limited = [r for r in records if r["type"] == "finding" and r["code"] == "url-rate-limited"]
    assert [f["url"] for f in limited] == [f"{base}/hour"]
    assert "3600" in limited[0]["message"] and f"{CAP} s" in limited[0]["message"]
    # what the server saw: the hour-long URL never retried (a HEAD, then the GET that
    # confirms any HEAD error); the one asking for 1 s was waited for
    assert [h.method for h in site.hits if h.path == "/hour"] == ["HEAD", "GET"]
    assert soft_calls == 2
    hosts = next(r for r in records if r["type"] == "hosts")["hosts"]
    assert any("--max-retry-after" in note for note in hosts[0]["notes"])


def test_max_retry_after_flag_reaches_the_config() -> None:
    from audit.cli.main import build_parser, config_from

    args = build_parser().parse_args(["crawl", "x.xml", "--max-retry-after", "7.5"])
    assert config_from(args).retry_after_cap == 7.5
    args = build_parser().parse_args(["crawl", "x.xml"])
    assert config_from(args).retry_after_cap == 120
