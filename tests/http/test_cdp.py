"""The DevTools protocol client (audit/http/cdp.py). `Connection` against a loopback
websocket standing in for a browser's endpoint: answers by id, errors as CdpError, events
by session, a closed socket failing every call in flight. `BrowserProcess` with a real
headless Chromium: started under its keeper, asked its version, closed with nothing left."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from audit.http.browserguard import profile_processes
from audit.http.cdp import BROWSER_FLAGS, BrowserGone, BrowserProcess, CdpError, Connection

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM")


class Endpoint:
    """Answers each call: `Fail.*` with an error, `Hang.*` never, `Bye.*` by closing; any
    other method with its params echoed, after an event for the call's session."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            call = json.loads(msg.data)
            self.received.append(call)
            method, session = call["method"], call.get("sessionId")
            if method.startswith("Bye."):
                await ws.close()
                break
            if method.startswith("Hang."):
                continue
            if method.startswith("Fail."):
                await ws.send_str(
                    json.dumps({"id": call["id"], "error": {"message": "no such method"}})
                )
                continue
            event: dict[str, Any] = {"method": "Page.loadEventFired", "params": {"for": method}}
            if session:
                event["sessionId"] = session
            await ws.send_str(json.dumps(event))
            await ws.send_str(json.dumps({"id": call["id"], "result": {"echo": call["params"]}}))
        return ws


async def _connect(aiohttp_server: Any) -> tuple[Connection, Endpoint]:
    endpoint = Endpoint()
    app = web.Application()
    app.router.add_get("/devtools/browser/x", endpoint.handle)
    server = await aiohttp_server(app)
    http = aiohttp.ClientSession()
    ws = await http.ws_connect(server.make_url("/devtools/browser/x"))
    return Connection(ws, http), endpoint


async def test_calls_are_answered_by_id_and_events_go_to_their_session(aiohttp_server: Any) -> None:
    conn, endpoint = await _connect(aiohttp_server)
    events: dict[str, list[tuple[str, dict[str, Any]]]] = {"": [], "S1": []}
    conn.listen("", lambda m, p: events[""].append((m, p)))
    conn.listen("S1", lambda m, p: events["S1"].append((m, p)))
    try:
        first, second = await asyncio.gather(
            conn.send("Browser.getVersion"), conn.send("Page.navigate", {"url": "x"}, session="S1")
        )
        assert first == {"echo": {}} and second == {"echo": {"url": "x"}}
        assert events[""] == [("Page.loadEventFired", {"for": "Browser.getVersion"})]
        assert events["S1"] == [("Page.loadEventFired", {"for": "Page.navigate"})]
        assert [c["id"] for c in endpoint.received] == [1, 2]
        assert endpoint.received[1]["sessionId"] == "S1" and "sessionId" not in endpoint.received[0]
        conn.listen("S1", None)  # dropped from now on
        await conn.send("Page.reload", session="S1")
        assert len(events["S1"]) == 1
        with pytest.raises(CdpError, match="no such method"):
            await conn.send("Fail.please")
    finally:
        await conn.close()


async def test_a_closed_socket_fails_the_calls_in_flight(aiohttp_server: Any) -> None:
    conn, _ = await _connect(aiohttp_server)
    gone: list[str] = []
    conn.listen("S1", lambda m, p: gone.append(m))
    try:
        hanging = asyncio.ensure_future(conn.send("Hang.forever"))
        await asyncio.sleep(0.05)
        with pytest.raises(BrowserGone):
            await conn.send("Bye.now")
        with pytest.raises(BrowserGone):
            await hanging
        assert conn.closed and gone == ["Browser.gone"]
        with pytest.raises(BrowserGone):
            await conn.send("Browser.getVersion")  # nothing is sent any more
    finally:
        await conn.close()


@pytest.mark.slow
@pytest.mark.skipif(NO_CHROMIUM, reason="no Chromium installed (Debian package chromium)")
async def test_a_real_browser_started_asked_and_closed() -> None:
    assert CHROMIUM is not None
    flags = BROWSER_FLAGS if os.geteuid() != 0 else ("--no-sandbox", *BROWSER_FLAGS)
    browser = await BrowserProcess.start(CHROMIUM, flags)
    profile = browser.profile
    try:
        version = await browser.conn.send("Browser.getVersion")
        assert "Chrome" in version["product"] or "Chromium" in version["product"]
        assert browser.pid is not None and browser.memory() > 0
        assert profile_processes(profile)
    finally:
        await browser.close()
    for _ in range(100):
        if not profile_processes(profile) and not Path(profile).exists():
            break
        await asyncio.sleep(0.05)
    assert profile_processes(profile) == [] and not Path(profile).exists()
