"""The real cause of a broken gzip sitemap (issue 16.9), over loopback HTTP.

A corrupt deflate stream inflates to garbage that may break the XML before zlib sees
the fault: the finding is still `sitemap-gzip-invalid`. A valid document padded with
whitespace past 52,428,800 bytes is `sitemap-too-large`, not libxml2's 10 MB text limit
in its own words. No message names the XML library or its options.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from audit.core.records import Finding
from audit.sitemap.parser import StreamParser, parse_file
from tests.crawlkit import Serve, Site, audit

SM = "http://www.sitemaps.org/schemas/sitemap/0.9"
GZ = {"Content-Type": "application/gzip"}
LIBRARY_WORDS = ("XML_PARSE", "lxml", "libxml", "xmlCtxt", "Error -3")
BROKEN = Path(__file__).resolve().parents[2] / "fixtures" / "sitemaps" / "broken"


def _doc(base: str, n: int, pad: bytes = b"") -> bytes:
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}">\n'.encode()
    entries = [f"<url><loc>{base}/p{i}</loc></url>\n".encode() for i in range(n)]
    third = n // 3  # the padding goes between two entries
    return head + b"".join(entries[:third]) + pad + b"".join(entries[third:]) + b"</urlset>\n"


def _corrupt(data: bytes) -> bytes:
    """Damage the middle of the deflate stream: it still inflates, to garbage, until the
    checksum at the end."""
    damaged = bytearray(data)
    middle = len(damaged) // 2
    for i in range(middle, middle + 20):
        damaged[i] ^= 0x5A
    return bytes(damaged)


def _clean(messages: list[str]) -> None:
    for message in messages:
        assert not any(word in message for word in LIBRARY_WORDS), message


async def test_corrupt_deflate_is_gzip_invalid_even_when_the_xml_breaks_first(
    serve: Serve,
) -> None:
    site = Site()
    base = await serve(site)
    data = _corrupt(gzip.compress(_doc(base, 3000), mtime=0))
    site.routes = {"/robots.txt": (404, {}, ""), "/sitemap.xml.gz": (200, GZ, data)}
    run = await audit(f"{base}/sitemap.xml.gz", mode="validate")
    codes = run.codes()
    assert "sitemap-gzip-invalid" in codes
    assert "sitemap-xml-malformed" not in codes
    _clean([f["message"] for f in run.of("finding")])


@pytest.mark.slow
async def test_whitespace_padding_past_the_limit_is_too_large(serve: Serve) -> None:
    site = Site()
    base = await serve(site)
    padded = _doc(base, 30, pad=b" " * (51 * 2**20) + b"\n" * (2 * 2**20))
    site.routes = {
        "/robots.txt": (404, {}, ""),
        "/big.xml.gz": (200, GZ, gzip.compress(padded, mtime=0)),
    }
    run = await audit(f"{base}/big.xml.gz", mode="validate")
    codes = run.codes()
    assert "sitemap-too-large" in codes
    assert "sitemap-xml-malformed" not in codes
    _clean([f["message"] for f in run.of("finding")])


def test_whitespace_under_the_limit_is_valid() -> None:
    # 12 MB of whitespace between entries: over libxml2's 10 MB text limit, under ours
    doc = _doc("https://e.test", 30, pad=b" " * (12 * 2**20))
    p = StreamParser("https://e.test/sitemap.xml")
    items = p.feed(gzip.compress(doc, mtime=0)) + p.close()
    assert [x for x in items if isinstance(x, Finding)] == []
    assert p.entries == 30


def test_over_the_text_limit_with_a_doctype_says_so_plainly() -> None:
    doc = _doc("https://e.test", 3, pad=b" " * (11 * 2**20)).replace(
        b"<urlset", b"<!DOCTYPE urlset>\n<urlset", 1
    )
    p = StreamParser("https://e.test/sitemap.xml")
    items = p.feed(doc) + p.close()
    messages = [x.message for x in items if isinstance(x, Finding)]
    assert any("more than 10,000,000 bytes" in m for m in messages), messages
    _clean(messages)


@pytest.mark.parametrize("path", sorted(BROKEN.iterdir()), ids=lambda p: p.name)
def test_no_message_names_the_library(path: Path) -> None:
    _clean([x.message for x in parse_file(path) if isinstance(x, Finding)])
