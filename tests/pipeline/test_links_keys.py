"""How the link crawl keys pages (audit/pipeline/links.py): one page per normalised URL, and a
redirect's target read once.

The `:80` case of issue 18 cannot run over loopback (the test server cannot bind port 80), so
it is tested here through the crawl's own keying: LinkCrawl._link (which counts a link and
queues it), the store's join of inlinks onto held records, and the verdicts. The host-case
variant over real HTTP is in test_links_crawl.py (`/variant`, linked as LOCALHOST:PORT)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from audit.core.config import CrawlConfig
from audit.core.records import UrlResult
from audit.pipeline.links import LinkCrawl, verdicts
from audit.rules.fingerprints import SeenUrls, url_key
from audit.rules.urls import normalize_url
from tests.pipeline.test_links_crawl import crawl_site

LISTED = "http://example.com/a"
VARIANT = "http://Example.COM:80/a"  # host case and the default port: the same page


@pytest.fixture
def crawl() -> Iterator[LinkCrawl]:
    links = LinkCrawl(CrawlConfig())
    links._origin_of("http://example.com/sitemap.xml")
    yield links
    links.store.close()


def listed_record() -> UrlResult:
    return UrlResult(
        LISTED, "http://example.com/sitemap.xml", 3, 200, LISTED, (), None, None,
        "allowed", 12.0, extra={"indexable": True, "indexability": None},
    )  # fmt: skip


def held_inlinks(crawl: LinkCrawl) -> list[tuple[int, str | None]]:
    crawl.store.hold(url_key(LISTED), True, listed_record(), [])
    return [(n, source) for _, _, _, n, source in crawl.store.held()]


def test_normalisation_the_crawl_keys_by() -> None:
    assert normalize_url(VARIANT) == normalize_url(LISTED) == LISTED
    assert normalize_url("https://Example.com:443") == "https://example.com/"
    assert normalize_url("http://example.com:8080/a") != LISTED  # not the default port


def test_default_port_variant_link_counts_for_the_listed_page(crawl: LinkCrawl) -> None:
    crawl._link("http://example.com/", [VARIANT], 1)
    assert held_inlinks(crawl) == [(1, "http://example.com/")]
    assert verdicts(True, listed_record(), 1, "http://example.com/", True, crawl.roots) == []


def test_without_the_link_the_listed_page_is_an_orphan(crawl: LinkCrawl) -> None:
    # the counter-test: the same record with no link is reported
    assert held_inlinks(crawl) == [(0, None)]
    found = verdicts(True, listed_record(), 0, None, True, crawl.roots)
    assert [f.code for f in found] == ["url-orphan"]


def test_default_port_variant_is_one_page_not_a_second_one(crawl: LinkCrawl) -> None:
    crawl._link("http://example.com/", [VARIANT, LISTED], 1)
    crawl._link("http://example.com/b", [LISTED], 1)
    assert len(crawl.queue) == 1  # queued once: never fetched as an unlisted page of its own
    listed = SeenUrls()  # what LinkCrawl._listed asks: the auditor's listed URLs
    listed.add(LISTED)
    assert VARIANT in listed  # so _take skips it instead of fetching it
    assert held_inlinks(crawl) == [(2, "http://example.com/")]


@pytest.mark.slow
async def test_a_redirect_target_is_requested_once(serve: Any) -> None:
    site, base, run = await crawl_site(serve)
    assert site.paths().count("/redir") == 1
    assert site.paths().count("/via-redirect") == 1  # read through the redirect, not again
    assert [f["url"] for f in run.findings("page-not-in-sitemap") if "via" in f["url"]] == [
        base + "/via-redirect"
    ]
