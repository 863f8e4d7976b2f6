"""Coverage verdicts of the link crawl (RULES.md, Site coverage): pure functions of a page's
record, the followable links to it and whether the crawl was complete.

- `url_orphan`: a listed, indexable URL no crawled page links to, only when the crawl was
  complete (else nothing: `coverage_incomplete` says why the verdicts are withheld).
- `page_not_in_sitemap`: an indexable page reached by links that no sitemap lists.
- `link_broken`: a linked page that answers 4xx/5xx or fails, once, with the number of
  linking pages and one of them.
- `page_reason`: the indexability reason a page's own body adds (robots meta noindex, a
  canonical elsewhere) to the one judged from the answer (checks/agents.py `indexability`).

Pure and synchronous: must not import aiohttp or asyncio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audit.core.records import Finding, UrlResult, finding
from audit.rules.urls import normalize_url

if TYPE_CHECKING:
    from audit.checks.links import PageLinks

__all__ = [
    "coverage_incomplete",
    "link_broken",
    "page_not_in_sitemap",
    "page_reason",
    "url_orphan",
]


def page_reason(reason: str | None, page: PageLinks | None, final_url: str) -> str | None:
    """The first reason a page is not indexable, its body's robots meta and canonical
    included (they are only known when the body was read)."""
    if reason is not None or page is None:
        return reason
    if page.noindex:
        return "noindex"
    if page.canonical and normalize_url(page.canonical) != normalize_url(final_url):
        return "canonical"
    return None


def _pages(n: int) -> str:
    return f"{n:,} page{'' if n == 1 else 's'}"


def url_orphan(record: UrlResult, inlinks: int, *, complete: bool) -> Finding | None:
    """url-orphan for a listed record, or None."""
    if not complete or inlinks or not (record.extra or {}).get("indexable"):
        return None
    return finding(
        "url-orphan",
        "listed in the sitemap but no crawled page of the site links to it "
        "(followable links, after redirects); link to it or drop it from the sitemap",
        sitemap=record.sitemap,
        line=record.line,
        url=record.url,
    )


def page_not_in_sitemap(record: UrlResult, inlinks: int, source: str | None) -> Finding | None:
    """page-not-in-sitemap for a page only the links led to, or None."""
    if not inlinks or not (record.extra or {}).get("indexable"):
        return None
    return finding(
        "page-not-in-sitemap",
        f"an indexable page linked from {_pages(inlinks)} (e.g. {source}) that no audited "
        "sitemap lists; add it to a sitemap, or noindex or canonicalise it",
        url=record.url,
    )


def link_broken(record: UrlResult, inlinks: int, source: str | None) -> Finding | None:
    """link-broken for a linked page that answered 4xx/5xx or failed, or None."""
    if not inlinks or record.robots != "allowed":
        return None
    status = record.status
    if status is None:
        answer = f"fails ({record.error})"
    elif status < 400:
        return None
    else:
        answer = f"answers {status}"
    return finding(
        "link-broken",
        f"{_pages(inlinks)} of the site {'links' if inlinks == 1 else 'link'} to this URL, "
        f"which {answer}; "
        f"e.g. the link on {source}",
        sitemap=record.sitemap,
        line=record.line,
        url=record.url,
    )


def coverage_incomplete(root: str, pages: int, stopped_by: str) -> Finding:
    """Why the link crawl did not finish: orphan verdicts are withheld."""
    return finding(
        "coverage-incomplete",
        f"the link crawl stopped ({stopped_by}) after {_pages(pages)} before its frontier "
        "was empty: url-orphan verdicts are withheld (raise --max-pages / --max-depth, "
        "or let the run finish)",
        url=root,
    )
