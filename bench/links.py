"""crawl --links against a bare aiohttp GET + lxml link loop, on a generated linked site.

    .venv/bin/python bench/links.py [--pages 5000] [--concurrency 32]

The site (served by aiohttp in a child process on 127.0.0.1) has N pages; page i links to
pages i+1..i+5 and the root; the sitemap lists every tenth page. Both crawlers fetch every
page once; the figure is pages per second of wall time. Not run by the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import time
from collections import deque

from lxml import etree


def _page(i: int, n: int) -> bytes:
    links = "".join(f'<a href="/p/{(i + k) % n}">p{k}</a>' for k in range(1, 6))
    return (
        f"<!doctype html><html><head><title>page {i}</title></head>"
        f'<body><h1>page {i}</h1><a href="/">home</a>{links}<p>{"text " * 200}</p></body></html>'
    ).encode()


def _serve(port: int, n: int) -> None:
    from aiohttp import web

    listed = "".join(
        f"<url><loc>http://127.0.0.1:{port}/p/{i}</loc></url>" for i in range(0, n, 10)
    )
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{listed}</urlset>'
    ).encode()

    async def handle(request: web.Request) -> web.Response:
        path = request.path
        if path == "/sitemap.xml":
            return web.Response(body=sitemap, content_type="application/xml")
        if path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        if path == "/":
            return web.Response(body=_page(0, n), content_type="text/html")
        if path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < n:
            return web.Response(body=_page(int(path[3:]), n), content_type="text/html")
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def bare(base: str, concurrency: int) -> int:
    """Breadth-first GET of every internal page, links extracted with lxml."""
    import aiohttp

    seen = {base + "/"}
    queue: deque[str] = deque([base + "/"])
    parser = etree.HTMLParser()
    fetched = 0
    active = 0
    async with aiohttp.ClientSession() as session:

        async def worker() -> None:
            nonlocal fetched, active
            while queue or active:
                if not queue:
                    await asyncio.sleep(0.001)
                    continue
                url = queue.popleft()
                active += 1
                async with session.get(url) as resp:
                    body = await resp.read()
                fetched += 1
                root = etree.fromstring(body, parser)
                for el in root.iter("a"):
                    link = base + el.get("href", "")
                    if link not in seen:
                        seen.add(link)
                        queue.append(link)
                active -= 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return fetched


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = multiprocessing.Process(target=_serve, args=(port, args.pages), daemon=True)
    server.start()
    time.sleep(1.5)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        n_bare = asyncio.run(bare(base, args.concurrency))
        t_bare = time.perf_counter() - t0

        import audit

        t0 = time.perf_counter()
        result = audit.crawl(
            base + "/sitemap.xml", links=True, rate=0, concurrency=args.concurrency
        )
        t_links = time.perf_counter() - t0
        pages = result.summary["coverage"]["pages"]
    finally:
        server.terminate()
    print(f"bare aiohttp GET + lxml: {n_bare} pages in {t_bare:.2f} s = {n_bare / t_bare:,.0f}/s")
    print(f"crawl --links:           {pages} pages in {t_links:.2f} s = {pages / t_links:,.0f}/s")
    print(f"ratio: {(pages / t_links) / (n_bare / t_bare):.2f}x")


if __name__ == "__main__":
    main()
