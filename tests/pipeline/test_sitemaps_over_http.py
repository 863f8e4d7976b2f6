"""Every document-level code, and the silence of every valid kind, over real loopback HTTP.

The parser and validator have their own fixture tests on files; these prove the
same findings come out when the bytes arrive from a socket through the crawl
pipeline (chunked, spooled, gzip passed through raw).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.crawlkit import XML, Serve, Site, audit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

BROKEN = [
    ("sitemaps/broken/leading-whitespace.xml", "sitemap-leading-whitespace"),
    ("sitemaps/broken/xxe.xml", "sitemap-doctype"),
    ("sitemaps/broken/billion-laughs.xml", "sitemap-doctype"),
    ("sitemaps/broken/html.xml", "sitemap-is-html"),
    ("sitemaps/broken/raw-ampersand.xml", "sitemap-xml-malformed"),
    ("sitemaps/broken/nbsp.xml", "sitemap-xml-malformed"),
    ("sitemaps/broken/truncated.xml", "sitemap-xml-malformed"),
    ("sitemaps/broken/latin1-declared.xml", "sitemap-encoding"),
    ("sitemaps/broken/invalid-utf8.xml", "sitemap-encoding"),
    ("sitemaps/broken/utf16-bom.xml", "sitemap-encoding"),
    ("sitemaps/broken/wrong-root.xml", "sitemap-root-invalid"),
    ("sitemaps/broken/sitemap.json", "sitemap-root-invalid"),
    ("sitemaps/broken/no-namespace.xml", "sitemap-namespace"),
    ("sitemaps/broken/element-unknown.xml", "element-unknown"),
    ("sitemaps/broken/text-bad-lines.txt", "text-sitemap-invalid-line"),
    ("sitemaps/broken/truncated.xml.gz", "sitemap-gzip-invalid"),
    ("sitemaps/broken/corrupt.xml.gz", "sitemap-gzip-invalid"),
    ("sitemaps/broken/empty.xml", "sitemap-xml-malformed"),  # 0 bytes: an error (33.4)
    ("rules/sitemap-too-many-urls.xml.gz", "sitemap-too-many-urls"),
    ("rules/sitemap-near-limit.xml.gz", "sitemap-near-limit"),
]

VALID = sorted(p.name for p in (FIXTURES / "sitemaps" / "valid").iterdir())


@pytest.fixture
async def serve_file(serve: Serve) -> Any:
    async def start(rel: str) -> tuple[str, Site]:
        site = Site()
        base = await serve(site)
        data = (FIXTURES / rel).read_bytes()
        ctype = (
            "application/gzip"
            if rel.endswith(".gz")
            else "text/plain"
            if rel.endswith(".txt")
            else XML["Content-Type"]
        )
        site.routes = {
            "/robots.txt": (404, {}, ""),
            "/sitemap": (200, {"Content-Type": ctype}, data),
        }
        return f"{base}/sitemap", site

    return start


# 50,000 URLs each: over half a second, so marked slow (see tests/conftest.py)
BIG = {"rules/sitemap-too-many-urls.xml.gz", "rules/sitemap-near-limit.xml.gz"}


@pytest.mark.parametrize(
    ("rel", "code"),
    [
        pytest.param(rel, code, id=rel.rsplit("/", 1)[1], marks=[pytest.mark.slow] * (rel in BIG))
        for rel, code in BROKEN
    ],
)
async def test_document_codes_over_http(serve_file: Any, rel: str, code: str) -> None:
    url, _ = await serve_file(rel)
    run = await audit(url, mode="validate")
    assert code in run.codes(), run.codes()
    assert run.of("summary")


async def test_sitemap_too_large_over_http(serve: Serve) -> None:
    """A document past 52,428,800 bytes is cut off at the limit, its entries kept."""
    site = Site()
    base = await serve(site)
    head = b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    entry = f"<url><loc>{base}/p</loc></url>\n".encode()
    filler = b"<!--" + b"x" * 1_000_000 + b"-->\n"
    body = head + entry + filler * 53 + b"</urlset>\n"
    site.routes = {"/robots.txt": (404, {}, ""), "/big.xml": (200, XML, body)}
    run = await audit(f"{base}/big.xml", mode="validate")
    assert "sitemap-too-large" in run.codes()
    (sm,) = run.of("sitemap")
    assert sm["entries"] == 1


@pytest.mark.parametrize("name", VALID)
async def test_valid_kinds_are_silent_over_http(serve_file: Any, name: str) -> None:
    url, _ = await serve_file(f"sitemaps/valid/{name}")
    # The index's children live on www.example.com: never leave 127.0.0.1.
    run = await audit(url, mode="validate", exclude_sitemap=("example\\.com",))
    loud = [
        (f["code"], f["message"])
        for f in run.of("finding")
        if f["severity"] in ("error", "warning")
        # The fixtures list www.example.com URLs; served from 127.0.0.1 they are
        # cross-host by construction (the file-level test gives them --base-url).
        and f["code"] not in ("loc-cross-host", "loc-outside-path")
        # news-stale depends on the day the test runs: the fixture's articles age.
        and f["code"] != "news-stale"
    ]
    assert loud == []
    (sm,) = run.of("sitemap")
    assert sm["entries"] > 0 and sm["status"] == 200


@pytest.mark.parametrize("name", VALID)
def test_valid_kinds_are_silent_as_files(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from audit.cli.main import main

    path = FIXTURES / "sitemaps" / "valid" / name
    rc = main(
        [
            "validate",
            str(path),
            "--base-url",
            "https://www.example.com/sitemap.xml",
            "--format",
            "jsonl",
            "--exclude-sitemap",
            "example\\.com/sitemap-",
        ]
    )  # the index's children live on www.example.com: never leave 127.0.0.1
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    loud = [
        r
        for r in map(json.loads, out.splitlines())
        if r["type"] == "finding" and r["severity"] != "info" and r["code"] != "news-stale"
    ]
    assert loud == []
