"""A fetch worker process (audit/http/fetchworker.py) spoken to as its parent speaks to it:
frames on its stdin and stdout (workers.frame / split_frames), requests to a loopback
server answered with the same values as in-process, a sink outside the allowed modules
refused before anything is sent, a cancel, and bad settings as one line on stderr."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from aiohttp import web

from audit.http.workers import frame, split_frames

SETTINGS = {
    "user_agent": "sitemap-audit/worker-test",
    "timeout": 10.0,
    "concurrency": 4,
    "per_host": 4,
    "trusted": [],
    "guarded": False,
    "sink_modules": ["audit."],
    "retry_after_cap": 5.0,
}


class Worker:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.buf = bytearray()

    @classmethod
    async def start(cls, settings: dict[str, Any] = SETTINGS) -> Worker:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "audit.http.fetchworker", json.dumps(settings),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        worker = cls(proc)
        assert await worker.messages() == []  # the empty first frame: ready
        return worker

    def send(self, *messages: tuple[Any, ...]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(list(messages)))

    async def messages(self, want: int = 0) -> list[Any]:
        """The next frame's messages (at least `want` of them, across frames)."""
        assert self.proc.stdout is not None
        got: list[Any] = []
        while True:
            chunk = await asyncio.wait_for(self.proc.stdout.read(65536), 20)
            assert chunk, "the worker closed its stdout"
            self.buf += chunk
            got += split_frames(self.buf)
            if len(got) >= want and not self.buf:
                return got

    async def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        err = await self.proc.stderr.read()
        return await asyncio.wait_for(self.proc.wait(), 20), err


def site(hits: list[str] | None = None) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        if hits is not None:
            hits.append(request.path)
        return web.Response(text="<title>x</title>" + "y" * 5000, content_type="text/html",
                            headers={"X-Agent": request.headers["User-Agent"]})  # fmt: skip

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response(text="late")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/page")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/slow", slow)
    app.router.add_get("/moved", moved)
    return app


async def test_requests_answered_with_status_headers_and_a_capped_body(aiohttp_server: Any) -> None:
    server = await aiohttp_server(site())
    worker = await Worker.start()
    try:
        page, moved = str(server.make_url("/page")), str(server.make_url("/moved"))
        worker.send(
            (1, "GET", page, None, True, 100, False), (2, "HEAD", moved, None, True, 0, False)
        )
        answers = {m[0]: m for m in await worker.messages(want=2)}
        _, status, headers, body, error, kind, elapsed = answers[1]
        assert (status, error, kind) == (200, "", None)  # no error: no message
        assert dict(headers)["x-agent"] == "sitemap-audit/worker-test"  # its own User-Agent
        assert body.startswith(b"<title>x</title>") and len(body) <= 100 and elapsed >= 0
        assert answers[2][1] == 301  # redirects are the parent's to follow
        assert dict(answers[2][2])["location"].endswith("/page")
    finally:
        code, err = await worker.close()
    assert code == 0 and err == b""


async def test_a_sink_outside_the_allowed_modules_is_refused_unsent(aiohttp_server: Any) -> None:
    hits: list[str] = []
    server = await aiohttp_server(site(hits))
    worker = await Worker.start()
    try:
        recipe = ("os:system", ("true",))
        worker.send((7, "GET", str(server.make_url("/page")), None, True, 1000, False, recipe))
        (answer,) = await worker.messages(want=1)
        assert answer[0] == 7 and answer[1] is None
        assert "'os:system'" in answer[-1]
    finally:
        await worker.close()
    assert hits == []  # nothing was sent


async def test_a_cancelled_request_is_not_answered(aiohttp_server: Any) -> None:
    server = await aiohttp_server(site())
    worker = await Worker.start()
    try:
        worker.send((3, "GET", str(server.make_url("/slow")), None, True, 100, False))
        await asyncio.sleep(0.2)
        worker.send((3,), (4, "GET", str(server.make_url("/page")), None, True, 10, False))
        (answer,) = await worker.messages(want=1)
        assert answer[0] == 4  # 3 was cancelled: no answer comes for it
    finally:
        code, _ = await worker.close()
    assert code == 0


async def test_bad_settings_are_one_line_on_stderr() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "audit.http.fetchworker", "{not json",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 20)
    assert proc.returncode == 1 and out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sitemap-audit fetch worker: error: ")
