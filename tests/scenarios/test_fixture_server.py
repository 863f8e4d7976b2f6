"""The fixture server: files, {base} substitution, gzip, planted behaviour, request log."""

from __future__ import annotations

import asyncio
import gzip
import sys
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from lxml import etree

from audit.checks.botsigs import detect_bot_challenge
from audit.fixtures.server import REQUEST_LOG, ManifestError, load_site, main, make_app, run_server
from tests.crawlkit import Serve

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo"
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
ServerFactory = Callable[..., Any]

SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>{base}/listed</loc></url>
  <url><loc>{base}/q?a=1&amp;b=2</loc></url>
</urlset>
"""

MANIFEST = """
[site]
note = "free-form"

[paths."/gone"]
status = 410

[paths."/error"]
status = 500

[paths."/headers".headers]
Last-Modified = "Fri, 10 May 2024 08:00:00 GMT"
X-Robots-Tag = ["googlebot: noindex", "nofollow"]
Link = '<{base}/other>; rel="canonical"'
Content-Type = "text/plain; charset=utf-8"

[paths."/moved"]
location = "/listed"

[paths."/temp"]
status = 307
location = "{base}/listed"
headers = { Cache-Control = "no-store" }

[paths."/head-405"]
head_status = 405

[paths."/flaky"]
fail_times = 2
fail_headers = { Retry-After = "1" }

[paths."/limited"]
fail_times = 1
fail_status = 429

[paths."/slow"]
delay = 5

[paths."/reset"]
reset = true

[paths."/challenge"]
bot_challenge = true

[paths."/inline"]
body = "<p>{base}</p>"

[paths."/live"]
dynamic_last_modified = true

[paths."/child.xml.gz"]
source = "_src/child.xml"
gzip = true
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    (tmp_path / "manifest.toml").write_text(MANIFEST)
    (tmp_path / "README.md").write_text("not served")
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow:\nSitemap: {base}/sitemap.xml\n")
    (tmp_path / "sitemap.xml").write_text(SITEMAP)
    (tmp_path / "urls.txt").write_text("{base}/listed\n{base}/from-text\n")
    # a static gzip whose bytes must arrive untouched ({base} inside stays as is)
    (tmp_path / "static.xml.gz").write_bytes(gzip.compress(b"<urlset>{base}</urlset>", mtime=7))
    (tmp_path / "_src").mkdir()
    (tmp_path / "_src" / "child.xml").write_text(SITEMAP)
    (tmp_path / "blog").mkdir()
    (tmp_path / "blog" / "index.html").write_text("<a href='{base}/blog/'>blog</a>")
    return tmp_path


async def get(
    session: aiohttp.ClientSession, url: str, method: str = "GET"
) -> tuple[int, Any, bytes]:
    async with session.request(method, url, allow_redirects=False) as resp:
        return resp.status, resp.headers, await resp.read()


async def test_base_substitution_in_text_files(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        status, headers, body = await get(s, f"{base}/sitemap.xml")
        assert status == 200 and headers["Content-Type"].startswith("application/xml")
        assert body.decode() == SITEMAP.replace("{base}", base)
        _, headers, body = await get(s, f"{base}/robots.txt")
        assert headers["Content-Type"].startswith("text/plain")
        assert f"Sitemap: {base}/sitemap.xml" in body.decode()
        _, _, body = await get(s, f"{base}/urls.txt")
        assert body.decode() == f"{base}/listed\n{base}/from-text\n"
        status, headers, body = await get(s, f"{base}/blog/")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert body.decode() == f"<a href='{base}/blog/'>blog</a>"
        assert (await get(s, f"{base}/blog"))[0] == 404  # a directory needs its slash
        _, _, body = await get(s, f"{base}/inline")
        assert body.decode() == f"<p>{base}</p>"


async def test_static_gzip_bytes_intact(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession(auto_decompress=False) as s:
        status, headers, body = await get(s, f"{base}/static.xml.gz")
    assert status == 200
    assert headers["Content-Type"] == "application/gzip"
    assert "Content-Encoding" not in headers
    assert body == (site / "static.xml.gz").read_bytes()


async def test_generated_gzip_from_template(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession(auto_decompress=False) as s:
        status, headers, first = await get(s, f"{base}/child.xml.gz")
        _, _, second = await get(s, f"{base}/child.xml.gz")
    assert status == 200 and headers["Content-Type"] == "application/gzip"
    assert first[:2] == b"\x1f\x8b" and first == second
    assert gzip.decompress(first).decode() == SITEMAP.replace("{base}", base)


async def test_status_codes_and_defaults(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        assert (await get(s, f"{base}/gone"))[0] == 410
        assert (await get(s, f"{base}/error"))[0] == 500
        assert (await get(s, f"{base}/nothing-here"))[0] == 404
        # listed in a sitemap (XML or text) without a file: a generated page
        for path in ("/listed", "/from-text", "/q?a=1&b=2"):
            status, headers, body = await get(s, base + path)
            assert status == 200 and headers["Content-Type"].startswith("text/html"), path
            assert b"<title>" in body
        # never served: the manifest, the README, templates, traversal
        for path in ("/manifest.toml", "/README.md", "/_src/child.xml", "/%2e%2e/etc/passwd"):
            assert (await get(s, base + path))[0] == 404, path


async def test_planted_headers(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        status, headers, _ = await get(s, f"{base}/headers")
    assert status == 200
    assert headers["Last-Modified"] == "Fri, 10 May 2024 08:00:00 GMT"
    assert headers.getall("X-Robots-Tag") == ["googlebot: noindex", "nofollow"]
    assert headers["Link"] == f'<{base}/other>; rel="canonical"'
    assert headers.getall("Content-Type") == ["text/plain; charset=utf-8"]


async def test_redirects(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        status, headers, _ = await get(s, f"{base}/moved")
        assert (status, headers["Location"]) == (301, "/listed")
        status, headers, _ = await get(s, f"{base}/temp")
        assert (status, headers["Location"]) == (307, f"{base}/listed")
        assert headers["Cache-Control"] == "no-store"
        async with s.get(f"{base}/moved") as resp:  # followed by the client
            assert resp.status == 200 and str(resp.url) == f"{base}/listed"


async def test_head_lies(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        assert (await get(s, f"{base}/head-405", "HEAD"))[0] == 405
        assert (await get(s, f"{base}/head-405"))[0] == 200
        assert (await get(s, f"{base}/listed", "HEAD"))[0] == 200


async def test_fail_times(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        first = await get(s, f"{base}/flaky", "HEAD")
        second = await get(s, f"{base}/flaky")
        third = await get(s, f"{base}/flaky")
        assert (first[0], second[0], third[0]) == (503, 503, 200)
        assert second[1]["Retry-After"] == "1" and "Retry-After" not in third[1]
        assert [(await get(s, f"{base}/limited"))[0] for _ in range(2)] == [429, 200]


async def test_delay_outlasts_a_short_client_timeout(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=0.2)) as s:
        with pytest.raises(asyncio.TimeoutError):
            await get(s, f"{base}/slow")


async def test_reset_aborts_the_connection(aiohttp_server: ServerFactory, site: Path) -> None:
    server = await aiohttp_server(make_app(site))
    base = str(server.make_url("")).rstrip("/")
    async with aiohttp.ClientSession() as s:
        with pytest.raises(aiohttp.ClientConnectionError):
            await get(s, f"{base}/reset")
        assert (await get(s, f"{base}/listed"))[0] == 200  # the server lives on
    assert "/reset" in [r.path for r in server.app[REQUEST_LOG]]


async def test_bot_challenge(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        status, headers, body = await get(s, f"{base}/challenge")
    assert status == 403
    assert headers["cf-mitigated"] == "challenge" and headers["Server"] == "cloudflare"
    assert b"<title>Just a moment...</title>" in body
    pairs = [(k.lower(), v) for k, v in headers.items()]
    assert detect_bot_challenge(status, pairs, body) is not None


async def test_dynamic_last_modified_is_the_request_time(serve: Serve, site: Path) -> None:
    base = await serve(make_app(site))
    async with aiohttp.ClientSession() as s:
        _, headers, _ = await get(s, f"{base}/live")
    modified = parsedate_to_datetime(headers["Last-Modified"])
    date = parsedate_to_datetime(headers["Date"])
    assert abs((modified - date).total_seconds()) <= 2


async def test_request_log(aiohttp_server: ServerFactory, site: Path) -> None:
    server = await aiohttp_server(make_app(site))
    base = str(server.make_url("")).rstrip("/")
    async with aiohttp.ClientSession(headers={"User-Agent": "probe/1.0"}) as s:
        await get(s, f"{base}/robots.txt")
        await get(s, f"{base}/q?a=1&b=2", "HEAD")
        await get(s, f"{base}/nothing-here")
    log = server.app[REQUEST_LOG]
    assert [(r.method, r.path) for r in log] == [
        ("GET", "/robots.txt"),
        ("HEAD", "/q?a=1&b=2"),
        ("GET", "/nothing-here"),
    ]
    assert all(r.header("User-Agent") == "probe/1.0" for r in log)
    assert log[0].time <= log[1].time <= log[2].time


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ('[paths."/x"]\nstatuss = 404\n', "unknown key 'statuss'"),
        ('[paths."/x"]\nstatus = "404"\n', "status has the wrong type"),
        ('[paths."/x"]\nreset = 1\n', "reset has the wrong type"),
        ('[paths."x"]\nstatus = 404\n', "must start with '/'"),
        ('[paths."/x"]\nsource = "_src/none.xml"\n', "source '_src/none.xml' not found"),
        ('[paths."/x"]\nheaders = { A = 1 }\n', "headers.A must be a string"),
        ("[pathz]\n", "unknown table"),
        ("[paths\n", "manifest.toml"),
    ],
)
def test_manifest_errors(tmp_path: Path, manifest: str, message: str) -> None:
    (tmp_path / "manifest.toml").write_text(manifest)
    with pytest.raises(ManifestError) as info:
        load_site(tmp_path)
    text = str(info.value)
    assert message in text and "manifest.toml" in text and "\n" not in text


def test_missing_site_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ManifestError, match="not a directory"):
        make_app(tmp_path / "nope")
    assert main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "not a directory" in err and err.count("\n") == 1


async def test_run_server_picks_a_free_port(site: Path) -> None:
    runner, base = await run_server(site)
    try:
        assert base.startswith("http://127.0.0.1:") and not base.endswith(":0")
        async with aiohttp.ClientSession() as s:
            assert (await get(s, f"{base}/listed"))[0] == 200
        assert runner.app is not None and len(runner.app[REQUEST_LOG]) == 1
    finally:
        await runner.cleanup()


async def test_module_entry_prints_base_url() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "audit.fixtures.server",
        str(DEMO),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        base = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        assert base.startswith("http://127.0.0.1:")
        async with aiohttp.ClientSession() as s:
            status, _, body = await get(s, f"{base}/robots.txt")
        assert status == 200 and f"Sitemap: {base}/sitemap_index.xml" in body.decode()
    finally:
        proc.terminate()
        await proc.wait()


# --- the demo site ---------------------------------------------------------------


async def test_demo_site(aiohttp_server: ServerFactory) -> None:
    server = await aiohttp_server(make_app(DEMO))
    base = str(server.make_url("")).rstrip("/")
    async with aiohttp.ClientSession(auto_decompress=False) as s:
        status, _, robots = await get(s, f"{base}/robots.txt")
        text = robots.decode()
        assert status == 200 and f"Sitemap: {base}/sitemap_index.xml" in text
        assert "Disallow: /private/" in text and "User-agent: otherbot" in text

        _, _, index = await get(s, f"{base}/sitemap_index.xml")
        children = [e.text for e in etree.fromstring(index).iter(f"{NS}loc")]
        assert children == [
            f"{base}/sitemap-pages.xml",
            f"{base}/sitemap-products.xml",
            f"{base}/sitemap-blog.xml.gz",
        ]
        locs: list[str] = []
        lastmods: list[str] = []
        for child in children:
            assert child is not None
            status, headers, body = await get(s, child)
            assert status == 200
            if child.endswith(".gz"):
                assert headers["Content-Type"] == "application/gzip"
                body = gzip.decompress(body)
            doc = etree.fromstring(body)
            assert doc.tag == f"{NS}urlset"
            locs += [e.text or "" for e in doc.iter(f"{NS}loc")]
            lastmods += [e.text or "" for e in doc.iter(f"{NS}lastmod")]
        assert all(loc.startswith(f"{base}/") for loc in locs)
        assert len(locs) == 33 and len(set(locs)) == 32  # one duplicate loc
        assert locs.count(f"{base}/products/steel-rake") == 2
        assert "2024-02-30" in lastmods  # the invalid lastmod

        # every listed URL answers as its README says (GET, no retry, no redirects)
        expected = {
            "/products/discontinued-hose": 404,
            "/blog/2019-spring-sale": 410,
            "/products/old-rake": 301,
            "/shop/tools": 302,
            "/offers/summer": 301,
            "/products/broken-widget": 500,
            "/products/flaky-planter": 503,
            "/products/limited-edition-trowel": 403,
        }
        for loc in dict.fromkeys(locs):
            path = loc[len(base) :]
            if path == "/products/seed-catalogue":
                continue  # delayed 1.2 s; its delay is in the manifest
            status, _, _ = await get(s, loc)
            assert status == expected.get(path, 200), path
        assert (await get(s, f"{base}/products/flaky-planter"))[0] == 200  # succeeds on retry
        assert (await get(s, f"{base}/about", "HEAD"))[0] == 405
        assert (await get(s, f"{base}/contact", "HEAD"))[0] == 404
        status, headers, _ = await get(s, f"{base}/shop/tools")
        status2, headers2, _ = await get(s, base + headers["Location"])
        assert (status2, headers2["Location"]) == (301, "/categories/tools")
        assert (await get(s, base + headers2["Location"]))[0] == 200
    assert load_site(DEMO).settings["slow_ms"] == 1000
    assert len(server.app[REQUEST_LOG]) > 30
