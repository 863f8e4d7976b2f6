"""`sitemap-audit crawl` (audit/cli/crawl.py): exit codes over HTTP, SIGINT writes the report
and exits 130, --state with --page-checks and --rewrite, --rate unlimited."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from audit.cli.main import main
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, index, urlset


@pytest.mark.slow
async def test_crawl_cli_exit_codes_over_http(
    serve: Serve, unused_tcp_port: int, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, f"Sitemap: {base}/sitemap.xml\n"),
        "/sitemap.xml": (200, XML, urlset(f"{base}/ok", f"{base}/missing")),
        "/ok": (200, HTML, "ok"),
    }
    out = tmp_path / "r.jsonl"

    def cli(*argv: str) -> int:
        return main(list(argv))

    rc = await asyncio.to_thread(
        cli, "crawl", base + "/", "--format", "jsonl", "--output", str(out), "--no-progress"
    )
    assert rc == 1
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["url"] for r in records if r["type"] == "url"} == {f"{base}/ok", f"{base}/missing"}
    assert records[-1]["type"] == "summary"
    rc = await asyncio.to_thread(
        cli, "crawl", base + "/", "--fail-on", "never", "--output", str(tmp_path / "t.txt")
    )
    assert rc == 0
    # nothing listens on this port: one clear line, exit 2
    rc = await asyncio.to_thread(
        cli,
        "crawl",
        f"http://127.0.0.1:{unused_tcp_port}/",
        "--retries",
        "0",
        "--output",
        str(tmp_path / "u.txt"),
    )
    assert rc == 2
    # validate over HTTP fetches an index's children
    site.routes["/idx.xml"] = (200, XML, index(f"{base}/sitemap.xml"))
    rc = await asyncio.to_thread(
        cli, "validate", f"{base}/idx.xml", "--format", "jsonl", "--output", str(out)
    )
    sitemaps = [json.loads(x) for x in out.read_text().splitlines() if '"sitemap"' in x]
    assert {s["url"] for s in sitemaps if s["type"] == "sitemap"} == {
        f"{base}/idx.xml",
        f"{base}/sitemap.xml",
    }


@pytest.mark.slow
async def test_sigint_writes_the_report_and_exits_130(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)

    async def slow(request: Any) -> Any:
        from aiohttp import web

        await asyncio.sleep(0.2)
        return web.Response(text="x")

    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(200)])),
        **{f"/p{i}": slow for i in range(200)},
    }
    out = tmp_path / "r.jsonl"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        "crawl",
        f"{base}/sitemap.xml",
        "--format",
        "jsonl",
        "--output",
        str(out),
        "--concurrency",
        "2",
        "--rate",
        "100",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    for _ in range(200):
        await asyncio.sleep(0.05)
        if len([h for h in site.hits if h.path.startswith("/p")]) >= 6:
            break
    proc.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records[-1]["type"] == "summary" and records[-1]["interrupted"] is True
    assert 0 < len([r for r in records if r["type"] == "url"]) < 200


@pytest.mark.slow
async def test_state_page_checks_and_rewrite_compose(serve: Serve, tmp_path: Path) -> None:
    """--state goes through the same URL check as a plain run: page checks and a rewrite
    apply, and a second run answers from the state without a request."""
    live, staging = Site(), Site()
    live_base = await serve(live)
    staging_base = await serve(staging)
    page = '<html><head><meta name="robots" content="noindex"><title>x</title></head></html>'
    staging.routes = {  # staging serves the new sitemap, written with the live site's URLs
        "/sitemap.xml": (200, XML, urlset(f"{live_base}/hidden", f"{live_base}/ok")),
        "/hidden": (200, HTML, page),
        "/ok": (200, HTML, "<html><head></head></html>"),
    }
    state, out = tmp_path / "s.db", tmp_path / "r.jsonl"
    argv = [
        "crawl", f"{live_base}/sitemap.xml", "--state", str(state), "--page-checks",
        "--rewrite", f"{live_base}={staging_base}", "--format", "jsonl", "--output", str(out),
        "--allow-private",
    ]  # fmt: skip
    rc = await asyncio.to_thread(main, argv)
    records = [json.loads(x) for x in out.read_text().splitlines()]
    noindex = [r for r in records if r["type"] == "finding" and r["code"] == "url-noindex"]
    assert rc == 1 and [r["url"] for r in noindex] == [f"{live_base}/hidden"]
    assert "checked at" in noindex[0]["message"]
    assert sorted(staging.paths()) == ["/hidden", "/ok", "/robots.txt", "/sitemap.xml"]
    assert live.hits == []  # everything was read and checked on staging
    assert all(h.method == "GET" for h in staging.hits)  # page checks: one GET per URL
    # a second run after a completed one re-checks (these pages send no validators for a
    # conditional request) and reports the same URLs, page checks included
    rc2 = await asyncio.to_thread(main, argv)
    again = [json.loads(x) for x in out.read_text().splitlines()]
    assert (
        rc2 == 1 and [r["code"] for r in again if r["type"] == "finding"].count("url-noindex") == 1
    )
    # records come in the order answers arrive (two URLs race at the default concurrency)
    assert sorted(r["url"] for r in again if r["type"] == "url") == sorted(
        r["url"] for r in records if r["type"] == "url"
    )


async def test_rate_unlimited(serve: Serve, tmp_path: Path) -> None:
    """`--rate unlimited` (the spelling of the issue; `inf` too) runs without a limiter:
    the hosts record shows no rate, where a number shows that number."""
    site = Site()
    base = await serve(site)
    site.routes = {
        "/sitemap.xml": (200, XML, urlset(*[f"{base}/p{i}" for i in range(5)])),
        **{f"/p{i}": (200, HTML, "<html></html>") for i in range(5)},
    }
    rates = {}
    for given in ("unlimited", "inf", "50"):
        out = tmp_path / f"{given}.jsonl"
        argv = ["crawl", f"{base}/sitemap.xml", "--rate", given, "--format", "jsonl"]
        rc = await asyncio.to_thread(main, [*argv, "--output", str(out), "--no-progress"])
        records = [json.loads(x) for x in out.read_text().splitlines()]
        assert rc == 0 and len([r for r in records if r["type"] == "url"]) == 5
        (hosts,) = [r for r in records if r["type"] == "hosts"]
        rates[given] = {h["rate"] for h in hosts["hosts"]}
    assert rates == {"unlimited": {None}, "inf": {None}, "50": {50.0}}
