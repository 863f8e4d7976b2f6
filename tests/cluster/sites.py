"""Loopback hosts for the cluster tests and the benchmark: each logs when every request
arrived (server-side), so politeness is judged on what a host saw."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Host:
    """One loopback host: /sitemap.xml lists `urls` (of any host), every page answers 200."""

    name: str = ""
    urls: list[str] = field(default_factory=list)
    times: list[tuple[float, str]] = field(default_factory=list)  # (arrival, path) of pages
    on_page: Callable[[web.Request], None] | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/sitemap.xml":
            return web.Response(text=urlset(self.urls), content_type="application/xml")
        if request.path == "/robots.txt":
            return web.Response(status=404)
        self.times.append((time.monotonic(), request.path))
        if self.on_page is not None:
            self.on_page(request)
        return web.Response(text="ok", content_type="text/html")

    def pages(self) -> list[str]:
        return [path for _, path in self.times]


def urlset(locs: list[str]) -> str:
    body = "".join(f"<url><loc>{loc}</loc></url>\n" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n"
    )


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most requests that arrived within any `window` seconds (half-open)."""
    times = sorted(times)
    best = start = 0
    for end, t in enumerate(times):
        while t - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


async def run_cli(*args: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    """`sitemap-audit ARGS` in a child process (the test's servers keep serving)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit",
        *args,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


def url_records(jsonl: str) -> list[dict[str, Any]]:
    import json

    return [r for line in jsonl.splitlines() if (r := json.loads(line))["type"] == "url"]
