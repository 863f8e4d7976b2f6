"""Issue 22.6: a full disk is one clear line and exit 2, not a traceback after the whole
crawl; the output is checked writable before the first request and what was written
stays valid. A real small filesystem (a 16 KiB tmpfs, as root) where mount is permitted,
else a file size limit (RLIMIT_FSIZE) on the child process."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.crawlkit import HTML, TEXT, XML, Site, urlset

ROOT = Path(__file__).resolve().parents[2]
Limit = Callable[[], None] | None


@pytest.fixture
def small_dir(tmp_path: Path) -> Iterator[tuple[Path, Callable[[int], Limit]]]:
    """A directory on a 16 KiB filesystem, and how to make a child see `n` bytes free."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode == 0:

        def fill(free: int) -> Limit:
            if free == 0:
                with open(mount / "filler", "wb") as fh, pytest.raises(OSError):
                    fh.write(b"x" * 65536)
                    fh.flush()
            return None

        try:
            yield mount, fill
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)
        return

    def limit(free: int) -> Limit:
        def preexec() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (max(free, 1), max(free, 1)))

        return preexec

    yield mount, lambda free: limit(free or 100)


def _cli(*argv: str, preexec: Limit) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "audit", *argv],
        capture_output=True, text=True, timeout=50, env=env, preexec_fn=preexec,
    )  # fmt: skip


def _assert_one_line(stderr: str, path: Path) -> None:
    assert "Traceback" not in stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "cannot write" in lines[0], stderr


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "junit"])
def test_full_disk_mid_run_is_one_line_and_exit_2(
    small_dir: tuple[Path, Callable[[int], Limit]], tmp_path: Path, fmt: str
) -> None:
    directory, make = small_dir
    locs = "".join(
        f"<url><loc>https://www.example.com/p{i}</loc><lastmod>bad-{i}</lastmod></url>"
        for i in range(3000)
    )
    source = tmp_path / "big.xml"
    source.write_text(urlset().replace("</urlset>", locs + "</urlset>"))
    out = directory / f"report.{fmt}"
    done = _cli("validate", "--format", fmt, "-o", str(out), "--fail-on", "never",
                str(source), preexec=make(16 * 1024))  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    _assert_one_line(done.stderr, out)
    if fmt == "jsonl":
        records = [json.loads(line) for line in out.read_text().splitlines()]
        assert records  # what was written before the disk filled is kept, every line whole


@pytest.mark.slow
async def test_no_request_when_the_output_is_not_writable(
    small_dir: tuple[Path, Callable[[int], Limit]],
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    directory, make = small_dir
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/a")),
        "/a": (200, HTML, "a"),
    }
    out = directory / "report.jsonl"
    preexec: Any = make(0)
    done = await asyncio.to_thread(
        _cli, "crawl", "--format", "jsonl", "-o", str(out), f"{base}/sitemap.xml", preexec=preexec
    )
    assert done.returncode == 2, done.stderr[-2000:]
    _assert_one_line(done.stderr, out)
    assert site.hits == []  # checked before the first request
