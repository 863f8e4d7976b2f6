"""The sitemap domain: bytes in, entries out.

`inflate` (incremental gunzip with a size cap), `parser` (`StreamParser`, the
front of the parser: bytes in, `Entry` records and document-level findings out),
the parts it dispatches to, one a step: `sniff` (what the bytes are), `text`
(text sitemaps), `xmlpull` (lxml's pull parser, and the dispatcher to a format
by the root element), `urlset` (<urlset>, <sitemapindex>), `entries` (one entry
read with care, and its extensions), `feeds` (RSS, Atom), and `doc` (what they
share); and `inspect` (statistics of one sitemap). Pure and synchronous: nothing
here knows HTTP (no aiohttp, no `audit.http`).
"""
