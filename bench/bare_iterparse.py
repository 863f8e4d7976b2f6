"""Baseline for the validate benchmark: a bare lxml iterparse loop that only extracts <loc>.

Run as its own process by bench/suites/run.py: `python bench/bare_iterparse.py FILE...`.
Prints one JSON line: {"entries": N, "loop_s": S}. Imports nothing of the product.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from typing import IO

from lxml import etree

URL_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}url"
LOC_TAG = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"


def count_locs(paths: list[str]) -> int:
    n = 0
    for path in paths:
        f: IO[bytes] = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")  # noqa: SIM115
        with f:
            # Same parser safety settings a real sitemap reader needs; they cost nothing here.
            for _event, elem in etree.iterparse(
                f, events=("end",), tag=URL_TAG, resolve_entities=False, no_network=True
            ):
                loc = elem.findtext(LOC_TAG)
                if loc:
                    n += 1
                # Free the element and every processed sibling so memory stays flat.
                elem.clear()
                while elem.getprevious() is not None:
                    del elem.getparent()[0]
    return n


def main() -> None:
    t0 = time.perf_counter()
    n = count_locs(sys.argv[1:])
    print(json.dumps({"entries": n, "loop_s": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
