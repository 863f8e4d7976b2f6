"""The spool between a socket and the parser (audit/pipeline/spool.py): bytes come out in
order whatever the pace, in memory up to its limit and through a temporary file beyond, and
an error of the producer reaches the consumer after the data before it."""

from __future__ import annotations

import asyncio
import os

import pytest

from audit.pipeline.spool import Spool


async def _read(spool: Spool) -> bytes:
    return b"".join([chunk async for chunk in spool.chunks()])


async def test_what_goes_in_comes_out_in_order_past_the_memory_limit() -> None:
    spool = Spool(memory_limit=100)
    data = os.urandom(300_000)  # far past the limit: most of it goes through the file
    for i in range(0, len(data), 7_000):
        spool.write(data[i : i + 7_000])
    spool.write(b"")  # nothing
    spool.finish()
    assert spool.total == len(data)
    assert await _read(spool) == data


async def test_a_slow_consumer_and_a_producer_that_keeps_writing() -> None:
    spool = Spool(memory_limit=1_000)
    parts = [bytes([i]) * 600 for i in range(50)]

    async def produce() -> None:
        for part in parts:
            spool.write(part)
            await asyncio.sleep(0)
        spool.finish()

    async def consume() -> bytes:
        out = []
        async for chunk in spool.chunks():
            out.append(chunk)
            await asyncio.sleep(0.001)  # parsed at the frontier's pace
        return b"".join(out)

    _, got = await asyncio.gather(produce(), consume())
    assert got == b"".join(parts)


async def test_the_producer_s_error_comes_after_the_data_before_it() -> None:
    spool = Spool()
    spool.write(b"<urlset>")
    spool.finish(ConnectionResetError("cut"))
    got = []
    with pytest.raises(ConnectionResetError, match="cut"):
        async for chunk in spool.chunks():
            got.append(chunk)
    assert got == [b"<urlset>"]


async def test_the_consumer_waits_for_data() -> None:
    spool = Spool()
    reader = asyncio.ensure_future(_read(spool))
    await asyncio.sleep(0.01)
    assert not reader.done()
    spool.write(b"late")
    spool.finish()
    assert await reader == b"late"
