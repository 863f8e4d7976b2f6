"""audit.front.after: IndexNow's step made from the options (and skipped by a run that was
cut), and the notifications judged and sent over real HTTP (a loopback webhook)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

from aiohttp import web

from audit.api import Audit
from audit.core.config import CrawlConfig
from audit.front.after import IndexNow, send_notices, take_snapshot
from audit.front.options import RunOptions
from tests.crawlkit import Serve

SITEMAP = Path(__file__).resolve().parents[2] / "fixtures" / "sitemaps" / "valid" / "urlset.xml"


async def _finished_run() -> Audit:
    run = Audit(str(SITEMAP), CrawlConfig(), mode="validate")
    await run.run()
    run.finish()
    return run


def test_indexnow_step_of_the_options() -> None:
    assert IndexNow.of(RunOptions()) is None
    step = IndexNow.of(RunOptions(indexnow="abcdefgh12", state="s"))
    assert step is not None and step.endpoint == "https://api.indexnow.org/indexnow"
    assert not step.dry_run and callable(step.collector)
    own = IndexNow.of(
        RunOptions(indexnow="abcdefgh12", state="s", dry_run=True, indexnow_endpoint="http://x/")
    )
    assert own is not None and own.endpoint == "http://x/" and own.dry_run


async def test_a_run_without_its_state_or_cut_submits_nothing() -> None:
    step = IndexNow.of(RunOptions(indexnow="abcdefgh12", state="s"))
    assert step is not None
    run = await _finished_run()
    await step.submit(run, None, CrawlConfig())  # no store: nothing to compare against
    assert "indexnow" not in run.recorder.notes
    run.recorder.notes["max_urls_reached"] = True
    await step.submit(run, object(), CrawlConfig())  # cut by --max-urls: nothing sent
    assert "indexnow" not in run.recorder.notes


async def test_the_first_night_is_sent_only_when_asked(serve: Serve) -> None:
    posts: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        posts.append(await request.json())
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/hook", hook)
    base = await serve(app)
    run = await _finished_run()
    assert take_snapshot(RunOptions()) is None
    assert send_notices(RunOptions(), None, [str(SITEMAP)], run) == []
    # no earlier run: a baseline, which is not worse, so nothing is sent by default
    quiet = RunOptions(notify=(base + "/hook",))
    errors = await asyncio.to_thread(send_notices, quiet, take_snapshot(quiet), ["t"], run)
    assert errors == [] and posts == []
    loud = RunOptions(notify=(base + "/hook",), notify_always=True)
    errors = await asyncio.to_thread(send_notices, loud, take_snapshot(loud), ["t"], run)
    assert errors == [] and [p["verdict"] for p in posts] == ["baseline"]
    assert posts[0]["targets"] == ["t"] and posts[0]["summary"]["type"] == "summary"


async def test_a_notification_that_cannot_be_sent_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    run = await _finished_run()
    opts = RunOptions(notify=(f"http://127.0.0.1:{port}/hook",), notify_always=True)
    errors = await asyncio.to_thread(send_notices, opts, take_snapshot(opts), ["t"], run)
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0] and "\n" not in errors[0]
