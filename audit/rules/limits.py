"""The per-sitemap limits (sitemaps.org and Google): sitemap-too-many-urls,
sitemap-near-limit, sitemap-empty and news-too-many, from the parser's totals.

    size_problems(kind, entries, uncompressed_bytes) -> [(code, message)]
    news_count_problems(news) -> [(code, message)]
"""

from __future__ import annotations

__all__ = [
    "MAX_ENTRIES",
    "MAX_IMAGES",
    "MAX_NEWS",
    "MAX_UNCOMPRESSED_BYTES",
    "NEAR_LIMIT",
    "news_count_problems",
    "size_problems",
]

MAX_ENTRIES = 50_000  # sitemaps.org: 50,000 URLs per sitemap (and sitemaps per index)
MAX_UNCOMPRESSED_BYTES = 52_428_800  # sitemaps.org: 50 MiB uncompressed
NEAR_LIMIT = 0.9  # RULES.md sitemap-near-limit: over 90% of either limit
MAX_IMAGES = 1000  # Google image sitemaps: up to 1,000 images per page (image-too-many)
MAX_NEWS = 1000  # Google news sitemaps: up to 1,000 news:news URLs per sitemap


def news_count_problems(news: int) -> list[tuple[str, str]]:
    """news-too-many, for `news` URLs with <news:news> in one sitemap."""
    if news <= MAX_NEWS:
        return []
    return [
        (
            "news-too-many",
            f"{news:,} URLs with <news:news>, over Google's limit of {MAX_NEWS:,} "
            "per news sitemap: split the news sitemap",
        )
    ]


def size_problems(kind: str | None, entries: int, uncompressed_bytes: int) -> list[tuple[str, str]]:
    """sitemap-too-many-urls, sitemap-near-limit and sitemap-empty."""
    what = "<sitemap> entries" if kind == "sitemapindex" else "URLs"
    problems: list[tuple[str, str]] = []
    if entries > MAX_ENTRIES:
        problems.append(
            (
                "sitemap-too-many-urls",
                f"{entries:,} {what}, over the limit of {MAX_ENTRIES:,} per sitemap: split it "
                "into several sitemaps listed in a sitemap index",
            )
        )
    near: list[str] = []  # the limits it is over 90% of (and not over), in words
    if MAX_ENTRIES * NEAR_LIMIT < entries <= MAX_ENTRIES:
        near.append(f"{entries:,} {what} of the {MAX_ENTRIES:,} allowed")
    if MAX_UNCOMPRESSED_BYTES * NEAR_LIMIT < uncompressed_bytes <= MAX_UNCOMPRESSED_BYTES:
        near.append(
            f"{uncompressed_bytes:,} bytes uncompressed of the {MAX_UNCOMPRESSED_BYTES:,} allowed"
        )
    if near:
        problems.append(
            (
                "sitemap-near-limit",
                f"the sitemap is over 90% of a limit ({'; '.join(near)}): split it before it "
                "grows past the limit",
            )
        )
    # The caller skips finish() for a document it already reported as unreadable,
    # so no entries here means an empty file or an empty root element.
    if entries == 0:
        problems.append(
            (
                "sitemap-empty",
                "the sitemap has no entries: add the site's URLs or stop declaring it",
            )
        )
    return problems
