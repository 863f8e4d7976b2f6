"""Baseline for the crawl benchmark: a bare aiohttp HEAD loop, the limit for Python here.

Run as its own process by bench/suites/run.py:
    python bench/bare_head.py --concurrency 64 [--get [--parse]] SITEMAP_FILE...
The page URLs are read from the generated (local) sitemap files before the clock starts;
then one ClientSession with TCPConnector(limit=N) and N worker tasks pull from the list,
HEAD each URL with allow_redirects=False and read only the status. With --get, each URL
is fetched with GET and its body read in full; with --parse too, each body is also
parsed by lxml's HTML parser, as a page-reading run parses it (the bound for runs that
read pages: --page-checks, --links).
Prints one JSON line: {"urls": N, "loop_s": S, "loop_cpu_s": C, "statuses": {...}, "errors": E}.
Imports nothing of the product.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import IO

import aiohttp
from lxml import etree

URL_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}url"
LOC_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"


def read_locs(paths: list[str]) -> list[str]:
    locs: list[str] = []
    for path in paths:
        f: IO[bytes] = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")  # noqa: SIM115
        with f:
            for _event, elem in etree.iterparse(f, events=("end",), tag=URL_TAG):
                locs.append((elem.findtext(LOC_TAG) or "").strip())
                elem.clear()
                while elem.getprevious() is not None:
                    del elem.getparent()[0]
    return locs


async def head_all(
    urls: list[str], concurrency: int, timeout_s: float, get: bool = False, parse: bool = False
) -> tuple[Counter[str], int]:
    statuses: Counter[str] = Counter()
    errors = 0
    todo: Iterator[str] = iter(urls)  # shared: each worker pulls the next URL
    html_parser = etree.HTMLParser()
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def worker() -> None:
            nonlocal errors
            for url in todo:
                try:
                    method = "GET" if get else "HEAD"
                    async with session.request(method, url, allow_redirects=False) as resp:
                        if get:
                            body = await resp.read()
                            if parse and body:
                                etree.fromstring(body, html_parser)
                        statuses[str(resp.status)] += 1
                except (aiohttp.ClientError, TimeoutError):
                    errors += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statuses, errors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds for the whole loop")
    ap.add_argument("--get", action="store_true", help="GET and read each body instead of HEAD")
    ap.add_argument("--parse", action="store_true", help="with --get: parse each body (lxml)")
    ap.add_argument("sitemaps", nargs="+")
    args = ap.parse_args()
    urls = read_locs(args.sitemaps)
    t0, c0 = time.perf_counter(), time.process_time()
    statuses, errors = asyncio.run(
        asyncio.wait_for(
            head_all(urls, args.concurrency, args.timeout, args.get, args.parse), args.limit
        )
    )
    loop_s, loop_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    print(
        json.dumps(
            {
                "urls": len(urls),
                "loop_s": loop_s,
                "loop_cpu_s": loop_cpu_s,
                "statuses": dict(statuses),
                "errors": errors,
            }
        )
    )


if __name__ == "__main__":
    main()
