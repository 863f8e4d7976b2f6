"""The front door (audit/api.py) on a loopback site: `crawl_async` streams the records of
DESIGN.md and returns the summary, `validate_async` requests no page, `inspect_async` and
`discover_async` return their values, `Audit` runs with its own sinks, and a caller's
mistakes are TypeError or ValueError while a target that cannot be audited is TargetError.
(The README's example and the command line's parity: tests/scenarios/test_library_use.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audit.api import (
    Audit,
    Result,
    check_targets,
    crawl_async,
    discover_async,
    inspect_async,
    validate_async,
)
from audit.core.config import CrawlConfig
from audit.core.errors import TargetError
from tests.crawlkit import FAST, HTML, TEXT, XML, Serve, Site, index, urlset


async def _site(serve: Serve) -> tuple[Site, str]:
    site = Site()
    base = await serve(site)
    site.routes = {
        "/robots.txt": (
            200,
            TEXT,
            f"User-agent: *\nDisallow: /private\nSitemap: {base}/index.xml\n",
        ),
        "/index.xml": (200, XML, index(f"{base}/pages.xml")),
        "/pages.xml": (200, XML, urlset(f"{base}/a", f"{base}/gone", f"{base}/private/x")),
        "/a": (200, HTML, "<title>a</title>"),
    }
    return site, base


async def test_crawl_streams_records_and_returns_the_summary(serve: Serve) -> None:
    site, base = await _site(serve)
    records: list[dict[str, Any]] = []
    result = await crawl_async(base + "/", on_record=records.append, **FAST)
    assert records[-1] == result.summary and result.summary["type"] == "summary"
    urls = {r["url"]: r for r in records if r["type"] == "url"}
    assert urls[base + "/a"]["status"] == 200 and urls[base + "/gone"]["status"] == 404
    assert urls[base + "/private/x"]["robots"] == "blocked"
    assert "/private/x" not in site.paths()  # robots.txt is obeyed
    assert result.failed("error") and not result.failed("never") and not result.fatal


async def test_validate_requests_no_page(serve: Serve) -> None:
    site, base = await _site(serve)
    result = await validate_async(base + "/pages.xml", **FAST)
    assert result.summary["type"] == "summary"
    assert "/a" not in site.paths() and "/gone" not in site.paths()


async def test_inspect_and_discover_return_values(serve: Serve) -> None:
    _, base = await _site(serve)
    stats = await inspect_async(base + "/index.xml", **FAST)
    assert [s["url"] for s in stats] == [base + "/index.xml", base + "/pages.xml"]
    assert stats[0]["children"] == [base + "/pages.xml"] and stats[1]["entries"] == 3
    found = await discover_async(base + "/", **FAST)
    assert base + "/index.xml" in [d["url"] for d in found.sitemaps]
    with pytest.raises(TargetError, match="discover takes a site root"):
        await discover_async(base + "/index.xml")


async def test_audit_with_its_own_sinks(serve: Serve) -> None:
    _, base = await _site(serve)
    seen: list[str] = []
    run = Audit(base + "/pages.xml", CrawlConfig(**FAST), sinks=[lambda r: seen.append(r["type"])])
    await run.run()
    result = run.finish()
    assert isinstance(result, Result) and seen[-1] == "summary"
    assert seen.count("url") == 3


async def test_mistakes_and_targets_that_cannot_be_audited(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="did you mean 'concurrency'"):
        await crawl_async(str(tmp_path / "s.xml"), concurency=3)
    with pytest.raises(TypeError, match="give config= or options, not both"):
        await crawl_async(str(tmp_path / "s.xml"), config=CrawlConfig(), rate=3)
    with pytest.raises(ValueError, match="concurrency: must be at least 1"):
        await crawl_async(str(tmp_path / "s.xml"), concurrency=0)
    with pytest.raises(TargetError):
        await validate_async(str(tmp_path / "missing.xml"))
    with pytest.raises(TargetError, match="no target to audit"):
        check_targets([], "crawl")
    with pytest.raises(TargetError, match="a site root; validate takes a sitemap"):
        check_targets("https://www.example.com/", "validate")
