"""One state file, one run: a second run on a live state is refused and names the holder;
a killed run leaves no stale lock; a state is never marked complete without every URL
row of its run; a state left half-created (a full disk, a kill) is made again."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.state.store import StateError, StateStore, fingerprint, read_records, read_status
from tests.crawlkit import HTML, XML, Site, urlset
from tests.state.test_store import crawl_argv

N = 12
FP = fingerprint("crawl", ["https://www.example.com/"], {})


class GatedSite:
    """N pages; requests of the run named `held` (its X-Run header) wait until the gate
    opens: a long run, without a clock."""

    def __init__(self) -> None:
        self.site = Site()
        self.gate = asyncio.Event()
        self.held = asyncio.Event()
        self.hits: dict[str, list[str]] = {}  # run -> paths
        self.target = ""

    async def start(self, aiohttp_server: Any) -> str:
        server = await aiohttp_server(self.site.app())
        base = str(server.make_url("")).rstrip("/")
        self.site.routes["/sitemap.xml"] = (200, XML, urlset(*(f"{base}/p/{i}" for i in range(N))))
        for i in range(N):
            self.site.routes[f"/p/{i}"] = self.page
        self.target = base + "/sitemap.xml"
        return self.target

    async def page(self, request: web.Request) -> web.StreamResponse:
        run = request.headers.get("X-Run", "")
        self.hits.setdefault(run, []).append(request.path)
        if run == "held" and not self.gate.is_set():
            self.held.set()
            await self.gate.wait()
        return web.Response(status=200, headers=HTML, text="page")


async def start_crawl(
    target: str, state: Path, out: Path, run: str, *prefix: str
) -> asyncio.subprocess.Process:
    # --header is not part of what makes two runs the same audit
    argv = crawl_argv(target, state, out, "--header", f"X-Run: {run}")
    return await asyncio.create_subprocess_exec(
        sys.executable, *(prefix or ("-m", "audit")), *argv, stderr=asyncio.subprocess.PIPE
    )


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    _, err = await proc.communicate()
    assert proc.returncode is not None
    text = err.decode()
    assert "Traceback" not in text, text
    return proc.returncode, text


def assert_complete_with_every_url(state: Path, out: Path) -> None:
    assert read_status(state) == "complete"
    urls = {r["url"] for r in read_records(state) if r["type"] == "url"}
    assert len(urls) == N
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({r["url"] for r in records if r["type"] == "url"}) == N
    summary = records[-1]
    assert summary["type"] == "summary" and not summary.get("interrupted")


@pytest.mark.slow
async def test_a_second_run_on_a_live_state_is_refused_and_names_the_holder(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    site = GatedSite()
    target = await site.start(aiohttp_server)
    state, out1, out2 = tmp_path / "s.sqlite", tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    out2.write_text("the previous report\n")
    run1 = await start_crawl(target, state, out1, "held")
    try:
        await site.held.wait()  # run 1 is under way: it holds the state
        run2 = await start_crawl(target, state, out2, "second")
        status, err = await finish(run2)
    finally:
        site.gate.set()
    assert status == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert str(state) in lines[0] and "in use by another run" in lines[0]
    assert f"pid {run1.pid} " in lines[0] and "started " in lines[0]
    assert "second" not in site.hits  # run 2 requested nothing
    assert out2.read_text() == "the previous report\n"  # and wrote nothing

    status, err = await finish(run1)
    assert status == 0, err
    assert_complete_with_every_url(state, out1)
    assert sorted(site.hits["held"]) == sorted(f"/p/{i}" for i in range(N))


@pytest.mark.slow
async def test_a_killed_run_leaves_no_stale_lock(aiohttp_server: Any, tmp_path: Path) -> None:
    site = GatedSite()
    target = await site.start(aiohttp_server)
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    run1 = await start_crawl(target, state, out, "held")
    try:
        await site.held.wait()
        with pytest.raises(StateError, match=f"pid {run1.pid} "):  # the lock is held
            StateStore.open(state, fingerprint=FP, targets=["t"])
        run1.send_signal(signal.SIGKILL)
        assert (await finish(run1))[0] == -signal.SIGKILL
    finally:
        site.gate.set()
    run2 = await start_crawl(target, state, out, "after")
    status, err = await finish(run2)
    assert status == 0, err
    assert_complete_with_every_url(state, out)


def test_a_state_written_to_by_another_process_is_not_marked_complete(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    st = StateStore.open(path, fingerprint=FP, targets=["t"])
    for i in range(5):
        rec = {"type": "url", "url": f"https://x/{i}", "status": 200}
        st.put_url(f"https://x/{i}", "s", None, None, None, rec, [])
    st.flush()
    # what a second run on the same file did before there was a lock: it completed,
    # taking this run's rows into `urls` and leaving `results` to hold 1 of them
    con = sqlite3.connect(path)
    con.executescript(
        "ALTER TABLE results RENAME TO taken; CREATE TABLE results AS SELECT * FROM taken "
        "LIMIT 1; DROP TABLE taken;"
    )
    con.close()
    with pytest.raises(StateError, match="not marked complete: it holds 1 URL rows"):
        st.close(complete=True)
    assert read_status(path) == "running"  # the next run resumes it


@pytest.mark.slow
async def test_a_run_after_a_full_disk_recovers_without_fresh(
    aiohttp_server: Any, tmp_path: Path
) -> None:
    site = GatedSite()
    site.gate.set()
    target = await site.start(aiohttp_server)
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    # the first run's files may not grow past 100 kB: the disk is full
    full_disk = (
        "-c",
        "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY)); "
        "sys.argv[0] = 'sitemap-audit'; runpy.run_module('audit', run_name='__main__')",
    )
    status, err = await finish(await start_crawl(target, state, out, "full", *full_disk))
    assert status == 2, err
    assert "cannot create the state file" in err, err
    status, err = await finish(await start_crawl(target, state, out, "after"))
    assert status == 0, err
    assert_complete_with_every_url(state, out)
