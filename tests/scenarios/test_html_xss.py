"""The HTML report cannot be made to run a script by what a crawled site sends.

A loopback site puts script payloads everywhere the network reaches the report:
listed URLs, redirect Locations, X-Robots-Tag and Link header values, a page's
canonical link (page checks on). The report of a real crawl of it is loaded in
headless Chromium: the DOM it builds must hold no injected element, attribute or
`javascript:` link, and the payloads (which would set document.title) never ran.
tests/report/test_html.py checks the writer on hand-made records; this is end to end.
"""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from lxml import html as lhtml

from audit.report import make_writer
from tests.crawlkit import HTML, TEXT, XML, Serve, Site, audit
from tests.report.reportkit import chromium

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SM = "http://www.sitemaps.org/schemas/sitemap/0.9"


def pwn(n: int) -> str:
    return f"document.title='pwned{n}'"


PATHS = [
    f'/"><script>{pwn(1)}</script>',
    f"/q?x=</script><script>{pwn(2)}</script>",
    f'/<img src=x onerror="{pwn(3)}">',
    f"/a'onmouseover='{pwn(4)}'b",
    f"/<svg/onload={pwn(5)}>",
    "/%3Cscript%3Ealert(6)%3C/script%3E",
]
LOCS_ABSOLUTE = ["javascript:alert(7)", f"javascript:{pwn(8)}//http://x/"]


def sitemap(base: str) -> bytes:
    locs = [base + p for p in PATHS] + LOCS_ABSOLUTE
    locs += [f"{base}/redirect-js", f"{base}/robots-tag", f"{base}/link", f"{base}/page"]
    body = "".join(f"<url><loc>{escape(loc)}</loc></url>\n" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SM}">\n{body}</urlset>\n'
    ).encode()


@pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("REQUIRE_CHROMIUM"),
    reason="no Chromium installed (Debian package chromium)",
)
async def test_crawled_payloads_do_not_run_in_the_html_report(serve: Serve, tmp_path: Path) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (404, TEXT, ""),
        "/sitemap.xml": (200, XML, sitemap(base)),
        "/redirect-js": (301, {"Location": f"javascript:{pwn(9)}"}, ""),
        "/robots-tag": (
            200,
            {**HTML, "X-Robots-Tag": f"noindex, <script>{pwn(10)}</script>"},
            "",
        ),
        "/link": (
            200,
            {**HTML, "Link": f'<{base}/"><svg onload={pwn(11)}>>; rel="canonical"'},
            "",
        ),
        "/page": (
            200,
            HTML,
            "<html><head><title>x</title>"
            f'<link rel="canonical" href="javascript:{pwn(12)}">'
            f"</head><body><script>{pwn(13)}</script>not found</body></html>",
        ),
    }
    run = await audit(f"{base}/sitemap.xml", page_checks=True)
    codes = set(run.codes())
    # the payloads did reach the report: as findings about these very URLs and headers
    assert {"loc-invalid", "url-not-found", "url-redirect-error", "url-noindex"} <= codes
    assert "url-canonical-mismatch" in codes

    out = io.StringIO()
    writer = make_writer("html", out)
    for rec in run.records:
        writer.write(rec)
    writer.close()
    report = out.getvalue()
    page = tmp_path / "report.html"
    page.write_text(report, encoding="utf-8")
    title = lhtml.fromstring(report).findtext(".//title")
    assert title and "pwned" not in title

    dom = lhtml.fromstring(chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile"))
    assert dom.findtext(".//title") == title  # no payload set document.title
    assert "pwned" not in (dom.findtext(".//title") or "")
    # no element or attribute came from the payloads
    assert dom.xpath("//img|//iframe|//object|//embed|//svg[@onload]") == []
    assert dom.xpath("//@*[starts-with(translate(name(), 'ON', 'on'), 'on')]") == []
    assert len(dom.xpath("//script")) == 2  # the report's data block and its own script
    assert "pwned" not in "".join(dom.xpath("//script[not(@type)]/text()"))
    for href in dom.xpath("//@href|//@src|//@action|//@formaction"):
        assert href.startswith(("http://", "https://", "#")), href
    # our own script ran (it fills the row counter) and the payloads show as text
    assert "rows shown" in dom.get_element_by_id("shown").text_content()
    text = dom.text_content()
    for shown in (
        "pwned1'</script>",
        'onerror="document',
        "pwned9",
        "<script>document.title='pwned10",
    ):
        assert shown in text, shown
