"""The sitemap domain: bytes in, entries out.

`inflate` (incremental gunzip with a size cap), `parser` (the lxml pull
parser that turns XML, text, RSS and Atom sitemaps into `Entry` records and
document-level findings) and `inspect` (statistics of one sitemap). Pure and
synchronous: nothing here knows HTTP (no aiohttp, no `audit.http`).
"""
