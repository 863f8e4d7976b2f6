"""A spool between a fast producer (a socket) and a slow consumer (the parser).

Why: URL entries leave the parser only as fast as the bounded frontier takes
them, which at a polite rate may be minutes per sitemap. Pausing the socket
for that long gets the connection dropped by the server, so the body is read
at network speed into the spool (memory up to a threshold, then a temporary
file) and parsed at the frontier's pace. Memory stays flat either way.

Must not import aiohttp: it moves bytes, nothing more.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import deque
from collections.abc import AsyncIterator
from typing import IO

READ_SIZE = 65536


class Spool:
    def __init__(self, memory_limit: int = 1 << 20) -> None:
        self._memory_limit = memory_limit
        self._mem: deque[bytes] = deque()
        self._mem_bytes = 0
        self._file: IO[bytes] | None = None
        self._write_pos = 0
        self._read_pos = 0
        self._done = False
        self._error: BaseException | None = None
        self._ready = asyncio.Event()
        self.total = 0

    def write(self, chunk: bytes) -> None:
        """One more chunk (its one writer, a sitemap's pump in audit.pipeline.expand, writes
        what the socket gives: never an empty one)."""
        self.total += len(chunk)
        if self._file is None:  # in memory until a chunk does not fit, then on file
            if self._mem_bytes + len(chunk) <= self._memory_limit:
                self._mem.append(chunk)
                self._mem_bytes += len(chunk)
                self._ready.set()
                return
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._file.seek(self._write_pos)
        self._file.write(chunk)
        self._write_pos += len(chunk)
        self._ready.set()

    def finish(self, error: BaseException | None = None) -> None:
        """End of input; an error is re-raised to the consumer after the data before it."""
        self._done = True
        self._error = error
        self._ready.set()

    def _take(self) -> bytes | None:
        if self._mem:
            chunk = self._mem.popleft()
            self._mem_bytes -= len(chunk)
            return chunk
        if self._file is not None and self._read_pos < self._write_pos:
            self._file.seek(self._read_pos)
            chunk = self._file.read(min(READ_SIZE, self._write_pos - self._read_pos))
            self._read_pos += len(chunk)
            return chunk
        return None

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            while True:
                chunk = self._take()
                if chunk is not None:
                    yield chunk
                    continue
                if self._done:
                    if self._error is not None:
                        raise self._error
                    return
                self._ready.clear()
                await self._ready.wait()
        finally:
            self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._mem.clear()
