"""Words that match what happened (issue 33.5), as real processes against loopback sites:
which target of several was not audited; a staging host that asks for credentials, said
once with how to give them; --rewrite advice in production terms; `report` on a file that
is not jsonl is one line, with no report before it."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from tests.crawlkit import HTML, XML, Serve, Site, urlset


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "audit", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip


async def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(_cli, *argv, cwd=cwd)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


PAGE = (200, HTML, "<html><head><title>t</title></head><body>page</body></html>")


async def test_one_of_two_targets_failing_is_named_not_nothing_audited(
    serve: Serve, tmp_path: Path
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {"/robots.txt": (404, {}, ""), "/sitemap.xml": (200, XML, urlset(base + "/a"))}
    site.routes["/a"] = PAGE
    dead = f"http://127.0.0.1:{_closed_port()}/"
    out = await _run(
        "crawl", f"{base}/sitemap.xml", dead, "--retries", "0", "--timeout", "3",
        "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 2
    assert "NOTHING AUDITED" not in out.stdout
    verdict = out.stdout.strip().splitlines()[-1]
    assert verdict.startswith("NOT ALL AUDITED: not audited: " + dead), verdict
    assert "cannot be reached" in verdict and "the other targets were" in verdict
    junit = await _run(
        "crawl", f"{base}/sitemap.xml", dead, "--retries", "0", "--timeout", "3",
        "--format", "junit", cwd=tmp_path,
    )  # fmt: skip
    assert 'errors="1"' in junit.stdout and dead in junit.stdout  # the run's own error


async def test_migrate_against_a_staging_host_that_asks_for_credentials(
    serve: Serve, tmp_path: Path
) -> None:
    old = Site()
    old_base = await serve(old)
    old.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(*(f"{old_base}/p{i}" for i in range(4)))),
    }

    async def locked(request: web.Request) -> web.StreamResponse:
        return web.Response(
            status=401, headers={"WWW-Authenticate": 'Basic realm="staging"'}, text="log in"
        )

    staging = web.Application()
    staging.router.add_route("*", "/{tail:.*}", locked)
    new_base = await serve(staging)
    out = await _run("migrate", f"{old_base}/sitemap.xml", new_base, "--no-progress", cwd=tmp_path)
    assert out.returncode == 1
    # said once, with how to give them
    assert out.stdout.count("--auth USER:PASSWORD") == 1, out.stdout
    note = next(line for line in out.stdout.splitlines() if "--auth USER:PASSWORD" in line)
    assert f"the new site {new_base} asks for credentials" in note
    assert 'Basic realm="staging"' in note and "4 of 4 old URLs" in note
    # each old URL says why it was not judged, not "redirect it with one 301"
    lost = [line for line in out.stdout.splitlines() if "HTTP 401" in line and "/p" in line]
    assert len(lost) == 4 and not any("redirect it with one 301" in line for line in lost)
    report = await _run(
        "migrate", f"{old_base}/sitemap.xml", new_base, "--format", "jsonl", cwd=tmp_path
    )
    summary = json.loads(report.stdout.splitlines()[-1])
    assert summary["migration"]["credentials"] == {"asked": 4, "challenge": 'Basic realm="staging"'}


async def test_rewrite_advice_names_the_production_url(serve: Serve, tmp_path: Path) -> None:
    staging = Site()
    stage = await serve(staging)
    prod = f"http://localhost:{_closed_port()}"  # production is never requested
    staging.routes = {
        "/robots.txt": (404, {}, ""),
        "/sitemap.xml": (200, XML, urlset(f"{prod}/shoes", f"{prod}/hats")),
        "/shoes": (301, {"Location": "/shoes/"}, ""),
        "/shoes/": PAGE,
        "/hats": PAGE,
    }
    out = await _run(
        "crawl", f"{prod}/sitemap.xml", "--rewrite", f"{prod}={stage}", "--format", "jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    records = [json.loads(line) for line in out.stdout.splitlines()]
    (redirect,) = [r for r in records if r.get("code") == "url-redirect"]
    message = redirect["message"]
    assert f"list the final URL {prod}/shoes/ in the sitemap instead" in message, message
    advice, _, where = message.partition(" (checked at ")
    assert stage not in advice  # staging is named only as where it was checked
    assert where == f"{stage}/shoes)"
    (url,) = [r for r in records if r["type"] == "url" and r["url"] == f"{prod}/shoes"]
    assert url["checked_url"] == f"{stage}/shoes" and url["final_url"] == f"{prod}/shoes/"


def test_report_on_a_file_that_is_not_jsonl_is_one_line_and_no_report(tmp_path: Path) -> None:
    (tmp_path / "sitemap.xml").write_text(urlset("https://www.example.com/"))
    (tmp_path / "notes.txt").write_text("hello\n")
    for name in ("sitemap.xml", "notes.txt"):
        for fmt in ("text", "html", "junit", "markdown"):
            out = _cli("report", name, "--format", fmt, cwd=tmp_path)
            assert out.returncode == 2, (name, fmt)
            assert out.stdout == "", (name, fmt, out.stdout[:200])  # no bogus partial report
            (line,) = out.stderr.splitlines()
            assert line.startswith(f"sitemap-audit: error: {name}:1: not valid JSON")
            assert "not a jsonl report" in line
