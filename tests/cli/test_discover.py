"""`sitemap-audit discover` (audit/cli/discover.py): the sitemaps of a site over loopback, one
a line with where each was found, or jsonl; none found is exit 1; not a site root is exit 2."""

from __future__ import annotations

import asyncio
import json

import pytest

from audit.cli.main import main
from tests.cli.clikit import assert_one_line_error
from tests.crawlkit import TEXT, XML, Serve, Site, urlset


@pytest.mark.slow
async def test_the_sitemaps_a_site_declares(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (200, TEXT, f"User-agent: *\nAllow: /\nSitemap: {base}/declared.xml\n"),
        "/declared.xml": (200, XML, urlset(base + "/a")),
    }
    assert await asyncio.to_thread(main, ["discover", base + "/", "--retries", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{base}/declared.xml\t(from robots.txt)"
    assert await asyncio.to_thread(main, ["discover", base + "/", "--format", "jsonl"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records[0]["url"] == f"{base}/declared.xml"


@pytest.mark.slow
async def test_a_site_without_sitemaps_and_a_sitemap_url(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    base = await serve(Site())  # 404 to everything
    assert await asyncio.to_thread(main, ["discover", base + "/", "--retries", "0"]) == 1
    assert capsys.readouterr().out == ""
    assert await asyncio.to_thread(main, ["discover", base + "/sitemap.xml"]) == 2
    assert_one_line_error(capsys.readouterr().err, "discover takes a site root URL")
