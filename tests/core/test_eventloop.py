"""The event loop of a run (audit/core/eventloop.py): uvloop's when the `fast` extra is
installed and SITEMAP_AUDIT_NO_UVLOOP is unset, asyncio's otherwise; either runs a crawl's
coroutines and says which it is."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from audit.core.eventloop import NO_UVLOOP_ENV, loop_name, new_event_loop


async def _answer(value: int) -> tuple[int, str]:
    await asyncio.sleep(0)
    return value * 2, loop_name(asyncio.get_running_loop())


def test_the_environment_variable_keeps_asyncio_s_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_UVLOOP_ENV, "1")
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        assert runner.run(_answer(21)) == (42, "asyncio")


def test_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_UVLOOP_ENV, raising=False)
    expected = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        assert runner.run(_answer(1)) == (2, expected)


def test_each_call_is_a_new_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_UVLOOP_ENV, "1")
    first, second = new_event_loop(), new_event_loop()
    try:
        assert first is not second and not first.is_closed()
    finally:
        first.close()
        second.close()
