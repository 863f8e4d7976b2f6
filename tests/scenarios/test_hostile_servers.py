"""Hostile servers, through the whole pipeline: what the report says.

tests/http/test_client.py proves the client's behaviour one request at a time (timeouts,
trickles, cuts, Retry-After, schemes, loops); these prove the run as a whole: the
right finding for the right URL, every listed URL still accounted for, the run ends.

Servers that misbehave below HTTP are raw asyncio servers (`raw_server` in
conftest.py) routed by path with `raw_site()`.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import socket
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from audit.http.addresses import is_private_host, redirect_to_private
from tests.crawlkit import HTML, TEXT, XML, Run, Site, audit, index, urlset

Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]


def answer(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def raw_site(
    raw_server: Any, routes: dict[str, Behaviour | bytes], hits: list[str] | None = None
) -> str:
    """A keep-alive raw HTTP server: each path is canned bytes or a behaviour; else 404.
    A HEAD gets the canned answer's head only."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                request = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return
            method, path = request.split(b" ", 2)[:2]
            if hits is not None:
                hits.append(f"{method.decode()} {path.decode()}")
            route = routes.get(path.decode(), answer(404))
            if isinstance(route, bytes):
                if method == b"HEAD":
                    route = route.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"
                writer.write(route)
                await writer.drain()
                continue
            await route(reader, writer, method)
            return  # a behaviour owns the connection to its end

    return str(await raw_server(handler))


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST instead of a FIN."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def one_record_per_url(run: Run, urls: list[str]) -> None:
    got = sorted(r["url"] for r in run.of("url"))
    assert got == sorted(urls)
    assert run.summary["urls"] == len(urls)


# --- no answer, slow answers ------------------------------------------------------------


@pytest.mark.slow
async def test_server_that_accepts_and_never_answers(raw_server: Any) -> None:
    async def hang(_r: asyncio.StreamReader, _w: asyncio.StreamWriter, _m: bytes) -> None:
        await asyncio.sleep(3600)

    hits: list[str] = []
    routes: dict[str, Behaviour | bytes] = {"/hang": hang}
    base = await raw_site(raw_server, routes, hits)
    routes["/sitemap.xml"] = answer(200, urlset(f"{base}/hang", f"{base}/ok").encode(), XML)
    routes["/ok"] = answer(200, b"", HTML)
    routes["/hung-sitemap.xml"] = hang
    run = await audit(f"{base}/sitemap.xml", timeout=0.3, retries=1)
    one_record_per_url(run, [f"{base}/hang", f"{base}/ok"])
    hung = run.url(f"{base}/hang")
    assert hung["status"] is None and "timed out" in hung["error"]
    assert [f["url"] for f in run.findings("url-unreachable")] == [f"{base}/hang"]
    assert run.url(f"{base}/ok")["status"] == 200
    assert hits.count("HEAD /hang") == 2  # retried once, then given up

    run = await audit(f"{base}/hung-sitemap.xml", timeout=0.3, retries=0)
    (err,) = run.findings("sitemap-http-error")
    assert "timed out" in err["message"]
    assert "nothing could be audited" in run.outcome["fatal"]  # exit 2: the target itself


@pytest.mark.slow
async def test_one_byte_at_a_time_hits_the_total_deadline(raw_server: Any) -> None:
    """One byte a second in life; one byte every 0.1 s here, against a 0.5 s deadline:
    every read is quick, so only a total deadline ends it."""

    def trickle(data: bytes) -> Behaviour:
        async def behave(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
            for i in range(len(data)):
                w.write(data[i : i + 1])
                await w.drain()
                await asyncio.sleep(0.1)

        return behave

    routes: dict[str, Behaviour | bytes] = {}
    base = await raw_site(raw_server, routes)
    doc = urlset(f"{base}/slow-page", f"{base}/ok").encode()
    routes.update(
        {
            "/robots.txt": trickle(answer(200, b"User-agent: *\nDisallow:\n" * 20, TEXT)),
            "/sitemap.xml": answer(200, doc, XML),
            "/slow.xml": trickle(answer(200, doc, XML)),
            "/slow-page": trickle(answer(200, b"x" * 100, HTML)),
            "/ok": answer(200, b"", HTML),
        }
    )
    run = await audit(f"{base}/sitemap.xml", timeout=0.5, retries=0)
    # robots.txt never finished: the host counts as disallowed (RFC 9309), nothing requested
    assert "robots-unreachable" in run.codes()
    one_record_per_url(run, [f"{base}/slow-page", f"{base}/ok"])
    # RULES.md robots-unreachable: held back by the unreadable robots.txt, not "blocked"
    assert {r["robots"] for r in run.of("url")} == {"unreachable"}

    routes["/robots.txt"] = answer(404)
    run = await audit(f"{base}/slow.xml", timeout=0.5, stream_timeout=1.0, retries=0)
    (err,) = run.findings("sitemap-http-error")
    assert "timed out" in err["message"]
    run = await audit(f"{base}/sitemap.xml", timeout=0.5, retries=0)
    slow = run.url(f"{base}/slow-page")
    assert slow["status"] is None and "timed out" in slow["error"]
    assert run.url(f"{base}/ok")["status"] == 200


# --- broken connections ------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_connections_reset_at_random(raw_server: Any, seed: int) -> None:
    rng = random.Random(seed)

    async def flaky(_r: asyncio.StreamReader, w: asyncio.StreamWriter, method: bytes) -> None:
        if rng.random() < 0.5:
            reset(w)
            return
        w.write(answer(200, b"" if method == b"HEAD" else b"ok", {**HTML, "Connection": "close"}))
        await w.drain()

    routes: dict[str, Behaviour | bytes] = {"/robots.txt": answer(404)}
    base = await raw_site(raw_server, routes)
    pages = [f"/p/{i}" for i in range(40)]
    routes.update({p: flaky for p in pages})
    routes["/sitemap.xml"] = answer(200, urlset(*(base + p for p in pages)).encode(), XML)
    run = await audit(f"{base}/sitemap.xml", retries=2)
    one_record_per_url(run, [base + p for p in pages])
    for rec in run.of("url"):
        assert rec["status"] == 200 or rec["error"], rec
    failed = {r["url"] for r in run.of("url") if r["status"] is None}
    assert {f["url"] for f in run.findings("url-unreachable")} == failed
    # with three tries at 50%, most pages get through; some fail at p = 1/8
    assert len(failed) < len(pages) / 2


async def test_connection_closed_mid_gzip(raw_server: Any) -> None:
    routes: dict[str, Behaviour | bytes] = {"/robots.txt": answer(404)}
    base = await raw_site(raw_server, routes)
    pages = [f"{base}/p/{i}" for i in range(3000)]
    body = gzip.compress(urlset(*pages).encode(), mtime=0)

    async def cut(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
        head = answer(200, body, {"Content-Type": "application/gzip"}).split(b"\r\n\r\n")[0]
        w.write(head + b"\r\n\r\n" + body[: len(body) // 2])
        await w.drain()

    routes["/sitemap.xml.gz"] = cut
    run = await audit(f"{base}/sitemap.xml.gz", mode="validate", retries=0)
    (sm,) = run.of("sitemap")
    assert sm["gzip"] is True and 0 < sm["entries"] < 3000 and sm["error"]
    (err,) = run.findings("sitemap-http-error")
    assert "broke off" in err["message"]


# --- Retry-After ----------------------------------------------------------------------


async def test_retry_after_over_the_cap_is_not_waited_for(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    calls = {"n": 0}

    async def limited(request: web.Request) -> web.StreamResponse:
        calls["n"] += 1
        return web.Response(status=429, headers={"Retry-After": "999999"})

    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/busy")),
        "/busy": limited,
    }
    run = await audit(f"{base}/sitemap.xml", retry_after_cap=0.2, retries=2)
    # neither 11 days nor the cap: reported at once (DESIGN, --max-retry-after)
    assert run.url(f"{base}/busy")["status"] == 429
    (limited,) = run.findings("url-rate-limited")
    assert "999999" in limited["message"] and "0.2 s cap" in limited["message"]
    (hosts,) = run.of("hosts")
    (host,) = hosts["hosts"]
    assert any("--max-retry-after" in note for note in host["notes"])
    assert host["backoff_s"] == 0
    assert calls["n"] == 2  # the HEAD and the GET confirming it, no retry


# --- redirects -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "location",
    ["file:///etc/passwd", "ftp://127.0.0.1/pub/sitemap.xml", "javascript:alert(1)", "data:,x"],
)
async def test_redirects_to_other_schemes_are_reported_never_followed(
    serve: Callable[[Site], Awaitable[str]], location: str
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/page")),
        "/page": (301, {"Location": location}, ""),
        "/moved-sitemap.xml": (302, {"Location": location}, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    rec = run.url(f"{base}/page")
    assert rec["error_kind"] == "redirect-scheme" and "not followed" in rec["error"]
    assert rec["status"] == 301 and rec["final_url"] == f"{base}/page"  # went no further
    assert rec["redirects"] == [{"url": f"{base}/page", "status": 301}]
    (err,) = run.findings("url-redirect-error")
    assert "not followed" in err["message"]
    assert "root:" not in repr(run.records)  # /etc/passwd was not read

    run = await audit(f"{base}/moved-sitemap.xml", mode="validate")
    (err,) = run.findings("sitemap-http-error")
    assert "not followed" in err["message"]
    assert "root:" not in repr(run.records)


async def test_redirect_to_itself_forever(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    count = {"n": 0}

    async def onwards(request: web.Request) -> web.StreamResponse:
        # a new URL each time (a counter in the query), so only the hop limit ends it
        count["n"] += 1
        return web.Response(status=302, headers={"Location": f"/onwards?n={count['n']}"})

    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/self", f"{base}/onwards")),
        "/self": (301, {"Location": f"{base}/self"}, ""),
        "/onwards": onwards,
        "/self-sitemap.xml": (301, {"Location": "/self-sitemap.xml"}, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    one_record_per_url(run, [f"{base}/self", f"{base}/onwards"])
    loops = {f["url"] for f in run.findings("url-redirect-loop")}
    assert loops == {f"{base}/self", f"{base}/onwards"}
    assert site.paths("HEAD").count("/self") == 1
    assert count["n"] <= 12  # stopped after Google's 10 hops, not forever

    run = await audit(f"{base}/self-sitemap.xml", mode="validate")
    (err,) = run.findings("sitemap-http-error")
    assert "loop" in err["message"]


# --- robots.txt ---------------------------------------------------------------------


async def test_robots_txt_of_10_mb_is_read_only_to_500_kib(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    sent = [0]

    async def robots(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers=TEXT)
        await resp.prepare(request)
        try:
            head = b"User-agent: *\nDisallow: /early\n"
            await resp.write(head)
            sent[0] += len(head)
            filler = b"# " + b"x" * 1021 + b"\n"  # 1 KiB comment lines
            for i in range(10 * 1024):
                if i == 600:  # past 500 KiB: never parsed
                    await resp.write(b"Disallow: /late\n")
                await resp.write(filler)
                sent[0] += len(filler)
            await resp.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            pass
        return resp

    site.routes = {
        "/robots.txt": robots,
        "/sitemap.xml": (200, XML, urlset(f"{base}/early", f"{base}/late")),
        "/early": (200, HTML, ""),
        "/late": (200, HTML, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    assert run.url(f"{base}/early")["robots"] == "blocked"
    assert run.url(f"{base}/late")["robots"] == "allowed"
    assert run.url(f"{base}/late")["status"] == 200
    # the client hung up long before the end (what it did read sat in socket buffers)
    assert sent[0] < 10 * 1024 * 1024


@pytest.mark.slow
async def test_sitemap_index_on_a_server_that_fails_every_way(raw_server: Any) -> None:
    """One index, one child per failure mode: each child gets its own finding."""

    async def hang(_r: asyncio.StreamReader, _w: asyncio.StreamWriter, _m: bytes) -> None:
        await asyncio.sleep(3600)

    async def rst(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
        reset(w)

    async def garbage(_r: asyncio.StreamReader, w: asyncio.StreamWriter, _m: bytes) -> None:
        w.write(b"\x00\xffNOT HTTP AT ALL\r\n\r\n")
        await w.drain()

    routes: dict[str, Behaviour | bytes] = {"/robots.txt": answer(404)}
    base = await raw_site(raw_server, routes)
    kids = {
        "hang": hang,
        "reset": rst,
        "garbage": garbage,
        "500": answer(500),
        "410": answer(410),
        "ok": answer(200, urlset(f"{base}/page").encode(), XML),
    }
    routes.update({f"/{k}.xml": v for k, v in kids.items()})
    routes["/index.xml"] = answer(200, index(*(f"{base}/{k}.xml" for k in kids)).encode(), XML)
    routes["/page"] = answer(200, b"", HTML)
    run = await audit(f"{base}/index.xml", timeout=0.3, retries=1)
    by_url = {f["url"]: f["code"] for f in run.of("finding") if f["url"]}
    for kid in ("hang", "reset", "garbage", "500"):
        assert by_url[f"{base}/{kid}.xml"] == "sitemap-http-error", kid
    assert by_url[f"{base}/410.xml"] == "sitemap-not-found"
    assert run.url(f"{base}/page")["status"] == 200
    assert len(run.of("sitemap")) == 7
    assert "fatal" not in run.outcome


# --- no cookie jar --------------------------------------------------------------------


async def test_cookies_a_site_sets_are_never_sent_back(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    cookie = {"Set-Cookie": "session=tracked-7f3a; Path=/"}
    site.routes = {
        "/robots.txt": (404, {**TEXT, **cookie}, ""),
        "/sitemap.xml": (200, {**XML, **cookie}, urlset(*(f"{base}/p/{i}" for i in range(5)))),
        **{f"/p/{i}": (302, {"Location": f"/q/{i}", **cookie}, "") for i in range(5)},
        **{f"/q/{i}": (200, {**HTML, **cookie}, "") for i in range(5)},
    }
    run = await audit(f"{base}/sitemap.xml", concurrency=1)
    assert len(run.of("url")) == 5
    assert len(site.hits) > 10
    assert not [h for h in site.hits if "tracked-7f3a" in str(h.headers)]


# --- redirects to private addresses -------------------------------------------------------

PRIVATE = [
    "127.0.0.1",
    "127.1",
    "0x7f000001",
    "2130706433",
    "017700000001",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "[::1]",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "::ffff:127.0.0.1",
    "[::ffff:169.254.169.254]",
    "localhost",
    "LOCALHOST.",
    "api.localhost",
]
PUBLIC = [
    "8.8.8.8",
    "93.184.216.34",
    "2001:4860::8888",
    "example.com",
    "1.2.3.4.example.com",
    "cafe.be",
    "deadbeef",
    "localhost.example.com",
]


def test_private_host_classification() -> None:
    assert [h for h in PRIVATE if not is_private_host(h)] == []
    assert [h for h in PUBLIC if is_private_host(h)] == []


@pytest.mark.parametrize(
    ("start", "location", "blocked"),
    [
        ("https://www.example.com/a", "http://169.254.169.254/latest/meta-data/", True),
        ("https://www.example.com/a", "http://[fe80::1]/", True),
        ("https://www.example.com/a", "http://localhost:6379/", True),
        ("https://www.example.com/a", "http://10.0.0.5/admin", True),
        ("https://www.example.com/a", "http://2130706433/", True),
        ("https://www.example.com/a", "https://www.example.org/b", False),
        ("http://127.0.0.1:8080/a", "http://127.0.0.1:9999/b", False),  # a loopback target
        ("http://10.0.0.1/a", "http://192.168.0.1/b", False),  # an intranet audit
        ("http://localhost/a", "http://169.254.169.254/", False),
    ],
)
def test_redirect_to_private_decision(start: str, location: str, blocked: bool) -> None:
    assert redirect_to_private(start, location) is blocked


def _public_looking_loopback_name() -> str | None:
    """The machine's own name when it resolves to a loopback address (Debian's /etc/hosts):
    a DNS name, not an IP literal or `localhost`, so the rule sees a public host."""
    name = socket.gethostname()
    if not name or is_private_host(name):
        return None
    try:
        infos = socket.getaddrinfo(name, None, socket.AF_INET)
    except OSError:
        return None
    addrs = {info[4][0] for info in infos}
    return name if addrs == {"127.0.0.1"} else None


async def test_redirect_from_a_public_host_to_loopback_is_not_followed(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    name = _public_looking_loopback_name()
    if name is None:
        pytest.skip("the host name does not resolve to 127.0.0.1 only")
    site = Site()
    base = await serve(site)
    port = base.rsplit(":", 1)[1]
    public = f"http://{name}:{port}"
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{public}/page", f"{public}/by-name")),
        "/page": (301, {"Location": f"http://127.0.0.1:{port}/internal"}, ""),
        "/by-name": (302, {"Location": f"http://localhost:{port}/internal?2"}, ""),
        "/internal": (200, HTML, "internal"),
        "/moved.xml": (301, {"Location": f"http://127.0.0.1:{port}/sitemap.xml"}, ""),
    }
    run = await audit(f"{public}/sitemap.xml")
    # (link-local and private ranges are covered above without a request: never leave loopback)
    for path in ("/page", "/by-name"):
        rec = run.url(f"{public}{path}")
        assert rec["error_kind"] == "redirect-private", rec
        assert "--allow-private" in rec["error"]
    assert {f["url"] for f in run.findings("url-redirect-error")} == {
        f"{public}/page",
        f"{public}/by-name",
    }
    assert "/internal" not in site.paths()
    run = await audit(f"{public}/moved.xml", mode="validate")
    (err,) = run.findings("sitemap-http-error")
    assert "--allow-private" in err["message"]
    assert site.paths().count("/sitemap.xml") == 1  # only the first crawl's fetch

    run = await audit(f"{public}/sitemap.xml", allow_private=True)
    assert run.url(f"{public}/page")["status"] == 200
    assert run.url(f"{public}/by-name")["status"] == 200
    assert "/internal" in site.paths()


async def test_a_loopback_target_follows_loopback_redirects(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    port = base.rsplit(":", 1)[1]
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, urlset(f"{base}/page")),
        "/page": (301, {"Location": f"http://localhost:{port}/internal"}, ""),
        "/internal": (200, HTML, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    rec = run.url(f"{base}/page")
    assert rec["status"] == 200 and rec["final_url"] == f"http://localhost:{port}/internal"
