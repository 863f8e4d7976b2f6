"""The recipes of docs/schedule/ run for real, three nights in a row: a complete night, a
night whose crawl is stopped half-way (SIGTERM: exit 130, an "interrupted" summary), and
a complete night again. The partial night must not replace last.jsonl, the last complete
report, so that the third night is compared with the first, never with a partial run.

Each recipe runs as its scheduler would run it: the crontab entry with /bin/sh, the
service's Exec lines one after the other (a failing one ends the unit, a leading '-'
ignores a failure), the workflow's `run:` steps with bash -eo pipefail (a failed step
skips the later ones that lack `if: always()`). `sitemap-audit` is this checkout."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.crawlkit import HTML, XML, Site, urlset

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schedule"
PAGES = ("/a", "/b", "/c")


def summary_of(path: Path) -> dict[str, Any]:
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["type"] == "summary", f"{path}: no summary at the end"
    return dict(last)


def assert_complete(path: Path) -> None:
    summary = summary_of(path)
    assert not summary.get("interrupted") and not summary.get("partial"), summary
    assert summary["urls"] == len(PAGES)


class Night:
    """The fixture site; `gate` closed holds every page request (a run in progress)."""

    def __init__(self) -> None:
        self.site = Site()
        self.gate = asyncio.Event()
        self.gate.set()
        self.held = asyncio.Event()
        self.gone: set[str] = set()  # paths that answer 404
        self.base = ""

    async def start(self, aiohttp_server: Any) -> None:
        server = await aiohttp_server(self.site.app())
        self.base = str(server.make_url("")).rstrip("/")
        self.site.routes["/sitemap.xml"] = (
            200,
            XML,
            urlset(*(self.base + p for p in PAGES)),
        )
        for path in PAGES:
            self.site.routes[path] = self.page

    async def page(self, request: web.Request) -> web.StreamResponse:
        if not self.gate.is_set():
            self.held.set()
            await self.gate.wait()
        if request.path in self.gone:
            return web.Response(status=404, headers=HTML, text="gone")
        return web.Response(status=200, headers=HTML, text="page")


def workspace(tmp_path: Path, night: Night) -> tuple[Path, Path, Path, dict[str, str]]:
    """The working directory, the `sitemap-audit` on PATH (this checkout, writing its pid
    where the test can signal it), the config file, and the environment."""
    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "sitemap-audit"
    shim.write_text(
        f'#!/bin/sh\necho $$ > "{tmp_path / "pid"}"\nexec {shlex.quote(sys.executable)} '
        '-m audit "$@"\n'
    )
    shim.chmod(0o755)
    config = (DOCS / "audit.toml").read_text()
    config = re.sub(r"(?m)^targets = .*$", f'targets = ["{night.base}/sitemap.xml"]', config)
    config = re.sub(r"(?m)^rate = .*$", "rate = 1000", config)
    # the alerts (tests/scenarios/test_schedule.py runs them against loopback receivers)
    config = re.sub(r"(?m)^(notify|smtp|notify-on) = .*\n", "", config)
    (work / "audit.toml").write_text(config)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
    }
    return work, shim, work / "audit.toml", env


async def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    assert proc.returncode is not None
    text = out.decode()
    assert "Traceback" not in text, text
    return proc.returncode, text


Recipe = Callable[[Path, Path, Path, dict[str, str]], Awaitable[tuple[int, str]]]


async def cron(work: Path, shim: Path, config: Path, env: dict[str, str]) -> tuple[int, str]:
    entry = next(
        line
        for line in (DOCS / "crontab").read_text().splitlines()
        if line.strip() and not line.startswith("#") and not re.match(r"^\w+=", line)
    )
    command = entry.split(None, 5)[5]
    command = command.replace("cd /var/lib/sitemap-audit", f"cd {shlex.quote(str(work))}")
    command = command.replace("/etc/sitemap-audit/audit.toml", str(config))
    return await run(["/bin/sh", "-c", command], work, env)


async def systemd(work: Path, shim: Path, config: Path, env: dict[str, str]) -> tuple[int, str]:
    out = []
    for line in (DOCS / "sitemap-audit.service").read_text().splitlines():
        m = re.match(r"^(ExecStartPre|ExecStart|ExecStartPost)=(.*)$", line)
        if not m:
            continue
        value = m.group(2)
        ignore_failure = value.startswith("-")
        value = value.lstrip("-").replace("/usr/local/bin/sitemap-audit", str(shim))
        value = value.replace("/etc/sitemap-audit/audit.toml", str(config))
        status, text = await run(shlex.split(value), work, env)
        out.append(text)
        if status and not ignore_failure:  # the unit fails; later Exec lines do not run
            return status, "".join(out)
    return 0, "".join(out)


def workflow_steps() -> list[tuple[str, str, bool]]:
    """(name, run script, if: always()) of each step with a `run:`."""
    text = (DOCS / "sitemap-audit.yml").read_text()
    steps = []
    for block in re.split(r"(?m)^      - ", text)[1:]:
        name = re.search(r"(?m)^(?:name: )?(.*)$", block)
        m = re.search(r"(?m)^        run: ?(.*)$", block)
        if not m or name is None:
            continue
        if m.group(1).strip() == "|":
            body = block[m.end() :].split("\n")
            lines = []
            for ln in body[1:]:
                if ln.strip() and not ln.startswith("          "):
                    break
                lines.append(ln[10:])
            script = "\n".join(lines)
        else:
            script = m.group(1)
        steps.append((name.group(1), script, "if: always()" in block))
    return steps


async def actions(work: Path, shim: Path, config: Path, env: dict[str, str]) -> tuple[int, str]:
    failed, out = 0, []
    for name, script, always in workflow_steps():
        if script.startswith("pip install"):
            continue  # sitemap-audit is this checkout
        if failed and not always:
            continue
        status, text = await run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], work, env
        )
        out.append(f"[{name}] {text}")
        failed = failed or status
    return failed, "".join(out)


# the recipe, where it keeps the last complete report, its status on a regression (the
# diff's; cron ignores it, and the alert itself is audit.toml's `notify`)
RECIPES: dict[str, tuple[Recipe, str, int]] = {
    "cron": (cron, "last.jsonl", 1),
    "systemd": (systemd, "last.jsonl", 1),
    "actions": (actions, "audit-state/last.jsonl", 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(RECIPES))
async def test_a_partial_night_keeps_the_last_complete_report(
    aiohttp_server: Any, tmp_path: Path, recipe: str
) -> None:
    night = Night()
    await night.start(aiohttp_server)
    work, shim, config, env = workspace(tmp_path, night)
    run_recipe, last_name, regression = RECIPES[recipe]
    last = work / last_name

    # night 1: complete
    status, out = await run_recipe(work, shim, config, env)
    assert status == 0, out
    assert_complete(last)
    first = last.read_bytes()

    # night 2: the crawl is stopped half-way (SIGTERM, as a shutdown or a timeout does)
    night.gate.clear()
    task = asyncio.ensure_future(run_recipe(work, shim, config, env))
    await night.held.wait()
    os.kill(int((tmp_path / "pid").read_text()), signal.SIGTERM)
    status, out = await task
    night.gate.set()
    assert status != 0, out  # the scheduler sees the failed night
    assert "did not complete" in out or "interrupted" in out, out
    assert last.read_bytes() == first  # the last complete report is kept
    partial = work / "run.jsonl"
    assert summary_of(partial).get("interrupted") is True  # what the night did is kept apart

    # night 3: complete again (it resumes the state), with a regression; it is compared
    # with night 1, the last complete report, not with the partial night
    night.gone.add("/b")
    status, out = await run_recipe(work, shim, config, env)
    assert status == regression, out  # the diff found a new error
    assert_complete(last)
    diff = next(p for p in (work / "diff.txt", work / "diff.md") if p.exists()).read_text()
    assert "url-not-found" in diff and "partial" not in diff, diff
    if recipe == "cron":
        assert out == ""  # cron mails nothing: the alert is `notify`'s, the details diff.txt
    previous = work / "previous.jsonl"
    assert previous.read_bytes() == first
