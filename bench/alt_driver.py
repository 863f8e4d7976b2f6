"""The Python alternatives, each driven the way its documentation shows (bench/suites/run.py
--alternatives runs this file with the python of bench/out/alt-venv, never the project's).

    python bench/alt_driver.py adv-sitemap INDEX_URL       advertools.sitemap_to_df
    python bench/alt_driver.py usp HOMEPAGE_URL             usp sitemap_tree_for_homepage
    python bench/alt_driver.py adv-headers OUT.jl --limit N SITEMAP_FILE...
                                              advertools.crawl_headers, first N URLs

Each prints one JSON line: {"urls": N, "loop_s": S, ...}. Imports only the tool it drives
(so its peak RSS is that tool's) and nothing of the product.
"""

from __future__ import annotations

import gzip
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO

URL_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}url"
LOC_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"


def adv_sitemap(index_url: str) -> dict[str, object]:
    import advertools as adv

    logging.getLogger().setLevel(logging.WARNING)  # one INFO line per child otherwise
    df = adv.sitemap_to_df(index_url)
    locs = int(df["loc"].notna().sum()) if "loc" in df else 0
    return {"urls": locs, "rows": len(df)}


def usp_tree(homepage: str) -> dict[str, object]:
    from usp.tree import sitemap_tree_for_homepage

    logging.getLogger().setLevel(logging.WARNING)
    # The site's robots.txt names the index; the known-path probes would only add 404s.
    tree = sitemap_tree_for_homepage(homepage, use_known_paths=False)
    return {"urls": sum(1 for _ in tree.all_pages())}


def read_locs(paths: list[str]) -> list[str]:
    from lxml import etree

    locs: list[str] = []
    for path in paths:
        f: IO[bytes] = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")  # noqa: SIM115
        with f:
            for _event, elem in etree.iterparse(f, events=("end",), tag=URL_TAG):
                locs.append((elem.findtext(LOC_TAG) or "").strip())
                elem.clear()
    return locs


def adv_headers(output: str, limit: int, sitemaps: list[str]) -> dict[str, object]:
    import advertools as adv

    urls = read_locs(sitemaps)[:limit]
    Path(output).unlink(missing_ok=True)  # scrapy's -o appends
    # Bounded like the product's run: 64 in flight (Scrapy's default is 8 per domain and
    # advertools turns AutoThrottle on), robots.txt obeyed as the product does, no delay.
    adv.crawl_headers(
        urls,
        output,
        custom_settings={
            "CONCURRENT_REQUESTS": 64,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
            "AUTOTHROTTLE_ENABLED": False,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "CLOSESPIDER_TIMEOUT": 600,
        },
    )
    statuses: Counter[str] = Counter()
    items = 0
    with open(output, "rb") as fh:
        for raw in fh:
            items += 1
            statuses[str(json.loads(raw).get("status"))] += 1
    return {"urls": len(urls), "items": items, "statuses": dict(statuses)}


def main() -> int:
    cmd, args = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    if cmd == "adv-sitemap":
        out = adv_sitemap(args[0])
    elif cmd == "usp":
        out = usp_tree(args[0])
    elif cmd == "adv-headers":
        if args[1] != "--limit":
            print("usage: adv-headers OUT.jl --limit N SITEMAP_FILE...", file=sys.stderr)
            return 2
        out = adv_headers(args[0], int(args[2]), args[3:])
    else:
        print(f"unknown tool {cmd!r}", file=sys.stderr)
        return 2
    out["loop_s"] = time.perf_counter() - t0
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
