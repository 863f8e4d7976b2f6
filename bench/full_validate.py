"""Fallback for the validate benchmark: the product's parser and validator called directly.

Used by bench/suites/run.py only when `sitemap-audit validate` itself fails (product not ready).
    python bench/full_validate.py PUBLIC_DIR_URL FILE...
Each FILE is streamed in 1 MiB chunks through audit.sitemap.parser.StreamParser, and every entry
through one audit.rules.validator.SitemapValidator per file (one SeenUrls for the run).
Prints one JSON line: {"entries": N, "findings": F, "loop_s": S}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from audit.core.records import Entry
from audit.rules.validator import HreflangGraph, SeenUrls, SitemapValidator
from audit.sitemap.parser import StreamParser

CHUNK = 1 << 20


def main() -> None:
    base, paths = sys.argv[1].rstrip("/") + "/", sys.argv[2:]
    t0 = time.perf_counter()
    seen, hreflang = SeenUrls(), HreflangGraph()
    entries = findings = 0
    for path in paths:
        url = base + Path(path).name
        parser = StreamParser(source=url)
        validator: SitemapValidator | None = None
        with open(path, "rb") as f:
            chunks = iter(lambda: f.read(CHUNK), b"")
            for chunk in [*chunks, None]:
                items = parser.feed(chunk) if chunk is not None else parser.close()
                for item in items:
                    if isinstance(item, Entry):
                        if validator is None:
                            validator = SitemapValidator(
                                url,
                                sitemap_url=url,
                                seen=seen,
                                hreflang=hreflang,
                                cross_submitted=lambda loc: False,
                                kind=parser.kind,
                            )
                        entries += item.kind != "sitemap"
                        findings += len(validator.check(item))
                    else:
                        findings += 1
        if validator is not None:
            findings += len(
                validator.finish(parser.kind, parser.entries, parser.uncompressed_bytes)
            )
    findings += len(hreflang.finish())
    print(
        json.dumps({"entries": entries, "findings": findings, "loop_s": time.perf_counter() - t0})
    )


if __name__ == "__main__":
    main()
