"""What a Dask worker runs (audit/cluster/task.py): the fence a run holds on each worker,
looked at once and then renewed in the background; a lane's batches one at a time."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest
from aiohttp import web

from audit.cluster import task
from audit.cluster.codec import answer_from
from audit.cluster.task import FENCE_EVERY, Fence
from audit.core.config import CrawlConfig
from audit.core.eventloop import loop_name
from audit.http.pace import TURN_CREDIT


async def test_the_fence_waits_for_its_first_look_then_renews_in_the_background() -> None:
    owner, looks = ["run-a"], []

    def ask() -> str:  # the scheduler's answer, slow as under load
        looks.append(owner[0])
        time.sleep(0.2)
        return owner[0]

    fence = Fence("run-a", ask)
    started = time.monotonic()
    assert await fence.owned()
    assert time.monotonic() - started >= 0.2  # the first look is waited for
    owner[0] = "run-b"  # a resumed run takes the fence over
    await asyncio.sleep(FENCE_EVERY)
    started = time.monotonic()
    assert await fence.owned()  # the last answer while the renewal is out: no stall
    assert time.monotonic() - started < 0.1
    await asyncio.sleep(0.4)
    assert not await fence.owned()  # the renewal answered: the batches stop
    assert looks == ["run-a", "run-b"]


async def test_a_lane_s_batches_run_one_at_a_time_on_one_limiter(aiohttp_server: Any) -> None:
    """Two batches of one lane handed to a worker at once (the driver sends the next one
    while the previous runs): the second starts only once the first is done, and the
    lane's one limiter spaces the requests of both (server-side arrival times)."""
    arrivals: list[tuple[float, str]] = []

    async def page(request: web.Request) -> web.Response:
        arrivals.append((time.monotonic(), request.path))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    server = await aiohttp_server(app)
    base = str(server.make_url("")).rstrip("/")
    rate = 20.0
    config = CrawlConfig(rate=rate, retries=0, max_per_host=2)  # 2 of a batch at once

    def batch(first: int) -> dict[str, Any]:
        jobs = [
            {"checked": f"{base}/p{n}", "headers": None, "recipe": None, "cap": 0}
            for n in range(first, first + 5)
        ]
        return {"run": "run-t", "fence": "run-t", "group": base, "lane": 0, "config": config,
                "jobs": jobs}  # fmt: skip

    try:
        one, two = await asyncio.gather(
            task._on_loop(batch(0), lambda: "run-t"), task._on_loop(batch(5), lambda: "run-t")
        )
    finally:
        for held in list(task._clients.values()):
            await held.client.aclose()
        task._clients.clear()
        task._fences.clear()
    answers = [answer_from(a)[0] for a in one["answers"] + two["answers"]]
    assert [a.status for a in answers] == [200] * 10
    paths = [path for _, path in arrivals]
    assert sorted(paths[:5]) == [f"/p{n}" for n in range(5)]  # the first batch, then...
    assert sorted(paths[5:]) == [f"/p{n}" for n in range(5, 10)]  # ... the second
    times = [t for t, _ in arrivals]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # one limiter for both: never two at once (a turn may come TURN_CREDIT early after a
    # late one; 0.2 of an interval is left for the time to the wire, as before)
    assert min(gaps) >= (0.8 - TURN_CREDIT) / rate
    assert not task._turns  # the lane's lock is gone with its last batch


@pytest.mark.parametrize("tuned", [False, True])
async def test_a_plain_worker_is_tuned_only_while_its_batches_run(
    aiohttp_server: Any, tuned: bool
) -> None:
    """A worker started without the preload (plain `dask worker`) runs its batches with a
    tuned worker's GIL switch interval and collector thresholds, and has its own back once
    they end; a tuned worker's settings are left as they are."""
    import gc
    import sys

    seen: list[tuple[float, tuple[int, int, int]]] = []

    async def page(_: web.Request) -> web.Response:
        seen.append((sys.getswitchinterval(), gc.get_threshold()))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    server = await aiohttp_server(app)
    base = str(server.make_url("")).rstrip("/")
    jobs = [{"checked": f"{base}/p{n}", "headers": None, "recipe": None, "cap": 0}
            for n in range(3)]  # fmt: skip
    batch = {"run": "run-p", "fence": "run-p", "group": base, "lane": 0,
             "config": CrawlConfig(rate=100.0, retries=0), "jobs": jobs}  # fmt: skip
    own = (sys.getswitchinterval(), gc.get_threshold())
    start = (task.SWITCH_INTERVAL, task.GC_THRESHOLD) if tuned else (0.005, (700, 10, 10))
    sys.setswitchinterval(start[0])
    gc.set_threshold(*start[1])
    try:
        out = await task._on_loop(batch, lambda: "run-p")
        after = (sys.getswitchinterval(), gc.get_threshold())
    finally:
        sys.setswitchinterval(own[0])
        gc.set_threshold(*own[1])
        for held in list(task._clients.values()):
            await held.client.aclose()
        task._clients.clear()
        task._fences.clear()
    assert [answer_from(a)[0].status for a in out["answers"]] == [200] * 3
    assert seen == [(pytest.approx(task.SWITCH_INTERVAL), task.GC_THRESHOLD)] * 3
    assert after == (pytest.approx(start[0]), start[1])  # its own settings back


async def test_batches_run_on_the_worker_s_loop_when_it_is_the_run_s_kind() -> None:
    """local:N's workers run Dask on the loop a run makes, and the batches on that same
    loop (no second loop taking the GIL in turns with it); a worker on another kind of
    loop gets one loop of the run's kind in a thread, the same for every batch."""
    here = asyncio.get_running_loop()
    if loop_name(here) == task.loop_kind():
        assert task._batches_loop(here) is here
    other = uvloop_or_not(other_than=task.loop_kind())
    try:
        own = task._batches_loop(other)
        assert own is not other and loop_name(own) == task.loop_kind()
        assert task._batches_loop(other) is own and own.is_running()
        assert asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "ran"), own).result(5) == "ran"
    finally:
        other.close()


def uvloop_or_not(*, other_than: str) -> asyncio.AbstractEventLoop:
    """A loop (not running) of the other kind than `other_than`."""
    if other_than == "uvloop":
        return asyncio.new_event_loop()
    uvloop = pytest.importorskip("uvloop")  # the run's kind is asyncio: uvloop is the other
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


@pytest.mark.parametrize("own", [True, False])
def test_an_own_worker_logs_no_dask_error_to_the_run_s_stderr(own: bool) -> None:
    """local:N's workers (own) are warmed with Dask's logging silenced: a worker whose
    heartbeat meets the closing scheduler at the end of a run logs its traceback at ERROR,
    which would be the run's stderr. A worker started by hand keeps its own logging."""
    import subprocess
    import sys

    script = (
        "import logging, distributed\n"
        "from audit.cluster.task import warm\n"
        f"warm(own={own})\n"
        "logging.getLogger('distributed.worker').error('heartbeat failed')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert ("heartbeat failed" in done.stderr) is not own
