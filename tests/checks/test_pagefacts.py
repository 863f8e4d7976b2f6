"""checks/pagefacts.py: its sinks read in a fetch worker process (recipe, outcome, accept)
end as they end reading in the parent, and several sinks on one GET read and parse once."""

from __future__ import annotations

import importlib
import marshal
from collections.abc import Callable
from typing import Any

import pytest

from audit.checks.content import ContentSink
from audit.checks.links import links_of, page_links
from audit.checks.page import PageSink
from audit.checks.pagefacts import CONTENT, HEAD, LINKS, FactsSink, SharedSink, facts_of, join

PAGE = (
    b"<!DOCTYPE html><html><head><title>T</title>"
    b'<meta name="robots" content="noindex"><link rel=canonical href=/c>'
    b'<script type="application/ld+json">{"dateModified": "2024-05-01"}</script>'
    b"</head><body><h1>Head</h1><p>Text <a href=/a>a</a> <a rel=nofollow href=/n>n</a></p>"
    + b"<p>filler <a href=/f>f</a></p>" * 4000
    + b"</body></html>"
)
HTML = [("content-type", "text/html; charset=utf-8")]

Make = Callable[[], Any]
SINKS: list[tuple[str, Make]] = [
    ("page", lambda: PageSink(1 << 20)),
    ("links", lambda: FactsSink(LINKS, 1 << 20)),
    ("content", lambda: ContentSink(1 << 20)),
    ("date", lambda: ContentSink(1 << 20, head_only=True)),
    ("capped", lambda: FactsSink(HEAD | LINKS, 5000)),
]


def feed(sink: Any, body: bytes, status: int = 200, headers: Any = HTML, step: int = 65536) -> Any:
    """What the HTTP client does with a sink: start, feed until it has enough, end."""
    if not sink.start(status, headers):
        return sink
    done = False
    for i in range(0, len(body), step):
        if sink.feed(body[i : i + step]):
            done = True
            break
    sink.end(at_eof=not done)
    return sink


def state(sink: FactsSink) -> tuple[Any, ...]:
    return sink.reading, sink.facts, bytes(sink._raw), sink._stop, sink._http


def in_worker(recipe: tuple[str, tuple[Any, ...]], body: bytes, *answer: Any) -> bytes:
    """A fetch worker's side: the factory named by the recipe, fed there; the outcome as
    it crosses the process boundary (marshal)."""
    name, args = recipe
    module, _, attr = name.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    remote = feed(factory(*marshal.loads(marshal.dumps(args))), body, *answer)
    return marshal.dumps(remote.outcome())


@pytest.mark.parametrize(("name", "make"), SINKS, ids=[n for n, _ in SINKS])
@pytest.mark.parametrize(
    "answer", [(200, HTML), (404, HTML), (200, [("content-type", "application/pdf")])]
)
def test_a_remote_read_leaves_the_parent_sink_as_a_local_read(
    name: str, make: Make, answer: tuple[int, Any]
) -> None:
    local = feed(make(), PAGE, *answer)
    parent = make()
    parent.accept(marshal.loads(in_worker(parent.recipe(), PAGE, *answer)))
    assert state(parent) == state(local)
    assert (local.facts is not None) == (answer == (200, HTML))


def test_the_small_pieces_a_socket_gives_change_nothing() -> None:
    for _, make in SINKS:
        assert feed(make(), PAGE, step=7).facts == feed(make(), PAGE).facts


def test_sinks_of_one_get_read_and_parse_once() -> None:
    page, links, content = PageSink(1 << 20), FactsSink(LINKS, 1 << 20), ContentSink(1 << 20)
    other = object()
    sinks = join([page, links, other, content])
    assert len(sinks) == 2 and sinks[1] is other
    shared = sinks[0]
    assert isinstance(shared, SharedSink) and shared.wants == HEAD | LINKS | CONTENT
    feed(shared, PAGE)
    facts = page.facts
    assert facts is not None and links.facts is facts and content.facts is facts
    # the whole body was read for the links: the page checks see it all
    assert facts.complete and facts.bytes_read == len(PAGE)
    assert facts.title == "T" and facts.h1 == "Head" and facts.meta("robots") == ["noindex"]
    assert facts.hrefs == ("/a", "/f")  # each once, nofollow left out
    got = content.content()
    assert got is not None and got.fingerprint == feed(ContentSink(1 << 20), PAGE).facts.fingerprint
    assert got.modified_text == "2024-05-01"
    # remote: one recipe for the lot, each member as after a local read
    again = [PageSink(1 << 20), FactsSink(LINKS, 1 << 20), ContentSink(1 << 20)]
    remote = join(again)[0]
    remote.accept(marshal.loads(in_worker(remote.recipe(), PAGE)))
    assert [m.facts for m in again] == [facts] * 3
    # a retry starts the members afresh; an answer it does not read leaves them empty
    shared.start(503, HTML)
    assert page.facts is None and links.facts is None and not content.reading


def test_join_keeps_a_lone_sink_and_sinks_of_other_caps_apart() -> None:
    one = PageSink(1000)
    assert join([one]) == [one]
    two = [PageSink(1000), FactsSink(LINKS, 2000)]
    assert join(two) == two


def test_the_page_checks_alone_stop_a_window_after_the_body_starts() -> None:
    facts = feed(PageSink(1 << 20), PAGE).facts
    assert facts is not None and not facts.complete
    assert facts.bytes_read == 4096 + 16 * 1024  # the window from the end of the first piece
    assert facts.hrefs == ()  # links were not asked for
    date = feed(ContentSink(1 << 20, head_only=True), PAGE).facts
    head = PAGE.index(b"</head>") + len(b"</head>")
    assert date is not None and date.bytes_read == head and date.fingerprint is None
    assert date.modified == ("2024-05-01", "JSON-LD dateModified")


def test_content_fingerprints_are_those_of_the_earlier_versions() -> None:
    # computed by checks/content.py before the one-parse reader (995753e): a page keeps its
    # fingerprint across the upgrade (stored fingerprints are compared with new ones)
    page = (
        b'<html><head><meta name="csrf-token" content="abc123def4567890"><title>T</title>\n'
        b'<script type="application/ld+json">{"dateModified": "2024-05-01"}</script></head>\n'
        b'<body><nav>Home</nav><div class="ad-slot">Ad 1</div><main><h1>Head</h1><p>Main '
        b"text, 2024-05-01 at 10:00.</p>\n<!-- c --><p>More <b>bold</b> text <a href=/x>link"
        b"</a>.</p></main><footer>f</footer></body></html>"
    )
    expected = -5471750821318940430
    assert feed(ContentSink(1 << 20), page).content().fingerprint == expected
    shared = join([PageSink(1 << 20), FactsSink(LINKS, 1 << 20), ContentSink(1 << 20)])
    feed(shared[0], page)
    assert shared[0].facts.fingerprint == expected


def test_links_are_resolved_where_the_page_is_parsed_and_again_after_a_redirect() -> None:
    """A link sink that knows its URL resolves the links in the worker (the parent only
    counts them); read at another URL (a redirect's target) the parent resolves them
    against that one. Either way: what page_links gives for a body in memory."""
    body = (
        b'<html><head><base href="/base/"></head><body><a href="x#f">1</a><a href="/y">2</a>'
        b'<a href="https://other.test/z">3</a><a href="mailto:a@b.test">4</a>'
        b'<a href="//cdn.test/w">5</a><a href="x">again</a></body></html>'
    )
    url, moved = "http://example.com/dir/page", "http://example.com/moved/page"
    parent = FactsSink(LINKS, 1 << 20, url)
    parent.accept(marshal.loads(in_worker(parent.recipe(), body)))
    facts = parent.facts
    assert facts is not None and facts.links_at == url
    assert facts.links == (
        "http://example.com/base/x",
        "http://example.com/y",
        "https://other.test/z",
        "http://cdn.test/w",
        "http://example.com/base/x",  # another href, the same link: the crawl counts it once
    )
    assert links_of(facts, url) == page_links(body, url)
    assert links_of(facts, moved).links == page_links(body, moved).links
    # no URL given (page checks alone): nothing resolved, nothing claimed
    assert feed(FactsSink(HEAD | LINKS, 1 << 20), body).facts.links_at is None


@pytest.mark.parametrize("comment", ["sitemap-audit:body:x", "sitemap-audit:body:0", "x:1"])
def test_a_page_cannot_forge_the_marker_comments(comment: str) -> None:
    """The reader marks where the body starts with comments of its own; a page that writes
    one of the same shape reads as the page without it (before: a ValueError from int())."""
    page = (
        "<html><head><title>t</title></head><body><h1>Hello</h1>"
        '<p>text <a href="/a">a</a></p>{}<p>more</p></body></html>'
    )
    plain = facts_of(page.format("").encode(), wants=HEAD | LINKS)
    forged = facts_of(page.format(f"<!--{comment}-->").encode(), wants=HEAD | LINKS)
    assert forged.error is None
    assert (forged.h1, forged.text, forged.hrefs) == (plain.h1, plain.text, plain.hrefs)
    assert plain.h1 == "Hello" and plain.hrefs
