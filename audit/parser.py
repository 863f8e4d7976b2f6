"""Streaming sitemap parser: bytes in (in chunks), entries and findings out.

Pure and synchronous: imports nothing of HTTP or asyncio. (Interface contract;
implementation owned by the parser work.)

    p = StreamParser(source="https://example.com/sitemap.xml")
    for chunk in chunks:
        for item in p.feed(chunk):      # Entry | Finding, as soon as known
            ...
    for item in p.close():              # end of input: flush, final findings
        ...
    p.kind                # "urlset"|"sitemapindex"|"text"|"rss"|"atom"|None
    p.gzip                # True when the bytes were gzip (any depth)
    p.compressed_bytes    # bytes fed
    p.uncompressed_bytes  # bytes after inflation (what the 50 MiB limit counts)
    p.entries             # entries emitted so far
    p.is_html             # the document is HTML (sitemap-is-html emitted)
    p.stopped             # parsing stopped early (too large, fatal error); feed() ignores more
"""

from __future__ import annotations

MAX_UNCOMPRESSED_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed
MAX_ENTRIES = 50_000  # sitemaps.org: 50,000 URLs per sitemap
