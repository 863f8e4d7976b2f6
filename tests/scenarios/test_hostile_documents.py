"""Hostile sitemap documents through the real pipeline over loopback HTTP.

Each document must give the right finding, keep memory bounded and end the run
cleanly. Small documents live in fixtures/hostile/ (`__BASE__` is replaced by the
server's URL); big ones are generated here, and the largest are streamed by the
server so that the test itself never holds them.

fixtures/sitemaps/broken/ and tests/sitemap/test_parser.py already cover the parser side of
several of these (XXE with a relative SYSTEM id, billion laughs in text, a truncated
file, a latin-1 declaration); the tests here add the network side: what the server saw,
what the report says, how much memory the whole run took.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from audit.sitemap.parser import MAX_UNCOMPRESSED_BYTES
from tests.crawlkit import HTML, TEXT, XML, Run, Site, audit, index, urlset

HOSTILE = Path(__file__).resolve().parents[2] / "fixtures" / "hostile"
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}">\n'
MiB = 1 << 20
# The Inflater's own margin (1 KiB) plus one byte to tell "at" from "over".
LIMIT_MARGIN = 2048


def fixture(name: str, base: str) -> bytes:
    return (HOSTILE / name).read_bytes().replace(b"__BASE__", base.encode())


# --- memory ----------------------------------------------------------------------


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Peak:
    """Peak resident memory growth of this process (client and loopback server both
    live here) while the block runs, sampled by a thread: lxml's and zlib's C memory
    is invisible to tracemalloc, and a sync parse step would starve an asyncio sampler."""

    def __init__(self) -> None:
        self.grown = 0
        self._stop = threading.Event()

    def _sample(self, base: int) -> None:
        while not self._stop.wait(0.002):
            self.grown = max(self.grown, _rss() - base)

    @property
    def mib(self) -> float:
        return self.grown / MiB


@contextmanager
def peak_memory() -> Iterator[Peak]:
    peak = Peak()
    base = _rss()
    thread = threading.Thread(target=peak._sample, args=(base,), daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        peak._stop.set()
        thread.join()
        peak.grown = max(peak.grown, _rss() - base)


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")


def streamed(
    parts: Callable[[], Iterator[bytes]], headers: dict[str, str], sent: list[int]
) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A handler that generates its body as it goes; `sent` counts the bytes written.
    The client hanging up is the expected end, not an error."""

    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        if request.method == "HEAD":
            return resp
        try:
            for part in parts():
                await resp.write(part)
                sent[0] += len(part)
            await resp.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            pass
        return resp

    return handler


def codes(run: Run) -> list[str]:
    """The finding codes, without the robots.txt 404 every site here has."""
    return [c for c in run.codes() if c != "robots-missing"]


def assert_clean(run: Run, sitemaps: int = 1) -> None:
    """A clean end: a summary, one sitemap record per document, no internal error."""
    assert run.summary["type"] == "summary"
    assert "fatal" not in run.outcome
    assert len(run.of("sitemap")) == sitemaps
    for rec in run.records:
        assert "internal error" not in str(rec.get("error") or "")
        assert "Traceback" not in str(rec.get("message") or "")


# --- XML entities ------------------------------------------------------------------


async def test_xxe_file_and_network_entities_are_never_read_or_fetched(
    serve: Callable[[Site], Awaitable[str]], tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-6d1f0c\n")
    site = Site()
    base = await serve(site)
    doc = fixture("xxe.xml", base).replace(b"__SECRET__", str(secret).encode())
    bait = "you-fetched-me"
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, doc),
        "/entity.txt": (200, TEXT, bait),
        "/external.dtd": (200, TEXT, f'<!ENTITY file "{bait}">'),
        "/parameter.dtd": (200, TEXT, f'<!ENTITY net "{bait}">'),
    }
    for mode in ("validate", "crawl"):
        site.hits.clear()
        run = await audit(f"{base}/sitemap.xml", mode=mode)
        fetched = set(site.paths())
        assert not fetched & {"/entity.txt", "/external.dtd", "/parameter.dtd"}, fetched
        text = repr(run.records)
        assert "TOP-SECRET" not in text and bait not in text
        (doctype,) = run.findings("sitemap-doctype")
        assert "never expanded or fetched" in doctype["message"]
        assert_clean(run)
    # the entries around the references are kept; the references stay unexpanded
    assert run.url(f"{base}/before")["status"] == 404
    assert run.url(f"{base}/after")["status"] == 404


LOL = '<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY lol{i} "{("&lol;" if i == 1 else f"&lol{i - 1};") * 10}">' for i in range(1, 10)
)
BIG = "x" * 100_000  # one entity of 100 KB ...
QUADRATIC_REFS = "&a;" * 10_000  # ... referenced 10,000 times: 1 GB if expanded

BLOWUPS = {
    "billion-laughs-in-text": (
        f"<!DOCTYPE urlset [{LOL}]>",
        "<url><loc>{base}/&lol9;</loc></url>",
    ),
    "billion-laughs-in-attribute": (
        f"<!DOCTYPE urlset [{LOL}]>",
        '<url a="&lol9;"><loc>{base}/x</loc></url>',
    ),
    "quadratic-in-text": (
        f'<!DOCTYPE urlset [<!ENTITY a "{BIG}">]>',
        f"<url><loc>{{base}}/{QUADRATIC_REFS}</loc></url>",
    ),
    "quadratic-in-attribute": (
        f'<!DOCTYPE urlset [<!ENTITY a "{BIG}">]>',
        f'<url a="{QUADRATIC_REFS}"><loc>{{base}}/x</loc></url>',
    ),
}


@needs_proc
@pytest.mark.parametrize("name", sorted(BLOWUPS))
async def test_entity_blowups_are_refused_without_growing(
    serve: Callable[[Site], Awaitable[str]], name: str
) -> None:
    doctype, entry = BLOWUPS[name]
    site = Site()
    base = await serve(site)
    first = f"<url><loc>{base}/first</loc></url>\n"
    doc = (
        f'<?xml version="1.0"?>\n{doctype}\n<urlset xmlns="{SM}">\n{first}'
        f"{entry.format(base=base)}\n</urlset>\n"
    ).encode()
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, doc)}
    with peak_memory() as peak:
        run = await audit(f"{base}/sitemap.xml", mode="validate")
    assert codes(run)[:2] == ["sitemap-doctype", "sitemap-xml-malformed"], codes(run)
    assert "billion laughs" in run.findings("sitemap-xml-malformed")[0]["message"]
    assert peak.mib < 40, f"grew {peak.mib:.0f} MiB"  # 1 GB (or 3 GB) if expanded
    assert_clean(run)


# --- gzip ---------------------------------------------------------------------------


def _bomb_member() -> bytes:
    # 1 MiB of whitespace broken by an empty comment (libxml2 caps single text nodes).
    return gzip.compress(b" " * (MiB - 7) + b"<!---->", mtime=0)


@needs_proc
async def test_gzip_bomb_stops_at_the_limit_with_bounded_memory(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    head = gzip.compress((HEAD + f"<url><loc>{base}/kept</loc></url>\n").encode(), mtime=0)
    bomb = head + _bomb_member() * 1024  # 1 GiB inflated from ~1 MiB
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml.gz": (200, {"Content-Type": "application/gzip"}, bomb),
    }
    with peak_memory() as peak:
        run = await audit(f"{base}/sitemap.xml.gz", mode="validate")
    assert codes(run) == ["sitemap-too-large", "lastmod-missing"], codes(run)
    (sm,) = run.of("sitemap")
    assert sm["gzip"] is True and sm["entries"] == 1
    assert MAX_UNCOMPRESSED_BYTES < sm["bytes"] <= MAX_UNCOMPRESSED_BYTES + LIMIT_MARGIN
    # ~80 MiB: one 16 KiB input step of this bomb inflates to 16 MB before it is capped
    assert peak.mib < 150, f"grew {peak.mib:.0f} MiB for a 1 GiB bomb"
    assert_clean(run)


@pytest.mark.slow
async def test_gzip_in_gzip_in_gzip(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    doc = urlset(f"{base}/a", f"{base}/b").encode()
    triple = gzip.compress(gzip.compress(gzip.compress(doc, mtime=0), mtime=0), mtime=0)
    # the same three layers around a bomb: every layer is capped while it inflates
    inner = gzip.compress((HEAD + f"<url><loc>{base}/kept</loc></url>\n").encode(), mtime=0)
    bomb = gzip.compress(gzip.compress(inner + _bomb_member() * 256, mtime=0), mtime=0)
    assert len(bomb) < 64 * 1024
    gz = {"Content-Type": "application/gzip"}
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/triple.xml.gz": (200, gz, triple),
        "/bomb.xml.gz": (200, gz, bomb),
        "/index.xml": (200, XML, index(f"{base}/triple.xml.gz", f"{base}/bomb.xml.gz")),
    }
    run = await audit(f"{base}/index.xml", mode="validate")
    sms = {r["url"]: r for r in run.of("sitemap")}
    assert sms[f"{base}/triple.xml.gz"]["entries"] == 2
    assert sms[f"{base}/triple.xml.gz"]["gzip"] is True
    assert sms[f"{base}/triple.xml.gz"]["bytes"] == len(doc)
    bombed = sms[f"{base}/bomb.xml.gz"]
    assert bombed["entries"] == 1
    assert MAX_UNCOMPRESSED_BYTES < bombed["bytes"] <= MAX_UNCOMPRESSED_BYTES + LIMIT_MARGIN
    assert [f["url"] or f["sitemap"] for f in run.findings("sitemap-too-large")] == [
        f"{base}/bomb.xml.gz"
    ]
    assert not [f for f in run.of("finding") if f["code"].startswith("sitemap-gzip")]
    assert_clean(run, sitemaps=3)


# --- size and shape -----------------------------------------------------------------


def _long_line(prefix: bytes, total: int) -> Callable[[], Iterator[bytes]]:
    block = b"a" * 65536

    def parts() -> Iterator[bytes]:
        yield prefix
        for _ in range(total // len(block)):
            yield block

    return parts


@needs_proc
@pytest.mark.parametrize("kind", ["xml", "text"])
async def test_100_mb_single_line(serve: Callable[[Site], Awaitable[str]], kind: str) -> None:
    site = Site()
    base = await serve(site)
    sent = [0]
    if kind == "xml":
        # a valid entry, then a <loc> whose text never ends (no newline anywhere)
        prefix = (
            f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SM}">'
            f"<url><loc>{base}/kept</loc></url><url><loc>{base}/"
        ).encode()
        headers = XML
    else:
        prefix = f"{base}/".encode()
        headers = TEXT
    total = 100 * 1000 * 1000
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap": streamed(_long_line(prefix, total), headers, sent),
    }
    with peak_memory() as peak:
        run = await audit(f"{base}/sitemap", mode="validate")
    (sm,) = run.of("sitemap")
    if kind == "xml":
        # the 50 MiB size cap ends the endless text node (issue 16.9: the real cause, not
        # libxml2's text-node limit); the entry before it is kept
        assert "sitemap-too-large" in codes(run), codes(run)
        assert sm["entries"] == 1
    else:
        # the one line could only ever be one (invalid) URL: the size cap ends it
        assert "sitemap-too-large" in codes(run), codes(run)
        assert sm["entries"] == 0
    assert sent[0] < total  # the client hung up; it did not read 100 MB
    assert peak.mib < 150, f"grew {peak.mib:.0f} MiB"
    assert_clean(run)


async def test_deeply_nested_elements(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    depth = 100_000
    doc = (
        f"{HEAD}<url><loc>{base}/kept</loc></url>\n<url><loc>{base}/deep</loc>"
        + "<a>" * depth
        + "</a>" * depth
        + "</url>\n</urlset>\n"
    ).encode()
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, doc)}
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    (bad,) = run.findings("sitemap-xml-malformed")
    assert "depth" in bad["message"].lower() and bad["line"] == 4
    assert run.of("sitemap")[0]["entries"] == 1
    assert_clean(run)


@pytest.mark.slow
async def test_invalid_utf8_in_the_middle_keeps_what_came_before(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    lines = [f"<url><loc>{base}/p/{i}</loc></url>\n".encode() for i in range(2000)]
    lines[1000] = f"<url><loc>{base}/p/caf".encode() + b"\xe9\xff" + b"</loc></url>\n"
    doc = HEAD.encode() + b"".join(lines) + b"</urlset>\n"
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, doc)}
    run = await audit(f"{base}/sitemap.xml", mode="crawl", rate=float("inf"))
    (bad,) = run.findings("sitemap-encoding")
    assert bad["line"] == 1003  # two header lines, then entry 1000
    assert run.of("sitemap")[0]["entries"] == 1000
    assert len(run.of("url")) == 1000  # every entry before the fault is checked
    assert_clean(run)


UTF16 = {
    "bom-le": b"\xff\xfe" + urlset("http://h/a").encode("utf-16-le"),
    "bom-be": b"\xfe\xff" + urlset("http://h/a").encode("utf-16-be"),
    "no-bom-le": urlset("http://h/a").encode("utf-16-le"),
    "declared-utf16-ascii-bytes": urlset("http://h/a").replace("UTF-8", "UTF-16").encode(),
    "utf32": b"\xff\xfe\x00\x00" + urlset("http://h/a").encode("utf-32-le"),
}


@pytest.mark.parametrize("name", sorted(UTF16))
async def test_utf16_and_utf32_are_an_encoding_error(
    serve: Callable[[Site], Awaitable[str]], name: str
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": (200, XML, UTF16[name])}
    run = await audit(f"{base}/sitemap.xml", mode="validate")
    assert codes(run) == ["sitemap-encoding"], codes(run)
    assert run.of("sitemap")[0]["entries"] == 0
    assert_clean(run)


async def test_utf8_bom_is_accepted(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, fixture("utf8-bom.xml", base)),
        "/a": (200, HTML, ""),
        "/b": (200, HTML, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    assert codes(run) == ["lastmod-missing"]
    assert run.url(f"{base}/a")["line"] == 3 and run.url(f"{base}/b")["status"] == 200


async def test_loc_with_control_characters(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, fixture("control-chars.xml", base)),
        "/raw.xml": (200, XML, fixture("raw-control-char.xml", base)),
        "/fine": (200, HTML, ""),
    }
    run = await audit(f"{base}/sitemap.xml")
    invalid = {f["line"] for f in run.findings("loc-invalid")}
    assert invalid == {3, 4, 5, 6}, run.of("finding")
    assert run.url(f"{base}/fine")["status"] == 200
    # an unusable URL gets its url record but is never requested
    requested = [p for p in site.paths() if p not in ("/robots.txt", "/sitemap.xml")]
    assert requested == ["/fine"]
    assert len(run.of("url")) == 5
    # a raw C0 control byte is not even XML: malformed, entries before it kept
    run = await audit(f"{base}/raw.xml", mode="validate")
    (bad,) = run.findings("sitemap-xml-malformed")
    assert bad["line"] == 4 and "not allowed" in bad["message"]
    assert run.of("sitemap")[0]["entries"] == 1


# --- bodies that do not end well ----------------------------------------------------


@needs_proc
async def test_endless_body_is_stopped_by_the_size_cap(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)
    sent = [0]

    def forever() -> Iterator[bytes]:
        yield f"{HEAD}<url><loc>{base}/kept</loc></url>\n".encode()
        filler = (b" " * 65000 + b"<!---->\n") * 4
        while True:
            yield filler

    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": streamed(forever, XML, sent)}
    with peak_memory() as peak:
        run = await audit(f"{base}/sitemap.xml", mode="validate")
    assert "sitemap-too-large" in codes(run)
    (sm,) = run.of("sitemap")
    assert sm["entries"] == 1
    assert MAX_UNCOMPRESSED_BYTES < sm["bytes"] <= MAX_UNCOMPRESSED_BYTES + LIMIT_MARGIN
    assert peak.mib < 100, f"grew {peak.mib:.0f} MiB"
    assert_clean(run)


@pytest.mark.slow
async def test_endless_slow_body_is_stopped_by_the_total_deadline(
    serve: Callable[[Site], Awaitable[str]],
) -> None:
    site = Site()
    base = await serve(site)

    async def trickle(request: web.Request) -> web.StreamResponse:
        # one entry every 50 ms, forever: each read is quick, the whole never ends
        resp = web.StreamResponse(headers=XML)
        await resp.prepare(request)
        try:
            await resp.write(HEAD.encode())
            for i in range(1_000_000):
                await resp.write(f"<url><loc>{base}/p/{i}</loc></url>\n".encode())
                await asyncio.sleep(0.05)
        except (ConnectionError, asyncio.CancelledError):
            pass
        return resp

    site.routes = {"/robots.txt": (404, TEXT, ""), "/sitemap.xml": trickle}
    run = await audit(f"{base}/sitemap.xml", mode="crawl", timeout=0.5, stream_timeout=1.0)
    (broke,) = run.findings("sitemap-http-error")
    assert "broke off" in broke["message"] and "timed out" in broke["message"]
    (sm,) = run.of("sitemap")
    assert 3 <= sm["entries"] < 100
    assert len(run.of("url")) == sm["entries"]  # every entry read before the cut is checked
    assert_clean(run)


def _entries(base: str, n: int) -> bytes:
    return "".join(f"<url><loc>{base}/p/{i}</loc></url>\n" for i in range(n)).encode()


@pytest.mark.parametrize(
    ("framing", "kind"),
    [("content-length", "xml"), ("chunked", "xml"), ("content-length", "text")],
)
async def test_response_that_stops_mid_document_keeps_the_entries_before_the_cut(
    raw_server: Any, framing: str, kind: str
) -> None:
    base_box: list[str] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        if b"GET /sitemap " not in request:
            writer.write(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
            return
        base = base_box[0]
        if kind == "xml":
            body = HEAD.encode() + _entries(base, 50) + f"<url><loc>{base}/p/cut".encode()
        else:
            body = "".join(f"{base}/p/{i}\n" for i in range(50)).encode() + f"{base}/p/cut".encode()
        ctype = "application/xml" if kind == "xml" else "text/plain"
        if framing == "content-length":
            head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {len(body) * 3}\r\n\r\n"
            writer.write(head.encode() + body)
        else:
            head = f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nTransfer-Encoding: chunked\r\n\r\n"
            writer.write(head.encode() + f"{len(body):x}\r\n".encode() + body + b"\r\n")
        await writer.drain()
        # then hang up, never sending the rest (or the last chunk)

    base = await raw_server(handler)
    base_box.append(base)
    run = await audit(f"{base}/sitemap", mode="crawl", retries=0, rate=float("inf"))
    (broke,) = run.findings("sitemap-http-error")
    assert (
        "broke off" in broke["message"] and "entries read before it were kept" in broke["message"]
    )
    (sm,) = run.of("sitemap")
    assert sm["error"]
    # every entry before the cut is checked; the half-received one is not taken as a URL
    assert sorted(r["url"] for r in run.of("url")) == sorted(f"{base}/p/{i}" for i in range(50))
    assert sm["entries"] == 50
    # the cut is the network's, reported once: the document is not called malformed
    assert "sitemap-xml-malformed" not in codes(run)
    assert_clean(run)


async def test_html_and_json_served_as_sitemaps(serve: Callable[[Site], Awaitable[str]]) -> None:
    site = Site()
    base = await serve(site)
    page = fixture("page.html", base)
    json_doc = fixture("sitemap.json", base)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/index.xml": (
            200,
            XML,
            index(*(f"{base}/{n}" for n in ("html", "html-as-xml", "json", "json-as-xml"))),
        ),
        "/html": (200, HTML, page),
        "/html-as-xml": (200, XML, page),
        "/json": (200, {"Content-Type": "application/json"}, json_doc),
        "/json-as-xml": (200, XML, json_doc),
    }
    run = await audit(f"{base}/index.xml", mode="crawl")
    by_url: dict[str, list[str]] = {}
    for f in run.of("finding"):
        by_url.setdefault(f["url"] or f["sitemap"], []).append(f["code"])
    assert by_url[f"{base}/html"] == ["sitemap-is-html"]
    assert by_url[f"{base}/html-as-xml"] == ["sitemap-is-html"]
    assert sorted(by_url[f"{base}/json"]) == ["sitemap-content-type", "sitemap-root-invalid"]
    assert by_url[f"{base}/json-as-xml"] == ["sitemap-root-invalid"]
    assert run.of("url") == []  # nothing in them is mistaken for a URL to check
    assert "/a" not in site.paths()
    assert_clean(run, sitemaps=5)


# The protocol's maximum; the slowest test of the suite, so it has a longer limit.
CHILDREN = 50_000


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_index_whose_children_all_404(raw_server: Any) -> None:
    """An index of 50,000 children that all answer 404: each is reported, the run ends.
    A raw server answers 404 at once."""
    box: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                request = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                return
            if request.startswith(b"GET /index.xml "):
                body = box[0]
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
            else:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()

    base = await raw_server(handler)
    box.append(index(*(f"{base}/c/{i}.xml" for i in range(CHILDREN))).encode())
    run = await audit(f"{base}/index.xml", mode="validate", rate=float("inf"), deadline=280)
    missing = {f["url"] for f in run.findings("sitemap-not-found")}
    assert missing == {f"{base}/c/{i}.xml" for i in range(CHILDREN)}
    assert len(run.findings("sitemap-not-found")) == CHILDREN
    assert len(run.of("sitemap")) == CHILDREN + 1
    assert run.summary["sitemaps"] == CHILDREN + 1
    assert_clean(run, sitemaps=CHILDREN + 1)
