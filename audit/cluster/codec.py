"""What crosses between the driver and a Dask worker.

A batch's answers cross as `answer_to`'s tuples (a FetchResult's fields in order, no
names: the per-URL cost of pickling and reading them back is half a dict's), and the
batch and its answers each as one blob of bytes (`pack`/`unpack`), which Dask carries as
one frame: it neither walks the jobs for task references when the batch is submitted nor
sizes every answer when the batch is done."""

from __future__ import annotations

import pickle
from dataclasses import fields
from typing import Any

from audit.core.records import FetchResult, Hop

__all__ = ["answer_from", "answer_to", "pack", "unpack"]

# FetchResult's fields in the order answer_to writes them (and its constructor takes them)
_FETCH_FIELDS = tuple(f.name for f in fields(FetchResult))
_REDIRECTS = _FETCH_FIELDS.index("redirects")


def answer_to(result: FetchResult, facts: Any = None) -> tuple[Any, ...]:
    """One URL's answer as a tuple: the FetchResult's fields in order (redirects as
    (url, status) pairs), then what its page said (None: no page read)."""
    values = [getattr(result, name) for name in _FETCH_FIELDS]
    if result.redirects:
        values[_REDIRECTS] = tuple((hop.url, hop.status) for hop in result.redirects)
    values.append(facts)
    return tuple(values)


def answer_from(data: tuple[Any, ...]) -> tuple[FetchResult, Any]:
    """The FetchResult and the facts of `answer_to`'s tuple."""
    *values, facts = data
    if values[_REDIRECTS]:
        values[_REDIRECTS] = tuple(Hop(url, status) for url, status in values[_REDIRECTS])
    return FetchResult(*values), facts


def pack(data: Any) -> bytes:
    """A batch or its answers as one blob (pickle: CrawlConfig and bytes as they are)."""
    return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes) -> Any:
    """What `pack` packed (between this run's own driver and workers only)."""
    return pickle.loads(blob)
