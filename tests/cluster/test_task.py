"""What a Dask worker runs (audit/cluster/task.py): the fence a run holds on each worker,
looked at once and then renewed in the background."""

from __future__ import annotations

import asyncio
import time

from audit.cluster.task import FENCE_EVERY, Fence


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
