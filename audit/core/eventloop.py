"""The event loop of a run: uvloop's when the optional extra 'fast' is installed.

Its own module so that a fetch worker process (audit.http.fetchworker) can make the same
loop without importing the pipeline; the front door and the CLI run audits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os

NO_UVLOOP_ENV = "SITEMAP_AUDIT_NO_UVLOOP"

__all__ = ["NO_UVLOOP_ENV", "loop_name", "new_event_loop"]


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The event loop for a CLI run: uvloop's when it is installed (the optional extra
    'fast') and SITEMAP_AUDIT_NO_UVLOOP is not set, else asyncio's default loop.

    For `asyncio.Runner(loop_factory=new_event_loop)`; library callers keep their own loop.
    """
    if not os.environ.get(NO_UVLOOP_ENV):
        with contextlib.suppress(ImportError):
            loop: asyncio.AbstractEventLoop = importlib.import_module("uvloop").new_event_loop()
            return loop
    return asyncio.new_event_loop()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """'uvloop' or 'asyncio', for reports and benchmarks."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
