"""A headless Chromium on the DevTools protocol, over aiohttp's websocket.

`BrowserProcess.start(executable, flags)` starts the browser under its keeper
(audit/http/browserguard.py, a process of its own holding the browser's process group
and a fresh profile directory) and connects to the browser's DevTools endpoint;
`close()` ends both. The keeper ends the browser when its pipe from this process
closes, so a killed audit leaves no browser behind.

`Connection` is the protocol: `send(method, params, session=...)` returns the result
(or raises `CdpError`), events go to the handler registered for their session
(`listen(session, handler)`), and a closed socket fails every call in flight with
`BrowserGone`. Sessions are flat (`Target.attachToTarget(flatten=True)`): one socket.

Why not Playwright: it would add a package and a Node.js driver process between the audit
and the browser (one more process to reap, its own launch rules); the handful of calls
rendering needs are short to write against the protocol, and the process tree stays ours.

Knows no sitemaps and no HTML: aiohttp and the standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any, Final, cast

import aiohttp

__all__ = [
    "BROWSER_FLAGS",
    "BrowserGone",
    "BrowserProcess",
    "CdpError",
    "Connection",
    "StartError",
    "retrieved",
]

# What every browser of a run is started with (the sandbox flag is added by the caller's
# rule: off only where it cannot work, as root).
BROWSER_FLAGS: Final = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--mute-audio",
    "--remote-debugging-port=0",
    "about:blank",
)
START_S: Final = 20.0  # seconds a browser has to open its DevTools port
_PORT_FILE: Final = "DevToolsActivePort"

Handler = Callable[[str, dict[str, Any]], None]


class CdpError(Exception):
    """The browser answered a call with an error."""


class BrowserGone(CdpError):
    """The browser's socket closed (it crashed or was ended) before the answer."""


class StartError(Exception):
    """The browser could not be started (the message says why)."""


class Connection:
    """One DevTools websocket: calls by id, events by session."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, session: aiohttp.ClientSession):
        self._ws = ws
        self._session = session
        self._ids = itertools.count(1)
        self._calls: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str, Handler] = {}
        self.closed = False
        self._reader = asyncio.create_task(self._read())

    def listen(self, session: str, handler: Handler | None) -> None:
        """Events of `session` ("" for the browser's own) go to `handler` (None: dropped)."""
        if handler is None:
            self._handlers.pop(session, None)
        else:
            self._handlers[session] = handler

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        if self.closed:
            raise BrowserGone("the browser is gone")
        call_id = next(self._ids)
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._calls[call_id] = fut
        try:
            await self._ws.send_str(json.dumps(message))
            return await fut
        except (ConnectionError, aiohttp.ClientError) as exc:
            raise BrowserGone(f"the browser is gone ({exc})") from None
        finally:
            self._calls.pop(call_id, None)

    def notify(self, method: str, params: dict[str, Any], *, session: str) -> None:
        """A call whose answer nobody waits for (answering paused requests; on a closed
        connection `send` refuses it at once, and the refusal is a CdpError too)."""
        asyncio.ensure_future(self._quiet(method, params, session)).add_done_callback(retrieved)

    async def _quiet(self, method: str, params: dict[str, Any], session: str) -> None:
        with contextlib.suppress(CdpError):
            await self.send(method, params, session=session)

    async def _read(self) -> None:
        try:
            with contextlib.suppress(ConnectionError, aiohttp.ClientError, ValueError):
                async for msg in self._ws:
                    if msg.type != aiohttp.WSMsgType.TEXT:
                        break
                    self._dispatch(json.loads(msg.data))
        finally:
            self._gone()

    def _dispatch(self, data: dict[str, Any]) -> None:
        call_id = data.get("id")
        if call_id is not None:
            fut = self._calls.get(call_id)
            if fut is not None and not fut.done():
                if "error" in data:
                    fut.set_exception(CdpError(str(data["error"].get("message", data["error"]))))
                else:
                    fut.set_result(data.get("result", {}))
            return
        handler = self._handlers.get(data.get("sessionId", ""))
        if handler is not None:
            handler(data.get("method", ""), data.get("params", {}))

    def _gone(self) -> None:
        self.closed = True
        for fut in self._calls.values():
            if not fut.done():
                fut.set_exception(BrowserGone("the browser is gone"))
        for handler in list(self._handlers.values()):
            handler("Browser.gone", {})

    async def close(self) -> None:
        self.closed = True
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader
        with contextlib.suppress(Exception):
            await self._ws.close()
        await self._session.close()


def retrieved(task: asyncio.Future[Any]) -> None:
    """A done callback of a task nobody awaits: its exception is retrieved (asyncio then
    logs nothing about it; the task's own code dealt with what matters)."""
    if not task.cancelled():
        task.exception()


class BrowserProcess:
    """One browser under its keeper, with its DevTools connection."""

    def __init__(
        self, keeper: asyncio.subprocess.Process, profile: str, conn: Connection, pid: int
    ):
        self.keeper = keeper
        self.profile = profile
        self.conn = conn
        self.pid = pid  # the browser's (its process group's) id

    @classmethod
    async def start(cls, executable: str, flags: tuple[str, ...]) -> BrowserProcess:
        profile = tempfile.mkdtemp(prefix="sa-browser-")  # short: a socket path lives in it
        keeper = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "audit.http.browserguard",
            profile,
            executable,
            *flags,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the terminal is the audit's to handle
        )
        try:
            pid, conn = await asyncio.wait_for(_connect(keeper, profile), START_S)
        except BaseException as exc:
            await _stop(keeper, profile)
            if isinstance(exc, TimeoutError):
                raise StartError(
                    f"{executable} did not open its DevTools port within {START_S:.0f} s"
                ) from None
            raise
        return cls(keeper, profile, conn, pid)

    async def close(self) -> None:
        """The connection closed, the keeper told to end the browser, and waited for."""
        await self.conn.close()
        await _stop(self.keeper, self.profile)

    def memory(self) -> int:
        """Resident bytes of the browser's processes now (0 when none can be read)."""
        return _group_rss(self.pid)


async def _connect(keeper: asyncio.subprocess.Process, profile: str) -> tuple[int, Connection]:
    stdout = cast(asyncio.StreamReader, keeper.stdout)  # a pipe: BrowserProcess.start's
    line = (await stdout.readline()).decode(errors="replace").strip()
    if not line.startswith("started "):
        raise StartError(line or "the browser's keeper ended before the browser started")
    pid = int(line.split()[1])
    path = os.path.join(profile, _PORT_FILE)
    while True:
        if keeper.returncode is not None or not _alive(pid):
            raise StartError("the browser ended while starting")
        with contextlib.suppress(OSError, ValueError):  # not written yet, or half
            with open(path, encoding="ascii") as f:
                port_line, _, rest = f.read().partition("\n")
            target = rest.split("\n", 1)[0]  # the second line
            if target:
                port = int(port_line)
                break
        await asyncio.sleep(0.05)
    http = aiohttp.ClientSession()
    try:
        ws = await http.ws_connect(f"ws://127.0.0.1:{port}{target}", max_msg_size=0)
    except BaseException:
        await http.close()
        raise
    return pid, Connection(ws, http)


def _alive(pid: int) -> bool:
    try:
        with contextlib.suppress(PermissionError):  # someone else's: alive all the same
            os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _stop(keeper: asyncio.subprocess.Process, profile: str) -> None:
    with contextlib.suppress(Exception):  # (a pipe: BrowserProcess.start's)
        cast(asyncio.StreamWriter, keeper.stdin).close()
    try:
        await asyncio.wait_for(keeper.wait(), 10)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            keeper.kill()
        await keeper.wait()
    shutil.rmtree(profile, ignore_errors=True)


def _group_rss(pgid: int) -> int:
    """Memory of the processes in process group `pgid`: the sum of their proportional set
    sizes (shared pages divided among the processes that share them; Linux /proc)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        # (gone meanwhile, unreadable, or not as expected: not counted)
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # fields after the name: state, ppid, pgrp, ...
                continue
            with open(f"/proc/{entry}/smaps_rollup", encoding="ascii", errors="replace") as f:
                pss = (line.split()[1] for line in f if line.startswith("Pss:"))
                total += int(next(pss, "0")) * 1024
    return total
