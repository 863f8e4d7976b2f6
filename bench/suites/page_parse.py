"""Parse cost of one page, one core: the retired html.parser head reader against the
one-parse page reader (checks/pagefacts.py), on generated 20-60 KB pages.

    flock /tmp/bench.lock .venv/bin/python -m bench.suites.page_parse [--pages N] [--repeat R]

Each reader gets the same pages, fed in 64 KiB chunks as the HTTP client feeds a sink,
and its pages/s is the best of R runs over all pages. Rows:

- head reader (old, --page-checks): tests/checks/headreader_oracle.py, the reader the page
  checks used (standard library html.parser), reading the head and a 16 KiB window;
- page checks (new): PageSink, the same bytes read, head tokenizer + one lxml parse;
- bare lxml links: lxml.etree.HTML on the whole body and every `<a href>` (what the bare
  loop of the `crawl --links` benchmark does per page);
- links (new): the link crawl's sink (whole body, one parse, hrefs);
- page checks + links + content (new): the three sinks of one GET joined (one parse).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from lxml import etree

from audit.checks.content import ContentSink
from audit.checks.page import PageSink
from audit.checks.pagefacts import LINKS, FactsSink, join
from tests.checks.headreader_oracle import HeadReader

CHUNK = 65536
HEADERS = [("content-type", "text/html; charset=utf-8")]
WORDS = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
]


def page(rng: random.Random, size: int) -> bytes:
    """A page of about `size` bytes: a realistic head, then nav, articles and a footer."""
    head = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>{' '.join(rng.choices(WORDS, k=6))}</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="description" content="' + " ".join(rng.choices(WORDS, k=20)) + '">',
        '<meta name="robots" content="index, follow">',
        '<link rel="canonical" href="https://example.com/p/1">',
        *(f'<link rel="stylesheet" href="/css/{i}.css">' for i in range(6)),
        *(
            f'<link rel="alternate" hreflang="{c}" href="https://example.com/{c}/p/1">'
            for c in "ab"
        ),
        "<script>window.dataLayer = window.dataLayer || []; function g(){}</script>",
        '<script type="application/ld+json">{"@type": "Article", "dateModified": '
        '"2024-05-01T10:00:00Z"}</script>',
        "<style>" + "body{margin:0} .x{color:red} " * 40 + "</style>",
        "</head><body><header><nav><ul>",
        *(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(30)),
        "</ul></nav></header><main><h1>" + " ".join(rng.choices(WORDS, k=5)) + "</h1>",
    ]
    out = "".join(head)
    body: list[str] = []
    while len(out) + sum(map(len, body)) < size:
        words = " ".join(rng.choices(WORDS, k=40))
        link = f'<a href="/article/{rng.randrange(10**6)}">{rng.choice(WORDS)}</a>'
        body.append(
            f'<div class="card"><p>{words} {link} {words}</p><img src="/i.png" alt=x></div>'
        )
    tail = '</main><footer><a href="/about">About</a></footer><script src="/app.js"></script>'
    return (out + "".join(body) + tail + "</body></html>").encode()


def feed(sink: Any, body: bytes) -> None:
    sink.start(200, HEADERS)
    done = False
    for i in range(0, len(body), CHUNK):
        if sink.feed(body[i : i + CHUNK]):
            done = True
            break
    sink.end(at_eof=not done)


def old_head(body: bytes) -> None:
    reader = HeadReader(512 * 1024, http_charset="utf-8")
    done = False
    for i in range(0, len(body), CHUNK):
        if reader.feed(body[i : i + CHUNK]):
            done = True
            break
    reader.close(at_eof=not done)


def bare_links(body: bytes) -> None:
    root = etree.HTML(body)
    [a.get("href") for a in root.iter("a")]


def joined(body: bytes) -> None:
    cap = 512 * 1024
    feed(join([PageSink(cap), FactsSink(LINKS, cap), ContentSink(cap)])[0], body)


ROWS: list[tuple[str, Callable[[bytes], None]]] = [
    ("head reader (old, --page-checks)", old_head),
    ("page checks (new)", lambda b: feed(PageSink(512 * 1024), b)),
    ("bare lxml links (the bare loop's parse)", bare_links),
    ("links (new)", lambda b: feed(FactsSink(LINKS, 512 * 1024), b)),
    ("page checks + links + content (new, joined)", joined),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(18)
    pages = [page(rng, rng.randrange(20_000, 60_000)) for _ in range(args.pages)]
    size = sum(map(len, pages)) / len(pages)
    print(f"{len(pages)} pages, {size / 1024:.1f} KiB on average, best of {args.repeat}")
    print(f"{'reader':<46} {'pages/s':>9} {'ms/page':>8}")
    for name, run in ROWS:
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            for body in pages:
                run(body)
            best = min(best, time.perf_counter() - t0)
        print(f"{name:<46} {len(pages) / best:>9,.0f} {best / len(pages) * 1000:>8.3f}")


if __name__ == "__main__":
    main()
