"""Remote body sinks: pages parsed in the fetch worker processes, or in the parent.

    flock /tmp/bench.lock .venv/bin/python -m bench.suites.remote_sinks [--pages 20000]
        [--workers 0,2] [--repeats 2] [--concurrency 64]

nginx (config and logs under bench/out/, loopback only) serves 200 generated HTML pages of
about 20 kB with 100 links each; every request asks for one of them with its own query
string, so a run's URLs are all distinct. Each run is one `HttpClient` that GETs every
page with `fetch_page()` into a `LinkSink`, a remote sink that parses the page with lxml
(an incremental HTML parser fed chunk by chunk) and collects its links; the parent merges
the link sets, as the link crawl does. With --fetch-workers 0 the parent parses every page;
with workers, they do and only the link sets cross the pipe. The workers are started and
ready before the clock starts (a first page). Runs alternate between the worker counts; the
best pages/s of each is printed, with the parent's own CPU seconds.

Micro-benchmark of the library API (it imports the product), not run by the tests. Hold
the machine-wide lock: `flock /tmp/bench.lock ...`.

Measured 2026-11-25 on the 2-core machine (nginx's one worker, the parent and two fetch
workers share both cores), defaults (20,000 pages, concurrency 64, 2 repeats): parent
parsing 923 and 769 pages/s with 20.2 and 25.6 s of parent CPU; two workers parsing 1,033
and 1,228 pages/s with 3.4 and 2.8 s of parent CPU. Best of each: 1.33x the pages/s, and
the parent's CPU per page from 1.0 ms to 0.14 ms (the merge of the link sets and the
requests' bookkeeping). On 2 cores the workers are bound by the cores they share with
nginx, not by the parent.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECIPE = "bench.suites.remote_sinks:LinkSink"  # the workers import this module by name
DISTINCT = 200  # page files on disk; requests differ by their query string
LINKS = 100


class LinkSink:
    """Parses an HTML page incrementally with lxml and keeps its <a href> values: a body
    sink that a fetch worker can rebuild (audit.http.exchange.RemoteSink)."""

    def __init__(self) -> None:
        self.links: list[str] = []
        self.status = 0
        self._parser: Any = None

    def start(self, status: int, headers: Sequence[tuple[str, str]]) -> bool:
        from lxml import etree

        self.status, self.links = status, []
        self._parser = etree.HTMLPullParser(events=("start",), tag="a")
        return status == 200

    def feed(self, chunk: bytes) -> bool:
        self._parser.feed(chunk)
        self._collect()
        return False

    def end(self, *, at_eof: bool) -> None:
        self._parser.close()
        self._collect()
        self._parser = None

    def _collect(self) -> None:
        for _, element in self._parser.read_events():
            href = element.get("href")
            if href is not None:
                self.links.append(href)

    def recipe(self) -> tuple[str, tuple[Any, ...]]:
        return RECIPE, ()

    def outcome(self) -> tuple[int, list[str]]:
        return self.status, self.links

    def accept(self, outcome: Any) -> None:
        self.status, self.links = outcome


def make_site(root: Path) -> None:
    pages = root / "pages"  # not /p/: bench/server.py's nginx answers that with one file
    pages.mkdir(parents=True, exist_ok=True)
    filler = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 2 + "</p>\n"
    for i in range(DISTINCT):
        links = "".join(
            f'<li><a href="/pages/{(i * 7 + j) % DISTINCT}.html">page {j}</a></li>\n'
            for j in range(LINKS)
        )
        body = filler * 130  # with the links: about 20 kB
        html = (
            f"<!doctype html><html><head><title>Page {i}</title></head>"
            f"<body><h1>Page {i}</h1><ul>{links}</ul>{body}</body></html>\n"
        )
        (pages / f"{i}.html").write_text(html)


async def one_run(origin: str, pages: int, workers: int, concurrency: int) -> dict[str, Any]:
    from audit.core.config import CrawlConfig
    from audit.http import HttpClient

    config = CrawlConfig(
        rate=0.0, concurrency=concurrency, timeout=30.0, fetch_workers=workers,
        fetch_workers_after=0,
    )  # fmt: skip
    urls = [f"{origin}/pages/{n % DISTINCT}.html?n={n}" for n in range(pages)]
    seen: set[str] = set()
    async with HttpClient(config, sink_modules=("audit.", "bench.suites.remote_sinks")) as client:
        first = LinkSink()
        answer = await client.fetch_page(f"{origin}/pages/0.html?warmup", first, cap=1 << 20)
        if answer.status != 200 or len(first.links) != LINKS:
            raise RuntimeError(f"the site does not answer as generated: {answer}")
        if workers and not await client.wait_fetch_workers():
            raise RuntimeError("the fetch workers did not start")
        queue = iter(urls)
        failed = 0

        async def crawl() -> None:
            nonlocal failed
            for url in queue:
                sink = LinkSink()
                result = await client.fetch_page(url, sink, cap=1 << 20)
                if result.status != 200 or len(sink.links) != LINKS:
                    failed += 1
                seen.update(sink.links)  # the parent merges the link sets

        cpu0 = _cpu()
        start = time.perf_counter()
        await asyncio.gather(*(crawl() for _ in range(concurrency)))
        wall = time.perf_counter() - start
        cpu = _cpu() - cpu0
        in_workers = client.worker_exchanges
    return {"workers": workers, "pages": pages, "wall": wall, "rate": pages / wall,
            "parent_cpu": cpu, "failed": failed, "links": len(seen), "in_workers": in_workers}  # fmt: skip


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--workers", default="0,2", help="worker counts to compare, comma-separated")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    os.chdir(ROOT)  # the workers start here: `bench.suites.remote_sinks` must be importable
    from audit.core.eventloop import new_event_loop
    from bench import server
    from bench.common import OUT

    work = OUT / "remote-sinks"
    make_site(work / "site")
    counts = [int(w) for w in args.workers.split(",")]
    best: dict[int, dict[str, Any]] = {}
    with server.Nginx(work / "site", server.free_port()) as ng:
        origin = f"http://127.0.0.1:{ng.port}"
        for _ in range(args.repeats):
            for workers in counts:
                with asyncio.Runner(loop_factory=new_event_loop) as runner:
                    row = runner.run(one_run(origin, args.pages, workers, args.concurrency))
                print(f"workers={row['workers']} pages={row['pages']} wall={row['wall']:.2f}s "
                      f"rate={row['rate']:.0f}/s parent_cpu={row['parent_cpu']:.2f}s "
                      f"in_workers={row['in_workers']} links={row['links']} "
                      f"failed={row['failed']}", flush=True)  # fmt: skip
                if workers not in best or row["rate"] > best[workers]["rate"]:
                    best[workers] = row
    base = best[counts[0]]["rate"]
    for workers in counts:
        row = best[workers]
        print(f"best workers={workers}: {row['rate']:.0f} pages/s "
              f"({row['rate'] / base:.2f}x), parent CPU {row['parent_cpu']:.2f}s")  # fmt: skip


if __name__ == "__main__":
    main()
