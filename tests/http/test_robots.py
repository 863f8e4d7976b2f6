"""robots.txt: RFC 9309 group choice and matching, status mapping, fetch-once cache, limits."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from audit.core.config import ROBOTS_MAX_BYTES
from audit.http import HttpClient
from audit.http.robots import RobotsCache, RobotsPolicy, parse_robots, product_token

UA = "sitemap-audit/0.1.0"
ServerFactory = Callable[[web.Application], Awaitable[Any]]


def policy(text: str, ua: str = UA) -> RobotsPolicy:
    return parse_robots(text, ua, origin="http://e.test:80", url="http://e.test/robots.txt")


def ok(p: RobotsPolicy, path: str) -> bool:
    return p.allowed("http://e.test" + path)


def robots_app(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    return app


# --- parsing and matching ----------------------------------------------------------------


def test_product_token() -> None:
    assert product_token("sitemap-audit/0.1.0") == "sitemap-audit"
    assert product_token("MyBot") == "MyBot"


def test_sitemap_lines_are_case_insensitive_and_anywhere() -> None:
    p = policy(
        "SITEMAP: https://e.test/one.xml\n"
        "User-agent: *\n"
        "Disallow: /x\n"
        "sitemap:https://e.test/two.xml\n"
        "Disallow: /y   # still in the group: Sitemap does not end it\n"
        "\n"
        "User-agent: other\n"
        "Disallow: /\n"
        "SiteMap:   https://e.test/three.xml  \n"
    )
    assert p.sitemaps == [
        "https://e.test/one.xml",
        "https://e.test/two.xml",
        "https://e.test/three.xml",
    ]
    assert not ok(p, "/y")


def test_most_specific_group_wins_else_star_else_all() -> None:
    text = (
        "User-agent: *\nDisallow: /star-only\n\n"
        "User-agent: SITEMAP-AUDIT\nDisallow: /ours\n\n"
        "User-agent: sitemap\nDisallow: /\n"
    )
    ours = policy(text)
    assert not ok(ours, "/ours")
    assert ok(ours, "/star-only")  # only the one group applies
    # a group named by a mere prefix of our token ("sitemap") is not ours: a prefix match
    # would pick it; RFC 9309 matches the whole product token, so `*` applies
    fallback = policy("User-agent: sitemap\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n")
    assert ok(fallback, "/page")
    assert not ok(fallback, "/star")
    nobody = policy("User-agent: googlebot\nDisallow: /\n")
    assert ok(nobody, "/anything")
    versioned = policy(
        "User-agent: sitemap-audit/2.0\nDisallow: /v\n\nUser-agent: *\nDisallow: /\n"
    )
    assert not ok(versioned, "/v") and ok(versioned, "/other")


def test_longest_match_wins_and_a_tie_goes_to_allow() -> None:
    p = policy(
        "User-agent: *\n"
        "Disallow: /shop\n"
        "Allow: /shop/public\n"
        "Allow: /tie\n"
        "Disallow: /tie\n"
        "Disallow: /folder/\n"
        "Allow: /folder\n"
    )
    assert not ok(p, "/shop/cart")
    assert ok(p, "/shop/public/item")
    assert ok(p, "/tie/x")
    assert not ok(p, "/folder/page")  # the longer Disallow beats the shorter Allow


def test_wildcards() -> None:
    p = policy("User-agent: *\nDisallow: /*.pdf$\nDisallow: /a/*/c\nAllow: /a/ok/c\n")
    assert not ok(p, "/docs/file.pdf")
    assert ok(p, "/docs/file.pdf?download=1")  # $ anchors the end of path and query
    assert not ok(p, "/a/b/c")
    assert ok(p, "/a/ok/c")
    assert ok(p, "/a/b/d")


def test_robots_txt_is_always_allowed() -> None:
    p = policy("User-agent: *\nDisallow: /\n")
    assert not ok(p, "/")
    assert ok(p, "/robots.txt")
    down = RobotsPolicy(
        origin="http://e.test:80", url="http://e.test/robots.txt", status="unreachable"
    )
    assert ok(down, "/robots.txt") and not ok(down, "/")
    # urlsplit drops a tab or newline anywhere in a URL: still the robots.txt path
    assert p.allowed("http://e.test/robots\t.txt") and p.allowed("http://e.test/robo\nts.txt")
    assert not p.allowed("http://e.test/robots.txt.bak")


def test_crawl_delay_and_request_rate_of_the_chosen_group() -> None:
    p = policy(
        "User-agent: *\nCrawl-delay: 9\n\n"
        "User-agent: sitemap-audit\nCrawl-delay: 2\nRequest-rate: 1/5\n"
    )
    assert p.crawl_delay == 2.0
    assert p.request_rate == 0.2
    assert policy("User-agent: *\nDisallow:\n").crawl_delay is None


def test_bom_and_bad_bytes_do_not_break_parsing() -> None:
    raw = "\ufeffUser-agent: *\n".encode() + b"Disallow: /caf\xe9\nDisallow: /private\n"
    p = policy(raw.decode("utf-8", errors="replace"))
    assert not ok(p, "/private")


# --- fetching ----------------------------------------------------------------------------


async def test_status_mapping(aiohttp_server: ServerFactory, fast_config: Any) -> None:
    answers = {
        "404": (404, "allow all"),
        "403": (403, "allow all"),
        "401": (401, "allow all"),
        "500": (500, "disallow all"),
        "503": (503, "disallow all"),
        "429": (429, "disallow all"),
    }
    servers: dict[str, Any] = {}
    for name, (status, _) in answers.items():

        async def handler(_: web.Request, status: int = status) -> web.Response:
            return web.Response(status=status, text="User-agent: *\nDisallow: /\n")

        servers[name] = await aiohttp_server(robots_app(handler))

    async with HttpClient(fast_config(retries=1)) as client:
        cache = RobotsCache(client, UA)
        for name, (status, meaning) in answers.items():
            page = str(servers[name].make_url("/page"))
            p = await cache.get(page)
            assert p.http_status == status
            if meaning == "allow all":
                assert p.status == "missing", name
                assert p.allowed(page)
            else:
                assert p.status == "unreachable", name
                assert not p.allowed(page)
                assert p.allowed(str(servers[name].make_url("/robots.txt")))
                assert p.error


async def test_timeout_and_refused_are_unreachable(raw_server: Any, fast_config: Any) -> None:
    async def silent(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(30)

    base = await raw_server(silent)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/x"
        async with HttpClient(fast_config(timeout=0.2, retries=0)) as client:
            cache = RobotsCache(client, UA)
            p = await cache.get(base + "/x")
            refused = await cache.get(closed)
    assert p.status == "unreachable" and p.http_status is None
    assert p.error and "timed out" in p.error
    assert not p.allowed(base + "/x")
    assert refused.status == "unreachable"


async def test_parsed_once_per_origin_under_concurrency(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    hits: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        hits.append(request.path)
        await asyncio.sleep(0.05)  # keep the fetch in flight while others ask
        return web.Response(text="User-agent: *\nDisallow: /no\nSitemap: http://e.test/s.xml\n")

    server = await aiohttp_server(robots_app(handler))
    async with HttpClient(fast_config()) as client:
        cache = RobotsCache(client, UA)
        assert cache.cached(str(server.make_url("/a"))) is None
        policies = await asyncio.gather(
            *(cache.get(str(server.make_url(f"/p{n}"))) for n in range(20))
        )
        again = await cache.get(str(server.make_url("/")))
    assert hits == ["/robots.txt"]
    assert all(p is policies[0] for p in policies) and again is policies[0]
    assert policies[0].status == "ok" and policies[0].sitemaps == ["http://e.test/s.xml"]
    assert not policies[0].allowed(str(server.make_url("/no")))
    assert cache.cached(str(server.make_url("/b"))) is policies[0]


async def test_redirects_followed_up_to_five(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    def chain(hops: int) -> web.Application:
        async def handler(request: web.Request) -> web.Response:
            if request.path == "/robots.txt":
                raise web.HTTPMovedPermanently(f"/r/1?left={hops - 1}")
            left = int(request.query["left"])
            if left <= 0:
                return web.Response(text="User-agent: *\nDisallow: /blocked\n")
            n = int(request.path.rsplit("/", 1)[1])
            raise web.HTTPFound(f"/r/{n + 1}?left={left - 1}")

        return robots_app(handler)

    s5 = await aiohttp_server(chain(5))
    s6 = await aiohttp_server(chain(6))
    async with HttpClient(fast_config()) as client:
        cache = RobotsCache(client, UA)
        p5 = await cache.get(str(s5.make_url("/")))
        p6 = await cache.get(str(s6.make_url("/")))
    assert len(p5.redirects) == 5 and p5.status == "ok"
    assert not p5.allowed(str(s5.make_url("/blocked")))  # rules apply to the original host
    assert p5.origin.endswith(f":{s5.port}")
    assert p6.status == "missing" and p6.allowed(str(s6.make_url("/blocked")))
    assert p6.error and "redirect" in p6.error


async def test_huge_robots_txt_read_only_to_the_limit(raw_server: Any, fast_config: Any) -> None:
    total = 10 * 1024 * 1024
    sent = 0
    head = b"User-agent: *\nDisallow: /early\n#"
    head += b"." * (ROBOTS_MAX_BYTES - 13 - len(head) - 1) + b"\n"  # the cut: "Disallow: /la|te"
    tail_rule = b"Disallow: /late\n"

    async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        await reader.readuntil(b"\r\n\r\n")
        body = head + tail_rule
        body += b"#" * (total - len(body))
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {total}\r\n\r\n".encode())
        for i in range(0, total, 65536):
            writer.write(body[i : i + 65536])
            await writer.drain()
            sent += 65536
            await asyncio.sleep(0.002)  # paced, so socket buffers stay small

    base = await raw_server(huge)
    async with HttpClient(fast_config()) as client:
        cache = RobotsCache(client, UA)
        p = await cache.get(base + "/")
        await asyncio.sleep(0.2)  # let the server notice the closed connection
    assert len(head) + len(tail_rule) > ROBOTS_MAX_BYTES > len(head)
    assert p.status == "ok" and p.truncated
    assert not p.allowed(base + "/early")
    # the limit cuts "Disallow: /late" to "Disallow: /la": a half rule is dropped, not obeyed
    assert p.allowed(base + "/late") and p.allowed(base + "/lab")
    assert sent < 4 * 1024 * 1024


async def test_crawl_delay_lowers_the_host_rate(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    async def handler(_: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 4\n")

    async def fast(_: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 0.001\n")

    slow_server = await aiohttp_server(robots_app(handler))
    fast_server = await aiohttp_server(robots_app(fast))
    async with HttpClient(fast_config(rate=10, retry_after_cap=30)) as client:
        cache = RobotsCache(client, UA)
        await cache.get(str(slow_server.make_url("/")))
        await cache.get(str(fast_server.make_url("/")))
        assert client.host(str(slow_server.make_url("/"))).rate == 0.25
        assert client.host(str(fast_server.make_url("/"))).rate == 10  # never raised
        stats = {s.host: s for s in client.host_stats()}
    assert any(s.crawl_delay == 4 for s in stats.values())


async def test_non_utf8_robots_txt_decodes_with_replacement(
    aiohttp_server: ServerFactory, fast_config: Any
) -> None:
    async def handler(_: web.Request) -> web.Response:
        body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /\xe9t\xe9\nDisallow: /private\n"
        return web.Response(body=body, content_type="text/plain")

    server = await aiohttp_server(robots_app(handler))
    async with HttpClient(fast_config()) as client:
        p = await RobotsCache(client, UA).get(str(server.make_url("/")))
    assert p.status == "ok"
    assert not p.allowed(str(server.make_url("/private")))
