"""Issue 22.6, last sentence: a state write failure after a complete report says so
plainly. The run's files may not grow past a limit (RLIMIT_FSIZE in the child process,
SIGXFSZ ignored: a write past it fails with EFBIG as on a full disk) that lets the state
be created and the report be written whole, but not the state's rows of every URL: the
run writes its report, prints one line naming the state file, and exits 2; no
traceback. crawl and migrate, real processes over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from aiohttp import web

from tests.crawlkit import TEXT, XML, Serve, Site, urlset

resource = pytest.importorskip("resource", reason="RLIMIT_FSIZE needs the resource module")

N = 1500
LIMIT = 1_500_000  # bytes a file may hold: the state's creation fits, its URL rows do not
FULL_DISK = (
    "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, resource.RLIM_INFINITY)); "
    "sys.argv[0] = 'sitemap-audit'; runpy.run_module('audit', run_name='__main__')"
)
# a long path makes each row big: the state outgrows the limit long before the report
LONG = "x" * 150


class Pages:
    """Every path answers 200; /sitemap.xml lists N pages of this site."""

    base = ""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.page)
        return app

    async def page(self, request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        if request.path == "/sitemap.xml":
            locs = [f"{self.base}/{LONG}/{i}" for i in range(N)]
            return web.Response(text=urlset(*locs), content_type="application/xml")
        return web.Response(text="<html>ok</html>", content_type="text/html")


async def _sitemap(serve: Serve) -> tuple[str, str]:
    old = Site()
    base = await serve(old)
    locs = [f"{base}/{LONG}/{i}" for i in range(N)]
    old.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, urlset(*locs))}
    pages = Pages()
    pages.base = await serve(pages)
    return base + "/sitemap.xml", pages.base


async def _run(*argv: str) -> tuple[int | None, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FULL_DISK, *argv, stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    return proc.returncode, err.decode()


def _assert_plain_failure(status: int | None, err: str, state: Path, out: Path) -> None:
    assert "Traceback" not in err, err
    assert status == 2, err
    lines = [line for line in err.splitlines() if str(state) in line]
    assert len(lines) == 1, err
    assert "state file could not be written" in lines[0], err
    assert "the report is not affected" in lines[0], err
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records[-1]["type"] == "summary"
    assert len([r for r in records if r["type"] == "url"]) == N  # the whole report


@pytest.mark.slow
async def test_a_crawl_whose_state_cannot_be_written_keeps_its_report(
    serve: Serve, tmp_path: Path
) -> None:
    _, site = await _sitemap(serve)
    target = site + "/sitemap.xml"
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    status, err = await _run(
        "crawl", target, "--state", str(state), "--format", "jsonl", "-o", str(out),
        "--no-progress", "--fail-on", "never", "--rate", "1000", "--retries", "0",
    )  # fmt: skip
    _assert_plain_failure(status, err, state, out)


@pytest.mark.slow
async def test_a_migrate_whose_state_cannot_be_written_keeps_its_report(
    serve: Serve, tmp_path: Path
) -> None:
    old, new = await _sitemap(serve)
    state, out = tmp_path / "m.sqlite", tmp_path / "m.jsonl"
    status, err = await _run(
        "migrate", old, new, "--state", str(state), "--format", "jsonl", "-o", str(out),
        "--no-progress", "--fail-on", "never", "--rate", "1000", "--retries", "0",
    )  # fmt: skip
    _assert_plain_failure(status, err, state, out)
