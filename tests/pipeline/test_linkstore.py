"""pipeline/linkstore.py: the link crawl's queue (FIFO, spilling to its SQLite file beyond its
bound) and its store (inlinks and held records written in batches, joined in order)."""

from __future__ import annotations

import pytest

import audit.pipeline.linkstore as linkstore
from audit.core.records import UrlResult
from audit.pipeline.linkstore import LinkQueue, LinkStore
from audit.rules.fingerprints import url_key


def test_the_queue_spills_to_disk_beyond_its_bound_and_stays_fifo() -> None:
    store = LinkStore()
    queue = LinkQueue(store, bound=3)
    try:
        for i in range(2500):
            queue.push(f"http://example.com/{i}", i)
        assert len(queue.items) == 3 and store.queued == 2497 and len(queue) == 2500
        popped = [queue.pop() for _ in range(2500)]
        assert popped == [(f"http://example.com/{i}", i) for i in range(2500)]
        assert queue.pop() is None
    finally:
        store.close()


def test_inlinks_and_records_batched_in_memory_sum_keep_order_and_the_first_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(linkstore, "_LINK_BATCH", 3)  # written to the file at 3 targets
    monkeypatch.setattr(linkstore, "_HELD_BATCH", 2)  # and at 2 records
    store = LinkStore()
    targets = [f"http://example.com/{i}" for i in range(5)]
    try:
        for page in range(4):  # page p links the first p + 2 targets
            store.link(f"http://example.com/from/{page}", targets[: page + 2])
        for url in targets:
            record = UrlResult.unrequested(url, None, None, None, "allowed")  # type: ignore[arg-type]
            store.hold(url_key(url), False, record, [])
        got = [(n, source) for _, _, _, n, source in store.held()]
    finally:
        store.close()
    first = "http://example.com/from/"
    assert got == [(4, first + "0"), (4, first + "0"), (3, first + "1"), (2, first + "2"), (1, first + "3")]  # fmt: skip
