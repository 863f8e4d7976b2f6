"""Incremental gzip inflation with a hard output cap.

    inf = Inflater(max_output=52_428_800 + 1024)
    for chunk in chunks:
        data = inf.feed(chunk)      # raises GzipError on corrupt data
    data = inf.close()              # raises GzipError when the gzip stream is truncated
    inf.gzip_layers                 # 0 plain, 1 gzip, 2 gzip inside gzip, ...
    inf.truncated_at_limit          # output stopped at max_output (a bomb, or just too big)

Gzip is recognised by its magic bytes (1f 8b) at the start of the stream, never
by a file name or Content-Encoding header (servers mislabel both ways). When a
layer's output itself starts with the magic, another layer is chained. Several
gzip members one after another are one stream (RFC 1952 section 2.2). Anything
else passes through unchanged.

Every zlib call is given `max_length`, so a gzip bomb can never make us hold
more than `max_output` (+1 byte per layer to tell "exactly at" from "over")
of inflated data: the cap holds while inflating, not after.

Pure and synchronous: imports nothing of HTTP, asyncio or lxml.
"""

from __future__ import annotations

import zlib
from typing import NoReturn

__all__ = ["MAX_GZIP_LAYERS", "GzipError", "Inflater"]

GZIP_MAGIC = b"\x1f\x8b"
MAX_GZIP_LAYERS = 4  # a gzip quine (gzip of itself) would otherwise chain forever
_WBITS = zlib.MAX_WBITS | 16  # gzip header and trailer, CRC checked by zlib


class GzipError(ValueError):
    """Corrupt or truncated gzip data. The message is one line.

    `partial` holds the output that was decoded in the failing call before
    the error, so a caller keeps everything up to the fault.
    """

    def __init__(self, message: str, partial: bytes = b"") -> None:
        super().__init__(message)
        self.partial = partial


class Inflater:
    """Push bytes in, get inflated bytes out; plain input passes through."""

    def __init__(self, max_output: int, *, _depth: int = 0) -> None:
        self.max_output = max_output
        self._depth = _depth
        self._mode = 0  # 0 = not sniffed yet, 1 = plain, 2 = gzip
        self._head = b""  # first byte while sniffing
        self._pending = b""  # bytes between members, waiting for a second byte
        self._d: zlib._Decompress | None = None  # current member's decoder
        self._inner: Inflater | None = None  # next layer when this one is gzip
        self._produced = 0  # bytes this layer has inflated
        self._emitted = 0  # bytes this layer has passed on (plain mode)
        self._in = 0  # compressed bytes seen
        self._done = False
        self._truncated = False

    @property
    def gzip_layers(self) -> int:
        # the next layer exists exactly when this one is gzip
        return 0 if self._inner is None else 1 + self._inner.gzip_layers

    @property
    def truncated_at_limit(self) -> bool:
        return self._truncated or (self._inner is not None and self._inner.truncated_at_limit)

    def feed(self, data: bytes) -> bytes:
        if self._done:  # (an empty `data` passes through every layer as b"")
            return b""
        self._in += len(data)
        if self._mode == 0:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return b""
            self._head = b""
            self._start(data)
        inner = self._inner  # the next layer: None for plain input
        if inner is None:
            return self._pass(data)
        return self._inflate(data, inner)

    def close(self) -> bytes:
        if self._done:
            return b""
        inner = self._inner
        if inner is None:  # plain, or not sniffed (under two bytes came): those pass as they are
            self._mode = 1
            data, self._head = self._head, b""  # (b"" once plain: feed emptied it)
            return self._pass(data)
        self._done = True
        if self._d is not None:
            # Input is exhausted and max_length was not reached, so no output is
            # held back: a member that has not seen its trailer is cut short.
            raise GzipError(
                f"gzip data truncated: the stream ends inside a gzip member "
                f"(layer {self._depth + 1}, after {self._in} compressed bytes)"
            )
        if self._pending.strip(b"\x00"):
            raise GzipError("trailing garbage after the gzip data")
        return inner.close()

    # --- internals ---------------------------------------------------------

    def _start(self, data: bytes) -> None:
        if data[:2] != GZIP_MAGIC:
            self._mode = 1
            return
        if self._depth >= MAX_GZIP_LAYERS:
            self._done = True
            raise GzipError(f"more than {MAX_GZIP_LAYERS} nested gzip layers")
        self._mode = 2
        self._inner = Inflater(self.max_output, _depth=self._depth + 1)

    def _pass(self, data: bytes) -> bytes:
        room = self.max_output - self._emitted
        if len(data) > room:
            data = data[:room]
            self._truncated = self._done = True
        self._emitted += len(data)
        return data

    def _inflate(self, data: bytes, inner: Inflater) -> bytes:
        """Inflate as much as the cap allows, and give it to the next layer, `inner`; a
        fault raises GzipError with what the next layer made of the output before it."""
        out: list[bytes] = []
        limit = self.max_output + 1  # one byte over the cap tells "more than max"
        while data:
            if self._d is None:
                # Between members: zero padding is tolerated (as gzip(1) does).
                data = (self._pending + data).lstrip(b"\x00")
                self._pending = b""
                if len(data) < 2:  # nothing, or too little to tell
                    self._pending = data
                    break
                if data[:2] != GZIP_MAGIC:
                    self._fail(inner, out, "trailing garbage after the gzip data")
                self._d = zlib.decompressobj(wbits=_WBITS)
            room = limit - self._produced
            if room <= 0:  # max_length=0 would mean "unlimited" to zlib
                self._truncated = self._done = True
                break
            before = self._d.copy()
            try:
                chunk = self._d.decompress(data, room)
            except zlib.error as exc:
                # zlib drops the whole output of a call that fails: decode this input again
                # up to the fault, so what comes out does not depend on the chunk sizes.
                out.append(_salvage(before, data, room))
                self._fail(inner, out, f"corrupt gzip data (layer {self._depth + 1}): {_why(exc)}")
            self._produced += len(chunk)
            out.append(chunk)
            if self._d.eof:
                data = self._d.unused_data
                self._d = None
                continue
            if self._produced >= limit:
                self._truncated = self._done = True
                break
            data = self._d.unconsumed_tail
        return inner.feed(b"".join(out))

    def _fail(self, inner: Inflater, out: list[bytes], message: str) -> NoReturn:
        """The output before a fault goes on to the next layer; then nothing more is read."""
        result = inner.feed(b"".join(out))
        self._done = True
        raise GzipError(message, result) from None


# zlib's words ("Error -3 while decompressing data: incorrect data check") in plain ones
_ZLIB_WORDS = (
    ("incorrect data check", "the checksum does not match: the data was damaged"),
    ("incorrect length check", "the length in the trailer does not match: data is missing"),
    ("incorrect header check", "not a valid gzip header"),
    ("unknown compression method", "not a valid gzip header"),
)


def _why(exc: zlib.error) -> str:
    text = str(exc)
    for key, words in _ZLIB_WORDS:
        if key in text:
            return words
    return "the compressed stream is damaged (invalid deflate data)"


def _salvage(d: zlib._Decompress, data: bytes, room: int) -> bytes:
    """What `d` inflates from `data` before it meets the fault (at most `room` bytes),
    fed byte by byte as the smallest chunks would have been."""
    out: list[bytes] = []
    for i in range(len(data)):
        try:
            piece = d.decompress(data[i : i + 1], room)
        except zlib.error:
            break
        out.append(piece)
        room -= len(piece)
        if room <= 0 or d.eof:  # (a tail is left only when the output reached `room`)
            break
    return b"".join(out)
