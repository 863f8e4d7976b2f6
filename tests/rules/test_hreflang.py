"""hreflang reciprocity across a run (audit/rules/hreflang.py): the sitemap-only graph, and
the store of every source (union of sources, once per pair, spilling to SQLite)."""

from __future__ import annotations

import os

from audit.rules.hreflang import HreflangGraph, HreflangStore
from audit.rules.validator import SeenUrls


def test_the_graph_reports_each_unanswered_link_once() -> None:
    a, b, c = "https://x.com/a", "https://x.com/b", "https://x.com/c"
    graph = HreflangGraph()
    graph.add(a, [a, b, c], sitemap="s.xml", line=3)
    graph.add(b, [b, a], sitemap="s.xml", line=7)  # b answers a
    assert graph.pending == 1  # a -> c still waits for c
    graph.add(c, [c], sitemap="s.xml", line=9)  # c lists itself only
    (found,) = graph.finish()
    assert found.code == "hreflang-not-reciprocal"
    assert (found.url, found.sitemap, found.line) == (a, "s.xml", 3)
    assert f"'{c}' lists hreflang alternates that do not include '{a}'" in found.message


def test_the_graph_leaves_out_a_url_outside_the_audit() -> None:
    seen = SeenUrls()
    seen.add("https://x.com/a")
    graph = HreflangGraph(seen)
    graph.add("https://x.com/a", ["https://x.com/elsewhere"])
    assert graph.finish() == []  # its page may carry the links: no verdict
    listed = HreflangGraph(seen)
    seen.add("https://x.com/b")
    listed.add("https://x.com/a", ["https://x.com/b"])
    (found,) = listed.finish()
    assert "'https://x.com/b' lists no hreflang alternates" in found.message


def _store(memory_pairs: int) -> HreflangStore:
    seen = SeenUrls()
    for u in "abcdef":
        seen.add(f"https://x.com/{u}")
    return HreflangStore(seen, memory_pairs=memory_pairs)


def _pairs(store: HreflangStore) -> list[tuple[str | None, str]]:
    return [(f.url, f.message.split(" names ")[1].split(" ")[0]) for f in store.finish()]


def test_store_union_of_sources_and_once_per_pair() -> None:
    for memory_pairs in (100_000, 1):  # all in memory; everything spilled to disk at once
        store = _store(memory_pairs)
        a, b, c = "https://x.com/a", "https://x.com/b", "https://x.com/c"
        store.add(a, [a, b, c], sitemap="s.xml", line=1)  # sitemap: a names b and c
        store.add(b, [b], sitemap="s.xml", line=2)  # sitemap: b names only itself
        store.add(b, [b, a], source="page")  # b's page names a: reciprocal now
        store.add(a, [b, c], source="page")  # the page repeats the sitemap: no new pair
        store.add("HTTPS://X.COM:443/a", [c], source="page")  # the same link again
        pairs = _pairs(store)
        assert pairs == [(a, "'https://x.com/c'")], memory_pairs
        assert store.spilled is False  # finish() removed the table


def test_store_spills_to_disk_and_removes_the_file() -> None:
    store = _store(memory_pairs=3)
    urls = [f"https://x.com/{u}" for u in "abcdef"]
    for u in urls:  # everyone names everyone: fully reciprocal, 30 links
        store.add(u, urls)
    store.add("https://x.com/a", ["https://x.com/zz"])  # not in the audit: not reported
    store.add("https://x.com/f", ["https://x.com/nobody-names-back"])
    assert store.spilled and store.pending < 3
    path = store._path
    assert path is not None and os.path.exists(path)
    findings = store.finish()
    assert findings == []  # "nobody-names-back" is not in the audit either
    assert not os.path.exists(path)


def test_store_reports_b_without_alternates_and_b_with_others() -> None:
    store = _store(memory_pairs=2)
    store.add("https://x.com/a", ["https://x.com/b", "https://x.com/c"], source="page")
    store.add("https://x.com/c", ["https://x.com/d"])
    msgs = [f.message for f in store.finish()]
    assert len(msgs) == 3
    assert "'https://x.com/b' lists no hreflang alternates at all" in msgs[0]
    assert "page's <head>" in msgs[0]
    assert "'https://x.com/c' lists hreflang alternates that do not include" in msgs[1]
    assert "its sitemap entry" in msgs[2]
