"""A run that died long ago is not resumed: tonight's run after last night's killed one
requests again what the dead run had checked (so a page broken since then is seen), and
starts from the last complete run (a run that died recently is still resumed:
tests/state/test_store.py::test_resume_after_sigkill)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.crawlkit import HTML, TEXT, XML, Site, urlset

ROOT = Path(__file__).resolve().parents[2]


async def _crawl(base: str, state: Path, out: Path) -> subprocess.CompletedProcess[str]:
    # in a thread: the test's own server answers on this event loop
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "audit", "crawl", f"{base}/sitemap.xml", "--state", str(state),
         "--format", "jsonl", "--output", str(out), "--no-progress", "--rate", "1000"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _die(state: Path, started: str) -> None:
    """Make the state's last run one that died (status running) at `started`, having
    checked every URL already (its rows copied from the complete run before it)."""
    with sqlite3.connect(state) as conn:
        conn.execute("UPDATE meta SET value = 'running' WHERE key = 'status'")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'started'", (started,))
        (run,) = conn.execute("SELECT value FROM meta WHERE key = 'run'").fetchone()
        dead = int(run) + 1
        conn.execute("UPDATE meta SET value = ? WHERE key = 'run'", (str(dead),))
        conn.execute("INSERT INTO results SELECT * FROM urls")
        conn.execute("UPDATE results SET run = ?", (dead,))


async def test_a_run_that_died_last_night_is_not_resumed(serve: Any, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    pages = [f"{base}/p{i}" for i in range(5)]
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(*pages)),
        **{f"/p{i}": (200, HTML, "") for i in range(5)},
    }
    state, out = tmp_path / "s.sqlite", tmp_path / "r.jsonl"
    assert (await _crawl(base, state, out)).returncode == 0  # night 1, complete
    _die(state, "2020-01-01T00:00:00Z")  # a run that died long ago
    del site.routes["/p3"]  # broken since
    night = await _crawl(base, state, out)
    assert night.returncode == 1 and "resumed" not in night.stderr
    assert '"url-not-found"' in out.read_text()
