"""audit.rules.limits: the per-sitemap limits at and around their edges."""

from __future__ import annotations

from audit.rules.limits import (
    MAX_ENTRIES,
    MAX_NEWS,
    MAX_UNCOMPRESSED_BYTES,
    news_count_problems,
    size_problems,
)


def codes(problems: list[tuple[str, str]]) -> list[str]:
    return [code for code, _ in problems]


def test_entry_count_edges() -> None:
    assert codes(size_problems("urlset", 45_000, 1000)) == []
    assert codes(size_problems("urlset", 45_001, 1000)) == ["sitemap-near-limit"]
    assert codes(size_problems("urlset", MAX_ENTRIES, 1000)) == ["sitemap-near-limit"]
    assert codes(size_problems("urlset", MAX_ENTRIES + 1, 1000)) == ["sitemap-too-many-urls"]
    assert codes(size_problems("urlset", 0, 0)) == ["sitemap-empty"]


def test_byte_edges_and_both_limits_in_one_finding() -> None:
    near = int(MAX_UNCOMPRESSED_BYTES * 0.9) + 1
    assert codes(size_problems("urlset", 10, near - 1)) == []
    assert codes(size_problems("urlset", 10, MAX_UNCOMPRESSED_BYTES + 1)) == []
    ((code, message),) = size_problems("urlset", 49_000, near)
    assert code == "sitemap-near-limit"
    assert "49,000 URLs of the 50,000 allowed" in message
    assert f"{near:,} bytes uncompressed" in message


def test_an_index_counts_sitemap_entries() -> None:
    ((_, message),) = size_problems("sitemapindex", MAX_ENTRIES + 1, 1000)
    assert message.startswith("50,001 <sitemap> entries, over the limit")


def test_news_count() -> None:
    assert news_count_problems(MAX_NEWS) == []
    ((code, message),) = news_count_problems(MAX_NEWS + 1)
    assert code == "news-too-many" and "1,001 URLs with <news:news>" in message
