"""advertools' `crawl` (Scrapy) following the links of the benchmark's site (bench/suites/links.py
runs this file with the python of bench/out/adv-venv, never the project's).

    python bench/links_adv.py START_URL OUT.jl --concurrency 32 --pages N --limit S

Follows every link within 127.0.0.1 from START_URL, as advertools' documentation shows
(`follow_links=True`), bounded by Scrapy's CLOSESPIDER_PAGECOUNT (N pages) and
CLOSESPIDER_TIMEOUT (S seconds). Prints one JSON line {"items": N, "loop_s": S}. Imports only
advertools (which runs `scrapy runspider` in a child process) and nothing of the product.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("start")
    ap.add_argument("output")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--limit", type=int, default=600)
    args = ap.parse_args()
    import advertools as adv

    Path(args.output).unlink(missing_ok=True)  # scrapy's -o appends
    t0 = time.perf_counter()
    adv.crawl(
        [args.start],
        args.output,
        follow_links=True,
        allowed_domains=["127.0.0.1"],
        custom_settings={
            # the same bound as the others: N in flight to the one host, no delay
            "CONCURRENT_REQUESTS": args.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
            "AUTOTHROTTLE_ENABLED": False,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "CLOSESPIDER_PAGECOUNT": args.pages,
            "CLOSESPIDER_TIMEOUT": args.limit,
        },
    )
    loop_s = time.perf_counter() - t0
    with open(args.output, "rb") as fh:
        items = sum(1 for _ in fh)
    Path(args.output).unlink(missing_ok=True)
    print(json.dumps({"items": items, "loop_s": loop_s}))


if __name__ == "__main__":
    main()
