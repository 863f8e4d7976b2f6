"""`crawl --render` on the command line: its options' usage errors, a missing browser
stopped before the first request (one line, exit 2), and no browser process or profile
outliving a run that is interrupted (SIGINT) or killed (SIGKILL) mid-render."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from aiohttp import web

from audit.cli.main import main
from tests.crawlkit import HTML, XML, Serve, Site, urlset

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# CI sets REQUIRE_CHROMIUM so that a missing browser fails instead of skipping
NO_CHROMIUM = CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM")
ROOT = Path(__file__).resolve().parents[2]


def one_line(err: str, *needles: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert all(n in lines[0] for n in needles), err


async def small_site(serve: Serve) -> tuple[str, Site]:
    site = Site()
    base = await serve(site)
    site.routes["/p"] = (200, HTML, "<title>p</title><p>text</p>")
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/p"))
    return base, site


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["--render", "0"], ["--render", "not a positive integer nor all: '0'"]),
        (["--render", "many"], ["--render", "not a positive integer nor all: 'many'"]),
        (["--render", "--render-tabs", "17"], ["--render-tabs 17: at most 16"]),
        (["--render", "--render-tabs", "0"], ["--render-tabs"]),
        (["--render", "--render-timeout", "-1"], ["--render-timeout"]),
    ],
)
async def test_render_options_usage_errors(
    serve: Serve, capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]
) -> None:
    base, site = await small_site(serve)
    code = await asyncio.to_thread(main, ["crawl", base + "/sitemap.xml", *argv, "--no-progress"])
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, *needles)
    assert site.hits == []


async def test_missing_browser_stops_before_the_first_request(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base, site = await small_site(serve)
    code = await asyncio.to_thread(
        main,
        ["crawl", base + "/sitemap.xml", "--render", "--browser", str(tmp_path / "chrome")],
    )
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, f"--browser {tmp_path / 'chrome'}: no such browser", "apt-get install chromium")
    assert site.hits == []


async def test_no_browser_on_path_names_what_was_looked_for(
    serve: Serve,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base, site = await small_site(serve)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SITEMAP_AUDIT_BROWSER", raising=False)
    code = await asyncio.to_thread(main, ["crawl", "--render", base + "/sitemap.xml"])
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, "chromium, chromium-browser, google-chrome", "--browser PATH")
    assert site.hits == []


def _processes_naming(mark: str) -> list[str]:
    """Command lines of the processes that name `mark` (the run's temp directory)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if mark.encode() in cmdline:
            found.append(cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


async def _until_gone(mark: str, seconds: float = 20.0) -> list[str]:
    left = _processes_naming(mark)
    for _ in range(int(seconds / 0.1)):
        if not left:
            break
        await asyncio.sleep(0.1)
        left = _processes_naming(mark)
    return left


async def _crawl_until_rendering(
    serve: Serve,
) -> tuple[asyncio.subprocess.Process, Path]:
    """A crawl subprocess whose browser is loading a page that never finishes."""
    rendering = asyncio.Event()

    async def never(request: web.Request) -> web.StreamResponse:
        rendering.set()
        resp = web.StreamResponse(headers={"Content-Type": "text/javascript"})
        await resp.prepare(request)
        while True:
            await resp.write(b"//\n")
            await asyncio.sleep(0.1)

    site = Site()
    base = await serve(site)
    site.routes["/p"] = (200, HTML, '<title>p</title><script src="/never.js"></script>')
    site.routes["/never.js"] = never
    site.routes["/sitemap.xml"] = (200, XML, urlset(base + "/p"))
    # a short unique temp dir: Chromium's singleton socket lives under it (a unix socket
    # path has at most 107 bytes)
    temp = Path(tempfile.mkdtemp(prefix="sa-render-", dir="/tmp"))
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        "crawl",
        base + "/sitemap.xml",
        "--render",
        "--render-timeout",
        "50",
        "--no-progress",
        "--format",
        "jsonl",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    try:
        await asyncio.wait_for(rendering.wait(), 30)
    except TimeoutError:
        if proc.returncode is None:
            proc.kill()
        out, err = await proc.communicate()
        raise AssertionError(
            f"no render began: {out.decode()[-2000:]} {err.decode()[-500:]}"
        ) from None
    assert _processes_naming(str(temp))  # the browser runs, its profile in the temp dir
    return proc, temp


@pytest.mark.slow
@pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium installed (Debian package chromium)")
async def test_a_killed_run_leaves_no_browser_process(serve: Serve) -> None:
    proc, temp = await _crawl_until_rendering(serve)
    proc.kill()  # SIGKILL: nothing of the crawl runs any more
    await proc.wait()
    assert await _until_gone(str(temp)) == []
    assert list(temp.iterdir()) == []  # the profile is gone too
    temp.rmdir()


@pytest.mark.slow
@pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium installed (Debian package chromium)")
async def test_an_interrupted_run_ends_its_browser_and_writes_its_report(serve: Serve) -> None:
    proc, temp = await _crawl_until_rendering(serve)
    proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 130, err
    assert b'"interrupted":true' in out.replace(b" ", b"")
    assert b'"rendered":false' in out.replace(b" ", b"")  # the held page, unrendered
    assert _processes_naming(str(temp)) == []  # ended before the crawl exited
    assert list(temp.iterdir()) == []
    temp.rmdir()


async def test_render_with_cluster_is_refused_before_any_request(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    base, site = await small_site(serve)
    argv = ["crawl", base + "/sitemap.xml", "--render", "--cluster", "local:1"]
    code = await asyncio.to_thread(main, argv)
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, "--cluster does not run --render yet")
    assert site.hits == []


async def test_render_in_a_config_file(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base, site = await small_site(serve)
    good = tmp_path / "good.toml"
    good.write_text(f'render = "all"\nrender-tabs = 3\nbrowser = "{tmp_path}/no-chrome"\n')
    code = await asyncio.to_thread(main, ["crawl", base + "/sitemap.xml", "--config", str(good)])
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, f"--browser {tmp_path}/no-chrome: no such browser")  # read, then refused
    bad = tmp_path / "bad.toml"
    bad.write_text('render = "lots"\n')
    code = await asyncio.to_thread(main, ["crawl", base + "/sitemap.xml", "--config", str(bad)])
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, "--render: not a positive integer nor all: 'lots'")
    assert site.hits == []


async def test_a_browser_that_cannot_start_stops_before_the_first_request(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base, site = await small_site(serve)
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    argv = ["crawl", base + "/sitemap.xml", "--render", "--browser", str(broken), "--no-progress"]
    code = await asyncio.to_thread(main, argv)
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, f"--render: {broken} could not be started", "apt-get install chromium")
    assert site.hits == []


async def test_render_alone_before_the_target(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`crawl --render TARGET`: the target is no N, it is the target."""
    base, site = await small_site(serve)
    argv = ["crawl", "--render", base + "/sitemap.xml", "--browser", str(tmp_path / "none")]
    code = await asyncio.to_thread(main, argv)
    _, err = capsys.readouterr()
    assert code == 2
    one_line(err, f"--browser {tmp_path / 'none'}: no such browser")
    assert site.hits == []
